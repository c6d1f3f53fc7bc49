"""Which points lie near which points and segments, as compiled loops.

The arrangement runs up to a dozen times per design, on a few hundred points and segments,
where the fixed cost of building a KD-tree or an STR-tree and calling into GEOS per pair
outweighs the search. These loops give the same answers as the calls they replace, pair
for pair, rounding included: ``scipy.spatial.cKDTree.query_pairs`` (a pair is near when
``dx*dx + dy*dy <= r*r``; its rectangle pruning never changes that answer, as the bounds
round the same way as the pairs inside them) and shapely's ``STRtree.query(points,
predicate="dwithin")`` with GEOS 3.14 (the query box, the envelope distance and
``Distance::pointToSegment``, each computed as GEOS does). The snapping distance the
stability scan chooses depends on these answers at the margin, so "almost the same" would
change which distance is chosen on some designs. Division follows IEEE (``error_model
"numpy"``), as the C code does: a segment too short for its squared length to be
representable is near nothing instead of raising.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

# FNV-1a over 64-bit words: the offset basis (0xcbf29ce484222325 as int64) and the prime
FNV_OFFSET = -3750763034362895579
FNV_PRIME = 0x100000001B3


@njit(cache=True, nogil=True, error_model="numpy")
def mix(h, v):  # noqa: ANN001, ANN201
    """One FNV-1a step: ``h`` with the word ``v`` folded in (int64, wrapping)."""
    return (h ^ v) * FNV_PRIME


@njit(cache=True, nogil=True, error_model="numpy")
def first_equal_rows(keys):  # noqa: ANN001, ANN201
    """For each row of the int64 array ``keys`` (n, k), the index of the first row equal
    to it (open addressing on a table of at least twice n slots)."""
    n, k = keys.shape
    size = 2
    while size < 2 * n:
        size *= 2
    mask = size - 1
    table = np.full(size, -1, np.int64)
    first = np.empty(n, np.int64)
    for i in range(n):
        h = np.int64(FNV_OFFSET)
        for c in range(k):
            h = mix(h, keys[i, c])
        slot = (h ^ (h >> 29)) & mask
        while True:
            j = table[slot]
            if j < 0:
                table[slot] = i
                first[i] = i
                break
            same = True
            for c in range(k):
                if keys[j, c] != keys[i, c]:
                    same = False
                    break
            if same:
                first[i] = j
                break
            slot = (slot + 1) & mask
    return first


@njit(cache=True, nogil=True, error_model="numpy")
def find_root(parent, i):  # noqa: ANN001, ANN201
    """The root of ``i`` in the union-find forest ``parent``, compressing the path."""
    root = i
    while parent[root] != root:
        root = parent[root]
    while parent[i] != root:
        parent[i], i = root, parent[i]
    return root


@njit(cache=True, nogil=True, error_model="numpy")
def _lower_bound(cx, cy, tx, ty):  # noqa: ANN001, ANN202
    """First position in the lexicographically sorted pairs (cx, cy) not below (tx, ty)."""
    lo, hi = 0, len(cx)
    while lo < hi:
        mid = (lo + hi) // 2
        if cx[mid] < tx or (cx[mid] == tx and cy[mid] < ty):
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True, error_model="numpy")
def cluster_points(points, eps):  # noqa: ANN001, ANN201
    """Union points closer than ``eps``: each point's cluster, clusters numbered by their
    first member, and that member's index per cluster.

    As the arrangement always has: copies on the grid of pitch ``eps`` are one point, and
    grid representatives (each cell's first point) join when cKDTree's ``query_pairs(2 *
    eps)`` would pair them.
    """
    n = len(points)
    cells = np.empty((n, 2), np.int64)
    for i in range(n):
        cells[i, 0] = np.int64(np.floor(points[i, 0] / eps))
        cells[i, 1] = np.int64(np.floor(points[i, 1] / eps))
    first = first_equal_rows(cells)
    reps = np.flatnonzero(first == np.arange(n))
    m = len(reps)
    rx, ry = cells[reps, 0], cells[reps, 1]
    order = np.argsort(ry, kind="mergesort")
    order = order[np.argsort(rx[order], kind="mergesort")]
    sx, sy = rx[order], ry[order]
    parent = np.arange(m)
    r = 2.0 * eps
    bound = r * r
    # a pair within 2 eps lies at most 2 cells apart; one more for the rounding of p / eps
    for s in range(m):
        g = order[s]
        pg = points[reps[g]]
        for dx in range(-3, 4):
            at = _lower_bound(sx, sy, sx[s] + dx, sy[s] - 3)
            while at < m and sx[at] == sx[s] + dx and sy[at] <= sy[s] + 3:
                if at > s:
                    ph = points[reps[order[at]]]
                    d0 = pg[0] - ph[0]
                    d1 = pg[1] - ph[1]
                    if d0 * d0 + d1 * d1 <= bound:
                        a, b = find_root(parent, g), find_root(parent, order[at])
                        if a != b:
                            parent[max(a, b)] = min(a, b)
                at += 1
    rep_of = np.empty(n, np.int64)  # each cell's representative, as an index of reps
    rep_of[reps] = np.arange(m)
    vid = np.empty(n, np.int64)
    cluster_of_root = np.full(m, -1, np.int64)
    firsts = np.empty(n, np.int64)
    n_clusters = 0
    for i in range(n):
        root = find_root(parent, rep_of[first[i]])
        if cluster_of_root[root] < 0:
            cluster_of_root[root] = n_clusters
            firsts[n_clusters] = i
            n_clusters += 1
        vid[i] = cluster_of_root[root]
    return vid, firsts[:n_clusters]


@njit(cache=True, nogil=True, error_model="numpy")
def _geos_within(px, py, ax, ay, bx, by, eps):  # noqa: ANN001, ANN202
    """GEOS 3.14's answer to a point within ``eps`` of the line string A-B, as shapely's
    STRtree dwithin query reaches it: the query box, the envelope distance, then
    ``Distance::pointToSegment``."""
    lminx, lmaxx = min(ax, bx), max(ax, bx)
    lminy, lmaxy = min(ay, by), max(ay, by)
    if not (lminx <= px + eps and lmaxx >= px - eps and lminy <= py + eps and lmaxy >= py - eps):
        return False
    ex = max(0.0, max(px, lmaxx) - min(px, lminx) - (px - px) - (lmaxx - lminx))
    ey = max(0.0, max(py, lmaxy) - min(py, lminy) - (py - py) - (lmaxy - lminy))
    if math.sqrt(ex * ex + ey * ey) > eps:
        return False
    if ax == bx and ay == by:
        dx, dy = px - ax, py - ay
        return math.sqrt(dx * dx + dy * dy) <= eps
    len2 = (bx - ax) * (bx - ax) + (by - ay) * (by - ay)
    r = ((px - ax) * (bx - ax) + (py - ay) * (by - ay)) / len2
    if r <= 0.0:
        dx, dy = px - ax, py - ay
        return math.sqrt(dx * dx + dy * dy) <= eps
    if r >= 1.0:
        dx, dy = px - bx, py - by
        return math.sqrt(dx * dx + dy * dy) <= eps
    s = ((ay - py) * (bx - ax) - (ax - px) * (by - ay)) / len2
    return abs(s) * math.sqrt(len2) <= eps


@njit(cache=True, nogil=True, error_model="numpy")
def _cell(v, v0, h, n):  # noqa: ANN001, ANN202
    return min(n - 1, max(0, int(math.floor((v - v0) / h))))


@njit(cache=True, nogil=True, error_model="numpy")
def _enter(s, j, x0, y0, h, nx, ny, margin, counts, members, fill):  # noqa: ANN001, ANN202, PLR0913
    """Segment ``j`` into the cells its path crosses: counted (``fill`` is ``counts``) or
    written at ``fill``'s positions."""
    ax, ay, bx, by = s[0, 0], s[0, 1], s[1, 0], s[1, 1]
    counting = len(members) == 0
    for rr in range(_cell(min(ay, by) - margin, y0, h, ny), _cell(max(ay, by) + margin, y0, h, ny) + 1):
        lo_y, hi_y = y0 + rr * h - margin, y0 + (rr + 1) * h + margin
        # the part of the segment inside this row's band (widened), as x bounds
        if ay == by:
            xa, xb = min(ax, bx), max(ax, bx)
        else:
            ta = (lo_y - ay) / (by - ay)
            tb = (hi_y - ay) / (by - ay)
            t0 = max(0.0, min(ta, tb))
            t1 = min(1.0, max(ta, tb))
            if t0 > t1:
                continue
            xa = ax + t0 * (bx - ax)
            xb = ax + t1 * (bx - ax)
            xa, xb = min(xa, xb), max(xa, xb)
        for cc in range(_cell(xa - margin, x0, h, nx), _cell(xb + margin, x0, h, nx) + 1):
            cell = rr * nx + cc
            if counting:
                counts[cell + 1] += 1
            else:
                members[fill[cell]] = j
                fill[cell] += 1


@njit(cache=True, nogil=True, error_model="numpy")
def points_near_segments(points, seg, eps):  # noqa: ANN001, ANN201
    """Pairs (point, segment) with the point within ``eps`` of the segment ``seg`` (S, 2,
    2), ordered by point (as shapely's query orders them by input geometry).

    Candidates come from a uniform grid: each segment is entered in the cells of its path
    (per row of cells, the columns its part in that row's band spans), widened by more
    than the query's own reach, so the exact test sees every pair GEOS would.
    """
    n_p, n_s = len(points), len(seg)
    empty = np.zeros(0, np.int64)
    if n_p == 0 or n_s == 0:
        return empty, empty
    x0 = min(points[:, 0].min(), seg[:, :, 0].min())
    y0 = min(points[:, 1].min(), seg[:, :, 1].min())
    x1 = max(points[:, 0].max(), seg[:, :, 0].max())
    y1 = max(points[:, 1].max(), seg[:, :, 1].max())
    extent = max(x1 - x0, y1 - y0, eps)
    side = max(1, min(1024, int(math.sqrt(n_s + n_p))))
    h = extent / side
    margin = 2.0 * eps + 1e-9 * extent
    nx = int((x1 - x0) / h) + 2
    ny = int((y1 - y0) / h) + 2

    counts = np.zeros(nx * ny + 1, np.int64)
    members = np.empty(0, np.int64)
    for j in range(n_s):
        _enter(seg[j], j, x0, y0, h, nx, ny, margin, counts, members, counts)
    counts = np.cumsum(counts)
    fill = counts.copy()
    members = np.empty(counts[-1], np.int64)
    for j in range(n_s):
        _enter(seg[j], j, x0, y0, h, nx, ny, margin, counts, members, fill)
    # room for every candidate: arrays grown inside the loop would cost more than the loop
    room = 0
    for i in range(n_p):
        cell = _cell(points[i, 1], y0, h, ny) * nx + _cell(points[i, 0], x0, h, nx)
        room += counts[cell + 1] - counts[cell]
    pv = np.empty(room, np.int64)
    ps = np.empty(room, np.int64)
    k = 0
    for i in range(n_p):
        px, py = points[i, 0], points[i, 1]
        cell = _cell(py, y0, h, ny) * nx + _cell(px, x0, h, nx)
        for at in range(counts[cell], counts[cell + 1]):
            j = members[at]
            if _geos_within(px, py, seg[j, 0, 0], seg[j, 0, 1], seg[j, 1, 0], seg[j, 1, 1], eps):
                pv[k] = i
                ps[k] = j
                k += 1
    return pv[:k], ps[:k]


@njit(cache=True, nogil=True, error_model="numpy")
def _counting_order(key, n):  # noqa: ANN001, ANN202
    """The stable order of ``key`` (values in range(n))."""
    start = np.zeros(n + 1, np.int64)
    for k in key:
        start[k + 1] += 1
    start = np.cumsum(start)
    order = np.empty(len(key), np.int64)
    for k in range(len(key)):
        order[start[key[k]]] = k
        start[key[k]] += 1
    return order


@njit(cache=True, nogil=True, error_model="numpy")
def _sweep(lo, hi, order, pa, pb):  # noqa: ANN001, ANN202
    """The pairs of boxes meeting, found along ``order`` (by lower x), as (lower id, higher
    id) into ``pa``/``pb`` when they are long enough; returns how many there are. (Called
    once to count and once to fill: growing the arrays inside the loop costs six times as
    much.)"""
    n = len(lo)
    store = len(pa) > 0
    found = 0
    for p in range(n):
        i = order[p]
        for q in range(p + 1, n):
            j = order[q]
            if lo[j, 0] > hi[i, 0]:
                break
            if hi[j, 0] >= lo[i, 0] and lo[j, 1] <= hi[i, 1] and hi[j, 1] >= lo[i, 1]:
                if store:
                    pa[found] = min(i, j)
                    pb[found] = max(i, j)
                found += 1
    return found


@njit(cache=True, nogil=True, error_model="numpy")
def overlapping_boxes(lo, hi):  # noqa: ANN001, ANN201
    """Pairs (i, j), i < j, of boxes (``lo[k]``, ``hi[k]`` corners) whose closed extents
    meet, as GEOS's envelope test decides, ordered by i then j.

    A sweep along x (each box against the boxes starting within its x-extent), then a
    counting sort by j and one by i: folded states stack their boxes, so a grid would
    visit each pair in many cells.
    """
    n = len(lo)
    order = np.argsort(lo[:, 0])  # ties in any order: every pair is tested from one side
    found = _sweep(lo, hi, order, np.empty(0, np.int64), np.empty(0, np.int64))
    pa = np.empty(found, np.int64)
    pb = np.empty(found, np.int64)
    if found:
        _sweep(lo, hi, order, pa, pb)
    # by i then j: two stable counting sorts, by j and then by i
    by_j = _counting_order(pb, n)
    by_i = by_j[_counting_order(pa[by_j], n)]
    out_i = np.empty(found, np.int64)
    out_j = np.empty(found, np.int64)
    for k in range(found):
        out_i[k], out_j[k] = pa[by_i[k]], pb[by_i[k]]
    return out_i, out_j


@njit(cache=True, nogil=True, error_model="numpy")
def smallest_gap(points, t, k):  # noqa: ANN001, ANN201
    """The smallest distance above ``t`` between two points, one of which has fewer than
    ``k`` points (itself and copies included) within ``t``; ``inf`` when there is none.

    This is what ``cKDTree(points).query(points, k)`` reads when its distances above ``t``
    are kept and the first column dropped: a point with fewer than k points within ``t``
    lists every point up to its nearest beyond ``t``; one with k or more lists none beyond.
    Distances are ``sqrt(dx*dx + dy*dy)`` as cKDTree computes them.
    """
    first = first_equal_rows(points.view(np.int64))
    uniq = np.flatnonzero(first == np.arange(len(points)))
    mult = np.zeros(len(points), np.int64)
    for i in range(len(points)):
        mult[first[i]] += 1
    order = uniq[np.argsort(points[uniq, 0])]
    m = len(order)
    # points within t of each: copies, then neighbours along x on both sides
    near = np.empty(m, np.int64)
    for a in range(m):
        p = order[a]
        count = mult[p]
        for step in (-1, 1):
            b = a + step
            while 0 <= b < m:
                q = order[b]
                dx = points[q, 0] - points[p, 0]
                if abs(dx) > t:
                    break
                dy = points[q, 1] - points[p, 1]
                if math.sqrt(dx * dx + dy * dy) <= t:
                    count += mult[q]
                b += step
        near[a] = count
    best = np.inf
    for a in range(m):
        p = order[a]
        for b in range(a + 1, m):
            q = order[b]
            dx = points[q, 0] - points[p, 0]
            if dx * dx >= best:
                break
            if near[a] >= k and near[b] >= k:
                continue
            dy = points[q, 1] - points[p, 1]
            d2 = dx * dx + dy * dy
            if d2 < best and math.sqrt(d2) > t:
                best = d2
    return math.sqrt(best)
