"""Scraps of a photograph turned so their text lines run level: the frame the photograph
solver works in (:mod:`shredfold.shred.solvers.jigsaw.seam`, :mod:`shredfold.shred.solvers.jigsaw.place`).

Every scrap of one page has its lines running the same way, so once each is turned level
the only turns left between two scraps are none or a half turn; what remains to find is
where each lies. Each levelled scrap carries its paper, its ink (as darkness against the
paper around it, so shading across a curled sheet does not count) and the straight edges
of its outline (:mod:`shredfold.shred.solvers.jigsaw.straight`), in any quarter turn of its levelled
reading: a half turn always (which way up is open), a quarter where the ink lines up
across as well as along (the columns of a table, a few large letters of a heading).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import cv2
import numpy as np

from shredfold.shred.solvers.jigsaw.contour import PAPER_LEVEL, paper_outline
from shredfold.shred.solvers.jigsaw.geometry import angle_of, apply, rigid, wrap_deg
from shredfold.shred.solvers.jigsaw.ink import line_angle
from shredfold.shred.solvers.jigsaw.rules import column_rules, rule_angle
from shredfold.shred.solvers.jigsaw.straight import Edge, straight_edges

BACKGROUND = 41  # px window of the local paper brightness estimate (flat field)
INK_CONTRAST = 0.45  # darker than this share of the local paper is full ink ...
INK_FLOOR = 0.12  # ... lighter than this share is no ink
MIN_EDGE = 20.0  # px: the shortest straight edge kept
RIM = 3  # px of the paper's edge whose darkness is not counted as ink
# A scrap's printed rules (:mod:`.rules`) overrule its text lines where the two disagree by
# more than this. Measured on the paper preset's composites (six domains, N = 8 to 16):
# where the text of a scrap of few words was 4-11 degrees out, its rules were within 0.2;
# where the two were closer, either was the nearer about as often (on a curled scrap of
# code, the strokes of its block's edge ran 1.9 degrees out where its many lines of text
# were within 0.1).
RULES_OVERRULE_DEG = 3.0
# The text's direction scored with the one square to it (:func:`.ink.line_angle`,
# ``square``) overrules it scored alone where the two disagree by more than this: a few
# lines of CJK line up along a slant of their character grid too (news_zh, N = 12: two
# scraps levelled 9.7 and 6.0 degrees out alone, within 0.4 squared). Where the two are
# closer, alone is kept: squared moved answers both ways (a scrap of the authors' news_031
# levelled 0.2 degrees differently took a wrong join).
SQUARE_OVERRULE_DEG = 3.0
ACROSS_SHARE = 0.7  # columns this peaky against the rows leave the quarter turn open
MIN_PITCH, MAX_PITCH = 6, 200  # px: line pitches looked for
# Settling a scrap's quarter turn from a reading (:func:`settled`): a reading this
# confident of the levelled scrap settles it as it is without reading it turned (lines
# running up a drawing read as next to nothing) ...
SURE_READING = 4.0
# ... else the turn read this many times as confidently as the other, and at least
# SETTLE_EVIDENCE (about two characters read with confidence), is taken.
SETTLE_SHARE = 2.0
SETTLE_EVIDENCE = 1.5
# The same reading settles which way up a scrap is where one way reads UP_SHARE times as
# confidently as the other, and at least UP_EVIDENCE (the thresholds that settle a turn in
# :func:`shredfold.shred.ocr.orient.quarter_turn`). Measured on the paper preset's
# composites (six domains, N = 8 and 16, 144 scraps): 111 settled, all the right way up;
# the other 33 (a corner of a table, a few CJK characters) left open.
UP_SHARE = 2.0
UP_EVIDENCE = 4.0
# A scrap whose way up its inkiest patch left open is read whole (:func:`read_whole`); a
# turn read at least this confidently (about four characters) and SETTLE_SHARE times the
# other settles it. Measured on the paper preset's composites (six domains, N = 8 to 16,
# 54 composites): 43 scraps the patch left open were settled; on the 18 of one document
# per domain, the 5 levelled on their side all turned level, and 22 of 22 ups read right.
WHOLE_EVIDENCE = 4.0

# How confidently the text of an RGB drawing reads with its lines running across it, as
# it is and turned a half turn (0, 0: nothing read). See :func:`settled`.
Confidence = Callable[[np.ndarray], tuple[float, float]]


@dataclass(frozen=True)
class Levelled:
    """One scrap turned level (and maybe a quarter turn or two more): ``pose`` takes the
    scrap's own pixel coordinates to this frame's."""

    index: int  # the scrap's position among the request's scraps
    quarter: int  # quarter turns (as np.rot90, counter-clockwise) on from the levelled frame
    pose: np.ndarray  # 3x3 rigid: scrap pixels -> this frame
    paper: np.ndarray  # (h, w) float32 in [0, 1]: share of paper
    ink: np.ndarray  # (h, w) float32 in [0, 1]: darkness of ink on the paper
    edges: list[Edge]
    strength: float  # how clearly the scrap shows text lines (ink.LineAngle.strength)
    across: bool  # its ink lines up across the levelled lines nearly as well
    up: int | None = None  # quarter turns (0 or 2) that put this frame upright, if read
    # (k, 4) x0, y0, x1, y1 in this frame: the rules printed across its text lines, as
    # levelled (:func:`.rules.column_rules`; a quarter turn on lays them along its rows)
    rules: np.ndarray = field(default_factory=lambda: np.zeros((0, 4)))

    def way_up(self, pose: np.ndarray) -> int | None:
        """Quarter turns (as np.rot90) that put upright the frame ``pose`` takes this
        scrap's levelled frame to, where the scrap was read the right way up."""
        if self.up is None:
            return None
        return round(self.up + float(np.degrees(angle_of(pose))) / 90.0) % 4

    @property
    def shape(self) -> tuple[int, int]:
        return self.paper.shape[:2]  # type: ignore[return-value]

    def turned(self, quarters: int = 2) -> Levelled:
        """The same scrap turned ``quarters`` quarter turns further (counter-clockwise)."""
        out = self
        for _ in range(quarters % 4):
            turn = quarter_turn(out.shape)
            out = Levelled(out.index, (out.quarter + 1) % 4, turn @ out.pose,
                           np.ascontiguousarray(np.rot90(out.paper)),
                           np.ascontiguousarray(np.rot90(out.ink)),
                           [e.moved(turn) for e in out.edges], out.strength, out.across,
                           None if out.up is None else (out.up - 1) % 4,
                           apply(turn, out.rules.reshape(-1, 2)).reshape(-1, 4))
        return out


