"""What the straight strokes printed on a scrap say about its orientation, and where its
column rules run (:func:`column_rules`, which :mod:`.crossings` follows across a seam).

A page's rules (a table's borders, the line under a heading) and the edges of its tinted
blocks (a code block's background) run exactly along and across its text lines, over
hundreds of pixels. A scrap that shows few words (a corner of a table holding one
heading cell) is levelled only roughly by its text (:func:`.ink.line_angle`: the paper
style's tables, N = 8 and 16, had scraps levelled 5-11 degrees out, and two scraps that
far out of level share no straight seam with any neighbour), while its faint rules give
the angle to a fraction of a degree. They are found as straight line segments
(OpenCV's LSD) in the scrap's darkness against its own paper, stretched so a rule a few
grey levels under the paper shows; the scrap's own outline (the paper against the table)
is left out by keeping only segments well inside the paper.
"""

from __future__ import annotations

import cv2
import numpy as np

from shredfold.shred.solvers.jigsaw import table
from shredfold.shred.solvers.jigsaw.geometry import wrap_deg

BACKGROUND = 9  # px window of the local paper level the darkness is measured against
GAIN = 8.0  # darkness is stretched this much: a 1 px #999 rule on the photo is ~10 levels
MIN_LENGTH = 40.0  # px: the shortest straight stroke counted (a letter's stem is shorter)
INSET = 8.0  # px: a stroke's middle half lies at least this far inside the paper
NEAR_DEG = 15.0  # only strokes within this of the text's lines (or square to them) count
MIN_EVIDENCE = 120.0  # px of strokes in all before they are trusted over the text
AGREE_DEG = 1.0  # strokes this close to the strokes' median direction are one set of rules
# A column rule lies this far inside the paper (the rim's shading is no rule), spans at
# most RULE_WIDTH px across (a levelled scrap may lie a fraction of a degree out, and a
# long rule then steps a pixel or two), and runs straight: within RULE_TILT_DEG of square
# to the lines, its pixels within RULE_RMS of its fitted line.
RULE_INSET = 4
RULE_WIDTH = 14
RULE_TILT_DEG = 2.0
RULE_RMS = 1.5


def strokes(rgb: np.ndarray, paper: np.ndarray) -> np.ndarray:
    """The long straight strokes printed on the scrap, well inside its paper: (k, 4) float
    rows x0, y0, x1, y1 (px)."""
    inside = paper.astype(np.uint8)
    if inside.sum() == 0:
        return np.zeros((0, 4))
    grey = cv2.cvtColor(np.ascontiguousarray(rgb), cv2.COLOR_RGB2GRAY).astype(np.float32)
    grey = np.where(inside > 0, grey, float(np.percentile(grey[inside > 0], 90)))
    level = cv2.blur(cv2.dilate(grey, np.ones((BACKGROUND, BACKGROUND), np.uint8)),
                     (BACKGROUND, BACKGROUND))
    stretched = 255.0 - np.clip((level - grey) * GAIN, 0.0, 255.0)
    found = cv2.createLineSegmentDetector(cv2.LSD_REFINE_STD, 1.0).detect(
        stretched.astype(np.uint8))[0]
    if found is None:
        return np.zeros((0, 4))
    depth = cv2.distanceTransform(inside, cv2.DIST_L2, 3)
    h, w = depth.shape
    kept = []
    for x0, y0, x1, y1 in found.reshape(-1, 4).astype(np.float64):
        if np.hypot(x1 - x0, y1 - y0) < MIN_LENGTH:
            continue
        t = np.array([0.25, 0.5, 0.75])
        xs = np.clip(np.rint(x0 + t * (x1 - x0)).astype(int), 0, w - 1)
        ys = np.clip(np.rint(y0 + t * (y1 - y0)).astype(int), 0, h - 1)
        if (depth[ys, xs] >= INSET).all():
            kept.append((x0, y0, x1, y1))
    return np.array(kept).reshape(-1, 4)


def rule_angle(rgb: np.ndarray, paper: np.ndarray, text_degrees: float) -> float | None:
    """The direction (degrees, image coordinates, within :data:`NEAR_DEG` of
    ``text_degrees`` mod 180) of the straight rules on the scrap, or None when it shows
    too few of them, or ones that disagree."""
    devs, lengths = [], []
    for x0, y0, x1, y1 in strokes(rgb, paper):
        dev = wrap_deg(float(np.degrees(np.arctan2(y1 - y0, x1 - x0))) - text_degrees, 90.0)
        if abs(dev) <= NEAR_DEG:
            devs.append(dev)
            lengths.append(float(np.hypot(x1 - x0, y1 - y0)))
    if sum(lengths) < MIN_EVIDENCE:
        return None
    d, wt = np.array(devs), np.array(lengths)
    order = np.argsort(d)
    middle = float(d[order][np.searchsorted(np.cumsum(wt[order]), 0.5 * wt.sum())])
    # The strokes that agree with the median (a stray one, the straight side of a curl's
    # shadow, is left out), and only if they are most of what was found.
    near = np.abs(d - middle) <= AGREE_DEG
    if wt[near].sum() < max(MIN_EVIDENCE, 0.5 * wt.sum()):
        return None
    return (text_degrees + float(np.average(d[near], weights=wt[near]))) % 180.0


def column_rules(rgb: np.ndarray, paper: np.ndarray) -> np.ndarray:
    """The rules of a levelled scrap that run square to its text lines (a table's column
    rules), well inside its paper: (k, 4) float rows x0, y0, x1, y1 (px), each fitted
    straight. Found as :func:`.table.grid` finds a drawn table's rules (a faint ridge or
    a dark run of :data:`.table.RULE_RUN` px; a letter's stroke is shorter, and text lines
    leave gaps), on the scrap's own paper: no drawing to assemble first."""
    inside = paper > 0.5
    if not inside.any():
        return np.zeros((0, 4))
    grey = cv2.cvtColor(np.ascontiguousarray(rgb), cv2.COLOR_RGB2GRAY)
    fill = float(np.percentile(grey[inside], 90))
    # Off the paper, the paper's own level (its rim is no rule); on it, never the white a
    # drawn scrap stands on (table.PAPER_MAX), so the whole scrap is searched.
    grey = np.where(inside, np.minimum(grey, table.PAPER_MAX - 1), fill).astype(np.uint8)
    dark = cv2.dilate((grey < table.FAINT).astype(np.uint8), np.ones((1, 3), np.uint8))
    # A photographed 1 px rule often falls between two pixel columns, half on each.
    on = table.faint_rules(grey, (0, 1), spread=3) | table.rule_runs(dark, (0, 1))
    core = cv2.erode(inside.astype(np.uint8), np.ones((2 * RULE_INSET + 1,) * 2, np.uint8))
    count, labels, stats, _ = cv2.connectedComponentsWithStats(on & core, connectivity=8)
    out = []
    for k in range(1, count):
        x, y, w, h, _ = stats[k]
        if h < table.RULE_RUN or w > RULE_WIDTH:
            continue
        ys, xs = np.nonzero(labels[y : y + h, x : x + w] == k)
        rows = np.unique(ys)
        mid = np.array([xs[ys == r].mean() for r in rows])
        slope, at = np.polyfit(rows.astype(np.float64), mid, 1)
        off = mid - (at + slope * rows)
        if abs(slope) > np.tan(np.deg2rad(RULE_TILT_DEG)) or float(np.sqrt(np.mean(off**2))) > RULE_RMS:
            continue
        out.append((x + at + slope * rows[0], y + rows[0], x + at + slope * rows[-1], y + rows[-1]))
    return np.array(out, np.float64).reshape(-1, 4)
