"""Actions of the interactive environment: add a crease, or fold the folded model.

States are immutable; every action returns a new :class:`FoldState` or a
:class:`Rejection` whose ``reason`` is machine-readable.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import shapely

from . import affine
from .cells import OverlapError, build_cells
from .constraints import KeyIndex
from .fold_format import FoldFormatError
from .folded import FoldedGeometry, fold_geometry
from .layers import LayerResult, solve_layers
from .pattern import CreasePattern

Point = int | Sequence[float]
RejectReason = Literal[
    "syntax",
    "off-sheet",
    "maekawa",
    "kawasaki",
    "crimp",
    "dangling",
    "length",
    "overlap",
    "layer-order",
    "not-flat",
    "thickness",
]

# A coordinate closer than this (relative to the sheet) to a vertex or lattice point is that
# point: agents type rounded numbers, and folds create points a float error apart.
SNAP = 1e-6
# The most layers an action may stack at one point. Ordering layers costs memory with the
# cube of a stack's depth (folding the sheet in half 8 times: 256 layers, 3 s and 0.6 GB;
# 9 times: 512 layers, 26 s and 3.5 GB; 10 times past 4 GB), and any model may ask for a
# fold per turn. A simple fold at most doubles the layers anywhere, so a sequence of up to
# 8 folds (every procedural design, every shipped simple-fold sequence) never reaches it.
MAX_LAYERS = 256


@dataclass(frozen=True)
class Rejection:
    reason: RejectReason
    detail: str


@dataclass(frozen=True)
class FoldStep:
    start: tuple[float, float]  # folded-plane coordinates of the fold line
    end: tuple[float, float]
    assignment: str
    # crease-pattern segments the fold made; coordinates, because later folds renumber edges
    creases: tuple[tuple[tuple[float, float], tuple[float, float]], ...]
    anchor: tuple[float, float]  # a crease-pattern point on a face that did not move


@dataclass(frozen=True, eq=False)
class FoldState:
    """The folded model: a crease pattern and where its faces land (``geometry``, which holds
    the pattern: ``pattern`` is ``geometry.pattern``, stored once), one valid layer order,
    the simple folds that made it and the lattice creases snap to.

    What the actions (:func:`crease`, :func:`fold`, :func:`unfold`) take and return, and what
    OrigamiBench's episodes, MCQ options and targets are made of. Immutable, so the MCQ
    prefixes and the agents' caches of states by history share states instead of copying
    them. It is not a ``CreasePattern``, which holds no folded positions and no layer order
    (a solve that takes seconds on a large design), and not a ``FoldFrame``, which has no
    place for the steps ``unfold`` undoes.

    The one path to each neighbour: from a pattern :func:`state_from_pattern`
    (:func:`square_sheet` is the unit square's); to a pattern ``state.pattern``; to a file
    ``write_fold(state.pattern.to_fold_frame(state.layers.face_orders))`` (a target's
    ``state.fold``).
    """

    geometry: FoldedGeometry  # holds the crease pattern it folds
    layers: LayerResult  # one valid layer order when flat-foldable
    steps: tuple[FoldStep, ...] = ()
    lattice: int = 8  # boundary reference points: each outline edge divided in this many parts

    @property
    def pattern(self) -> CreasePattern:
        return self.geometry.pattern

    @property
    def flat_foldable(self) -> bool:
        return self.layers.satisfiable


def square_sheet(size: float = 1.0, lattice: int = 8) -> FoldState:
    """The unfolded square sheet with corners (0, 0) and (size, size)."""
    corners = np.array([[0, 0], [size, 0], [size, size], [0, size]], float)
    segs = np.stack([corners, np.roll(corners, -1, axis=0)], axis=1)
    return state_from_pattern(CreasePattern.from_segments(segs, "BBBB"), lattice=lattice)


def state_from_pattern(pattern: CreasePattern, lattice: int = 8) -> FoldState:
    return FoldState(
        geometry=fold_geometry(pattern),
        layers=solve_layers(pattern, limit=1),
        lattice=lattice,
    )


# ---- crease ----------------------------------------------------------------------------


def crease(
    state: FoldState, start: Point, end: Point, assignment: str, *, strict: bool = False
) -> FoldState | Rejection:
    """Add a crease on the sheet between two points (vertex ids or coordinates).

    Coordinates snap to existing vertices and to the boundary lattice. The new state
    records whether the pattern now folds flat; with ``strict`` a pattern that does not is
    rejected instead (patterns built crease by crease are rarely flat-foldable midway).
    """
    if assignment not in ("M", "V", "F", "U"):
        return Rejection("syntax", f"assignment must be M, V, F or U, not {assignment!r}")
    pattern = state.pattern
    anchors = np.concatenate([pattern.vertices, _lattice_points(pattern, state.lattice)])
    pts = []
    for p in (start, end):
        got = _resolve(p, pattern.vertices, anchors, SNAP * pattern.size)
        if isinstance(got, Rejection):
            return got
        pts.append(got)
    seg = np.array(pts)
    if np.hypot(*(seg[1] - seg[0])) <= pattern.eps:
        return Rejection("syntax", "start and end are the same point")
    line = shapely.LineString(seg)
    if not pattern.sheet.buffer(pattern.eps).covers(line):
        return Rejection("off-sheet", f"segment {seg.tolist()} leaves the sheet")
    try:
        new = CreasePattern.from_segments(
            np.concatenate([pattern.segments, seg[None]]),
            [*pattern.assignments.tolist(), assignment],
            eps=pattern.eps,
            seed_points=pattern.vertices,
        )
    except FoldFormatError as exc:
        return Rejection("syntax", str(exc))
    layers = solve_layers(new, limit=1, max_layers=MAX_LAYERS)
    if layers.status == "too-thick":
        return Rejection("thickness", f"the crease would stack {layers.detail}")
    if strict and not layers.satisfiable:
        return Rejection(_reason(layers), layers.detail)
    return FoldState(
        geometry=fold_geometry(new),
        layers=layers,
        steps=state.steps,
        lattice=state.lattice,
    )


def _lattice_points(pattern: CreasePattern, n: int) -> np.ndarray:
    if n <= 0:
        return np.zeros((0, 2))
    ring = np.asarray(pattern.sheet.exterior.coords)[:-1]
    a, b = ring, np.roll(ring, -1, axis=0)
    t = np.arange(n) / n
    return (a[:, None, :] + t[None, :, None] * (b - a)[:, None, :]).reshape(-1, 2)


def _resolve(
    p: Point, vertices: np.ndarray, anchors: np.ndarray, snap: float
) -> np.ndarray | Rejection:
    if isinstance(p, (int, np.integer)) and not isinstance(p, bool):
        if not 0 <= p < len(vertices):
            return Rejection("syntax", f"vertex {p} does not exist (0..{len(vertices) - 1})")
        return vertices[int(p)].copy()
    try:
        xy = np.asarray(p, dtype=float).reshape(2)
    except (TypeError, ValueError):
        return Rejection("syntax", f"not a vertex id or an (x, y) point: {p!r}")
    if not np.all(np.isfinite(xy)):
        return Rejection("syntax", f"non-finite coordinate {p!r}")
    d = np.hypot(*(anchors - xy).T)
    i = int(np.argmin(d))
    return anchors[i].copy() if d[i] <= snap else xy


def _reason(layers: LayerResult) -> RejectReason:
    return layers.reason or "layer-order"  # type: ignore[return-value]


# ---- simple folds -----------------------------------------------------------------------


def fold(state: FoldState, start: Point, end: Point, assignment: str) -> FoldState | Rejection:
    """Fold every layer along the line through ``start`` and ``end`` (folded-plane points,
    or vertex ids whose folded position is used).

    The layers left of start -> end turn over onto the right side: in front of the model
    for a valley ("V"), behind it for a mountain ("M").
    """
    if assignment not in ("M", "V"):
        return Rejection("syntax", f"a fold is M or V, not {assignment!r}")
    if not state.flat_foldable:
        return Rejection("not-flat", "the current crease pattern does not fold flat")
    pattern, geom = state.pattern, state.geometry
    snap = SNAP * pattern.size
    pts = []
    for p in (start, end):
        got = _resolve(p, geom.vertices, geom.vertices, snap)
        if isinstance(got, Rejection):
            return got
        pts.append(got)
    p, q = pts
    direction = q - p
    if np.hypot(*direction) <= pattern.eps:
        return Rejection("syntax", "start and end are the same point")
    unit = direction / np.hypot(*direction)

    pieces, letters = [], []
    reach = 4 * (pattern.size + float(np.abs(geom.vertices).max()) + float(np.abs(pts).max()))
    # the fold line in each face's crease-pattern coordinates, cut by the face, all at once
    inv = affine.invert(geom.transforms)
    a = affine.apply(inv, (p - reach * unit)[None])
    b = affine.apply(inv, (p + reach * unit)[None])
    polys = pattern.face_polygons
    cuts = shapely.intersection(polys, shapely.linestrings(np.stack([a, b], axis=1)))
    for f in np.flatnonzero(~shapely.is_empty(cuts)).tolist():
        poly = polys[f]
        for piece in _lines(cuts[f]):
            mid = piece.interpolate(0.5, normalized=True)
            if piece.length <= pattern.eps or poly.exterior.distance(mid) <= pattern.eps:
                continue  # runs along the face's outline, not through it
            pieces.append(np.asarray(piece.coords)[[0, -1]])
            # turning the left layers towards the viewer is a valley seen from the front
            valley = (assignment == "V") != bool(geom.flipped[f])
            letters.append("V" if valley else "M")

    assign = pattern.assignments.copy()
    # flat creases lying on the line fold too
    fseg = geom.vertices[pattern.edges]
    on_line = np.all(np.abs(_side(fseg.reshape(-1, 2), p, unit).reshape(-1, 2)) <= pattern.eps, axis=1)
    flat_on_line = np.flatnonzero(on_line & (assign == "F"))
    for e in flat_on_line:
        f = pattern.edges_faces[e, 0]
        valley = (assignment == "V") != bool(geom.flipped[f])
        assign[e] = "V" if valley else "M"
    if not pieces and len(flat_on_line) == 0:
        return Rejection("off-sheet", "the fold line does not cross the model")

    segs = np.concatenate([pattern.segments, np.array(pieces).reshape(-1, 2, 2)])
    new = CreasePattern.from_segments(
        segs,
        [*assign.tolist(), *letters],
        eps=pattern.eps,
        seed_points=pattern.vertices,
    )
    kept = _keep_still(new, state.geometry, pattern, p, unit)
    if kept is None:
        return Rejection("off-sheet", "no layer lies right of the fold line")
    new_geom, anchor = kept
    layers = solve_layers(new, limit=1, prefer=_stacking(state, new, new_geom, assignment), max_layers=MAX_LAYERS)
    if layers.status == "too-thick":
        return Rejection("thickness", f"the fold would stack {layers.detail}")
    if not layers.satisfiable:
        return Rejection(_reason(layers), layers.detail)
    try:
        # The layers were solved on the pattern folded from its first face; the state keeps
        # it folded from the face that stayed still, and drawing arranges that geometry.
        # The two differ in their last bits, and on thick stacks of slivers that can make
        # the second inconsistent: a state no one can draw is no state.
        build_cells(new_geom)
    except OverlapError as exc:
        return Rejection("overlap", str(exc))
    made = tuple(
        tuple(map(tuple, new.segments[e].tolist()))
        for e in _edges_on_line(new, new_geom, pattern, p, unit)
    )
    step = FoldStep(tuple(map(float, p)), tuple(map(float, q)), assignment, made, anchor)
    return FoldState(
        geometry=new_geom,
        layers=layers,
        steps=(*state.steps, step),
        lattice=state.lattice,
    )


def _stacking(
    state: FoldState, new: CreasePattern, new_geom: FoldedGeometry, assignment: str
) -> Callable[[np.ndarray], np.ndarray]:
    """The layer order a simple fold makes physically: layers that stay keep their order,
    the turned-over ones reverse theirs and land in front (valley) or behind (mountain)."""
    old = state.pattern
    reps = shapely.point_on_surface(new.face_polygons)
    hit, old_face = shapely.STRtree(old.face_polygons).query(reps, predicate="intersects")
    source = np.full(new.n_faces, -1, np.int64)
    source[hit[::-1]] = old_face[::-1]  # the first hit per new face
    if (source < 0).any():
        return lambda pairs: np.zeros(len(pairs), np.int8)  # no preference
    moved = ~np.all(
        np.isclose(
            new_geom.transforms, state.geometry.transforms[source], atol=old.eps, rtol=0.0
        ),
        axis=(1, 2),
    )
    # old order as "f above g" towards the viewer (+z), keyed by f * n + g
    n_old = old.n_faces
    orders = state.layers.face_orders
    if orders is None:
        orders = np.zeros((0, 3), np.int64)
    f, g, side = orders[:, 0], orders[:, 1], orders[:, 2]
    f_up = (side == 1) ^ state.geometry.flipped[f]
    keys = np.concatenate([f * n_old + g, g * n_old + f])
    by = np.argsort(keys, kind="stable")
    old_pair = KeyIndex(keys[by], n_old**2)
    above = np.concatenate([f_up, ~f_up])[by]
    front = assignment == "V"

    def prefer(pairs: np.ndarray) -> np.ndarray:
        a, b = pairs[:, 0], pairs[:, 1]
        ma, mb = moved[a], moved[b]
        pos = old_pair(source[a] * n_old + source[b])
        was_above = above[np.maximum(pos, 0)] if len(above) else np.zeros(len(a), bool)
        a_up = np.where(ma == mb, was_above ^ ma, np.where(ma, front, not front))
        # faces on one side keep (or reverse) an order they had; across the fold, always
        valid = (pos >= 0) | (ma != mb)
        # as FOLD faceOrders: relative to the side face a's normal points to
        side = np.where(a_up ^ new_geom.flipped[a], 1, -1)
        return np.where(valid, side, 0).astype(np.int8)

    return prefer


def unfold(state: FoldState) -> FoldState | Rejection:
    """Undo the last fold: its creases stay in the paper, flattened (assignment F)."""
    if not state.steps:
        return Rejection("syntax", "nothing to unfold")
    step = state.steps[-1]
    assign = state.pattern.assignments.copy()
    made = shapely.linestrings(np.asarray(step.creases, float).reshape(-1, 2, 2))
    mids = shapely.points(state.pattern.segments.mean(axis=1))
    hit, _ = shapely.STRtree(made).query(mids, predicate="dwithin", distance=state.pattern.eps)
    on = np.zeros(len(assign), bool)
    on[hit] = True
    assign[on & np.isin(assign, ("M", "V"))] = "F"
    pattern = state.pattern.with_assignments(assign)
    # the face that stayed still during the fold stays still while unfolding it
    anchor = shapely.points(step.anchor)
    root = int(shapely.STRtree(pattern.face_polygons).query(anchor, predicate="intersects")[0])
    geom = fold_geometry(pattern, root=root, root_transform=state.geometry.transforms[root])
    return FoldState(
        geometry=geom,
        layers=solve_layers(pattern, limit=1),
        steps=state.steps[:-1],
        lattice=state.lattice,
    )


def _lines(geom: shapely.Geometry) -> list[shapely.LineString]:
    if isinstance(geom, shapely.LineString):
        return [geom] if not geom.is_empty else []
    if hasattr(geom, "geoms"):
        return [g for part in geom.geoms for g in _lines(part)]
    return []


def _side(points: np.ndarray, p: np.ndarray, unit: np.ndarray) -> np.ndarray:
    """Signed distance from the directed line (positive on the left)."""
    rel = points - p
    return unit[0] * rel[:, 1] - unit[1] * rel[:, 0]


def _keep_still(
    new: CreasePattern,
    old_geom: FoldedGeometry,
    old: CreasePattern,
    p: np.ndarray,
    unit: np.ndarray,
) -> tuple[FoldedGeometry, tuple[float, float]] | None:
    """Fold ``new`` rooted at a face right of the line, placed where it was before; also
    returns a crease-pattern point inside that face."""
    reps = shapely.point_on_surface(new.face_polygons)
    xy = shapely.get_coordinates(reps)
    owner = shapely.STRtree(old.face_polygons).query(reps, predicate="within")
    old_face = np.full(new.n_faces, -1)
    old_face[owner[0]] = owner[1]
    placed = np.flatnonzero(old_face >= 0)
    images = affine.apply(old_geom.transforms[old_face[placed]], xy[placed])
    right = placed[_side(images, p, unit) < -new.eps]
    if not len(right):
        return None
    f = int(right[0])  # the first such face, as ever: it roots the new folded geometry
    t = old_geom.transforms[old_face[f]]
    return fold_geometry(new, root=f, root_transform=t), (float(xy[f, 0]), float(xy[f, 1]))


def _edges_on_line(
    pattern: CreasePattern,
    geom: FoldedGeometry,
    old: CreasePattern,
    p: np.ndarray,
    unit: np.ndarray,
) -> tuple[int, ...]:
    """Fold creases on the fold line that were not already folds before it."""
    seg = geom.vertices[pattern.edges].reshape(-1, 2)
    on = np.all(np.abs(_side(seg, p, unit).reshape(-1, 2)) <= 4 * pattern.eps, axis=1)
    on &= np.isin(pattern.assignments, ("M", "V"))
    old_folds = shapely.linestrings(old.segments[np.isin(old.assignments, ("M", "V"))])
    mids = shapely.points(pattern.segments.mean(axis=1))
    hit, _ = shapely.STRtree(old_folds).query(mids, predicate="dwithin", distance=pattern.eps)
    on[hit] = False
    return tuple(np.flatnonzero(on).tolist())
