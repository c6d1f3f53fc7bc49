"""The paper's data set end to end: `shredfold designs fetch` from a file:// archive of shared
designs, then a spec with ``designs: {flat_folder: true}`` through real Snakemake, with the
breakdown by the paper's categories and tiers."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

from shredfold.origami_bench import flat_folder as ff
from tests.e2e.snake import snakemake, write_spec
from tests.origami_bench.archives import SMALL, design_members, write_archive

pytestmark = pytest.mark.slow

SPEC = """\
name: e2e-flat-folder
seed: 5
origami:
  designs: {builtin: false, procedural: 3, procedural_folds: [2, 3], flat_folder: true}
  tasks: [mcq_assoc, fullstep]
  mcq_items: 3
  step_limit: 2
  image_size: 128
models: [origami-random]
"""


def test_fetched_designs_run_through_snakemake_by_category_and_tier(
    shared_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ff.CACHE_ENV, str(tmp_path / "cache"))  # the jobs inherit it
    url = write_archive(tmp_path / "ff.tar.gz", design_members(shared_dir / "flat-folder" / "instagram", SMALL))
    fetched = subprocess.run(
        [sys.executable, "-m", "shredfold", "designs", "fetch", "--url", url, "--allow-partial"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert fetched.returncode == 0, fetched.stderr
    assert f"{len(SMALL)} of 366 designs present" in fetched.stdout

    work = tmp_path / "work"
    work.mkdir()
    snakemake(work, write_spec(work, SPEC), "results/leaderboard.csv", timeout=1500)
    with open(work / "results" / "breakdown_origami.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    full = {(r["tier"], r["category"]): int(r["items"]) for r in rows if r["task"] == "fullstep"}
    by_name = ff.manifest().by_name()
    expected: dict[tuple[str, str], int] = {}
    for name in SMALL:
        meta_tier = ff.tier(*ff.fold_counts(_json(shared_dir / "flat-folder" / "instagram" / name)))
        key = (meta_tier, by_name[name].category)
        expected[key] = expected.get(key, 0) + 1
    paper = {k: v for k, v in full.items() if k[1] != "procedural"}
    assert paper == expected
    assert {t for t, _ in paper} == {"easy", "medium", "hard"}
    assert all(r["gs"] != "" for r in rows if r["task"] == "fullstep")  # scored, not blank
    assert any(r["task"] == "mcq_assoc" for r in rows)
    with open(work / "results" / "leaderboard.csv", newline="") as fh:
        board = {r["model"]: r for r in csv.DictReader(fh)}
    assert board["origami-random"]["origami_gs"] != ""


def _json(path: Path) -> dict:  # type: ignore[type-arg]
    import json

    return dict(json.loads(path.read_text(encoding="utf-8")))
