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


def test_skip_leaves_the_unusable_designs_out(tmp_path: Path, folder: Path) -> None:
    plan = make_plan(load_spec(spec(tmp_path, f"{{builtin: false, procedural: 0, folder: {folder}, on_invalid: skip}}")))
    targets = [i.design.id for s in plan.item_sets.values() for i in s.items]
    assert targets == ["folder/good"]


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
