"""The built-in corpus: counts, sizes, style rules, and code that really compiles."""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
from pathlib import Path

import lxml.html
import pytest

from shredfold.corpus.document import DOMAINS, Document
from shredfold.corpus.loaders import load_builtin
from shredfold.shred.render import page_size
from shredfold.spec import RenderSettings

NEWS = ("news_en", "news_zh")
CODE = ("code_python", "code_java", "code_cpp")
CJK = re.compile(r"[\u4e00-\u9fff]")
TABLE_TAGS = {"table", "thead", "tbody", "tr", "th", "td"}


def docs(*domains: str) -> list[Document]:
    return [d for domain in domains for d in load_builtin(domain)]


def ids(documents: list[Document]) -> list[str]:
    return [d.doc_id for d in documents]


@pytest.mark.parametrize("domain", DOMAINS)
def test_six_documents_per_domain_named_and_sorted(domain: str) -> None:
    found = load_builtin(domain)
    assert len(found) >= 6
    assert ids(found) == sorted(ids(found))
    for doc in found:
        assert re.fullmatch(rf"{domain}/\d\d_[a-z0-9_]+", doc.doc_id), doc.doc_id
        assert doc.domain == domain and doc.source == "builtin"
    assert len({d.text for d in found}) == len(found)


@pytest.mark.parametrize("doc", docs(*NEWS), ids=ids(docs(*NEWS)))
def test_news_shape_and_size(doc: Document) -> None:
    assert 800 <= len(doc.text) <= 2500
    if doc.domain == "news_zh":
        # Counted in Chinese characters too, so punctuation cannot pad a short article.
        assert len(CJK.findall(doc.text)) >= 800
    blocks = doc.text.strip().split("\n\n")
    assert blocks[0].startswith("# ") and "\n" not in blocks[0]
    assert len(blocks) >= 4
    for block in blocks[1:]:
        assert "\n" not in block, "paragraphs are single lines; the renderer wraps them"
        assert not re.match(r"([-*+]|\d+\.|#|>)\s", block), f"not a plain paragraph: {block[:40]}"
    assert not re.search(r"\]\(|[*_`<>\[\]]", doc.text), "no links, images or inline markup"


@pytest.mark.parametrize("doc", docs("news_en"), ids=ids(docs("news_en")))
def test_english_news_is_ascii(doc: Document) -> None:
    assert doc.text.isascii()


@pytest.mark.parametrize("doc", docs("news_zh"), ids=ids(docs("news_zh")))
def test_chinese_news_uses_full_width_punctuation(doc: Document) -> None:
    assert not re.search(r"[,;:?!()\"]", doc.text)
    # A full stop only inside numbers such as 18.6.
    assert not re.search(r"(?<!\d)\.|\.(?!\d)", doc.text)
    assert "，" in doc.text and "。" in doc.text


@pytest.mark.parametrize("doc", docs(*CODE), ids=ids(docs(*CODE)))
def test_code_size_and_style(doc: Document) -> None:
    assert doc.text.isascii()
    assert 1000 <= len(doc.text.encode()) <= 4096
    assert "\t" not in doc.text
    for number, line in enumerate(doc.text.split("\n"), start=1):
        assert len(line) <= 88, f"line {number} is {len(line)} characters"
        indent = len(line) - len(line.lstrip(" "))
        assert indent % 4 == 0, f"line {number} is not indented by a multiple of 4"
        assert line == line.rstrip(), f"line {number} has trailing spaces"


@pytest.mark.parametrize("doc", docs("code_python"), ids=ids(docs("code_python")))
def test_python_compiles(doc: Document) -> None:
    compile(doc.text, doc.doc_id, "exec")


JAVA_FLAGS = ["-Xlint:all", "-Werror"]
CPP_FLAGS = ["-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-pedantic", "-Werror"]
CACHE_KEY = "shredfold/corpus/compiled"


def _fingerprint(tool: str, flags: list[str], doc: Document) -> str:
    # The compiler binary's identity is part of the key so an upgrade re-checks everything.
    binary = Path(shutil.which(tool) or tool).resolve()
    stamp = f"{binary}:{binary.stat().st_mtime_ns}:{' '.join(flags)}:"
    return hashlib.sha256((stamp + doc.text).encode()).hexdigest()


