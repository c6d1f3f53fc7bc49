"""Layer-order variables and constraints, as integer arrays and lookup tables.

A variable is an unordered pair of faces that share a cell; its value is 1 when the lower
face id lies above (towards +z) the higher one, 2 when below, 0 while unknown. Each
constraint type lists the face pairs it reads; its valid value tuples are derived here from
what the constraint means (which total orders of its faces are physically possible), and
from those come a table of consequences for every partial assignment and a CNF.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cache, cached_property, lru_cache

import numpy as np
from numba import njit
from scipy.sparse import csr_matrix

from .cells import Cells
from .folded import FoldedGeometry
from .graph import component_labels
from .proximity import find_root

TACO_TACO, TACO_TORTILLA, TORTILLA_TORTILLA, TRANSITIVITY = range(4)
NAMES = ("taco-taco", "taco-tortilla", "tortilla-tortilla", "transitivity")

# the face pairs (by position in the constraint's face tuple) each type reads
PAIRS = (
    ((0, 1), (2, 3), (2, 1), (0, 3), (0, 2), (1, 3)),
    ((0, 2), (2, 1)),
    ((0, 2), (1, 3)),
    ((0, 1), (1, 2), (2, 0)),
)
N_FACES = (4, 3, 4, 3)

# status codes of a partial assignment of one constraint
CONFLICT, ALIVE, DEAD, IMPLIES = 0, 1, 2, 3


def _from_orders(n: int, pairs: tuple[tuple[int, int], ...], ok) -> set[tuple[int, ...]]:
    valid = set()
    for perm in itertools.permutations(range(n)):
        height = {face: -pos for pos, face in enumerate(perm)}  # perm lists top to bottom
        if ok(height):
            valid.add(tuple(1 if height[x] > height[y] else 2 for x, y in pairs))
    return valid


def _between(h: dict[int, int], c: int, a: int, b: int) -> bool:
    return min(h[a], h[b]) < h[c] < max(h[a], h[b])


@cache
def valid_tuples(kind: int) -> frozenset[tuple[int, ...]]:
    if kind == TACO_TACO:
        # two tacos folded at the same line on the same side nest or stack, never interleave
        return frozenset(
            _from_orders(
                4, PAIRS[kind], lambda h: _between(h, 2, 0, 1) == _between(h, 3, 0, 1)
            )
        )
    if kind == TACO_TORTILLA:
        # a layer passing straight through the taco's fold line cannot lie inside the taco
        return frozenset(_from_orders(3, PAIRS[kind], lambda h: not _between(h, 2, 0, 1)))
    if kind == TORTILLA_TORTILLA:
        # two flat joins along the same line: both sides keep the same relative order
        return frozenset({(1, 1), (2, 2)})
    # three layers of one cell: no cycle
    return frozenset(_from_orders(3, PAIRS[kind], lambda h: True))


@dataclass(frozen=True)
class Table:
    """For every partial tuple (base-3 code, position i has weight 3**i): its status and
    the value each unassigned position is forced to (0 when free)."""

    status: np.ndarray  # (3**k,) int8
    forced: np.ndarray  # (3**k, k) int8
    clauses: tuple[tuple[int, ...], ...]  # CNF: +(i+1) means position i == 1


@cache
def table(kind: int) -> Table:
    k = len(PAIRS[kind])
    full = np.array(list(itertools.product((1, 2), repeat=k)), np.int8)  # (2**k, k)
    ok = np.array([tuple(t) in valid_tuples(kind) for t in full.tolist()])
    codes = np.arange(3**k)
    part = (codes[:, None] // 3 ** np.arange(k)) % 3  # (3**k, k) partial tuples
    # which full tuples complete each partial one
    fits = ((part[:, None, :] == 0) | (part[:, None, :] == full[None, :, :])).all(axis=2)
    good = fits & ok[None, :]
    n_good = good.sum(axis=1)
    forced = np.zeros((3**k, k), np.int8)
    for value in (1, 2):
        # a free position is forced when every valid completion gives it the same value
        same = ((full[None, :, :] == value) | ~good[:, :, None]).all(axis=1)
        forced[same & (part == 0) & (n_good[:, None] > 0)] = value
    status = np.full(3**k, ALIVE, np.int8)
    status[n_good == fits.sum(axis=1)] = DEAD
    status[(forced > 0).any(axis=1)] = IMPLIES
    status[n_good == 0] = CONFLICT
    return Table(status=status, forced=forced, clauses=_cnf(part, fits, ok))


def _cnf(part: np.ndarray, fits: np.ndarray, ok: np.ndarray) -> tuple[tuple[int, ...], ...]:
    """A small CNF: prime forbidden cubes (partial tuples all of whose completions are
    invalid, and no more general such cube), greedily covering every invalid tuple."""
    forbidden = ~(fits & ok[None, :]).any(axis=1)
    cubes = np.flatnonzero(forbidden)
    members = fits[cubes]  # (c, 2**k)
    # a cube is prime when no other forbidden cube covers strictly more tuples
    covers = (members[:, None, :] <= members[None, :, :]).all(axis=2)
    strictly = covers & (members.sum(axis=1)[:, None] < members.sum(axis=1)[None, :])
    primes = cubes[~strictly.any(axis=1)]
    left = ~ok
    clauses = []
    while left.any():
        gain = (fits[primes] & left).sum(axis=1)
        width = (part[primes] > 0).sum(axis=1)
        best = primes[np.lexsort((width, -gain))[0]]
        left &= ~fits[best]
        # forbid the cube: at least one fixed position differs
        clauses.append(
            tuple(-(i + 1) if v == 1 else (i + 1) for i, v in enumerate(part[best].tolist()) if v)
        )
    return tuple(clauses)


@dataclass(frozen=True, eq=False)
class Problem:
    """Variables and constraints of one folded state."""

    n_faces: int
    pairs: np.ndarray  # (B, 2) face pairs, lower id first
    cons_vars: tuple[np.ndarray, ...]  # per type: (m, k) variable index of each pair read
    cons_flip: tuple[np.ndarray, ...]  # per type: (m, k) True where the pair is (higher, lower)
    cons_faces: tuple[np.ndarray, ...]  # per type: (m, n) faces of each constraint
    initial: np.ndarray  # (B,) int8 values implied by mountain/valley creases

    @property
    def n_vars(self) -> int:
        return len(self.pairs)

    @cached_property
    def compiled_arrays(self) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
        """Per type, C-contiguous, what the compiled loops (``propagation``,
        ``components``) read: ``2 * variable + flip``, the position of each value read in
        the two-sided value array (each value as read by the lower face, then by the
        higher); the variables; the flips. int32 halves the bytes they gather."""
        cvars = tuple(np.ascontiguousarray(v, np.int32) for v in self.cons_vars)
        flips = tuple(np.ascontiguousarray(f, np.bool_) for f in self.cons_flip)
        signed = tuple((v << 1) | f for v, f in zip(cvars, flips, strict=True))
        return signed, cvars, flips

    @cached_property
    def _pair_index(self) -> KeyIndex:
        return KeyIndex(self.pairs[:, 0] * self.n_faces + self.pairs[:, 1], self.n_faces**2)

    def var_index(
        self, f: np.ndarray, g: np.ndarray, *, strict: bool = True
    ) -> tuple[np.ndarray, np.ndarray]:
        """Variable of each face pair (-1 where the faces share no cell, unless ``strict``)
        and whether the pair is read from the higher face's side."""
        lo, hi = np.minimum(f, g), np.maximum(f, g)
        idx = self._pair_index(lo * self.n_faces + hi)
        if strict and np.any(idx < 0):
            raise ValueError("constraint reads a pair of faces that do not overlap")
        return idx, f > g


