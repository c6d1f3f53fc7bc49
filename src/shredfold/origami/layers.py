"""Layer-order solver: does a crease pattern fold flat, in how many ways, and one way how.

Mountain/valley creases fix some variables; table-driven propagation over all constraints
(vectorised in waves) fixes most of the rest. The variables left form independent
components (linked by constraints that can still fail); each is handed to
``states.solve_component``, which finds one solution with a SAT solver and counts them up
to the limit.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from scipy.sparse import csr_matrix

from .cells import OverlapError, build_cells
from .constraints import (
    ALIVE,
    CONFLICT,
    IMPLIES,
    NAMES,
    Problem,
    build_problem,
    table,
)
from .folded import FoldedGeometry, fold_geometry
from .graph import component_labels
from .local import check_local
from .pattern import CreasePattern
from .states import Timeout, check_deadline, solve_component

Status = Literal["ok", "unsatisfiable", "timeout"]
Reason = Literal["", "maekawa", "kawasaki", "crimp", "dangling", "length", "overlap", "layer-order"]

@dataclass(frozen=True)
class LayerResult:
    status: Status
    reason: Reason = ""
    detail: str = ""
    states: int = 0  # product over components of the solutions found (each capped at limit)
    limited: bool = False  # some component reached the limit
    components: tuple[int, ...] = ()  # solutions per unassigned component
    variables: int = 0
    constraint_counts: dict[str, int] = field(default_factory=dict)
    face_orders: np.ndarray | None = None  # FOLD faceOrders of one state, (k, 3)
    bad_vertices: tuple[int, ...] = ()
    bad_faces: tuple[int, ...] = ()

    @property
    def satisfiable(self) -> bool:
        return self.status == "ok"


def solve_layers(
    pattern: CreasePattern,
    *,
    limit: int | None = 1,
    timeout: float | None = None,
    check: bool = True,
    prefer: Prefer | None = None,
) -> LayerResult:
    """Solve the layer order of ``pattern``.

    ``limit`` caps the solutions enumerated per component (``None``: count them all; 1:
    decide and return one order). ``check`` first enforces the local conditions and that
    folding keeps every edge's length. ``prefer`` maps face pairs (B, 2), lower id first, to
    the order wanted where the constraints leave a choice, in FOLD ``faceOrders`` terms (+1:
    the first face lies above the second on the side its normal points to, -1: below, 0: no
    preference); the order returned follows it as far as it is valid, counts never change.
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    try:
        return _solve(pattern, limit, deadline, check, prefer)
    except Timeout:
        return LayerResult(status="timeout")


Prefer = Callable[[np.ndarray], np.ndarray]


def _solve(
    pattern: CreasePattern,
    limit: int | None,
    deadline: float | None,
    check: bool,
    prefer: Prefer | None = None,
) -> LayerResult:
    if check:
        report = check_local(pattern)
        if not report.ok:
            first = report.violations[0]
            return LayerResult(
                status="unsatisfiable",
                reason=first.rule,
                detail=f"vertex {first.vertex}: {first.detail}",
                bad_vertices=tuple(report.vertices()),
            )
    geometry = fold_geometry(pattern)
    if check:
        bad = _length_check(geometry)
        if bad:
            return LayerResult(status="unsatisfiable", reason="length", detail=bad)
    check_deadline(deadline)
    try:
        cells = build_cells(geometry)
    except OverlapError as exc:
        return LayerResult(status="unsatisfiable", reason="overlap", detail=str(exc))
    check_deadline(deadline)
    problem = build_problem(geometry, cells)
    counts = {name: len(f) for name, f in zip(NAMES, problem.cons_faces, strict=True)}
    check_deadline(deadline)
    assign = problem.initial.copy()
    conflict = _propagate(problem, assign, np.flatnonzero(assign), deadline)
    if conflict is not None:
        kind, row = conflict
        faces = sorted(set(problem.cons_faces[kind][row].tolist()))
        return _no_order(problem, counts, faces, f"{NAMES[kind]} constraint on faces {faces} cannot hold")
    comps, clauses = _components(problem, assign)
    hints = None
    if prefer is not None:
        side = np.asarray(prefer(problem.pairs))
        # to this solver's values: 1 when the lower id lies above in its folded frame
        up = (side == 1) ^ geometry.flipped[problem.pairs[:, 0]]
        hints = np.where(side == 0, 0, np.where(up, 1, 2)).astype(np.int8)
    sizes = []
    for comp_vars, comp_clauses in zip(comps, clauses, strict=True):
        phases = None if hints is None else hints[comp_vars]
        count, found = solve_component(
            len(comp_vars), comp_clauses, limit, deadline, prefer=phases
        )
        if found is None:
            faces = sorted(set(problem.pairs[comp_vars].ravel().tolist()))
            detail = f"no layer order for a component of {len(comp_vars)} variables"
            return _no_order(problem, counts, faces, detail)
        sizes.append(count)
        assign[comp_vars] = found
    return LayerResult(
        status="ok",
        states=math.prod(sizes),
        limited=limit is not None and any(n >= limit for n in sizes),
        components=tuple(sizes),
        variables=problem.n_vars,
        constraint_counts=counts,
        face_orders=face_orders(problem, assign, geometry),
    )


