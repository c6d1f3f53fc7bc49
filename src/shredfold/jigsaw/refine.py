"""Joint pose refinement of a cluster: every matched side pair pulls on both its pieces.

Chained pairwise poses drift (a tenth of a degree per join is a few pixels across a page);
loops through vertices where three pieces meet pin that down. Each round visits the pieces
outward from a fixed anchor, re-pairs the points of each of the piece's matched sides with
their nearest partners under the current poses and re-fits the piece's pose to them
(Gauss-Seidel: later pieces see the earlier ones' updates within the same round).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

import numpy as np
from scipy.spatial import cKDTree

from shredfold.jigsaw.geometry import apply, fit
from shredfold.jigsaw.sides import Side

INLIER_PX = 4.0


def _order(anchor: int, links: Sequence[tuple[Side, Side]]) -> list[int]:
    nbrs: dict[int, set[int]] = {}
    for a, b in links:
        nbrs.setdefault(a.piece, set()).add(b.piece)
        nbrs.setdefault(b.piece, set()).add(a.piece)
    seen, queue, out = {anchor}, deque([anchor]), []
    while queue:
        m = queue.popleft()
        out.append(m)
        for k in sorted(nbrs.get(m, ())):
            if k not in seen:
                seen.add(k)
                queue.append(k)
    return out


def refine(
    poses: list[np.ndarray],
    members: Sequence[int],
    links: Sequence[tuple[Side, Side]],
    *,
    rounds: int = 6,
    anchor: int | None = None,
    scale: bool = False,
) -> list[np.ndarray]:
    """Improved poses (a new list; poses of pieces outside ``members`` are unchanged)."""
    poses = [p.copy() for p in poses]
    inside = set(members)
    links = [(a, b) for a, b in links if a.piece in inside and b.piece in inside]
    if not links:
        return poses
    anchor = members[0] if anchor is None else anchor
    trees: dict[int, cKDTree] = {}
    for a, b in links:
        for s in (a, b):
            if id(s) not in trees:
                trees[id(s)] = cKDTree(s.points)
    by_piece: dict[int, list[tuple[Side, Side]]] = {}
    for a, b in links:
        by_piece.setdefault(a.piece, []).append((a, b))  # (own side, partner side)
        by_piece.setdefault(b.piece, []).append((b, a))
    order = [m for m in _order(anchor, links) if m != anchor]
    for _ in range(rounds):
        for m in order:
            src, dst = [], []
            for own, other in by_piece[m]:
                # The partner's points, placed by its current pose, in m's frame.
                q = other.points[::2]
                rel = np.linalg.inv(poses[m]) @ poses[other.piece]
                dist, idx = trees[id(own)].query(apply(rel, q))
                keep = (dist < INLIER_PX) & (idx > 0) & (idx < len(own.points) - 1)
                if keep.sum() < 4:
                    continue
                src.append(own.points[idx[keep]])
                dst.append(apply(poses[other.piece], q[keep]))
            if src:
                poses[m] = fit(np.vstack(src), np.vstack(dst), scale=scale)
    return poses
