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


def line_angle(rgba: np.ndarray, paper: np.ndarray) -> LineAngle:
    ys, xs = np.nonzero(ink_mask(rgba, paper))
    if len(xs) < 80:
        return LineAngle(0.0, 1.0, int(len(xs)))
    pts = np.column_stack([xs, ys]).astype(np.float64)
    if len(pts) > MAX_POINTS:
        pts = pts[:: int(np.ceil(len(pts) / MAX_POINTS))]
    pts -= pts.mean(axis=0)
    coarse = np.arange(0.0, 180.0, 1.5)
    sc = _score(pts, coarse, 3.0)
    best = float(coarse[int(np.argmax(sc))])
    fine = np.arange(best - 1.5, best + 1.5001, 0.1)
    sf = _score(pts, fine, 1.5)
    angle = float(fine[int(np.argmax(sf))]) % 180.0
    strength = float(sc.max() / max(np.median(sc), 1e-9))
    return LineAngle(angle, strength, int(len(xs)))
