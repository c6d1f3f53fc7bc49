"""Scraps cut along straight lines, photographed: the page put back from its text lines
and its straight edges.

Where the scraps of a photograph are cut along straight lines (a Voronoi cut, as the
ShredBench authors cut their pages) but photographed as curled sheets, their outlines are
straight only along the cuts: the rims bulge where the sheet curls, and page edges wave,
so matching whole outlines (:mod:`shredfold.shred.solvers.jigsaw.solve`) finds little that fits. Here
instead every scrap is turned level by its text lines (:mod:`.level`), the straight edges
of two scraps are laid on each other and slid to where the text runs on across the seam
(:mod:`.seam`), and the clusters merged where most seams agree (:mod:`.place`).

:func:`straight_share` tells the two kinds of photograph apart: torn scraps (our own
table-top photographs) show few straight stretches.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from shredfold.shred.solvers.jigsaw.assemble import PieceShape
from shredfold.shred.solvers.jigsaw.contour import load_scrap, paper_outline
from shredfold.shred.solvers.jigsaw.geometry import apply, wrap_deg
from shredfold.shred.solvers.jigsaw.level import Confidence, Levelled, level, line_pitch, settled
from shredfold.shred.solvers.jigsaw.place import place
from shredfold.shred.solvers.jigsaw.seam import Seam, ink_beside, seams
from shredfold.shred.solvers.jigsaw.sides import Side
from shredfold.shred.solvers.jigsaw.solve import Cluster, Solution
from shredfold.shred.solvers.jigsaw.straight import Edge, straight_edges

DEFAULT_PITCH = 30.0  # px: assumed line pitch where the scraps show no lines
# A photograph whose scraps' outlines run straight (within PROBE_RMS, for at least
# PROBE_EDGE) for at least this share of their length is of scraps cut along straight
# lines. Measured: the ShredBench authors' composites and our renders of their scene
# 0.71-0.82, our table-top photographs of torn scraps (flat and Blender) 0.46-0.49.
STRAIGHT_SHARE = 0.6
PROBE_EDGE = 40.0  # px
PROBE_RMS = 0.5  # px
# The page is read drawn with its lines this far apart (px): the recogniser misreads serif
# text of a 2048 px photograph drawn at its size (the ShredBench authors' three composites
# with ground truth, text NED 0.029-0.11 drawn at 1x, 0.009-0.037 at 2x, no better at 2.5x).
READ_PITCH = 60.0
MAX_READ_SCALE = 3.0
UPRIGHT_MAJORITY = 2.0  # a cluster's way up is its scraps' when this many times outvoting
# A straight edge of a levelled scrap this nearly along or across its text lines, and at
# least BORDER_PITCHES line pitches long, may be the page's edge: the reader orders the
# clusters of a page by the page edges they hold.
BORDER_ALIGN_DEG = 1.0
BORDER_PITCHES = 4.0
# ... and the paper within a line pitch inside it is bare (the page's margin) along all but
# this share of it. Measured on the paper preset's composites (six domains, N = 8 to 16):
# 91 such edges on the page's edges, inked along at most 0.07 of them; 12 on cuts (a cut
# that square to the lines is not rare), 10 of them inked along 0.16 or more (the other
# two run through bare paper: the right of a code page, a table's empty cell).
BORDER_INKED_SHARE = 0.1
BORDER_INK = 0.05  # ink per px of the edge, per px of depth, that counts as inked


def straight_share(scraps: Sequence[np.ndarray]) -> float:
    """The share of the scraps' outline length that runs in long straight stretches."""
    total = straight = 0.0
    for rgba in scraps:
        ring = paper_outline(rgba)
        total += float(np.hypot(*np.diff(np.vstack([ring, ring[:1]]), axis=0).T).sum())
        straight += sum(e.length for e in straight_edges(ring, PROBE_EDGE, PROBE_RMS))
    return straight / total if total else 0.0


def read_scale(scraps: Sequence[np.ndarray]) -> float:
    """How much larger the scraps are best read (:data:`READ_PITCH`)."""
    pitch = line_pitch([level(rgba, k).ink for k, rgba in enumerate(scraps)]) or DEFAULT_PITCH
    return _read_scale(pitch)


def _read_scale(pitch: float) -> float:
    return float(np.clip(READ_PITCH / pitch, 1.0, MAX_READ_SCALE))


