"""What an orthographic top-down camera sees of textured, mask-cut triangles: an exact
z-buffer rasteriser (numba), for the paper scene (:mod:`.blender_paper`).

Straight down, each texel is seen once and from above: which sheet a pixel shows, and
where on its page, is pure geometry, no light transport. So the frame's visibility and its
page texture are resolved here at ``supersample``² points per pixel, and Cycles renders only
the lighting, which is smooth, at a fraction of the size (:func:`shade` multiplies the two).

Conventions: triangle corners are in frame units (x right, y down, 0..1 across the square
frame), z up (larger is nearer the camera); UVs as Blender's (v up, the image's top row at
v = 1); a surface point is paper where the bilinear value of its mask (Blender's Linear
interpolation, wrapping at the borders as an image node's default Repeat) exceeds the
threshold, and otherwise lets the view through, as the authors' Mix of a Transparent BSDF
does. Sample centres follow Cycles': pixel (i, j) is centred at ((j + 0.5) / size,
(i + 0.5) / size). Plain IEEE arithmetic without fast-math, so the same on every machine.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numba import njit

BAND = 64  # pixel rows resolved at a time (bounds the sample buffers)


@dataclass(frozen=True)
class Sheets:
    """All sheets of a frame: triangles and the images they are cut and painted by."""

    corners: np.ndarray  # (T, 3, 3) float64: x, y (frame units, y down), z up
    uvs: np.ndarray  # (T, 3, 2) float64
    sheet: np.ndarray  # (T,) int32: which sheet each triangle belongs to
    masks: np.ndarray  # flat uint8: every sheet's mask, rows top first
    textures: np.ndarray  # flat uint8 RGB (sRGB), same layout x 3
    offsets: np.ndarray  # (S,) int64: where sheet s's mask starts in ``masks``
    shapes: np.ndarray  # (S, 2) int64: (height, width) of sheet s's images


def pack_sheets(
    corners: Sequence[np.ndarray], uvs: Sequence[np.ndarray], masks: Sequence[np.ndarray],
    textures: Sequence[np.ndarray],
) -> Sheets:
    """One :class:`Sheets` from per-sheet triangles (T_s, 3, 3), UVs (T_s, 3, 2), masks (HxW
    uint8) and textures (HxWx3 uint8)."""
    sizes = np.array([m.size for m in masks], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    return Sheets(
        corners=np.ascontiguousarray(np.concatenate(corners), dtype=np.float64),
        uvs=np.ascontiguousarray(np.concatenate(uvs), dtype=np.float64),
        sheet=np.concatenate([np.full(len(c), s, np.int32) for s, c in enumerate(corners)]),
        masks=np.concatenate([np.ascontiguousarray(m).ravel() for m in masks]),
        textures=np.concatenate([np.ascontiguousarray(t).ravel() for t in textures]),
        offsets=offsets,
        shapes=np.array([m.shape for m in masks], dtype=np.int64).reshape(-1, 2),
    )


def srgb_to_linear() -> np.ndarray:
    c = np.arange(256, dtype=np.float64) / 255.0
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4).astype(np.float32)


@njit(cache=True, nogil=True)
def _bilinear_mask(masks, off, h, w, u, v):  # type: ignore[no-untyped-def]
    fx = u * w - 0.5
    fy = (1.0 - v) * h - 0.5
    x0 = math.floor(fx)
    y0 = math.floor(fy)
    tx = fx - x0
    ty = fy - y0
    xa = x0 % w
    xb = (x0 + 1) % w
    ya = y0 % h
    yb = (y0 + 1) % h
    a = masks[off + ya * w + xa] * (1.0 - tx) + masks[off + ya * w + xb] * tx
    b = masks[off + yb * w + xa] * (1.0 - tx) + masks[off + yb * w + xb] * tx
    return (a * (1.0 - ty) + b * ty) / 255.0


@njit(cache=True, nogil=True)
def _bins(corners, size, band):  # type: ignore[no-untyped-def]
    """Triangles per band of ``band`` sample rows (CSR: starts, items)."""
    t = corners.shape[0]
    nb = (size + band - 1) // band
    lo = np.empty(t, np.int64)
    hi = np.empty(t, np.int64)
    counts = np.zeros(nb + 1, np.int64)
    for i in range(t):
        ymin = min(corners[i, 0, 1], corners[i, 1, 1], corners[i, 2, 1]) * size - 0.5
        ymax = max(corners[i, 0, 1], corners[i, 1, 1], corners[i, 2, 1]) * size - 0.5
        r0 = max(0, math.ceil(ymin))
        r1 = min(size - 1, math.floor(ymax))
        if r1 < r0:
            lo[i] = 1
            hi[i] = 0
            continue
        lo[i] = r0 // band
        hi[i] = r1 // band
        for b in range(lo[i], hi[i] + 1):
            counts[b + 1] += 1
    starts = np.cumsum(counts)
    items = np.empty(starts[-1], np.int64)
    fill = starts[:-1].copy()
    for i in range(t):
        for b in range(lo[i], hi[i] + 1):
            items[fill[b]] = i
            fill[b] += 1
    return starts, items


@njit(cache=True, nogil=True)
def _raster_band(corners, uvs, sheet, masks, offsets, shapes, threshold, size, row0, rows,  # type: ignore[no-untyped-def]
                 tris, zbuf, ids, ubuf, vbuf):
    """Nearest paper surface of every sample in sample rows [row0, row0 + rows)."""
    zbuf[:, :] = -np.inf
    ids[:, :] = -1
    for k in range(tris.shape[0]):
        i = tris[k]
        ax = corners[i, 0, 0] * size - 0.5
        ay = corners[i, 0, 1] * size - 0.5
        bx = corners[i, 1, 0] * size - 0.5
        by = corners[i, 1, 1] * size - 0.5
        cx = corners[i, 2, 0] * size - 0.5
        cy = corners[i, 2, 1] * size - 0.5
        area = (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)
        if area == 0.0:
            continue
        inv = 1.0 / area
        x0 = max(0, math.ceil(min(ax, bx, cx)))
        x1 = min(size - 1, math.floor(max(ax, bx, cx)))
        y0 = max(row0, math.ceil(min(ay, by, cy)))
        y1 = min(row0 + rows - 1, math.floor(max(ay, by, cy)))
        s = sheet[i]
        off = offsets[s]
        h = shapes[s, 0]
        w = shapes[s, 1]
        for y in range(y0, y1 + 1):
            for x in range(x0, x1 + 1):
                # Barycentric weights; both windings count (the sheets are two-sided), and
                # points on a shared edge belong to both triangles (no cracks).
                wa = ((bx - x) * (cy - y) - (by - y) * (cx - x)) * inv
                wb = ((cx - x) * (ay - y) - (cy - y) * (ax - x)) * inv
                wc = 1.0 - wa - wb
                if wa < 0.0 or wb < 0.0 or wc < 0.0:
                    continue
                z = wa * corners[i, 0, 2] + wb * corners[i, 1, 2] + wc * corners[i, 2, 2]
                r = y - row0
                if z <= zbuf[r, x]:
                    continue
                u = wa * uvs[i, 0, 0] + wb * uvs[i, 1, 0] + wc * uvs[i, 2, 0]
                v = wa * uvs[i, 0, 1] + wb * uvs[i, 1, 1] + wc * uvs[i, 2, 1]
                if _bilinear_mask(masks, off, h, w, u, v) <= threshold:
                    continue
                zbuf[r, x] = z
                ids[r, x] = s
                ubuf[r, x] = u
                vbuf[r, x] = v


@njit(cache=True, nogil=True)
def _visible(corners, uvs, sheet, masks, offsets, shapes, threshold, size, band):  # type: ignore[no-untyped-def]
    starts, items = _bins(corners, size, band)
    out = np.empty((size, size), np.int16)
    zbuf = np.empty((band, size), np.float64)
    ids = np.empty((band, size), np.int32)
    ubuf = np.empty((band, size), np.float64)
    vbuf = np.empty((band, size), np.float64)
    for b in range(len(starts) - 1):
        row0 = b * band
        rows = min(band, size - row0)
        _raster_band(corners, uvs, sheet, masks, offsets, shapes, threshold, size, row0, rows,
                     items[starts[b]:starts[b + 1]], zbuf, ids, ubuf, vbuf)
        for r in range(rows):
            for x in range(size):
                out[row0 + r, x] = ids[r, x]
    return out


def visible(sheets: Sheets, size: int, threshold: float) -> np.ndarray:
    """(size, size) int16: the sheet each pixel centre shows, -1 for none (the ground)."""
    return _visible(sheets.corners, sheets.uvs, sheets.sheet, sheets.masks, sheets.offsets,
                    sheets.shapes, threshold, size, BAND)


@njit(cache=True, nogil=True)
def _light_at(light, k, ly, lx):  # type: ignore[no-untyped-def]
    """Bilinear value (3 channels) of light map ``k`` at lighting-pass pixel (ly, lx),
    centres at integers, clamped at the borders."""
    lh = light.shape[1]
    lw = light.shape[2]
    fy = min(max(ly, 0.0), lh - 1.0)
    fx = min(max(lx, 0.0), lw - 1.0)
    y0 = min(int(fy), lh - 2) if lh > 1 else 0
    x0 = min(int(fx), lw - 2) if lw > 1 else 0
    ty = fy - y0
    tx = fx - x0
    y1 = min(y0 + 1, lh - 1)
    x1 = min(x0 + 1, lw - 1)
    w00 = (1.0 - tx) * (1.0 - ty)
    w01 = tx * (1.0 - ty)
    w10 = (1.0 - tx) * ty
    w11 = tx * ty
    r = w00 * light[k, y0, x0, 0] + w01 * light[k, y0, x1, 0] + w10 * light[k, y1, x0, 0] + w11 * light[k, y1, x1, 0]
    g = w00 * light[k, y0, x0, 1] + w01 * light[k, y0, x1, 1] + w10 * light[k, y1, x0, 1] + w11 * light[k, y1, x1, 1]
    b = w00 * light[k, y0, x0, 2] + w01 * light[k, y0, x1, 2] + w10 * light[k, y1, x0, 2] + w11 * light[k, y1, x1, 2]
    return r, g, b


@njit(cache=True, nogil=True)
def _shade(corners, uvs, sheet, masks, textures, offsets, shapes, threshold, size, ss, band,  # type: ignore[no-untyped-def]
           light, to_linear):
    n = size * ss
    starts, items = _bins(corners, n, band * ss)
    rgba = np.empty((size, size, 4), np.float32)
    labels = np.empty((size, size), np.int16)
    count = np.empty((size, size), np.uint8)
    rows_s = band * ss
    zbuf = np.empty((rows_s, n), np.float64)
    ids = np.empty((rows_s, n), np.int32)
    ubuf = np.empty((rows_s, n), np.float64)
    vbuf = np.empty((rows_s, n), np.float64)
    scale = light.shape[2] / size  # lighting-pass px per frame px
    inv_n = 1.0 / (ss * ss)
    for b in range(len(starts) - 1):
        row0 = b * rows_s
        rows = min(rows_s, n - row0)
        _raster_band(corners, uvs, sheet, masks, offsets, shapes, threshold, n, row0, rows,
                     items[starts[b]:starts[b + 1]], zbuf, ids, ubuf, vbuf)
        for py in range(rows // ss):
            y = row0 // ss + py
            ly = (y + 0.5) * scale - 0.5
            for x in range(size):
                lx = (x + 0.5) * scale - 0.5
                ground = _light_at(light, 0, ly, lx)
                acc0 = 0.0
                acc1 = 0.0
                acc2 = 0.0
                paper = 0
                label = -1
                lit_sheet = -1
                lit = ground
                for sy in range(ss):
                    for sx in range(ss):
                        s = ids[py * ss + sy, x * ss + sx]
                        if s < 0:
                            acc0 += ground[0]
                            acc1 += ground[1]
                            acc2 += ground[2]
                            continue
                        if s != lit_sheet:
                            lit = _light_at(light, s + 1, ly, lx)
                            lit_sheet = s
                        off = offsets[s]
                        h = shapes[s, 0]
                        w = shapes[s, 1]
                        fx = ubuf[py * ss + sy, x * ss + sx] * w - 0.5
                        fy = (1.0 - vbuf[py * ss + sy, x * ss + sx]) * h - 0.5
                        x0 = math.floor(fx)
                        y0 = math.floor(fy)
                        tx = fx - x0
                        ty = fy - y0
                        xa = x0 % w
                        xb = (x0 + 1) % w
                        ya = y0 % h
                        yb = (y0 + 1) % h
                        base = 3 * off
                        for c in range(3):
                            p00 = to_linear[textures[base + 3 * (ya * w + xa) + c]]
                            p01 = to_linear[textures[base + 3 * (ya * w + xb) + c]]
                            p10 = to_linear[textures[base + 3 * (yb * w + xa) + c]]
                            p11 = to_linear[textures[base + 3 * (yb * w + xb) + c]]
                            albedo = (p00 * (1.0 - tx) + p01 * tx) * (1.0 - ty) + (p10 * (1.0 - tx) + p11 * tx) * ty
                            if c == 0:
                                acc0 += albedo * lit[0]
                            elif c == 1:
                                acc1 += albedo * lit[1]
                            else:
                                acc2 += albedo * lit[2]
                # The sheet with most samples here (the first met on a tie) and its count.
                for sy in range(ss):
                    for sx in range(ss):
                        s = ids[py * ss + sy, x * ss + sx]
                        if s < 0 or s == label:
                            continue
                        many = 0
                        for ty in range(ss):
                            for tx in range(ss):
                                if ids[py * ss + ty, x * ss + tx] == s:
                                    many += 1
                        if many > paper:
                            paper = many
                            label = s
                rgba[y, x, 0] = acc0 * inv_n
                rgba[y, x, 1] = acc1 * inv_n
                rgba[y, x, 2] = acc2 * inv_n
                rgba[y, x, 3] = 1.0
                labels[y, x] = label
                count[y, x] = paper
    return rgba, labels, count


@dataclass(frozen=True)
class Frame:
    """A shaded frame: linear RGBA (float32, rows top first), the sheet each pixel shows
    (int16, -1 none; of two, the one with more of its samples, the first met on a tie) and
    how many of its ``supersample``² samples are that sheet's paper (uint8)."""

    rgba: np.ndarray
    labels: np.ndarray
    paper: np.ndarray
    supersample: int


def shade(sheets: Sheets, size: int, supersample: int, threshold: float, light: np.ndarray) -> Frame:
    """The frame at ``size``² px: each sample's page colour (bilinear, linear light) times
    its sheet's lighting; ``light`` is (1 + S, h, w, 3) float32, map 0 the ground's radiance
    and map 1 + s sheet s's light per unit albedo, on the lighting pass's pixel grid."""
    rgba, labels, count = _shade(
        sheets.corners, sheets.uvs, sheets.sheet, sheets.masks, sheets.textures, sheets.offsets,
        sheets.shapes, threshold, size, supersample, BAND, np.ascontiguousarray(light, dtype=np.float32),
        srgb_to_linear(),
    )
    return Frame(rgba=rgba, labels=labels, paper=count, supersample=supersample)
