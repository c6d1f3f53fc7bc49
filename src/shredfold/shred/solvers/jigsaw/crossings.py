"""Where a table's column rules cross a seam: a rule that runs up to the cut on one scrap
runs on from the same point on the other.

A table's rows repeat, so a seam that crosses them correlates nearly as well a row or two
along as at its place (:mod:`.seam`'s text profiles: a timetable, N = 8, one row off at
0.51 against 0.37 at its place). Its column rules do not repeat with the rows: where a
slanting cut crosses one, the crossing moves along the cut as the slide does, so the two
scraps' crossings meet at one slide only. Each crossing met on the other side counts for
the slide. One that finds nothing there counts nothing against it: a column rule stops
at a cell that spans columns (a table's header) and may be too short past the cut to be
found (measured on 18 table composites of the paper preset, at a weight of 0.4: counting
such a crossing half against the slide, 139 right joins, 9 wrong and 67 clusters; not
counting it, 148, 8 and 59).

A rule nearly along the cut crosses it nowhere in particular and is left out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from shredfold.shred.solvers.jigsaw.geometry import apply
from shredfold.shred.solvers.jigsaw.level import Levelled

REACH_PX = 14.0  # a rule ends this near the cut (across the rule's run) to meet it
MEET_PX = 3.0  # px (square to the rules): two crossings this close are one rule's
MEET_FALL = 0.25  # ... counted this much less at that distance than where they meet
MIN_SINE = 0.3  # rules meeting the cut at a shallower angle (sine) are left out


@dataclass(frozen=True)
class Crossing:
    at: float  # along the seam, from its origin (px)
    spread: float  # 1 / sine of the angle the rule meets the seam at: its place's spread


def crossings(lv: Levelled, origin: np.ndarray, u: np.ndarray,
              to_frame: np.ndarray) -> list[Crossing]:
    """Where ``lv``'s rules, mapped by ``to_frame`` (its frame -> the seam's), run up to
    the line ``origin + t u`` (one of their ends within :data:`REACH_PX` of it)."""
    found = []
    for x0, y0, x1, y1 in lv.rules:
        p = apply(to_frame, np.array([[x0, y0], [x1, y1]]))
        d = p[1] - p[0]
        length = float(np.hypot(*d))
        if length < 1.0:
            continue
        v = d / length
        sine = float(u[0] * v[1] - u[1] * v[0])
        if abs(sine) < MIN_SINE:
            continue
        w = p[0] - origin
        t = float(w[0] * v[1] - w[1] * v[0]) / sine  # where the rule's line meets the seam's
        s = float(w[0] * u[1] - w[1] * u[0]) / sine  # ... and how far along the rule
        if min(abs(s), abs(s - length)) > REACH_PX / abs(sine):
            continue
        found.append(Crossing(t, 1.0 / abs(sine)))
    return found


def rule_support(i: Levelled, j: Levelled, origin: np.ndarray, u: np.ndarray,
                 to_j: np.ndarray, slide: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                 length: float) -> np.ndarray:
    """Per slide of ``j`` along ``i``'s edge (the line ``origin + t u``; ``to_j`` takes
    the seam's frame before the slide to ``j``'s; ``j``'s edge spans ``lo`` to ``hi``
    after each slide, ``i``'s 0 to ``length``): how many of ``i``'s rule crossings within
    the shared stretch meet one of ``j``'s (each 1 where two meet exactly, a little less
    as they lie apart)."""
    none = np.zeros(len(slide))
    if not len(i.rules) or not len(j.rules):
        return none
    mine = crossings(i, origin, u, np.eye(3))
    theirs = crossings(j, origin, u, np.linalg.inv(to_j))
    if not mine or not theirs:
        return none
    a = np.array([c.at for c in mine]).reshape(-1, 1)  # (na, 1)
    b = np.array([c.at for c in theirs]).reshape(-1, 1) + slide  # (nb, slides)
    start, end = np.maximum(lo, 0.0), np.minimum(hi, length)
    reach = MEET_PX * np.maximum.outer(np.array([c.spread for c in mine]),
                                       np.array([c.spread for c in theirs]))
    gap = np.abs(a[:, None, :] - b[None, :, :]) / reach[..., None]  # (na, nb, slides)
    # Within reach a crossing counts nearly whole (curl and levelling leave a px or two),
    # a little more the nearer: so the slide is fitted to the px where the rules line up.
    meet = np.where(gap <= 1.0, 1.0 - MEET_FALL * gap**2, 0.0)
    meet *= ((b >= start) & (b <= end))[None, :, :]
    return (meet.max(axis=1) * ((a >= start) & (a <= end))).sum(axis=0)
