"""Loaders: built-in, a user's folder, JSONL, and per-domain selection."""

from __future__ import annotations

import json
from pathlib import Path

import lxml.html
import pytest

from shredfold.corpus.document import DOMAINS
from shredfold.corpus.loaders import (
    CorpusError,
    load_builtin,
    load_corpus,
    load_folder,
    load_jsonl,
    markdown_table_to_html,
)
from shredfold.spec import CorpusSource

TABLE = '<table>\n  <tbody>\n    <tr><td colspan="2">1</td></tr>\n  </tbody>\n</table>'


def write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


# ---------------------------------------------------------------- built-in


def test_builtin_is_sorted_and_a_fresh_list_each_call() -> None:
    first = load_builtin("news_en")
    first.clear()
    again = load_builtin("news_en")
    assert len(again) >= 6
    assert [d.doc_id for d in again] == sorted(d.doc_id for d in again)


def test_builtin_unknown_domain() -> None:
    with pytest.raises(CorpusError, match="unknown domain 'poetry'.*news_en"):
        load_builtin("poetry")


# ---------------------------------------------------------------- folder


@pytest.fixture
def corpus_dir(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    write(root / "news_en" / "b_story.md", "# Headline\n\nBody text.\n")
    write(root / "news_en" / "sport" / "a_match.txt", "# Match\r\n\r\nWindows line ends.\r\n")
    write(root / "news_zh" / "x.md", "\ufeff# 标题\n\n正文。\n")
    write(root / "code_python" / "tool.py", "print('hi')\n")
    write(root / "code_python" / "__pycache__" / "tool.cpython-311.pyc", b"\x00\xff")
    write(root / "code_cpp" / "lib" / "util.hpp", "#pragma once\nint f();\n")
    write(root / "table" / "page.html", f"<html><body><h1>T</h1>{TABLE}</body></html>")
    write(root / "table" / "pipes.md", "| Team | Points |\n|:--|--:|\n| Rovers | 57 |\n")
    write(root / "table" / "raw.md", f"Raw HTML is Markdown too:\n\n{TABLE}\n")
    write(root / ".git" / "HEAD", "ref: main\n")
    write(root / "news_en" / ".DS_Store", b"\x00\x01")
    return root


def test_folder_loads_domains_ids_and_sources(corpus_dir: Path) -> None:
    docs = load_folder(corpus_dir)
    assert [d.doc_id for d in docs] == [
        "code_cpp/lib/util",
        "code_python/tool",
        "news_en/b_story",
        "news_en/sport/a_match",
        "news_zh/x",
        "table/page",
        "table/pipes",
        "table/raw",
    ]
    assert {d.source for d in docs} == {"folder"}
    by_id = {d.doc_id: d for d in docs}
    assert by_id["news_en/sport/a_match"].text == "# Match\n\nWindows line ends.\n"
    assert by_id["news_zh/x"].text.startswith("# 标题")
    # Markup around an HTML table is dropped; a Markdown table becomes the same HTML form.
    assert by_id["table/page"].text == by_id["table/raw"].text == TABLE
    pipes = lxml.html.fragment_fromstring(by_id["table/pipes"].text)
    assert [c.text for c in pipes.xpath(".//th")] == ["Team", "Points"]
    assert [c.text for c in pipes.xpath(".//td")] == ["Rovers", "57"]


@pytest.mark.parametrize(
    ("relpath", "content", "cause"),
    [
        ("poetry/ode.md", "# Ode\n", "unknown domain folder 'poetry'; allowed: news_en, news_zh"),
        ("news_en/empty.md", " \n\n", "empty document"),
        ("news_en/latin1.md", "# Caf\xe9\n".encode("latin-1"), "not UTF-8 text (byte 0xe9"),
        ("table/nothing.html", "<p>no table here</p>", "no <table> element"),
        ("table/two.html", TABLE + TABLE, "2 <table> elements"),
        ("table/open.html", "<table><tr><td>1</td></tr>", "never closed"),
        ("table/prose.md", "Just a sentence.\n", "no Markdown pipe table"),
        ("code_python/notes.txt", "hello\n", "unsupported file type '.txt'"),
        ("stray.md", "# Stray\n", "must be inside a domain sub-folder"),
    ],
)
def test_folder_errors_name_the_file_and_cause(
    tmp_path: Path, relpath: str, content: str | bytes, cause: str
) -> None:
    bad = write(tmp_path / relpath, content)
    with pytest.raises(CorpusError) as info:
        load_folder(tmp_path)
    message = str(info.value)
    named = bad.parent if relpath.startswith("poetry") else bad
    assert message.startswith(str(named)), message
    assert cause in message


def test_folder_duplicate_ids(tmp_path: Path) -> None:
    write(tmp_path / "news_en" / "a.md", "# A\n\nx\n")
    write(tmp_path / "news_en" / "a.txt", "# A\n\ny\n")
    with pytest.raises(CorpusError, match="same document id 'news_en/a'"):
        load_folder(tmp_path)


def test_folder_must_exist(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="not a folder"):
        load_folder(tmp_path / "missing")


# ---------------------------------------------------------------- Markdown tables


def test_markdown_table_pads_short_rows_and_unescapes_pipes() -> None:
    out = markdown_table_to_html("Name | Note\n--- | ---\na \\| b | <x>\nc\n")
    table = lxml.html.fragment_fromstring(out)
    assert [[c.text or "" for c in tr] for tr in table.xpath("./tbody/tr")] == [
        ["a | b", "<x>"],
        ["c", ""],
    ]
    assert "&lt;x&gt;" in out


@pytest.mark.parametrize(
    ("text", "cause"),
    [
        ("| a | b |\n|---|---|\n| 1 | 2 | 3 |\n", "t.md:3: row has 3 cells, the header has 2"),
        ("| a | b |\n|---|\n", "t.md:2: the delimiter row has 1 cells"),
        ("# Title\n\n| a |\n|---|\n| 1 |\n", "t.md:1: text outside the Markdown table"),
        ("| a |\n|---|\n| 1 |\n\n| b |\n|---|\n", "t.md:5: text outside"),
    ],
)
def test_markdown_table_errors(text: str, cause: str) -> None:
    with pytest.raises(CorpusError, match=cause.replace("|", r"\|")):
        markdown_table_to_html(text, "t.md")


# ---------------------------------------------------------------- JSONL


def jsonl(tmp_path: Path, *lines: str | dict[str, object]) -> Path:
    text = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines)
    return write(tmp_path / "docs.jsonl", text + "\n")


