"""Folded geometry: where each face lands once every fold crease is folded flat."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import shapely
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import breadth_first_order, minimum_spanning_tree

from .pattern import CreasePattern

FOLDS = ("M", "V", "U")


@dataclass(frozen=True, eq=False)
class FoldedGeometry:
    """Face transforms (3x3 affine, crease pattern -> folded plane) and their consequences."""

    pattern: CreasePattern
    transforms: np.ndarray  # (F, 3, 3)
    vertices: np.ndarray  # (V, 2) folded coordinates
    flipped: np.ndarray  # (F,) bool: face seen from its back
    closure_error: float  # largest disagreement between faces about a vertex's position
    length_error: float  # largest change of an edge's length

    @cached_property
    def face_polygons(self) -> np.ndarray:
        return np.array(
            [shapely.Polygon(self.face_coords(f)) for f in range(self.pattern.n_faces)], dtype=object
        )

    def face_coords(self, f: int) -> np.ndarray:
        loop = self.pattern.faces[f]
        pts = self.pattern.vertices[loop] @ self.transforms[f, :2, :2].T + self.transforms[f, :2, 2]
        # keep polygons counter-clockwise whichever side is up
        return pts[::-1] if self.flipped[f] else pts


def fold_geometry(
    pattern: CreasePattern, root: int = 0, root_transform: np.ndarray | None = None
) -> FoldedGeometry:
    """Reflect faces across fold creases along a spanning tree of the face graph.

    Face ``root`` is placed by ``root_transform`` (identity: it stays where it is on the
    sheet), so a caller can keep the part of the model that did not move in place.

    The tree prefers long edges: a reflection across a short edge amplifies the float error
    of its endpoints over the whole subtree.
    """
    n_f = pattern.n_faces
    ef = pattern.edges_faces
    inner = (ef[:, 0] >= 0) & (ef[:, 1] >= 0)
    seg = pattern.segments
    length = np.hypot(*(seg[:, 1] - seg[:, 0]).T)
    eids = np.flatnonzero(inner)
    weight = (length.max() * 2 - length[eids]) + 1e-12
    graph = coo_matrix((weight, (ef[eids, 0], ef[eids, 1])), shape=(n_f, n_f))
    tree = minimum_spanning_tree(graph + graph.T).tocoo()
    # find which crease each tree edge crosses
    key_to_edge = {}
    for e in eids:
        a, b = ef[e]
        key_to_edge[(min(a, b), max(a, b))] = e
    tree_sym = coo_matrix(
        (np.ones(2 * tree.nnz), (np.r_[tree.row, tree.col], np.r_[tree.col, tree.row])),
        shape=(n_f, n_f),
    )
    order, parent = breadth_first_order(tree_sym.tocsr(), root, directed=False)
    if len(order) != n_f:
        raise ValueError("crease pattern faces are not connected")

    reflect = np.isin(pattern.assignments, FOLDS)
    transforms = np.empty((n_f, 3, 3))
    transforms[root] = np.eye(3) if root_transform is None else root_transform
    for f in order[1:]:
        p = parent[f]
        e = key_to_edge[(min(p, f), max(p, f))]
        t = transforms[p]
        transforms[f] = t @ _reflection(seg[e]) if reflect[e] else t

    # folded vertex positions from each face, then agreement between faces
    inc_face = np.concatenate([np.full(len(lp), i) for i, lp in enumerate(pattern.faces)])
    inc_vert = np.concatenate(pattern.faces)
    p = pattern.vertices[inc_vert]
    t = transforms[inc_face]
    pos = np.einsum("nij,nj->ni", t[:, :2, :2], p) + t[:, :2, 2]
    rank = np.empty(n_f, dtype=np.int64)
    rank[order] = np.arange(n_f)
    first = np.lexsort((rank[inc_face], inc_vert))
    is_first = np.r_[True, inc_vert[first][1:] != inc_vert[first][:-1]]
    folded = np.zeros_like(pattern.vertices)
    folded[inc_vert[first][is_first]] = pos[first][is_first]
    closure = float(np.max(np.hypot(*(pos - folded[inc_vert]).T))) if len(pos) else 0.0
    fseg = folded[pattern.edges]
    flen = np.hypot(*(fseg[:, 1] - fseg[:, 0]).T)
    flipped = np.linalg.det(transforms[:, :2, :2]) < 0
    for a in (transforms, folded, flipped):
        a.setflags(write=False)
    return FoldedGeometry(
        pattern=pattern,
        transforms=transforms,
        vertices=folded,
        flipped=flipped,
        closure_error=closure,
        length_error=float(np.max(np.abs(flen - length))),
    )


def _reflection(seg: np.ndarray) -> np.ndarray:
    (x0, y0), (x1, y1) = seg
    dx, dy = x1 - x0, y1 - y0
    n2 = dx * dx + dy * dy
    a, b = (dx * dx - dy * dy) / n2, 2 * dx * dy / n2
    m = np.array([[a, b], [b, -a]])
    out = np.eye(3)
    out[:2, :2] = m
    out[:2, 2] = np.array([x0, y0]) - m @ np.array([x0, y0])
    return out


def folded_silhouette(geometry: FoldedGeometry) -> shapely.Polygon | shapely.MultiPolygon:
    """Union of the folded faces: the outline of the folded model."""
    grid = geometry.pattern.eps
    polys = shapely.set_precision(geometry.face_polygons, grid)
    return shapely.union_all(polys, grid_size=grid)