# a dense key -> position table up to this many entries (int32: 64 MB), binary search above
DENSE_KEYS = 1 << 24


class KeyIndex:
    """Position of integer keys in a sorted array of distinct keys in [0, space), -1 where
    absent."""

    def __init__(self, keys: np.ndarray, space: int) -> None:
        self.keys = keys
        self.table: np.ndarray | None = None
        if space <= DENSE_KEYS:
            self.table = np.full(max(space, 1), -1, np.int32)
            self.table[keys] = np.arange(len(keys), dtype=np.int32)

    def __call__(self, key: np.ndarray) -> np.ndarray:
        if self.table is not None:
            return self.table[key].astype(np.int64)
        if len(self.keys) == 0:
            return np.full(len(key), -1, np.int64)
        idx = np.minimum(np.searchsorted(self.keys, key), len(self.keys) - 1)
        return np.where(self.keys[idx] == key, idx, -1)


@lru_cache(maxsize=256)
def _all_subsets(m: int, r: int) -> np.ndarray:
    """Index rows i < j (< k) of all r-subsets (r in 2, 3) of range(m), ordered by i."""
    if r == 2:
        i, j = np.triu_indices(m, 1)
        rows = np.stack([i, j], axis=1)
    elif m <= 256:
        # nonzero lists the mask's cells in C order: by i, then j, then k
        i, j, k = np.ogrid[:m, :m, :m]
        rows = np.stack(np.nonzero((i < j) & (j < k)), axis=1)
    else:
        parts = [np.zeros((0, 3), np.int64)]
        for a in range(m - 2):
            i, j = np.triu_indices(m - a - 1, 1)
            parts.append(np.stack([np.full(len(i), a), i + a + 1, j + a + 1], axis=1))
        rows = np.concatenate(parts)
    rows = rows.astype(np.int64)
    rows.setflags(write=False)
    return rows


