"""OrigamiBench through plan → set → run → score → leaderboard, in-process on a tiny spec."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import duckdb
import pytest

from shredfold.aggregate import Grid, write_tables
from shredfold.plan import make_plan
from shredfold.resolve import load_spec
from shredfold.stages.build import run_set
from shredfold.stages.query import run_query
from shredfold.stages.score import run_score
from shredfold.store import Store
from shredfold.tasks.registry import get as get_task

SPEC = """
name: tiny-origami
seed: 0
shred:
  domains: [news_en]
  granularities: [1]
  documents_per_domain: 1
origami:
  designs: {builtin: true, procedural: 3, procedural_folds: [2, 3]}
  mcq_items: 16
  step_limit: 4
  fullstep_targets: 8
models: [oracle, origami-oracle, origami-random, origami-search]
"""


@pytest.fixture
def tiny(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "spec.yaml").write_text(SPEC)
    return make_plan(load_spec(tmp_path / "spec.yaml"))


def test_models_have_cells_only_in_the_benchmarks_they_serve(tiny) -> None:  # type: ignore[no-untyped-def]
    by_bench = {(c.model.id, get_task(c.task).benchmark) for c in tiny.cells}
    assert ("oracle", "shred") in by_bench and ("oracle", "origami") not in by_bench
    assert ("origami-search", "origami") in by_bench and ("origami-search", "shred") not in by_bench
    tasks = {c.labels["task"] for c in tiny.cells if c.task.startswith("origami")}
    assert tasks == {"mcq_assoc", "mcq_causal", "fullstep"}
    assert all(p in tiny.score_paths for p in (c.score_path for c in tiny.cells))


@pytest.mark.slow
def test_origami_cells_to_leaderboard(tiny, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    store = Store(tmp_path / "results" / "store")
    for key, s in tiny.item_sets.items():
        if s.task.startswith("origami"):
            run_set(tiny, key, s.path, store)
    cells = [c for c in tiny.cells if c.task.startswith("origami")]
    for c in cells:
        run_query(tiny, c.query_key, c.query_where, c.query_path, store)
        run_score(tiny, c.score_key, c.score_where, c.query_path, c.score_path, store)
    paths = [c.score_path for c in cells]
    con = duckdb.connect()
    oracle_gs = con.execute(
        f"SELECT min(gs) FROM read_parquet({paths}) WHERE model = 'origami-oracle' "
        "AND task = 'fullstep' AND category = 'procedural'"
    ).fetchone()[0]
    assert oracle_gs == 1.0
    acc = con.execute(
        f"SELECT avg(correct) FROM read_parquet({paths}) WHERE model = 'origami-oracle' AND task LIKE 'mcq%'"
    ).fetchone()[0]
    assert acc == 1.0

    # a second run replays every answer and episode: no model is built, nothing is called
    for c in cells:
        counts = run_query(tiny, c.query_key, c.query_where, c.query_path, store, replay_only=True)
        assert counts["called"] == 0 and counts["errors"] == 0

    write_tables(paths, Grid.of(tiny), "results/leaderboard.csv", ["results/breakdown.csv", "results/breakdown_origami.csv"])
    text = Path("results/leaderboard.csv").read_text().splitlines()
    rows = {r["model"]: r for r in csv.DictReader(text)}
    assert set(rows) == {"origami-oracle", "origami-random", "origami-search"}
    assert rows["origami-oracle"]["origami_mcq_causal"] == "1.0"
    assert rows["origami-random"]["origami_ss"] == ""  # no CLIP weights: empty, not made up
    assert os.path.isfile("results/breakdown_origami.csv")
