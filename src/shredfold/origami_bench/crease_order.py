"""Crease orders: for a design without a fold sequence, an order of adding its crease lines
in which every intermediate pattern folds flat.

A *crease line* is a maximal straight chain of the design's creases with one assignment
(one ``crease`` action of the environment adds it). The search starts from the bare sheet;
each step adds one line, or, where no single line keeps the pattern flat-foldable, a small
group of lines that does (the lines missing at a vertex the first one breaks, repeated until
every vertex is whole again). A step is accepted when the layer solver (local checks, then
layer order) finds a flat-folded state; a dead end is backtracked. Every choice comes from a
generator seeded by the design's key, and the search stops on node, solver-call and time
caps and a cap on the design's size in lines, so a design either gets its order or a reason
why not. No cap is a clock: the same design gets the same answer on any machine (measured on
the 200 shared designs, every design with an order has at most 24 lines and every search
that hit a 10 s clock had 44 or more, so the size cap takes the clock's place). Orders are
stored by design key (:class:`OrderBook`) and read back, not searched again.

A per-vertex filter (Maekawa, Kawasaki, the crimp test on the vertex's present creases, with
tolerances no tighter than :func:`shredfold.origami.check_local`'s) spares the solver most
candidates; only the solver accepts one. The order found is replayed through the crease
action before it is returned: every step's state must fold flat and the last one must be the
design's pattern.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from shredfold.origami import affine
from shredfold.origami_bench.design import Design
from shredfold.store import Store, content_key

if TYPE_CHECKING:
    from shredfold.origami import CreasePattern, FoldState

CREASE_ORDER_STAGE, CREASE_ORDER_VERSION = "origami_crease_order", 1



@dataclass(frozen=True)
class Budget:
    """Caps of one search, none of them a clock, so the answer is the same on any machine."""

    nodes: int = 20_000  # candidate line sets examined by the local filter
    solves: int = 600  # layer-solver calls
    max_lines: int = 40  # larger designs are not searched (see the module note)
    solve_timeout: float = 30.0  # per solver call, a safety net only: calls on <= 40 lines take < 1 s
    group: int = 6  # most lines one step may add

    def params(self) -> dict[str, Any]:
        return {"nodes": self.nodes, "solves": self.solves, "max_lines": self.max_lines,
                "solve_timeout": self.solve_timeout, "group": self.group}  # fmt: skip


DEFAULT_BUDGET = Budget()


class CreaseOrder(BaseModel):
    """The outcome of a search: ``steps`` (each a tuple of crease actions) or a ``reason``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    design_key: str
    steps: tuple[tuple[dict[str, Any], ...], ...] | None = None
    reason: str = ""
    lines: int = 0
    nodes: int = 0
    solves: int = 0
    seconds: float = 0.0

    @property
    def found(self) -> bool:
        return self.steps is not None


@dataclass(frozen=True)
class CreaseLine:
    start: tuple[float, float]
    end: tuple[float, float]
    assignment: str
    edges: tuple[int, ...]  # the design pattern's edges on the line
    vertices: tuple[int, ...]  # its vertices, ends included

    def as_action(self) -> dict[str, Any]:
        return {"start": list(self.start), "end": list(self.end), "assignment": self.assignment}


def order_key(design: Design, budget: Budget = DEFAULT_BUDGET) -> str:
    from shredfold.origami import ENGINE_VERSION

    params = {"budget": budget.params(), "engine": ENGINE_VERSION}
    return content_key(CREASE_ORDER_STAGE, CREASE_ORDER_VERSION, params, [design.key])


