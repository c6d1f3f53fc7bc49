"""Plan simple folds toward a target silhouette: beam search on folded outlines.

A simple fold reflects the part of the outline left of a line onto the right, so the folded
outline after a fold is ``(outline - left) | mirror(outline & left)`` whatever the layers
inside (cheap shapely work; the engine is only asked to confirm the chosen plan). The search
sees what a model sees: the target picture, from which it takes a mask and the lines of the
target's edges. Candidate fold lines of an outline are the lines through two of its corners,
the perpendicular bisectors of two corners (a corner laid onto another), the bisectors of the
angle at a corner (an edge laid onto its neighbour) and the target's edge lines; each is
tried in both directions.

The score is GS's own measure on the picture's pixels: IoU after the best of the square's 8
symmetries, translated centroid onto centroid, with each outline drawn as the picture draws
it. The beam keeps the best outlines by that score and by three more measures (see
:func:`_beam`), since the outline a few folds before the target scores low. Folding never
adds area and at most halves it, so an outline already smaller than the target, or too large
to reach it in the folds left, is scored but not folded further. The search is bounded by
counts (beam width, outlines scored), never by time, so the same target and start always
give the same plan; the agent plans once per episode and replays the plan turn by turn.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import shapely
from PIL import Image, ImageDraw
from shapely import affinity

from shredfold.metrics.shape import VIEW, symmetries
from shredfold.origami import affine

if TYPE_CHECKING:
    from shredfold.origami import FoldState

Line = tuple[tuple[float, float], tuple[float, float]]

# Outlines change by less than this (sheet areas) are the same outline.
MIN_CHANGE = 1e-4
# Precision of the outline arithmetic (sheet units).
GRID = 1e-9
_VIEW_BOX = shapely.box(*VIEW)


@dataclass(frozen=True)
class Budget:
    """How much one plan may search (counts, so plans do not depend on the machine)."""

    beam: int = 6  # outlines kept at each depth by each of the beam's measures
    evaluations: int = 6000  # outlines scored in one plan, all depths together
    target_lines: int = 24  # most edge lines taken from the target picture
    slack: float = 0.15  # an outline may be this share smaller than the pictured target (its
    # edges are drawn a pixel wide) and still fold
    verify: int = 6  # best plans replayed with the engine before giving up


@dataclass(frozen=True)
class Target:
    """What the search knows of the target: its mask and the lines of its edges."""

    mask: np.ndarray  # bool: the picture's non-background pixels
    margin: float  # of the picture, which shows :data:`VIEW`
    area: float  # sheet units
    lines: tuple[Line, ...]


@dataclass(frozen=True)
class Node:
    outline: shapely.Geometry
    folds: tuple[Line, ...]
    score: float  # GS's measure: aligned IoU with the target
    area: float
    placed: float  # IoU where the picture shows the target, without aligning
    recall: float  # share of the target, where the picture shows it, that the outline covers
    cover: float  # share of the target covered after the alignment GS picks


@dataclass
class SearchResult:
    """Every scored outline, best first (see :func:`search`)."""

    nodes: list[Node]
    evaluations: int
    root_score: float
    expanded: int = 0


# ---------------------------------------------------------------- outlines


def fold_outline(outline: shapely.Geometry, p: np.ndarray, q: np.ndarray) -> shapely.Geometry | None:
    """The outline after folding everything left of p -> q onto the right (None if no-op)."""
    p, q = np.asarray(p, float), np.asarray(q, float)
    d = q - p
    n = np.hypot(*d)
    if n < 1e-9:
        return None
    u = d / n
    left_n = np.array([-u[1], u[0]])
    side = affine.dot2(corners(outline) - p, left_n)
    if side.size == 0 or side.max() <= 1e-9 or side.min() >= -1e-9:
        return None  # the line does not cut the outline
    r = 10.0
    half = shapely.Polygon([p - r * u, p + r * u, p + r * u + r * left_n, p - r * u + r * left_n])
    try:
        # on a fixed grid: unions of reflected pieces meet a float error apart, which
        # floating GEOS may refuse ("side location conflict")
        left = shapely.intersection(outline, half, grid_size=GRID)
        if left.area < MIN_CHANGE or left.area > outline.area - MIN_CHANGE:
            return None
        right = shapely.difference(outline, half, grid_size=GRID)
        m = 2 * np.outer(u, u) - np.eye(2)
        off = p - affine.linear(m, p)
        mirrored = affinity.affine_transform(left, [m[0, 0], m[0, 1], m[1, 0], m[1, 1], off[0], off[1]])
        return shapely.union(right, mirrored, grid_size=GRID)
    except shapely.errors.GEOSException:
        return None


def corners(outline: shapely.Geometry) -> np.ndarray:
    """Corners of an outline's rings, collinear points dropped."""
    rings = []
    for poly in getattr(outline, "geoms", [outline]):
        if poly.is_empty or not hasattr(poly, "exterior"):
            continue
        simple = poly.simplify(1e-7)
        for ring in [simple.exterior, *simple.interiors]:
            rings.append(np.asarray(ring.coords)[:-1])
    if not rings:
        return np.zeros((0, 2))
    return np.concatenate(rings)


