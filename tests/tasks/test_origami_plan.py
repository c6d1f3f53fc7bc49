"""OrigamiBench design problems: files that do not read surface at plan time, all of them in
one message; whether a folder's design folds flat is decided by a validation set job per
design (built before the target sets that need it), which drops the design's targets or,
with ``on_invalid: stop``, stops the run naming it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from shredfold.plan import Plan, make_plan
from shredfold.resolve import load_spec
from shredfold.spec import SpecError
from shredfold.stages.build import run_set
from shredfold.store import Store
from shredfold.tasks.origami_fullstep import target_dropped

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "flat-folder"
BUILTIN = Path(__file__).resolve().parents[2] / "src" / "shredfold" / "origami_bench" / "builtin"


def spec(tmp_path: Path, designs: str, tasks: str = "[fullstep]") -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(f"name: o\norigami:\n  designs: {designs}\n  tasks: {tasks}\n  mcq_items: 4\nmodels: [origami-random]\n")
    return path


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    f = tmp_path / "designs"
    f.mkdir()
    shutil.copy(BUILTIN / "waterbomb-base.fold", f / "good.fold")
    (f / "broken.fold").write_text('{"file_spec": 1.1, "vertices_coords": [[0, 0]')
    not_flat = json.loads((BUILTIN / "waterbomb-base.fold").read_text())
    not_flat["edges_assignment"] = ["M" if a == "V" else a for a in not_flat["edges_assignment"]]
    (f / "all-mountain.fold").write_text(json.dumps(not_flat))
    return f


def build(plan: Plan, store: Store, tmp_path: Path, asked: bool) -> None:
    """Run the set jobs (validations first, as Snakemake orders them by their needs)."""
    for s in plan.item_sets.values():
        if s.asked == asked:
            run_set(plan, s.key, str(tmp_path / "sets" / f"{s.key}.json"), store)


def test_every_file_that_does_not_read_is_named_with_its_cause_at_plan_time(tmp_path: Path, folder: Path) -> None:
    with pytest.raises(SpecError) as info:
        make_plan(load_spec(spec(tmp_path, f"{{builtin: false, procedural: 0, folder: {folder}}}")))
    msg = str(info.value)
    assert "1 design file(s) cannot be used" in msg
    assert f"{folder / 'broken.fold'}: " in msg and "JSON" in msg
    assert "good.fold" not in msg and "all-mountain" not in msg  # they read; folding is a job's


def test_each_folder_design_is_validated_by_its_own_job_before_the_targets(tmp_path: Path, folder: Path) -> None:
    (folder / "broken.fold").unlink()
    plan = make_plan(load_spec(spec(tmp_path, f"{{builtin: false, procedural: 0, folder: {folder}}}")))
    checks = [s for s in plan.item_sets.values() if not s.asked]
    targets = [s for s in plan.item_sets.values() if s.asked]
    assert sorted(s.items[0].design.id for s in checks) == ["folder/all-mountain", "folder/good"]
    assert all(s.labels["task"] == "validate" and len(s.items) == 1 for s in checks)
    assert plan.cells and all(c.item_set.asked for c in plan.cells)  # no model is asked to validate
    assert {k for s in targets for k in s.needs} == {s.key for s in checks}
    store = Store(tmp_path / "store")
    with pytest.raises(SpecError) as info:  # on_invalid: stop: the job names the design
        build(plan, store, tmp_path, asked=False)
    assert f"{folder / 'all-mountain.fold'}: does not fold flat" in str(info.value)
    assert "on_invalid: skip" in str(info.value)


def test_skip_drops_the_targets_of_designs_that_do_not_fold_flat(tmp_path: Path, folder: Path) -> None:
    (folder / "broken.fold").unlink()
    path = spec(tmp_path, f"{{builtin: false, procedural: 0, folder: {folder}, on_invalid: skip}}")
    plan = make_plan(load_spec(path))
    store = Store(tmp_path / "store")
    build(plan, store, tmp_path, asked=False)
    build(plan, store, tmp_path, asked=True)
    kept = {i.design.id: target_dropped(store, i.key) for s in plan.item_sets.values() if s.asked for i in s.items}
    assert kept["folder/good"] is None
    assert kept["folder/all-mountain"] is not None and kept["folder/all-mountain"].startswith("does not fold flat")
    # the keys never waited for the verdicts: the same spec plans the same keys again
    assert make_plan(load_spec(path)).item_sets.keys() == plan.item_sets.keys()


def test_too_few_designs_for_multiple_choice_fail_at_plan_time(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="mcq_assoc needs at least three folded states"):
        make_plan(load_spec(spec(tmp_path, "{builtin: false, procedural: 1, procedural_folds: [2, 2]}", "[mcq_assoc]")))
    lines = tmp_path / "lines"  # one crease line and no fold sequence: nothing to ask about
    lines.mkdir()
    book = json.loads((BUILTIN / "book-fold.fold").read_text())
    del book["shredfold:fold_sequence"]
    (lines / "book.fold").write_text(json.dumps(book))
    with pytest.raises(SpecError, match="mcq_causal: no design has a fold sequence or a crease order"):
        make_plan(load_spec(spec(tmp_path, f"{{builtin: false, procedural: 0, folder: {lines}}}", "[mcq_causal]")))


def test_crease_patterns_without_a_sequence_are_asked_about_through_their_crease_order(tmp_path: Path) -> None:
    bases = tmp_path / "bases"  # crease patterns only, each creased in two flat steps
    bases.mkdir()
    for name in ("waterbomb-base.fold", "preliminary-base.fold"):
        shutil.copy(BUILTIN / name, bases / name)
    plan = make_plan(load_spec(spec(tmp_path, f"{{builtin: false, procedural: 0, folder: {bases}}}", "[mcq_causal]")))
    items = [i for s in plan.item_sets.values() for i in s.items]
    assert len(items) == 4 and {i.design.id for i in items} == {"folder/waterbomb-base", "folder/preliminary-base"}
    assert {i.k for i in items} <= {0, 1}  # two steps each


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/flat-folder is absent")
def test_flat_folders_unsatisfiable_patterns_are_rejected(tmp_path: Path) -> None:
    f = tmp_path / "unsat"
    shutil.copytree(SHARED / "unsatisfiable", f)
    plan = make_plan(load_spec(spec(tmp_path, f"{{builtin: false, procedural: 0, folder: {f}, validate_timeout_s: 20, on_invalid: skip}}")))
    store = Store(tmp_path / "store")
    build(plan, store, tmp_path, asked=False)
    build(plan, store, tmp_path, asked=True)
    dropped = [target_dropped(store, i.key) for s in plan.item_sets.values() if s.asked for i in s.items]
    assert len(dropped) == len(list(f.glob("*.fold"))) and all(dropped)