def _stack_tree(stacks: list[np.ndarray], n_faces: int) -> np.ndarray:
    """Parents (-1 for roots) in a spanning forest of the stacks that keeps the largest
    overlaps: a stack then only needs the subsets its parent lacks. Which forest it is
    decides only how many subsets are listed twice, never which keys result."""
    sizes = np.array([len(f) for f in stacks], np.int64)
    flat = np.concatenate([*stacks, np.zeros(0, np.int64)]).astype(np.int64)
    return _overlap_forest(flat, np.concatenate([[0], np.cumsum(sizes)]), max(n_faces, 1))


@njit(cache=True, nogil=True)
def _overlaps(flat, starts, face_ptr, stacks_of, s, eu, ev, ew, m, shared, touched):  # noqa: ANN001, ANN202, PLR0913
    """Edges (stack, later stack, shared faces) from stack ``s`` on, written at ``m`` while
    the arrays have room for a stack's worth; returns where it stopped and the count."""
    n = len(starts) - 1
    while s < n and m + (n - 1 - s) <= len(eu):
        k = 0
        for p in range(starts[s], starts[s + 1]):
            f = flat[p]
            for q in range(face_ptr[f], face_ptr[f + 1]):
                t = stacks_of[q]
                if t > s:
                    if shared[t] == 0:
                        touched[k] = t
                        k += 1
                    shared[t] += 1
        for c in range(k):
            t = touched[c]
            eu[m], ev[m], ew[m] = s, t, shared[t]
            m += 1
            shared[t] = 0
        s += 1
    return s, m


@njit(cache=True, nogil=True)
def _overlap_forest(flat, starts, n_faces):  # noqa: ANN001, ANN202
    """A maximum spanning forest of the stacks (``flat[starts[s]:starts[s + 1]]``) weighed
    by shared faces (Kruskal, heaviest first), rooted at each tree's largest stack."""
    n = len(starts) - 1
    count = np.zeros(n_faces + 1, np.int64)
    for f in flat:
        count[f + 1] += 1
    face_ptr = np.cumsum(count)
    fill = face_ptr[:-1].copy()
    stacks_of = np.empty(len(flat), np.int64)
    for s in range(n):
        for p in range(starts[s], starts[s + 1]):
            stacks_of[fill[flat[p]]] = s
            fill[flat[p]] += 1
    # overlaps of each stack with the later ones sharing a face, into arrays grown between
    # calls (growing them inside the loop would slow every step)
    eu = np.empty(max(16, 2 * n), np.int64)
    ev = np.empty(len(eu), np.int64)
    ew = np.empty(len(eu), np.int64)
    s, m = 0, 0
    shared = np.zeros(n, np.int64)
    touched = np.empty(n, np.int64)
    while s < n:
        s, m = _overlaps(flat, starts, face_ptr, stacks_of, s, eu, ev, ew, m, shared, touched)
        if s < n:
            eu = np.concatenate((eu, np.empty(len(eu), np.int64)))
            ev = np.concatenate((ev, np.empty(len(ev), np.int64)))
            ew = np.concatenate((ew, np.empty(len(ew), np.int64)))
    uf = np.arange(n)
    deg = np.zeros(n + 1, np.int64)
    tu = np.empty(max(n - 1, 0), np.int64)
    tv = np.empty(max(n - 1, 0), np.int64)
    n_tree = 0
    for e in np.argsort(-ew[:m], kind="mergesort"):
        a, b = find_root(uf, eu[e]), find_root(uf, ev[e])
        if a != b:
            uf[max(a, b)] = min(a, b)
            tu[n_tree], tv[n_tree] = eu[e], ev[e]
            deg[eu[e] + 1] += 1
            deg[ev[e] + 1] += 1
            n_tree += 1
    adj_ptr = np.cumsum(deg)
    fill = adj_ptr[:-1].copy()
    adj = np.empty(2 * n_tree, np.int64)
    for c in range(n_tree):
        adj[fill[tu[c]]] = tv[c]
        fill[tu[c]] += 1
        adj[fill[tv[c]]] = tu[c]
        fill[tv[c]] += 1
    # roots: the largest stack of each tree (the first such), so the biggest sets are
    # listed once whole; then each tree searched from its root
    parent = np.full(n, -1, np.int64)
    seen = np.zeros(n, np.bool_)
    queue = np.empty(n, np.int64)
    sizes = starts[1:] - starts[:-1]
    for root in np.argsort(-sizes, kind="mergesort"):
        if seen[root]:
            continue
        seen[root] = True
        head, tail = 0, 1
        queue[0] = root
        while head < tail:
            a = queue[head]
            head += 1
            for p in range(adj_ptr[a], adj_ptr[a + 1]):
                b = adj[p]
                if not seen[b]:
                    seen[b] = True
                    parent[b] = a
                    queue[tail] = b
                    tail += 1
    return parent


