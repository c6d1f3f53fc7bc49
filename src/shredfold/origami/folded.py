"""Folded geometry: where each face lands once every fold crease is folded flat."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import shapely
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import breadth_first_order, minimum_spanning_tree

from . import affine
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
        pts = affine.apply(self.transforms[f], self.pattern.vertices[loop])
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
    tree_sym = coo_matrix(
        (np.ones(2 * tree.nnz), (np.r_[tree.row, tree.col], np.r_[tree.col, tree.row])),
        shape=(n_f, n_f),
    )
    order, parent = breadth_first_order(tree_sym.tocsr(), root, directed=False)
    if len(order) != n_f:
        raise ValueError("crease pattern faces are not connected")

    # the crease each tree edge crosses: look the face pair up among the inner edges
    lo, hi = np.minimum(ef[eids, 0], ef[eids, 1]), np.maximum(ef[eids, 0], ef[eids, 1])
    pair_key = lo * n_f + hi
    by_key = np.argsort(pair_key, kind="stable")
    child = order[1:]
    par = parent[child]
    want = np.minimum(par, child) * n_f + np.maximum(par, child)
    # the last of equal keys, as a dict filled in edge order would keep
    crossed = eids[by_key[np.searchsorted(pair_key[by_key], want, side="right") - 1]]

    reflect = np.isin(pattern.assignments, FOLDS)
    step = np.broadcast_to(np.eye(3), (len(child), 3, 3)).copy()
    folds = reflect[crossed]
    step[folds] = _reflections(np.take(seg, crossed[folds], axis=0))
    transforms = np.empty((n_f, 3, 3))
    transforms[root] = np.eye(3) if root_transform is None else root_transform
    # breadth-first order: a face's parent is placed before the face
    affine.compose_down(transforms, child, par, step)

    # folded vertex positions from each face, then agreement between faces
    inc_face = np.repeat(np.arange(n_f), [len(lp) for lp in pattern.faces])
    inc_vert = np.concatenate(pattern.faces)
    # np.take: numpy 1.26 gathers rows of 2-d and 3-d arrays several times faster so
    p = np.take(pattern.vertices, inc_vert, axis=0)
    t = np.take(transforms, inc_face, axis=0)
    pos = affine.apply(t, p)
    rank = np.empty(n_f, dtype=np.int64)
    rank[order] = np.arange(n_f)
    first = np.lexsort((rank[inc_face], inc_vert))
    is_first = np.r_[True, inc_vert[first][1:] != inc_vert[first][:-1]]
    folded = np.zeros_like(pattern.vertices)
    folded[inc_vert[first][is_first]] = np.compress(is_first, np.take(pos, first, axis=0), axis=0)
    closure = float(np.max(np.hypot(*(pos - np.take(folded, inc_vert, axis=0)).T))) if len(pos) else 0.0
    fseg = np.take(folded, pattern.edges, axis=0)
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


def _reflections(seg: np.ndarray) -> np.ndarray:
    """(k, 3, 3) affine reflections across the lines through segments ``seg`` (k, 2, 2)."""
    x0, y0 = seg[:, 0, 0], seg[:, 0, 1]
    dx, dy = seg[:, 1, 0] - x0, seg[:, 1, 1] - y0
    n2 = dx * dx + dy * dy
    a, b = (dx * dx - dy * dy) / n2, 2 * dx * dy / n2
    out = np.zeros((len(seg), 3, 3))
    out[:, 0, 0], out[:, 0, 1], out[:, 1, 0], out[:, 1, 1] = a, b, b, -a
    out[:, 0, 2] = x0 - (a * x0 + b * y0)
    out[:, 1, 2] = y0 - (b * x0 - a * y0)
    out[:, 2, 2] = 1.0
    return out


def folded_silhouette(geometry: FoldedGeometry) -> shapely.Polygon | shapely.MultiPolygon:
    """Union of the folded faces: the outline of the folded model."""
    grid = geometry.pattern.eps
    polys = shapely.set_precision(geometry.face_polygons, grid)
    return shapely.union_all(polys, grid_size=grid)
