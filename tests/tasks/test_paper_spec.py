"""``specs/paper.yaml``'s OrigamiBench is the paper's data set: Flat-Folder's designs as
fetched, the three tasks. Unfetched, its plan stops with the one line that says what to run;
fetched (here a few of the shared designs, offline), it plans without solving a design: what
the engine would decide about each ships with the package."""

from __future__ import annotations

from pathlib import Path

import pytest

from shredfold.cli import main
from shredfold.origami_bench import crease_order, designs, known, simple_folds
from shredfold.origami_bench import flat_folder as ff
from shredfold.origami_bench.design import Design
from shredfold.origami_bench.fetch import fetch
from shredfold.plan import make_plan
from shredfold.resolve import load_spec
from shredfold.store import Store
from tests.origami_bench.archives import SMALL, design_members, write_archive

PAPER = Path(__file__).resolve().parents[2] / "specs" / "paper.yaml"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(ff.CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_the_paper_spec_names_the_papers_designs_and_tasks() -> None:
    ob = load_spec(PAPER).spec.origami
    assert ob is not None
    assert ob.designs.flat_folder and not ob.designs.builtin and ob.designs.procedural == 0
    assert ob.designs.folder is None
    assert set(ob.tasks) == {"mcq_assoc", "mcq_causal", "fullstep"}


def test_unfetched_the_paper_spec_stops_with_the_line_that_says_what_to_run(
    cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plan", str(PAPER), "--results", str(tmp_path / "results")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "run `shredfold designs fetch`" in err and str(cache) in err
    assert not (tmp_path / "results").exists()


def test_fetched_the_paper_spec_plans_every_design_without_solving_one(
    shared_dir: Path, cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = write_archive(tmp_path / "ff.tar.gz", design_members(shared_dir / "flat-folder" / "instagram", SMALL))
    assert fetch(url, allow_partial=True).present == len(SMALL)

    def no_engine(*args: object, **kwargs: object) -> None:
        raise AssertionError("the plan solved a design")

    monkeypatch.setattr(crease_order, "find_crease_order", no_engine)
    monkeypatch.setattr(designs, "flat_fold_problem", no_engine)
    monkeypatch.setattr(simple_folds, "find_simple_folds", no_engine)
    plan = make_plan(load_spec(PAPER), Store(tmp_path / "store"), write=True)
    full = [s for s in plan.item_sets.values() if s.task == "origami_fullstep"]
    assert all(s.asked and not s.needs for s in full)  # known designs need no validation job
    targets = [t.design for s in full for t in s.items]
    assert len(targets) == len(SMALL) and {d.source for d in targets} == {"flat_folder"}
    assert {s.labels["tier"] for s in full} == {"easy", "medium", "hard"}
    mcq = [i for s in plan.item_sets.values() if s.task == "origami_mcq" for i in s.items]
    assert {i.variant for i in mcq} == {"mcq_assoc", "mcq_causal"}
    # items come from the designs whose crease order or simple folds ship (none is searched here)
    def ships_steps(d: Design) -> bool:
        fact = known.of(d)
        return simple_folds.with_simple_folds(d).sequence is not None or bool(fact and fact.crease_order and fact.crease_order.steps)

    with_steps = {d.id for d in targets if ships_steps(d)}
    assert {"flat_folder/009_ku_Unassigned_Triangle_Pleat", "flat_folder/067_traditionaloripa_damashi_bune"} <= with_steps
    assert {i.design.id for i in mcq} == with_steps
    models = {c.model.id for c in plan.cells if c.task.startswith("origami")}
    assert {"origami-oracle", "origami-random", "origami-search"} <= models
    # planned again from the store: the same keys
    again = make_plan(load_spec(PAPER), Store(tmp_path / "store"))
    assert again.item_sets.keys() == plan.item_sets.keys()
    assert [(c.query_key, c.score_key) for c in again.cells] == [(c.query_key, c.score_key) for c in plan.cells]
