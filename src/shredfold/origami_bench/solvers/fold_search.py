"""Plan simple folds toward a target picture: exhaustive over the first folds, guided by the
target's outline over the last one, and a beam beyond.

The search sees what a model sees: the target picture, from which it reads the target's
outline as a polygon (:mod:`.target_picture`), and the current state. It works on folded
outlines (:mod:`.outlines`); the engine is asked only to confirm the chosen plan.

The score is GS's own measure on polygons: IoU with the target's outline after the best of
the square's 8 symmetries, centroid on centroid. On polygons, an outline that is the target
scores within a pixel's noise of 1 and is told apart from one a few pixels off by the
distance between their edges (:attr:`Budget.match_px`), which pixels alone blur.

From the blank sheet, the plan comes from three places:

- a library of every outline up to :attr:`Budget.library_depth` folds (one per shape: up to
  the square's symmetries and a translation, GS cannot tell them apart), built once per
  process, target-free. Its outlines are scored best-bound first: an outline of area ``a``
  scores at most ``min(a, A) / max(a, A)`` against a target of area ``A``;
- one more fold from the library's deepest outlines, along lines where it could make the
  target: a simple fold leaves all the paper on one side of its line, so the last fold of a
  plan that reaches the target lies on a line with the whole target on one side, and the
  chord it cuts through the outline before it is the target's edge on that line
  (:attr:`~.target_picture.Target.supports`). Those folds whose result has the target's
  area are scored;
- with more turns left, a beam search onward from the library's deepest outlines, keeping
  the best by the score and by three more measures (:func:`_beam`), since the outline a few
  folds before the target scores low.

A plan that makes the target as a mirror image or a quarter turn of it, in the place a
symmetry of the sheet maps it to, is replayed through that symmetry, so it makes the target
where the picture shows it (GS compares pixels: a copy moved by a fraction of a pixel loses a
little). From any other state (a replanned episode), the beam search alone runs from its
outline. Everything is bounded by counts, never by time, so the same target and start always
give the same plan.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np
import shapely

from shredfold.metrics.shape import VIEW
from shredfold.origami import affine
from shredfold.origami_bench.outlines import (
    SHEET_CENTRE,
    SYMMETRIES,
    Line,
    candidate_lines,
    chords,
    fold_outline,
    line_keys,
    place_key,
    shape_key,
    sheet_place_key,
    snapped,
)
from shredfold.origami_bench.target_picture import Target, read_target

if TYPE_CHECKING:
    from shredfold.origami import FoldState

_VIEW_BOX = shapely.box(*VIEW)
_SHEET = shapely.box(0.0, 0.0, 1.0, 1.0)
MIN_AREA = 2e-3  # outlines smaller than this (sheet areas) are not kept in the library
CHORD_PX = 5.0  # a chord's two ends this close (pixels, together) to a target's edge's


@dataclass(frozen=True)
class Budget:
    """How much one plan may search (counts, so plans do not depend on the machine)."""

    library_depth: int = 4  # folds of the target-free library (about 2,100 shapes at 4)
    last_folds: int = 3000  # target-guided folds past the library
    evaluations: int = 2000  # outlines folded by each beam
    beam: int = 6  # outlines kept at each depth by each of the beam's measures
    target_lines: int = 24  # most edge lines taken from the target picture
    slack: float = 0.15  # share of area a picture's outline may be off by (beam bounds)
    match_px: float = 2.5  # outlines whose edges lie this close (pixels) are the target
    match_checks: int = 200  # leading outlines checked for that
    verify: int = 6  # best plans replayed with the engine before giving up


@dataclass
class Node:
    outline: shapely.Geometry
    folds: tuple[Line, ...]
    area: float
    lines: list[Line] | None = None  # candidate fold lines (library outlines keep theirs)
    raw: int = 0  # folds along lines read from the picture as they are (not exact)
    score: float = -1.0  # GS's measure: aligned IoU with the target (-1: not scored)
    sym: int = 0  # the symmetry that aligns it
    placed: float = 0.0  # IoU where the picture shows the target, without aligning
    recall: float = 0.0  # share of the target, where the picture shows it, that it covers
    cover: float = 0.0  # share of the target covered after the alignment GS picks
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class SearchResult:
    """Scored outlines, best first (see :func:`search`)."""

    nodes: list[Node]
    root_score: float
    evaluations: int = 0


# ---------------------------------------------------------------- scoring


class Scorer:
    """GS's measure against the target's outline, on polygons (see the module's note)."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.t = target.outline
        shapely.prepare(self.t)
        self.t_area = target.area
        self.tc = np.asarray(self.t.centroid.coords[0]) if self.t_area > 0 else SHEET_CENTRE.copy()

    def score_all(self, nodes: list[Node]) -> None:
        """Fill in the measures of ``nodes`` (vectorised over nodes and symmetries)."""
        if not nodes:
            return
        seen = [_in_view(n.outline) for n in nodes]
        areas = np.array([float(g.area) for g in seen])
        live = np.flatnonzero(areas > 0)
        for i in np.flatnonzero(areas <= 0):
            nodes[i].score = nodes[i].placed = nodes[i].recall = nodes[i].cover = 0.0
        if len(live) == 0 or self.t_area <= 0:
            for i in live:
                nodes[i].score = 0.0
            return
        geoms = np.array([seen[i] for i in live], dtype=object)
        placed_inter = shapely.area(shapely.intersection(geoms, self.t))
        aligned = np.repeat(geoms, len(SYMMETRIES))
        owner, coords = _coords(aligned)
        cents = np.array([g.centroid.coords[0] for g in geoms])
        syms = np.tile(np.arange(len(SYMMETRIES)), len(geoms))
        rel = coords - cents[owner // len(SYMMETRIES)]
        m = SYMMETRIES[syms[owner]]
        moved = np.stack(
            (m[:, 0, 0] * rel[:, 0] + m[:, 0, 1] * rel[:, 1], m[:, 1, 0] * rel[:, 0] + m[:, 1, 1] * rel[:, 1]), axis=1
        )
        moved = moved + self.tc
        placed_geoms = shapely.set_coordinates(shapely.from_wkb(shapely.to_wkb(aligned)), moved)
        inter = shapely.area(shapely.intersection(placed_geoms, self.t)).reshape(len(geoms), len(SYMMETRIES))
        a = areas[live][:, None]
        iou = inter / (a + self.t_area - inter)
        best = np.argmax(iou, axis=1)  # first of equals: the order is fixed
        for row, i in enumerate(live):
            node = nodes[i]
            node.score = float(iou[row, best[row]])
            node.sym = int(best[row])
            node.cover = float(inter[row, best[row]] / self.t_area)
            pi = float(placed_inter[row])
            node.placed = pi / (float(a[row, 0]) + self.t_area - pi)
            node.recall = pi / self.t_area

    def aligned(self, node: Node) -> shapely.Geometry:
        """The node's outline as its score aligns it onto the target."""
        g = _in_view(node.outline)
        c = np.asarray(g.centroid.coords[0])
        m = SYMMETRIES[node.sym]
        return shapely.transform(g, lambda xy: affine.linear(m, xy - c) + self.tc)

    def distance_px(self, node: Node) -> float:
        """How far apart (pixels) the aligned outline's edges and the target's lie."""
        g = self.aligned(node)
        d = shapely.hausdorff_distance(g.boundary, self.t.boundary, densify=0.25)
        return float(d) / self.target.px


def _in_view(outline: shapely.Geometry) -> shapely.Geometry:
    """GS sees the view only: paper folded out of it is lost."""
    x0, y0, x1, y1 = outline.bounds
    if x0 >= VIEW[0] and y0 >= VIEW[1] and x1 <= VIEW[2] and y1 <= VIEW[3]:
        return outline
    return shapely.intersection(outline, _VIEW_BOX)


def _coords(geoms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    coords, owner = shapely.get_coordinates(geoms, return_index=True)
    return owner, coords


# ---------------------------------------------------------------- the library


@cache
def library(depth: int) -> tuple[tuple[Node, ...], ...]:
    """Every outline up to ``depth`` folds of the unit square, by depth: one per place up to
    the sheet's symmetries (:func:`~.outlines.sheet_place_key`), so that a plan can make
    the target where the picture shows it. Built once per process (about 6,000 outlines at
    4 folds, some seconds)."""
    levels: list[tuple[Node, ...]] = [(Node(_SHEET, (), 1.0),)]
    seen = {sheet_place_key(_SHEET)}
    for _ in range(depth):
        nxt: list[Node] = []
        for node in levels[-1]:
            for new, line, _ in _children(node):
                if new.area < MIN_AREA:
                    continue
                key = sheet_place_key(new)
                if key in seen:
                    continue
                seen.add(key)
                nxt.append(Node(new, (*node.folds, line), float(new.area)))
        levels.append(tuple(nxt))
    return tuple(levels)


@cache
def _chord_index(depth: int) -> tuple[Any, np.ndarray]:
    """Where every candidate line of the library's deepest outlines crosses its outline, as
    a KD-tree over the two end points (both orders) and rows (node, line) beside it."""
    from scipy.spatial import cKDTree

    nodes = library(depth)[-1]
    rows, ends = [], []
    for i, node in enumerate(nodes):
        if node.lines is None:
            node.lines = candidate_lines(node.outline)
        _, extent = chords(node.outline, node.lines)
        ok = np.flatnonzero(np.all(np.isfinite(extent), axis=(1, 2)))
        e = extent[ok].reshape(-1, 4)
        ends += [e, np.concatenate([e[:, 2:], e[:, :2]], axis=1)]
        rows += [np.stack([np.full(len(ok), i), ok], axis=1)] * 2
    return cKDTree(np.concatenate(ends)), np.concatenate(rows)


def _children(node: Node, extra: tuple[Line, ...] = ()) -> list[tuple[shapely.Geometry, Line, bool]]:
    """Every fold of the node's outline along its candidate lines and ``extra`` (snapped,
    :func:`~.outlines.snapped`), with whether the line is exact."""
    if node.lines is None:
        node.lines = candidate_lines(node.outline)
    lines = [(line, True) for line in node.lines]
    if extra:
        lines += snapped(node.outline, extra, line_keys(*np.asarray(node.lines, float).reshape(-1, 2, 2).transpose(1, 0, 2)))
    out = []
    for (p, q), exact in lines:
        for a, b in ((p, q), (q, p)):
            new = fold_outline(node.outline, np.asarray(a), np.asarray(b))
            if new is not None and not new.is_empty:
                out.append((new, (a, b), exact))
    return out


def _copy(node: Node) -> Node:
    return Node(node.outline, node.folds, node.area, node.lines)


# ---------------------------------------------------------------- the search


def search(outline: shapely.Geometry, target: Target, depth: int, budget: Budget = Budget(), *, from_sheet: bool = False) -> SearchResult:
    """Scored outlines within ``depth`` folds of ``outline`` (the unit square in place when
    ``from_sheet``), best first; see the module's note."""
    scorer = Scorer(target)
    root = Node(outline, (), float(outline.area))
    scorer.score_all([root])
    found: list[Node] = [root]
    evaluations = 0
    # the target's own edge lines, where the picture shows them, are folds no library holds
    # (a corner to the centre, an edge to a diagonal): the beam from the start tries them
    more, evaluations = _beam_search(scorer, [root], depth, budget)
    found += more
    if from_sheet and depth > 0:
        levels = library(min(budget.library_depth, depth))
        found += _best_of_library(scorer, levels)
        if depth > len(levels) - 1:
            last, n = _last_folds(scorer, len(levels) - 1, budget)
            found += last
            evaluations += n
        if depth > len(levels):
            seeds = [_copy(x) for x in levels[-1]]
            scorer.score_all(seeds)
            more, n = _beam_search(scorer, seeds, depth - (len(levels) - 1), budget)
            found += more
            evaluations += n
    return SearchResult(_ranked(scorer, found, budget, from_sheet), root.score, evaluations)


def _best_of_library(scorer: Scorer, levels: tuple[tuple[Node, ...], ...]) -> list[Node]:
    """The library's outlines that could be best, scored best-bound first (see the note)."""
    a_t = scorer.t_area
    pool = [x for level in levels[1:] for x in level]
    if a_t <= 0 or not pool:
        return []
    bound = np.array([min(x.area, a_t) / max(x.area, a_t) for x in pool])
    order = np.argsort(-bound, kind="stable")
    out: list[Node] = []
    best = 0.0
    for start in range(0, len(order), 64):
        batch = order[start : start + 64]
        if bound[batch[0]] < best - 1e-3:
            break
        nodes = [_copy(pool[i]) for i in batch]
        scorer.score_all(nodes)
        out += nodes
        best = max(best, max(x.score for x in nodes))
    return out


def _last_folds(scorer: Scorer, depth: int, budget: Budget) -> tuple[list[Node], int]:
    """One more fold from the library's deepest outlines, along lines that could make the
    target where the picture shows it (up to the sheet's symmetries): the line's chord
    through the outline must lie, end to end, on one of the target's supported edges (see
    the module's note). Kept where the result has the target's area."""
    target = scorer.target
    if target.area <= 0 or len(target.supports) == 0:
        return [], 0
    tree, rows = _chord_index(depth)
    parents = library(depth)[-1]
    px = target.px
    area_tol = max(0.04 * target.area, 2.0 * px * float(target.outline.length))
    hits: set[tuple[int, int]] = set()
    for seg in target.supports:
        for m in SYMMETRIES:
            # the sheet's symmetry x -> m (x - c) + c, undone (m is orthogonal)
            back = affine.linear(m.T, seg - SHEET_CENTRE) + SHEET_CENTRE
            for k in tree.query_ball_point(back.reshape(4), CHORD_PX * px):
                hits.add((int(rows[k, 0]), int(rows[k, 1])))
    out: list[Node] = []
    folds = 0
    for i, j in sorted(hits):
        parent = parents[i]
        if not target.area - area_tol <= parent.area <= 2 * (target.area + area_tol):
            continue
        assert parent.lines is not None
        p, q = parent.lines[j]
        for a, b in ((p, q), (q, p)):
            if folds >= budget.last_folds:
                return _scored(scorer, out), folds
            folds += 1
            new = fold_outline(parent.outline, np.asarray(a), np.asarray(b))
            if new is None or new.is_empty or abs(new.area - target.area) > area_tol:
                continue
            out.append(Node(new, (*parent.folds, (a, b)), float(new.area)))
    return _scored(scorer, out), folds


def _scored(scorer: Scorer, nodes: list[Node]) -> list[Node]:
    scorer.score_all(nodes)
    return nodes


MEASURES = ("score", "placed", "recall", "cover")


def _beam(children: list[Node], floor: float, ceiling: float, width: int) -> list[Node]:
    """The outlines to fold further: the best ``width`` by each of :data:`MEASURES`.

    Aligned IoU alone is greedy: it favours outlines already the target's size, while the
    outline a few folds before the target is larger and scores low. Where the picture shows
    the target is a hint too (an outline that keeps its paper where the target has it is
    on its way), so the beam also keeps the best by IoU and by covered share in place, and
    by covered share after alignment (the larger outlines that could still be folded down).
    """
    # a target too small to reach in the folds left: fold down as far as the folds allow
    pool = [c for c in children if floor <= c.area <= ceiling] or [c for c in children if c.area >= floor]
    chosen: list[Node] = []
    taken: set[int] = set()
    shapes: set[tuple[float, bytes]] = set()
    for measure in MEASURES:
        # stable sorts: ties keep the order found, so plans are reproducible
        ranked = sorted(range(len(pool)), key=lambda i: (-getattr(pool[i], measure), -pool[i].score))
        kept = 0
        for i in ranked:
            if kept >= width:
                break
            shape = shape_key(pool[i].outline)
            if i in taken or (measure == "score" and shape in shapes):
                continue
            taken.add(i)
            shapes.add(shape)
            chosen.append(pool[i])
            kept += 1
    return chosen


def _beam_search(scorer: Scorer, roots: list[Node], depth: int, budget: Budget) -> tuple[list[Node], int]:
    """Beam search over up to ``depth`` folds from ``roots``; every outline scored."""
    target = scorer.target
    floor = target.area * (1 - budget.slack)
    frontier = _beam(roots, floor, target.area * 2.0**depth * (1 + budget.slack), budget.beam) if len(roots) > 1 else roots
    seen = {place_key(r.outline) for r in frontier}
    found: list[Node] = []
    evaluations = 0
    for level in range(depth):
        children: list[Node] = []
        for node in frontier:
            if evaluations >= budget.evaluations:
                break
            for new, line, exact in _children(node, target.lines):
                if evaluations >= budget.evaluations:
                    break
                key = place_key(new)
                if key in seen:
                    continue
                seen.add(key)
                evaluations += 1
                children.append(Node(new, (*node.folds, line), float(new.area), raw=node.raw + (not exact)))
        scorer.score_all(children)
        found += children
        if not children or max(c.score for c in children) >= 1 - 1e-9:
            break
        # a fold at most halves the area: an outline more than 2**r times the target's
        # cannot reach it in the r folds left
        ceiling = target.area * 2.0 ** (depth - level - 1) * (1 + budget.slack)
        frontier = _beam(children, floor, ceiling, budget.beam)
        if not frontier or evaluations >= budget.evaluations:
            break
    return found, evaluations


def _ranked(scorer: Scorer, found: list[Node], budget: Budget, from_sheet: bool) -> list[Node]:
    """Best first: outlines whose edges lie on the target's (:attr:`Budget.match_px`) lead,
    those with exact fold lines first (a plan along lines read from the picture as they are
    copies its rounding), then those a symmetry of the sheet lays onto it in place
    (:func:`in_place`), then the shorter plan; then by score, scores a pixel's worth apart being equal, the
    outline where the picture has the target first, then the shorter plan. (The picture's
    rounding leaves every outline's score a little off; the distance between edges tells
    the target from an outline a few pixels off it.)"""
    order = sorted(
        range(len(found)),
        key=lambda i: (-round(found[i].score, 3), -round(found[i].placed, 3), len(found[i].folds), i),
    )
    ranked = [found[i] for i in order]
    if not ranked:
        return ranked
    top = ranked[0].score
    head = [n for n in ranked[: budget.match_checks] if n.folds and n.score >= top - 0.06]
    for n in head:
        n.extra["match"] = scorer.distance_px(n) <= budget.match_px
    for n in head:
        if n.extra["match"] and from_sheet:
            n.extra["in_place"] = in_place(scorer, n, budget.match_px)
    matches = sorted(
        (n for n in head if n.extra["match"]), key=lambda n: (n.raw > 0, n.extra.get("in_place") is None, len(n.folds))
    )
    return matches + [n for n in ranked if not n.extra.get("match")]


# ---------------------------------------------------------------- a plan the engine accepts


def in_place(scorer: Scorer, node: Node, match_px: float = Budget.match_px) -> tuple[Line, ...] | None:
    """The node's folds mapped by a symmetry of the sheet that lays its outline onto the
    target where the picture shows it (edges within ``match_px``), or None when none does."""
    g = _in_view(node.outline)
    c = np.asarray(g.centroid.coords[0])
    for k, m in enumerate(SYMMETRIES):
        # the sheet's symmetry x -> m (x - centre) + centre takes the centroid onto the target's
        if np.hypot(*(scorer.tc - SHEET_CENTRE - affine.linear(m, c - SHEET_CENTRE))) > 2 * scorer.target.px:
            continue
        moved = shapely.transform(g, lambda xy, m=m: affine.linear(m, xy - SHEET_CENTRE) + SHEET_CENTRE)
        d = shapely.hausdorff_distance(moved.boundary, scorer.t.boundary, densify=0.25) / scorer.target.px
        if d > match_px:
            continue
        if k == 0:
            return node.folds

        def image(p: tuple[float, float], m: np.ndarray = m) -> tuple[float, float]:
            x = affine.linear(m, np.asarray(p, float) - SHEET_CENTRE) + SHEET_CENTRE
            return (float(x[0]), float(x[1]))

        mirror = m[0, 0] * m[1, 1] - m[0, 1] * m[1, 0] < 0
        # a mirror swaps the sides of a line: the same paper moves if the line runs backwards
        return tuple((image(b), image(a)) if mirror else (image(a), image(b)) for a, b in node.folds)
    return None


def plan_folds(state: FoldState, target_png: bytes, steps: int, budget: Budget = Budget()) -> list[dict[str, Any]]:
    """Up to ``steps`` fold actions from ``state`` toward the pictured target, each one
    accepted by the engine (empty when no fold improves the score)."""
    if steps <= 0 or not state.flat_foldable:
        return []
    return plan_toward(state, read_target(target_png, budget.target_lines), steps, budget)[0]


def plan_toward(state: FoldState, target: Target, steps: int, budget: Budget = Budget()) -> tuple[list[dict[str, Any]], float]:
    """:func:`plan_folds` toward a target already read, and the plan's score (GS's measure
    on polygons; the start's when the plan is empty)."""
    from shredfold.origami import folded_silhouette

    outline = folded_silhouette(state.geometry)
    from_sheet = not state.steps and shapely.equals(shapely.normalize(outline.simplify(1e-9)), shapely.normalize(_SHEET))
    result = search(outline, target, steps, budget, from_sheet=from_sheet)
    for tried, node in enumerate(result.nodes):
        if node.score <= result.root_score + 1e-3 or tried >= budget.verify:
            break
        tries = [node.folds]
        placed = node.extra.get("in_place")
        if placed is not None and placed != node.folds:
            tries.insert(0, placed)
        for folds in tries:
            actions = engine_actions(state, folds)
            if actions is not None:
                return actions, node.score
    return [], result.root_score


def engine_actions(state: FoldState, folds: tuple[Line, ...]) -> list[dict[str, Any]] | None:
    """The folds as actions, replayed with the engine from ``state`` (None if one is rejected)."""
    from shredfold.origami import FoldState as Accepted
    from shredfold.origami_bench.env import apply
    from shredfold.origami_bench.prompts import Action

    out = []
    for a, b in folds:
        action = Action((round(a[0], 9), round(a[1], 9)), (round(b[0], 9), round(b[1], 9)), "V")
        new = apply(state, action, "fold")
        if not isinstance(new, Accepted):
            return None
        state = new
        out.append(action.as_json())
    return out


def turns_left(prompt: str) -> int:
    """Turns an agent has left, this one included, from the prompt's "Turn N of at most M"."""
    import re

    m = re.search(r"Turn (\d+) of at most (\d+)\.", prompt)
    return int(m.group(2)) - int(m.group(1)) + 1 if m else 1
