import numpy as np
import pytest

from shredfold.origami.fold_format import FoldFormatError
from shredfold.origami.pattern import CreasePattern

BORDER = [((0, 0), (1, 0)), ((1, 0), (1, 1)), ((1, 1), (0, 1)), ((0, 1), (0, 0))]


def square_with(*creases):
    segs = [*BORDER, *[c[:2] for c in creases]]
    letters = ["B"] * 4 + [c[2] for c in creases]
    return CreasePattern.from_segments(np.array(segs, float), letters)


def test_crossing_diagonals_split_into_four_faces():
    cp = square_with(((0, 0), (1, 1), "M"), ((1, 0), (0, 1), "M"))
    assert cp.n_faces == 4
    assert len(cp.vertices) == 5
    assert len(cp.edges) == 8
    assert np.isclose(cp.sheet.area, 1.0)


def test_duplicate_and_overlapping_collinear_creases_merge():
    cp = square_with(((0, 0.5), (0.7, 0.5), "V"), ((0.3, 0.5), (1, 0.5), "V"), ((0, 0.5), (1, 0.5), "V"))
    assert cp.n_faces == 2
    assert set(cp.assignments[cp.assignments != "B"]) == {"V"}


def test_points_a_float_error_apart_are_one_vertex():
    cp = square_with(((0.5, 0), (0.5 + 1e-13, 1), "V"))
    assert cp.n_faces == 2
    assert len(cp.vertices) == 6


def test_tiny_but_real_features_are_kept():
    # 1e-4 apart on a unit sheet is a feature, not noise
    cp = square_with(((0.5, 0), (0.5, 1), "V"), ((0.5001, 0), (0.5001, 1), "M"))
    assert cp.n_faces == 3


def test_crease_touching_the_outline_splits_it():
    cp = square_with(((0.25, 0), (0.25, 1), "V"))
    boundary = cp.edges[cp.assignments == "B"]
    assert len(boundary) == 6  # bottom and top edges are split at x = 0.25


def test_faces_are_counter_clockwise_and_edges_know_their_faces():
    cp = square_with(((0, 0), (1, 1), "V"))
    for loop in cp.faces:
        p = cp.vertices[loop]
        assert np.cross(p[1] - p[0], p[2] - p[1]) > 0
    diagonal = np.flatnonzero(cp.assignments == "V")[0]
    assert sorted(cp.edges_faces[diagonal]) == [0, 1]


def test_two_separate_sheets_are_rejected():
    segs = np.array([*BORDER, *[((a[0] + 3, a[1]), (b[0] + 3, b[1])) for a, b in BORDER]], float)
    with pytest.raises(FoldFormatError, match="connected"):
        CreasePattern.from_segments(segs, ["B"] * 8)


def test_non_finite_segment_is_rejected():
    segs = np.array([*BORDER, ((0, 0), (np.nan, 1))], float)
    with pytest.raises(FoldFormatError) as err:
        CreasePattern.from_segments(segs, ["B"] * 4 + ["V"])
    assert err.value.index == 4


def test_fold_round_trip_preserves_numbering():
    cp = square_with(((0, 0), (1, 1), "V"))
    again = CreasePattern.from_fold(cp.to_fold_frame())
    assert np.array_equal(again.vertices, cp.vertices)
    assert np.array_equal(again.edges, cp.edges)
    assert list(again.assignments) == list(cp.assignments)
