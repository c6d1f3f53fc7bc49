"""Where two levelled scraps meet: a straight edge of one against a straight edge of the
other, slid along their common line to where the text runs on across the seam.

Two neighbours of a straight cut share an edge: once both are level, their edges run
antiparallel (within the levelling's error), and laying one line on the other leaves one
unknown, the slide along it. Four things fix it:

* the text: lines of text cross the seam (or strokes do, where the seam runs along a
  line), so the ink along the seam on one side, projected on the seam, repeats the ink on
  the other side: the slide is where the two profiles correlate best. Where the seam runs
  through bare paper (a table's empty cells, the right of a code page, the gap between two
  lines) the ink a few lines deeper still lines up across it: rows across a seam that
  crosses the lines, line starts and columns across one that runs along them;
* the ends: where both edges end at a corner (the outline turns sharply), the corners are
  one vertex of the cut and meet; an edge never reaches past its partner's corner;
* the sharing: each edge is the whole of one cut, or the part of it a curled corner left
  straight, so the shorter of two mates is shared nearly whole. Code rows look alike, and
  a seam slid several lines along leaves much of it unshared (a paper-style C++ page, N =
  12: half of a 300 px cut, seven lines off, at a text correlation of 0.75).
* a table's column rules: where a slanting cut crosses one, the rule runs on from the same
  point on the other side (:mod:`.crossings`), though the rows beside it repeat.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from shredfold.shred.solvers.jigsaw.crossings import rule_support
from shredfold.shred.solvers.jigsaw.level import Levelled
from shredfold.shred.solvers.jigsaw.straight import Edge

MIN_EDGE_PITCHES = 1.2  # edges shorter than this many line pitches are not matched
MAX_TURN_DEG = 2.5  # two levelled edges this far from antiparallel may be one cut
MIN_OVERLAP = 0.5  # of the shorter edge: the least the two edges must share
END_SIGMA = 3.0  # px: spread of two corners that are one vertex
END_WEIGHT = 0.35  # the ends' say against the text's (a correlation, at most 1)
EVIDENCE_PITCHES = 5.0  # a seam this many line pitches long or longer is full evidence
BAND_MIN = 3.0  # px: the band sampled beside a seam running along the text lines
FAINT_INK = 0.01  # ink per px of band below which a profile is bare paper
# A seam within this of the text lines' direction runs along them (sampled square to it,
# thin: the strokes it cuts); one further out crosses them, and is sampled along the lines.
# A seam 15-20 degrees off crosses a line every 3-4 pitches of its length: sampled square to
# it, each crossing shows at a place shifted by the band's slant, and the slide came out a
# few px off. Measured on 54 composites of the paper preset (three documents per domain, N
# = 8 to 16): at 15 rather than 20 degrees, 534 right joins, 14 wrong and 98 clusters
# against 531, 15 and 100 (anywhere from 12 to 17 degrees gave 533-535 / 14-15 / 97-98).
ALONG_LINES_DEG = 15.0
# The deep band: this many line pitches beside the seam, sampled square to the text lines
# (a seam along the lines) or along them; its correlation counts this much of the near
# band's, and in full only from DEEP_EVIDENCE_PITCHES of seam (rows and line starts repeat
# more than the strokes at a seam: counted in full from EVIDENCE_PITCHES, a 106 px seam of
# a Python page, its rows correlating 0.76, joined two scraps 2,200 page px apart). Measured on 54 composites
# of the paper preset (three documents per domain, N = 8 to 16; joins marked right or wrong
# by the answer key): 495 right joins, 26 wrong and 125 clusters without the deep band;
# 522, 25 and 99 with it.
DEEP_PITCHES = 3.0
DEEP_WEIGHT = 0.7
DEEP_EVIDENCE_PITCHES = 8.0
# Where the text has no say (a seam through bare paper on both sides: the right of a code
# page), a seam is fitted by its corners alone, and its edges must lie within this of
# antiparallel. Two scraps levelled by their text lines lie within a degree of each other;
# two short edges of the same length happen to meet at both corners more often. Measured
# on 54 composites of the paper preset (three documents per domain, N = 8 to 16): of the
# 35 right joins made at such slides, 31 lay within 1.16 degrees, and the four further out
# (1.4-2.5), each one of several seams carrying its merge, scored under 0.18 (the merges
# were made without them); four of the six wrong ones (1,000-2,000 page px off) lay 1.4-2.3
# degrees out.
BARE_TURN_DEG = 1.2
# A scrap that shows no lines and has under this share of its paper inked (the corners
# of the paper preset's code pages holding a speck or two: 0.0000-0.0010; the least inked
# other such scrap, a table's, 0.0064) slides no seam by its text.
BLANK_INK = 0.002
# Unshared length of the shorter edge (line pitches) a slide may leave free, and how much
# more costs UNSHARED_WEIGHT in full. Measured on the paper preset's composites (six
# domains, N = 8 to 16): at the true slide, 342 of 355 pairs of mated edges left under
# 1 pitch unshared, 351 under 3.
UNSHARED_FREE = 1.0
UNSHARED_FULL = 3.0
UNSHARED_WEIGHT = 0.75
# A table's column rules met across the seam (:mod:`.crossings`): each counts this much.
# Measured on the 18 table composites of the paper preset not tuned on before (the fourth
# to ninth built-in tables, N = 8 to 16; joins marked right or wrong by the answer key):
# 122 right joins, 17 wrong, 76 clusters without; 148, 8 and 59 with. Counted over a hard
# 3 px window (before crossings.MEET_FALL), 0.3 to 0.8 gave 145-150 right, 7-9 wrong and
# 58-61 clusters (0.5: 150 / 7 / 58). On 54 composites of six domains 542 / 13 / 93
# before, 545 / 11 / 92 after (pages without rules are untouched).
RULE_WEIGHT = 0.5


@dataclass(frozen=True)
class Seam:
    """A proposed join: ``pose`` takes scrap ``j``'s levelled frame (turned ``turn_j``
    quarter turns) into scrap ``i``'s (as levelled, not turned)."""

    i: int
    j: int
    turn_j: int
    a: int  # edge of i
    b: int  # edge of j
    pose: np.ndarray
    score: float  # higher is better
    text: float  # the correlation of the ink profiles along the seam
    shared: float  # px of edge the two share


