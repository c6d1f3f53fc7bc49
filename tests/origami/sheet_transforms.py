"""Moves of a FOLD frame that must not change whether or how a pattern folds: a rotation
or mirror image of the sheet, a renumbering of its vertices and edges, and float noise on
the coordinates far below the pattern's smallest feature."""

from __future__ import annotations

import math

import numpy as np

from shredfold.origami.fold_format import FoldFrame, frame_from_arrays


def transformed(
    frame: FoldFrame,
    *,
    angle: float = 0.0,
    mirror: bool = False,
    seed: int | None = None,
    noise: float = 0.0,
) -> FoldFrame:
    """``frame`` rotated by ``angle`` radians about its centre, mirrored in x first if
    asked; with a ``seed``, vertices and edges renumbered at random and every coordinate
    moved by up to ``noise`` times the shortest edge."""
    v = np.asarray(frame.vertices_coords, float)
    e = np.asarray(frame.edges_vertices, np.int64)
    centre = (v.min(axis=0) + v.max(axis=0)) / 2
    p = v - centre
    if mirror:
        # a mirror in a vertical plane keeps up and down: mountains stay mountains
        p[:, 0] = -p[:, 0]
    c, s = math.cos(angle), math.sin(angle)
    p = p @ np.array([[c, s], [-s, c]]) + centre
    letters = np.asarray(frame.edges_assignment)
    if seed is not None:
        rng = np.random.default_rng(seed)
        shortest = float(np.hypot(*(v[e[:, 1]] - v[e[:, 0]]).T).min())
        p = p + rng.uniform(-1, 1, p.shape) * noise * shortest
        new_id = rng.permutation(len(p))
        moved = np.empty_like(p)
        moved[new_id] = p
        edge_order = rng.permutation(len(e))
        e = new_id[e][edge_order]
        # an edge may be listed either way round
        flip = rng.random(len(e)) < 0.5
        e[flip] = e[flip][:, ::-1]
        letters = letters[edge_order]
        p = moved
    return frame_from_arrays(p, e, letters)
