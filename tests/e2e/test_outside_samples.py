"""An outside sample folder through the real pipeline: Snakemake plans it, stores its samples,
asks the oracle, scores, aggregates and reports — under our protocol and the paper's."""

from __future__ import annotations

import csv
from pathlib import Path

import duckdb
import pytest

from shredfold.cli import main
from shredfold.shred.formats import COMPOSITE_FILE
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


RENDERED = """\
name: rendered
shred:
  domains: [news_en]
  granularities: [3]
  documents_per_domain: 1
  corpus: {jsonl: corpus.jsonl}
  render: {width: 480, margin: 24, prose_font_size: 16}
"""
READERS = """\
models:
  - ocr-islands
  - {id: ocr-composite, adapter: ocr-islands, images: {mode: composite}}
"""
TIDE = "# Harbor Tides\n\nHarbor cranes lifted record cargo on Monday while gulls circled above the western piers. Engineers measured every tide gauge before dawn."


def test_a_rendered_sample_imported_as_an_outside_one_scores_the_same(tmp_path: Path) -> None:
    import json
    import shutil

    (tmp_path / "corpus.jsonl").write_text(json.dumps({"id": "tide", "domain": "news_en", "text": TIDE}) + "\n")
    rendered = write_spec(tmp_path, RENDERED + READERS, "rendered.yaml")
    snakemake(tmp_path, rendered, "results/leaderboard.csv")
    before = {r["model"]: r for r in rows(tmp_path / "results" / "leaderboard.csv")}

    # its images and its document as written, laid out as a user's own set would be
    store = Store(tmp_path / "results" / "store")
    (key,) = store.keys(SAMPLE_STAGE)
    sample = store.path(SAMPLE_STAGE, key)
    mine = tmp_path / "shreds" / "news_en" / "3" / "tide"
    mine.mkdir(parents=True)
    shutil.copy(sample / COMPOSITE_FILE, mine / COMPOSITE_FILE)
    for k, piece in enumerate(sorted((sample / "pieces").glob("*.png")), start=1):
        shutil.copy(piece, mine / f"piece_{k}.png")
    (mine / "truth.md").write_text(TIDE)
    imported = write_spec(tmp_path, "name: imported\nshred:\n  samples: {folder: shreds}\n" + READERS, "imported.yaml")
    snakemake(tmp_path, imported, "results/leaderboard.csv")
    after = {r["model"]: r for r in rows(tmp_path / "results" / "leaderboard.csv")}

    assert set(after) == set(before) == {"ocr-islands", "ocr-composite"}
    for model in before:  # the same images read the same, and the truth is the same text
        assert float(after[model]["ned"]) == float(before[model]["ned"]) < 1.0, model
        assert after[model]["bleu"] == before[model]["bleu"], model
