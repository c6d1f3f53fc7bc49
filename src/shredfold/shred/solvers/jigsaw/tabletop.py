"""The table under the scraps of a photograph: which pixels are table, which are not.

The table is what lies at the image border: a colour field ``T(p)``, smooth but free to
vary (blotches, a lamp's falloff), darkened by shadows — a table pixel is ``k · T(p)``
with a shadow factor ``k`` — and roughened by its grain. The field is fitted on a reduced
image from the pixels it explains, a few rounds from the border's median colour. How far
a table pixel may stray is read off the photo itself, from a sparse set of full-size
pixels (texture averages out in the reduced image): in brightness, up to Otsu's split of
log k between the table's mode and the paper's (no split when the histogram has one mode:
a bare table); in hue, a margin over the spread of the plain table's own pixels (noise,
JPEG), plus a little more for bright pixels (JPEG blurs colour at strong edges).
"""

from __future__ import annotations

import cv2
import numpy as np
from scipy import ndimage

BORDER = 3  # px of the image border assumed to be table
COARSE = 8  # the table colour field is estimated on a grid of this many px
FIELD_SIGMA = 3.0  # coarse cells: smoothing of the table colour field
SHADOW_MIN = 0.2  # darkest shadow, as a share of the table's brightness
LIT_MIN = 0.8  # pixels at least this bright relative to the field count as unshadowed
K_MAX_MIN, K_MAX_MAX = 1.05, 3.0  # bounds of the table/paper brightness split
VALLEY_SHARE = 0.3  # a brightness histogram dipping less between its peaks has one mode
SPARSE = 3  # px: stride of the full-size pixels that set the split
ITERATIONS = 3
STRIP = 256  # rows per strip of the full-size classification
HUE_MIN, HUE_MAX = 8.0, 40.0  # grey levels: bounds of the table's off-hue limit
HUE_SHARE = 0.04  # ... plus this share of the pixel's brightness
HUE_PERCENTILE = 90.0  # of the plain table pixels' off-hue distances ...
HUE_MARGIN = 2.2  # ... times this is the limit (~4.7 sigma of round noise)
PLAIN_K = 0.15  # plain table: within this of the field's brightness


def _border_pixels(img: np.ndarray, width: int) -> np.ndarray:
    return np.concatenate(
        [
            img[:width].reshape(-1, 3),
            img[-width:].reshape(-1, 3),
            img[:, :width].reshape(-1, 3),
            img[:, -width:].reshape(-1, 3),
        ]
    )


def _smooth(values: np.ndarray, weight: np.ndarray, sigma: float) -> np.ndarray:
    """Normalised convolution: the ``weight``-weighted local mean of ``values`` (HxWx3);
    where no weight is near, the nearest known mean."""
    wt = weight.astype(np.float32)
    den = cv2.GaussianBlur(wt, (0, 0), sigma, borderType=cv2.BORDER_REFLECT)
    num = cv2.GaussianBlur(values * wt[..., None], (0, 0), sigma, borderType=cv2.BORDER_REFLECT)
    known = den > 1e-3
    out = num / np.maximum(den, 1e-3)[..., None]
    if not known.all() and known.any():
        idx = ndimage.distance_transform_edt(~known, return_distances=False, return_indices=True)
        out = out[idx[0], idx[1]]
    return out


def split(values: np.ndarray, bins: int = 64) -> float | None:
    """Otsu's threshold between the two modes of ``values``, or None when there are no
    two modes: the histogram between the two classes' peaks never falls below
    VALLEY_SHARE of the smaller peak (a bare, grainy table is one broad mode)."""
    hist, edges = np.histogram(values, bins=bins)
    p = hist.astype(np.float64)
    centres = 0.5 * (edges[:-1] + edges[1:])
    w0 = np.cumsum(p)
    w1 = w0[-1] - w0
    m0 = np.cumsum(p * centres)
    mean0 = m0 / np.maximum(w0, 1e-9)
    mean1 = (m0[-1] - m0) / np.maximum(w1, 1e-9)
    cut = int(np.argmax(w0 * w1 * (mean0 - mean1) ** 2)) + 1
    smooth = np.convolve(p, np.ones(3) / 3, mode="same")
    if cut >= bins or cut < 1:
        return None
    lo, hi = int(np.argmax(smooth[:cut])), cut + int(np.argmax(smooth[cut:]))
    valley = smooth[lo : hi + 1].min()
    if valley > VALLEY_SHARE * min(smooth[lo], smooth[hi]):
        return None
    return float(edges[cut])


