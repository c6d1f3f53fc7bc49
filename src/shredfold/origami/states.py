"""The layer orders of one independent component: find one, and count them up to a limit.

A component arrives as CNF over its own variables 1..n (true: the lower face id lies above).
Small solution sets are enumerated with blocking clauses. That costs a SAT call per
solution, so after a tenth of a second counting switches to a DPLL search with dynamic
decomposition: each decision, after unit propagation, often splits what is left into
independent parts whose counts multiply (a component with 10^4 orders is then counted in a
few hundred nodes instead of 10^4 solver calls).
"""

from __future__ import annotations

import time

import numpy as np
from pysat.solvers import Solver
from scipy.sparse import csr_matrix

# Measured on 024_komatsu_Girl (4704 solutions enumerated in one component): minisat22 20 s,
# glucose4 37 s, maplechrono 48 s, cadical153 184 s. Many small incremental calls favour
# the light solver.
SAT_SOLVER = "minisat22"

# blocking-clause enumeration costs a SAT call per solution, cheaper than a search node
# while components are small; it gets this long before the counting search takes over (the
# switch changes the time taken, never the count or the order returned)
ENUMERATE_SECONDS = 0.1
# ... and at least this many solutions: a component with a few solutions but slow SAT calls
# (319_boxhard_Unassigned_Solvable: 11,511 variables, 2 solutions, ~0.05 s a call) is
# proved complete in three calls, where the counting search splits off a sliver per node
# (1,667 nodes, over 30 s)
ENUMERATE_MIN = 16
# below this many clause visits a node splits its variables in plain Python
SMALL_SPLIT = 400
# deeper than this the search counts what is left by enumeration, not by recursion
MAX_DEPTH = 400


class Timeout(Exception):
    pass


def check_deadline(deadline: float | None) -> None:
    if deadline is not None and time.monotonic() > deadline:
        raise Timeout


def solve_component(
    n: int,
    clauses: list[list[int]],
    limit: int | None,
    deadline: float | None,
    *,
    prefer: np.ndarray | None = None,
) -> tuple[int, np.ndarray | None]:
    """Number of valid orders (capped at ``limit``; ``None``: exact) and one of them as
    values 1 (above) / 2 (below) per variable, or ``(0, None)`` when there is none.

    ``prefer`` (values 1 / 2, 0 for none) steers which order is returned: the solver
    decides free variables that way first, so a valid preferred order comes back whole.
    """
    if not clauses:
        # variables no live constraint reads: every combination is valid
        count = 2**n
        values = np.ones(n, np.int8) if prefer is None else np.where(prefer == 2, 2, 1)
        return (count if limit is None else min(count, limit)), values.astype(np.int8)
    phases = None
    if prefer is not None:
        lits = np.arange(1, n + 1)
        phases = np.where(prefer == 2, -lits, lits)[prefer > 0].tolist()
    found, complete = enumerate_orders(
        n, clauses, limit, deadline, budget=ENUMERATE_SECONDS, min_found=ENUMERATE_MIN, phases=phases
    )
    if not found:
        return 0, None
    if complete:
        return len(found), found[0]
    counter = _Counter(n, clauses, limit, deadline)
    return counter.count(np.arange(1, n + 1), [], 0), found[0]


def enumerate_orders(
    n: int,
    clauses: list[list[int]],
    limit: int | None,
    deadline: float | None,
    *,
    assumptions: list[int] | None = None,
    budget: float | None = None,
    min_found: int = 0,
    phases: list[int] | None = None,
) -> tuple[list[np.ndarray], bool]:
    """Up to ``limit`` distinct solutions by blocking clauses, and whether that is all of
    them (or the limit): the enumeration stops early after ``budget`` seconds once it has
    more than ``min_found``."""
    out: list[np.ndarray] = []
    stop = None if budget is None else time.monotonic() + budget
    with Solver(name=SAT_SOLVER, bootstrap_with=clauses) as solver:
        if phases:
            solver.set_phases(phases)
        while limit is None or len(out) < limit:
            check_deadline(deadline)
            if len(out) > min_found and stop is not None and time.monotonic() > stop:
                return out, False
            if not solver.solve(assumptions=assumptions or []):
                break
            out.append(_values(solver.get_model(), n))
            lits = np.where(out[-1] == 1, 1, -1) * np.arange(1, n + 1)
            solver.add_clause((-lits).tolist())
    return out, True


def _values(model: list[int], n: int) -> np.ndarray:
    m = np.asarray(model, dtype=np.int64)
    m = m[(m != 0) & (np.abs(m) <= n)]
    vals = np.ones(n, np.int8)  # a variable absent from every clause: pick "above"
    vals[np.abs(m) - 1] = np.where(m > 0, 1, 2)
    return vals


