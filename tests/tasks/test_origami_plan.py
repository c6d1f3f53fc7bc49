"""OrigamiBench design problems surface at plan time, all of them in one message."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from shredfold.plan import make_plan
from shredfold.resolve import load_spec
from shredfold.spec import SpecError

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


def test_every_unusable_design_file_is_named_with_its_cause(tmp_path: Path, folder: Path) -> None:
    with pytest.raises(SpecError) as info:
        make_plan(load_spec(spec(tmp_path, f"{{builtin: false, procedural: 0, folder: {folder}}}")))
    msg = str(info.value)
    assert "2 design file(s) cannot be used" in msg
    assert f"{folder / 'broken.fold'}: " in msg and "JSON" in msg
    assert f"{folder / 'all-mountain.fold'}: does not fold flat" in msg
    assert "good.fold" not in msg


def test_skip_leaves_the_unusable_designs_out_and_names_them_on_screen_and_in_the_leaderboard(
    tmp_path: Path, folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from shredfold.aggregate import Grid, write_tables
    from shredfold.cli import main
    from shredfold.stages.build import run_set
    from shredfold.stages.query import run_query
    from shredfold.stages.score import run_score
    from shredfold.store import Store

    path = spec(tmp_path, f"{{builtin: false, procedural: 0, folder: {folder}, on_invalid: skip}}")
    path.write_text(path.read_text().replace("  mcq_items: 4\n", "  mcq_items: 4\n  step_limit: 1\n  image_size: 64\n"))
    plan = make_plan(load_spec(path))
    targets = [i.design.id for s in plan.item_sets.values() for i in s.items]
    assert targets == ["folder/good"]
    (note,) = plan.notes["origami"]
    assert note.startswith("origami.designs: 2 design file(s) skipped (on_invalid: skip): ")
    assert "all-mountain.fold: does not fold flat" in note and "broken.fold: " in note and str(tmp_path) not in note
    assert main(["plan", str(path)]) == 0
    assert f"note: {note}" in capsys.readouterr().out.splitlines()

    monkeypatch.chdir(tmp_path)  # the jobs, in-process, then the leaderboard
    store = Store(tmp_path / "results" / "store")
    for key, s in plan.item_sets.items():
        run_set(plan, key, s.path, store)
    for c in plan.cells:
        run_query(plan, c.query_key, c.query_where, c.query_path, store)
        run_score(plan, c.score_key, c.score_where, c.query_path, c.score_path, store)
    write_tables([c.score_path for c in plan.cells], Grid.of(plan), "leaderboard.csv", ["breakdown_origami.csv"])
    import csv

    (row,) = csv.DictReader(Path("leaderboard.csv").read_text().splitlines())
    assert row["model"] == "origami-random" and row["notes"] == note


def test_no_usable_design_is_an_error_even_when_skipping(tmp_path: Path, folder: Path) -> None:
    (folder / "good.fold").unlink()
    with pytest.raises(SpecError) as info:
        make_plan(load_spec(spec(tmp_path, f"{{builtin: false, procedural: 0, folder: {folder}, on_invalid: skip}}")))
    msg = str(info.value)
    assert "spec.yaml:3: origami.designs: no usable design: every one of 2 design file(s) cannot be used" in msg
    assert "broken.fold" in msg and "all-mountain.fold" in msg
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SpecError, match="no usable design"):
        make_plan(load_spec(spec(tmp_path, f"{{builtin: false, procedural: 0, folder: {empty}}}")))


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
    with pytest.raises(SpecError) as info:
        make_plan(load_spec(spec(tmp_path, f"{{builtin: false, procedural: 0, folder: {f}, validate_timeout_s: 20}}")))
    named = [line for line in str(info.value).splitlines()[1:] if line.strip()]
    assert len(named) == len(list(f.glob("*.fold")))
