"""A tampered store object is never used: the job that reads it fails naming it; a sample is
moved aside and rebuilt by the next run; an answer is asked again only when the user says so."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from shredfold.calls import RESPONSE_STAGE
from shredfold.shred.sample_folder import SAMPLE_STAGE
from shredfold.store import Store
from tests.e2e.snake import snakemake, write_spec

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
