"""The orthographic rasteriser of the paper scene, on hand-checked sheets: squares on a 16 px
frame whose outlines fall on pixel or half-pixel boundaries."""

from __future__ import annotations

import numpy as np

from shredfold.shred.raster import pack_sheets, shade, srgb_to_linear, visible

SIZE = 16
GROUND, LIT = 0.2, 1.0


def square(x0: float, y0: float, x1: float, y1: float, z: float) -> tuple[np.ndarray, np.ndarray]:
    """Two triangles over [x0, x1] x [y0, y1] (frame units, y down) at height z, with the
    plane's UVs (v up: the image's top row along y0)."""
    a, b, c, d = (x0, y1), (x1, y1), (x1, y0), (x0, y0)  # bottom-left, bottom-right, ...
    uv = {a: (0, 0), b: (1, 0), c: (1, 1), d: (0, 1)}
    tris = [(a, b, c), (a, c, d)]
    corners = np.array([[(*p, z) for p in t] for t in tris], dtype=np.float64)
    uvs = np.array([[uv[p] for p in t] for t in tris], dtype=np.float64)
    return corners, uvs


def lights(sheets: int) -> np.ndarray:
    out = np.full((1 + sheets, 4, 4, 3), LIT, np.float32)
    out[0] = GROUND
    return out


def solid(h: int, w: int, rgb: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray]:
    return np.full((h, w), 255, np.uint8), np.tile(np.array(rgb, np.uint8), (h, w, 1))


def test_a_square_sheet_covers_exactly_its_pixels():
    corners, uvs = square(0.25, 0.25, 0.75, 0.75, 0.0)
    mask, tex = solid(8, 8, (255, 255, 255))
    sheets = pack_sheets([corners], [uvs], [mask], [tex])
    frame = shade(sheets, SIZE, 2, 0.9, lights(1))
    inside = np.zeros((SIZE, SIZE), bool)
    inside[4:12, 4:12] = True
    assert (frame.labels == np.where(inside, 0, -1)).all()
    assert (frame.paper == np.where(inside, 4, 0)).all()
    assert np.allclose(frame.rgba[inside][:, :3], LIT) and np.allclose(frame.rgba[~inside][:, :3], GROUND)
    assert (visible(sheets, SIZE, 0.9) == frame.labels).all()


def test_an_outline_through_a_pixel_shares_it_by_samples():
    # The right edge at x = 12.5 px: column 12 is half paper (2 of its 4 samples).
    corners, uvs = square(0.25, 0.25, 12.5 / SIZE, 0.75, 0.0)
    mask, tex = solid(8, 8, (255, 255, 255))
    frame = shade(pack_sheets([corners], [uvs], [mask], [tex]), SIZE, 2, 0.9, lights(1))
    assert (frame.paper[4:12, 12] == 2).all() and (frame.labels[4:12, 12] == 0).all()
    assert np.allclose(frame.rgba[4:12, 12, 0], (LIT + GROUND) / 2)


def test_the_texture_is_upright_and_in_linear_light():
    corners, uvs = square(0.25, 0.25, 0.75, 0.75, 0.0)
    mask = np.full((8, 8), 255, np.uint8)
    tex = np.zeros((8, 8, 3), np.uint8)
    tex[:4, :, 0] = 200  # top half red, bottom half blue
    tex[4:, :, 2] = 200
    frame = shade(pack_sheets([corners], [uvs], [mask], [tex]), SIZE, 2, 0.9, lights(1))
    lin = srgb_to_linear()
    # Texel = pixel here; rows 5 and 10 are a texel clear of the halves' border and of the
    # wrap-around at the image's edge (an image node repeats by default, as theirs does).
    assert frame.rgba[5, 8, 0] == lin[200] and frame.rgba[5, 8, 2] == 0.0
    assert frame.rgba[10, 8, 2] == lin[200] and frame.rgba[10, 8, 0] == 0.0
    # Half-way: the mean of the two in linear light, not in sRGB.
    assert np.isclose(frame.rgba[7, 8, 0] + frame.rgba[8, 8, 0], lin[200])
    assert np.isclose(frame.rgba[4, 8, 2], lin[200] * 0.125)  # wrapped: 1/4 of 2 samples' blend


def test_the_mask_cuts_and_the_view_passes_through_to_the_sheet_below():
    low, low_uv = square(0.25, 0.25, 0.75, 0.75, 0.0)
    high, high_uv = square(0.25, 0.25, 0.75, 0.75, 0.5)
    half = np.zeros((8, 8), np.uint8)
    half[:, :4] = 255  # the upper sheet is paper on its left half only
    low_mask, low_tex = solid(8, 8, (0, 0, 255))
    _, high_tex = solid(8, 8, (255, 0, 0))
    sheets = pack_sheets([low, high], [low_uv, high_uv], [low_mask, half], [low_tex, high_tex])
    frame = shade(sheets, SIZE, 2, 0.9, lights(2))
    assert (frame.labels[4:12, 5:7] == 1).all()  # the nearer sheet where it is paper
    assert (frame.labels[4:12, 9:12] == 0).all()  # through its transparent half, the lower one
    assert frame.rgba[6, 5, 0] > 0.9 and frame.rgba[6, 10, 2] > 0.9
    # Threshold 0.9 on the bilinear mask: its 50 % line sits on the cut, so the paper ends
    # 0.4 texel (0.4 px here) before it, and column 7 (centre 7.5, samples 7.25 and 7.75
    # = texel 3.25, 3.75 of 8) keeps its left samples: paper where mask > 0.9.
    assert (frame.labels[4:12, 7] == 1).all() and (frame.paper[4:12, 7] == 2).all()
    # Column 4 likewise: the mask repeats, so its left samples blend in the transparent
    # right edge (their image node's default Repeat).
    assert (frame.paper[4:12, 4] == 2).all()


def test_the_nearer_sheet_hides_the_farther_one():
    far, far_uv = square(0.125, 0.125, 0.625, 0.625, 0.1)
    near, near_uv = square(0.375, 0.375, 0.875, 0.875, 0.2)
    m, t = solid(4, 4, (255, 255, 255))
    sheets = pack_sheets([far, near], [far_uv, near_uv], [m, m], [t, t])
    seen = visible(sheets, SIZE, 0.9)
    assert (seen[6:10, 6:10] == 1).all() and (seen[2:6, 2:6] == 0).all() and (seen[14:, :] == -1).all()
    swapped = pack_sheets([near, far], [near_uv, far_uv], [m, m], [t, t])
    assert (visible(swapped, SIZE, 0.9)[6:10, 6:10] == 0).all()  # z decides, not the order
