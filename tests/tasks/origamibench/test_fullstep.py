"""The full-step score of a real episode, turn by turn: QE counts the actions, not the turn
that says stop; invalid answers are actions that failed."""

from __future__ import annotations

from pathlib import Path

import pytest

from shredfold.calls import Request, Response
from shredfold.plan import make_plan
from shredfold.resolve import load_spec
from shredfold.stages.build import run_set
from shredfold.stages.query import run_query
from shredfold.stages.score import run_score
from shredfold.store import Store

BOOK = '{"start": [0.5, 0], "end": [0.5, 1], "assignment": "V"}'
# an answer that is not JSON, a valid fold, the same fold again (rejected: the sheet is
# already folded there), then stop
SCRIPT = ["garbage", BOOK, BOOK, '{"stop": true}']


class Scripted:
    """A model that answers every episode's turns from the script, in order."""

    def __init__(self, config) -> None:  # type: ignore[no-untyped-def]
        self.config = config
        self.turn = 0

    def identity(self) -> dict[str, str]:
        return {"adapter": "scripted"}

    def complete(self, request: Request) -> Response:
        text = SCRIPT[self.turn % len(SCRIPT)]
        self.turn += 1
        return Response(text=text)


@pytest.fixture
def scored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    import duckdb

    monkeypatch.chdir(tmp_path)
    (tmp_path / "spec.yaml").write_text(
        "name: qe\norigami:\n  designs: {builtin: false, procedural: 1, procedural_folds: [2, 2]}\n"
        "  tasks: [fullstep]\n  step_limit: 6\n  image_size: 64\nmodels: [origami-random]\n"
    )
    plan = make_plan(load_spec(tmp_path / "spec.yaml"))
    store = Store(tmp_path / "results" / "store")
    (cell,) = plan.cells
    run_set(plan, cell.item_set.key, cell.item_set.path, store)
    run_query(plan, cell.query_key, cell.query_where, cell.query_path, store, model=Scripted(cell.model))
    run_score(plan, cell.score_key, cell.score_where, cell.query_path, cell.score_path, store)
    return duckdb.sql(f"SELECT * FROM read_parquet('{cell.score_path}')").df().to_dict("records")


def test_qe_is_over_the_actions_and_the_stop_turn_is_not_one(scored: list[dict]) -> None:
    (row,) = scored
    assert row["error"] is None and row["stopped"]
    assert row["turns"] == 4 and row["steps"] == 3  # the stop turn is a turn, not a step
    assert row["invalid"] == 2
    # one action of the three changed the outline (the fold); 1/4 would count the stop turn
    assert row["qe"] == pytest.approx(1 / 3)