class OrderBook:
    """Crease orders by design key, each searched once: from memory, else what the package
    ships for Flat-Folder's designs (:mod:`.known`, searched with the default budget), else
    the store, else searched (and stored where the caller may write; whoever plans decides,
    as for the design catalogue). The search is deterministic under its node and solver
    caps, so a job that finds nothing stored searches again and gets the same order."""

    def __init__(self, store: Store | None = None, *, write: bool = False, budget: Budget = DEFAULT_BUDGET) -> None:
        self.store, self.write, self.budget = store, write, budget
        self._orders: dict[str, CreaseOrder] = {}

    def known(self, design: Design) -> CreaseOrder | None:
        """The order if it was searched already (shipped, here or in the store); never searches."""
        if design.key not in self._orders:
            shipped = shipped_order(design) if self.budget == DEFAULT_BUDGET else None
            if shipped is not None:
                self._orders[design.key] = shipped
            elif self.store is not None:
                key = order_key(design, self.budget)
                if self.store.has(CREASE_ORDER_STAGE, key):
                    self._orders[design.key] = CreaseOrder.model_validate(self.store.get_json(CREASE_ORDER_STAGE, key))
        return self._orders.get(design.key)

    def get(self, design: Design) -> CreaseOrder:
        got = self.known(design)
        if got is None:
            got = find_crease_order(design, self.budget)
            self._orders[design.key] = got
            if self.store is not None and self.write:
                self.store.put_json(CREASE_ORDER_STAGE, order_key(design, self.budget), got.model_dump(mode="json", exclude={"seconds"}))  # content only, no timing
        return got

    def not_found(self) -> dict[str, str]:
        """Design key -> reason, for every design searched without an order."""
        return {k: o.reason for k, o in self._orders.items() if not o.found}


def shipped_order(design: Design) -> CreaseOrder | None:
    """The default budget's outcome for one of Flat-Folder's designs, as the package ships
    it (a design that does not fold flat, or whose layer order this engine does not find
    within a budget, was not searched: no order, and why)."""
    from shredfold.origami_bench import known

    fact = known.of(design)
    if fact is None:
        return None
    got = fact.crease_order
    if got is None:
        why = fact.problem or "this engine finds no layer order of the whole design within its budget"
        return CreaseOrder(design_key=design.key, reason=f"not searched: {why}")
    return CreaseOrder(design_key=design.key, steps=got.steps, reason=got.reason, lines=got.lines)


# ---------------------------------------------------------------- crease lines


def crease_lines(pattern: CreasePattern) -> list[CreaseLine]:
    """The pattern's creases (every edge but the outline) as maximal straight chains of one
    assignment, in a canonical order (by their lowest edge id)."""
    v, edges, assign = pattern.vertices, pattern.edges, pattern.assignments
    crease = np.flatnonzero(assign != "B")
    parent = {int(e): int(e) for e in crease}

    def find(e: int) -> int:
        while parent[e] != e:
            parent[e] = parent[parent[e]]
            e = parent[e]
        return e

    indptr, eids = pattern.vertex_edge_lists
    for x in range(len(v)):
        at = [int(e) for e in eids[indptr[x]:indptr[x + 1]] if assign[e] != "B"]
        if len(at) < 2:
            continue
        ends = [int(edges[e, 1] if edges[e, 0] == x else edges[e, 0]) for e in at]
        vec = v[ends] - v[x]
        length = np.hypot(vec[:, 0], vec[:, 1])
        unit = vec / length[:, None]
        for i in range(len(at)):
            for j in range(i + 1, len(at)):
                if assign[at[i]] != assign[at[j]] or affine.dot2(unit[i], unit[j]) > 0:
                    continue
                # straight within the arrangement's snapping: one segment from end to end
                # passes through this vertex
                off = abs(float(np.cross(unit[i], unit[j]))) * min(length[i], length[j])
                if off <= pattern.eps / 4:
                    parent[find(at[i])] = find(at[j])
    groups: dict[int, list[int]] = {}
    for e in crease.tolist():
        groups.setdefault(find(e), []).append(e)
    out = []
    for members in sorted(groups.values(), key=min):
        ids = sorted(set(edges[members].ravel().tolist()))
        pts = v[ids]
        d = pts[np.argmax(np.hypot(*(pts - pts[0]).T))] - pts[0]
        t = affine.dot2(pts - pts[0], d)
        a, b = pts[int(np.argmin(t))], pts[int(np.argmax(t))]
        out.append(CreaseLine(
            (float(a[0]), float(a[1])), (float(b[0]), float(b[1])),
            str(assign[members[0]]), tuple(members), tuple(ids),
        ))  # fmt: skip
    return out