def _rings(outline: shapely.Geometry) -> Iterator[np.ndarray]:
    for poly in getattr(outline, "geoms", [outline]):
        if not poly.is_empty and hasattr(poly, "exterior"):
            yield np.asarray(poly.simplify(1e-7).exterior.coords)[:-1]


def candidate_lines(outline: shapely.Geometry, extra: tuple[Line, ...] = ()) -> list[Line]:
    """Distinct fold lines for an outline, one direction each (see the module's note)."""
    from shredfold.origami_bench.procedural import corner_pair_lines

    lines = corner_pair_lines(corners(outline))
    for ring in _rings(outline):
        k = len(ring)
        for i in range(k):
            prev, here, nxt = ring[i - 1], ring[i], ring[(i + 1) % k]
            u, v = prev - here, nxt - here
            nu, nv = np.hypot(*u), np.hypot(*v)
            if nu < 1e-9 or nv < 1e-9:
                continue
            bis = u / nu + v / nv
            if np.hypot(*bis) < 1e-9:
                continue
            lines.append((here, here + bis))
    seen: set[tuple[float, float, float]] = set()
    out: list[Line] = []
    for a, b in lines:
        key = _line_key(a, b)
        if key in seen:
            continue
        seen.add(key)
        out.append(((float(a[0]), float(a[1])), (float(b[0]), float(b[1]))))
    # the target's edges are read from pixels: one near a line above is that line, exactly
    exact = np.array(sorted(seen)) if seen else np.zeros((0, 3))
    for a, b in extra:
        k = np.array(_line_key(np.asarray(a, float), np.asarray(b, float)))
        if len(exact) and np.any(np.all(np.abs(exact - k) <= (0.02, 0.02, 0.01), axis=1)):
            continue
        exact = np.vstack([exact, k])
        out.append(((float(a[0]), float(a[1])), (float(b[0]), float(b[1]))))
    return out


def _line_key(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float]:
    d = (b - a) / np.hypot(*(b - a))
    if d[0] < -1e-12 or (abs(d[0]) <= 1e-12 and d[1] < 0):
        d = -d
    normal_offset = float(d[0] * a[1] - d[1] * a[0])
    return (round(float(d[0]), 6), round(float(d[1]), 6), round(normal_offset, 6))


def _place_key(outline: shapely.Geometry) -> tuple[float, bytes]:
    """The same for equal outlines in the same place."""
    pts = np.round(corners(outline), 5) + 0.0
    pts = pts[np.lexsort((pts[:, 1], pts[:, 0]))]
    return (round(float(outline.area), 5), pts.tobytes())


def _shape_key(outline: shapely.Geometry) -> tuple[float, bytes]:
    """The same for outlines equal up to the square's symmetries and a translation: the
    area, and the corners about the centroid as unordered pairs (|dx|, |dy|), which those
    symmetries permute (shapes differing only otherwise are rare, and merely not searched twice)."""
    pts = corners(outline)
    if len(pts) == 0:
        return (0.0, b"")
    rel = np.abs(pts - np.asarray(outline.centroid.coords[0]))
    pairs = np.round(np.sort(rel, axis=1), 4) + 0.0
    pairs = pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]
    return (round(float(outline.area), 5), pairs.tobytes())


# ---------------------------------------------------------------- scoring


