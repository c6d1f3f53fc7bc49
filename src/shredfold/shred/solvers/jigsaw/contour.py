"""From a scrap image to the outline of its paper: a closed, 1-px-spaced sub-pixel contour.

Scraps carry a drop shadow in their alpha (semi-transparent) around the opaque paper. The
outline is traced at an alpha level well above any shadow, so it follows the paper edge;
sub-pixel positions come from marching squares on the anti-aliased alpha.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image
from skimage.measure import find_contours

PAPER_LEVEL = 0.62  # of full opacity: above shadows (<= ~0.45), where the cut edge lies
STEP = 1.0  # px between resampled contour points


@dataclass(frozen=True)
class Scrap:
    """One piece as the solver knows it: its pixels and its paper outline."""

    rgba: np.ndarray  # (H, W, 4) uint8
    outline: np.ndarray  # (n, 2) float (x, y), closed implicitly, positive shoelace area

    @property
    def paper(self) -> np.ndarray:
        """Boolean mask of opaque paper (no shadow)."""
        return self.rgba[..., 3] >= PAPER_LEVEL * 255


def signed_area(ring: np.ndarray) -> float:
    x, y = ring[:, 0], ring[:, 1]
    return 0.5 * float(np.dot(x, np.roll(y, -1)) - np.dot(np.roll(x, -1), y))


def resample(ring: np.ndarray, step: float = STEP) -> np.ndarray:
    """Points every ``step`` px of arc length along the closed ring."""
    closed = np.vstack([ring, ring[:1]])
    seg = np.hypot(*np.diff(closed, axis=0).T)
    arc = np.concatenate([[0.0], np.cumsum(seg)])
    total = arc[-1]
    count = max(8, int(round(total / step)))
    s = np.arange(count) * (total / count)
    return np.column_stack([np.interp(s, arc, closed[:, 0]), np.interp(s, arc, closed[:, 1])])


def paper_outline(rgba: np.ndarray) -> np.ndarray:
    """The longest iso-contour of the paper level, resampled, with positive signed area.

    With x right and y down, positive area means the paper lies to the left of travel
    under the normal (-dy, dx); every later stage relies on that convention.
    """
    alpha = rgba[..., 3].astype(np.float64)
    padded = np.pad(alpha, 1)
    contours = find_contours(padded, PAPER_LEVEL * 255.0)
    if not contours:
        raise ValueError("scrap has no opaque paper")
    ring = max(contours, key=len)[:, ::-1] - 1.0  # (row, col) -> (x, y), undo padding
    if np.allclose(ring[0], ring[-1]):
        ring = ring[:-1]
    ring = resample(ring)
    if signed_area(ring) < 0:
        ring = ring[::-1].copy()
    return ring


def load_scrap(image: Image.Image | np.ndarray) -> Scrap:
    rgba = np.asarray(image.convert("RGBA")) if isinstance(image, Image.Image) else image
    return Scrap(rgba=np.ascontiguousarray(rgba), outline=paper_outline(rgba))
