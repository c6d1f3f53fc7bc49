"""Plan files name design files under named folders (no absolute path), and a job finds
them again under the folders of those names on its own machine."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pydantic import ValidationError

from shredfold.origami_bench.design import ROOTS, DesignRoots, builtin_folder
from shredfold.origami_bench.designs import design_from_file, folder_designs


def test_a_design_file_is_recorded_under_its_folder_and_restored_under_another(tmp_path: Path) -> None:
    mine, moved = tmp_path / "mine", tmp_path / "moved"
    (mine / "bases").mkdir(parents=True)
    shutil.copy(builtin_folder() / "book-fold.fold", mine / "bases" / "book.fold")
    design = design_from_file(mine / "bases" / "book.fold", "folder")
    here = {ROOTS: DesignRoots({"folder": mine, "builtin": builtin_folder()})}
    recorded = design.model_dump(mode="json", context=here)
    assert recorded["origin"] == {"root": "folder", "path": "bases/book.fold", "sha256": design.origin.sha256}
    assert str(tmp_path) not in str(recorded)

    shape = design.pattern().vertices.shape
    shutil.move(mine, moved)  # another machine: the same folder elsewhere
    there = type(design).model_validate(recorded, context={ROOTS: DesignRoots({"folder": moved})})
    assert there.key == design.key and Path(there.origin.path) == moved / "bases" / "book.fold"
    assert there.pattern().vertices.shape == shape  # read there, checked by its SHA-256


def test_a_recorded_path_that_leaves_its_folder_or_names_no_known_folder_is_refused(tmp_path: Path) -> None:
    design = design_from_file(builtin_folder() / "book-fold.fold", "builtin")
    roots = DesignRoots({"folder": tmp_path})
    with pytest.raises(ValueError, match="under none of the design folders"):
        design.model_dump(mode="json", context={ROOTS: roots})
    recorded = design.model_dump(mode="json", context={ROOTS: DesignRoots({"builtin": builtin_folder()})})
    for root, path, why in (("folder", "../../etc/passwd.fold", "outside its folder"),
                            ("folder", "/etc/passwd.fold", "outside its folder"),
                            ("flat_folder", "x.fold", "a folder this spec does not name")):  # fmt: skip
        bad = {**recorded, "origin": {**recorded["origin"], "root": root, "path": path}}
        with pytest.raises(ValidationError, match=why):
            type(design).model_validate(bad, context={ROOTS: roots})
    with pytest.raises(ValidationError, match="without the plan's folders"):
        type(design).model_validate(recorded)


def test_a_link_that_leaves_the_design_folder_is_not_read(tmp_path: Path) -> None:
    folder, outside = tmp_path / "mine", tmp_path / "outside.fold"
    folder.mkdir()
    shutil.copy(builtin_folder() / "book-fold.fold", folder / "book.fold")
    shutil.copy(builtin_folder() / "blintz-base.fold", outside)
    (folder / "away.fold").symlink_to(outside)
    designs, errors = folder_designs(folder, None)
    assert [Path(d.origin.path).name for d in designs] == ["book.fold"]
    assert [str(e) for e in errors] == [f"{folder / 'away.fold'}: a link that leaves the design folder {folder}"]
