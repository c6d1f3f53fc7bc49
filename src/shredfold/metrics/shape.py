"""GS: silhouette IoU after the best alignment.

Alignment: the silhouettes are rasterised in one fixed frame centred on the sheet's centre
(:data:`VIEW`, twice the sheet's side). The prediction is tried under each of the 8
symmetries of the square (4 rotations by 90°, each with and without a mirror, about the
frame's centre) and then translated so that its area centroid lands on the target's, to the
nearest pixel. GS is the largest IoU over the 8. Identical shapes score exactly 1; a shape
folded at a different place on the sheet, or turned over, loses nothing.
"""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

# Folded states are drawn and rasterised over this square (xmin, ymin, xmax, ymax).
VIEW: tuple[float, float, float, float] = (-0.5, -0.5, 1.5, 1.5)


def iou(a: np.ndarray, b: np.ndarray) -> float:
    union = np.logical_or(a, b).sum()
    if union == 0:
        return 1.0
    return float(np.logical_and(a, b).sum() / union)


def _shift(mask: np.ndarray, dy: int, dx: int) -> np.ndarray:
    out = np.zeros_like(mask)
    h, w = mask.shape
    ys, yd = (slice(0, h - dy), slice(dy, h)) if dy >= 0 else (slice(-dy, h), slice(0, h + dy))
    xs, xd = (slice(0, w - dx), slice(dx, w)) if dx >= 0 else (slice(-dx, w), slice(0, w + dx))
    out[yd, xd] = mask[ys, xs]
    return out


def _centroid(mask: np.ndarray) -> np.ndarray:
    ys, xs = np.nonzero(mask)
    return np.array([ys.mean(), xs.mean()])


def symmetries(mask: np.ndarray) -> list[np.ndarray]:
    """The 8 images of a square mask under the symmetries of the square."""
    out = []
    for k in range(4):
        r = np.rot90(mask, k)
        out += [r, r[:, ::-1]]
    return out


def aligned_iou(pred: np.ndarray, target: np.ndarray) -> float:
    """Best IoU over the square's 8 symmetries, each translated centroid onto centroid."""
    pred, target = np.asarray(pred, bool), np.asarray(target, bool)
    if pred.shape != target.shape or pred.shape[0] != pred.shape[1]:
        raise ValueError(f"masks must be square and of one shape: {pred.shape} vs {target.shape}")
    if not pred.any() or not target.any():
        return float(pred.any() == target.any())
    tc = _centroid(target)
    best = 0.0
    for m in symmetries(pred):
        dy, dx = np.round(tc - _centroid(m)).astype(int)
        best = max(best, iou(_shift(m, int(dy), int(dx)), target))
        if best == 1.0:
            break
    return best


def mask_from_png(png: bytes, background: tuple[int, int, int] = (255, 255, 255)) -> np.ndarray:
    """Pixels of a drawing that are not the background."""
    arr = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
    return np.any(arr != np.array(background, np.uint8), axis=2)


def drawing_bounds(margin: float) -> tuple[float, float, float, float]:
    """Bounds that rasterise with margin 0 onto the pixels a drawing of :data:`VIEW` with
    ``margin`` uses (the engine's drawings leave a margin inside the view)."""
    x0, y0, x1, y1 = VIEW
    pad = (x1 - x0) * margin / (1 - 2 * margin)
    return (x0 - pad, y0 - pad, x1 + pad, y1 + pad)


def rasterize(geom: object, size: int, bounds: tuple[float, float, float, float]) -> np.ndarray:
    """Boolean mask of a shapely (multi)polygon over ``bounds`` (y up), no margin."""
    from PIL import ImageDraw

    x0, y0, x1, y1 = bounds
    span = max(x1 - x0, y1 - y0)
    scale = size / span
    ox, oy = size / 2 - scale * (x0 + x1) / 2, size / 2 + scale * (y0 + y1) / 2

    def px(coords: object) -> list[tuple[float, float]]:
        pts = np.asarray(coords, float)
        return list(zip((ox + scale * pts[:, 0]).tolist(), (oy - scale * pts[:, 1]).tolist(), strict=True))

    img = Image.new("1", (size, size), 0)
    draw = ImageDraw.Draw(img)
    for poly in getattr(geom, "geoms", [geom]):
        if getattr(poly, "is_empty", True) or not hasattr(poly, "exterior"):
            continue
        draw.polygon(px(poly.exterior.coords), fill=1)
        for hole in poly.interiors:
            draw.polygon(px(hole.coords), fill=0)
    return np.asarray(img, bool)