# ---------------------------------------------------------------- the local filter


class _VertexFilter:
    """Maekawa, Kawasaki and the crimp test at each interior vertex, on the creases of the
    lines present (flat creases ignored, as the local checks do)."""

    def __init__(self, pattern: CreasePattern, lines: Sequence[CreaseLine]) -> None:
        # check_local's tolerances, measured against the design's own shortest edge, so the
        # filter never rejects what the solver's check would pass (the solver has the last
        # word either way)
        from shredfold.origami.local import _POSITION_FRACTION

        seg = pattern.segments
        self.position_tol = float(np.hypot(*(seg[:, 1] - seg[:, 0]).T).min()) * _POSITION_FRACTION
        line_of = np.full(len(pattern.edges), -1)
        for i, ln in enumerate(lines):
            line_of[list(ln.edges)] = i
        indptr, eids = pattern.vertex_edge_lists
        self.rays: dict[int, tuple[np.ndarray, np.ndarray, list[str], np.ndarray]] = {}
        boundary = pattern.boundary_vertices
        for x in range(len(pattern.vertices)):
            if boundary[x]:
                continue
            at = [int(e) for e in eids[indptr[x]:indptr[x + 1]] if pattern.assignments[e] in ("M", "V", "U")]
            if not at:
                continue
            ends = [int(pattern.edges[e, 1] if pattern.edges[e, 0] == x else pattern.edges[e, 0]) for e in at]
            vec = pattern.vertices[ends] - pattern.vertices[x]
            # vertex_edge_lists is counter-clockwise already
            self.rays[x] = (
                np.arctan2(vec[:, 1], vec[:, 0]),
                line_of[at],
                [str(pattern.assignments[e]) for e in at],
                np.hypot(vec[:, 0], vec[:, 1]),
            )

    def bad(self, x: int, present: np.ndarray) -> bool:
        from shredfold.origami.local import _ANGLE_FLOOR, _CRIMP_FRACTION, _crimp

        got = self.rays.get(x)
        if got is None:
            return False
        ang, line, letters, length = got
        keep = present[line]
        n = int(keep.sum())
        if n == 0:
            return False
        if n % 2 == 1:
            return True
        idx = np.flatnonzero(keep)
        lt = [letters[i] for i in idx]
        n_m, n_v = lt.count("M"), lt.count("V")
        n_u = n - n_m - n_v
        diff = abs(n_m - n_v)
        if diff > 2 + n_u or (n_u == 0 and diff != 2):
            return True
        a = ang[idx]
        sectors = np.diff(np.append(a, a[0] + 2 * math.pi))
        alt = float(np.sum(sectors[0::2]) - np.sum(sectors[1::2]))
        shortest = float(length[idx].min())
        if abs(alt) > max(_ANGLE_FLOOR, self.position_tol / shortest):
            return True
        if n_u:
            return False
        crimp_tol = max(_ANGLE_FLOOR, self.position_tol * 8 * _CRIMP_FRACTION / shortest, 2 * abs(alt))
        return bool(_crimp(sectors.tolist(), lt, crimp_tol))


# ---------------------------------------------------------------- the search


class _OutOfBudget(Exception):
    pass