def _no_order(
    problem: Problem, counts: dict[str, int], faces: list[int], detail: str
) -> LayerResult:
    return LayerResult(
        status="unsatisfiable",
        reason="layer-order",
        detail=detail,
        variables=problem.n_vars,
        constraint_counts=counts,
        bad_faces=tuple(faces),
    )


def _length_check(geometry: FoldedGeometry) -> str:
    seg = geometry.pattern.segments
    shortest = float(np.hypot(*(seg[:, 1] - seg[:, 0]).T).min())
    # Imprecise designs (coordinates stored to ~5 digits) accumulate up to 1/30 of the
    # shortest edge; beyond 1/8, the largest snapping distance the overlap graph may use,
    # the folded faces no longer meet
    if max(geometry.closure_error, geometry.length_error) > shortest / 8:
        return (
            f"folded faces disagree by {geometry.closure_error:.3g} "
            f"(edge length change {geometry.length_error:.3g})"
        )
    return ""


def face_orders(problem: Problem, assign: np.ndarray, geometry: FoldedGeometry) -> np.ndarray:
    """FOLD faceOrders ``[f, g, s]``: s = +1 when f lies above g on the side f's normal
    points to."""
    f, g = problem.pairs[:, 0], problem.pairs[:, 1]
    f_above = assign == 1
    s = np.where(f_above ^ geometry.flipped[f], 1, -1)
    return np.stack([f, g, s], axis=1).astype(np.int64)


# ---- propagation ----------------------------------------------------------------------


def _incidence(problem: Problem) -> list[tuple[np.ndarray, np.ndarray, int]]:
    """Per constraint type, CSR lists of the constraints reading each variable."""
    out = []
    for cv in problem.cons_vars:
        m, k = cv.shape
        rows = np.repeat(np.arange(m, dtype=np.int32), k)
        # scipy's COO -> CSR conversion is a counting sort, far cheaper than argsort here
        mat = csr_matrix(
            (np.ones(m * k, np.int8), (cv.ravel(), rows)), shape=(problem.n_vars, max(m, 1))
        )
        out.append((mat.indptr, mat.indices, m))
    return out


