"""Corners and sides of a scrap outline.

Voronoi pieces are convex polygons whose interior edges are jagged by a few pixels (both
neighbours share the same jag) and whose page-border edges are straight. Corners are found
by Douglas-Peucker with a tolerance above the jag amplitude, then pruned where the two
adjacent sides, fitted as lines, barely turn; each kept corner snaps to the outline point
nearest the intersection of those lines, which is where the cut's vertex lies.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

DP_TOLERANCE = 4.5  # px: above the cutter's 3 px jag, below the bulge of a real corner
MIN_TURN = 9.0  # degrees: flatter vertices are jag or noise, not corners
BORDER_RMS = 0.2  # px from a fitted line: straighter sides are cut by the page edge
BORDER_MIN_LENGTH = 40.0  # px: short interior edges are left straight by the cutter


@dataclass(frozen=True)
class Side:
    piece: int
    index: int  # position in the piece's ring of sides (counter-clockwise)
    start: int  # outline index of the first corner
    points: np.ndarray  # outline points from the first corner to the next, both included
    border: bool  # straight: part of the page edge

    @property
    def chord(self) -> np.ndarray:
        return self.points[-1] - self.points[0]

    @property
    def length(self) -> float:
        return float(np.hypot(*self.chord))

    def profile(self) -> np.ndarray:
        """Signed deviation of each point from the chord, positive towards the paper."""
        d = self.chord / max(self.length, 1e-9)
        normal = np.array([-d[1], d[0]])
        return (self.points - self.points[0]) @ normal


def _span(ring: np.ndarray, a: int, b: int) -> np.ndarray:
    """Points a..b inclusive, walking forward around the ring."""
    n = len(ring)
    idx = np.arange(a, a + ((b - a) % n or n) + 1) % n
    return ring[idx]


def fit_line(points: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Total-least-squares line: (centroid, unit direction, rms residual)."""
    c = points.mean(axis=0)
    u, s, vt = np.linalg.svd(points - c, full_matrices=False)
    direction = vt[0]
    rms = float(s[1] / np.sqrt(len(points))) if len(s) > 1 else 0.0
    return c, direction, rms


def _trimmed(points: np.ndarray) -> np.ndarray:
    # The ends of a side bend into the neighbouring corner's rounding; fit the middle.
    k = len(points)
    cut = min(k // 5, 12)
    return points[cut : k - cut] if k - 2 * cut >= 3 else points


def _turn(ring: np.ndarray, prev: int, here: int, nxt: int) -> float:
    a = _trimmed(_span(ring, prev, here))
    b = _trimmed(_span(ring, here, nxt))
    da = a[-1] - a[0]
    db = b[-1] - b[0]
    cross = da[0] * db[1] - da[1] * db[0]
    return float(np.degrees(np.arctan2(cross, float(np.dot(da, db)))))


def _snap(ring: np.ndarray, prev: int, here: int, nxt: int) -> int:
    """Outline index nearest the intersection of the two sides' fitted lines."""
    a = _trimmed(_span(ring, prev, here))
    b = _trimmed(_span(ring, here, nxt))
    if len(a) < 8 or len(b) < 8:
        return here
    ca, da, _ = fit_line(a)
    cb, db, _ = fit_line(b)
    m = np.column_stack([da, -db])
    if abs(np.linalg.det(m)) < 1e-3:
        return here
    t = np.linalg.solve(m, cb - ca)
    corner = ca + t[0] * da
    n = len(ring)
    window = np.arange(here - 15, here + 16) % n
    return int(window[np.argmin(np.hypot(*(ring[window] - corner).T))])


def corners(ring: np.ndarray) -> list[int]:
    """Outline indices of the corners, in outline order."""
    n = len(ring)
    approx = cv2.approxPolyDP(ring.astype(np.float32).reshape(-1, 1, 2), DP_TOLERANCE, True)
    pts = approx.reshape(-1, 2).astype(np.float64)
    # approxPolyDP returns input points; recover their indices.
    tree_idx = [int(np.argmin(np.hypot(*(ring - p).T))) for p in pts]
    idx = sorted(set(tree_idx))
    # Drop the flattest vertex until every vertex turns enough (a convex piece turns left).
    while len(idx) > 3:
        turns = [_turn(ring, idx[i - 1], idx[i], idx[(i + 1) % len(idx)]) for i in range(len(idx))]
        k = int(np.argmin(turns))
        if turns[k] >= MIN_TURN:
            break
        idx.pop(k)
    snapped = [
        _snap(ring, idx[i - 1], idx[i], idx[(i + 1) % len(idx)]) for i in range(len(idx))
    ]
    out = sorted(set(snapped))
    return out if len(out) >= 2 else [0, n // 2]


def split_sides(ring: np.ndarray, piece: int = 0) -> list[Side]:
    cs = corners(ring)
    sides = []
    for i, a in enumerate(cs):
        b = cs[(i + 1) % len(cs)]
        pts = _span(ring, a, b)
        _, _, rms = fit_line(pts)
        chord = float(np.hypot(*(pts[-1] - pts[0])))
        border = rms < BORDER_RMS and chord >= BORDER_MIN_LENGTH
        sides.append(Side(piece=piece, index=i, start=a, points=pts, border=border))
    return sides