class _Counter:
    """Model counting by branching, unit propagation (the SAT solver's) and splitting the
    free variables into components that share no live clause."""

    def __init__(
        self, n: int, clauses: list[list[int]], limit: int | None, deadline: float | None
    ) -> None:
        self.n, self.cap, self.deadline = n, limit, deadline
        width = max(len(c) for c in clauses)
        self.clauses = clauses
        self.lits = np.zeros((len(clauses), width), np.int64)
        for i, c in enumerate(clauses):
            self.lits[i, : len(c)] = c
        var = np.abs(self.lits).ravel()
        rows = np.repeat(np.arange(len(clauses)), width)
        used = var > 0
        inc = csr_matrix(
            (np.ones(int(used.sum()), np.int8), (var[used], rows[used])), shape=(n + 1, len(clauses))
        )
        self.indptr, self.clause_of = inc.indptr, inc.indices
        self.degree = np.diff(self.indptr)
        bounds, ids = self.indptr.tolist(), self.clause_of.tolist()
        self.clauses_at = [ids[bounds[v] : bounds[v + 1]] for v in range(n + 1)]
        self.solver = Solver(name=SAT_SOLVER, bootstrap_with=clauses)

    def _capped(self, x: int) -> int:
        return x if self.cap is None else min(x, self.cap)

    def count(self, free: np.ndarray, assumptions: list[int], depth: int) -> int:
        check_deadline(self.deadline)
        if depth > MAX_DEPTH:
            return self._count_by_enumeration(free, assumptions)
        v = int(free[np.argmax(self.degree[free])])  # the most constrained variable
        total = 0
        for lit in (v, -v):
            path = [*assumptions, lit]
            ok, implied = self.solver.propagate(assumptions=path)
            if not ok:
                continue
            val = np.zeros(self.n + 1, np.int8)
            lits = np.asarray(implied, np.int64)
            val[np.abs(lits)] = np.sign(lits)
            left = free[val[free] == 0]
            total += self._product(self._split(left, val), path, depth) if len(left) else 1
            if self.cap is not None and total >= self.cap:
                return self.cap
        return total

    def _product(self, parts: list[np.ndarray], path: list[int], depth: int) -> int:
        prod = 1
        for part in parts:
            if self.cap is not None and prod >= self.cap:
                # the count is settled at the cap; what is left only has to be satisfiable
                return prod if self.solver.solve(assumptions=path) else 0
            c = self.count(part, path, depth + 1)
            if c == 0:
                return 0
            prod = self._capped(prod * c)
        return prod

    def _split(self, free: np.ndarray, val: np.ndarray) -> list[np.ndarray]:
        """The free variables grouped by the clauses still open among them."""
        starts, ends = self.indptr[free], self.indptr[free + 1]
        lens = ends - starts
        if int(lens.sum()) <= SMALL_SPLIT:
            return self._split_small(free, val)
        offs = np.repeat(starts - np.cumsum(lens) + lens, lens) + np.arange(int(lens.sum()))
        lits = self.lits[np.unique(self.clause_of[offs])]
        var = np.abs(lits)
        truth = np.where(var > 0, val[var] * np.sign(lits), 0)
        live = ~(truth == 1).any(axis=1)
        open_ = (var > 0) & (val[var] == 0) & live[:, None]
        anchor = np.broadcast_to(np.where(open_, var, 0).max(axis=1)[:, None], var.shape)[open_]
        local = np.full(self.n + 1, -1, np.int64)
        local[free] = np.arange(len(free))
        label = _labels(len(free), local[anchor], local[var[open_]])
        order = np.argsort(label, kind="stable")
        cut = np.flatnonzero(np.diff(label[order])) + 1
        return [free[part] for part in np.split(order, cut)]

    def _split_small(self, free: np.ndarray, val: np.ndarray) -> list[np.ndarray]:
        # union-find in plain Python: below a few hundred clause visits numpy's and scipy's
        # per-call overhead dominates
        value = val.tolist()
        parent = {v: v for v in free.tolist()}

        def root(x: int) -> int:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        seen: set[int] = set()
        for v in parent:
            for ci in self.clauses_at[v]:
                if ci in seen:
                    continue
                seen.add(ci)
                opens = []
                for x in self.clauses[ci]:
                    t = value[abs(x)]
                    if t == 0:
                        opens.append(abs(x))
                    elif (t > 0) == (x > 0):
                        break
                else:
                    r = root(opens[0])
                    for y in opens[1:]:
                        ry = root(y)
                        if ry != r:
                            parent[ry] = r
        groups: dict[int, list[int]] = {}
        for v in parent:
            groups.setdefault(root(v), []).append(v)
        return [np.array(g, np.int64) for g in groups.values()]

    def _count_by_enumeration(self, free: np.ndarray, assumptions: list[int]) -> int:
        # the part's own clauses under the current path, as a fresh CNF over 1..len(free)
        ok, implied = self.solver.propagate(assumptions=assumptions)
        if not ok:
            return 0
        val = np.zeros(self.n + 1, np.int8)
        lits = np.asarray(implied, np.int64)
        val[np.abs(lits)] = np.sign(lits)
        local_arr = np.zeros(self.n + 1, np.int64)
        local_arr[free] = np.arange(1, len(free) + 1)
        local, value = local_arr.tolist(), val.tolist()
        sub: list[list[int]] = []
        for clause in self.clauses:
            if any(value[abs(x)] == (1 if x > 0 else -1) for x in clause):
                continue
            rest = [x for x in clause if value[abs(x)] == 0 and local[abs(x)]]
            if rest:
                sub.append([local[abs(x)] if x > 0 else -local[abs(x)] for x in rest])
        if not sub:
            return self._capped(2 ** len(free))
        return len(enumerate_orders(len(free), sub, self.cap, self.deadline)[0])


def _labels(n: int, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Connected components of the graph with edges (u, v), each labelled by its smallest
    node: min-label propagation with pointer jumping (no scipy call overhead per node)."""
    label = np.arange(n)
    while True:
        low = np.minimum(label[u], label[v])
        new = label.copy()
        np.minimum.at(new, u, low)
        np.minimum.at(new, v, low)
        np.minimum.at(new, label, new)  # a root takes the lowest label of its members
        new = new[new]
        if np.array_equal(new, label):
            return label
        label = new