def quarter_turn(shape: tuple[int, int]) -> np.ndarray:
    """The 3x3 map of pixel coordinates of an (h, w) image to those of ``np.rot90`` of it."""
    h, w = shape
    return np.array([[0.0, 1.0, 0.0], [-1.0, 0.0, w - 1.0], [0.0, 0.0, 1.0]])


def turn_from_level(lv: Levelled, quarters: int) -> np.ndarray:
    """The map from ``lv``'s levelled (unturned) frame to it turned ``quarters`` times."""
    out = np.eye(3)
    h, w = lv.shape if lv.quarter % 2 == 0 else lv.shape[::-1]
    for _ in range(quarters % 4):
        out = quarter_turn((h, w)) @ out
        h, w = w, h
    return out


def ink_darkness(rgb: np.ndarray, paper: np.ndarray) -> np.ndarray:
    """How dark each pixel is against the paper around it, 0 (paper) to 1 (ink)."""
    grey = cv2.cvtColor(np.ascontiguousarray(rgb), cv2.COLOR_RGB2GRAY).astype(np.float32)
    # Outside the paper, the paper's own brightness (so the rim is not ink).
    fill = float(np.percentile(grey[paper > 0.5], 90)) if (paper > 0.5).any() else 255.0
    grey = np.where(paper > 0.5, grey, fill)
    kernel = cv2.getStructuringElement(cv2.MORPH_RECT, (BACKGROUND, BACKGROUND))
    background = cv2.blur(cv2.dilate(grey, kernel), (BACKGROUND, BACKGROUND))
    share = grey / np.maximum(background, 1.0)
    ink = (1.0 - share - INK_FLOOR) / (1.0 - INK_CONTRAST - INK_FLOOR)
    return (np.clip(ink, 0.0, 1.0) * (paper > 0.5)).astype(np.float32)


