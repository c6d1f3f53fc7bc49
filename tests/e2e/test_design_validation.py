"""A user's folder of designs the package does not know, through real Snakemake: each design
is validated by a job of its own (two at once with ``--cores 2``), the targets of a design
that does not fold flat are dropped and named in the report, and ``on_invalid: stop`` stops
the run naming the file; ``shredfold plan`` and the Snakefile plan the same keys."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.snake import ROOT, snakemake, write_spec

pytestmark = pytest.mark.slow
BUILTIN = ROOT / "src" / "shredfold" / "origami_bench" / "builtin"

SPEC = """\
name: e2e-validation
seed: 3
origami:
  designs: {{builtin: false, procedural: 0, folder: {folder}, on_invalid: {on_invalid}}}
  tasks: [fullstep]
  step_limit: 2
  image_size: 96
models: [origami-random]
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    f = tmp_path / "mine"
    f.mkdir()
    for name in ("waterbomb-base.fold", "preliminary-base.fold", "kite-base.fold"):
        shutil.copy(BUILTIN / name, f / name)
    flipped = json.loads((BUILTIN / "waterbomb-base.fold").read_text())
    flipped["edges_assignment"] = ["M" if a == "V" else a for a in flipped["edges_assignment"]]
    (f / "all-mountain.fold").write_text(json.dumps(flipped))
    return f


def test_skip_validates_each_design_in_its_own_job_and_names_the_one_left_out(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from shredfold.cli import main

    work = tmp_path / "work"
    work.mkdir()
    spec = write_spec(work, SPEC.format(folder="../mine", on_invalid="skip"))  # relative to the spec
    planned = subprocess.run([sys.executable, "-m", "shredfold", "plan", str(spec), "--json"], cwd=work,
                             capture_output=True, text=True, timeout=300)  # fmt: skip
    assert planned.returncode == 0, planned.stderr
    summary = json.loads(planned.stdout)
    checks = [s for s in summary["sets"] if not s["asked"]]
    assert len(checks) == 4 and all(s["task"] == "validate" for s in checks)

    proc = snakemake(work, spec, "results/leaderboard.csv", "results/report.html", timeout=1500)
    logs = sorted((work / "results" / "logs" / "sets" / "origami" / "validate").rglob("*.log"))
    assert len(logs) == 4  # one validation job per design
    assert sum("does not fold flat" in p.read_text() for p in logs) == 1
    with open(work / "results" / "breakdown_origami.csv", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["task"] == "fullstep"]
    assert sum(int(r["items"]) for r in rows) == 3  # the three bases; the all-mountain one left out
    # named on screen (the aggregate's output) and in the leaderboard's notes, within its folder
    note = "origami.designs: 1 design(s) left out by their validation jobs (on_invalid: skip): all-mountain.fold: does not fold flat ("
    assert any(line.startswith(f"note: {note}") for line in (proc.stdout + proc.stderr).splitlines())
    with open(work / "results" / "leaderboard.csv", newline="") as fh:
        (board,) = list(csv.DictReader(fh))
    assert board["notes"].startswith(note) and str(tmp_path) not in board["notes"]
    report = (work / "results" / "report.html").read_text()
    assert "Designs left out" in report and "folder/all-mountain" in report and "does not fold flat" in report
    # the Snakefile planned the keys `shredfold plan` printed, and names no absolute path
    (plan_file,) = (work / "results" / "plans").glob("*.json")
    assert str(tmp_path) not in plan_file.read_text()
    doc = json.loads(plan_file.read_text())
    assert {s["key"] for s in doc["sets"]} == {s["key"] for s in summary["sets"]}
    assert {(c["query_key"], c["score_key"]) for c in doc["cells"]} == {(c["query_key"], c["score_key"]) for c in summary["cells"]}

    # the release carries the notes and no absolute path, and verifies on "another machine":
    # another working directory and cache, the design folder gone (re-scoring reads the store)
    release = tmp_path / "release"
    assert main(["release", "--spec", str(spec), "--results", str(work / "results"), "--out", str(release)]) == 0
    assert note in (release / "tables" / "leaderboard.csv").read_text()
    for f in release.rglob("*"):
        assert not f.is_file() or str(tmp_path).encode() not in f.read_bytes(), f
    shutil.rmtree(folder)
    monkeypatch.setenv("SHREDFOLD_CACHE", str(tmp_path / "elsewhere"))
    monkeypatch.chdir(tmp_path)
    assert main(["verify", str(release)]) == 0


def test_stop_ends_the_run_naming_the_design_that_does_not_fold_flat(folder: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    spec = write_spec(work, SPEC.format(folder=folder, on_invalid="stop"))
    proc = snakemake(work, spec, "results/leaderboard.csv", check=False, timeout=1500)
    assert proc.returncode != 0
    logs = [p.read_text() for p in (work / "results" / "logs" / "sets" / "origami" / "validate").rglob("*.log")]
    (failed,) = [t for t in logs if "spec error" in t]
    line = failed.strip().splitlines()[-1]
    assert line.startswith("spec error: ") and f"{folder / 'all-mountain.fold'}: does not fold flat" in line
    assert "on_invalid: skip" in line and "Traceback" not in failed
    assert not (work / "results" / "leaderboard.csv").exists()


def test_every_design_left_out_ends_the_run_naming_them(folder: Path, tmp_path: Path) -> None:
    for name in ("waterbomb-base.fold", "preliminary-base.fold", "kite-base.fold"):
        (folder / name).unlink()
    work = tmp_path / "work"
    work.mkdir()
    spec = write_spec(work, SPEC.format(folder=folder, on_invalid="skip"))
    proc = snakemake(work, spec, "results/leaderboard.csv", check=False, timeout=1500)
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    (line,) = [x for x in out.splitlines() if x.startswith("error: ")]
    assert "origami.designs: no usable design: every one of 1 target design(s) was left out" in line
    assert "all-mountain.fold: does not fold flat" in line and "Traceback" not in out
    assert not (work / "results" / "leaderboard.csv").exists()
