"""Layer-order solver: does a crease pattern fold flat, in how many ways, and one way how.

Mountain/valley creases fix some variables; table-driven propagation over all constraints
(``propagation``) fixes most of the rest. The variables left form independent components
(linked by constraints that can still fail, ``components``); each is handed to
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

from .cells import OverlapError, build_cells
from .components import components
from .constraints import (
    NAMES,
    Problem,
    build_problem,
)
from .folded import FoldedGeometry, fold_geometry
from .local import check_local
from .pattern import CreasePattern
from .propagation import propagate, satisfies
from .states import Timeout, check_deadline, solve_component

Status = Literal["ok", "unsatisfiable", "timeout", "too-thick"]
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
    max_layers: int | None = None,
) -> LayerResult:
    """Solve the layer order of ``pattern``.

    ``limit`` caps the solutions enumerated per component (``None``: count them all; 1:
    decide and return one order). ``check`` first enforces the local conditions and that
    folding keeps every edge's length. ``prefer`` maps face pairs (B, 2), lower id first, to
    the order wanted where the constraints leave a choice, in FOLD ``faceOrders`` terms (+1:
    the first face lies above the second on the side its normal points to, -1: below, 0: no
    preference); the order returned follows it as far as it is valid, counts never change,
    except that with ``limit`` 1 a valid whole preferred order is returned as it is, checked
    but not counted (``states`` 1, ``limited``, no ``components``).
    ``max_layers`` bounds the faces that may overlap at one point: past it the result is
    ``too-thick``, unsolved (the transitivity constraints grow with the cube of a stack's
    depth: 512 layers at one point need over 3.5 GB).
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    try:
        return _solve(pattern, limit, deadline, check, prefer, max_layers)
    except Timeout:
        return LayerResult(status="timeout")


Prefer = Callable[[np.ndarray], np.ndarray]


def _solve(
    pattern: CreasePattern,
    limit: int | None,
    deadline: float | None,
    check: bool,
    prefer: Prefer | None = None,
    max_layers: int | None = None,
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
    if max_layers is not None:
        deepest = max((len(f) for f in cells.cell_faces), default=0)
        if deepest > max_layers:
            return LayerResult(status="too-thick", detail=f"{deepest} layers at one point (at most {max_layers})")
    problem = build_problem(geometry, cells)
    counts = {name: len(f) for name, f in zip(NAMES, problem.cons_faces, strict=True)}
    check_deadline(deadline)
    hints = None
    if prefer is not None:
        side = np.asarray(prefer(problem.pairs))
        # to this solver's values: 1 when the lower id lies above in its folded frame
        up = (side == 1) ^ geometry.flipped[problem.pairs[:, 0]]
        hints = np.where(side == 0, 0, np.where(up, 1, 2)).astype(np.int8)
        if limit == 1 and satisfies(problem, hints):
            # The search would return this very order (its decisions follow the preferred
            # values, and a valid whole order never conflicts), so checking it is enough:
            # a simple fold's physical stacking is valid, and solving it from scratch cost
            # seconds per fold on thick stacks. Nothing was counted: one state, a bound.
            return LayerResult(
                status="ok",
                states=1,
                limited=True,
                variables=problem.n_vars,
                constraint_counts=counts,
                face_orders=face_orders(problem, hints, geometry),
            )
    assign = problem.initial.copy()
    conflict = propagate(problem, assign, np.flatnonzero(assign), deadline)
    if conflict is not None:
        kind, row = conflict
        faces = sorted(set(problem.cons_faces[kind][row].tolist()))
        return _no_order(problem, counts, faces, f"{NAMES[kind]} constraint on faces {faces} cannot hold")
    comps, clauses = components(problem, assign)
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