def _lines_up_across(ink: np.ndarray) -> bool:
    """Whether the ink's columns are nearly as peaky as its rows (a table's columns, the
    few large letters of a heading): its levelling may then be a quarter turn out."""
    rows = ink.sum(axis=1).astype(np.float64)
    cols = ink.sum(axis=0).astype(np.float64)
    if rows.sum() <= 0:
        return True

    def peaky(p: np.ndarray) -> float:
        p = cv2.GaussianBlur(p.astype(np.float32).reshape(-1, 1), (1, 0), 1.5).ravel()
        return float((p * p).sum() / max(p.sum(), 1e-9) ** 2 * len(p))

    return peaky(cols) >= ACROSS_SHARE * peaky(rows)


def line_pitch(inks: list[np.ndarray]) -> float | None:
    """The distance between neighbouring text lines (px) on levelled scraps' ink, or None
    when they show no lines.

    Each scrap's row profile peaks once per line; neighbours within a paragraph are one
    pitch apart, across a paragraph gap or a heading more. So the pitch is the shortest
    spacing that is common: the median of the spacings within 20% of the 20th percentile.
    (An autocorrelation's highest peak is a paragraph's period where paragraphs are two
    lines long.)
    """
    from scipy.signal import find_peaks

    gaps: list[np.ndarray] = []
    for ink in inks:
        rows = ink.sum(axis=1).astype(np.float32).reshape(-1, 1)
        prof = cv2.GaussianBlur(rows, (1, 0), 2.0).ravel()
        if prof.max() <= 0:
            continue
        at, _ = find_peaks(prof, prominence=0.25 * float(prof.max()), distance=MIN_PITCH)
        if len(at) >= 2:
            gaps.append(np.diff(at).astype(np.float64))
    if not gaps:
        return None
    d = np.concatenate(gaps)
    d = d[(d >= MIN_PITCH) & (d <= MAX_PITCH)]
    if len(d) < 2:
        return None
    low = float(np.percentile(d, 20, method="lower"))
    near = d[np.abs(d - low) <= 0.2 * low]
    return float(np.median(near))


