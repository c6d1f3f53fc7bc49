"""Releases of a small real run: they verify, they are byte-identical, and any tampering
(a response, a cell table, the leaderboard, the manifest) is caught and named."""

from __future__ import annotations

import hashlib
import json
import shutil
import tarfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from shredfold import release as rel
from shredfold.cli import main
from shredfold.tasks.shredbench.task import ShredTask

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def folder_release(small_run, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("rel") / "release"
    assert main(["release", "--spec", str(small_run.spec), "--results", str(small_run.results), "--out", str(out)]) == 0
    return out


def release_to(small_run, out: Path, *extra: str) -> int:
    return main(["release", "--spec", str(small_run.spec), "--results", str(small_run.results), "--out", str(out), *extra])


def verify(path: Path, capsys) -> tuple[int, list[str]]:
    code = main(["verify", str(path)])
    lines = capsys.readouterr().out.splitlines()
    return code, [x for x in lines if x.startswith("difference:")]


def copy_of(folder: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "copy"
    shutil.copytree(folder, dest)
    return dest


def flip(path: Path, offset: int = -20) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


def a_response(folder: Path) -> Path:
    return sorted((folder / "store" / "response").rglob("object.json"))[0]


def test_a_release_of_a_real_run_verifies_as_folder_and_archive(small_run, folder_release, tmp_path, capsys) -> None:
    code, diffs = verify(folder_release, capsys)
    assert code == 0 and diffs == []
    archive = tmp_path / "r.tar.gz"
    assert release_to(small_run, archive) == 0
    out = capsys.readouterr().out
    assert "sha256 " in out
    code, diffs = verify(archive, capsys)
    assert code == 0, diffs


def test_the_same_results_give_a_byte_identical_archive(small_run, tmp_path) -> None:
    a, b = tmp_path / "a.tar.gz", tmp_path / "b.tar.gz"
    assert release_to(small_run, a) == 0 and release_to(small_run, b) == 0
    assert a.read_bytes() == b.read_bytes()
    with tarfile.open(a) as tar:
        members = tar.getmembers()
    names = [m.name for m in members]
    assert names == sorted(names) and all(n.startswith("shredfold-release/") for n in names)
    assert {(m.mtime, m.uid, m.gid, m.uname, m.gname, m.mode) for m in members} == {(0, 0, 0, "", "", 0o644)}
    assert a.read_bytes()[4:8] == b"\0\0\0\0"  # gzip header: no time stamp


def test_a_release_holds_what_the_issue_lists(folder_release, small_run) -> None:
    info = json.loads((folder_release / "release.json").read_text())
    assert {c["name"].split("/")[0] for c in info["cells"]} == {"oracle", "ocr-islands", "origami-oracle", "origami-random"}
    assert (folder_release / "spec" / "spec.yaml").read_bytes() == small_run.spec.read_bytes()
    plan = json.loads((folder_release / "plan.json").read_text())
    assert plan["cells"]
    # designs name their files within the package's built-in folder: no absolute path
    origins = [i["design"]["origin"] for s in plan["sets"] for i in s["items"] if (i.get("design") or {}).get("origin")]
    assert origins and {o["root"] for o in origins} == {"builtin"} and not any(o["path"].startswith("/") for o in origins)
    text = (folder_release / "plan.json").read_text()
    assert str(Path(rel.__file__).parents[2]) not in text and str(small_run.workdir) not in text
    assert {p.name for p in (folder_release / "tables").iterdir()} == {
        "leaderboard.csv", "breakdown.csv", "breakdown_origami.csv", "pairwise.csv"}
    env = json.loads((folder_release / "environment.json").read_text())
    assert env["packages"]["duckdb"] and env["fonts"]["prose"].count(":") == 2
    assert set(env["ocr"]["models"]) >= {"ch_PP-OCRv4_det_infer.onnx", "ch_PP-OCRv4_rec_infer.onnx"}
    score = ShredTask.score_stage
    assert env["stages"]["shred"]["score"] == [score.name, score.version] and env["engine_version"]
    assert "text/prose/en" in env["signatures"]["shred"]
    envelope = json.loads(a_response(folder_release).read_text())
    images = [h for m in envelope["request"]["messages"] for h in m["images"]]
    assert envelope["response"]["text"] is not None and all(len(h) == 64 for h in images)
    samples = list((folder_release / "store" / "sample").glob("*/*"))
    assert samples and all((s / "truth.txt").is_file() and (s / "hidden.json").is_file() for s in samples)
    assert not list((folder_release / "store" / "sample").rglob("*.png"))  # no images without --with-samples
    episodes = list((folder_release / "store" / "origami_episode").glob("*/*/episode.json"))
    assert episodes
    manifest = (folder_release / "MANIFEST.sha256").read_text().splitlines()
    listed = {line.split("  ", 1)[1] for line in manifest}
    on_disk = {p.relative_to(folder_release).as_posix() for p in folder_release.rglob("*") if p.is_file()}
    assert on_disk - listed == {"MANIFEST.sha256", "DIGEST"}
    digest = hashlib.sha256((folder_release / "MANIFEST.sha256").read_bytes()).hexdigest()
    assert (folder_release / "DIGEST").read_text() == f"sha256 {digest}\n"


@pytest.mark.parametrize("target", ["response", "cell table", "leaderboard", "manifest"])
def test_flipping_one_byte_is_caught_and_named(folder_release, tmp_path, capsys, target) -> None:
    r = copy_of(folder_release, tmp_path)
    victim = {
        "response": lambda: a_response(r),
        "cell table": lambda: sorted((r / "cells").rglob("*.parquet"))[0],
        "leaderboard": lambda: r / "tables" / "leaderboard.csv",
        "manifest": lambda: r / "MANIFEST.sha256",
    }[target]()
    flip(victim, -30 if target != "manifest" else 10)
    code, diffs = verify(r, capsys)
    assert code == 1
    name = victim.relative_to(r).as_posix()
    named = "DIGEST" if target == "manifest" else name
    assert any(d.startswith(f"difference: {named}: ") for d in diffs), diffs
    if target == "leaderboard":  # the rebuilt table names the row and column too
        assert any(f"{name}: row " in d and "column " in d and "row -" not in d for d in diffs), diffs


def test_an_edited_answer_with_every_hash_redone_is_caught_by_rescoring(folder_release, tmp_path, capsys) -> None:
    r = copy_of(folder_release, tmp_path)
    info = json.loads((r / "release.json").read_text())
    cell = next(c for c in info["cells"] if c["name"].startswith("oracle/shred/news_en/N3"))
    item = json.loads((r / cell["query"]).read_text())["items"][0]
    key = item["response"]
    obj = r / "store" / "response" / key[:2] / key
    envelope = json.loads((obj / "object.json").read_text())
    envelope["response"]["text"] = "Harbor cranes."  # a much better-looking lie is still a lie
    (obj / "object.json").write_text(json.dumps(envelope))
    manifest = json.loads((obj / "_manifest.json").read_text())
    manifest["object.json"] = hashlib.sha256((obj / "object.json").read_bytes()).hexdigest()
    (obj / "_manifest.json").write_text(json.dumps(manifest))
    files = sorted(p for p in r.rglob("*") if p.is_file() and p.name not in ("MANIFEST.sha256", "DIGEST"))
    text = "".join(f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.relative_to(r).as_posix()}\n" for p in files)
    (r / "MANIFEST.sha256").write_text(text)
    (r / "DIGEST").write_text(f"sha256 {hashlib.sha256(text.encode()).hexdigest()}\n")

    code, diffs = verify(r, capsys)
    assert code == 1
    table = cell["table"]
    assert any(d.startswith(f"difference: {table}: row {item['item']}, column ned: expected 0.0, got ") for d in diffs), diffs
    assert any(d.startswith("difference: tables/leaderboard.csv: row 1 (oracle), column ned: ") for d in diffs), diffs


def test_verify_calls_no_model(folder_release, monkeypatch, capsys) -> None:
    from shredfold.models import asker, registry

    def refuse(*args, **kwargs):
        raise AssertionError("verify built a model")

    monkeypatch.setattr(registry, "build_model", refuse)
    monkeypatch.setattr(asker, "build_model", refuse)
    monkeypatch.setenv("SHREDFOLD_REPLAY_ONLY", "1")
    assert verify(folder_release, capsys)[0] == 0


def test_with_samples_regenerates_flat_samples_and_catches_an_edited_scrap(small_run, tmp_path, capsys) -> None:
    out = tmp_path / "with-samples"
    assert release_to(small_run, out, "--with-samples") == 0
    pieces = sorted((out / "store" / "sample").rglob("pieces/*.png"))
    assert pieces
    assert verify(out, capsys)[0] == 0
    scrap = pieces[-1]
    flip(scrap, 100)
    code, diffs = verify(out, capsys)
    name = scrap.relative_to(out).as_posix()
    # named twice: its hash in MANIFEST.sha256, and its bytes against a sample made again
    assert code == 1 and sum(d.startswith(f"difference: {name}: ") for d in diffs) == 2, diffs


def test_a_release_never_replaces_what_it_did_not_write(small_run, folder_release, tmp_path, capsys) -> None:
    mine = tmp_path / "notes"
    mine.mkdir()
    (mine / "keep.txt").write_text("mine")
    assert release_to(small_run, mine) == 2
    assert "exists" in capsys.readouterr().err
    assert release_to(small_run, mine, "--force") == 2
    assert "not a shredfold release" in capsys.readouterr().err and (mine / "keep.txt").read_text() == "mine"
    again = copy_of(folder_release, tmp_path)
    assert release_to(small_run, again, "--force") == 0
    assert (again / "DIGEST").read_bytes() == (folder_release / "DIGEST").read_bytes()


def test_a_stale_leaderboard_stops_the_release(small_run, tmp_path, capsys) -> None:
    work = tmp_path / "stale"
    shutil.copytree(small_run.workdir, work, symlinks=True)
    board = work / "results" / "leaderboard.csv"
    board.write_text(board.read_text().replace("oracle,true", "oracle,false", 1))
    code = main(["release", "--spec", str(work / "spec.yaml"), "--results", str(work / "results"), "--out", str(tmp_path / "x")])
    assert code == 2 and "leaderboard.csv differs" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_an_api_key_in_any_file_stops_the_release(monkeypatch) -> None:
    contents = rel.Contents()
    contents.add_bytes("store/response/ab/k/object.json", b'{"text": "echo sk-test-0123456789abcdef"}')
    plan = SimpleNamespace(spec=SimpleNamespace(models=[SimpleNamespace(api_key_env="MY_KEY")]))
    monkeypatch.setenv("MY_KEY", "sk-test-0123456789abcdef")
    with pytest.raises(rel.ReleaseError, match=r"object.json contains the value of \$MY_KEY"):
        rel.check_secrets(contents, plan)  # type: ignore[arg-type]
    # eight characters from the key's middle are as much a leak
    monkeypatch.setenv("MY_KEY", "ab-" + "sk-test-0123456789abcdef"[8:16] + "-zz")
    with pytest.raises(rel.ReleaseError, match=r"or 8 or more characters of it"):
        rel.check_secrets(contents, plan)  # type: ignore[arg-type]
    monkeypatch.setenv("MY_KEY", "another-key-entirely")
    rel.check_secrets(contents, plan)  # type: ignore[arg-type]
