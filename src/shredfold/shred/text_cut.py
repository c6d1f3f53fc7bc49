"""A cut in which every piece holds some of the page's text.

A scrap of bare paper tells a model nothing and only adds an image to read; the paper's
pages are filled with text, so its scraps rarely are bare. Pages here are cut to their
content's width (``render.fit``), but a code listing's short lines still leave paper empty,
and a Voronoi cell can fall there. So the cut is drawn again, from the same generator, until
every piece holds a character (the centre of its box, as the failure diagnostics count it),
at most :data:`TRIES` times, keeping the draw with the fewest bare pieces.
"""

from __future__ import annotations

import numpy as np
from shapely.geometry import Polygon

from shredfold.shred.diagnostics import piece_of_glyphs
from shredfold.shred.voronoi import cut

TRIES = 32


def bare_pieces(polygons: list[Polygon], boxes: np.ndarray) -> int:
    """How many of ``polygons`` hold the centre of none of the character ``boxes``."""
    if not len(boxes):
        return len(polygons)
    coords = [list(p.exterior.coords) for p in polygons]
    return len(polygons) - len(set(piece_of_glyphs(boxes, coords).tolist()))


def cut_holding_text(
    width: float, height: float, n: int, rng: np.random.Generator, jagged: float, boxes: np.ndarray,
    spread: bool = True,
) -> list[Polygon]:
    """:func:`~shredfold.shred.voronoi.cut`, drawn until no piece is bare (see the module)."""
    best: tuple[int, list[Polygon]] | None = None
    for _ in range(TRIES if n > 1 and len(boxes) >= n else 1):
        polygons = cut(width, height, n, rng, jagged, spread)
        bare = bare_pieces(polygons, boxes) if n > 1 else 0
        if bare == 0:
            return polygons
        if best is None or bare < best[0]:
            best = (bare, polygons)
    assert best is not None
    return best[1]
