"""The variables propagation leaves free, split into independent components, each with the
clauses of its live constraints (compiled with numba).

A constraint is live when its table says ALIVE for the values it reads: not yet satisfied
whatever its free variables take. Live constraints join their free variables; a component's
variables are numbered 1.. in ascending order, and its clauses come in the order of
constraint type, then the type's CNF clause, then the set of that clause's literals still
free, then constraint row. The SAT solver's first model, and with it the layer order
returned, depends on that order, so it is part of the contract.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from numba import njit

from .constraints import ALIVE, Problem, table
from .propagation import row_code, two_sided

# free literals of a clause as a bit mask: CNF clauses of the tables are this short
_MAX_LITERALS = 6


def components(problem: Problem, assign: np.ndarray) -> tuple[list[np.ndarray], list[list[list[int]]]]:
    """Each component's variables (ascending, components by their smallest variable) and
    its clauses over them (variable i of the component is literal i + 1; positive: the
    lower face of the pair lies above)."""
    assign = np.ascontiguousarray(assign, np.int8)
    if not (assign == 0).any():
        return [], []
    signed, cvars, flips = problem.compiled_arrays
    status = tuple(table(k).status for k in range(4))
    lits, ptr, per_kind = _flat_clauses()

    comp_of, local, n_comps, live = _group(assign, two_sided(assign), signed, cvars, status)
    comp, group, width, literals = _clauses(assign, comp_of, local, cvars, flips, live, lits, ptr, per_kind)

    free = np.flatnonzero(assign == 0)
    order = np.argsort(comp_of[free], kind="stable")
    bounds = np.searchsorted(comp_of[free][order], np.arange(n_comps + 1))
    comps = [free[order[bounds[i] : bounds[i + 1]]] for i in range(n_comps)]
    # clauses to each component in (group, row) order; one tolist() per run of clauses of
    # one group (equal length) rather than a Python step per clause
    out: list[list[list[int]]] = [[] for _ in range(n_comps)]
    sort = np.argsort(comp * (int(group.max(initial=0)) + 1) + group, kind="stable")
    comp, group, width, literals = comp[sort], group[sort], width[sort], literals[sort]
    cut = np.flatnonzero((np.diff(comp) != 0) | (np.diff(group) != 0)) + 1
    for start, end in zip(np.r_[0, cut].tolist(), np.r_[cut, len(comp)].tolist(), strict=True):
        if start < end:
            out[comp[start]].extend(literals[start:end, : width[start]].tolist())
    return comps, out


@cache
def _flat_clauses() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The CNF clauses of the four tables as one literal array: clause t is
    ``lits[ptr[t]:ptr[t + 1]]``, and type k's clauses are ``per_kind[k]:per_kind[k + 1]``."""
    clauses = [table(k).clauses for k in range(4)]
    lits = np.array([x for cs in clauses for c in cs for x in c], np.int64)
    ptr = np.cumsum([0, *(len(c) for cs in clauses for c in cs)]).astype(np.int64)
    per_kind = np.cumsum([0, *(len(cs) for cs in clauses)]).astype(np.int64)
    return lits, ptr, per_kind


@njit(cache=True, nogil=True)
def _root(parent, x):  # noqa: ANN001, ANN202
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


@njit(cache=True, nogil=True)
def _group(assign, both, signed, cvars, status):  # noqa: ANN001, ANN202
    """Each free variable's component (-1 for fixed ones, components numbered by their
    smallest variable) and 1-based number within it, the component count, and which rows
    are live (per type at its offset)."""
    n = len(assign)
    parent = np.arange(n)
    offset = np.zeros(5, np.int64)
    for kind in range(4):
        offset[kind + 1] = offset[kind] + len(signed[kind])
    live = np.zeros(offset[4], np.bool_)
    for kind in range(4):
        sg, cv, st = signed[kind], cvars[kind], status[kind]
        m, k = sg.shape
        for r in range(m):
            if st[row_code(both, sg, r)] != ALIVE:
                continue
            live[offset[kind] + r] = True
            first = -1
            for i in range(k):
                v = cv[r, i]
                if assign[v] != 0:
                    continue
                if first < 0:
                    first = _root(parent, v)
                else:
                    other = _root(parent, v)
                    if other != first:
                        parent[other] = first
    comp_of = np.full(n, -1, np.int64)
    local = np.zeros(n, np.int64)
    comp_of_root = np.full(n, -1, np.int64)
    size = np.zeros(n, np.int64)
    n_comps = 0
    for v in range(n):
        if assign[v] != 0:
            continue
        r = _root(parent, v)
        if comp_of_root[r] < 0:
            comp_of_root[r] = n_comps
            n_comps += 1
        c = comp_of_root[r]
        comp_of[v] = c
        size[c] += 1
        local[v] = size[c]
    return comp_of, local, n_comps, live


@njit(cache=True, nogil=True)
def _clauses(assign, comp_of, local, cvars, flips, live, lits, ptr, per_kind):  # noqa: ANN001, ANN202
    """The clauses not yet satisfied of every live row, in (type, CNF clause, row) order:
    component, group (type and CNF clause, then the mask of free literals), number of free
    literals, and the literals (padded)."""
    total = 0
    base = 0
    for kind in range(4):
        m = len(cvars[kind])
        total += (per_kind[kind + 1] - per_kind[kind]) * live[base : base + m].sum()
        base += m
    comp = np.empty(total, np.int64)
    group = np.empty(total, np.int64)
    width = np.empty(total, np.int64)
    literals = np.zeros((total, _MAX_LITERALS), np.int64)
    out = 0
    base = 0
    for kind in range(4):
        cv, fl = cvars[kind], flips[kind]
        m = len(cv)
        for t in range(per_kind[kind], per_kind[kind + 1]):
            for r in range(m):
                if not live[base + r]:
                    continue
                mask = 0
                count = 0
                owner = -1
                satisfied = False
                for j in range(ptr[t + 1] - ptr[t]):
                    lit = lits[ptr[t] + j]
                    p = abs(lit) - 1
                    var = cv[r, p]
                    # "position p is 1" is "the lower face lies above" unless the pair is
                    # read from the higher face
                    positive = (lit > 0) != fl[r, p]
                    v = assign[var]
                    if v == 0:
                        mask |= 1 << j
                        literals[out, count] = local[var] if positive else -local[var]
                        count += 1
                        owner = comp_of[var]
                    elif (v == 1) == positive:
                        satisfied = True
                        break
                if satisfied or count == 0:
                    continue
                comp[out] = owner
                group[out] = t * (1 << _MAX_LITERALS) + mask
                width[out] = count
                out += 1
        base += m
    return comp[:out], group[:out], width[:out], literals[:out]