@pytest.fixture(scope="module")
def compile_errors(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, list[str]]:
    """Compiler errors per domain; sources that compiled before (same bytes) are not rerun.

    javac and every g++ run start at once: on a small shared machine, compiling them one
    after another takes longer than the rest of the suite together.
    """
    cache = request.config.cache
    known: set[str] = set(cache.get(CACHE_KEY, []) if cache else [])
    tmp = tmp_path_factory.mktemp("compile")
    jobs: list[tuple[str, list[str], subprocess.Popen[str]]] = []
    for domain, tool, flags, suffix in (
        ("code_java", "javac", JAVA_FLAGS, ".java"),
        ("code_cpp", "g++", CPP_FLAGS, ".cpp"),
    ):
        if shutil.which(tool) is None:
            continue
        todo = [d for d in load_builtin(domain) if _fingerprint(tool, flags, d) not in known]
        paths = []
        for doc in todo:
            path = tmp / f"{doc.doc_id.split('/')[1]}{suffix}"
            path.write_text(doc.text, encoding="utf-8")
            paths.append(str(path))
        keys = [_fingerprint(tool, flags, d) for d in todo]
        if tool == "javac" and paths:
            # One javac for all files: JVM start-up dominates, and class names are unique.
            argv = ["javac", *flags, "-d", str(tmp / "classes"), *paths]
            jobs.append((domain, keys, subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)))
        elif paths:
            for key, path in zip(keys, paths, strict=True):
                proc = subprocess.Popen(["g++", *flags, path], stderr=subprocess.PIPE, text=True)
                jobs.append((domain, [key], proc))
    errors: dict[str, list[str]] = {"code_java": [], "code_cpp": []}
    for domain, keys, proc in jobs:
        _, err = proc.communicate(timeout=300)
        if proc.returncode == 0:
            known.update(keys)
        else:
            errors[domain].append(err)
    if cache:
        cache.set(CACHE_KEY, sorted(known))
    return errors


@pytest.mark.skipif(shutil.which("javac") is None, reason="javac not on PATH")
def test_java_compiles(compile_errors: dict[str, list[str]]) -> None:
    assert not compile_errors["code_java"], "\n".join(compile_errors["code_java"])


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not on PATH")
def test_cpp_compiles(compile_errors: dict[str, list[str]]) -> None:
    assert not compile_errors["code_cpp"], "\n".join(compile_errors["code_cpp"])


def _grid(table: lxml.html.HtmlElement) -> list[int]:
    """Row widths after expanding rowspan/colspan; equal widths mean a consistent table."""
    taken: set[tuple[int, int]] = set()
    widths = []
    for r, tr in enumerate(table.iter("tr")):
        c = 0
        for cell in tr:
            while (r, c) in taken:
                c += 1
            rows, cols = int(cell.get("rowspan", 1)), int(cell.get("colspan", 1))
            taken.update((r + i, c + j) for i in range(rows) for j in range(cols))
            c += cols
        widths.append(max(col for row, col in taken if row == r) + 1)
    return widths


@pytest.mark.parametrize("doc", docs("table"), ids=ids(docs("table")))
def test_table_structure(doc: Document) -> None:
    assert doc.text.isascii()
    table = lxml.html.fragment_fromstring(doc.text)
    assert table.tag == "table"
    assert {el.tag for el in table.iter()} <= TABLE_TAGS
    assert table.xpath("./thead/tr/th"), "a header row of <th> cells"
    body_rows = table.xpath("./tbody/tr")
    assert 5 <= len(body_rows) <= 40
    assert table.xpath(".//*[@rowspan or @colspan]"), "at least one merged cell"
    cells = table.xpath(".//th | .//td")
    assert all(len(cell) == 0 for cell in cells), "cells hold plain text only"
    assert all(len(cell.text_content()) <= 24 for cell in cells)
    assert any(re.search(r"\d", cell.text_content()) for cell in table.xpath(".//td"))
    widths = _grid(table)
    assert len(set(widths)) == 1 and widths[0] <= 10, widths
    lines = doc.text.split("\n")
    assert sum(line.count("<tr") for line in lines) == len(table.xpath(".//tr"))
    assert all(line.count("<tr") <= 1 for line in lines), "one <tr> per line"


def test_tables_have_the_papers_sizes_and_the_first_ones_fill_a_page() -> None:
    # The paper's tables (from arXiv) run 800-15,000 characters. A spec with few documents
    # per domain takes the first ones, so those are results tables of several thousand
    # characters that fill the page's width, not 1,000-character ones in its corner.
    tables = load_builtin("table")
    assert all(800 <= len(d.text) <= 15_000 for d in tables)
    first = tables[:3]
    assert all(2000 <= len(d.text) <= 6000 for d in first), [len(d.text) for d in first]
    render = RenderSettings()
    for doc in first:
        width, height = page_size(doc, render)
        assert width >= 0.75 * render.width and height >= 0.6 * width, (doc.doc_id, width, height)


def test_some_tables_have_two_level_headers() -> None:
    two_level = [
        d.doc_id
        for d in load_builtin("table")
        if len(lxml.html.fragment_fromstring(d.text).xpath("./thead/tr")) >= 2
    ]
    assert len(two_level) >= 2
