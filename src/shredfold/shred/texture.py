"""Surface textures (paper, table top): a low-frequency tint plus a fine grain.

Speed and bytes both matter here (these are the largest images). The tint is computed at a
quarter of the size and enlarged with OpenCV's bit-exact linear resize; the grain is one
random tile repeated from a random offset (a period of ~500 px is invisible in noise), made
at half the resolution and enlarged, so it is soft (:func:`soft_noise`),
and applied with saturating uint8 arithmetic. Nothing depends on a CPU's SIMD rounding.
"""

from __future__ import annotations

import cv2
import numpy as np
from PIL import Image

GRAIN_TILE = 509  # prime, so the repeat lines up with nothing on the page
TINT_SCALE = 4  # the tint field is made at 1/4 size
GRAIN_CELL = 2  # px between the grain's independent values


def low_frequency(width: int, height: int, cell: float, rng: np.random.Generator) -> np.ndarray:
    """A smooth random field (float32, roughly unit variance) with blobs ~``cell`` px wide."""
    gw = max(2, int(-(-width // cell)) + 1)
    gh = max(2, int(-(-height // cell)) + 1)
    grid = rng.standard_normal((gh, gw)).astype(np.float32)
    field = Image.fromarray(grid, mode="F").resize((width, height), Image.Resampling.BICUBIC)
    return np.asarray(field, dtype=np.float32)


def soft_noise(width: int, height: int, rng: np.random.Generator) -> np.ndarray:
    """Per-pixel noise (float32) correlated over ~:data:`GRAIN_CELL` px: a grain as fine as
    paper fibre or a sensor's, with little of white noise's top octave, which costs the
    most bytes in every encoder (PNG, palette or JPEG) and shows the least. Its spread is
    ~0.8 (bicubic enlargement averages neighbours): a little lower than white noise's."""
    return low_frequency(width, height, GRAIN_CELL, rng)


def tiled(tile: np.ndarray, width: int, height: int, rng: np.random.Generator) -> np.ndarray:
    """``tile`` repeated to cover ``height`` × ``width``, starting at a random offset."""
    th, tw = tile.shape[:2]
    ox, oy = (int(v) for v in rng.integers(0, (tw, th)))
    reps = (-(-(oy + height) // th), -(-(ox + width) // tw)) + (1,) * (tile.ndim - 2)
    return np.tile(tile, reps)[oy : oy + height, ox : ox + width]


def grain_planes(
    sigma: float, rng: np.random.Generator, size: int = GRAIN_TILE
) -> tuple[np.ndarray, np.ndarray]:
    """A Gaussian grain tile split into its positive and negative parts (uint8 each), so it
    can be applied with saturating add and subtract."""
    g = np.rint(soft_noise(size, size, rng) * np.float32(sigma))
    g = np.clip(g, -255, 255).astype(np.int16)
    return np.maximum(g, 0).astype(np.uint8), np.maximum(-g, 0).astype(np.uint8)


def surface(
    width: int,
    height: int,
    colour: tuple[int, int, int],
    strength: float,
    rng: np.random.Generator,
    *,
    blotch: float = 9.0,
    grain: float = 5.0,
    speckle: float = 0.0,
    cell: int = 220,
    warm: float = 0.25,
) -> np.ndarray:
    """An RGB uint8 surface of ``colour`` with tint and grain scaled by ``strength`` (0..1).

    ``blotch``, ``grain`` and ``speckle`` are amplitudes in grey levels at strength 1 of the
    tint, the per-pixel grain and a soft ~4 px speckle (noise made at the tint's quarter
    size: texture for big surfaces at no full-size cost); ``warm`` makes dark patches a
    little yellower, as aged paper and wood are.
    """
    if strength <= 0.0:
        return np.broadcast_to(np.asarray(colour, dtype=np.uint8), (height, width, 3)).copy()
    sw, sh = max(2, -(-width // TINT_SCALE)), max(2, -(-height // TINT_SCALE))
    field = low_frequency(sw, sh, cell / TINT_SCALE, rng) * np.float32(strength * blotch)
    if speckle > 0.0:
        field += rng.standard_normal((sh, sw), dtype=np.float32) * np.float32(strength * speckle)
    small = np.empty((sh, sw, 3), dtype=np.uint8)
    for c, k in enumerate((1.0, 1.0, 1.0 + warm)):
        small[..., c] = np.clip(np.rint(field * np.float32(k) + np.float32(colour[c])), 0, 255)
    base = cv2.resize(small, (width, height), interpolation=cv2.INTER_LINEAR_EXACT)
    if grain * strength <= 0.0:
        return base
    pos, neg = grain_planes(strength * grain, rng)
    both = tiled(np.dstack([pos, neg]), width, height, rng)
    p, n = np.ascontiguousarray(both[..., 0]), np.ascontiguousarray(both[..., 1])
    out = cv2.add(base, cv2.merge([p, p, p]))
    return cv2.subtract(out, cv2.merge([n, n, n]))