def _field_at(field: np.ndarray, shape: tuple[int, int], rows: slice | None = None,
              ) -> tuple[list[np.ndarray], np.ndarray]:
    """Planes of T/|T|² and |T| of the coarse table field, enlarged (bilinear, as
    ``cv2.resize``) to an image of ``shape`` (h, w), for its ``rows`` only if given."""
    length = np.sqrt(np.maximum((field * field).sum(axis=2), 1.0)).astype(np.float32)
    unit = field / (length * length)[..., None]
    h, w = shape
    gh, gw = field.shape[:2]
    rows = rows or slice(0, h)
    ys = np.arange(rows.start, rows.stop, dtype=np.float32)
    map_y = np.broadcast_to(((ys + 0.5) * (gh / h) - 0.5)[:, None], (len(ys), w))
    map_x = np.broadcast_to(((np.arange(w, dtype=np.float32) + 0.5) * (gw / w) - 0.5)[None, :],
                            (len(ys), w))
    map_x, map_y = np.ascontiguousarray(map_x), np.ascontiguousarray(map_y)

    def big(plane: np.ndarray) -> np.ndarray:
        return cv2.remap(np.ascontiguousarray(plane), map_x, map_y, cv2.INTER_LINEAR,
                         borderMode=cv2.BORDER_REPLICATE)

    return [big(unit[..., c]) for c in range(3)], big(length)


def _explain(planes: list[np.ndarray], unit: list[np.ndarray], length: np.ndarray,
             ) -> tuple[np.ndarray, np.ndarray]:
    """Per pixel the shadow factor ``k`` = c·T/|T|² and the squared distance of its
    colour from the table's hue line, |c - kT|² = |c|² - k²|T|²."""
    r, g, b = planes
    k = r * unit[0]
    k += g * unit[1]
    k += b * unit[2]
    kn = k * length
    off2 = r * r + g * g + b * b - kn * kn
    # Rounding makes it slightly negative on a grey table (colour on the hue line): a
    # negative spread's square root is NaN, and a NaN limit calls every pixel paper.
    np.maximum(off2, 0, out=off2)
    return k, off2


def table_model(rgb: np.ndarray) -> tuple[np.ndarray, float, float]:
    """The table: its (unshadowed) colour field on a 1/COARSE grid, the brightest a table
    pixel gets relative to it (texture, grain) — brighter is paper — and how far from the
    table's hue its own pixels stray (texture, noise, JPEG) — farther is paper or ink.

    The field is fitted on the reduced image; the two limits are read off a sparse set of
    full-size pixels (texture averages out in the reduced image): the brightness limit is
    Otsu's split of log k between the table's mode and the paper's, the hue limit a margin
    over what the lit table pixels show.
    """
    h, w = rgb.shape[:2]
    small = cv2.resize(rgb, (max(1, w // COARSE), max(1, h // COARSE)),
                       interpolation=cv2.INTER_AREA).astype(np.float32)
    sparse = rgb[SPARSE // 2 :: SPARSE, SPARSE // 2 :: SPARSE].astype(np.float32)
    border = _border_pixels(small, max(1, min(BORDER, min(small.shape[:2]) // 4)))
    field = np.broadcast_to(np.median(border, axis=0), small.shape).astype(np.float32)
    s_planes = [np.ascontiguousarray(small[..., c]) for c in range(3)]
    p_planes = [np.ascontiguousarray(sparse[..., c]) for c in range(3)]
    k_max, hue_max = K_MAX_MIN, HUE_MAX
    for _ in range(ITERATIONS):
        k, off2 = _explain(p_planes, *_field_at(field, sparse.shape[:2]))
        # Ink and shadows are a mode of their own below the table's: leave them out.
        logk = np.log(np.clip(k[k >= LIT_MIN], LIT_MIN, K_MAX_MAX))
        cut = split(logk) if logk.size > 100 else None
        # No paper mode: nothing is brighter than the table (what is left off its hue
        # is specks).
        k_max = K_MAX_MAX if cut is None else float(np.clip(np.exp(cut), K_MAX_MIN, K_MAX_MAX))
        # Table at its usual brightness: edge pixels mixing in paper are rare there.
        plain = (np.abs(k - 1.0) <= PLAIN_K) & (k <= k_max) & (off2 <= hue_max**2)
        if plain.sum() > 100:
            spread = float(np.sqrt(np.percentile(off2[plain], HUE_PERCENTILE)))
            hue_max = float(np.clip(HUE_MARGIN * spread, HUE_MIN, HUE_MAX))
        k, off2 = _explain(s_planes, *_field_at(field, small.shape[:2]))
        lit = (off2 <= hue_max**2) & (k >= LIT_MIN) & (k <= k_max)
        if lit.sum() > 20:
            field = _smooth(small, lit, FIELD_SIGMA)
    return field, k_max, hue_max


def classify(rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Full-size masks (table colour, dark): pixels of the table's hue from its darkest
    shadow to its brightest grain, and pixels darker than any shadow (ink, or where two
    scraps' shadows overlap). Worked in strips of rows, so memory stays a few masks."""
    field, k_max, hue_max = table_model(rgb)
    h, w = rgb.shape[:2]
    coloured = np.empty((h, w), bool)
    dark = np.empty((h, w), bool)
    for top in range(0, h, STRIP):
        rows = slice(top, min(h, top + STRIP))
        planes = [p.astype(np.float32) for p in cv2.split(rgb[rows])]
        unit, length = _field_at(field, (h, w), rows)
        k, off2 = _explain(planes, unit, length)
        # JPEG blurs colour near strong edges, more so the brighter the pixel.
        limit = k * length * np.float32(HUE_SHARE) + np.float32(hue_max)
        dark[rows] = k < SHADOW_MIN
        coloured[rows] = (off2 <= limit * limit) & ~dark[rows] & (k <= k_max)
    return coloured, dark
