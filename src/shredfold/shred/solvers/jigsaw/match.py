"""Pairwise side matching: which side of which scrap fits which, and with what pose.

Two Voronoi neighbours share a whole cut edge, jagged identically on both, so a true mate
of side A is a side B of (nearly) the same chord length whose points, walked backwards,
lie on A's. Each compatible pair is aligned chord-to-chord (B's end on A's start) and the
pose refined by ICP on the two point sets; the cost is the RMS gap that remains, which is
a fraction of a pixel for true mates and about the jag amplitude for others.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial import cKDTree

from shredfold.shred.solvers.jigsaw.geometry import angle_of, apply, fit
from shredfold.shred.solvers.jigsaw.sides import Side

LENGTH_TOLERANCE = 0.06  # relative chord-length difference allowed for mates ...
LENGTH_SLACK = 7.0  # ... plus this many px (corner placement error at both ends)
ICP_ITERATIONS = 12
INLIER_PX = 4.0
MAX_COST = 0.8  # px: pairs worse than this are not kept as candidates at all
EARLY_EXIT = 3  # ICP iterations after which a pair still above the cost cut is dropped
END_TRIM = 4  # px of each side's ends left out: corners are where shapes disagree most


@dataclass(frozen=True)
class Candidate:
    i: int  # piece holding side a
    a: int
    j: int  # piece holding side b
    b: int
    pose: np.ndarray  # 3x3: coordinates of piece j -> coordinates of piece i
    cost: float  # RMS gap in px over the overlap
    coverage: float  # share of b's points that found a partner on a
    length: float  # mean chord length of the two sides

    @property
    def rotation_deg(self) -> float:
        return float(np.degrees(angle_of(self.pose)))


def compatible(sa: Side, sb: Side) -> bool:
    if sa.border or sb.border or sa.piece == sb.piece:
        return False
    la, lb = sa.length, sb.length
    return abs(la - lb) <= LENGTH_SLACK + LENGTH_TOLERANCE * max(la, lb)


def chord_pose(sa: Side, sb: Side, *, scale: bool = False) -> np.ndarray:
    """Pose of b's piece putting b's end on a's start and b's start on a's end."""
    src = np.array([sb.points[-1], sb.points[0]])
    dst = np.array([sa.points[0], sa.points[-1]])
    return fit(src, dst, scale=scale)


def icp(
    sa: Side,
    sb: Side,
    tree: cKDTree,
    pose: np.ndarray,
    *,
    scale: bool = False,
    give_up: float = np.inf,
) -> tuple[np.ndarray, float, float]:
    """Refine ``pose`` of b's points onto a's; returns (pose, rms gap, coverage)."""
    pa = sa.points
    # Every other point: the outline is sampled at 1 px, far finer than the jag.
    pb = sb.points[END_TRIM : len(sb.points) - END_TRIM : 2]
    if len(pb) < 6:
        pb = sb.points
    last = len(pa) - 1
    rms, cover = np.inf, 0.0
    for it in range(ICP_ITERATIONS):
        moved = apply(pose, pb)
        dist, idx = tree.query(moved)
        # A partner at a's very end means b overhangs a there: not part of the overlap.
        keep = (dist < INLIER_PX) & (idx > 0) & (idx < last)
        if keep.sum() < 6:
            return pose, np.inf, 0.0
        rms = float(np.sqrt(np.mean(dist[keep] ** 2)))
        cover = float(keep.mean())
        # Most pairs are plainly wrong; stop paying for them once that is clear.
        if it == EARLY_EXIT and (rms > give_up or cover < 0.5):
            return pose, np.inf, 0.0
        step = fit(moved[keep], pa[idx[keep]], scale=scale)
        pose = step @ pose
        if abs(step[0, 1]) < 2e-5 and np.hypot(step[0, 2], step[1, 2]) < 5e-3:
            break
    moved = apply(pose, pb)
    dist, idx = tree.query(moved)
    keep = (dist < INLIER_PX) & (idx > 0) & (idx < last)
    if keep.sum() < 6:
        return pose, np.inf, 0.0
    # Point-to-curve distances: nearest-sample distance overstates the gap by up to half
    # a sample spacing, so measure to the segment through the neighbours.
    rms = float(np.sqrt(np.mean(_to_curve(moved[keep], pa, idx[keep]) ** 2)))
    cover = float(keep.mean())
    return pose, rms, cover


def _to_curve(pts: np.ndarray, curve: np.ndarray, idx: np.ndarray) -> np.ndarray:
    lo = np.clip(idx - 1, 0, len(curve) - 1)
    hi = np.clip(idx + 1, 0, len(curve) - 1)
    d = curve[hi] - curve[lo]
    n = np.column_stack([-d[:, 1], d[:, 0]])
    n /= np.maximum(np.hypot(n[:, 0], n[:, 1]), 1e-9)[:, None]
    return np.abs(((pts - curve[idx]) * n).sum(axis=1))


def candidates(
    sides: list[Side], *, scale: bool = False, max_cost: float = MAX_COST
) -> list[Candidate]:
    """Every plausible (side, side) pairing with its refined pose, cheapest first.

    Each unordered pair appears once, with the lower piece index as ``i``.
    """
    trees = {id(s): cKDTree(s.points) for s in sides if not s.border}
    out = []
    for ka, sa in enumerate(sides):
        for sb in sides[ka + 1 :]:
            if not compatible(sa, sb):
                continue
            if sa.piece > sb.piece:
                sa_, sb_ = sb, sa
            else:
                sa_, sb_ = sa, sb
            start = chord_pose(sa_, sb_, scale=scale)
            pose, cost, cover = icp(
                sa_, sb_, trees[id(sa_)], start, scale=scale, give_up=max_cost + 0.3
            )
            if cost <= max_cost and cover >= 0.8:
                out.append(
                    Candidate(sa_.piece, sa_.index, sb_.piece, sb_.index, pose, cost, cover,
                              0.5 * (sa_.length + sb_.length))
                )
    out.sort(key=lambda c: c.cost)
    return out

