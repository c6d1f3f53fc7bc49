"""Releases and verify in the fast suite, on the quick in-process run (:mod:`tests.quick_run`),
where an endpoint kept failing some items: the release is made all the same and says how
many failed and why, verify agrees, every file is checked against the manifest, and a folder
release holding a link is refused by name without reading through it."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from shredfold.cli import main


@pytest.fixture(scope="module")
def released(quick_run, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("quick-release") / "release"
    assert main(["release", "--spec", str(quick_run.spec), "--results", str(quick_run.results), "--out", str(out)]) == 0
    return out


def verify(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str], str]:
    code = main(["verify", str(path)])
    out = capsys.readouterr()
    return code, [x for x in out.out.splitlines() if x.startswith("difference:")], out.out + out.err


def copy_of(folder: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "copy"
    shutil.copytree(folder, dest)
    return dest


def test_a_run_with_failed_items_is_released_and_verified_saying_what_failed(quick_run, tmp_path, capsys) -> None:
    assert 0 < quick_run.failing < quick_run.items
    archive = tmp_path / "r.tar.gz"
    assert main(["release", "--spec", str(quick_run.spec), "--results", str(quick_run.results), "--out", str(archive)]) == 0
    said = capsys.readouterr().out
    failed = f"{quick_run.failing} of {quick_run.items} items failed"
    cause = f"{quick_run.failing} × HTTP 500: "
    assert failed in said and cause in said and "internal error" in said, said
    code, diffs, out = verify(archive, capsys)
    assert code == 0 and diffs == [], out
    assert failed in out and cause in out and ": verified (" in out
    # the failed items are in the leaderboard as errors, scored as empty answers
    board = (quick_run.results / "leaderboard.csv").read_text().splitlines()
    flaky = next(line for line in board if line.startswith("flaky,"))
    assert flaky.split(",")[3] == str(quick_run.failing)


def test_the_oracle_scores_ned_raw_0_on_every_domain(quick_run) -> None:
    import csv

    rows = list(csv.DictReader((quick_run.results / "breakdown.csv").read_text().splitlines()))
    oracle = [r for r in rows if r["model"] == "oracle"]
    assert {r["domain"] for r in oracle} == {"news_en", "table"}
    assert all(float(r["ned_raw"]) == 0.0 and float(r["ned"]) == 0.0 for r in oracle), oracle


def test_a_tampered_failure_count_is_a_difference(released, tmp_path, capsys) -> None:
    r = copy_of(released, tmp_path)
    info = json.loads((r / "release.json").read_text())
    info["failures"]["failed"] = 0
    rewrite(r, "release.json", json.dumps(info).encode())
    code, diffs, out = verify(r, capsys)
    assert code == 1 and any(d.startswith("difference: release.json: row -, column failures: ") for d in diffs), out


def rewrite(release: Path, name: str, data: bytes) -> None:
    """Change a file and redo MANIFEST.sha256 and DIGEST, as a forger would."""
    (release / name).write_bytes(data)
    files = sorted(p for p in release.rglob("*") if p.is_file() and p.name not in ("MANIFEST.sha256", "DIGEST"))
    text = "".join(f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.relative_to(release).as_posix()}\n" for p in files)
    (release / "MANIFEST.sha256").write_text(text)
    (release / "DIGEST").write_text(f"sha256 {hashlib.sha256(text.encode()).hexdigest()}\n")


def test_every_file_is_checked_against_the_manifest_not_only_those_derived_again(released, tmp_path, capsys) -> None:
    # None of these is re-derived (re-scoring reads neither, and environment.json's
    # packages and fonts are compared as notes): only the manifest's hashes catch them.
    r = copy_of(released, tmp_path)
    listed = [line.split("  ", 1)[1] for line in (r / "MANIFEST.sha256").read_text().splitlines()]
    victims = ["environment.json", "spec/spec.yaml", "spec/resolved.json", "spec/models/flaky.yaml", listed[-1]]
    assert set(victims) <= set(listed) and listed.index("environment.json") > 0
    for name in victims:
        data = bytearray((r / name).read_bytes())
        data[len(data) // 2] ^= 0x20
        (r / name).write_bytes(bytes(data))
    code, diffs, out = verify(r, capsys)
    assert code == 1
    for name in victims:
        assert any(d.startswith(f"difference: {name}: row -, column sha256: ") for d in diffs), (name, out)


@pytest.mark.parametrize("target", ["/etc/passwd", "/dev/zero", "outside"])
def test_a_link_in_a_folder_release_is_refused_by_name_and_never_read(released, tmp_path, target) -> None:
    r = copy_of(released, tmp_path)
    if target == "outside":
        outside = tmp_path / "outside.csv"
        outside.write_text((r / "tables" / "leaderboard.csv").read_text().replace("oracle", "SECRET-ROW"))
        target = str(outside)
    board = r / "tables" / "leaderboard.csv"
    board.unlink()
    board.symlink_to(target)
    # a subprocess: /dev/zero read whole would exhaust the memory of the test process
    proc = subprocess.run([sys.executable, "-m", "shredfold", "verify", str(r)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert "tables/leaderboard.csv is a symbolic link" in proc.stderr and "refused" in proc.stderr
    assert "root:" not in proc.stdout + proc.stderr and "SECRET-ROW" not in proc.stdout + proc.stderr


def test_a_linked_folder_or_a_fifo_in_a_folder_release_is_refused(released, tmp_path, capsys) -> None:
    r = copy_of(released, tmp_path)
    shutil.move(r / "spec", tmp_path / "spec-elsewhere")
    (r / "spec").symlink_to(tmp_path / "spec-elsewhere")
    assert main(["verify", str(r)]) == 2
    assert "spec is a symbolic link" in capsys.readouterr().err
    (r / "spec").unlink()
    shutil.move(tmp_path / "spec-elsewhere", r / "spec")
    os.mkfifo(r / "cells" / "pipe")
    assert main(["verify", str(r)]) == 2
    assert "cells/pipe is not a regular file" in capsys.readouterr().err


def test_a_release_records_no_absolute_path(quick_run, released) -> None:
    # The spec relative to the project, its corpus relative to the spec: a published
    # release carries neither its author's home directory nor the machine's layout.
    spec = json.loads((released / "spec" / "resolved.json").read_text())
    assert spec["path"] == "spec.yaml" and spec["spec"]["shred"]["corpus"]["jsonl"] == "corpus.jsonl"
    assert json.loads((released / "plan.json").read_text())["spec"] == spec
    places = {str(quick_run.workdir), str(quick_run.workdir.resolve()), str(Path.home())}
    for f in released.rglob("*"):
        if f.is_file():
            data = f.read_bytes()
            assert not any(p.encode() in data for p in places if len(p) > 1), f


def test_an_edited_query_manifest_stops_the_release_in_one_line(quick_run, tmp_path, capsys) -> None:
    work = tmp_path / "edited"
    shutil.copytree(quick_run.workdir, work, symlinks=True)
    manifest = sorted((work / "results" / "cells").rglob("*.json"))[0]
    data = json.loads(manifest.read_text())
    data["items"][0]["cached"] = "maybe"
    manifest.write_text(json.dumps(data))
    code = main(["release", "--spec", str(work / "spec.yaml"), "--results", str(work / "results"), "--out", str(tmp_path / "x")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err and "Traceback" not in err, err
    assert err.startswith(f"error: {manifest}: not a query manifest: items.0.cached: Input should be a valid boolean"), err
    assert err.endswith("run snakemake again: the cell is queried again at a new attempt (answers from the response cache) and this file moved to results/superseded/"), err
    assert not (tmp_path / "x").exists()


def test_a_released_query_manifest_that_is_not_one_is_a_difference(released, tmp_path, capsys) -> None:
    r = copy_of(released, tmp_path)
    name = sorted(p.relative_to(r).as_posix() for p in (r / "cells").rglob("*.json"))[0]
    data = json.loads((r / name).read_text())
    data["items"][0]["response"] = "../../../etc/passwd"
    rewrite(r, name, json.dumps(data).encode())
    code, diffs, out = verify(r, capsys)
    assert code == 1, out
    assert any(d.startswith(f"difference: {name}: ") and "items.0.response: String should match pattern" in d for d in diffs), diffs
