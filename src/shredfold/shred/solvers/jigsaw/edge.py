"""A scrap's edge to a fraction of a pixel: the alpha and colours of its crop.

Across the cut edge a pixel mixes the paper just inside with the (maybe shadowed) table
just outside, so its paper share is the projection of ``c - B`` on ``P - B``, with ``B``
and ``P`` the colours of the nearest plain table and plain paper (the paper may darken
toward a curled edge, a shadow deepens toward the paper). The reassembly matches cut edges
at sub-pixel accuracy and finds the page border by its straightness, so this share is
what the crop's alpha carries.

Where the colour across the edge is not paper over table — ink comes within reach of the
edge, or the pixel is one the segmentation gave to the scrap (ink the colour of the table
or darker) — the edge is the scrap's pixel boundary moved by the sub-pixel offset that the
clean stretches of edge nearby show against it. The edge pixels' colour has the table
taken out again (else every seam of the reassembled page would be drawn in the table's
colour, through the letters).
"""

from __future__ import annotations

import cv2
import numpy as np

PAPER_SIGMA = 1.0  # px: averaging of the paper colour sampled beside an edge ...
TABLE_SIGMA = 1.0  # ... and of the table's
OFFSET_SIGMA = 4.0  # px: reach along the edge of the clean stretches' sub-pixel offset
INK_SHARE = -0.08  # paper share below this: ink darker than the table, at the edge


def disk(radius: int) -> np.ndarray:
    return cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * radius + 1, 2 * radius + 1))


def _nearest(img: np.ndarray, weight: np.ndarray, rows: np.ndarray, cols: np.ndarray,
             sigma: float) -> np.ndarray:
    """For each (row, col), the colour of the nearest pixel of ``weight``, averaged over
    its ``weight`` neighbours (Gaussian, ``sigma`` px) against noise and texture."""
    wt = weight.astype(np.float32)
    den = cv2.GaussianBlur(wt, (0, 0), sigma)
    num = cv2.GaussianBlur(img * wt[..., None], (0, 0), sigma)
    if not weight.any():
        return np.broadcast_to(img.reshape(-1, 3).mean(axis=0), (len(rows), 3))
    src = np.where(weight, 0, 1).astype(np.uint8)
    _, lab = cv2.distanceTransformWithLabels(src, cv2.DIST_L2, 5,
                                             labelType=cv2.DIST_LABEL_PIXEL)
    # Labels number the zero pixels of src in raster order.
    at = np.flatnonzero(src.reshape(-1) == 0)[lab[rows, cols] - 1]
    return num.reshape(-1, 3)[at] / np.maximum(den.reshape(-1)[at], 1e-3)[:, None]


