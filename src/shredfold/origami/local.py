"""Local flat-foldability at each interior vertex: Maekawa, Kawasaki and the crimp test."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from .pattern import CreasePattern

Rule = Literal["maekawa", "kawasaki", "crimp", "dangling"]

# Designs are stored with a few digits, so their angles are off by up to ~1e-3 rad. What
# matters is where that moves the folded paper: an angle error seen from the vertex's
# shortest crease must stay a small fraction of the pattern's shortest edge.
_POSITION_FRACTION = 1 / 128
_ANGLE_FLOOR = 1e-9


@dataclass(frozen=True)
class VertexViolation:
    vertex: int
    rule: Rule
    detail: str


@dataclass(frozen=True)
class LocalReport:
    violations: tuple[VertexViolation, ...]

    @property
    def ok(self) -> bool:
        return not self.violations

    def vertices(self, rule: Rule | None = None) -> list[int]:
        return sorted({v.vertex for v in self.violations if rule is None or v.rule == rule})


def check_local(pattern: CreasePattern) -> LocalReport:
    """Check every interior vertex that has folded creases.

    Unassigned (U) creases count as either letter for Maekawa; the crimp test, which needs
    the letters, runs only where every crease is M or V.
    """
    out: list[VertexViolation] = []
    seg = pattern.segments
    feature = float(np.hypot(*(seg[:, 1] - seg[:, 0]).T).min())
    folds = np.isin(pattern.assignments, ("M", "V", "U"))
    for v, eids in enumerate(pattern.vertex_edges):
        if pattern.boundary_vertices[v]:
            continue
        creases = eids[folds[eids]]
        if len(creases) == 0:
            continue
        out.extend(_check_vertex(pattern, v, creases, feature * _POSITION_FRACTION))
    return LocalReport(tuple(out))


def _check_vertex(
    pattern: CreasePattern, v: int, creases: np.ndarray, position_tol: float
) -> list[VertexViolation]:
    letters = pattern.assignments[creases]
    n_m, n_v, n_u = (int(np.sum(letters == c)) for c in "MVU")
    n = len(creases)
    if n == 1:
        return [VertexViolation(v, "dangling", "a crease ends inside the sheet")]
    out = []
    if n % 2 or abs(n_m - n_v) > 2 + n_u or (n_u == 0 and abs(n_m - n_v) != 2) or (
        n_u and (n_m + n_v + n_u) % 2
    ):
        out.append(VertexViolation(v, "maekawa", f"{n_m} M, {n_v} V, {n_u} U"))
    ends = pattern.edges[creases]
    other = np.where(ends[:, 0] == v, ends[:, 1], ends[:, 0])
    vec = pattern.vertices[other] - pattern.vertices[v]
    # vertex_edges is already counter-clockwise, so sectors are consecutive differences
    ang = np.arctan2(vec[:, 1], vec[:, 0])
    sectors = np.diff(np.concatenate([ang, ang[:1] + 2 * math.pi]))
    tol = max(_ANGLE_FLOOR, position_tol / float(np.hypot(*vec.T).min()))
    if n % 2 == 0:
        alt = float(sectors[0::2].sum() - sectors[1::2].sum())
        if abs(alt) > tol:
            out.append(VertexViolation(v, "kawasaki", f"alternating angle sum off by {alt:.3g}"))
    if not out and n_u == 0:
        bad = _crimp(list(sectors), list(letters), tol)
        if bad:
            out.append(VertexViolation(v, "crimp", bad))
    return out


def _crimp(sectors: list[float], letters: list[str], tol: float) -> str:
    """Repeatedly crimp a locally smallest sector bounded by a mountain and a valley.

    ``letters[i]`` is the crease at the start of ``sectors[i]``. A single-vertex pattern
    satisfying Kawasaki folds flat exactly when crimps reduce it to two creases; when no
    locally smallest sector has opposite letters, the big-little-big lemma is violated.
    """
    while len(sectors) > 2:
        n = len(sectors)
        for i in range(n):
            small = sectors[i] <= sectors[i - 1] + tol and sectors[i] <= sectors[(i + 1) % n] + tol
            if small and letters[i] != letters[(i + 1) % n]:
                # rotate so the crimped sector is at index 1, then fold its neighbours in
                k = (i - 1) % n
                s_, l_ = sectors[k:] + sectors[:k], letters[k:] + letters[:k]
                sectors = [s_[0] - s_[1] + s_[2], *s_[3:]]
                letters = [l_[0], *l_[3:]]
                break
        else:
            return "no locally smallest sector lies between a mountain and a valley"
    return ""