def level(rgba: np.ndarray, index: int) -> Levelled:
    """The scrap turned so its text lines run level (which way up is left open)."""
    paper0 = rgba[..., 3] >= PAPER_LEVEL * 255
    angle = line_angle(rgba, paper0)
    degrees = angle.degrees
    squared = line_angle(rgba, paper0, square=True).degrees
    if abs(wrap_deg(squared - degrees, 90.0)) > SQUARE_OVERRULE_DEG:
        degrees = squared
    ruled = rule_angle(rgba[..., :3], paper0, degrees)
    if ruled is not None and abs(wrap_deg(ruled - degrees, 90.0)) > RULES_OVERRULE_DEG:
        degrees = ruled
    h, w = rgba.shape[:2]
    turn = rigid(-np.deg2rad(degrees))
    corners = np.array([[0, 0], [w, 0], [w, h], [0, h]], float) @ turn[:2, :2].T
    lo = np.floor(corners.min(axis=0)) - 2
    hi = np.ceil(corners.max(axis=0)) + 2
    pose = turn.copy()
    pose[:2, 2] = -lo
    size = (int(hi[0] - lo[0]), int(hi[1] - lo[1]))
    # Premultiplied, so the black of transparent pixels does not bleed into the rim.
    a = rgba[..., 3:].astype(np.float32) / 255.0
    pre = np.dstack([rgba[..., :3].astype(np.float32) * a, a])
    out = cv2.warpAffine(pre, pose[:2], size, flags=cv2.INTER_CUBIC,
                         borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    alpha = np.clip(out[..., 3], 0.0, 1.0)
    rgb = np.clip(out[..., :3] / np.maximum(alpha, 1e-3)[..., None], 0, 255).astype(np.uint8)
    paper = np.clip((alpha - PAPER_LEVEL) / (1.0 - PAPER_LEVEL), 0.0, 1.0).astype(np.float32)
    ring = paper_outline(np.dstack([rgb, np.rint(alpha * 255).astype(np.uint8)]))
    edges = straight_edges(ring, MIN_EDGE)
    # The rim is no ink: a curled edge darkens, and its shadow bleeds into the edge pixels.
    inner = cv2.erode((paper > 0.5).astype(np.uint8), np.ones((2 * RIM + 1, 2 * RIM + 1), np.uint8))
    ink = ink_darkness(rgb, paper) * inner
    return Levelled(index, 0, pose, paper, ink, edges, angle.strength,
                    _lines_up_across(ink), rules=column_rules(rgb, paper))


def drawing(lv: Levelled, scale: float = 1.0) -> np.ndarray:
    """The scrap's ink drawn dark on white (RGB), ``scale`` times its size: what is read
    to settle its quarter turn (shading and the table around it left out)."""
    grey = np.rint(255.0 * (1.0 - lv.ink)).astype(np.uint8)
    if scale != 1.0:
        grey = cv2.resize(grey, None, fx=scale, fy=scale, interpolation=cv2.INTER_CUBIC)
    return np.dstack([grey] * 3)


def settled(lv: Levelled, confidence: Confidence, scale: float = 1.0,
            whole: Confidence | None = None) -> Levelled:
    """The scrap with its quarter turn, and which way up it is, settled by reading it,
    where the reading is clear.

    The ink's lines can run either way on a scrap of a table (figures in columns as well
    as in rows), and on one showing a single column of figures the columns are the
    peakier: such a scrap is levelled on its side, and ``across`` does not always say so
    (a paper-style table, N = 8: two of the four scraps levelled on their side were not
    flagged). The recogniser reads a drawing whose lines run across it, and reads next to
    nothing where they run up it, either way up: so the drawing is read as levelled and a
    quarter turned, and the clearly better reading wins. A settled scrap is levelled
    anew in the winning turn (``quarter`` 0) and no longer open to a quarter turn; an
    unclear reading leaves it as it was. The winning reading's two halves (as it is,
    upside down) then say which way up it is (``up``), where one clearly wins
    (:data:`UP_SHARE`): a join may then not turn it upside down against its neighbour.

    With ``whole`` (a recogniser's reading of a whole drawing), a scrap whose way up the
    patch left open is read whole (:func:`read_whole`).
    """
    out = _settled_by_patch(lv, confidence, scale)
    if out.up is None and whole is not None:
        out = read_whole(out, whole, scale)
    return out


def read_whole(lv: Levelled, whole: Confidence, scale: float = 1.0) -> Levelled:
    """The scrap's quarter turn and way up settled by reading all of its drawing, as it is
    and turned a quarter (each both ways up), where one clearly wins (:data:`SETTLE_SHARE`,
    :data:`WHOLE_EVIDENCE`); else the scrap as it was.

    The patch read first is the inkiest band of lines. A scrap of a table holding one
    column of two-digit figures, levelled on its side, shows that column as one line of
    figures standing on their sides, read as next to nothing either way; turned a quarter,
    each figure is a box about as tall as it is wide, which the patch's quick look does not
    read. Read whole, each figure is a line of its own (a paper-style table, N = 16: 17
    turned a quarter, 5 as levelled)."""
    rgb = drawing(lv, scale)
    return _settled_by(lv, whole(rgb), whole(np.ascontiguousarray(np.rot90(rgb))), WHOLE_EVIDENCE)


def _settled_by_patch(lv: Levelled, confidence: Confidence, scale: float) -> Levelled:
    rgb = drawing(lv, scale)
    along = confidence(rgb)
    if max(along) >= SURE_READING:
        return replace(lv, across=False, up=_up(along))
    return _settled_by(lv, along, confidence(np.ascontiguousarray(np.rot90(rgb))), SETTLE_EVIDENCE)


def _settled_by(lv: Levelled, along: tuple[float, float], side: tuple[float, float],
                evidence: float) -> Levelled:
    """The scrap settled by two readings of its drawing, as levelled and turned a quarter
    (each as it is and upside down): the one read at least ``evidence`` and SETTLE_SHARE
    times the other wins; else the scrap as it was."""
    if max(side) >= evidence and max(side) >= SETTLE_SHARE * max(along):
        turned = lv.turned(1)
        return Levelled(lv.index, 0, turned.pose, turned.paper, turned.ink, turned.edges,
                        lv.strength, False, _up(side), turned.rules)
    if max(along) >= evidence and max(along) >= SETTLE_SHARE * max(side):
        return replace(lv, across=False, up=_up(along))
    return lv


def _up(halves: tuple[float, float]) -> int | None:
    """Quarter turns (0 or 2) that put a drawing upright, from how confidently it reads as
    it is and upside down; None when neither clearly wins."""
    ahead, behind = halves
    if max(ahead, behind) < UP_EVIDENCE or max(ahead, behind) < UP_SHARE * min(ahead, behind):
        return None
    return 0 if ahead > behind else 2
