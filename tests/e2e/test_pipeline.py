"""The whole ShredBench pipeline through real Snakemake, DuckDB and the store."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.e2e.snake import ROOT, planned_jobs, snakemake, tree_hashes, write_spec

pytestmark = pytest.mark.slow

SPEC = """\
name: e2e
seed: 3
shred:
  domains: [news_en, code_python]
  granularities: [1, 6]
  documents_per_domain: 1
models:
  - oracle
  - ocr-islands
"""
ORACLE_ONLY = SPEC.replace("  - ocr-islands\n", "")


def leaderboard(workdir: Path) -> dict[str, dict[str, str]]:
    with open(workdir / "results" / "leaderboard.csv", newline="") as fh:
        return {row["model"]: row for row in csv.DictReader(fh)}


@pytest.fixture(scope="module")
def first_run(tmp_path_factory):
    work = tmp_path_factory.mktemp("run1")
    spec = write_spec(work, SPEC)
    snakemake(work, spec, "results/leaderboard.csv")
    return work, spec


def without_latency(table: Path) -> list[dict[str, str]]:
    with open(table, newline="") as fh:
        rows = list(csv.DictReader(fh))
    return [{k: v for k, v in r.items() if not k.startswith("latency")} for r in rows]


def test_leaderboard_has_oracle_at_zero_and_ocr_islands(first_run):
    work, _ = first_run
    rows = leaderboard(work)
    assert set(rows) == {"oracle", "ocr-islands"}
    assert rows["oracle"]["reference"] == "true"
    assert float(rows["oracle"]["ned"]) == 0.0
    assert rows["oracle"]["items"] == "4"
    ocr = rows["ocr-islands"]
    assert float(ocr["ned_n1"]) < float(ocr["ned_n6"])
    assert (work / "results" / "breakdown.csv").is_file()


def test_second_run_does_nothing(first_run):
    work, spec = first_run
    assert planned_jobs(work, spec) == {}


def test_adding_a_model_plans_only_its_cells(first_run, tmp_path):
    work, spec = first_run
    more = write_spec(tmp_path, SPEC + "  - {id: oracle-b, adapter: oracle, reference: true}\n")
    jobs = planned_jobs(work, more)
    assert jobs == {"query": 4, "score": 4, "aggregate": 1}


def test_changing_one_domains_render_setting_recomputes_only_that_domain(first_run, tmp_path):
    work, spec = first_run
    changed = SPEC.replace(
        "models:", "  render_by_domain:\n    code_python:\n      code_font_size: 22\nmodels:"
    )
    spec2 = write_spec(tmp_path, changed)
    jobs = planned_jobs(work, spec2)
    # code_python × {1, 6}: 2 sample sets; × 2 models: 4 query and 4 score cells.
    assert jobs == {"item_set": 2, "query": 4, "score": 4, "aggregate": 1}


def test_same_spec_gives_identical_bytes_in_a_second_clone(first_run, tmp_path):
    work, _ = first_run
    spec = write_spec(tmp_path, SPEC)
    snakemake(tmp_path, spec, "results/leaderboard.csv")
    a = tree_hashes(work / "results" / "store" / "sample")
    b = tree_hashes(tmp_path / "results" / "store" / "sample")
    assert a and a == b
    # Everything but the measured wall-clock latencies is identical.
    for table in ("leaderboard.csv", "breakdown.csv"):
        assert without_latency(work / "results" / table) == without_latency(
            tmp_path / "results" / table
        )


def test_killed_run_reuses_finished_items(tmp_path):
    spec = write_spec(
        tmp_path,
        ORACLE_ONLY.replace("documents_per_domain: 1", "documents_per_domain: 4")
        .replace("[news_en, code_python]", "[news_en]")
        .replace("[1, 6]", "[12]"),
    )
    cmd = [
        sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "-d", str(tmp_path),
        "--cores", "1", "results/leaderboard.csv", "--config", f"spec={spec}",
    ]
    proc = subprocess.Popen(cmd, cwd=tmp_path, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    samples = tmp_path / "results" / "store" / "sample"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        done = list(samples.glob("*/*/_manifest.json")) if samples.exists() else []
        if len(done) >= 2:
            break
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    finished = {p.parent.name: p.stat().st_mtime_ns for p in samples.glob("*/*/_manifest.json")}
    assert 2 <= len(finished) < 4, "kill should land mid-cell"
    assert not (tmp_path / "results" / "leaderboard.csv").exists()

    # A SIGKILL leaves Snakemake's lock behind; --unlock is the documented way on.
    snakemake(tmp_path, spec, "--unlock")
    snakemake(tmp_path, spec, "results/leaderboard.csv")
    after = {p.parent.name: p.stat().st_mtime_ns for p in samples.glob("*/*/_manifest.json")}
    assert len(after) == 4
    assert all(after[k] == v for k, v in finished.items()), "finished samples were remade"
    log = next((tmp_path / "results" / "logs" / "sets" / "shred").rglob("*.log")).read_text()
    assert f"{len(finished)} reused" in log