def _paper_share(img: np.ndarray, paper: np.ndarray, table: np.ndarray, band: np.ndarray,
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per ``band`` pixel, the share of paper in it (float, unclipped): the projection of
    c - B on P - B, with B and P the colours of the nearest plain table and plain paper
    (the paper may darken toward a curled edge, a shadow deepens toward the paper).
    Returns the share (HxW) and B and P at the band pixels (in ``np.nonzero`` order)."""
    kernel = np.ones((3, 3), np.uint8)
    far_table = cv2.erode(table.view(np.uint8), kernel).astype(bool)
    inner = cv2.erode(paper.view(np.uint8), kernel).astype(bool)
    # Paper colour from the white of the paper, not its ink.
    lum = cv2.cvtColor(img, cv2.COLOR_RGB2GRAY)
    if inner.any():
        level = float(np.percentile(lum[inner], 60))
        inner &= lum > level - 40
    rows, cols = np.nonzero(band)
    c = img[rows, cols]
    b = _nearest(img, far_table, rows, cols, TABLE_SIGMA)
    p = _nearest(img, inner, rows, cols, PAPER_SIGMA)
    d = p - b
    share = np.zeros(band.shape, np.float32)
    share[rows, cols] = ((c - b) * d).sum(axis=1) / np.maximum((d * d).sum(axis=1), 100.0)
    return share, b, p


def _signed_distance(mask: np.ndarray) -> np.ndarray:
    """Distance (px) of each pixel centre to the pixel boundary of ``mask``: positive
    inside, negative outside (±0.5 on the pixels either side of it)."""
    inside = cv2.distanceTransform(mask.view(np.uint8), cv2.DIST_L2, 5)
    outside = cv2.distanceTransform((~mask).view(np.uint8), cv2.DIST_L2, 5)
    return np.where(mask, inside - 0.5, 0.5 - outside)


def edge_alpha(img: np.ndarray, filled: np.ndarray, near: np.ndarray,
               plain_table: np.ndarray, given: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Alpha (float 0..1) of one scrap's crop — 1 inside, its paper share across the edge
    — and its colours with the table taken out of the edge pixels (else every seam of
    the reassembled page would be drawn in the table's colour, through the letters)."""
    square = np.ones((3, 3), np.uint8)
    interior = cv2.erode(filled.view(np.uint8), square).astype(bool)
    band = near & ~interior
    share, under, paper = _paper_share(img, filled, plain_table, band)
    alpha = np.where(band, np.clip(share, 0.0, 1.0), 0.0)
    alpha[interior] = 1.0
    odd = _odd_pixels(img, share, filled, band, plain_table, given)
    _edge_offsets(alpha, share, filled, band, odd)
    # c = a·paper + (1 - a)·table, solved for the paper where it is most of the pixel
    # (never brighter than the plain paper beside it: an alpha a little low would turn
    # the rim white); where it is not, the nearest plain paper — or, by ink, the pixel as
    # it is (the paper beside ink is no guide to it).
    rows, cols = np.nonzero(band)
    a = alpha[rows, cols][:, None]
    c = img[rows, cols]
    unmixed = (c - (1.0 - a) * under) / np.maximum(a, 0.5)
    unmixed = np.clip(np.minimum(unmixed, np.maximum(paper, c)), 0.0, 255.0)
    colour = img.copy()
    colour[rows, cols] = np.where(a >= 0.5, unmixed, np.where(odd[rows, cols][:, None], c, paper))
    return alpha, colour


def _odd_pixels(img: np.ndarray, share: np.ndarray, filled: np.ndarray, band: np.ndarray,
                plain_table: np.ndarray, given: np.ndarray) -> np.ndarray:
    """Edge pixels whose colour is not paper over table: pixels given to the scrap
    (table-coloured or dark: ink lines, pockets), ink darker than the table, and any edge
    pixel that ink comes within reach of."""
    odd = band & (given | (filled & (share < INK_SHARE)))
    lum = cv2.cvtColor(img, cv2.COLOR_RGB2GRAY)
    deep = cv2.erode(filled.view(np.uint8), disk(2)).astype(bool)
    if deep.any() and plain_table.any():
        white = float(np.percentile(lum[deep], 90))
        floor = float(np.median(lum[plain_table]))
        ink = deep & (lum < 0.5 * (white + floor))
        # Strokes that reach the edge pass within 2 px of it: ink from 2 px in, grown by 3.
        odd |= band & cv2.dilate(ink.view(np.uint8), disk(3)).astype(bool)
    return odd


def _edge_offsets(alpha: np.ndarray, share: np.ndarray, filled: np.ndarray, band: np.ndarray,
                  odd: np.ndarray) -> None:
    """Set ``alpha`` at the ``odd`` pixels, in place: the scrap's pixel boundary moved by
    the sub-pixel offset the clean stretches of edge nearby show against it."""
    if not odd.any():
        return
    sd = _signed_distance(filled)
    clean = band & ~odd & (share > 0.02) & (share < 0.98)
    offset = np.where(clean, share - 0.5 - sd, 0.0).astype(np.float32)
    num = cv2.GaussianBlur(offset, (0, 0), OFFSET_SIGMA)
    den = cv2.GaussianBlur(clean.astype(np.float32), (0, 0), OFFSET_SIGMA)
    fallback = float(offset[clean].mean()) if clean.any() else 0.0
    shift = np.where(den > 1e-3, num / np.maximum(den, 1e-3), fallback)
    alpha[odd] = np.clip(0.5 + sd[odd] + shift[odd], 0.0, 1.0)
