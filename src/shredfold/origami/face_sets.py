"""Which faces cover each cell of the overlap graph, by walking across folded segments.

Crossing a segment toggles the faces whose crease-pattern edges lie along it an odd number
of times. A breadth-first walk from the outside gives every cell its set; a segment whose
two sides then disagree shows an inconsistent overlap graph. The walk is a compiled loop
over sorted face lists (the sets as Python frozensets cost more than the rest of the
overlap graph on small designs).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def _toggled(flat, lo, hi, tog, t_lo, t_hi, out):  # noqa: ANN001, ANN202
    """``flat[lo:hi]`` with ``tog[t_lo:t_hi]`` toggled (both ascending) into ``out``;
    returns the length written."""
    i, j, k = lo, t_lo, 0
    while i < hi or j < t_hi:
        if j >= t_hi or (i < hi and flat[i] < tog[j]):
            out[k] = flat[i]
            i += 1
        elif i >= hi or tog[j] < flat[i]:
            out[k] = tog[j]
            j += 1
        else:  # in both: toggled off
            i += 1
            j += 1
            continue
        k += 1
    return k


@njit(cache=True, nogil=True)
def walk_face_sets(n_loops, left, right, tog_ptr, tog, start, n_faces):  # noqa: ANN001, ANN201, PLR0913
    """Face sets of the loops of the overlap graph, from ``start`` (the outside, empty).

    Segment ``s`` separates loops ``left[s]`` and ``right[s]`` and toggles the faces
    ``tog[tog_ptr[s]:tog_ptr[s + 1]]`` (ascending). Loops are visited breadth-first, each
    one's segments in index order (a segment with one loop on both sides listed twice).
    Returns each loop's faces as ``flat[at[i]:at[i] + size[i]]`` (ascending; size -1 for a
    loop never reached) and the first segment found with sides that disagree (-1: none).
    """
    n_seg = len(left)
    deg = np.zeros(n_loops + 1, np.int64)
    for s in range(n_seg):
        deg[left[s] + 1] += 1
        deg[right[s] + 1] += 1
    adj_ptr = np.cumsum(deg)
    fill = adj_ptr[:-1].copy()
    adj_to = np.empty(2 * n_seg, np.int64)
    adj_seg = np.empty(2 * n_seg, np.int64)
    for s in range(n_seg):
        a, b = left[s], right[s]
        adj_to[fill[a]], adj_seg[fill[a]] = b, s
        fill[a] += 1
        adj_to[fill[b]], adj_seg[fill[b]] = a, s
        fill[b] += 1

    at = np.zeros(n_loops, np.int64)
    size = np.full(n_loops, -1, np.int64)
    flat = np.empty(max(16, 4 * n_loops), np.int64)
    used = 0
    tmp = np.empty(n_faces + 1, np.int64)
    queue = np.empty(n_loops, np.int64)
    head, tail = 0, 1
    queue[0] = start
    size[start] = 0
    while head < tail:
        a = queue[head]
        head += 1
        for p in range(adj_ptr[a], adj_ptr[a + 1]):
            b, s = adj_to[p], adj_seg[p]
            k = _toggled(flat, at[a], at[a] + size[a], tog, tog_ptr[s], tog_ptr[s + 1], tmp)
            if size[b] < 0:
                if used + k > len(flat):
                    grown = np.empty(2 * (used + k), np.int64)
                    grown[:used] = flat[:used]
                    flat = grown
                flat[used : used + k] = tmp[:k]
                at[b], size[b] = used, k
                used += k
                queue[tail] = b
                tail += 1
            else:
                if size[b] != k:
                    return flat[:used], at, size, s
                for m in range(k):
                    if flat[at[b] + m] != tmp[m]:
                        return flat[:used], at, size, s
    return flat[:used], at, size, -1
