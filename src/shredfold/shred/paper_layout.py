"""The ShredBench authors' layout of the pieces (their ``pixel_perfect_layout``), in numpy and Pillow.

Each piece is its page box cut by a mask (:func:`their_crop`: the mask's extent plus
``pad`` px, as their cutter saved it). Turned by its angle (Pillow's bicubic turn, as
theirs), the mask is sampled onto a grid of ``packing_downsample`` cells and grown by
``packing_padding`` px, wrapping round the grid's edges as their ``np.roll`` does; the pieces are then
placed largest first, each at the free grid spot (every ``packing_step`` cells of a window
around the middle) whose centre is nearest the middle of a square canvas, exactly their
search order and tie-break; a piece that finds no spot there takes the first free one of
the whole canvas. Nothing is random here but the heights, drawn from the caller's
generator. Positions come back in Blender units (``pixels_per_meter`` page px each), y up.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np
from PIL import Image

from shredfold.shred.modes import PAPER_SCENE


@dataclass(frozen=True)
class Crop:
    """One piece as their cutter saved it: the page box around the mask (x0, y0 on the
    page), its page pixels (RGB) and its mask (uint8, 255 = paper)."""

    x0: int
    y0: int
    rgb: np.ndarray
    mask: np.ndarray

    @property
    def size(self) -> tuple[int, int]:
        return self.mask.shape[1], self.mask.shape[0]


@dataclass(frozen=True)
class Placed:
    """Where a piece lies: its rectangle's centre (x, y, z) in Blender units, turned by
    ``angle`` degrees counter-clockwise seen from above."""

    x: float
    y: float
    z: float
    angle: float


def their_crop(crop: np.ndarray, offset: tuple[int, int], page_size: tuple[int, int], pad: int) -> Crop:
    """Their saved box from a piece's RGBA page box ``crop`` at page ``offset``: rows and
    columns of the mask's extent, ``pad`` before and ``pad - 1`` after (their slice ends at
    the last row + pad), within the page. Page pixels beyond ``crop`` repeat its edge: the
    mask is 0 there, so they only feed the texture filter outside the paper."""
    alpha = crop[..., 3]
    rows = np.flatnonzero(alpha.any(axis=1))
    cols = np.flatnonzero(alpha.any(axis=0))
    if not len(rows):
        raise ValueError("piece has no pixels")
    ox, oy = offset
    width, height = page_size
    y0, y1 = max(0, oy + rows[0] - pad), min(height, oy + rows[-1] + pad)
    x0, x1 = max(0, ox + cols[0] - pad), min(width, ox + cols[-1] + pad)
    before = (max(0, oy - y0), max(0, ox - x0))
    after = (max(0, y1 - (oy + crop.shape[0])), max(0, x1 - (ox + crop.shape[1])))
    grown = np.pad(crop, ((before[0], after[0]), (before[1], after[1]), (0, 0)), mode="edge")
    grown[: before[0], :, 3] = 0
    grown[grown.shape[0] - after[0] :, :, 3] = 0
    grown[:, : before[1], 3] = 0
    grown[:, grown.shape[1] - after[1] :, 3] = 0
    sy, sx = y0 - (oy - before[0]), x0 - (ox - before[1])
    box = grown[sy : sy + y1 - y0, sx : sx + x1 - x0]
    return Crop(x0=int(x0), y0=int(y0), rgb=np.ascontiguousarray(box[..., :3]),
                mask=np.ascontiguousarray(box[..., 3]))


def packing_mask(mask: np.ndarray, angle: float, downsample: float, padding: int) -> tuple[np.ndarray, tuple[int, int]]:
    """The mask turned ``angle`` degrees (counter-clockwise on screen) about its centre on a
    canvas grown to fit, sampled onto a ``downsample`` grid, > half, then grown by
    ``padding`` px (wrapping round the grid's edges, as theirs does); and the turned size.

    Turned and sampled with Pillow's own bicubic ``rotate(expand=True)`` and nearest
    ``resize``, the operations their packing uses: a cell on the rim of a piece decides
    whether a spot is free, and any other interpolation flips a few rim cells, enough to send
    a later piece elsewhere and change the frame by up to 15 %."""
    turned = Image.fromarray(np.ascontiguousarray(mask, dtype=np.uint8)).rotate(
        angle, expand=True, resample=Image.Resampling.BICUBIC
    )
    tw, th = turned.size
    small = np.asarray(turned.resize((int(tw * downsample), int(th * downsample)), Image.Resampling.NEAREST))
    occupied = small > 128
    r = int(padding * downsample)
    if r > 0:
        # Their growth ORs the mask shifted by np.roll, which wraps: paper within r cells of
        # one side of the grid also occupies the cells across on the other side. That makes
        # each piece take more room and the pieces pack looser (a larger frame, smaller text).
        grown = cv2.dilate(np.pad(occupied, r, mode="wrap").view(np.uint8), np.ones((2 * r + 1, 2 * r + 1), np.uint8))
        occupied = grown[r : r + occupied.shape[0], r : r + occupied.shape[1]] > 0
    return occupied, (tw, th)


def _spot(canvas: np.ndarray, shape: np.ndarray, window: tuple[int, int, int, int], step: int) -> tuple[int, int] | None:
    """Their nearest-to-centre search: the top-left (x, y) on the ``step`` grid of
    ``window`` (y0, y1, x0, x1) where ``shape`` hits nothing, nearest the canvas centre;
    the first (row by row) closer than 10 cells wins at once, as their loop breaks there."""
    side = canvas.shape[0]
    ph, pw = shape.shape
    if ph > side or pw > side:
        return None
    hits = cv2.matchTemplate(canvas.astype(np.float32), shape.astype(np.float32), cv2.TM_CCORR)
    y0, y1, x0, x1 = window
    ys = np.arange(y0, y1, step)
    xs = np.arange(x0, x1, step)
    ys, xs = ys[ys + ph <= side], xs[xs + pw <= side]
    if not len(ys) or not len(xs):
        return None
    free = hits[np.ix_(ys, xs)] < 0.5
    centre = side // 2
    d2 = (ys[:, None] + ph / 2 - centre) ** 2 + (xs[None, :] + pw / 2 - centre) ** 2
    d2 = np.where(free, d2, np.inf)
    flat = d2.ravel()
    close = np.flatnonzero(flat < 100)
    best = int(close[0]) if len(close) else int(np.argmin(flat))
    if not np.isfinite(flat[best]):
        return None
    iy, ix = divmod(best, len(xs))
    return int(xs[ix]), int(ys[iy])


def _first_free(canvas: np.ndarray, shape: np.ndarray, step: int) -> tuple[int, int] | None:
    """Their fallback: the first free top-left, row by row, every ``step`` cells."""
    side = canvas.shape[0]
    ph, pw = shape.shape
    if ph >= side or pw >= side:
        return None
    hits = cv2.matchTemplate(canvas.astype(np.float32), shape.astype(np.float32), cv2.TM_CCORR)
    ys, xs = np.arange(0, side - ph, step), np.arange(0, side - pw, step)
    free = np.argwhere(hits[np.ix_(ys, xs)] < 0.5)
    if not len(free):
        return None
    iy, ix = free[0]
    return int(xs[ix]), int(ys[iy])


def pack(masks: Sequence[np.ndarray], angles: Sequence[float], rng: np.random.Generator) -> list[Placed]:
    """Where each piece lies (input order); heights drawn from ``rng`` in placement order."""
    p = PAPER_SCENE
    down, ppm, step = float(p["packing_downsample"]), float(p["pixels_per_meter"]), int(p["packing_step"])
    shapes = [packing_mask(m, a, down, int(p["packing_padding"])) for m, a in zip(masks, angles, strict=True)]
    areas = [int(s.sum()) for s, _ in shapes]
    estimated = int(math.sqrt(sum(areas) / float(p["packing_area_share"])))
    side = max(int(estimated * 1.5), max(max(s.shape) for s, _ in shapes) * 2)
    canvas = np.zeros((side, side), dtype=bool)
    margin = int(estimated * 1.2) // 2
    lo, hi = side // 2 - margin, side // 2 + margin
    window = (max(0, lo), min(side, hi), max(0, lo), min(side, hi))
    low, high = p["height"]
    placed: dict[int, Placed] = {}
    # Largest first; Python's sort is stable, so equal areas keep the input order, as theirs.
    for i in sorted(range(len(masks)), key=lambda k: -areas[k]):
        shape, (tw, th) = shapes[i]
        spot = _spot(canvas, shape, window, step)
        if spot is None:
            spot = _first_free(canvas, shape, step * 2)
        while spot is None:
            # Their script drops such a piece; we grow the canvas about its centre instead
            # (never seen at their packing density).
            grow = side // 2
            canvas = np.pad(canvas, grow)
            placed = {k: Placed(v.x + grow / down / ppm, v.y - grow / down / ppm, v.z, v.angle)
                      for k, v in placed.items()}
            side = canvas.shape[0]
            spot = _first_free(canvas, shape, step * 2)
        x, y = spot
        ph, pw = shape.shape
        canvas[y : y + ph, x : x + pw] |= shape
        cx = x / down / ppm + tw / ppm / 2
        cy = -y / down / ppm - th / ppm / 2
        placed[i] = Placed(cx, cy, float(rng.uniform(low, high)), float(angles[i]))
    return [placed[i] for i in range(len(masks))]
