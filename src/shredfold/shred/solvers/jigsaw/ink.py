"""What the ink on a scrap says about its orientation: the direction of its text lines."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.ndimage import binary_erosion

MAX_POINTS = 5000


@dataclass(frozen=True)
class LineAngle:
    degrees: float  # direction of text lines in image coordinates, in [0, 180)
    strength: float  # peakiness at the best angle over the median angle; ~1 means no lines
    count: int  # ink pixels seen


def ink_mask(rgba: np.ndarray, paper: np.ndarray) -> np.ndarray:
    """Dark pixels well inside the paper (the rim mixes with shadow and background)."""
    inner = binary_erosion(paper, iterations=3)
    gray = rgba[..., :3].astype(np.float32).mean(axis=2)
    if not inner.any():
        return inner
    level = float(np.percentile(gray[inner], 90))
    return inner & (gray < level - 60)


def _score(pts: np.ndarray, degrees: np.ndarray, binw: float) -> np.ndarray:
    th = np.deg2rad(degrees)[:, None]
    # Offset of each point along the normal of a line at angle th.
    proj = -pts[None, :, 0] * np.sin(th) + pts[None, :, 1] * np.cos(th)
    lo = proj.min(axis=1, keepdims=True)
    bins = ((proj - lo) / binw).astype(np.int64)
    out = np.empty(len(degrees))
    for i in range(len(degrees)):
        c = np.bincount(bins[i]).astype(np.float64)
        out[i] = float((c * c).sum())
    return out


def line_angle(rgba: np.ndarray, paper: np.ndarray, *, square: bool = False) -> LineAngle:
    """The direction of the scrap's text lines, from how peaky the ink's projection is.

    With ``square``, directions are first scored with the one square to them (then the
    lines, the peakier of the two, refined alone): a page's characters line up along its
    lines and (monospace code, CJK, a table's figures) down its columns, while the ink of a
    few lines of CJK also lines up along a slant of the character grid a few degrees off
    its lines, and only along that one."""
    ys, xs = np.nonzero(ink_mask(rgba, paper))
    if len(xs) < 80:
        return LineAngle(0.0, 1.0, int(len(xs)))
    pts = np.column_stack([xs, ys]).astype(np.float64)
    if len(pts) > MAX_POINTS:
        pts = pts[:: int(np.ceil(len(pts) / MAX_POINTS))]
    pts -= pts.mean(axis=0)
    if square:
        coarse = np.arange(0.0, 90.0, 0.5)
        along, across = _score(pts, coarse, 3.0), _score(pts, coarse + 90.0, 3.0)
        pick = int(np.argmax(along / np.median(along) + across / np.median(across)))
        median = float(np.median(np.concatenate([along, across])))
        best = float(coarse[pick]) if along[pick] >= across[pick] else float(coarse[pick]) + 90.0
        strength = float(max(along[pick], across[pick])) / max(median, 1e-9)
        reach = 0.75
    else:
        coarse = np.arange(0.0, 180.0, 1.5)
        sc = _score(pts, coarse, 3.0)
        best = float(coarse[int(np.argmax(sc))])
        strength = float(sc.max() / max(np.median(sc), 1e-9))
        reach = 1.5
    fine = np.arange(best - reach, best + reach + 0.0001, 0.1)
    sf = _score(pts, fine, 1.5)
    angle = float(fine[int(np.argmax(sf))]) % 180.0
    return LineAngle(angle, strength, int(len(xs)))
