"""Planar arrangement of line segments and face tracing.

Both the crease pattern (segments on the sheet) and the overlap graph of a folded state
(folded edges, most of them lying on top of each other) are built here, so the snapping
rules are the same for both: points closer than ``eps`` are one point, and a point within
``eps`` of a segment splits it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from .proximity import cluster_points, first_equal_rows, overlapping_boxes, points_near_segments
from .splitting import crossings, split_segments


@dataclass(frozen=True, eq=False)
class Arrangement:
    """Points, edges between them, and for each edge the input segments lying along it."""

    points: np.ndarray  # (P, 2) float
    edges: np.ndarray  # (E, 2) int, u < v not required
    sources_indptr: np.ndarray  # CSR over edges: input segment ids of each edge
    sources: np.ndarray

    def edge_sources(self, e: int) -> np.ndarray:
        return self.sources[self.sources_indptr[e] : self.sources_indptr[e + 1]]


@dataclass(frozen=True, eq=False)
class Faces:
    """Face loops of a planar graph traced on the half-edge structure.

    Half-edge ``2e`` runs along edge ``e`` from ``edges[e, 0]`` to ``edges[e, 1]``;
    ``2e + 1`` runs back. ``halfedge_loop[h]`` is the loop on the left of ``h``.
    """

    loops: tuple[np.ndarray, ...]  # vertex ids, counter-clockwise for bounded faces
    loop_areas: np.ndarray  # signed; negative for the outer boundary of a component
    halfedge_loop: np.ndarray  # (2E,) int


def arrange(segments: np.ndarray, eps: float, seed_points: np.ndarray | None = None) -> Arrangement:
    """Split ``segments`` (S, 2, 2) at all crossings and touchings, merging coincident parts.

    ``seed_points`` come first in the output in their given order (when not merged), so an
    arrangement of an already planar graph keeps its vertex numbering.
    """
    segments = np.asarray(segments, dtype=float).reshape(-1, 2, 2)
    # A folded state stacks many layers: most of its segments are copies of a few. Copies
    # whose ends fall in the same eps-cells would merge anyway, so arrange one of each and
    # hand every copy the edges of its representative (crossing candidates grow with the
    # square of the copies).
    ends = np.floor(segments / eps).astype(np.int64).reshape(-1, 4)
    swap = (ends[:, 0] > ends[:, 2]) | ((ends[:, 0] == ends[:, 2]) & (ends[:, 1] > ends[:, 3]))
    # row gathers and masks below use np.take / np.compress: with numpy 1.26 fancy
    # indexing of 2-d arrays is several times slower, and the arrangement runs up to
    # a dozen times per design
    ends = np.where(swap[:, None], np.take(ends, [2, 3, 0, 1], axis=1), ends)
    first = first_equal_rows(ends)
    rep_order = np.flatnonzero(first == np.arange(len(first)))  # in input order
    if len(rep_order) == len(segments):
        return _arrange(segments, eps, seed_points)
    rank = np.empty(len(segments), np.int64)
    rank[rep_order] = np.arange(len(rep_order))
    uniq_of = rank[first]  # each input segment's representative, as an index of rep_order
    arr = _arrange(np.take(segments, rep_order, axis=0), eps, seed_points)
    # expand: edge e's sources are the copies of each representative source
    members = np.argsort(uniq_of, kind="stable")
    m_ptr = np.searchsorted(uniq_of[members], np.arange(len(rep_order) + 1))
    counts = m_ptr[arr.sources + 1] - m_ptr[arr.sources]
    edge_of = np.repeat(np.repeat(np.arange(len(arr.edges)), np.diff(arr.sources_indptr)), counts)
    total = int(counts.sum())
    offs = np.repeat(m_ptr[arr.sources] - np.cumsum(counts) + counts, counts) + np.arange(total)
    src = members[offs]
    order = np.lexsort((src, edge_of))
    indptr = np.searchsorted(edge_of[order], np.arange(len(arr.edges) + 1))
    return Arrangement(points=arr.points, edges=arr.edges, sources_indptr=indptr, sources=src[order])


def _arrange(segments: np.ndarray, eps: float, seed_points: np.ndarray | None) -> Arrangement:
    a, b = segments[:, 0], segments[:, 1]
    d = b - a
    length = np.hypot(d[:, 0], d[:, 1])
    keep = length > eps
    seg_ids = np.flatnonzero(keep)
    if len(seg_ids) == 0:
        empty = np.zeros(0, np.int64)
        return Arrangement(np.zeros((0, 2)), np.zeros((0, 2), np.int64), np.zeros(1, np.int64), empty)

    # candidate pairs by bounding boxes grown by eps
    lo = np.compress(keep, np.minimum(a, b), axis=0) - eps
    hi = np.compress(keep, np.maximum(a, b), axis=0) + eps
    qi, qj = overlapping_boxes(lo, hi)
    i, j = seg_ids[qi], seg_ids[qj]

    # proper crossings; touchings and overlaps are found below as points near segments
    cross, x = crossings(a, d, length, i, j, eps)

    seeds = np.zeros((0, 2)) if seed_points is None else np.asarray(seed_points, float)
    all_pts = np.concatenate([seeds, np.take(a, seg_ids, axis=0), np.take(b, seg_ids, axis=0), x])
    # one point per cluster, numbered by (and placed at) its first member, so seeds keep
    # their ids
    vid, first = cluster_points(all_pts, eps)
    points = np.take(all_pts, first, axis=0)

    # every vertex within eps of a segment splits it there; so do the clusters that took a
    # segment's own end points and crossings, however far a chain of merges moved them
    # (without that, a crossing merged into a point just over eps away leaves the two
    # segments crossing without a vertex, and the faces traced are not a subdivision)
    pv, ps = points_near_segments(points, np.take(segments, seg_ids, axis=0), eps)
    n_seeds, n_kept = len(seeds), len(seg_ids)
    own_vid = np.concatenate([vid[n_seeds : n_seeds + 2 * n_kept], vid[n_seeds + 2 * n_kept :].repeat(2)])
    pos_of = np.empty(len(segments), np.int64)
    pos_of[seg_ids] = np.arange(n_kept)
    own_seg = np.concatenate(
        [np.arange(n_kept), np.arange(n_kept), np.stack([pos_of[i[cross]], pos_of[j[cross]]], 1).ravel()]
    )
    points, edges, indptr, sources = split_segments(
        points, a, d, length, seg_ids[np.concatenate([ps, own_seg])], np.concatenate([pv, own_vid]), vid[:n_seeds]
    )
    return Arrangement(points=points, edges=edges, sources_indptr=indptr, sources=sources)


@njit(cache=True, nogil=True)
def _follow_loops(nxt, origin):  # noqa: ANN001, ANN202
    """Loops of the successor permutation ``nxt`` in order of their first half-edge: each
    half-edge's loop, and the loops' origin vertices, flat, with their bounds."""
    loop_of = np.full(len(nxt), -1, np.int64)
    flat = np.empty(len(nxt), np.int64)
    ptr = np.zeros(len(nxt) + 1, np.int64)
    n_loops = 0
    at = 0
    for h0 in range(len(nxt)):
        if loop_of[h0] >= 0:
            continue
        h = h0
        while loop_of[h] < 0:
            loop_of[h] = n_loops
            flat[at] = origin[h]
            at += 1
            h = nxt[h]
        n_loops += 1
        ptr[n_loops] = at
    return loop_of, flat, ptr[: n_loops + 1]


def trace_faces(points: np.ndarray, edges: np.ndarray) -> Faces:
    """Trace the loops of the planar graph (faces on the left of half-edges)."""
    n_e = len(edges)
    origin = np.empty(2 * n_e, dtype=np.int64)
    origin[0::2], origin[1::2] = edges[:, 0], edges[:, 1]
    dest = np.empty_like(origin)
    dest[0::2], dest[1::2] = edges[:, 1], edges[:, 0]
    vec = points[dest] - points[origin]
    angle = np.arctan2(vec[:, 1], vec[:, 0])
    order = np.lexsort((angle, origin))  # half-edges counter-clockwise around each vertex
    pos = np.empty_like(order)
    pos[order] = np.arange(len(order))
    start = np.searchsorted(origin[order], origin[order], side="left")
    end = np.searchsorted(origin[order], origin[order], side="right")
    # the half-edge just clockwise of h around its origin
    k = pos
    prev_k = np.where(k - 1 >= start[k], k - 1, end[k] - 1)
    cw = order[prev_k]
    twin = np.arange(2 * n_e) ^ 1
    nxt = cw[twin]

    loop_of, flat, ptr = _follow_loops(nxt, origin)
    loops = [flat[ptr[i] : ptr[i + 1]] for i in range(len(ptr) - 1)]
    # shoelace: each half-edge adds the cross product of its end points to its loop
    p, q = points[origin], points[dest]
    cross = p[:, 0] * q[:, 1] - q[:, 0] * p[:, 1]
    areas = 0.5 * np.bincount(loop_of, weights=cross, minlength=len(loops))
    return Faces(loops=tuple(loops), loop_areas=areas, halfedge_loop=loop_of)