def maximal_stacks(cells: Cells, n_faces: int, incidence: csr_matrix | None = None) -> list[np.ndarray]:
    """The cells' face sets, without duplicates and without sets contained in a neighbour's.

    Every pair or triple of faces sharing a cell shares one of these stacks: a set inside a
    neighbouring cell's set adds nothing, and neighbouring cells mostly differ by a face or
    two (on large designs this drops 80-90 % of the triples before any deduplication).
    ``incidence`` is the cells' :func:`_incidence`, where the caller has it already.
    """
    faces = cells.cell_faces
    sizes = np.array([len(f) for f in faces], np.int64)
    if incidence is None:
        incidence = _incidence(faces, n_faces)
    a, b = cells.segment_cells[:, 0], cells.segment_cells[:, 1]
    ok = (a >= 0) & (b >= 0) & (a != b)
    a, b = a[ok], b[ok]
    small, big = np.where(sizes[a] <= sizes[b], a, b), np.where(sizes[a] <= sizes[b], b, a)
    # faces the two share: each face of the smaller looked up among the bigger's (cell,
    # face) keys, ascending as the incidence lists them (scipy's row indexing costs more)
    owner = np.repeat(np.arange(len(faces)), np.diff(incidence.indptr))
    keys = owner * max(n_faces, 1) + incidence.indices
    n_small = sizes[small]
    entry = np.repeat(incidence.indptr[small] - np.cumsum(n_small) + n_small, n_small) + np.arange(
        int(n_small.sum())
    )
    ask = np.repeat(big, n_small) * max(n_faces, 1) + incidence.indices[entry]
    at = np.minimum(np.searchsorted(keys, ask), max(len(keys) - 1, 0))
    hit = keys[at] == ask if len(keys) else np.zeros(0, bool)
    shared = np.bincount(np.repeat(np.arange(len(small)), n_small)[hit], minlength=len(small))
    inside = (shared == sizes[small]) & (sizes[small] < sizes[big])
    dropped = np.zeros(len(faces), bool)
    dropped[small[inside]] = True
    distinct = {f.tobytes(): f for f, d in zip(faces, dropped, strict=True) if not d}
    return list(distinct.values())


def _incidence(cell_faces: tuple[np.ndarray, ...], n_faces: int) -> csr_matrix:
    """Cells x faces, 1 where the face covers the cell."""
    sizes = np.array([len(f) for f in cell_faces], np.int64)
    return csr_matrix(
        (
            np.ones(int(sizes.sum()), np.int32),
            np.concatenate([*cell_faces, np.zeros(0, np.int64)]),
            np.concatenate([[0], np.cumsum(sizes)]),
        ),
        shape=(len(cell_faces), max(n_faces, 1)),
    )


def _key_digits(key: np.ndarray, r: int, n: int) -> np.ndarray:
    """Rows of the base-``n`` digits of ``key`` (r in 2, 3), most significant first."""
    # one division per digit boundary: int64 division dominates on millions of triples
    head = key // n
    last = key - head * n
    if r == 2:
        return np.stack([head, last], axis=1)
    first = head // n
    return np.stack([first, head - first * n, last], axis=1)