def find_crease_order(design: Design, budget: Budget = DEFAULT_BUDGET) -> CreaseOrder:
    """An order of adding the design's crease lines, every step flat-foldable, or the
    reason there is none within ``budget``."""
    t0 = time.monotonic()
    try:
        pattern = design.pattern()
        lines = crease_lines(pattern)
    except Exception as exc:  # noqa: BLE001 - an untrusted design must not crash a plan
        return CreaseOrder(design_key=design.key, reason=f"cannot read the crease pattern ({type(exc).__name__}: {exc})"[:300])
    search = _Search(design, pattern, lines, budget)
    try:
        if len(lines) > budget.max_lines:
            raise _OutOfBudget(f"budget: {len(lines)} crease lines, more than the {budget.max_lines} searched")
        groups = search.run()
        reason = "" if groups is not None else (
            f"no order: every way tried of adding its {len(lines)} lines in two or more steps "
            f"(single lines, or groups of up to {budget.group} that mend the vertices the first "
            "one breaks) reaches a pattern that does not fold flat (search exhausted)"
        )
    except _OutOfBudget as exc:
        groups, reason = None, str(exc)
    steps = None
    if groups is not None:
        steps = tuple(tuple(lines[i].as_action() for i in g) for g in groups)
        problem = replay_problem(pattern, steps)
        if problem:
            steps, reason = None, problem
    return CreaseOrder(
        design_key=design.key,
        steps=steps,
        reason=reason,
        lines=len(lines),
        nodes=search.nodes,
        solves=search.solves,
        seconds=round(time.monotonic() - t0, 3),
    )


class _Search:
    def __init__(self, design: Design, pattern: CreasePattern, lines: list[CreaseLine], budget: Budget) -> None:
        self.pattern, self.lines, self.budget = pattern, lines, budget
        self.filter = _VertexFilter(pattern, lines)
        self.rng = np.random.default_rng(int(order_key(design, budget)[:16], 16))
        self.nodes = self.solves = 0
        self.lines_at: dict[int, list[int]] = {}
        for i, ln in enumerate(lines):
            for x in ln.vertices:
                self.lines_at.setdefault(x, []).append(i)
        self.flat_verdicts: dict[bytes, bool] = {}

    def _tick(self) -> None:
        self.nodes += 1
        if self.nodes > self.budget.nodes:
            raise _OutOfBudget(f"budget: more than {self.budget.nodes} candidate line sets examined")

    def _bad_vertices(self, present: np.ndarray, group: Sequence[int]) -> list[int]:
        touched = sorted({x for i in group for x in self.lines[i].vertices})
        return [x for x in touched if self.filter.bad(x, present)]

    def _moves(self, present: np.ndarray) -> Iterator[tuple[int, ...]]:
        """Locally flat-foldable additions: single lines, then repaired groups."""
        absent = np.flatnonzero(~present)
        order = absent[self.rng.permutation(len(absent))].tolist()
        for i in order:
            self._tick()
            present[i] = True
            ok = not self._bad_vertices(present, (i,))
            present[i] = False
            if ok:
                yield (i,)
        if self.budget.group < 2:
            return
        seen: set[tuple[int, ...]] = set()
        for i in order:
            present[i] = True
            for g in self._repairs(present, [i]):
                if len(g) > 1 and g not in seen:
                    seen.add(g)
                    present[i] = False
                    yield g
                    present[i] = True
            present[i] = False

    def _repairs(self, trial: np.ndarray, group: list[int]) -> Iterator[tuple[int, ...]]:
        """Groups that start with ``group`` (present in ``trial``) and add lines at the first
        broken vertex, a smallest set first, until no vertex is broken; at most
        ``budget.group`` lines. ``trial`` is restored between yields."""
        self._tick()
        bad = self._bad_vertices(trial, group)
        if not bad:
            yield tuple(sorted(group))
            return
        x = bad[0]
        missing = [i for i in self.lines_at[x] if not trial[i]]
        room = self.budget.group - len(group)
        for size in range(1, min(len(missing), room) + 1):
            for combo in itertools.combinations(missing, size):
                trial[list(combo)] = True
                if not self.filter.bad(x, trial):
                    yield from self._repairs(trial, group + list(combo))
                trial[list(combo)] = False

    def _flat(self, present: np.ndarray) -> bool:
        from shredfold.origami import solve_layers

        key = np.packbits(present).tobytes()
        if key not in self.flat_verdicts:
            self.solves += 1
            if self.solves > self.budget.solves:
                raise _OutOfBudget(f"budget: more than {self.budget.solves} layer-solver calls")
            result = solve_layers(subpattern(self.pattern, self.lines, present), limit=1, timeout=self.budget.solve_timeout)
            if result.status == "timeout":
                raise _OutOfBudget(f"budget: a layer-solver call ran past {self.budget.solve_timeout:g} s")
            self.flat_verdicts[key] = result.satisfiable
        return self.flat_verdicts[key]

    def run(self) -> list[tuple[int, ...]] | None:
        n = len(self.lines)
        present = np.zeros(n, bool)
        path: list[tuple[int, ...]] = []
        stack = [self._moves(present)]
        dead: set[bytes] = set()
        while stack:
            if present.all():
                return path
            try:
                g = next(stack[-1])
            except StopIteration:
                dead.add(np.packbits(present).tobytes())
                stack.pop()
                if path:
                    present[list(path.pop())] = False
                continue
            if not path and len(g) == n:
                continue  # all at once is not an order: at least two steps
            present[list(g)] = True
            if np.packbits(present).tobytes() in dead or not self._flat(present):
                present[list(g)] = False
                continue
            path.append(g)
            stack.append(self._moves(present))
        return None


