"""A tampered store object is never used: the job that reads it fails naming it; a sample is
moved aside and rebuilt by the next run; an answer is asked again only when the user says so.
A broken query manifest is said in one line, and its cell queried again from the cache."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from shredfold.calls import RESPONSE_STAGE
from shredfold.shred.sample_folder import SAMPLE_STAGE
from shredfold.store import Store
from tests.e2e.snake import planned_jobs, snakemake, write_spec

pytestmark = pytest.mark.slow

SPEC = """\
name: integrity
shred:
  domains: [news_en]
  granularities: [1]
  documents_per_domain: 1
models: [oracle]
"""


def ned(work: Path) -> float:
    with open(work / "results" / "leaderboard.csv") as fh:
        return float(next(csv.DictReader(fh))["ned"])


def flip_one_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


def logs(work: Path) -> str:
    return "".join(p.read_text() for p in (work / "results" / "logs").rglob("*.log"))


def test_tampered_samples_and_answers_are_caught(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, SPEC)
    snakemake(tmp_path, spec, "results/leaderboard.csv")
    assert ned(tmp_path) == 0.0
    store = Store(tmp_path / "results" / "store")
    (sample,) = store.keys(SAMPLE_STAGE)

    flip_one_byte(store.path(SAMPLE_STAGE, sample) / "truth.txt")
    failed = snakemake(tmp_path, spec, "results/leaderboard.csv", "-R", "score", check=False)
    assert failed.returncode != 0
    assert f"sample/{sample}/truth.txt is corrupt" in logs(tmp_path) and "rebuilt" in logs(tmp_path)
    assert list((tmp_path / "results" / "store" / ".corrupt" / SAMPLE_STAGE).iterdir())
    snakemake(tmp_path, spec, "results/leaderboard.csv")  # rebuilt, nothing else asked
    assert store.verify(SAMPLE_STAGE, sample) == [] and ned(tmp_path) == 0.0

    (answer,) = store.keys(RESPONSE_STAGE)
    flip_one_byte(store.path(RESPONSE_STAGE, answer) / "object.json")
    failed = snakemake(tmp_path, spec, "results/leaderboard.csv", "-R", "score", check=False)
    assert failed.returncode != 0
    assert f"response/{answer}/object.json is corrupt" in logs(tmp_path)
    assert "reask_corrupt=true" in logs(tmp_path)
    assert store.path(RESPONSE_STAGE, answer).exists()  # never moved or re-asked silently

    snakemake(tmp_path, spec, "results/leaderboard.csv", config=("reask_corrupt=true",))
    assert store.verify(RESPONSE_STAGE, answer) == [] and ned(tmp_path) == 0.0



def test_a_broken_query_manifest_is_said_and_its_cell_queried_again_from_the_cache(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, SPEC)
    snakemake(tmp_path, spec, "results/leaderboard.csv")
    cells = tmp_path / "results" / "cells"
    (manifest,) = cells.rglob("*.json")
    cut = manifest.read_text()[:-40]  # cut short, as a full disk would leave it
    manifest.write_text(cut)

    again = snakemake(tmp_path, spec, "results/leaderboard.csv")
    notes = [line for line in again.stderr.splitlines() if line.startswith("note: ")]
    assert len(notes) == 1 and notes[0].startswith(f"note: {manifest}: query manifest is not JSON: "), again.stderr
    assert notes[0].endswith("; the cell is queried again at a new attempt (answers from the response "
                             "cache) and this file moved to results/superseded/"), notes  # fmt: skip
    (redone,) = cells.rglob("*.json")
    assert redone.name == manifest.name.replace(".json", "-r1.json")
    assert json.loads(redone.read_text())["cached"] == 1 and json.loads(redone.read_text())["called"] == 0
    moved = tmp_path / "results" / "superseded" / manifest.relative_to(tmp_path / "results")
    assert moved.read_text() == cut and ned(tmp_path) == 0.0
    assert planned_jobs(tmp_path, spec) == {}  # settled: the next run has nothing to do
