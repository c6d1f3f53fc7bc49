"""How large the text on a set of scraps is: the pitch of its lines, and the enlargement
that brings scraps cut out of a reduced photograph back to the size the solver works at.

The solver's tolerances (px of edge fit, shortest side) and the OCR were tuned on pieces
at the rendered size, whose lines are 35-45 px apart. A photograph of all the scraps,
scaled to 2048 px on its longest side, shows them at about half that: the outlines lose
the detail that tells sides apart (an N = 16 code page fell apart into two clusters)
and the recogniser misreads 12 px text. The line pitch, read off the ink, says how far.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from shredfold.shred.solvers.jigsaw.contour import PAPER_LEVEL
from shredfold.shred.solvers.jigsaw.ink import ink_mask, line_angle

# px: text lines at least this far apart need no enlargement (code's 24 px font at 1.45)
TARGET_PITCH = 35.0
MAX_ENLARGE = 3.0
MIN_LAG, MAX_LAG = 6, 160  # px: line pitches looked for
PEAK_SHARE = 0.5  # of the highest peak (and the most prominent): the first this high
MIN_INK = 200  # ink pixels a scrap needs to say anything


def _profile_autocorrelation(rgba: np.ndarray) -> np.ndarray | None:
    """Normalised autocorrelation (lags 0..MAX_LAG) of the scrap's ink profile across its
    text lines, or None when the scrap shows too little ink."""
    paper = rgba[..., 3] >= PAPER_LEVEL * 255
    ink = ink_mask(rgba, paper)
    ys, xs = np.nonzero(ink)
    if len(xs) < MIN_INK:
        return None
    angle = line_angle(rgba, paper)
    th = np.deg2rad(angle.degrees)
    proj = -xs * np.sin(th) + ys * np.cos(th)
    counts = np.bincount(np.rint(proj - proj.min()).astype(np.int64)).astype(np.float64)
    if len(counts) < 2 * MIN_LAG:
        return None
    counts -= counts.mean()
    full = np.correlate(counts, counts, mode="full")[len(counts) - 1 :]
    if full[0] <= 0:
        return None
    out = np.zeros(MAX_LAG + 1)
    n = min(len(full), MAX_LAG + 1)
    out[:n] = full[:n] / full[0]
    return out


def line_pitch(scraps: Sequence[np.ndarray]) -> float | None:
    """The distance between text lines (px) shown by RGBA scraps, or None when they show
    no regular lines. The scraps' autocorrelations are averaged (they share one pitch);
    the pitch is its first peak that stands out: nearly as high as the highest (which may
    be a multiple: blank lines and paragraph gaps weaken the first) and as prominent
    (a ripple on the slope up to a peak, the ink of one line, is not)."""
    acs = [a for a in (_profile_autocorrelation(s) for s in scraps) if a is not None]
    if not acs:
        return None
    # Imported here: scipy.signal takes ~1 s to import, and only photographs are measured.
    from scipy.signal import find_peaks

    ac = np.sum(acs, axis=0) / len(acs)
    found, props = find_peaks(ac[: MAX_LAG + 1], height=0.0, prominence=0.0)
    keep = found >= MIN_LAG
    found, height, prominence = found[keep], props["peak_heights"][keep], props["prominences"][keep]
    if not len(found):
        return None
    ok = (height >= PEAK_SHARE * height.max()) & (prominence >= PEAK_SHARE * prominence.max())
    k = int(found[np.argmax(ok)])
    # Parabolic refinement of the peak position.
    a, b, c = ac[k - 1], ac[k], ac[k + 1]
    den = a - 2 * b + c
    return float(k + (0.5 * (a - c) / den if den < 0 else 0.0))


def enlargement(scraps: Sequence[np.ndarray]) -> float:
    """How much to enlarge the scraps so their lines are TARGET_PITCH px apart (1 when
    they already are, or show no lines); never a reduction."""
    pitch = line_pitch(scraps)
    if pitch is None or pitch >= TARGET_PITCH:
        return 1.0
    return float(min(MAX_ENLARGE, TARGET_PITCH / pitch))


def enlarge(rgba: np.ndarray, factor: float) -> np.ndarray:
    """The RGBA scrap enlarged by ``factor`` (bicubic; colour kept off the cleared
    surround, which the crop stores as transparent black)."""
    if factor == 1.0:
        return rgba
    h, w = rgba.shape[:2]
    size = (max(1, int(w * factor)), max(1, int(h * factor)))  # floor: within a budget
    # Premultiplied colour, so the black of transparent pixels does not bleed into the rim.
    a = rgba[..., 3:].astype(np.float32) / 255.0
    pre = np.dstack([rgba[..., :3].astype(np.float32) * a, a * 255.0])
    big = cv2.resize(pre, size, interpolation=cv2.INTER_CUBIC)
    alpha = np.clip(big[..., 3], 0.0, 255.0)
    colour = big[..., :3] / np.maximum(alpha / 255.0, 1e-3)[..., None]
    out = np.dstack([np.clip(colour, 0.0, 255.0), alpha])
    out = np.rint(out).astype(np.uint8)
    out[out[..., 3] == 0] = 0
    return out