def test_jsonl_good_lines(tmp_path: Path) -> None:
    path = jsonl(
        tmp_path,
        {"id": "n2", "domain": "news_en", "text": "# Two\n\nBody.\n"},
        "",
        {"id": "t1", "domain": "table", "text": TABLE, "meta": {"origin": "survey"}},
        {"id": "n1", "domain": "news_zh", "text": "# 一\r\n\r\n正文。"},
    )
    docs = load_jsonl(path)
    assert [(d.doc_id, d.domain, d.source) for d in docs] == [
        ("n1", "news_zh", "jsonl"),
        ("n2", "news_en", "jsonl"),
        ("t1", "table", "jsonl"),
    ]
    assert docs[0].text == "# 一\n\n正文。"


GOOD = {"id": "a", "domain": "news_en", "text": "# A\n\nBody.\n"}


@pytest.mark.parametrize(
    ("bad", "cause"),
    [
        ('{"id": "b", "domain": "news_en", "text": "x"', "bad JSON: Expecting ',' delimiter"),
        ('["a", "b"]', "expected a JSON object, got list"),
        ({"id": "b", "domain": "news_en"}, "missing field 'text'"),
        ({"id": "b", "domain": "poetry", "text": "x"}, "unknown domain 'poetry'; expected one of"),
        ({**GOOD}, "duplicate id 'a' (first on line 1)"),
        ({**GOOD, "id": "b", "title": "x"}, "unknown key(s) 'title'; allowed: id, domain"),
        ({**GOOD, "id": "b", "meta": "x"}, "field 'meta' must be a JSON object"),
        ({**GOOD, "id": "b", "text": "  "}, "field 'text' must be a non-empty string"),
        ({**GOOD, "id": 7}, "field 'id' must be a non-empty string"),
        ({"id": "b", "domain": "table", "text": "| a |"}, "no <table> element"),
    ],
)
def test_jsonl_errors_name_path_line_and_cause(
    tmp_path: Path, bad: str | dict[str, object], cause: str
) -> None:
    path = jsonl(tmp_path, GOOD, "", bad)
    with pytest.raises(CorpusError) as info:
        load_jsonl(path)
    assert str(info.value).startswith(f"{path}:3: "), str(info.value)
    assert cause in str(info.value)


def test_jsonl_not_utf8(tmp_path: Path) -> None:
    path = write(tmp_path / "docs.jsonl", json.dumps(GOOD).encode() + b"\n\xff\xfe\n")
    with pytest.raises(CorpusError, match=rf"^{path}:2: not UTF-8"):
        load_jsonl(path)


def test_jsonl_missing_file(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="cannot read"):
        load_jsonl(tmp_path / "nope.jsonl")


# ---------------------------------------------------------------- load_corpus


def test_corpus_builtin_takes_first_n_in_id_order() -> None:
    picked = load_corpus(CorpusSource(), ["table", "news_en"], 2)
    assert list(picked) == ["table", "news_en"]
    for domain, docs in picked.items():
        assert docs == load_builtin(domain)[:2]


