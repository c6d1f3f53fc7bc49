"""Pictures: classic bases drawn from FOLD crease patterns written in ``bases.py``.

The expected silhouettes in ``expected/`` are committed 64x64 masks. Regenerate them only
on purpose, with ``SHREDFOLD_REGENERATE_SILHOUETTES=1``; the area check below does not
depend on them, so a wrong stored mask cannot hide a wrong engine.
"""

import hashlib
import io
import math
import os
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from shredfold.origami import (
    draw_crease_pattern,
    draw_folded,
    fold_geometry,
    folded_silhouette,
    read_pattern,
    silhouette_mask,
    solve_layers,
)
from shredfold.origami.draw import DEFAULT_STYLE

from .bases import BASES, T

EXPECTED = Path(__file__).parent / "expected"
MASK_SIZE = 64


def _png(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def _folded(name: str):
    cp = read_pattern(BASES[name][0])
    layers = solve_layers(cp)
    assert layers.satisfiable, layers.detail
    return cp, fold_geometry(cp), layers


@pytest.mark.parametrize("name", sorted(BASES))
def test_base_silhouette_matches_the_stored_picture_and_its_known_area(name):
    _, geom, _ = _folded(name)
    expected_area = BASES[name][1]
    # the union is computed on a grid of the pattern's tolerance (1e-7 of the sheet)
    assert folded_silhouette(geom).area == pytest.approx(expected_area, abs=1e-6)

    mask = silhouette_mask(geom, MASK_SIZE, bounds=_square_bounds(geom))
    path = EXPECTED / f"{name}.png"
    if os.environ.get("SHREDFOLD_REGENERATE_SILHOUETTES"):
        path.write_bytes(_png(mask))
    stored = np.asarray(Image.open(path).convert("1"), dtype=bool)
    drawn = np.asarray(mask, dtype=bool)
    # rasterising can differ on a boundary pixel; the shape itself may not
    assert np.mean(stored != drawn) < 0.01
    # the stored picture agrees with the known area of the base (pixels of the frame)
    frame_side = _square_bounds(geom)[2] - _square_bounds(geom)[0]
    area_in_pixels = expected_area / frame_side**2 * MASK_SIZE**2
    assert stored.sum() == pytest.approx(area_in_pixels, rel=0.08)


def _square_bounds(geom) -> tuple[float, float, float, float]:
    """A square frame around the silhouette, so pixels are square in model units."""
    x0, y0, x1, y1 = folded_silhouette(geom).bounds
    side = max(x1 - x0, y1 - y0)
    return (x0, y0, x0 + side, y0 + side)


def test_drawings_are_deterministic_bytes():
    cp, geom, layers = _folded("waterbomb")
    first = [_png(draw_crease_pattern(cp, 128)), _png(draw_folded(geom, layers.face_orders, 128))]
    cp2, geom2, layers2 = _folded("waterbomb")
    again = [_png(draw_crease_pattern(cp2, 128)), _png(draw_folded(geom2, layers2.face_orders, 128))]
    assert first == again
    assert hashlib.sha256(first[0]).hexdigest() != hashlib.sha256(first[1]).hexdigest()


def test_crease_pattern_colours_mountains_and_valleys_apart():
    cp, _, _ = _folded("waterbomb")
    img = np.asarray(draw_crease_pattern(cp, 128))
    colours = {tuple(c) for c in img.reshape(-1, 3).tolist()}
    assert (214, 39, 40) in colours and (31, 119, 180) in colours and (0, 0, 0) in colours


def test_folded_kite_shows_only_its_top_layer_as_opaque_paper():
    # The kite's root face is flap 0 (sheet coordinates, unmoved), so the body is reflected
    # across the crease y = T x and lies on top, seen from its back. Folded, the kite is the
    # quadrilateral (0, 0), (1, -T), (sqrt 2, 0), (1, T): the two flaps (area T/2 each) lie
    # under the body's near half, hidden, so the whole kite shows the back colour.
    _, geom, layers = _folded("kite")
    size = 128
    img = np.asarray(draw_folded(geom, layers.face_orders, size))
    style = DEFAULT_STYLE
    scale = size * (1 - 2 * style.margin) / math.sqrt(2)  # pixels per unit; width sqrt 2
    back = tuple(style.back)

    def pixel(x: float, y: float) -> tuple[int, ...]:
        col = size / 2 + scale * (x - math.sqrt(2) / 2)
        row = size / 2 - scale * y
        return tuple(img[int(row), int(col)].tolist())

    # over the hidden flaps and over the single layer alike: the body's back, one colour
    assert pixel(0.5, 0.1) == back and pixel(0.5, -0.1) == back
    assert pixel(1.2, 0.05) == back and pixel(1.2, -0.05) == back
    assert pixel(0.1, 0.3) == tuple(style.background)  # outside the kite
    colours = img.reshape(-1, 3)
    paper = int((colours == back).all(axis=1).sum())
    edges = int((colours == 0).all(axis=1).sum())
    # the kite's area in pixels, the outline (and the body's flat diagonal) drawn over it
    assert paper + edges == pytest.approx((1 - T) * scale**2, rel=0.03)
    # nothing of the front side shows: the flaps are hidden under the body
    assert not (colours == np.array(style.front)).all(axis=1).any()


# ------------------------------------------------------------ mountain and valley, hand-checked

FRAME = (-0.5, -0.5, 1.5, 1.5)  # the benchmark's fixed view


def _fold_pixels(folds: list[tuple[tuple[float, float], tuple[float, float], str]], size: int = 256):
    """The drawing of the square after ``folds`` and a lookup of the pixel at a point."""
    from shredfold.origami import FoldState, fold, square_sheet

    state = square_sheet()
    for start, end, assignment in folds:
        state = fold(state, start, end, assignment)
        assert isinstance(state, FoldState), state
    img = np.asarray(draw_folded(state.geometry, state.layers.face_orders, size, bounds=FRAME))
    scale = size * (1 - 2 * DEFAULT_STYLE.margin) / 2

    def pixel(x: float, y: float) -> tuple[int, ...]:
        col = size / 2 + scale * (x - 0.5)
        row = size / 2 - scale * (y - 0.5)
        return tuple(img[int(row), int(col)].tolist())

    return img, pixel


FRONT, BACK = tuple(DEFAULT_STYLE.front), tuple(DEFAULT_STYLE.back)
PAPER_EDGE, EMPTY = tuple(DEFAULT_STYLE.boundary), tuple(DEFAULT_STYLE.background)


def test_a_valley_along_the_diagonal_shows_the_back_of_the_flap_in_front():
    # left of (0,0) -> (1,1) is the upper-left triangle; it turns over onto the lower right
    _, pixel = _fold_pixels([((0, 0), (1, 1), "V")])
    assert pixel(0.75, 0.25) == BACK and pixel(0.6, 0.1) == BACK
    assert pixel(0.25, 0.75) == EMPTY  # where the flap was


def test_a_mountain_along_the_diagonal_hides_the_flap_behind():
    img, pixel = _fold_pixels([((0, 0), (1, 1), "M")])
    assert pixel(0.75, 0.25) == FRONT and pixel(0.6, 0.1) == FRONT
    assert pixel(0.25, 0.75) == EMPTY
    colours = {tuple(c) for c in img.reshape(-1, 3).tolist()}
    assert colours == {FRONT, PAPER_EDGE, EMPTY}  # one triangle of front, its outline


def test_a_mountain_flap_shows_only_beyond_the_layers_in_front():
    # the left three quarters turn over onto the right: behind the strip 0.75..1 they are
    # hidden; beyond x = 1 nothing covers them, and they show their back
    _, pixel = _fold_pixels([((0.75, 0), (0.75, 1), "M")])
    assert pixel(0.9, 0.5) == FRONT and pixel(1.2, 0.5) == BACK
    assert pixel(1.0, 0.5) == PAPER_EDGE  # where the strip in front ends
    _, pixel = _fold_pixels([((0.75, 0), (0.75, 1), "V")])
    assert pixel(0.9, 0.5) == BACK and pixel(1.2, 0.5) == BACK
    assert pixel(1.0, 0.5) == BACK  # one flap over all: no edge at x = 1


def test_a_corner_folded_in_front_of_a_book_fold_shows_its_outline_and_behind_does_not():
    # book fold (both outer sides show the back), then the top-left corner along
    # (0.5, 0.75) -> (0.75, 1): it lands on the triangle (0.5, 0.75), (0.75, 1), (0.75, 0.75)
    book = ((0.5, 0), (0.5, 1), "V")
    _, valley = _fold_pixels([book, ((0.5, 0.75), (0.75, 1), "V")])
    _, mountain = _fold_pixels([book, ((0.5, 0.75), (0.75, 1), "M")])
    for pixel in (valley, mountain):
        assert pixel(0.7, 0.8) == BACK and pixel(0.8, 0.4) == BACK  # same side up everywhere
        assert pixel(0.55, 0.95) == EMPTY  # the corner is gone from its place
    # the flap's lower and right edges: drawn when it lies in front, hidden behind
    assert valley(0.65, 0.75) == PAPER_EDGE and valley(0.75, 0.85) == PAPER_EDGE
    assert mountain(0.65, 0.75) == BACK and mountain(0.75, 0.85) == BACK
