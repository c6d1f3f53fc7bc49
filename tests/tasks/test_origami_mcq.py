"""The MCQ task keeps only items a model can answer from their pictures: a dropped item is
stored with its reason, never asked and never scored."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from shredfold.origami_bench import mcq
from shredfold.origami_bench.items import MCQ_STAGE
from shredfold.plan import make_plan
from shredfold.resolve import load_spec
from shredfold.stages.build import run_set
from shredfold.stages.query import run_query
from shredfold.stages.score import run_score
from shredfold.store import Store

SPEC = """
name: tiny-mcq
seed: 0
shred:
  domains: [news_en]
  granularities: [1]
  documents_per_domain: 1
origami:
  designs: {builtin: true, procedural: 0}
  tasks: [mcq_causal]
  mcq_items: 4
models: [origami-random]
"""


def test_items_whose_pictures_cannot_be_told_apart_are_dropped_not_scored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    # a gate no fold can pass: every answer "looks like" its reference
    monkeypatch.setattr(mcq, "MIN_DIFFERENT_SHARE", 1.1)
    (tmp_path / "spec.yaml").write_text(SPEC)
    plan = make_plan(load_spec(tmp_path / "spec.yaml"))
    store = Store(tmp_path / "results" / "store")
    sets = [(k, s) for k, s in plan.item_sets.items() if s.task == "origami_mcq"]
    assert sets
    for key, s in sets:
        run_set(plan, key, s.path, store)
        for ikey in s.item_keys:
            meta = store.get_json(MCQ_STAGE, ikey, "item.json")
            assert "differs from the reference" in meta["dropped"]
    (cell,) = [c for c in plan.cells if c.task == "origami_mcq"]
    counts = run_query(plan, cell.query_key, cell.query_where, cell.query_path, store)
    assert counts == {"called": 0, "cached": 0, "errors": 0, "requests": 0}
    assert run_score(plan, cell.score_key, cell.score_where, cell.query_path, cell.score_path, store) == 0
    assert duckdb.connect().execute(f"SELECT count(*) FROM read_parquet('{cell.score_path}')").fetchone() == (0,)