def ink_beside(ink: np.ndarray, paper: np.ndarray, origin: np.ndarray, u: np.ndarray,
               inward: np.ndarray, lo: float, hi: float, depth: float,
               to_local: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """The ink beside a line, summed over ``depth`` px into the paper, per px of the line
    from ``lo`` to ``hi`` (coordinates along ``u`` from ``origin``); also how much paper
    the band held."""
    sig = np.arange(np.floor(lo), np.ceil(hi) + 1.0)
    dep = np.arange(1.5, max(depth, 2.0) + 0.01, 1.0)
    pts = origin + sig[:, None, None] * u + dep[None, :, None] * inward
    if to_local is not None:
        pts = pts @ to_local[:2, :2].T + to_local[:2, 2]
    mx = np.ascontiguousarray(pts[..., 0], dtype=np.float32)
    my = np.ascontiguousarray(pts[..., 1], dtype=np.float32)
    ink_s = cv2.remap(ink, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    pap_s = cv2.remap(paper, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
                      borderValue=0)
    return (ink_s * pap_s).sum(axis=1), float(pap_s.mean())


def _correlation(p: np.ndarray, q: np.ndarray, min_overlap: int, floor: float) -> np.ndarray:
    """Normalised correlation of ``p`` with ``q`` shifted by each lag ``k`` (``q[n]``
    against ``p[n + k]``), k from -(len(q) - 1) to len(p) - 1; lags sharing fewer than
    ``min_overlap`` samples get -1. Energies below ``floor`` per sample shared count as
    that (bare paper on both sides correlates as nothing, not as its noise)."""
    p = p - p.mean()
    q = q - q.mean()
    num = np.correlate(p, q, mode="full")
    pp = np.correlate(p * p, np.ones_like(q), mode="full")
    qq = np.correlate(np.ones_like(p), q * q, mode="full")
    count = np.correlate(np.ones_like(p), np.ones_like(q), mode="full")
    least = floor * np.maximum(count, 1.0)
    out = num / np.sqrt(np.maximum(pp, least) * np.maximum(qq, least))
    out[count < min_overlap] = -1.0
    return out


def match(i: Levelled, j: Levelled, a: int, b: int, pitch: float) -> Seam | None:
    """The best slide of ``j``'s edge ``b`` along ``i``'s edge ``a``, or None when the two
    cannot be one cut (not antiparallel, or sharing too little)."""
    ea, eb = i.edges[a], j.edges[b]
    turn = (ea.angle + np.pi - eb.angle + np.pi) % (2 * np.pi) - np.pi
    if abs(np.degrees(turn)) > MAX_TURN_DEG:
        return None
    # Both scraps are level: their text lines say how they turn, to a tenth of a degree
    # (an edge a few hundred px long, fitted on a curled rim, says it less well).
    rot = np.eye(3)
    eb_r = eb
    u, out = ea.direction, ea.normal
    # Lay b's line on a's (at b's middle, should the two differ a little in direction):
    # shift across; b runs backwards along a.
    shift = ((ea.p0 - 0.5 * (eb_r.p0 + eb_r.p1)) @ out) * out
    b_hi = float((eb_r.p0 + shift - ea.p0) @ u)  # b's start is its far end along a
    b_lo = float((eb_r.p1 + shift - ea.p0) @ u)
    la = ea.length
    lb = b_hi - b_lo
    shorter = min(la, lb)
    need = MIN_OVERLAP * shorter
    # The band beside the seam is sampled along the text lines (so a line crossing the
    # seam shows at the same place on both sides: sampled square to a slanting seam it
    # would shift one side's way on each), or, where the seam runs along the lines, square
    # to it and thin (the strokes it cuts). The deep band is sampled along the lines, or
    # square to them (line starts and columns keep their place along the seam).
    if _seam_tilt(u) >= np.deg2rad(ALONG_LINES_DEG):
        across = deep_in = np.array([np.sign(-out[0]), 0.0])
        depth = pitch
    else:
        across, deep_in = -out, np.array([0.0, np.sign(-out[1])])
        depth = BAND_MIN
    prof_a, _ = ink_beside(i.ink, i.paper, ea.p0, u, across, 0.0, la, depth)
    # b's band, in a's frame (before the slide), mapped back to j's frame to sample.
    to_j = np.linalg.inv(_translate(shift) @ rot)
    prof_b, _ = ink_beside(j.ink, j.paper, ea.p0, u, -across, b_lo, b_hi, depth, to_j)
    corr = _correlation(prof_a, prof_b, max(int(need), 8), (FAINT_INK * depth) ** 2)
    deep = DEEP_PITCHES * pitch
    deep_a, _ = ink_beside(i.ink, i.paper, ea.p0, u, deep_in, 0.0, la, deep)
    deep_b, _ = ink_beside(j.ink, j.paper, ea.p0, u, -deep_in, b_lo, b_hi, deep, to_j)
    deep_corr = DEEP_WEIGHT * _correlation(deep_a, deep_b, max(int(need), 8),
                                           (FAINT_INK * deep) ** 2)
    # Lag k puts b's sample n (at b_lo' + n) on a's sample n + k: slide s = k - floor(b_lo).
    lags = np.arange(-(len(prof_b) - 1), len(prof_a))
    slide = lags - np.floor(b_lo)
    lo_s, hi_s = b_lo + slide, b_hi + slide
    shared = np.minimum(hi_s, la) - np.maximum(lo_s, 0.0)
    ok = shared >= need
    if not ok.any():
        return None
    ends = _ends(ea, eb, lo_s, hi_s, la)
    # A correlation over a short seam says little: two or three lines of text match most
    # places a line pitch apart. It counts in full from EVIDENCE_PITCHES pitches of seam.
    weight = np.clip(shared / (EVIDENCE_PITCHES * pitch), 0.0, 1.0)
    deep_weight = np.clip(shared / (DEEP_EVIDENCE_PITCHES * pitch), 0.0, 1.0)
    if blank(i) or blank(j):
        weight = deep_weight = np.zeros_like(weight)
    # Each band's correlation, weighed by the seam's length; the better one is the text's say.
    text = corr * weight
    deep_text = deep_corr * deep_weight
    corr = np.where(deep_text > text, deep_corr, corr)
    text = np.maximum(text, deep_text)
    if abs(np.degrees(turn)) > BARE_TURN_DEG:
        ok &= text > 0.0
        if not ok.any():
            return None
    unshared = np.clip((shorter - shared) / pitch - UNSHARED_FREE, 0.0, UNSHARED_FULL) / UNSHARED_FULL
    rules = rule_support(i, j, ea.p0, u, to_j, slide, lo_s, hi_s, la)
    score = np.where(ok, text + END_WEIGHT * ends - UNSHARED_WEIGHT * unshared + RULE_WEIGHT * rules,
                     -np.inf)
    k = int(np.argmax(score))
    pose = _translate(shift + slide[k] * u) @ rot
    return Seam(i.index, j.index, j.quarter, a, b, pose, float(score[k]), float(corr[k]),
                float(shared[k]))


def blank(lv: Levelled) -> bool:
    """Whether a scrap shows no text to slide a seam by: its ink lines up no way more than
    another (it may lie a quarter turn round) and covers under :data:`BLANK_INK` of its
    paper. A few specks correlate with any line of the other side: a corner of a C++ page
    holding two specks, N = 16, was joined a quarter turn round at a text correlation of
    0.74."""
    return lv.across and float(lv.ink.sum()) < BLANK_INK * float(lv.paper.sum())


def _seam_tilt(u: np.ndarray) -> float:
    """Angle of the seam from the text lines (radians, 0 = along them)."""
    return float(np.arctan2(abs(u[1]), abs(u[0])))


def _translate(t: np.ndarray) -> np.ndarray:
    m = np.eye(3)
    m[:2, 2] = t
    return m


def _ends(ea: Edge, eb: Edge, lo: np.ndarray, hi: np.ndarray, la: float) -> np.ndarray:
    """Agreement of the two edges' ends for each slide, in [-2, 1]: per end, +1 where two
    corners meet and -2 where two corners miss each other by far (one vertex of the cut
    shows as a corner on both scraps), down to -1 where one edge reaches past the
    other's corner; averaged over the two ends."""
    total = np.zeros_like(lo)
    # a runs 0 -> la; b (backwards) runs hi -> lo: a's start meets b's end, and so on.
    for a_at, a_corner, b_at, b_corner, outward in (
        (0.0, ea.corner0, lo, eb.corner1, -1.0),
        (la, ea.corner1, hi, eb.corner0, 1.0),
    ):
        gap = (b_at - a_at) * outward  # > 0: b reaches past a's end
        if a_corner and b_corner:
            total += 3.0 * np.exp(-0.5 * (gap / END_SIGMA) ** 2) - 2.0
        elif a_corner:
            total -= np.clip((gap - END_SIGMA) / (4 * END_SIGMA), 0.0, 1.0)
        elif b_corner:
            total -= np.clip((-gap - END_SIGMA) / (4 * END_SIGMA), 0.0, 1.0)
    return total / 2.0


def seams(i: Levelled, j: Levelled, pitch: float) -> list[Seam]:
    """Every plausible join of ``i``'s edges with ``j``'s (``j`` as given, one reading);
    edges shorter than :data:`MIN_EDGE_PITCHES` line pitches are left out (a short
    straight stretch fits too many others, and a curled rim shows many)."""
    shortest = MIN_EDGE_PITCHES * pitch
    out = []
    for a in range(len(i.edges)):
        if i.edges[a].length < shortest:
            continue
        for b in range(len(j.edges)):
            if j.edges[b].length < shortest:
                continue
            s = match(i, j, a, b, pitch)
            if s is not None:
                out.append(s)
    return out
