"""The MCQ task keeps only items a model can answer from their pictures: a dropped item is
stored with its reason, never asked and never scored; a causal item's request names its step."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from shredfold.models.envelope import load_envelope
from shredfold.origami_bench import mcq
from shredfold.origami_bench.items import MCQ_STAGE
from shredfold.origami_bench.prompts import mcq_step
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


def test_a_causal_request_names_the_items_step_and_the_picker_answers_from_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "spec.yaml").write_text(SPEC.replace("[origami-random]", "[origami-search]"))
    plan = make_plan(load_spec(tmp_path / "spec.yaml"))
    store = Store(tmp_path / "results" / "store")
    (cell,) = [c for c in plan.cells if c.task == "origami_mcq"]
    steps = {}
    for key, s in plan.item_sets.items():
        if s.task == "origami_mcq":
            run_set(plan, key, s.path, store)
            metas = [(k, store.get_json(MCQ_STAGE, k, "item.json")) for k in s.item_keys]
            steps.update({k: meta["step"] for k, meta in metas if "dropped" not in meta})
    # the built-in designs have fold sequences and crease orders: both kinds of step
    assert {st["kind"] for st in steps.values()} == {"fold", "crease"}
    run_query(plan, cell.query_key, cell.query_where, cell.query_path, store)
    assert run_score(plan, cell.score_key, cell.score_where, cell.query_path, cell.score_path, store) == len(steps)
    rows = duckdb.connect().execute(f"SELECT item, correct, response FROM read_parquet('{cell.score_path}')").fetchall()
    assert len(rows) == len(steps)
    for item, correct, rkey in rows:
        asked = "\n".join(str(m["text"]) for m in load_envelope(store, rkey)["request"]["messages"])
        named, stored = mcq_step(asked), steps[item]
        assert named is not None and named["kind"] == stored["kind"]
        if stored["kind"] == "fold":
            assert named["assignment"] == stored["assignment"]
            assert named["start"] + named["end"] == pytest.approx(stored["start"] + stored["end"], abs=5e-5)
            assert correct == 1.0  # the picker folds the reference along the named line
        else:
            assert named["creases"] == stored["creases"]  # the built-in lines need no rounding
