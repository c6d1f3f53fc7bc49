"""The crease pattern: a planar graph on the sheet with mountain/valley assignments."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Literal

import numpy as np
import shapely

from .arrangement import arrange, trace_faces
from .fold_format import FoldFormatError, FoldFrame, frame_from_arrays, read_cp, read_fold
from .proximity import smallest_gap

# Merge priority when several input segments become one edge: the sheet's outline wins,
# then folds, then flat creases.
_PRIORITY = {"B": 0, "M": 1, "V": 1, "U": 2, "F": 3}

# Snapping tolerance relative to the smallest feature of the input, bounded relative to
# the sheet: float error of a few ulps must merge, genuine features must not.
_FEATURE_FRACTION = 1 / 64
_MIN_REL = 1e-11
_MAX_REL = 1e-7

# A sheet within this distance of the unit square (its longer side 1) is on it already:
# read_pattern(fit=True) leaves its coordinates alone, bit for bit.
_UNIT_SLACK = 1e-6


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class CreasePattern:
    """An immutable crease pattern: the planar arrangement of a sheet and its creases.

    ``faces[f]`` lists vertex ids counter-clockwise; ``edges_faces[e]`` is
    ``(left, right)`` of the edge directed ``edges[e, 0] -> edges[e, 1]``, -1 outside the sheet.

    Vertices merged within ``eps``, crossings split, faces traced, the outline marked ``B``,
    all in read-only numpy arrays: what every engine function takes. Built once (arranging
    one of Flat-Folder's largest takes a second) and shared by reference between states,
    caches and their derived views, so it never changes. It is not a ``FoldFrame``, which is
    a file's edges as written, unarranged; nor a ``FoldState``, which adds where the faces
    land and one layer order, a solve that can take seconds.

    The one path to each neighbour: from a file's text :func:`read_pattern` (the solver's
    benchmarks and OrigamiBench's designs alike); from a frame :meth:`from_fold`; from
    segments :meth:`from_segments` (the actions, the built-in set); to a frame
    :meth:`to_fold_frame`; to a state ``state_from_pattern``; back from a state
    ``state.pattern``.
    """

    vertices: np.ndarray  # (V, 2)
    edges: np.ndarray  # (E, 2)
    assignments: np.ndarray  # (E,) of "M", "V", "B", "F", "U"
    faces: tuple[np.ndarray, ...]
    edges_faces: np.ndarray  # (E, 2)
    eps: float

    @classmethod
    def from_segments(
        cls,
        segments: np.ndarray | Sequence[Sequence[Sequence[float]]],
        assignments: Sequence[str],
        *,
        eps: float | None = None,
        seed_points: np.ndarray | None = None,
    ) -> CreasePattern:
        """Build the arrangement of ``segments`` (S, 2, 2); raises FoldFormatError if it
        is not one connected sheet."""
        segs = np.asarray(segments, dtype=float).reshape(-1, 2, 2)
        assign = np.asarray(list(assignments), dtype="<U1")
        if len(assign) != len(segs):
            raise FoldFormatError("edges_assignment", "one assignment per segment required")
        if len(segs) == 0:
            raise FoldFormatError("edges_vertices", "no edges")
        if not np.all(np.isfinite(segs)):
            bad = int(np.flatnonzero(~np.isfinite(segs).all(axis=(1, 2)))[0])
            raise FoldFormatError("edges_vertices", "non-finite coordinate", bad)
        if eps is None:
            eps = snap_tolerance(segs.reshape(-1, 2))
        arr = arrange(segs, eps, seed_points=seed_points)
        if len(arr.edges) == 0:
            raise FoldFormatError("edges_vertices", "no edges of positive length")
        prio = np.full(len(assign), -1, np.int64)
        for letter, rank in _PRIORITY.items():
            prio[assign == letter] = rank
        if (prio < 0).any():  # an unknown letter: the lookup names it
            prio = np.array([_PRIORITY[x] for x in assign], np.int64)
        # per edge, the first of its sources (ascending) with the highest priority
        src = arr.sources
        best = np.minimum.reduceat(prio[src] * (len(assign) + 1) + src, arr.sources_indptr[:-1])
        edge_assign = assign[best % (len(assign) + 1)]
        return cls._from_graph(arr.points, arr.edges, edge_assign, eps)

    @classmethod
    def from_fold(cls, frame: FoldFrame, *, eps: float | None = None) -> CreasePattern:
        """Build from a FOLD frame; the edge soup is re-arranged, so crossings are repaired.
        (From a file's text, :func:`read_pattern`.)"""
        v = np.asarray(frame.vertices_coords, dtype=float).reshape(-1, 2)
        e = np.asarray(frame.edges_vertices, dtype=np.int64).reshape(-1, 2)
        return cls.from_segments(np.take(v, e, axis=0), frame.edges_assignment, eps=eps, seed_points=v)

    @classmethod
    def _from_graph(
        cls, points: np.ndarray, edges: np.ndarray, assign: np.ndarray, eps: float
    ) -> CreasePattern:
        traced = trace_faces(points, edges)
        outer = np.flatnonzero(traced.loop_areas <= 0)
        if len(outer) != 1:
            raise FoldFormatError(
                "edges_vertices",
                f"crease pattern must be one connected sheet, found {len(outer)} pieces",
            )
        inner = np.flatnonzero(traced.loop_areas > 0)
        face_id = np.full(len(traced.loops), -1, dtype=np.int64)
        face_id[inner] = np.arange(len(inner))
        hl = face_id[traced.halfedge_loop].reshape(-1, 2)
        # edges with the outside on one side must be the sheet's outline
        on_boundary = (hl[:, 0] < 0) | (hl[:, 1] < 0)
        assign = assign.copy()
        assign[on_boundary] = "B"
        inside_b = (~on_boundary) & (assign == "B")
        # a "B" line inside the sheet would be a cut, which this engine does not model
        assign[inside_b] = "F"
        return cls(
            vertices=_readonly(points),
            edges=_readonly(edges.astype(np.int64)),
            assignments=_readonly(assign),
            faces=tuple(_readonly(traced.loops[i]) for i in inner),
            edges_faces=_readonly(hl),
            eps=float(eps),
        )

    # ---- derived views -------------------------------------------------------------------

    @property
    def n_faces(self) -> int:
        return len(self.faces)

    @cached_property
    def sheet(self) -> shapely.Polygon:
        """The unfolded sheet as a polygon."""
        return shapely.union_all(self.face_polygons).buffer(0)

    @cached_property
    def face_polygons(self) -> np.ndarray:
        sizes = [len(f) for f in self.faces]
        if not sizes:
            return np.zeros(0, dtype=object)
        rings = shapely.linearrings(
            self.vertices[np.concatenate(self.faces)], indices=np.repeat(np.arange(len(sizes)), sizes)
        )
        return shapely.polygons(rings)

    @cached_property
    def size(self) -> float:
        lo, hi = self.vertices.min(axis=0), self.vertices.max(axis=0)
        return float(np.max(hi - lo))

    @cached_property
    def vertex_edge_lists(self) -> tuple[np.ndarray, np.ndarray]:
        """CSR ``(indptr, edge ids)``: the edges at each vertex, counter-clockwise."""
        ends = np.concatenate([self.edges[:, 0], self.edges[:, 1]])
        other = np.concatenate([self.edges[:, 1], self.edges[:, 0]])
        eid = np.concatenate([np.arange(len(self.edges))] * 2)
        vec = np.take(self.vertices, other, axis=0) - np.take(self.vertices, ends, axis=0)
        ang = np.arctan2(vec[:, 1], vec[:, 0])
        order = np.lexsort((ang, ends))
        indptr = np.searchsorted(ends[order], np.arange(len(self.vertices) + 1))
        return indptr, eid[order]

    @cached_property
    def boundary_vertices(self) -> np.ndarray:
        mask = np.zeros(len(self.vertices), bool)
        mask[self.edges[self.assignments == "B"].ravel()] = True
        return mask

    def to_fold_frame(self, face_orders: np.ndarray | None = None) -> FoldFrame:
        return frame_from_arrays(
            self.vertices,
            self.edges,
            self.assignments,
            faces=self.faces,
            face_orders=face_orders,
            metadata={"frame_classes": ["creasePattern"]},
        )

    def with_assignments(self, assignments: np.ndarray) -> CreasePattern:
        return CreasePattern(
            vertices=self.vertices,
            edges=self.edges,
            assignments=_readonly(np.asarray(assignments, dtype="<U1")),
            faces=self.faces,
            edges_faces=self.edges_faces,
            eps=self.eps,
        )

    @property
    def segments(self) -> np.ndarray:
        return np.take(self.vertices, self.edges, axis=0)


def snap_tolerance(points: np.ndarray) -> float:
    """Tolerance for merging points: a fraction of the smallest distance between distinct
    input points, clamped to a band relative to the sheet size."""
    points = np.asarray(points, float)
    size = float(np.max(points.max(axis=0) - points.min(axis=0))) or 1.0
    floor = size * _MIN_REL
    # among each point's 8 nearest (itself and its copies included), the nearest further
    # than 64 floors: duplicates that differ by float error are not features
    gap = float(smallest_gap(np.ascontiguousarray(points), floor * 64, min(len(points), 8)))
    feature = gap if np.isfinite(gap) else size
    return float(np.clip(feature * _FEATURE_FRACTION, floor, size * _MAX_REL))


def read_pattern(text: str, fmt: Literal["fold", "cp"] = "fold", *, fit: bool = False) -> CreasePattern:
    """The crease pattern of a FOLD file (its key frame) or an ORIPA ``.cp`` file: the one way
    a file becomes a pattern, for the solver's benchmarks and OrigamiBench's designs alike.

    With ``fit`` the sheet is moved and scaled so that its bounding box has its longer side
    1 and its lower-left corner at the origin, unless it already lies in the unit square with
    its longer side 1 (within ``_UNIT_SLACK``): then every coordinate is used as written, so a
    design drawn on the unit square is the same pattern read either way. (Moving coordinates
    by a few ulps is not harmless: it can tip the overlap graph's stability scan to another
    snapping distance, and a design that folds flat to one that does not.)
    """
    if fmt == "cp":
        raw = read_cp(text)
        segs = np.array([[p, q] for p, q, _ in raw], dtype=float).reshape(-1, 2, 2)
        move = _unit_fit(segs.reshape(-1, 2)) if fit else None
        if move is not None:
            segs = (segs - move[0]) / move[1]
        return CreasePattern.from_segments(segs, [a for *_, a in raw])
    if fmt != "fold":
        raise ValueError(f"unknown crease pattern format {fmt!r} (fold or cp)")
    frame = read_fold(text).key_frame
    if fit:
        v = np.asarray(frame.vertices_coords, dtype=float).reshape(-1, 2)
        used = np.unique(np.asarray(frame.edges_vertices, dtype=np.int64).ravel())
        move = _unit_fit(v[used]) if len(used) else None
        if move is not None:
            moved = (v - move[0]) / move[1]
            frame = replace(frame, vertices_coords=tuple((float(x), float(y)) for x, y in moved))
    return CreasePattern.from_fold(frame)


def _unit_fit(points: np.ndarray) -> tuple[np.ndarray, float] | None:
    """``(corner, side)`` that map the points' bounding box onto the unit square, or None
    when it is there already."""
    lo, hi = points.min(axis=0), points.max(axis=0)
    side = float((hi - lo).max())
    on_unit = lo.min() >= -_UNIT_SLACK and hi.max() <= 1 + _UNIT_SLACK and abs(side - 1) <= _UNIT_SLACK
    return None if on_unit or side <= 0 else (lo, side)
