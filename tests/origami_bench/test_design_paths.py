"""One pattern, whatever the path: a design as the benchmark reads it (``design_from_file``,
then ``Design.pattern()``, as targets, validation and crease orders use it) is the crease
pattern the engine reads from the file (``read_pattern(text)``, as the
solver's benchmarks do) — the same vertices, edges and assignments, so the same states.

Over the 200 shared designs here; ``bench/design_paths.py`` runs the same check on all 366.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from shredfold.origami import CreasePattern, read_pattern, solve_layers
from shredfold.origami_bench.designs import design_from_file, folder_designs

# designs small enough to count every state twice in a few seconds
CHEAP_VERTICES = 60


def same(a: CreasePattern, b: CreasePattern) -> bool:
    return (
        np.array_equal(a.vertices, b.vertices)
        and np.array_equal(a.edges, b.edges)
        and np.array_equal(a.assignments, b.assignments)
        and a.eps == b.eps
        and len(a.faces) == len(b.faces)
    )


def test_every_shared_design_is_the_engines_pattern_of_its_file(shared_dir: Path) -> None:
    instagram = shared_dir / "flat-folder" / "instagram"
    designs, errors = folder_designs(instagram, None)
    assert not errors and len(designs) == 200
    reference = {r["file"]: r for r in csv.DictReader((shared_dir / "flat-folder" / "reference.csv").open())}
    counted = 0
    for design in designs:
        assert design.origin is not None
        path = Path(design.origin.path)
        engine = read_pattern(path.read_text())
        bench = design.pattern()
        assert same(bench, engine), path.name
        if len(engine.vertices) <= CHEAP_VERTICES:
            ours, theirs = solve_layers(bench, limit=10_000), solve_layers(engine, limit=10_000)
            assert ours.status == theirs.status == "ok", path.name
            assert ours.states == theirs.states == int(reference[path.name]["states"]), path.name
            counted += 1
    assert counted >= 20


def test_360_i_heart_cat_shaped_folds_flat_either_way(shared_dir: Path) -> None:
    # the design whose pattern the old conversion (coordinates rounded to 1e-12) changed into
    # one that does not fold flat
    path = shared_dir / "flat-folder" / "instagram" / "360_fung_I_Heart_Cat_v2_(shaped).fold"
    design = design_from_file(path, "flat_folder")
    result = solve_layers(design.pattern(), limit=10_000)
    assert result.status == "ok" and result.states == 32


def test_a_sheet_off_the_unit_square_is_fitted_and_one_on_it_is_left_as_written(tmp_path: Path) -> None:
    square, big, moved = (
        _sheet([[x * scale + dx, y * scale + dy] for x, y in ((0, 0), (1, 0), (1, 1), (0, 1))])
        for scale, dx, dy in ((1, 0, 0), (400, 0, 0), (1, 0.25, 0.5))
    )
    on_unit = read_pattern(square, fit=True)
    assert same(on_unit, read_pattern(square))
    for text in (big, moved):
        fitted = read_pattern(text, fit=True)
        assert np.allclose(np.sort(fitted.vertices, axis=0), np.sort(on_unit.vertices, axis=0))
        assert not same(read_pattern(text), fitted)  # without fit: as written
    # the same sheet as a .cp file (ORIPA: y down, any scale) reads to the same square
    cp = "1 -200 -200 200 -200\n1 200 -200 200 200\n1 200 200 -200 200\n1 -200 200 -200 -200\n3 -200 200 200 -200\n"
    from_cp = read_pattern(cp, "cp", fit=True)
    assert np.allclose(np.sort(from_cp.vertices, axis=0), np.sort(on_unit.vertices, axis=0))
    assert sorted(from_cp.assignments.tolist()) == sorted(on_unit.assignments.tolist())
    design = design_from_file(_write(tmp_path / "big.fold", big), "folder")
    assert same(design.pattern(), read_pattern(big, fit=True))


def test_a_design_file_changed_after_planning_is_named(tmp_path: Path) -> None:
    from shredfold.origami_bench.design import DesignFileError

    path = _write(tmp_path / "a.fold", _sheet([[0, 0], [1, 0], [1, 1], [0, 1]]))
    design = design_from_file(path, "folder")
    path.write_text(path.read_text() + "\n")
    with pytest.raises(DesignFileError, match=r"a\.fold: the design file changed since it was planned"):
        design.pattern()
    path.unlink()
    with pytest.raises(DesignFileError, match=r"a\.fold: cannot read the design file"):
        design.pattern()


def _sheet(corners: list[list[float]]) -> str:
    """A square sheet with one diagonal valley fold, as FOLD text."""
    edges = [[0, 1], [1, 2], [2, 3], [3, 0], [0, 2]]
    return json.dumps({"vertices_coords": corners, "edges_vertices": edges, "edges_assignment": ["B"] * 4 + ["V"]})


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path
