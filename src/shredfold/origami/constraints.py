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
from functools import cache

import numpy as np

from .cells import Cells
from .folded import FoldedGeometry

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
    valid = valid_tuples(kind)
    k = len(PAIRS[kind])
    status = np.empty(3**k, np.int8)
    forced = np.zeros((3**k, k), np.int8)
    for code in range(3**k):
        part = [(code // 3**i) % 3 for i in range(k)]
        free = [i for i in range(k) if part[i] == 0]
        fits = [t for t in valid if all(p in (0, t[i]) for i, p in enumerate(part))]
        if not fits:
            status[code] = CONFLICT
            continue
        implied = False
        for i in free:
            vals = {t[i] for t in fits}
            if len(vals) == 1:
                forced[code, i] = vals.pop()
                implied = True
        if implied:
            status[code] = IMPLIES
        elif len(fits) == 2 ** len(free):
            status[code] = DEAD
        else:
            status[code] = ALIVE
    return Table(status=status, forced=forced, clauses=_cnf(valid, k))


def _cnf(valid: frozenset[tuple[int, ...]], k: int) -> tuple[tuple[int, ...], ...]:
    """A small CNF: prime forbidden cubes, greedily covering every invalid tuple."""
    invalid = {t for t in itertools.product((1, 2), repeat=k) if t not in valid}
    cubes = []
    for cube in itertools.product((0, 1, 2), repeat=k):
        members = {
            t for t in itertools.product((1, 2), repeat=k) if all(c in (0, t[i]) for i, c in enumerate(cube))
        }
        if members and members <= invalid:
            cubes.append((cube, members))
    primes = [
        (c, m)
        for c, m in cubes
        if not any(m < m2 and all(x in (0, y) for x, y in zip(c2, c, strict=True)) for c2, m2 in cubes)
    ]
    clauses, left = [], set(invalid)
    while left:
        cube, members = max(primes, key=lambda cm: (len(cm[1] & left), -sum(x != 0 for x in cm[0])))
        left -= members
        # forbid the cube: at least one fixed position differs
        clauses.append(tuple(-(i + 1) if v == 1 else (i + 1) for i, v in enumerate(cube) if v))
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

    def var_index(self, f: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = np.minimum(f, g), np.maximum(f, g)
        key = lo * self.n_faces + hi
        keys = self.pairs[:, 0] * self.n_faces + self.pairs[:, 1]
        idx = np.searchsorted(keys, key)
        if np.any(idx >= len(keys)) or np.any(keys[np.minimum(idx, len(keys) - 1)] != key):
            raise ValueError("constraint reads a pair of faces that do not overlap")
        return idx, f > g


def _cell_combinations(cell_faces: tuple[np.ndarray, ...], r: int, n_faces: int) -> np.ndarray:
    """All r-subsets of faces sharing a cell, as rows sorted ascending, deduplicated."""
    by_size: dict[int, list[np.ndarray]] = {}
    # neighbouring cells often hold the same layers; each distinct stack is enough once
    distinct = {f.tobytes(): f for f in cell_faces if len(f) >= r}
    for faces in distinct.values():
        by_size.setdefault(len(faces), []).append(faces)
    weights = n_faces ** np.arange(r - 1, -1, -1, dtype=np.int64)
    keys = []
    for k, group in by_size.items():
        idx = np.array(list(itertools.combinations(range(k), r)), dtype=np.int64)
        stack = np.stack(group)  # (n_cells, k), each row ascending
        # encode each subset as one integer so deduplication is a 1-D sort
        keys.append(np.unique(stack[:, idx] @ weights))
    if not keys:
        return np.zeros((0, r), np.int64)
    key = np.unique(np.concatenate(keys))
    return np.stack([(key // w) % n_faces for w in weights], axis=1)


def build_problem(geometry: FoldedGeometry, cells: Cells) -> Problem:
    pattern = geometry.pattern
    n_f = pattern.n_faces
    pairs = _cell_combinations(cells.cell_faces, 2, n_f)

    ef = pattern.edges_faces
    arr = cells.arrangement
    # which side of its folded segment each face of a crease-pattern edge lies on:
    # the left face of u->v stays on the left unless it is seen from the back
    fu, fv = geometry.vertices[pattern.edges[:, 0]], geometry.vertices[pattern.edges[:, 1]]
    seg_dir = arr.points[arr.edges[:, 1]] - arr.points[arr.edges[:, 0]]

    tt, tto, trt = [], [], []
    for s in range(len(arr.edges)):
        src = arr.edge_sources(s)
        src = src[(ef[src, 0] >= 0) & (ef[src, 1] >= 0)]
        if len(src) == 0:
            continue
        d = seg_dir[s]
        same_dir = ((fv[src] - fu[src]) @ d) > 0
        # side of the left face (+1 left of the segment's direction)
        left_side = np.where(same_dir, 1, -1) * np.where(geometry.flipped[ef[src, 0]], -1, 1)
        # the right face is on the other side for a flat join, the same side for a fold
        folds = np.isin(pattern.assignments[src], ("M", "V", "U"))
        edges_info = [
            (int(ef[e, 0]), int(ef[e, 1]), int(sl), int(sl) if fold else -int(sl))
            for e, sl, fold in zip(src.tolist(), left_side.tolist(), folds.tolist(), strict=True)
        ]
        for (a, b, sa, sb), (c, d_, sc, sd) in itertools.combinations(edges_info, 2):
            if len({a, b, c, d_}) < 4:
                continue
            taco1, taco2 = sa == sb, sc == sd
            if taco1 and taco2:
                if sa == sc:
                    tt.append((a, b, c, d_))
            elif taco1:
                tto.append((a, b, c if sc == sa else d_))
            elif taco2:
                tto.append((c, d_, a if sa == sc else b))
            else:
                trt.append((a, b, c, d_) if sa == sc else (a, b, d_, c))
        c1, c2 = cells.segment_cells[s]
        if c1 >= 0 and c2 >= 0:
            through = np.intersect1d(cells.cell_faces[c1], cells.cell_faces[c2])
            for a, b, sa, sb in edges_info:
                for f in through.tolist():
                    if f in (a, b):
                        continue
                    if sa == sb:
                        tto.append((a, b, f))
                    else:
                        trt.append((a, b, f, f))

    trans = _cell_combinations(cells.cell_faces, 3, n_f)
    faces_by_type = [
        _unique_rows(tt, 4),
        _unique_rows(tto, 3),
        _unique_rows(trt, 4),
        trans,
    ]
    problem_vars, problem_flip = [], []
    proto = Problem(n_f, pairs, (), (), (), np.zeros(0, np.int8))
    for kind, faces in enumerate(faces_by_type):
        if len(faces) == 0:
            problem_vars.append(np.zeros((0, len(PAIRS[kind])), np.int64))
            problem_flip.append(np.zeros((0, len(PAIRS[kind])), bool))
            continue
        cols = [proto.var_index(faces[:, x], faces[:, y]) for x, y in PAIRS[kind]]
        problem_vars.append(np.stack([c[0] for c in cols], axis=1))
        problem_flip.append(np.stack([c[1] for c in cols], axis=1))

    initial = np.zeros(len(pairs), np.int8)
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


def _unique_rows(rows: list[tuple[int, ...]], n: int) -> np.ndarray:
    if not rows:
        return np.zeros((0, n), np.int64)
    return np.unique(np.asarray(rows, dtype=np.int64), axis=0)
