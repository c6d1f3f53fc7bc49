"""The overlap graph of a folded state: folded edges arranged into cells, and which faces
cover each cell."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import shapely

from .arrangement import Arrangement, arrange, trace_faces
from .face_sets import walk_face_sets
from .folded import FoldedGeometry
from .graph import component_labels


class OverlapError(ValueError):
    """The folded edges do not form a consistent overlap graph (numerically broken input)."""


@dataclass(frozen=True, eq=False)
class Cells:
    arrangement: Arrangement  # segments of the folded state; sources are crease-pattern edges
    cell_faces: tuple[np.ndarray, ...]  # sorted face ids covering each cell
    segment_cells: np.ndarray  # (S, 2) cells on either side of each segment, -1 outside
    cell_loops: tuple[np.ndarray, ...]  # point ids around each cell, counter-clockwise
    eps: float


# The stability scan: snapping distances d / 2^k from the pattern's shortest edge d down,
# until the arrangement's point and edge counts stay the same over STABLE_SPAN halvings
# (no feature of the folded state lies between those scales, so any of them resolves it
# alike). Flat-Folder chooses its epsilon by the same principle, which is what makes the
# two count the same states on designs whose float noise has no clear scale.
STABLE_SPAN = 3
# the scan gives up once copies of one point are coming apart (the counts quadruple) or the
# distance nears double-precision noise relative to the sheet
_SCAN_GROWTH = 4.0
_SCAN_FLOOR = 2.0**-40


def stable_arrangement(geometry: FoldedGeometry) -> tuple[float, Arrangement] | None:
    """The first stable run of the scan: its smallest distance and that arrangement, or
    None when the counts never settle."""
    segs = np.take(geometry.vertices, geometry.pattern.edges, axis=0)
    d = float(np.hypot(*(segs[:, 1] - segs[:, 0]).T).min())
    floor = geometry.pattern.size * _SCAN_FLOOR
    seen: dict[int, tuple[tuple[int, int], Arrangement]] = {}

    def at(k: int) -> tuple[tuple[int, int], Arrangement]:
        if k not in seen:
            arr = arrange(segs, d / 2**k)
            seen[k] = ((len(arr.points), len(arr.edges)), arr)
        return seen[k]

    k = 3
    first = at(k)[0][0]
    while d / 2 ** (k + STABLE_SPAN) >= floor:
        # the counts grow as the distance shrinks (but for rare chains of merges), so
        # equal ends stand for a run of equal counts
        (lo, _), (hi, arr) = at(k), at(k + STABLE_SPAN)
        if lo == hi:
            return d / 2 ** (k + STABLE_SPAN), arr
        if hi[0] > _SCAN_GROWTH * first:
            return None
        # no run starts before the last change of counts up to k + STABLE_SPAN, so the
        # next start tried is that change, found walking back from the far end (on the
        # 366 designs this skips a sixth of the arrangements and chooses the same ones)
        j = k + STABLE_SPAN
        while j - 1 > k and at(j - 1)[0] == at(j)[0]:
            j -= 1
        k = j
    return None


def folded_tolerances(geometry: FoldedGeometry) -> list[float]:
    """Snapping distances to try when the scan finds no stable run, best guess first.

    The guess sits just above the pattern's own imprecision (how far faces disagree about
    a vertex); the others step away from it by factors of 4, down to the pattern's
    tolerance and up to a fraction of its shortest edge. Too small leaves copies of one
    point apart, too large merges distinct points; either shows as an inconsistent overlap
    graph, and the next distance is tried.
    """
    seg = geometry.pattern.segments
    shortest = float(np.hypot(*(seg[:, 1] - seg[:, 0]).T).min())
    floor, ceiling = geometry.pattern.eps, shortest / 8
    noise = max(geometry.closure_error, geometry.length_error)
    guess = min(max(floor, 2 * noise), ceiling)
    out = [guess]
    for k in range(1, 12):
        for eps in (guess / 4**k, guess * 4**k):
            if floor <= eps <= ceiling:
                out.append(eps)
    return out


def build_cells(geometry: FoldedGeometry, eps: float | None = None) -> Cells:
    """The overlap graph at ``eps``, or at the first distance that gives a consistent one:
    the stability scan's, then those of :func:`folded_tolerances`.

    The scan runs on every design: how far apart copies of one folded point lie is not
    told by how well the faces agree about each vertex (a pattern without interior
    vertices folds without any disagreement, whatever noise its coordinates carry)."""
    segs = np.take(geometry.vertices, geometry.pattern.edges, axis=0)
    if eps is not None:
        return _build_cells(geometry, eps, arrange(segs, eps))
    error: OverlapError | None = None
    stable = stable_arrangement(geometry)
    if stable is not None:
        try:
            return _build_cells(geometry, *stable)
        except OverlapError as exc:
            error = exc
    for eps in folded_tolerances(geometry):
        try:
            return _build_cells(geometry, eps, arrange(segs, eps))
        except OverlapError as exc:
            error = error or exc
    assert error is not None
    raise error


def _build_cells(geometry: FoldedGeometry, eps: float, arr: Arrangement) -> Cells:
    pattern = geometry.pattern
    traced = trace_faces(arr.points, arr.edges)
    n_loops = len(traced.loops)

    # loops of the same region: each extra component's outer loop lies inside some cell
    comp = component_labels(len(arr.points), arr.edges[:, 0], arr.edges[:, 1])
    n_comp = int(comp.max(initial=-1)) + 1
    outer = np.flatnonzero(traced.loop_areas <= 0)
    positive = np.flatnonzero(traced.loop_areas > 0)
    same_region = np.arange(n_loops)
    if n_comp > 1:
        biggest = outer[np.argmin(traced.loop_areas[outer])]
        polys = shapely.polygons([arr.points[traced.loops[i]] for i in positive])
        areas = traced.loop_areas[positive]
        tree = shapely.STRtree(polys)
        for lp in outer:
            if lp == biggest:
                continue
            pt = shapely.points(arr.points[traced.loops[lp][0]])
            hits = tree.query(pt, predicate="within")
            hits = [h for h in hits if comp[traced.loops[positive[h]][0]] != comp[traced.loops[lp][0]]]
            if hits:
                same_region[lp] = positive[min(hits, key=lambda h: areas[h])]
    region = same_region

    # faces toggled when crossing each segment
    ef = pattern.edges_faces
    n_seg = len(arr.edges)
    seg_of = np.repeat(np.arange(n_seg), np.diff(arr.sources_indptr))
    seg_of, face = np.repeat(seg_of, 2), np.take(ef, arr.sources, axis=0).ravel()
    inside = face >= 0
    key, count = np.unique(seg_of[inside] * pattern.n_faces + face[inside], return_counts=True)
    key = key[count % 2 == 1]  # a face crossed an even number of times stays as it was
    bounds = np.searchsorted(key, np.arange(n_seg + 1) * pattern.n_faces)

    hl = traced.halfedge_loop.reshape(-1, 2)
    start = int(outer[np.argmin(traced.loop_areas[outer])]) if len(outer) else 0
    flat, at, size, bad = walk_face_sets(
        n_loops, region[hl[:, 0]], region[hl[:, 1]], bounds, key % pattern.n_faces, start, pattern.n_faces
    )
    if bad >= 0:
        raise OverlapError(f"inconsistent face sets across folded segment {bad}")
    if size[start] > 0:
        raise OverlapError("faces cover the outside of the folded state")

    cell_id = np.full(n_loops, -1, dtype=np.int64)
    cell_id[positive] = np.arange(len(positive))
    # an empty bounded cell is a hole in the folded model: treat as outside
    cell_id[positive[(size[positive] <= 0) & (region[positive] == positive)]] = -1
    cell_id = cell_id[region]
    cell_faces = tuple(flat[at[i] : at[i] + max(size[i], 0)] for i in positive.tolist())
    seg_cells = np.stack([cell_id[hl[:, 0]], cell_id[hl[:, 1]]], axis=1)
    return Cells(
        arrangement=arr,
        cell_faces=cell_faces,
        segment_cells=seg_cells,
        cell_loops=tuple(traced.loops[i] for i in positive),
        eps=eps,
    )