def subpattern(pattern: CreasePattern, lines: Sequence[CreaseLine], present: np.ndarray) -> CreasePattern:
    """The design's pattern with only the present lines' creases (the rest left flat: the
    same paper, the same faces, no fold there)."""
    assign = pattern.assignments.copy()
    for i, ln in enumerate(lines):
        if not present[i]:
            assign[list(ln.edges)] = "F"
    return pattern.with_assignments(assign)


# ---------------------------------------------------------------- replay


def replay_order(sheet: FoldState, steps: Sequence[Sequence[dict[str, Any]]]) -> list[FoldState]:
    """The sheet, then the state after each step (its crease actions applied in order);
    raises ValueError if an action is rejected."""
    from shredfold.origami import FoldState, crease

    states = [sheet]
    for k, step in enumerate(steps):
        state = states[-1]
        for a in step:
            new = crease(state, tuple(a["start"]), tuple(a["end"]), str(a["assignment"]))
            if not isinstance(new, FoldState):
                raise ValueError(f"step {k}: crease {a} is rejected: {new.reason}: {new.detail}")
            state = new
        states.append(state)
    return states


def replay_problem(pattern: CreasePattern, steps: Sequence[Sequence[dict[str, Any]]]) -> str:
    """Why replaying ``steps`` through the crease action does not give flat-foldable states
    ending in ``pattern`` ("" when it does)."""
    try:
        states = replay_order(bare_sheet(pattern), steps)
    except ValueError as exc:
        return f"replay: {exc}"[:300]
    for k, st in enumerate(states[1:]):
        if not st.flat_foldable:
            return f"replay: step {k} does not fold flat through the crease action ({st.layers.reason})"
    if not same_pattern(states[-1].pattern, pattern):
        return "replay: the last state is not the design's pattern"
    return ""


def bare_sheet(pattern: CreasePattern) -> FoldState:
    """The design's sheet (its outline, which need not be a square) with no crease."""
    from shredfold.origami import CreasePattern, state_from_pattern

    outline = pattern.segments[pattern.assignments == "B"]
    return state_from_pattern(CreasePattern.from_segments(outline, "B" * len(outline)))


def same_pattern(a: CreasePattern, b: CreasePattern) -> bool:
    """The same creases with the same assignments (vertices matched within the snapping
    tolerance), whatever their numbering."""
    from scipy.spatial import cKDTree

    if len(a.vertices) != len(b.vertices) or len(a.edges) != len(b.edges):
        return False
    tol = 4 * max(a.eps, b.eps)
    dist, idx = cKDTree(b.vertices).query(a.vertices)
    if np.any(dist > tol) or len(set(idx.tolist())) != len(idx):
        return False
    mine = {(frozenset((int(idx[p]), int(idx[q]))), str(s)) for (p, q), s in zip(a.edges, a.assignments, strict=True)}
    theirs = {(frozenset((int(p), int(q))), str(s)) for (p, q), s in zip(b.edges, b.assignments, strict=True)}
    return mine == theirs