def all_seams(flat: Sequence[Levelled], pitch: float) -> list[Seam]:
    """Every plausible seam between two of the levelled scraps."""
    found: list[Seam] = []
    for i in range(len(flat)):
        for j in range(i + 1, len(flat)):
            # A half turn between two scraps is always possible; a quarter turn only where
            # one of them may be levelled a quarter turn out (measured on renders of the
            # authors' scene: letting the edges turn an unsure scrap freely, or near a
            # quarter turn, joined more scraps wrongly than it joined rightly).
            quarters = (0, 1, 2, 3) if flat[i].across or flat[j].across else (0, 2)
            if flat[i].up is not None and flat[j].up is not None:
                # Both read the right way up: j joins i only in the turn that puts it so.
                quarters = tuple(q for q in quarters if (flat[j].up - q) % 4 == flat[i].up)
            for q in quarters:
                found += seams(flat[i], flat[j].turned(q), pitch)
    return found


def border_edges(lv: Levelled, pitch: float) -> list[Edge]:
    """The straight edges of a levelled scrap that may be the page's (in its levelled
    frame): long, square to the text lines, and with the page's bare margin inside (see
    :data:`BORDER_ALIGN_DEG`, :data:`BORDER_INKED_SHARE`)."""
    out = []
    for e in lv.edges:
        if abs(wrap_deg(np.degrees(e.angle), 90.0)) > BORDER_ALIGN_DEG or e.length < BORDER_PITCHES * pitch:
            continue
        ink, _ = ink_beside(lv.ink, lv.paper, e.p0, e.direction, -e.normal, 0.0, e.length, pitch)
        if float(np.mean(ink > BORDER_INK * pitch)) <= BORDER_INKED_SHARE:
            out.append(e)
    return out


def page_edges(lv: Levelled, pitch: float) -> list[Side]:
    """:func:`border_edges` as border sides in the scrap's own pixels."""
    back = np.linalg.inv(lv.pose)
    return [Side(lv.index, k, 0, apply(back, np.array([e.p0, e.p1])), border=True)
            for k, e in enumerate(border_edges(lv, pitch))]


def upright_turn(members: Sequence[Levelled], poses: Sequence[np.ndarray]) -> int | None:
    """Quarter turns (as np.rot90) that put a cluster upright, by its scraps' votes: each
    scrap read the right way up (``up``) says it, through its pose (its levelled frame ->
    the cluster's). None where none was read so, or where the votes are close.

    Reading the drawn cluster itself looks at its inkiest patch only; on a paper-style
    news page (N = 16) that patch was the heading in large bold type, read upside down
    more confidently than upright, and the whole page was read upside down."""
    votes = np.zeros(4)
    for lv, pose in zip(members, poses, strict=True):
        way = lv.way_up(pose)
        if way is not None:
            votes[way] += 1
    best = int(np.argmax(votes))
    if votes[best] == 0 or votes[best] < UPRIGHT_MAJORITY * np.sort(votes)[-2]:
        return None
    return best


def solve_photo(scraps: Sequence[np.ndarray], confidence: Confidence | None = None,
                whole: Confidence | None = None) -> Solution:
    """Clusters of the scraps (RGBA, cut out of one photograph) from their text lines and
    straight edges; each cluster's poses take its scraps' pixels to a frame in which its
    text runs level, upright or upside down (the reader settles which). With
    ``confidence`` (a recogniser's), each scrap's quarter turn is first settled by reading
    it (:func:`shredfold.shred.solvers.jigsaw.level.settled`; with ``whole``, a scrap its
    inkiest patch left open is read whole)."""
    flat = [level(rgba, k) for k, rgba in enumerate(scraps)]
    pitch = line_pitch([lv.ink for lv in flat]) or DEFAULT_PITCH
    if confidence is not None:
        flat = [settled(lv, confidence, _read_scale(pitch), whole) for lv in flat]
        # Scraps levelled on their side showed their columns as lines.
        pitch = line_pitch([lv.ink for lv in flat]) or DEFAULT_PITCH
    placed = place(flat, all_seams(flat, pitch))
    loaded = [load_scrap(rgba) for rgba in scraps]
    shapes = [PieceShape(sc.outline, page_edges(lv, pitch)) for sc, lv in zip(loaded, flat, strict=True)]
    clusters = [Cluster(group, {m: placed.poses[m] @ flat[m].pose for m in group},
                        upright_turn([flat[m] for m in group], [placed.poses[m] for m in group]))
                for group in placed.clusters()]
    return Solution(loaded, shapes, placed, clusters, _read_scale(pitch), close_seams=True)


__all__ = ["Levelled", "read_scale", "solve_photo", "straight_share"]