def draw_mask(outline: shapely.Geometry, size: int, margin: float) -> np.ndarray:
    """The pixels a folded-state picture of this outline covers: filled, and its edges drawn
    as wide as :func:`~shredfold.origami.draw.draw_folded` draws them (a fill alone
    misses up to a tenth of a thin shape's picture)."""
    x0, y0, x1, y1 = VIEW
    scale = size * (1 - 2 * margin) / max(x1 - x0, y1 - y0)
    ox, oy = size / 2 - scale * (x0 + x1) / 2, size / 2 + scale * (y0 + y1) / 2
    img = Image.new("1", (size, size), 0)
    draw = ImageDraw.Draw(img)
    rings = []
    for poly in getattr(outline, "geoms", [outline]):
        if poly.is_empty or not hasattr(poly, "exterior"):
            continue
        for k, ring in enumerate([poly.exterior, *poly.interiors]):
            pts = np.asarray(ring.coords)
            xy = list(zip((ox + scale * pts[:, 0]).tolist(), (oy - scale * pts[:, 1]).tolist(), strict=True))
            draw.polygon(xy, fill=1 if k == 0 else 0)
            rings.append(xy)
    from shredfold.origami.draw import edge_width

    for xy in rings:
        draw.line(xy, fill=1, width=edge_width(size))
    return np.asarray(img, bool)


def _crop(mask: np.ndarray) -> np.ndarray:
    rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
    if len(rows) == 0:
        return mask[:0, :0]
    return mask[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1]


def _sym_centroids(c: np.ndarray, shape: tuple[int, int]) -> list[np.ndarray]:
    """Centroids of :func:`symmetries` of an array of ``shape`` whose centroid is ``c``."""
    out = []
    y, x = float(c[0]), float(c[1])
    h, w = shape
    for _ in range(4):
        out += [np.array([y, x]), np.array([y, w - 1 - x])]
        # np.rot90: (y, x) of an h x w array goes to (w - 1 - x, y) of a w x h one
        y, x, h, w = w - 1 - x, y, w, h
    return out


class Scorer:
    """GS's measure against one target mask: IoU after the best of the square's 8
    symmetries, translated centroid onto centroid (as :func:`aligned_iou`, on crops)."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.t = target.mask
        ys, xs = np.nonzero(self.t)
        self.t_area = len(ys)
        self.tc = np.array([ys.mean(), xs.mean()]) if len(ys) else np.zeros(2)

    def score(self, outline: shapely.Geometry) -> float:
        return self.scores(outline)[0]

    def scores(self, outline: shapely.Geometry) -> tuple[float, float, float, float]:
        """Aligned IoU; IoU and the target's covered share where the outline lies; the
        target's covered share after the alignment."""
        # GS sees the view only: paper folded out of it is lost
        full = draw_mask(shapely.intersection(outline, _VIEW_BOX), self.t.shape[0], self.target.margin)
        inter = np.count_nonzero(full & self.t)
        union = np.count_nonzero(full) + self.t_area - inter
        placed = inter / union if union else 1.0
        recall = inter / self.t_area if self.t_area else 1.0
        aligned, cover = self._aligned(_crop(full))
        return aligned, placed, recall, cover

    def _aligned(self, m: np.ndarray) -> tuple[float, float]:
        ys, xs = np.nonzero(m)
        if len(ys) == 0 or self.t_area == 0:
            return float(len(ys) == self.t_area), 0.0
        n = self.t.shape[0]
        best, cover = 0.0, 0.0
        for s, c in zip(symmetries(m), _sym_centroids(np.array([ys.mean(), xs.mean()]), m.shape), strict=True):
            oy, ox = np.round(self.tc - c).astype(int)
            h, w = s.shape
            y0, x0, y1, x1 = max(oy, 0), max(ox, 0), min(oy + h, n), min(ox + w, n)
            if y0 >= y1 or x0 >= x1:
                continue
            part = s[y0 - oy : y1 - oy, x0 - ox : x1 - ox]  # pixels shifted off the frame are lost
            inter = np.count_nonzero(self.t[y0:y1, x0:x1] & part)
            iou = inter / (np.count_nonzero(part) + self.t_area - inter)
            if iou > best:
                best, cover = iou, inter / self.t_area
        return float(best), float(cover)


# ---------------------------------------------------------------- the target


