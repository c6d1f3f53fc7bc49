"""GS: silhouette IoU after the best of the square's 8 symmetries and a translation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from shredfold.metrics.shape import aligned_iou, iou, symmetries

SIZE = 48


def _place(cells: np.ndarray, dy: int, dx: int, scale: int = 2) -> np.ndarray:
    """A SIZE x SIZE mask with the cell pattern, scaled, at offset (dy, dx) from centre."""
    shape = np.kron(cells, np.ones((scale, scale), bool))
    out = np.zeros((SIZE, SIZE), bool)
    y0, x0 = (SIZE - shape.shape[0]) // 2 + dy, (SIZE - shape.shape[1]) // 2 + dx
    out[y0 : y0 + shape.shape[0], x0 : x0 + shape.shape[1]] = shape
    return out


def _best_over_rotations(pred: np.ndarray, target: np.ndarray) -> float:
    """aligned_iou restricted to the 4 rotations (no mirror), by brute-force translation."""
    best = 0.0
    for k in range(4):
        r = np.rot90(pred, k)
        for dy in range(-SIZE // 2, SIZE // 2):
            for dx in range(-SIZE // 2, SIZE // 2):
                best = max(best, iou(np.roll(np.roll(r, dy, 0), dx, 1), target))
    return best


L_CELLS = np.array([[1, 0], [1, 0], [1, 1]], bool)


def test_a_mirrored_l_scores_one() -> None:
    target = _place(L_CELLS, 0, 0)
    mirrored = _place(L_CELLS[:, ::-1], 5, -7)
    assert aligned_iou(mirrored, target) == 1.0
    # Rotations alone cannot bring a mirrored L back: it is chiral.
    assert _best_over_rotations(mirrored, target) < 0.75


cells = st.lists(st.lists(st.booleans(), min_size=5, max_size=5), min_size=5, max_size=5).map(
    lambda rows: np.array(rows, bool)
)


def _chiral(c: np.ndarray) -> bool:
    """No rotation of the pattern equals its mirror image (up to translation)."""
    def trimmed(m: np.ndarray) -> np.ndarray:
        ys, xs = np.nonzero(m)
        return m[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]

    mirror = trimmed(c[:, ::-1])
    return not any(
        np.array_equal(trimmed(np.rot90(c, k)), mirror) for k in range(4)
    )


@settings(max_examples=60, deadline=None)
@given(
    c=cells,
    turns=st.integers(0, 3),
    mirror=st.booleans(),
    dy=st.integers(-8, 8),
    dx=st.integers(-8, 8),
)
def test_gs_is_invariant_under_the_8_symmetries_and_translations(c, turns, mirror, dy, dx) -> None:
    assume(c.any() and _chiral(c))
    target = _place(c, 0, 0)
    # The symmetry is built here, not taken from the module under test.
    image = np.rot90(c[:, ::-1] if mirror else c, turns)
    moved = _place(image, dy, dx)
    assert aligned_iou(moved, target) == 1.0
    assert aligned_iou(target, moved) == 1.0


def test_the_8_symmetries_are_distinct_for_a_chiral_shape() -> None:
    images = symmetries(_place(L_CELLS, 0, 0))
    assert len(images) == 8
    assert len({m.tobytes() for m in images}) == 8


def test_different_shapes_score_their_best_overlap() -> None:
    # A 2x2 square of cells (16 px) against a 2x1 bar (8 px) at any place: the bar fits
    # inside the square, centroids aligned: IoU = 8 / 16.
    square = _place(np.ones((2, 2), bool), 3, 3)
    bar = _place(np.ones((2, 1), bool), -4, 6)
    assert aligned_iou(bar, square) == pytest.approx(0.5)


def test_empty_masks_and_bad_shapes() -> None:
    empty = np.zeros((SIZE, SIZE), bool)
    some = _place(L_CELLS, 0, 0)
    assert aligned_iou(empty, empty) == 1.0
    assert aligned_iou(empty, some) == 0.0 and aligned_iou(some, empty) == 0.0
    with pytest.raises(ValueError, match="square"):
        aligned_iou(np.zeros((4, 5), bool), np.zeros((4, 5), bool))
    with pytest.raises(ValueError):
        aligned_iou(np.zeros((4, 4), bool), np.zeros((5, 5), bool))
