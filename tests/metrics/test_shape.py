"""GS: silhouette IoU after the best of the square's 8 symmetries and a translation."""

from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from PIL import Image
from shapely.geometry import MultiPolygon, Polygon, box

from shredfold.metrics.shape import (
    VIEW,
    aligned_iou,
    drawing_bounds,
    iou,
    mask_from_png,
    rasterize,
    symmetries,
)

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


def test_mask_from_png_marks_every_pixel_that_is_not_the_background() -> None:
    img = Image.new("RGB", (4, 3), (255, 255, 255))
    img.putpixel((0, 0), (254, 255, 255))  # off by one in red only
    img.putpixel((3, 2), (255, 255, 0))
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    mask = mask_from_png(buf.getvalue())
    assert mask.shape == (3, 4) and mask.dtype == bool
    assert np.argwhere(mask).tolist() == [[0, 0], [2, 3]]
    grey = mask_from_png(buf.getvalue(), background=(255, 255, 0))
    assert grey.sum() == 11  # everything but the yellow pixel


def test_drawing_bounds_undo_the_drawing_margin() -> None:
    # VIEW is 2 wide; a drawing with a 10 % margin maps it onto the middle 80 % of the
    # image, so the whole image spans 2 / 0.8 = 2.5: 0.25 more on each side.
    assert VIEW == (-0.5, -0.5, 1.5, 1.5)
    assert drawing_bounds(0.1) == pytest.approx((-0.75, -0.75, 1.75, 1.75))
    assert drawing_bounds(0.0) == VIEW


def test_rasterize_draws_polygons_y_up_with_holes() -> None:
    # Over (0, 0)-(4, 4) at 4 px: one pixel per unit. The unit square at the origin is the
    # bottom-left pixel (y up); a ring with a hole leaves the hole empty.
    m = rasterize(box(0, 0, 1, 1), 4, (0.0, 0.0, 4.0, 4.0))
    assert m.sum() >= 1 and m[3, 0] and not m[0, 0] and not m[:, 2:].any()
    ring = Polygon([(0, 0), (4, 0), (4, 4), (0, 4)], [[(1, 1), (3, 1), (3, 3), (1, 3)]])
    r = rasterize(ring, 40, (0.0, 0.0, 4.0, 4.0))
    assert r[2, 2] and r[37, 37] and not r[20, 20]
    assert r.sum() == pytest.approx(0.75 * 1600, rel=0.1)  # 12 of 16 square units
    both = rasterize(MultiPolygon([box(0, 0, 1, 1), box(3, 3, 4, 4)]), 4, (0.0, 0.0, 4.0, 4.0))
    assert both[3, 0] and both[0, 3] and not both[1:3, 1:3].any()
    assert not rasterize(Polygon(), 4, (0.0, 0.0, 4.0, 4.0)).any()


def test_iou_by_hand() -> None:
    a = np.zeros((4, 4), bool)
    b = np.zeros((4, 4), bool)
    a[0, :3] = True  # 3 px
    b[0, 1:] = True  # 3 px, 2 shared, union 4
    assert iou(a, b) == 0.5
    assert iou(np.zeros((2, 2), bool), np.zeros((2, 2), bool)) == 1.0


@pytest.mark.parametrize("dy,dx", [(0, 0), (3, 0), (0, 3), (-2, 0), (0, -2), (5, -4), (-1, 6)])
def test_translations_of_a_shape_off_the_centre_score_one(dy: int, dx: int) -> None:
    target = _place(L_CELLS, -6, 7)
    assert aligned_iou(_place(L_CELLS, -6 + dy, 7 + dx), target) == 1.0
    # A shape moved partly out of the frame loses what fell off.
    cut = np.roll(target, 20, axis=1)
    cut[:, :20] = False
    assert aligned_iou(cut, target) < 1.0


@pytest.mark.parametrize(
    "bounds,shape,rows,cols",
    [
        # x spans 4 units, y 2: one pixel per unit; the 2 x 2 box covers pixel corners
        # 0..2 (PIL fills the outline inclusive): columns 0-2, rows 1-3 (y up).
        ((-1.0, 0.0, 3.0, 2.0), (-1, 0, 1, 2), slice(1, 4), slice(0, 3)),
        # y spans 4 units, x 2: the same box moved, on the other axis.
        ((0.0, -1.0, 2.0, 3.0), (0, -1, 2, 1), slice(2, 4), slice(1, 4)),
    ],
)
def test_rasterize_scales_by_the_longer_side_of_off_origin_bounds(bounds, shape, rows, cols) -> None:
    want = np.zeros((4, 4), bool)
    want[rows, cols] = True
    assert np.array_equal(rasterize(box(*shape), 4, bounds), want)


def test_the_best_symmetry_is_found_even_after_an_orientation_with_no_overlap() -> None:
    # Two pixels on a diagonal against two on the other diagonal, centroids aligned: as
    # given they share nothing (IoU 0), a quarter turn makes them equal.
    pred = np.zeros((SIZE, SIZE), bool)
    target = np.zeros((SIZE, SIZE), bool)
    pred[20, 20] = pred[22, 22] = True
    target[20, 22] = target[22, 20] = True
    assert iou(pred, target) == 0.0
    assert aligned_iou(pred, target) == 1.0
