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
# shortest crease misplaces paper by the error times that crease's length. Kawasaki fails
# only when that is more than 1/8 of the pattern's shortest edge: the most the folded faces
# may disagree (layers._length_check) and the largest snapping distance of the overlap
# graph (cells.folded_tolerances), so a local check never rejects what the rest of the
# solver would resolve. Relative to the pattern's own smallest feature, the bound is the
# same whatever the scale, rotation or mirror image of the sheet; designs with a very short
# edge next to long creases (a 2-layer weave: 1.4e-4 against 0.04) need it.
_POSITION_FRACTION = 1 / 8
# The crimp test compares sectors, and a wrong "equal" crimps a sector that is not locally
# smallest (a 26.6-degree sector between two mountains beside a 29.7-degree one is a real
# big-little-big violation). Two sectors are equal only within the vertex's own angle noise:
# twice its Kawasaki residual, or 1/128 of the shortest edge seen from its shortest crease.
_CRIMP_FRACTION = 1 / 128
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
    seg = pattern.segments
    feature = float(np.hypot(*(seg[:, 1] - seg[:, 0]).T).min())
    position_tol = feature * _POSITION_FRACTION
    n_vert = len(pattern.vertices)
    indptr, eids = pattern.vertex_edge_lists
    owner = np.repeat(np.arange(n_vert), np.diff(indptr))
    folds = np.isin(pattern.assignments, ("M", "V", "U"))
    keep = folds[eids] & ~pattern.boundary_vertices[owner]
    # the folded creases at each interior vertex, still counter-clockwise and grouped
    eids, owner = eids[keep], owner[keep]
    if len(eids) == 0:
        return LocalReport(())
    letters = pattern.assignments[eids]
    degree = np.bincount(owner, minlength=n_vert)
    n_m = np.bincount(owner, weights=letters == "M", minlength=n_vert).astype(np.int64)
    n_v = np.bincount(owner, weights=letters == "V", minlength=n_vert).astype(np.int64)
    n_u = degree - n_m - n_v

    ends = pattern.edges[eids]
    other = np.where(ends[:, 0] == owner, ends[:, 1], ends[:, 0])
    vec = np.take(pattern.vertices, other, axis=0) - np.take(pattern.vertices, owner, axis=0)
    ang = np.arctan2(vec[:, 1], vec[:, 0])
    start = np.concatenate([[0], np.cumsum(degree)])[owner]
    pos = np.arange(len(eids)) - start
    last = pos == degree[owner] - 1
    nxt = np.where(last, start, np.arange(len(eids)) + 1)
    # sector i runs from crease i to the next one counter-clockwise
    sectors = ang[nxt] - ang + np.where(last, 2 * math.pi, 0.0)
    alt = np.bincount(owner, weights=np.where(pos % 2 == 0, sectors, -sectors), minlength=n_vert)
    shortest = np.full(n_vert, np.inf)
    np.minimum.at(shortest, owner, np.hypot(vec[:, 0], vec[:, 1]))
    with np.errstate(divide="ignore"):
        tol = np.maximum(_ANGLE_FLOOR, position_tol / shortest)
        crimp_tol = np.maximum(
            np.maximum(_ANGLE_FLOOR, feature * _CRIMP_FRACTION / shortest), 2 * np.abs(alt)
        )

    diff = np.abs(n_m - n_v)
    maekawa = (degree % 2 == 1) | (diff > 2 + n_u) | ((n_u == 0) & (diff != 2))
    kawasaki = (degree % 2 == 0) & (np.abs(alt) > tol)
    dangling = degree == 1
    out: list[VertexViolation] = []
    starts = np.concatenate([[0], np.cumsum(degree)])
    sector_list, letter_list = sectors.tolist(), letters.tolist()
    for v in np.flatnonzero(degree > 0).tolist():
        if dangling[v]:
            out.append(VertexViolation(v, "dangling", "a crease ends inside the sheet"))
            continue
        if maekawa[v]:
            out.append(VertexViolation(v, "maekawa", f"{n_m[v]} M, {n_v[v]} V, {n_u[v]} U"))
        if kawasaki[v]:
            out.append(
                VertexViolation(v, "kawasaki", f"alternating angle sum off by {alt[v]:.3g}")
            )
        if not (maekawa[v] or kawasaki[v]) and n_u[v] == 0:
            a, b = starts[v], starts[v + 1]
            bad = _crimp(sector_list[a:b], letter_list[a:b], float(crimp_tol[v]))
            if bad:
                out.append(VertexViolation(v, "crimp", bad))
    return LocalReport(tuple(out))


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
