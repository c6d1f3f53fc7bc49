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
from shredfold.tasks.origamibench.fullstep import target_dropped

SHARED = Path(__file__).resolve().parents[3].parent / "shared" / "flat-folder"
BUILTIN = Path(__file__).resolve().parents[3] / "src" / "shredfold" / "origami_bench" / "builtin"


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


def run_all(plan: Plan, tmp_path: Path) -> Store:
    """Every job of the plan in-process, as Snakemake orders them (validations, targets,
    then each cell's query and score), in ``tmp_path`` as the working directory."""
    from shredfold.stages.query import run_query
    from shredfold.stages.score import run_score

    store = Store(tmp_path / "results" / "store")
    for asked in (False, True):
        for key, s in plan.item_sets.items():
            if s.asked == asked:
                run_set(plan, key, s.path, store)
    for c in plan.cells:
        run_query(plan, c.query_key, c.query_where, c.query_path, store)
        run_score(plan, c.score_key, c.score_where, c.query_path, c.score_path, store)
    return store


def aggregate(plan: Plan, tmp_path: Path) -> int:
    """The aggregate job as Snakemake runs it (the plan file, the cell tables)."""
    from shredfold.cli import main
    from shredfold.plan import write_plan

    rel = write_plan(plan, tmp_path)
    return main(["job", "aggregate", "--plan", rel, "--results", "results", "--tables", *plan.score_paths,
                 "--out", "leaderboard.csv", "breakdown_origami.csv", "--pairwise", "pairwise.csv"])  # fmt: skip


def test_skip_leaves_the_unusable_designs_out_and_names_them_on_screen_and_in_the_leaderboard(
    tmp_path: Path, folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import csv

    from shredfold.cli import main

    path = spec(tmp_path, f"{{builtin: false, procedural: 0, folder: {folder}, on_invalid: skip}}")
    path.write_text(path.read_text().replace("  mcq_items: 4\n", "  mcq_items: 4\n  step_limit: 1\n  image_size: 64\n"))
    monkeypatch.chdir(tmp_path)  # the working directory of `shredfold plan` and of the jobs
    plan = make_plan(load_spec(path))
    # the file that does not read is known to the plan: left out there, named on screen
    targets = sorted(i.design.id for s in plan.item_sets.values() if s.asked for i in s.items)
    assert targets == ["folder/all-mountain", "folder/good"]
    (note,) = plan.notes["origami"]
    assert note.startswith("origami.designs: 1 design file(s) skipped (on_invalid: skip): broken.fold: ")
    assert str(tmp_path) not in note
    assert main(["plan", str(path)]) == 0
    assert f"note: {note}" in capsys.readouterr().out.splitlines()

    # the design that does not fold flat is known once its validation job ran: its target is
    # dropped, and the aggregate names it on screen and in the leaderboard's notes
    run_all(plan, tmp_path)
    assert aggregate(plan, tmp_path) == 0
    dropped = "origami.designs: 1 design(s) left out by their validation jobs (on_invalid: skip): all-mountain.fold: does not fold flat ("
    screen = capsys.readouterr().err.splitlines()
    assert f"note: {note}" in screen and any(line.startswith(f"note: {dropped}") for line in screen)
    (row,) = csv.DictReader(Path("leaderboard.csv").read_text().splitlines())
    assert row["model"] == "origami-random"
    first, second = row["notes"].split("; origami.designs: 1 design(s) left out")
    assert first == note and f"origami.designs: 1 design(s) left out{second}".startswith(dropped)
    assert str(tmp_path) not in row["notes"]
    (board,) = [r for r in csv.DictReader(Path("breakdown_origami.csv").read_text().splitlines())]
    assert board["items"] == "1"  # the one target left: good.fold


def test_no_usable_design_is_an_error_even_when_skipping(
    tmp_path: Path, folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # at plan time: every file fails to read, or there are none
    empty = tmp_path / "empty"
    empty.mkdir()
    shutil.copy(folder / "broken.fold", empty / "broken.fold")
    with pytest.raises(SpecError) as info:
        make_plan(load_spec(spec(tmp_path, f"{{builtin: false, procedural: 0, folder: {empty}, on_invalid: skip}}")))
    msg = str(info.value)
    assert "spec.yaml:3: origami.designs: no usable design: every one of 1 design file(s) cannot be used" in msg
    assert "broken.fold" in msg
    (empty / "broken.fold").unlink()
    with pytest.raises(SpecError, match="no usable design"):
        make_plan(load_spec(spec(tmp_path, f"{{builtin: false, procedural: 0, folder: {empty}}}")))

    # after the validation jobs: every design that reads does not fold flat
    (folder / "good.fold").unlink()
    path = spec(tmp_path, f"{{builtin: false, procedural: 0, folder: {folder}, on_invalid: skip}}")
    path.write_text(path.read_text().replace("  mcq_items: 4\n", "  mcq_items: 4\n  step_limit: 1\n  image_size: 64\n"))
    plan = make_plan(load_spec(path))
    monkeypatch.chdir(tmp_path)
    run_all(plan, tmp_path)
    capsys.readouterr()
    assert aggregate(plan, tmp_path) == 2
    err = capsys.readouterr().err
    (line,) = [x for x in err.splitlines() if x.startswith("error: ")]
    assert "spec.yaml:3: origami.designs: no usable design: every one of 1 target design(s) was left out" in line
    assert "all-mountain.fold: does not fold flat" in line and "broken.fold: " in line  # both, named
    assert "Traceback" not in err and not Path("leaderboard.csv").exists()


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
