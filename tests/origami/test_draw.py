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
    CreasePattern,
    draw_crease_pattern,
    draw_folded,
    fold_geometry,
    folded_silhouette,
    read_fold,
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
    cp = CreasePattern.from_fold(read_fold(BASES[name][0]))
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


def test_folded_kite_shows_its_layers_where_the_geometry_puts_them():
    # The kite's root face is flap 0 (sheet coordinates, unmoved), so the body is reflected
    # across the crease y = T x and lies on top, seen from its back. Folded, the kite is the
    # quadrilateral (0, 0), (1, -T), (sqrt 2, 0), (1, T): the two flaps (area T/2 each) lie
    # under the body's near half, and the body's far triangle (area 1 - 2T) is one layer.
    _, geom, layers = _folded("kite")
    size = 128
    img = np.asarray(draw_folded(geom, layers.face_orders, size))
    style = DEFAULT_STYLE
    scale = size * (1 - 2 * style.margin) / math.sqrt(2)  # pixels per unit; width sqrt 2
    back = np.array(style.back, float)
    one_layer = tuple(int(v) for v in np.round(back))  # the deepest cell has 2 layers
    two_layers = tuple(int(v) for v in np.round(back * 0.65))

    def pixel(x: float, y: float) -> tuple[int, ...]:
        col = size / 2 + scale * (x - math.sqrt(2) / 2)
        row = size / 2 - scale * y
        return tuple(img[int(row), int(col)].tolist())

    assert pixel(0.5, 0.1) == two_layers and pixel(0.5, -0.1) == two_layers
    # either side of the body's flat diagonal (y = 0, drawn as an edge between its faces)
    assert pixel(1.2, 0.05) == one_layer and pixel(1.2, -0.05) == one_layer
    assert pixel(0.1, 0.3) == tuple(style.background)  # outside the kite
    colours = img.reshape(-1, 3)
    count = {c: int((colours == c).all(axis=1).sum()) for c in (one_layer, two_layers)}
    edges = int((colours == 0).all(axis=1).sum())
    # each region's area in pixels, less the one-pixel edge lines drawn over its outline
    assert count[two_layers] == pytest.approx(T * scale**2, rel=0.12)
    assert count[one_layer] == pytest.approx((1 - 2 * T) * scale**2, rel=0.12)
    assert count[two_layers] + count[one_layer] + edges == pytest.approx((1 - T) * scale**2, rel=0.03)
    # nothing of the front side shows: the flaps are hidden under the body
    assert not (colours == np.array(style.front)).all(axis=1).any()