def _gather(indptr: np.ndarray, rows: np.ndarray, n_rows: int, vars_: np.ndarray) -> np.ndarray:
    starts, ends = np.take(indptr, vars_), np.take(indptr, vars_ + 1)
    lens = ends - starts
    total = int(lens.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    offs = np.repeat(starts - np.cumsum(lens) + lens, lens) + np.arange(total)
    hit = np.take(rows, offs)
    if total * 16 < n_rows:
        return np.unique(hit)
    # a mask over all rows beats sorting once a wave touches a fair share of them
    mask = np.zeros(n_rows, bool)
    mask[hit] = True
    return np.flatnonzero(mask)


_SWAP = np.array([0, 2, 1], np.int8)


def _both(assign: np.ndarray) -> np.ndarray:
    """Each variable's value as read by its lower face, then by its higher face (indexed by
    :attr:`Problem.cons_signed`)."""
    return np.stack([assign, _SWAP[assign]], axis=1).ravel()


def _codes(signed: np.ndarray, both: np.ndarray, rows: np.ndarray) -> np.ndarray:
    # np.take gathers about twice as fast as fancy indexing here
    v = np.take(both, np.take(signed, rows, axis=0)).astype(np.int32)
    code = v[:, 0].copy()
    for i in range(1, v.shape[1]):
        code += v[:, i] * 3**i
    return code


def _propagate(
    problem: Problem, assign: np.ndarray, frontier: np.ndarray, deadline: float | None
) -> tuple[int, int] | None:
    """Unit propagation in waves; returns (type, constraint row) of a conflict or None."""
    inc = _incidence(problem)
    signed = problem.cons_signed
    both = _both(assign)
    tables = [table(k) for k in range(4)]
    while len(frontier):
        check_deadline(deadline)
        new_vars, new_vals = [], []
        for kind in range(4):
            rows = _gather(*inc[kind], frontier)
            if len(rows) == 0:
                continue
            code = _codes(signed[kind], both, rows)
            st = tables[kind].status[code]
            bad = np.flatnonzero(st == CONFLICT)
            if len(bad):
                return kind, int(rows[bad[0]])
            hit = st == IMPLIES
            if not hit.any():
                continue
            forced = np.take(tables[kind].forced, code[hit], axis=0)
            r, pos = np.nonzero(forced)
            val = forced[r, pos]
            cons = rows[hit][r]
            # flat positions: a gather with two index arrays is the slow path of numpy 1.26
            flat = cons * forced.shape[1] + pos
            flip = np.take(problem.cons_flip[kind], flat)
            new_vars.append(np.take(problem.cons_vars[kind], flat))
            new_vals.append(np.where(flip, 3 - val, val).astype(np.int8))
        if not new_vars:
            break
        nv, vals = np.concatenate(new_vars), np.concatenate(new_vals)
        order = np.lexsort((vals, nv))
        nv, vals = nv[order], vals[order]
        first = np.r_[True, nv[1:] != nv[:-1]]
        last = np.r_[nv[1:] != nv[:-1], True]
        clash = vals[first] != vals[last]
        if clash.any():
            var = nv[first][clash][0]
            return _blame(problem, inc, var)
        frontier, vals = nv[first], vals[first]
        assign[frontier] = vals
        both[2 * frontier] = vals
        both[2 * frontier + 1] = _SWAP[vals]
    return None


def _blame(problem: Problem, inc: list[tuple[np.ndarray, np.ndarray, int]], var: int) -> tuple[int, int]:
    for kind in range(4):
        rows = _gather(*inc[kind], np.array([var]))
        if len(rows):
            return kind, int(rows[0])
    return 0, 0


# ---- components and search ---------------------------------------------------------------


def _components(problem: Problem, assign: np.ndarray) -> tuple[list[np.ndarray], list[list[list[int]]]]:
    """Independent groups of unassigned variables, each with its clauses (variables renumbered
    1.. within the group)."""
    n = problem.n_vars
    src, dst = [], []
    live_rows = []
    signed = problem.cons_signed
    both = _both(assign)
    for kind in range(4):
        cv = problem.cons_vars[kind]
        if len(cv) == 0:
            live_rows.append(np.zeros(0, np.int64))
            continue
        rows = np.arange(len(cv))
        st = table(kind).status[_codes(signed[kind], both, rows)]
        live = rows[st == ALIVE]
        live_rows.append(live)
        vs = np.take(cv, live, axis=0)
        free = assign[vs] == 0
        anchor = np.where(free, vs, -1).max(axis=1)
        for p in range(cv.shape[1]):
            m = free[:, p]
            src.append(anchor[m])
            dst.append(np.compress(m, vs[:, p]))
    unassigned = np.flatnonzero(assign == 0)
    if len(unassigned) == 0:
        return [], []
    s = np.concatenate(src) if src else np.zeros(0, np.int64)
    d = np.concatenate(dst) if dst else np.zeros(0, np.int64)
    label = component_labels(n, s, d)
    comp_ids, comp_of = np.unique(label[unassigned], return_inverse=True)
    order = np.argsort(comp_of, kind="stable")
    bounds = np.searchsorted(comp_of[order], np.arange(len(comp_ids) + 1))
    comps = [unassigned[order[bounds[i] : bounds[i + 1]]] for i in range(len(comp_ids))]
    local = np.zeros(n, np.int64)
    comp_index = np.full(n, -1, np.int64)
    for i, c in enumerate(comps):
        local[c] = np.arange(1, len(c) + 1)
        comp_index[c] = i
    clauses: list[list[list[int]]] = [[] for _ in comps]
    for kind in range(4):
        rows = live_rows[kind]
        if len(rows) == 0:
            continue
        vs = np.take(problem.cons_vars[kind], rows, axis=0)
        fl = np.take(problem.cons_flip[kind], rows, axis=0)
        val = assign[vs]
        for clause in table(kind).clauses:
            pos = np.array([abs(x) - 1 for x in clause])
            want_one = np.array([x > 0 for x in clause])
            # literal "position p == 1" is "lower face above" unless the pair is flipped
            lit_var = np.take(vs, pos, axis=1)
            lit_pos = want_one[None, :] ^ np.take(fl, pos, axis=1)
            v = np.take(val, pos, axis=1)
            true = (v > 0) & ((v == 1) == lit_pos)
            keep = ~true.any(axis=1)
            free = np.compress(keep, v, axis=0) == 0
            lv, lp = np.compress(keep, lit_var, axis=0), np.compress(keep, lit_pos, axis=0)
            comp = np.where(free, comp_index[lv], -1).max(axis=1)
            signed = np.where(lp, local[lv], -local[lv])
            # rows with the same free positions become lists in one tolist() each, handed
            # to their components in row order (a Python loop per row cost more than the
            # SAT calls on mid-sized designs)
            pattern = free.astype(np.int64) @ (1 << np.arange(free.shape[1], dtype=np.int64))
            for pat in np.unique(pattern).tolist():
                if pat == 0:
                    continue
                sel = np.flatnonzero(pattern == pat)
                cols = [i for i in range(free.shape[1]) if pat >> i & 1]
                sel = sel[np.argsort(comp[sel], kind="stable")]
                cs, block = comp[sel], np.take(np.take(signed, sel, axis=0), cols, axis=1)
                cut = np.flatnonzero(np.diff(cs)) + 1
                for c, part in zip(cs[np.r_[0, cut]].tolist(), np.split(block, cut), strict=True):
                    clauses[c].extend(part.tolist())
    return comps, clauses