def _cell_keys(
    stacks: list[np.ndarray], r: int, n_faces: int, parent: np.ndarray | None = None
) -> np.ndarray:
    """The r-subsets (r in 2, 3) of faces sharing a stack as keys (the subset's faces,
    ascending, read as base-``n_faces`` digits), deduplicated, ascending.

    Neighbouring stacks share most of their faces, so each stack contributes only the
    subsets that use a face its parent in ``_stack_tree`` lacks (listing every stack's
    subsets in full generated up to 20 copies of each on large designs). ``parent`` is
    that forest of ``stacks`` where the caller has it (used when no stack is too small).
    The keys are the same whatever the forest: it only decides which stack lists a subset.
    """
    kept = [f for f in stacks if len(f) >= r]
    if not kept:
        return np.zeros(0, np.int64)
    if parent is None or len(kept) != len(stacks):
        parent = _stack_tree(kept, n_faces)
    stacks = kept
    # every stack's faces, flat; a face is new when its stack's parent lacks it
    sizes = np.array([len(f) for f in stacks], np.int64)
    flat = np.concatenate(stacks).astype(np.int64)
    owner = np.repeat(np.arange(len(stacks)), sizes)
    member = owner * n_faces + flat  # ascending: stacks in turn, faces sorted in each
    ask = parent[owner] * n_faces + flat
    at = np.minimum(np.searchsorted(member, ask), len(member) - 1)
    new = (parent[owner] < 0) | (member[at] != ask)
    key = _subset_keys(flat, np.concatenate([[0], np.cumsum(sizes)]), new, r, n_faces)
    key.sort()
    return key[np.r_[True, key[1:] != key[:-1]]]


@njit(cache=True, nogil=True)
def _subset_keys(flat, starts, new, r, n):  # noqa: ANN001, ANN202
    """Keys of the r-subsets (r in 2, 3) of each stack's faces (``flat[starts[s]:
    starts[s + 1]]``, ascending) that use a ``new`` face, with repeats."""
    total = 0
    for s in range(len(starts) - 1):
        m = starts[s + 1] - starts[s]
        old = m - new[starts[s] : starts[s + 1]].sum()
        if r == 2:
            total += m * (m - 1) // 2 - old * (old - 1) // 2
        else:
            total += m * (m - 1) * (m - 2) // 6 - old * (old - 1) * (old - 2) // 6
    out = np.empty(total, np.int64)
    at = 0
    for s in range(len(starts) - 1):
        lo, hi = starts[s], starts[s + 1]
        for i in range(lo, hi):
            for j in range(i + 1, hi):
                if r == 2:
                    if new[i] or new[j]:
                        out[at] = flat[i] * n + flat[j]
                        at += 1
                    continue
                for k in range(j + 1, hi):
                    if new[i] or new[j] or new[k]:
                        out[at] = (flat[i] * n + flat[j]) * n + flat[k]
                        at += 1
    return out


