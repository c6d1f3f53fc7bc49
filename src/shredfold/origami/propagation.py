"""Unit propagation over the layer-order constraints, compiled with numba.

Propagation runs in waves: every constraint reading a variable fixed in the last wave is
looked up in its type's table (by the base-3 code of the values it reads), the first
conflict in type order and then row order stops the search, and the values the tables force
are all set together at the end of the wave; two constraints forcing one variable both ways
in the same wave are a clash, blamed on the first constraint that reads it. The fixpoint
and the conflict reported are those of the numpy waves this replaces; done as numpy array
operations, a wave cost a few dozen calls whatever its size, and on mid-sized designs the
waves (dozens of them) outweighed the work they did.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .constraints import CONFLICT, IMPLIES, Problem, table
from .states import check_deadline

# table lookups per call of the compiled loop: between calls the deadline is checked (tens
# of milliseconds of work)
_BUDGET = 1 << 21


def propagate(
    problem: Problem, assign: np.ndarray, frontier: np.ndarray, deadline: float | None
) -> tuple[int, int] | None:
    """Propagate from the variables in ``frontier`` (already set in ``assign``, which is
    updated in place); returns (type, constraint row) of a conflict or None."""
    n = problem.n_vars
    signed, cvars, flips = problem.compiled_arrays
    status = tuple(table(k).status for k in range(4))
    forced = tuple(table(k).forced for k in range(4))
    incidence = [_incidence(v, n) for v in cvars]
    indptr = tuple(i[0] for i in incidence)
    rows = tuple(i[1] for i in incidence)
    both = two_sided(assign)
    frontier = np.ascontiguousarray(frontier, np.int64)
    while len(frontier):
        check_deadline(deadline)
        kind, row, frontier = _waves(
            frontier, assign, both, signed, cvars, flips, status, forced, indptr, rows, _BUDGET
        )
        if kind >= 0:
            return int(kind), int(row)
    return None


def satisfies(problem: Problem, assign: np.ndarray) -> bool:
    """Whether a whole assignment (every variable 1 or 2) agrees with the creases' values
    and satisfies every constraint: a check in one pass, no search."""
    assign = np.ascontiguousarray(assign, np.int8)
    if len(assign) != problem.n_vars or not np.isin(assign, (1, 2)).all():
        return False
    fixed = problem.initial > 0
    if (assign[fixed] != problem.initial[fixed]).any():
        return False
    signed, _, _ = problem.compiled_arrays
    both = two_sided(assign)
    return all(
        _rows_hold(both, signed[kind], table(kind).status) for kind in range(4) if len(signed[kind])
    )


@njit(cache=True, nogil=True)
def _rows_hold(both, signed, status):  # noqa: ANN001, ANN202
    for r in range(signed.shape[0]):  # noqa: SIM110 - numba compiles a loop, not all() of a generator
        if status[row_code(both, signed, r)] == CONFLICT:
            return False
    return True


def two_sided(assign: np.ndarray) -> np.ndarray:
    """Each variable's value as read by its lower face, then as read by its higher face
    (1 and 2 swapped): what :attr:`Problem.compiled_arrays`' signed positions index."""
    both = np.empty(2 * len(assign), np.int8)
    both[0::2] = assign
    both[1::2] = np.array([0, 2, 1], np.int8)[assign]
    return both


@njit(cache=True, nogil=True)
def row_code(both, signed, r):  # noqa: ANN001, ANN202
    """The base-3 code of the values constraint row ``r`` reads (position i weighs 3**i),
    its index in the type's table."""
    code = 0
    weight = 1
    for i in range(signed.shape[1]):
        code += both[signed[r, i]] * weight
        weight *= 3
    return code


@njit(cache=True, nogil=True)
def _incidence(cvars, n):  # noqa: ANN001, ANN202
    """CSR lists of the constraint rows reading each variable, ascending (a row reading a
    variable twice lists it twice): a counting sort."""
    m, k = cvars.shape
    indptr = np.zeros(n + 1, np.int64)
    for r in range(m):
        for i in range(k):
            indptr[cvars[r, i] + 1] += 1
    for v in range(n):
        indptr[v + 1] += indptr[v]
    fill = indptr[:-1].copy()
    rows = np.empty(m * k, np.int32)
    for r in range(m):
        for i in range(k):
            v = cvars[r, i]
            rows[fill[v]] = r
            fill[v] += 1
    return indptr, rows


@njit(cache=True, nogil=True)
def _waves(frontier, assign, both, signed, cvars, flips, status, forced, indptr, rows, budget):  # noqa: ANN001, ANN202
    """Waves until the frontier is empty (returned empty), a conflict (its type and row
    returned), or ``budget`` lookups have been spent (the next frontier returned)."""
    n = len(assign)
    pending = np.zeros(n, np.int8)  # values forced in this wave
    new_vars = np.empty(n, np.int64)
    # a row's last wave, per type at its offset in one array
    offset = np.zeros(5, np.int64)
    for kind in range(4):
        offset[kind + 1] = offset[kind] + len(signed[kind])
    stamp = np.full(offset[4], -1, np.int32)
    touched = np.empty(offset[4], np.int32)
    spent = 0
    wave = 0
    while len(frontier) > 0:
        if spent > budget:
            return -1, -1, frontier
        n_new = 0
        clash = n
        for kind in range(4):
            sg, cv, fl = signed[kind], cvars[kind], flips[kind]
            st, fo, ip, rw = status[kind], forced[kind], indptr[kind], rows[kind]
            base = offset[kind]
            m, k = sg.shape
            n_touched = 0
            for v in frontier:
                for p in range(ip[v], ip[v + 1]):
                    r = rw[p]
                    if stamp[base + r] != wave:
                        stamp[base + r] = wave
                        touched[n_touched] = r
                        n_touched += 1
            spent += n_touched
            # rows in the order reached, or in storage order (cache-friendly) once a wave
            # reads a fair share of them; the row reported does not depend on the order
            sequential = n_touched * 8 >= m
            conflict = m
            for t in range(m if sequential else n_touched):
                r = t if sequential else touched[t]
                if sequential and stamp[base + r] != wave:
                    continue
                code = row_code(both, sg, r)
                s = st[code]
                if s == CONFLICT:
                    conflict = min(conflict, r)
                    continue
                if s != IMPLIES:
                    continue
                for i in range(k):
                    val = fo[code, i]
                    if val == 0:
                        continue
                    if fl[r, i]:
                        val = 3 - val
                    var = cv[r, i]
                    if pending[var] == 0:
                        pending[var] = val
                        new_vars[n_new] = var
                        n_new += 1
                    elif pending[var] != val and var < clash:
                        clash = var
            if conflict < m:  # the first conflict in type order, then row order
                return kind, conflict, frontier[:0]
        if clash < n:  # blamed on the first constraint reading the variable
            for kind in range(4):
                ip = indptr[kind]
                if ip[clash + 1] > ip[clash]:
                    return kind, rows[kind][ip[clash]], frontier[:0]
            return 0, 0, frontier[:0]
        frontier = np.sort(new_vars[:n_new])
        for var in frontier:
            val = pending[var]
            pending[var] = 0
            assign[var] = val
            both[2 * var] = val
            both[2 * var + 1] = 3 - val
        wave += 1
    return -1, -1, frontier
