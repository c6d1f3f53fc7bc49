"""The `shredfold` commands a user types: one line and exit 2 on their mistakes, never a
traceback; `show` never deletes what it did not write; `verify --store` finds tampering."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from shredfold.cli import main
from shredfold.shred.formats import COMPOSITE_FILE
from shredfold.shred.sample_folder import SAMPLE_STAGE
from shredfold.store import Store


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "shredfold", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.fixture
def results(tmp_path: Path) -> Path:
    """A results folder holding one (small, hand-made) sample object and one response."""
    store = Store(tmp_path / "results" / "store")
    with store.writing(SAMPLE_STAGE, "ab" * 32) as tmp:
        (tmp / "pieces").mkdir()
        (tmp / "pieces" / "00.png").write_bytes(b"\x89PNG piece")
        (tmp / COMPOSITE_FILE).write_bytes(b"\xff\xd8\xff composite")
        (tmp / "truth.txt").write_text("hello\n")
        (tmp / "sample.json").write_text('{"piece_files": ["pieces/00.png"]}')
    store.put_json("response", "cd" * 32, {"model": {}, "request": {}, "response": {"text": "hi"}})
    return tmp_path / "results"


def test_show_writes_a_sample_into_a_new_folder(results: Path, tmp_path: Path) -> None:
    out = tmp_path / "view"
    assert main(["show", "abab", "--out", str(out), "--results", str(results)]) == 0
    assert (out / "truth.txt").read_text() == "hello\n" and (out / "pieces" / "00.png").is_file()


def test_show_refuses_a_folder_it_did_not_write(results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("years of work")
    assert main(["show", "abab", "--out", str(mine), "--results", str(results)]) == 2
    assert "not empty" in capsys.readouterr().err
    assert main(["show", "abab", "--out", str(mine), "--force", "--results", str(results)]) == 2
    assert (mine / "thesis.tex").read_text() == "years of work"
    assert sorted(p.name for p in mine.iterdir()) == ["thesis.tex"]


def test_show_force_replaces_only_what_an_earlier_show_wrote(results: Path, tmp_path: Path) -> None:
    out = tmp_path / "view"
    assert main(["show", "abab", "--out", str(out), "--results", str(results)]) == 0
    (out / "notes.txt").write_text("mine")
    (out / "truth.txt").write_text("edited by hand")
    assert main(["show", "abab", "--out", str(out), "--force", "--results", str(results)]) == 0
    assert (out / "notes.txt").read_text() == "mine"
    assert (out / "truth.txt").read_text() == "hello\n"


@pytest.mark.parametrize("link", ["pieces", "pieces/00.png", ".shredfold-show.json"])
def test_show_force_never_writes_through_a_link(results: Path, tmp_path: Path, capsys, link: str) -> None:
    out, victim = tmp_path / "view", tmp_path / "victim"
    assert main(["show", "abab", "--out", str(out), "--results", str(results)]) == 0
    victim.mkdir()
    (victim / "00.png").write_text("someone else's picture")
    (victim / "notes.json").write_text('{"files": []}')
    target = {"pieces": victim, "pieces/00.png": victim / "00.png", ".shredfold-show.json": victim / "notes.json"}[link]
    if (out / link).is_dir():
        shutil.rmtree(out / link)
    else:
        (out / link).unlink()
    (out / link).symlink_to(target)
    assert main(["show", "abab", "--out", str(out), "--force", "--results", str(results)]) == 2
    assert link in capsys.readouterr().err
    assert (victim / "00.png").read_text() == "someone else's picture"
    assert (victim / "notes.json").read_text() == '{"files": []}' and sorted(p.name for p in victim.iterdir()) == ["00.png", "notes.json"]


def test_show_of_the_working_directory_deletes_nothing(results: Path, tmp_path: Path) -> None:
    (tmp_path / "keep.py").write_text("x = 1")
    assert run("show", "abab", "--out", ".", "--force", "--results", str(results), cwd=tmp_path).returncode == 2
    assert (tmp_path / "keep.py").is_file() and (results / "store").is_dir()


def test_verify_store_counts_objects_and_names_each_problem(results: Path, tmp_path: Path) -> None:
    ok = run("verify", "--store", str(results), cwd=tmp_path)
    assert ok.returncode == 0 and "2 objects checked" in ok.stdout and "0 problem(s)" in ok.stdout
    store = Store(results / "store")
    (store.path(SAMPLE_STAGE, "ab" * 32) / "truth.txt").write_text("hellO\n")
    (store.path("response", "cd" * 32) / "object.json").unlink()
    bad = run("verify", "--store", str(results), cwd=tmp_path)
    assert bad.returncode == 1
    assert f"sample/{'ab' * 32}/truth.txt: hash mismatch" in bad.stdout
    assert f"response/{'cd' * 32}/object.json: missing" in bad.stdout
    assert "2 problem(s) (response: 1, sample: 1)" in bad.stdout


def test_plan_errors_are_one_line_and_exit_2(tmp_path: Path) -> None:
    cases = {
        "unknown model": "name: a\nmodels: [no-such-model]\n",
        "empty corpus folder": "name: a\nshred:\n  domains: [news_en]\n  granularities: [1]\n  corpus: {folder: corpus}\nmodels: [oracle]\n",
        "duplicate key": "name: a\nname: b\nmodels: [oracle]\n",
    }
    (tmp_path / "corpus").mkdir()
    for why, text in cases.items():
        spec = tmp_path / "spec.yaml"
        spec.write_text(text)
        out = run("plan", str(spec), cwd=tmp_path)
        assert out.returncode == 2, why
        assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1, (why, out.stderr)
    assert not (tmp_path / "results").exists()  # planning wrote nothing


def test_a_job_for_a_cell_its_plan_does_not_hold_says_plan_again_in_one_line(tmp_path: Path) -> None:
    from shredfold.plan import make_plan, write_plan
    from shredfold.resolve import load_spec

    spec = tmp_path / "spec.yaml"
    spec.write_text("name: a\nshred:\n  domains: [news_en]\n  granularities: [1]\nmodels: [oracle]\n")
    plan = write_plan(make_plan(load_spec(spec), Store(tmp_path / "results" / "store")), tmp_path)
    for stage, where in (("score", "oracle/shred/news_en/N1"), ("query", "oracle/shred/news_en/N1"), ("set", "")):
        out = run("job", stage, "--plan", plan, "--key", "0" * 64, "--where", where, "--out", "x", cwd=tmp_path)
        assert out.returncode == 2, (stage, out.stderr)
        assert "Traceback" not in out.stderr, out.stderr
        assert out.stderr.strip().splitlines()[-1].startswith("error: no "), out.stderr
        assert "run it again" in out.stderr


def test_a_corrupt_stored_file_is_named_when_read(results: Path) -> None:
    store = Store(results / "store")
    (store.path("response", "cd" * 32) / "object.json").write_text("{not json")
    with pytest.raises(Exception) as info:
        store.get_json("response", "cd" * 32)
    assert f"response/{'cd' * 32}/object.json is corrupt" in str(info.value)
    assert json.loads((store.path(SAMPLE_STAGE, "ab" * 32) / "sample.json").read_text())


def test_designs_fetch_reports_what_it_wrote_and_refuses_in_one_line(
    shared_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from shredfold.origami_bench.flat_folder import CACHE_ENV, default_folder
    from tests.origami_bench.archives import SMALL, design_members, write_archive

    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    url = write_archive(tmp_path / "ff.tar.gz", design_members(shared_dir / "flat-folder" / "instagram", SMALL))
    assert main(["designs", "fetch", "--url", url]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and f"{len(SMALL)} of 366 designs present" in err
    assert "359 missing: 001_traditional_Sailboat.fold, 002_traditional_Kabuto.fold" in err
    assert not default_folder().exists()
    assert main(["designs", "fetch", "--url", url, "--allow-partial"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{len(SMALL)} of 366 designs present at 191aaa9 (written): {default_folder()}"
    assert out[1].startswith("1 is a later upstream revision, not the pinned file: 013_mitanioripa_Medal.fold (c2bf9a7)")
    assert sorted(p.name for p in default_folder().glob("*.fold")) == sorted(SMALL)
    assert main(["designs", "fetch", "--url", url, "--allow-partial", "--to", str(tmp_path / "cache")]) == 2
    assert "was not written by `shredfold designs fetch`" in capsys.readouterr().err


def test_a_corpus_link_to_etc_passwd_is_a_spec_error_naming_the_spec_line(tmp_path, capsys) -> None:
    corpus = tmp_path / "corp" / "news_en"
    corpus.mkdir(parents=True)
    (corpus / "a.md").write_text("# A\n\nGulls over the piers.\n")
    (corpus / "b.md").symlink_to("/etc/passwd")
    spec = tmp_path / "spec.yaml"
    spec.write_text("name: x\nshred:\n  domains: [news_en]\n  granularities: [1]\n  documents_per_domain: 2\n"
                    "  corpus:\n    folder: corp\nmodels: [oracle]\n")  # fmt: skip
    assert main(["plan", str(spec)]) == 2
    out = capsys.readouterr()
    assert out.err.startswith(f"spec error: {spec}:7: shred.corpus.folder: {corpus / 'b.md'}: a link that leaves")
    assert "root:" not in out.out + out.err
    (corpus / "b.md").unlink()  # one document, two asked: named after the same setting
    assert main(["plan", str(spec)]) == 2
    assert f"{spec}:7: shred.corpus.folder: too few documents" in capsys.readouterr().err


def test_under_snakemake_a_corpus_error_is_the_same_one_line(tmp_path) -> None:
    from tests.e2e.snake import snakemake

    (tmp_path / "corp" / "news_en").mkdir(parents=True)
    (tmp_path / "corp" / "news_en" / "a.md").write_text("# A\n\nGulls.\n")
    spec = tmp_path / "spec.yaml"
    spec.write_text("name: x\nshred:\n  domains: [news_en, table]\n  granularities: [1]\n  documents_per_domain: 1\n"
                    "  corpus:\n    folder: corp\nmodels: [oracle]\n")  # fmt: skip
    proc = snakemake(tmp_path, spec, "-n", check=False, timeout=300)
    assert proc.returncode == 2
    err = proc.stderr.strip()
    assert err == f"spec error: {spec}:7: shred.corpus.folder: too few documents in the folder {tmp_path / 'corp'}: table: asked for 1, found 0", err
    assert "common.smk" not in proc.stdout + proc.stderr