def build_problem(geometry: FoldedGeometry, cells: Cells) -> Problem:
    pattern = geometry.pattern
    n_f = pattern.n_faces
    cover = _incidence(cells.cell_faces, n_f)  # read by the stacks and the edge constraints
    stacks = [f for f in maximal_stacks(cells, n_f, cover) if len(f) >= 2]
    # one spanning forest for the pairs and the triples: most designs have no stack of
    # exactly two faces, and then both read the same stacks
    parent = _stack_tree(stacks, n_f) if stacks else None
    pairs = _key_digits(_cell_keys(stacks, 2, n_f, parent), 2, n_f)

    proto = Problem(n_f, pairs, (), (), (), np.zeros(0, np.int8))
    edge_rows = [_unique_rows(rows) for rows in _edge_constraints(geometry, cells, cover)]
    # two tacos on one folded segment whose flaps never overlap (thin faces meeting the
    # segment from afar) constrain nothing; Flat-Folder drops them too. Dropped before the
    # transitivity they would otherwise be taken to imply.
    edge_rows = [np.compress(_read_vars(proto, kind, rows)[0].min(axis=1, initial=0) >= 0, rows, axis=0)
                 for kind, rows in enumerate(edge_rows)]
    tt_a, tto_a, trt_a = edge_rows
    trans = _implied_transitivity_dropped(_cell_keys(stacks, 3, n_f, parent), tt_a, tto_a, n_f)
    faces_by_type = [tt_a, tto_a, trt_a, trans]
    problem_vars, problem_flip = [], []
    for kind, faces in enumerate(faces_by_type):
        idx, flip = _read_vars(proto, kind, faces)
        problem_vars.append(idx)
        problem_flip.append(flip)

    initial = np.zeros(len(pairs), np.int8)
    ef = pattern.edges_faces
    mv = np.flatnonzero(np.isin(pattern.assignments, ("M", "V")) & (ef[:, 0] >= 0) & (ef[:, 1] >= 0))
    if len(mv):
        f1, f2 = ef[mv, 0], ef[mv, 1]
        # valley seen from the front: the second face lands on top of the first
        above_2 = (pattern.assignments[mv] == "V") ^ geometry.flipped[f1]
        idx, flip = proto.var_index(f1, f2)
        first_above = ~above_2 ^ flip  # value from the lower id's point of view
        initial[idx] = np.where(first_above, 1, 2)
    return Problem(
        n_faces=n_f,
        pairs=pairs,
        cons_vars=tuple(problem_vars),
        cons_flip=tuple(problem_flip),
        cons_faces=tuple(faces_by_type),
        initial=initial,
    )


