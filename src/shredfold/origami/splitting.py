"""The arrangement's inner steps as compiled loops: where segments cross, and the edges
left when each segment is cut at the points found on it.

Each computes what the array code it replaced computed, operation for operation (no fused
multiply-add, the same sort order and tie-breaking), so arrangements are bit-identical;
numpy's per-call cost on a few hundred segments was most of an arrangement's time.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .proximity import FNV_OFFSET, mix


@njit(cache=True, nogil=True, error_model="numpy")
def crossings(a, d, length, i, j, eps):  # noqa: ANN001, ANN201
    """Proper crossings of the segment pairs (``i``, ``j``) (segment k runs from ``a[k]``
    along ``d[k]``): which pairs cross within ``eps`` of both segments, not nearly
    parallel, and the crossing points of those, in pair order."""
    n = len(i)
    cross = np.zeros(n, np.bool_)
    x = np.empty((n, 2))
    k = 0
    for p in range(n):
        ii, jj = i[p], j[p]
        r0, r1 = d[ii, 0], d[ii, 1]
        s0, s1 = d[jj, 0], d[jj, 1]
        denom = r0 * s1 - r1 * s0
        q0, q1 = a[jj, 0] - a[ii, 0], a[jj, 1] - a[ii, 1]
        t = (q0 * s1 - q1 * s0) / denom
        u = (q0 * r1 - q1 * r0) / denom
        sin = abs(denom) / (length[ii] * length[jj])
        ti, tj = eps / length[ii], eps / length[jj]
        # near-parallel pairs have an ill-defined crossing; if they touch, endpoints show it
        if sin > 1e-8 and t > -ti and t < 1 + ti and u > -tj and u < 1 + tj:
            cross[p] = True
            x[k, 0] = a[ii, 0] + t * r0
            x[k, 1] = a[ii, 1] + t * r1
            k += 1
    return cross, x[:k]


@njit(cache=True, nogil=True)
def _sort_bucket(par, idx, lo, hi):  # noqa: ANN001, ANN202
    """Sort ``idx[lo:hi]`` by ``par`` (stable: ties keep their order)."""
    if hi - lo > 32:
        part = idx[lo:hi]
        idx[lo:hi] = part[np.argsort(par[part], kind="mergesort")]
        return
    for m in range(lo + 1, hi):
        v = idx[m]
        w = m - 1
        while w >= lo and par[idx[w]] > par[v]:
            idx[w + 1] = idx[w]
            w -= 1
        idx[w + 1] = v


@njit(cache=True, nogil=True, error_model="numpy")
def split_segments(points, a, d, length, on_seg, on_vid, keep_vid):  # noqa: ANN001, ANN201, PLR0912, PLR0915
    """Cut each segment at the points found on it (``on_vid[k]`` lies on segment
    ``on_seg[k]``) and merge the pieces into edges.

    Points along a segment are ordered by their parameter (ties in input order); edges are
    numbered by first occurrence (segments in index order), each keeping the direction it
    first had and its segments in ascending order. Only points that end an edge, or are
    listed in ``keep_vid``, are kept; returns those points, the edges over them, and the
    edges' sources as CSR (pointers, segment ids).
    """
    n = len(on_seg)
    par = np.empty(n)
    for k in range(n):
        s, v = on_seg[k], on_vid[k]
        ln = length[s]
        par[k] = ((points[v, 0] - a[s, 0]) * d[s, 0] + (points[v, 1] - a[s, 1]) * d[s, 1]) / (ln * ln)
    # by segment (counting sort, stable), then by parameter within each segment
    n_seg = len(a)
    start = np.zeros(n_seg + 1, np.int64)
    for k in range(n):
        start[on_seg[k] + 1] += 1
    start = np.cumsum(start)
    fill = start.copy()
    idx = np.empty(n, np.int64)
    for k in range(n):
        s = on_seg[k]
        idx[fill[s]] = k
        fill[s] += 1
    for s in range(n_seg):
        if start[s + 1] - start[s] > 1:
            _sort_bucket(par, idx, start[s], start[s + 1])

    # consecutive points along each segment make an edge; equal edges merge
    size = 2
    while size < 2 * n:
        size *= 2
    mask = size - 1
    table = np.full(size, -1, np.int64)
    edges = np.empty((max(n, 1), 2), np.int64)
    n_edges = 0
    pair_edge = np.empty(max(n, 1), np.int64)
    pair_src = np.empty(max(n, 1), np.int64)
    n_pairs = 0
    for s in range(n_seg):
        for m in range(start[s], start[s + 1] - 1):
            u, v = on_vid[idx[m]], on_vid[idx[m + 1]]
            if u == v:
                continue
            lo_v, hi_v = min(u, v), max(u, v)
            h = mix(mix(np.int64(FNV_OFFSET), lo_v), hi_v)
            slot = (h ^ (h >> 29)) & mask
            while True:
                e = table[slot]
                if e < 0:
                    e = n_edges
                    table[slot] = e
                    edges[e, 0], edges[e, 1] = u, v
                    n_edges += 1
                    break
                if min(edges[e, 0], edges[e, 1]) == lo_v and max(edges[e, 0], edges[e, 1]) == hi_v:
                    break
                slot = (slot + 1) & mask
            pair_edge[n_pairs] = e
            pair_src[n_pairs] = s
            n_pairs += 1

    # sources per edge: pairs arrive in ascending segment order, so a stable counting sort
    # by edge leaves each edge's segments ascending; repeats are adjacent
    indptr = np.zeros(n_edges + 1, np.int64)
    for p in range(n_pairs):
        indptr[pair_edge[p] + 1] += 1
    indptr = np.cumsum(indptr)
    fill = indptr[:-1].copy()
    srcs = np.empty(n_pairs, np.int64)
    for p in range(n_pairs):
        e = pair_edge[p]
        srcs[fill[e]] = pair_src[p]
        fill[e] += 1
    out_ptr = np.zeros(n_edges + 1, np.int64)
    out_src = np.empty(n_pairs, np.int64)
    at = 0
    for e in range(n_edges):
        for p in range(indptr[e], indptr[e + 1]):
            if p == indptr[e] or srcs[p] != srcs[p - 1]:
                out_src[at] = srcs[p]
                at += 1
        out_ptr[e + 1] = at

    used = np.zeros(len(points), np.bool_)
    for v in keep_vid:
        used[v] = True
    for e in range(n_edges):
        used[edges[e, 0]] = True
        used[edges[e, 1]] = True
    remap = np.cumsum(used) - 1
    kept = np.empty((remap[-1] + 1 if len(points) else 0, 2))
    for v in range(len(points)):
        if used[v]:
            kept[remap[v], 0] = points[v, 0]
            kept[remap[v], 1] = points[v, 1]
    out_edges = np.empty((n_edges, 2), np.int64)
    for e in range(n_edges):
        out_edges[e, 0] = remap[edges[e, 0]]
        out_edges[e, 1] = remap[edges[e, 1]]
    return kept, out_edges, out_ptr, out_src[:at]
