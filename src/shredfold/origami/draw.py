"""Pictures of crease patterns and folded states (Pillow; same inputs, same bytes)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw

from .cells import Cells, build_cells
from .folded import FoldedGeometry, folded_silhouette
from .pattern import CreasePattern

Bounds = tuple[float, float, float, float]  # xmin, ymin, xmax, ymax


@dataclass(frozen=True)
class Style:
    background: tuple[int, int, int] = (255, 255, 255)
    boundary: tuple[int, int, int] = (0, 0, 0)
    mountain: tuple[int, int, int] = (214, 39, 40)
    valley: tuple[int, int, int] = (31, 119, 180)
    flat: tuple[int, int, int] = (170, 170, 170)
    unassigned: tuple[int, int, int] = (44, 160, 44)
    front: tuple[int, int, int] = (250, 235, 200)
    back: tuple[int, int, int] = (120, 160, 210)
    line_width: int = 2
    margin: float = 0.05


DEFAULT_STYLE = Style()


class _Frame:
    """Maps model coordinates (y up) to pixels (y down), keeping the aspect ratio."""

    def __init__(self, bounds: Bounds, size: int, margin: float) -> None:
        x0, y0, x1, y1 = bounds
        span = max(x1 - x0, y1 - y0) or 1.0
        self.scale = size * (1 - 2 * margin) / span
        self.ox = size / 2 - self.scale * (x0 + x1) / 2
        self.oy = size / 2 + self.scale * (y0 + y1) / 2

    def __call__(self, pts: np.ndarray) -> list[tuple[float, float]]:
        pts = np.asarray(pts, float).reshape(-1, 2)
        # rounding to 1/64 px keeps the bytes independent of float noise in the geometry
        xs = np.round((self.ox + self.scale * pts[:, 0]) * 64) / 64
        ys = np.round((self.oy - self.scale * pts[:, 1]) * 64) / 64
        return list(zip(xs.tolist(), ys.tolist(), strict=True))


def draw_crease_pattern(
    pattern: CreasePattern, size: int = 512, style: Style = DEFAULT_STYLE
) -> Image.Image:
    """Boundary black; mountains red dash-dot, valleys blue dashed, flat creases grey."""
    img = Image.new("RGB", (size, size), style.background)
    draw = ImageDraw.Draw(img)
    lo, hi = pattern.vertices.min(axis=0), pattern.vertices.max(axis=0)
    frame = _Frame((lo[0], lo[1], hi[0], hi[1]), size, style.margin)
    order = {"F": 0, "U": 1, "M": 2, "V": 2, "B": 3}  # boundary drawn last, on top
    for e in sorted(range(len(pattern.edges)), key=lambda e: (order[pattern.assignments[e]], e)):
        a = pattern.assignments[e]
        p, q = frame(pattern.vertices[pattern.edges[e]])
        colour = {
            "B": style.boundary,
            "M": style.mountain,
            "V": style.valley,
            "F": style.flat,
            "U": style.unassigned,
        }[a]
        width = style.line_width + (1 if a == "B" else 0)
        if a == "M":
            _dashed(draw, p, q, colour, width, (10, 4, 2, 4))
        elif a == "V":
            _dashed(draw, p, q, colour, width, (8, 6))
        else:
            draw.line([p, q], fill=colour, width=width if a != "F" else 1)
    return img


def _dashed(
    draw: ImageDraw.ImageDraw,
    p: tuple[float, float],
    q: tuple[float, float],
    colour: tuple[int, int, int],
    width: int,
    pattern: tuple[int, ...],
) -> None:
    p_, q_ = np.array(p), np.array(q)
    length = float(np.hypot(*(q_ - p_)))
    if length == 0:
        return
    unit = (q_ - p_) / length
    t, i = 0.0, 0
    while t < length:
        step = pattern[i % len(pattern)]
        if i % 2 == 0:
            a, b = p_ + unit * t, p_ + unit * min(t + step, length)
            draw.line([tuple(a), tuple(b)], fill=colour, width=width)
        t += step
        i += 1


def draw_folded(
    geometry: FoldedGeometry,
    face_orders: np.ndarray,
    size: int = 512,
    style: Style = DEFAULT_STYLE,
    bounds: Bounds | None = None,
) -> Image.Image:
    """The folded state seen from above, as opaque paper: each cell shows the side of its
    top face that faces the viewer (front or back colour), and edges are drawn where the top
    face changes. Layers under the top face are hidden, as they are on real paper: a valley
    brings its flap to the front (the flap's other side shows, with its edges), a mountain
    sends it behind, where only what sticks out beyond the layers in front can be seen."""
    cells = build_cells(geometry)
    arr = cells.arrangement
    above = _above_map(geometry, face_orders)
    top = [_top_face(faces, above) for faces in cells.cell_faces]
    if bounds is None:
        bounds = tuple(folded_silhouette(geometry).bounds)  # type: ignore[assignment]
    frame = _Frame(bounds, size, style.margin)
    img = Image.new("RGB", (size, size), style.background)
    draw = ImageDraw.Draw(img)
    polys = _cell_polygons(cells)
    for c, poly in enumerate(polys):
        if top[c] < 0:
            continue
        draw.polygon(frame(poly), fill=style.back if geometry.flipped[top[c]] else style.front)
    width = edge_width(size)
    for s, (c1, c2) in enumerate(cells.segment_cells.tolist()):
        t1 = top[c1] if c1 >= 0 else -1
        t2 = top[c2] if c2 >= 0 else -1
        if t1 != t2:
            draw.line(frame(arr.points[arr.edges[s]]), fill=style.boundary, width=width)
    return img


def edge_width(size: int) -> int:
    """Pixels of a folded drawing's edges: a little wider on larger pictures, so a flap's
    outline survives downscaling."""
    return max(1, round(size / 128))


def _above_map(geometry: FoldedGeometry, face_orders: np.ndarray) -> dict[tuple[int, int], bool]:
    """(f, g) -> f lies above g (towards the viewer), from FOLD faceOrders."""
    out: dict[tuple[int, int], bool] = {}
    for f, g, s in np.asarray(face_orders, dtype=np.int64).reshape(-1, 3).tolist():
        if s == 0:
            continue
        f_above = (s == 1) != bool(geometry.flipped[f])
        out[(f, g)] = f_above
        out[(g, f)] = not f_above
    return out


def _top_face(faces: np.ndarray, above: dict[tuple[int, int], bool]) -> int:
    faces_l = faces.tolist()
    for f in faces_l:
        if all(above.get((f, g), False) for g in faces_l if g != f):
            return f
    return faces_l[0] if faces_l else -1


def _cell_polygons(cells: Cells) -> list[np.ndarray]:
    return [cells.arrangement.points[lp] for lp in cells.cell_loops]


def silhouette_mask(
    geometry: FoldedGeometry, size: int = 128, bounds: Bounds | None = None
) -> Image.Image:
    """Binary image ("1" mode) of the folded silhouette."""
    sil = folded_silhouette(geometry)
    if bounds is None:
        bounds = tuple(sil.bounds)  # type: ignore[assignment]
    frame = _Frame(bounds, size, 0.0)
    img = Image.new("1", (size, size), 0)
    draw = ImageDraw.Draw(img)
    for poly in getattr(sil, "geoms", [sil]):
        if poly.is_empty:
            continue
        draw.polygon(frame(np.asarray(poly.exterior.coords)), fill=1)
        for hole in poly.interiors:
            draw.polygon(frame(np.asarray(hole.coords)), fill=0)
    return img