def _read_vars(proto: Problem, kind: int, faces: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(m, k) variables and flips of the face pairs constraints of ``kind`` read; variable
    -1 where two faces share no cell (:meth:`Problem.var_index`, unstrict, in one pass)."""
    index = proto._pair_index
    table = index.table if index.table is not None else np.zeros(0, np.int32)
    return _pair_vars(
        np.ascontiguousarray(faces, np.int64), _PAIRS_ARRAY[kind], table, np.ascontiguousarray(index.keys, np.int64), proto.n_faces
    )


_PAIRS_ARRAY = tuple(np.array(p, np.int64) for p in PAIRS)


@njit(cache=True, nogil=True)
def _pair_vars(faces, pairs, table, keys, n):  # noqa: ANN001, ANN202
    m, k = len(faces), len(pairs)
    idx = np.empty((m, k), np.int64)
    flip = np.empty((m, k), np.bool_)
    for r in range(m):
        for j in range(k):
            f, g = faces[r, pairs[j, 0]], faces[r, pairs[j, 1]]
            key = min(f, g) * n + max(f, g)
            if len(table):
                idx[r, j] = table[key]
            else:
                i = np.searchsorted(keys, key)
                idx[r, j] = i if i < len(keys) and keys[i] == key else -1
            flip[r, j] = f > g
    return idx, flip


def _triple_keys(t: np.ndarray, n: int) -> np.ndarray:
    t = np.sort(t, axis=1)
    return (t[:, 0] * n + t[:, 1]) * n + t[:, 2]


def _implied_transitivity_dropped(
    keys: np.ndarray, tt: np.ndarray, tto: np.ndarray, n: int
) -> np.ndarray:
    """The transitivity triples (given as sorted ``keys``, :func:`_cell_keys`) that other
    constraints do not already enforce, as rows.

    A taco-taco or taco-tortilla constraint only admits orders of its faces without cycles,
    so any triple inside one is implied. And tacos whose folds all cross one tortilla face
    c, linked in a chain, lie on one side of c: no cycle can pass through c. Dropping these
    also keeps independent parts of the model from looking connected.
    """
    if len(keys) == 0:
        return np.zeros((0, 3), np.int64)
    inside = [_triple_keys(np.take(tt, c, axis=1), n) for c in ((0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3))]
    inside.append(_triple_keys(tto, n))
    # few constraint triples against many sorted transitivity keys: search the small side,
    # in ascending order (each search starts where the last ended: a quarter of the time)
    hit = np.sort(np.concatenate(inside))
    pos = np.minimum(np.searchsorted(keys, hit), len(keys) - 1)
    implied = np.zeros(len(keys), bool)
    implied[pos[keys[pos] == hit]] = True
    if len(tto) == 0:
        return _key_digits(keys[~implied], 3, n)
    # nodes (c, a): face a seen from tortilla c; tacos (a, b) over c join (c, a)-(c, b)
    node_a = tto[:, 2] * n + tto[:, 0]
    node_b = tto[:, 2] * n + tto[:, 1]
    nodes, inv = np.unique(np.concatenate([node_a, node_b]), return_inverse=True)
    half = len(node_a)
    label = component_labels(len(nodes), inv[:half], inv[half:]).astype(np.int32)
    # each node's chain label in a dense table (-1: not a node) where one fits, else the
    # nodes are searched
    table = np.zeros(0, np.int32)
    if n * n <= DENSE_KEYS:
        table = np.full(n * n, -1, np.int32)
        table[nodes] = label
    return _unchained_rows(keys, n, implied, table, nodes, label)


@njit(cache=True, nogil=True)
def _chained(a, b, table, nodes, label):  # noqa: ANN001, ANN202
    """Whether nodes ``a`` and ``b`` lie in one chain."""
    if len(table):
        la, lb = table[a], table[b]
    else:
        i = min(np.searchsorted(nodes, a), len(nodes) - 1)
        j = min(np.searchsorted(nodes, b), len(nodes) - 1)
        la = label[i] if nodes[i] == a else -1
        lb = label[j] if nodes[j] == b else -2
    return la >= 0 and la == lb


@njit(cache=True, nogil=True)
def _unchained_rows(keys, n, implied, table, nodes, label):  # noqa: ANN001, ANN202
    """The faces (lo, mid, hi) of the triples neither ``implied`` already nor with two faces
    in one chain of tacos over the third (node c * n + a: face a seen from tortilla c, with
    chain ``label``; ``table`` maps nodes to labels where it is not empty); one pass
    instead of a dozen array operations over all triples."""
    keep = np.zeros(len(keys), np.bool_)
    for t in range(len(keys)):
        if implied[t]:
            continue
        head = keys[t] // n
        hi = keys[t] - head * n
        lo = head // n
        mid = head - lo * n
        # tortilla c with its two other faces: (hi; lo, mid), (lo; mid, hi), (mid; lo, hi)
        keep[t] = not (
            _chained(hi * n + lo, hi * n + mid, table, nodes, label)
            or _chained(lo * n + mid, lo * n + hi, table, nodes, label)
            or _chained(mid * n + lo, mid * n + hi, table, nodes, label)
        )
    out = np.empty((keep.sum(), 3), np.int64)
    row = 0
    for t in range(len(keys)):
        if keep[t]:
            head = keys[t] // n
            out[row, 0] = head // n
            out[row, 1] = head - out[row, 0] * n
            out[row, 2] = keys[t] - head * n
            row += 1
    return out


def _edge_constraints(
    geometry: FoldedGeometry, cells: Cells, cover: csr_matrix
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Taco-taco, taco-tortilla and tortilla-tortilla constraints (rows of faces) from
    crease-pattern edges sharing a folded segment, and from faces passing under one."""
    pattern = geometry.pattern
    ef = pattern.edges_faces
    arr = cells.arrangement
    # one entry per (segment, interior crease-pattern edge along it)
    seg = np.repeat(np.arange(len(arr.edges)), np.diff(arr.sources_indptr))
    edge = arr.sources
    keep = (np.take(ef[:, 0], edge) >= 0) & (np.take(ef[:, 1], edge) >= 0)
    seg, edge = seg[keep], edge[keep]
    left, right = np.take(ef[:, 0], edge), np.take(ef[:, 1], edge)
    # side of the segment (+1 left of its direction) each face lies on: the left face of
    # u->v stays left unless seen from the back; the right face joins it for a fold
    seg_dir = np.take(arr.points, np.take(arr.edges[:, 1], seg), axis=0) - np.take(
        arr.points, np.take(arr.edges[:, 0], seg), axis=0
    )
    edge_dir = np.take(geometry.vertices, np.take(pattern.edges[:, 1], edge), axis=0) - np.take(
        geometry.vertices, np.take(pattern.edges[:, 0], edge), axis=0
    )
    same_dir = np.einsum("ij,ij->i", edge_dir, seg_dir) > 0
    side_l = np.where(same_dir, 1, -1) * np.where(geometry.flipped[left], -1, 1)
    folds = np.isin(pattern.assignments, ("M", "V", "U"))[edge]
    side_r = np.where(folds, side_l, -side_l)

    # pairs of entries on the same segment
    counts = np.bincount(seg, minlength=len(arr.edges))
    start = np.concatenate([[0], np.cumsum(counts)[:-1]])
    firsts, seconds = [], []
    for k in np.unique(counts[counts >= 2]).tolist():
        combos = _all_subsets(k, 2)
        base = start[counts == k]
        firsts.append((base[:, None] + combos[None, :, 0]).ravel())
        seconds.append((base[:, None] + combos[None, :, 1]).ravel())
    i = np.concatenate(firsts) if firsts else np.zeros(0, np.int64)
    j = np.concatenate(seconds) if seconds else np.zeros(0, np.int64)
    a, b, sa, sb = left[i], right[i], side_l[i], side_r[i]
    c, d, sc, sd = left[j], right[j], side_l[j], side_r[j]
    distinct = (a != c) & (a != d) & (b != c) & (b != d)
    taco1, taco2 = sa == sb, sc == sd
    m = distinct & taco1 & taco2 & (sa == sc)
    tt = np.stack([a[m], b[m], c[m], d[m]], axis=1)
    m1 = distinct & taco1 & ~taco2
    m2 = distinct & ~taco1 & taco2
    tto = [
        np.stack([a[m1], b[m1], np.where(sc == sa, c, d)[m1]], axis=1),
        np.stack([c[m2], d[m2], np.where(sa == sc, a, b)[m2]], axis=1),
    ]
    m3 = distinct & ~taco1 & ~taco2
    trt = [np.stack([a[m3], b[m3], np.where(sa == sc, c, d)[m3], np.where(sa == sc, d, c)[m3]], axis=1)]

    # faces covering both sides of a segment pass under (or over) the edges along it
    c1, c2 = cells.segment_cells[:, 0], cells.segment_cells[:, 1]
    segs = np.flatnonzero((c1 >= 0) & (c2 >= 0) & (counts > 0))
    if len(segs):
        row, tf = _shared_faces(cover.indptr, cover.indices, c1[segs], c2[segs])
        ts = segs[row]
        n = counts[ts]
        entry = np.repeat(start[ts] - np.cumsum(n) + n, n) + np.arange(int(n.sum()))
        f = np.repeat(tf, n)
        a, b = left[entry], right[entry]
        ok = (f != a) & (f != b)
        taco = (side_l[entry] == side_r[entry]) & ok
        flat = ~(side_l[entry] == side_r[entry]) & ok
        tto.append(np.stack([a[taco], b[taco], f[taco]], axis=1))
        trt.append(np.stack([a[flat], b[flat], f[flat], f[flat]], axis=1))
    return tt, np.concatenate(tto), np.concatenate(trt)


@njit(cache=True, nogil=True)
def _shared_faces(indptr, indices, c1, c2):  # noqa: ANN001, ANN202
    """The faces covering both cells ``c1[k]`` and ``c2[k]`` (rows of the sorted incidence
    ``indptr``/``indices``): for each, its k, by k then face."""
    total = 0
    for k in range(len(c1)):
        total += min(indptr[c1[k] + 1] - indptr[c1[k]], indptr[c2[k] + 1] - indptr[c2[k]])
    row = np.empty(total, np.int64)
    face = np.empty(total, np.int64)
    at = 0
    for k in range(len(c1)):
        i, i_end = indptr[c1[k]], indptr[c1[k] + 1]
        j, j_end = indptr[c2[k]], indptr[c2[k] + 1]
        while i < i_end and j < j_end:
            if indices[i] < indices[j]:
                i += 1
            elif indices[j] < indices[i]:
                j += 1
            else:
                row[at] = k
                face[at] = indices[i]
                at += 1
                i += 1
                j += 1
    return row[:at], face[:at]


def _unique_rows(rows: np.ndarray) -> np.ndarray:
    """The distinct rows, in lexicographic order."""
    rows = np.asarray(rows, dtype=np.int64)
    if len(rows) == 0:
        return rows
    k = rows.shape[1]
    bits = max(int(rows.max()).bit_length(), 1)
    if bits * k > 62 or rows.min() < 0:
        rows = np.take(rows, np.lexsort(rows.T[::-1]), axis=0)
        return np.compress(np.r_[True, (rows[1:] != rows[:-1]).any(axis=1)], rows, axis=0)
    # one int64 key per row, first column most significant: one sort of numbers instead of
    # a lexsort over k columns
    shifts = bits * np.arange(k - 1, -1, -1, dtype=np.int64)
    key = np.unique((rows << shifts).sum(axis=1))
    return (key[:, None] >> shifts) & ((1 << bits) - 1)