def test_corpus_builtin_has_six_of_everything() -> None:
    picked = load_corpus(CorpusSource(), DOMAINS, 6)
    assert all(len(docs) == 6 for docs in picked.values())


def test_corpus_too_few_names_domain_asked_and_found() -> None:
    with pytest.raises(CorpusError) as info:
        load_corpus(CorpusSource(), ["news_en", "table"], 99)
    message = str(info.value)
    assert "built-in corpus" in message
    assert "news_en: asked for 99, found 6" in message
    assert f"table: asked for 99, found {len(load_builtin('table'))}" in message


def test_corpus_folder_replaces_builtin(corpus_dir: Path) -> None:
    picked = load_corpus(CorpusSource(folder=corpus_dir), ["news_en"], 1)
    assert [d.doc_id for d in picked["news_en"]] == ["news_en/b_story"]
    with pytest.raises(CorpusError, match=r"folder .*code_java: asked for 1, found 0"):
        load_corpus(CorpusSource(folder=corpus_dir), ["news_en", "code_java"], 1)


def test_corpus_jsonl_replaces_builtin(tmp_path: Path) -> None:
    path = jsonl(
        tmp_path,
        {**GOOD, "id": "z"},
        {**GOOD, "id": "m"},
        {**GOOD, "id": "b"},
    )
    picked = load_corpus(CorpusSource(jsonl=path), ["news_en"], 2)
    assert [d.doc_id for d in picked["news_en"]] == ["b", "m"]


@pytest.mark.parametrize(
    ("source", "domains", "per_domain", "cause"),
    [
        (CorpusSource(builtin=False), ["news_en"], 1, "no corpus source"),
        (CorpusSource(), ["poetry"], 1, "unknown domain 'poetry'"),
        (CorpusSource(), ["news_en"], 0, "at least 1"),
    ],
)
def test_corpus_argument_errors(
    source: CorpusSource, domains: list[str], per_domain: int, cause: str
) -> None:
    with pytest.raises(CorpusError, match=cause):
        load_corpus(source, domains, per_domain)


# ---------------------------------------------------------------- links and bounds


@pytest.mark.parametrize("target", ["/etc/passwd", "/dev/zero", "outside"])
def test_a_document_that_links_out_of_the_folder_is_refused(tmp_path: Path, target: str) -> None:
    corpus = tmp_path / "corpus"
    write(corpus / "news_en" / "a.md", "# A\n\nx\n")
    if target == "outside":
        target = str(write(tmp_path / "private.md", "# Private\n\nnot for the corpus\n"))
    (corpus / "news_en" / "b.md").symlink_to(target)
    with pytest.raises(CorpusError) as info:
        load_folder(corpus)
    assert str(info.value).startswith(f"{corpus / 'news_en' / 'b.md'}: a link that leaves the corpus folder")


def test_a_domain_or_folder_that_links_out_is_refused_and_a_link_inside_is_read(tmp_path: Path) -> None:
    corpus, elsewhere = tmp_path / "corpus", tmp_path / "elsewhere"
    write(elsewhere / "news_en" / "far.md", "# Far\n\nx\n")
    corpus.mkdir()
    (corpus / "news_en").symlink_to(elsewhere / "news_en")
    with pytest.raises(CorpusError, match="news_en: a link that leaves the corpus folder"):
        load_folder(corpus)
    (corpus / "news_en").unlink()
    write(corpus / "news_en" / "a.md", "# A\n\nx\n")
    (corpus / "news_en" / "sub").symlink_to(elsewhere / "news_en")
    with pytest.raises(CorpusError, match="sub: a link that leaves the corpus folder"):
        load_folder(corpus)
    (corpus / "news_en" / "sub").unlink()
    (corpus / "news_en" / "same.md").symlink_to(corpus / "news_en" / "a.md")  # inside: fine
    assert [d.doc_id for d in load_folder(corpus)] == ["news_en/a", "news_en/same"]


def test_a_fifo_or_an_oversized_document_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    import os

    from shredfold.corpus.loaders import MAX_DOCUMENT_BYTES

    write(tmp_path / "news_en" / "a.md", "# A\n\nx\n")
    os.mkfifo(tmp_path / "news_en" / "pipe.md")  # reading it would wait for ever
    with pytest.raises(CorpusError, match="pipe.md: not a regular file"):
        load_folder(tmp_path)
    (tmp_path / "news_en" / "pipe.md").unlink()
    write(tmp_path / "news_en" / "big.md", "x" * (MAX_DOCUMENT_BYTES + 1))
    with pytest.raises(CorpusError, match=r"big.md: larger than 4,194,304 bytes"):
        load_folder(tmp_path)
