"""What a full-step search reads from the target picture: the target's outline as a polygon.

The picture (:func:`~shredfold.origami_bench.env.render_folded`) shows the folded model over
:data:`~shredfold.metrics.shape.VIEW` with a margin, its paper filled and its edges drawn a
couple of pixels wide. The outline is the contour of the non-background pixels inside the
view, simplified to within a pixel and moved inward by the part of the drawn edges that lies
outside the paper (:data:`PIXEL_SHIFT`, :data:`EDGE_OUTSET`). Read so, the outline of a procedural target
lies within about a pixel of the true one: a search can then compare outlines as polygons,
exactly, where comparing pictures pixel by pixel would mix up outlines a pixel apart.

The search also wants the lines of the target's edges (candidate fold lines) and, for each
line that has the whole target on one side, how much of the outline runs along it: a simple
fold leaves everything on one side of its line, so the last fold of a plan that reaches the
target lies on such a line, and its chord through the outline folded has that length.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import shapely

from shredfold.metrics.shape import VIEW
from shredfold.origami_bench.outlines import Line

# Pixel index -> drawing coordinate, and the pixels of drawn edge outside the paper along
# the contour: fitted on 60 procedural folds' pictures (Pillow draws a wide line's left and
# upper side a little wider than its right and lower one). What is left: each side's mean
# offset within 0.2 pixel (left, right, top, bottom, slanted), a spread of 0.47 pixel.
PIXEL_SHIFT = (0.31, 0.26)
EDGE_OUTSET = 0.42
SUPPORT_TOL_PX = 2.5  # boundary this close to a line runs along it (drawn edges meeting dent it)
MIN_EDGE_PX = 4.0  # shorter edges are corners' rounding, not lines


@dataclass(frozen=True)
class Target:
    outline: shapely.Geometry  # sheet units, inside VIEW
    area: float
    px: float  # sheet units per pixel of the picture
    lines: tuple[Line, ...]  # edge lines, longest first
    supports: np.ndarray  # (k, 2, 2): the outline's extent along each line with all of it on one side


def _frame(size: int, margin: float) -> tuple[float, float, float]:
    x0, y0, x1, y1 = VIEW
    scale = size * (1 - 2 * margin) / max(x1 - x0, y1 - y0)
    return scale, size / 2 - scale * (x0 + x1) / 2, size / 2 + scale * (y0 + y1) / 2


def read_target(png: bytes, max_lines: int = 24) -> Target:
    """The target as a search sees it (see the module's note)."""
    import cv2

    from shredfold.metrics.shape import mask_from_png
    from shredfold.origami.draw import DEFAULT_STYLE

    full = mask_from_png(png)
    n = full.shape[0]
    scale, ox, oy = _frame(n, DEFAULT_STYLE.margin)
    x0, _, x1, _ = VIEW
    # GS's silhouette covers the view only, not the picture's margin around it
    lo, hi = int(np.ceil(ox + scale * x0 - 0.5)), int(np.floor(ox + scale * x1 - 0.5))
    inside = np.zeros_like(full)
    inside[lo : hi + 1, lo : hi + 1] = True
    mask = (full & inside).astype(np.uint8)
    contours, hierarchy = cv2.findContours(mask, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_NONE)

    def ring(c: np.ndarray) -> np.ndarray | None:
        pts = cv2.approxPolyDP(c, 1.0, True).reshape(-1, 2).astype(float) + np.array(PIXEL_SHIFT)
        if len(pts) < 3:
            return None
        return np.stack([(pts[:, 0] - ox) / scale, (oy - pts[:, 1]) / scale], axis=1)

    polys = []
    for i, c in enumerate(contours):
        if hierarchy[0][i][3] >= 0:
            continue  # a hole: taken with its outer ring
        shell = ring(c)
        if shell is None:
            continue
        holes, j = [], hierarchy[0][i][2]
        while j >= 0:
            h = ring(contours[j])
            if h is not None:
                holes.append(h)
            j = hierarchy[0][j][0]
        polys.append(shapely.make_valid(shapely.Polygon(shell, holes)))
    px = 1.0 / scale
    outline = shapely.union_all(polys).buffer(-EDGE_OUTSET * px, join_style="mitre") if polys else shapely.Polygon()
    outline = shapely.intersection(outline, shapely.box(*VIEW))
    outline = _polygons(outline)
    return Target(outline, float(outline.area), px, _edge_lines(outline, px, max_lines), _supports(outline, px))


def target_of_outline(outline: shapely.Geometry, size: int = 256, max_lines: int = 24) -> Target:
    """A target known as a polygon (sheet units), not read from a picture: what the search
    would read from a ``size``-pixel picture of it, without the picture's rounding."""
    from shredfold.origami.draw import DEFAULT_STYLE

    px = 1.0 / _frame(size, DEFAULT_STYLE.margin)[0]
    outline = _polygons(shapely.intersection(outline, shapely.box(*VIEW)))
    return Target(outline, float(outline.area), px, _edge_lines(outline, px, max_lines), _supports(outline, px))


def _polygons(geom: shapely.Geometry) -> shapely.Geometry:
    """Only the polygonal parts (a buffer or a clip can leave slivers of lines)."""
    parts = [g for g in getattr(geom, "geoms", [geom]) if isinstance(g, shapely.Polygon) and not g.is_empty]
    if not parts:
        return shapely.Polygon()
    return parts[0] if len(parts) == 1 else shapely.MultiPolygon(parts)


def _exteriors(outline: shapely.Geometry) -> list[np.ndarray]:
    return [np.asarray(p.exterior.coords)[:-1] for p in getattr(outline, "geoms", [outline]) if not p.is_empty]


def _edge_lines(outline: shapely.Geometry, px: float, most: int) -> tuple[Line, ...]:
    edges: list[tuple[float, Line]] = []
    for ring in _exteriors(outline):
        for a, b in zip(ring, np.roll(ring, -1, axis=0), strict=True):
            length = float(np.hypot(*(b - a)))
            if length >= MIN_EDGE_PX * px:
                edges.append((length, ((float(a[0]), float(a[1])), (float(b[0]), float(b[1])))))
    edges.sort(key=lambda e: -e[0])
    return tuple(line for _, line in edges[:most])


def _supports(outline: shapely.Geometry, px: float) -> np.ndarray:
    """For each line with the whole outline on one side and an edge on it (an edge of the
    convex hull), the extent of the outline along it: its two farthest corners within
    :data:`SUPPORT_TOL_PX` of the line (a drawn notch or a rounded corner between them does
    not split the edge)."""
    if outline.is_empty:
        return np.zeros((0, 2, 2))
    hull = np.asarray(shapely.convex_hull(outline).exterior.coords)
    pts = shapely.get_coordinates(outline)
    found: list[np.ndarray] = []
    tol = SUPPORT_TOL_PX * px
    for a, b in zip(hull[:-1], hull[1:], strict=True):
        if np.hypot(*(b - a)) < MIN_EDGE_PX * px:
            continue
        u = (b - a) / np.hypot(*(b - a))
        rel = pts - a
        on = np.abs(rel[:, 0] * u[1] - rel[:, 1] * u[0]) <= tol
        t = rel[on, 0] * u[0] + rel[on, 1] * u[1]
        found.append(np.stack([a + t.min() * u, a + t.max() * u]))
    return np.array(found).reshape(-1, 2, 2)
