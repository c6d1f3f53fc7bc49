"""Page image + polygons → rotated RGBA pieces, with the pose that undoes the rotation.

Pixels are shared out through one label map (polygons filled in order, later ones winning
on boundary pixels), so the pieces' masks partition the page exactly. Rotation works on
premultiplied colour: otherwise the bicubic kernel would pull the neighbouring piece's ink
(or black) into the soft edge, leaking content across the cut.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np
from shapely.geometry import Polygon

SUBPIXEL_BITS = 4  # fillPoly vertex precision: 1/16 px
EDGE_PAD = 4  # px of clear border around each rotated piece: cubic support + edge pixels
UNASSIGNED = np.iinfo(np.uint16).max


@dataclass(frozen=True)
class Piece:
    """One cut piece, rotated. ``image`` is HxWx4 uint8 RGBA with straight (not
    premultiplied) alpha; ``matrix`` maps page coordinates (pixel corners at integers) to
    ``image`` coordinates."""

    index: int
    image: np.ndarray
    angle: float  # degrees, counter-clockwise as seen on screen
    offset: tuple[int, int]  # page (x, y) of the unrotated crop's top-left corner
    size: tuple[int, int]  # unrotated crop (width, height)
    matrix: tuple[tuple[float, float, float], tuple[float, float, float]]
    # The unrotated page box (offset, size) as RGBA: the page's own pixels (not masked) and
    # the piece as alpha, for synthesizers that turn the sheet themselves (the paper scene).
    crop: np.ndarray | None = None


def label_map(polygons: Sequence[Polygon], width: int, height: int) -> np.ndarray:
    """uint16 map of which polygon owns each pixel; every pixel is owned exactly once."""
    labels = np.full((height, width), UNASSIGNED, dtype=np.uint16)
    scale = 1 << SUBPIXEL_BITS
    for i, poly in enumerate(polygons):
        # fillPoly puts integer coordinates at pixel centres; ours are at pixel corners.
        pts = np.round((np.asarray(poly.exterior.coords) - 0.5) * scale).astype(np.int32)
        cv2.fillPoly(labels, [pts], int(i), lineType=cv2.LINE_8, shift=SUBPIXEL_BITS)
    if (labels == UNASSIGNED).any():
        raise AssertionError("polygons do not cover the page")
    return labels


def _rotation(angle: float) -> np.ndarray:
    t = math.radians(angle)
    c, s = math.cos(t), math.sin(t)
    # Image y points down, so this turns counter-clockwise on screen (as cv2 and PIL do).
    return np.array([[c, s], [-s, c]])


def unpremultiply(rgba: np.ndarray) -> np.ndarray:
    """Straight-alpha RGBA from premultiplied, in place. Colour must not exceed alpha; only
    the few soft-edge pixels need a division (opaque ones are unchanged, clear ones are 0)."""
    a = rgba[..., 3]
    flat = rgba.reshape(-1, 4)
    soft = np.flatnonzero((a.reshape(-1) - 1) < 254)  # 0 < a < 255, one pass (uint8 wraps)
    if soft.size:
        px = flat[soft].astype(np.uint32)
        aa = px[:, 3:4]
        px[:, :3] = np.minimum((px[:, :3] * 255 + aa // 2) // aa, 255)
        flat[soft] = px.astype(np.uint8)
    return rgba


def cut_pieces(
    page: np.ndarray,
    polygons: Sequence[Polygon],
    rng: np.random.Generator,
    max_rotation: float,
) -> list[Piece]:
    """Crop every polygon out of ``page`` (HxWx3 uint8) and rotate it by a random angle in
    [-max_rotation, max_rotation] degrees on a canvas grown to fit."""
    height, width = page.shape[:2]
    labels = label_map(polygons, width, height)
    angles = rng.uniform(-max_rotation, max_rotation, len(polygons))
    pieces: list[Piece] = []
    for i, poly in enumerate(polygons):
        minx, miny, maxx, maxy = poly.bounds
        x0, y0 = max(0, math.floor(minx)), max(0, math.floor(miny))
        x1, y1 = min(width, math.ceil(maxx)), min(height, math.ceil(maxy))
        alpha = (labels[y0:y1, x0:x1] == i).view(np.uint8) * np.uint8(255)
        region = np.ascontiguousarray(page[y0:y1, x0:x1])
        # Binary alpha, so the premultiplied colour is the page colour or 0. (cv2 for the
        # channel shuffles: numpy's strided per-channel ufuncs are several times slower.)
        rgb = cv2.bitwise_and(region, region, mask=alpha)
        crop = cv2.merge([*cv2.split(rgb), alpha])

        angle = round(float(angles[i]), 4)
        rot = _rotation(angle)
        local = np.asarray(poly.exterior.coords) - (x0, y0)
        turned = local @ rot.T
        lo = np.floor(turned.min(axis=0)) - EDGE_PAD
        hi = np.ceil(turned.max(axis=0)) + EDGE_PAD
        out_w, out_h = int(hi[0] - lo[0]), int(hi[1] - lo[1])
        # Crop → image is p ↦ rot·p - lo (continuous coordinates, pixel corners at
        # integers); cv2 indexes pixel centres, hence the half-pixel conjugation.
        m_idx = np.column_stack([rot, rot @ (0.5, 0.5) - lo - 0.5])
        turned_img = cv2.warpAffine(
            crop,
            m_idx,
            (out_w, out_h),
            flags=cv2.INTER_CUBIC,
            borderMode=cv2.BORDER_CONSTANT,
            borderValue=(0, 0, 0, 0),
        )
        # Cubic overshoot can leave colour above alpha; premultiplied colour never exceeds it.
        a = turned_img[..., 3]
        turned_img = cv2.min(turned_img, cv2.merge([a, a, a, a]))
        unpremultiply(turned_img)
        to_image = np.column_stack([rot, -lo - rot @ (x0, y0)])  # page → image
        matrix = tuple(tuple(float(v) for v in row) for row in to_image)
        pieces.append(
            Piece(
                index=i,
                image=turned_img,
                angle=angle,
                offset=(x0, y0),
                size=(x1 - x0, y1 - y0),
                matrix=matrix,  # type: ignore[arg-type]
                crop=cv2.merge([*cv2.split(region), alpha]),
            )
        )
    return pieces


def place_back(piece: Piece, width: int, height: int) -> np.ndarray:
    """The piece warped back into page coordinates, premultiplied RGBA as float32 (0..255):
    summing every piece's result rebuilds the page (used to check poses)."""
    m = np.asarray(piece.matrix, dtype=np.float64)
    lin, t = m[:, :2], m[:, 2]
    m_idx = np.column_stack([lin, t + lin @ (0.5, 0.5) - 0.5])
    rgba = piece.image.astype(np.uint16)
    rgba[..., :3] = (rgba[..., :3] * rgba[..., 3:4] + 127) // 255
    return cv2.warpAffine(
        rgba.astype(np.float32),
        m_idx,
        (width, height),
        flags=cv2.INTER_CUBIC | cv2.WARP_INVERSE_MAP,
        borderMode=cv2.BORDER_CONSTANT,
        borderValue=(0, 0, 0, 0),
    )
