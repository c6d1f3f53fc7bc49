"""An outside sample folder through the real pipeline: Snakemake plans it, stores its samples,
asks the oracle, scores, aggregates and reports — under our protocol and the paper's."""

from __future__ import annotations

import csv
from pathlib import Path

import duckdb
import pytest

from shredfold.cli import main
from shredfold.shred.sample_folder import SAMPLE_STAGE, load_hidden
from shredfold.store import Store
from tests.e2e.snake import snakemake, write_spec
from tests.shred.outside_sets import folder_set

pytestmark = pytest.mark.slow


def rows(path: Path) -> list[dict[str, str]]:
    with open(path) as fh:
        return list(csv.DictReader(fh))


def test_an_outside_folder_runs_through_the_pipeline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder_set(tmp_path / "shreds")
    spec = write_spec(tmp_path, "name: outside\nshred:\n  samples:\n    folder: shreds\nmodels: [oracle]\n")
    snakemake(tmp_path, spec)  # the default target: leaderboard and report

    results = tmp_path / "results"
    (board,) = rows(results / "leaderboard.csv")
    assert board["model"] == "oracle" and int(board["items"]) == 2 and int(board["errors"]) == 0
    # the oracle answers the truth: perfect under our protocol, tables included
    assert float(board["ned"]) == 0.0 and float(board["teds"]) == 1.0
    assert float(board["ned_n2"]) == 0.0 and float(board["ned_n3"]) == 0.0
    cells = {(r["domain"], r["granularity"]): r for r in rows(results / "breakdown.csv")}
    assert set(cells) == {("news_en", "2"), ("table", "3")}
    assert all(int(r["items"]) == 1 for r in cells.values())
    # no polygons: the failure diagnostics are empty, not made up
    tables = [str(p) for p in (results / "cells" / "score").rglob("*.parquet")]
    ((filled, total),) = duckdb.sql(
        "SELECT count(*) FILTER (WHERE omission IS NOT NULL OR piece_omission IS NOT NULL), count(*) "
        f"FROM read_parquet({tables})"
    ).fetchall()
    assert len(tables) == 2 and total == 2 and filled == 0
    assert "memo" in (results / "report.html").read_text(encoding="utf-8")

    store = Store(results / "store")
    stored = sorted(load_hidden(store.object(SAMPLE_STAGE, k))["doc_id"] for k in store.keys(SAMPLE_STAGE))
    assert stored == ["memo", "parts"]

    # A release with its samples verifies: scores re-computed from the stored answers and
    # truths; the outside samples are noted, not regenerated (their sources are not in it).
    release = tmp_path / "release"
    assert main(["release", "--spec", str(spec), "--results", str(results), "--out", str(release), "--with-samples"]) == 0
    capsys.readouterr()
    assert main(["verify", str(release)]) == 0
    out = capsys.readouterr().out
    assert "difference:" not in out and out.count("an outside sample") == 2

    # The paper's protocol on the same samples (stored once): the oracle answers the
    # document as written, so the paper's raw NED is exactly 0.
    paper = write_spec(tmp_path, "name: outside-paper\nshred:\n  protocol: paper\n  samples:\n    folder: shreds\nmodels: [oracle]\n", "paper.yaml")
    snakemake(tmp_path, paper, "results/leaderboard.csv")
    (board,) = rows(results / "leaderboard.csv")
    assert board["protocol"] == "paper" and float(board["ned_raw"]) == 0.0 and int(board["errors"]) == 0
    assert len(list(store.keys(SAMPLE_STAGE))) == 2