def target_from_png(png: bytes, max_lines: int) -> Target:
    """The target as the search sees it: the picture's non-background pixels, and the lines
    of its outline's longest edges (sheet coordinates)."""
    import cv2

    from shredfold.metrics.shape import mask_from_png
    from shredfold.origami.draw import DEFAULT_STYLE

    margin = DEFAULT_STYLE.margin
    full = mask_from_png(png)
    n = full.shape[0]
    x0, y0, x1, y1 = VIEW
    scale = n * (1 - 2 * margin) / max(x1 - x0, y1 - y0)
    ox, oy = n / 2 - scale * (x0 + x1) / 2, n / 2 + scale * (y0 + y1) / 2
    # GS's silhouette covers the view only, not the picture's margin around it
    lo, hi = int(np.ceil(ox + scale * x0 - 0.5)), int(np.floor(ox + scale * x1 - 0.5))
    inside = np.zeros_like(full)
    inside[lo : hi + 1, lo : hi + 1] = True
    full = full & inside
    contours, _ = cv2.findContours(full.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    edges: list[tuple[float, Line]] = []
    for c in contours:
        if len(c) < 3:
            continue
        poly = cv2.approxPolyDP(c, 1.0, True).reshape(-1, 2).astype(float)
        for i in range(len(poly)):
            a, b = poly[i], poly[(i + 1) % len(poly)]
            length = float(np.hypot(*(b - a)))
            if length < 4:
                continue
            wa = ((a[0] + 0.5 - ox) / scale, (oy - a[1] - 0.5) / scale)
            wb = ((b[0] + 0.5 - ox) / scale, (oy - b[1] - 0.5) / scale)
            edges.append((length, (wa, wb)))
    edges.sort(key=lambda e: -e[0])
    area = float(full.sum()) / scale**2
    return Target(full, margin, area, tuple(line for _, line in edges[:max_lines]))


# ---------------------------------------------------------------- the search


def _node(scorer: Scorer, outline: shapely.Geometry, folds: tuple[Line, ...]) -> Node:
    score, placed, recall, cover = scorer.scores(outline)
    return Node(outline, folds, score, float(outline.area), placed, recall, cover)


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
            shape = _shape_key(pool[i].outline)
            if i in taken or (measure == "score" and shape in shapes):
                continue
            taken.add(i)
            shapes.add(shape)
            chosen.append(pool[i])
            kept += 1
    return chosen


def search(
    outline: shapely.Geometry, target: Target, depth: int, budget: Budget = Budget()
) -> SearchResult:
    """Beam search over up to ``depth`` folds from ``outline``; every scored outline, best first."""
    scorer = Scorer(target)
    root = _node(scorer, outline, ())
    found: list[Node] = [root]
    seen = {_place_key(outline)}
    frontier = [root]
    evaluations, expanded = 1, 0
    floor = target.area * (1 - budget.slack)
    for level in range(depth):
        children: list[Node] = []
        for node in frontier:
            if evaluations >= budget.evaluations:
                break
            expanded += 1
            for p, q in candidate_lines(node.outline, target.lines):
                for a, b in ((p, q), (q, p)):
                    if evaluations >= budget.evaluations:
                        break
                    new = fold_outline(node.outline, np.asarray(a), np.asarray(b))
                    if new is None or new.is_empty:
                        continue
                    key = _place_key(new)
                    if key in seen:
                        continue
                    seen.add(key)
                    evaluations += 1
                    children.append(_node(scorer, new, (*node.folds, (a, b))))
        found += children
        if not children or max(c.score for c in children) >= 1 - 1e-9:
            break
        # a fold at most halves the area: an outline more than 2**r times the target's
        # cannot reach it in the r folds left
        ceiling = target.area * 2.0 ** (depth - level - 1) * (1 + budget.slack)
        frontier = _beam(children, floor, ceiling, budget.beam)
        if not frontier or evaluations >= budget.evaluations:
            break
    # scores a pixel's worth apart are equal; then the outline where the picture has the
    # target wins (a congruent outline turned or moved rasterises a little differently,
    # which costs a thin shape GS), then the shorter plan
    order = sorted(
        range(len(found)),
        key=lambda i: (-round(found[i].score, 3), -round(found[i].placed, 3), len(found[i].folds), i),
    )
    return SearchResult([found[i] for i in order], evaluations, root.score, expanded)


# ---------------------------------------------------------------- a plan the engine accepts


def plan_folds(state: FoldState, target_png: bytes, steps: int, budget: Budget = Budget()) -> list[dict[str, Any]]:
    """Up to ``steps`` fold actions from ``state`` toward the pictured target, each one
    accepted by the engine (empty when no fold improves the score)."""
    from shredfold.origami import folded_silhouette

    if steps <= 0 or not state.flat_foldable:
        return []
    target = target_from_png(target_png, budget.target_lines)
    result = search(folded_silhouette(state.geometry), target, steps, budget)
    for tried, node in enumerate(result.nodes):
        if node.score <= result.root_score + 1e-3 or tried >= budget.verify:
            break
        actions = engine_actions(state, node.folds)
        if actions is not None:
            return actions
    return []


def engine_actions(state: FoldState, folds: tuple[Line, ...]) -> list[dict[str, Any]] | None:
    """The folds as actions, replayed with the engine from ``state`` (None if one is rejected)."""
    from shredfold.origami import FoldState as Accepted
    from shredfold.origami_bench.env import apply
    from shredfold.prompts.origami import Action

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
