"""Levelled scraps laid together: clusters merged where the seams say so most strongly,
as long as no scrap comes to lie on another.

Poses here take each scrap's levelled frame (:class:`shredfold.shred.solvers.jigsaw.level.Levelled`,
not turned) to its cluster's frame; a pose may hold a quarter or half turn. A seam found
against a turned reading of ``j`` puts ``j`` that much round relative to ``i``.

A merge of two clusters is weighed by every seam between them that puts them the same
way: a scrap fitting into a notch meets two or three neighbours at once, and their seams
agree, while a seam that fits by chance stands alone. So each step takes the merge with
the most support; one that would lay a scrap on another, turn a scrap read the right way
up against its cluster's (:attr:`Levelled.up`), or reach past the page (a box holding
more than the paper of all scraps) is struck off with the seams that agree with it.

Taking the best merge first can go wrong where one seam fits by chance more strongly than
the true seams of the scraps it comes between (a table's rows repeat): once made, it lays
a scrap where another belongs, and the true merges are refused as overlaps. So each merge
made is then tried struck off (with the seams agreeing with it), the merges made again
without it, and the placement whose merges hold the most support in all is kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import cv2
import numpy as np

from shredfold.shred.solvers.jigsaw.geometry import angle_of
from shredfold.shred.solvers.jigsaw.level import Levelled, turn_from_level
from shredfold.shred.solvers.jigsaw.seam import Seam

MIN_SUPPORT = 0.25  # a merge with less support from its seams is not made
AGREE_PX = 4.0  # two seams agree on a merge when they put the scraps this close ...
AGREE_DEG = 1.0  # ... and this nearly the same way round
# Of the smaller scrap's core: more paper lying on another rejects a merge. One scrap
# joined a few line pitches off lays its neighbours' true merges a little on it: on a
# paper-style news_zh page (N = 8) two true seams scoring 0.57 were refused at overlaps of
# 0.099 and 0.105, and the page stayed in two parts. Measured on 54 composites of the paper
# preset (three documents per domain, N = 8 to 16): at 0.12 rather than 0.08, 538 right
# joins, 14 wrong and 94 clusters against 536, 14 and 96; at 0.15 one wrong join more.
OVERLAP_SHARE = 0.12
GRID = 4  # px: the overlap test works on masks reduced this much
CORE_PX = 6  # px of each scrap's rim left out of the overlap test (pose error, bulges)
# A cluster's box (its frame is level: the page's edges run along it) holds at most this
# many times the paper of all the scraps: no part of a page lies outside the page. Measured
# on the paper preset's composites (six domains, N = 8 to 16): rightly assembled clusters
# 1.03-1.10 (curled scraps show less paper than they hold; bulges stick out), clusters
# holding a scrap joined in the wrong place up to 1.67.
PAGE_SLACK = 1.25
# Merges struck off, one per round, while striking one off gains support in all. Measured
# on 54 composites of the paper preset (three documents per domain, N = 8 to 16): four
# placements changed, all in the first round (one round or three: the same 54). On a
# table (N = 8) a seam of 0.54 laid a scrap where another belonged and two true merges
# (0.36 and 0.33) were refused; struck off, the page came together in one part. Joins
# right / wrong / clusters (20 px): 539 / 14 / 93 before, 540 / 15 / 91 after.
REPAIR_ROUNDS = 2
# Merges tried struck off per round, the last made first: placing again took 0.06-0.13 s
# of CPU at N = 16 (once 1.1 s), so the time stays bounded for many scraps.
REPAIR_TRIALS = 24


@dataclass
class Placement:
    poses: list[np.ndarray]  # scrap -> cluster frame (from its levelled, unturned frame)
    root: list[int]
    joins: list[Seam] = field(default_factory=list)
    rejected: list[tuple[Seam, str]] = field(default_factory=list)
    support: list[float] = field(default_factory=list)  # of each join's merge
    made: list[frozenset[int]] = field(default_factory=list)  # each merge's seams (positions)

    def clusters(self) -> list[list[int]]:
        groups: dict[int, list[int]] = {}
        for k, r in enumerate(self.root):
            groups.setdefault(r, []).append(k)
        return sorted(groups.values(), key=lambda g: (-len(g), g[0]))


class _Overlap:
    """Overlap of scraps' paper under poses, on reduced masks."""

    def __init__(self, scraps: Sequence[Levelled]) -> None:
        self.masks = []
        self.areas = []
        kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * CORE_PX + 1, 2 * CORE_PX + 1))
        for lv in scraps:
            core = cv2.erode((lv.paper > 0.5).astype(np.uint8), kernel)
            small = cv2.resize(core.astype(np.float32), None, fx=1 / GRID, fy=1 / GRID,
                               interpolation=cv2.INTER_AREA)
            self.masks.append(small)
            self.areas.append(max(float(small.sum()), 1.0))

    def share(self, m: int, pm: np.ndarray, k: int, pk: np.ndarray) -> float:
        """Share of the smaller scrap's core lying on the other's, with the scraps at
        poses ``pm`` and ``pk`` (their levelled frames -> one frame)."""
        scale = np.diag([1.0 / GRID, 1.0 / GRID, 1.0])
        up = np.diag([float(GRID), float(GRID), 1.0])
        rel = scale @ np.linalg.inv(pm) @ pk @ up  # k's reduced mask -> m's reduced frame
        h, w = self.masks[m].shape
        warped = cv2.warpAffine(self.masks[k], rel[:2], (w, h), flags=cv2.INTER_LINEAR,
                                borderMode=cv2.BORDER_CONSTANT, borderValue=0)
        inter = float((np.minimum(warped, self.masks[m])).sum())
        return inter / min(self.areas[m], self.areas[k])


class _Extent:
    """The box of scraps' paper under poses, against all the scraps' paper."""

    def __init__(self, scraps: Sequence[Levelled]) -> None:
        self.corners = []
        for lv in scraps:
            ys, xs = np.nonzero(lv.paper > 0.5)
            if not len(xs):
                xs, ys = np.zeros(1, int), np.zeros(1, int)
            box = [[xs.min(), ys.min()], [xs.max(), ys.min()], [xs.max(), ys.max()], [xs.min(), ys.max()]]
            self.corners.append(np.column_stack([np.asarray(box, float), np.ones(4)]))
        self.paper = float(sum((lv.paper > 0.5).sum() for lv in scraps))

    def box_area(self, poses: dict[int, np.ndarray]) -> float:
        pts = np.vstack([(p @ self.corners[m].T)[:2].T for m, p in poses.items()])
        return float(np.prod(pts.max(axis=0) - pts.min(axis=0)))


def place(scraps: Sequence[Levelled], seams: Sequence[Seam]) -> Placement:
    """Clusters of scraps from the seams, the best supported merges first; then each
    merge made is tried struck off (with the seams agreeing with it), and the placement
    whose merges hold the most support in all is kept (see :data:`REPAIR_ROUNDS`)."""
    best = _greedy(scraps, seams, frozenset())
    banned: frozenset[int] = frozenset()
    for _ in range(REPAIR_ROUNDS):
        trials = [(_greedy(scraps, seams, banned | made), banned | made)
                  for made in best.made[::-1][:REPAIR_TRIALS]]
        better = [t for t in trials if sum(t[0].support) > sum(best.support)]
        if not better:
            break
        best, banned = max(better, key=lambda t: sum(t[0].support))
    return best


def _greedy(scraps: Sequence[Levelled], seams: Sequence[Seam], banned: frozenset[int]) -> Placement:
    """The best supported merges first, none using a seam of ``banned`` (by position in
    ``seams``)."""
    n = len(scraps)
    poses = [np.eye(3) for _ in range(n)]
    root = list(range(n))
    members = {k: [k] for k in range(n)}
    out = Placement(poses, root)
    overlap = _Overlap(scraps)
    page = _Extent(scraps)
    turns = [[turn_from_level(lv, q) for q in range(4)] for lv in scraps]
    centres = [np.array([lv.shape[1] / 2.0, lv.shape[0] / 2.0, 1.0]) for lv in scraps]
    live = [(k, s) for k, s in enumerate(seams) if s.score > 0 and k not in banned]
    while True:
        best = _best_merge(live, poses, root, members, turns, centres)
        if best is None or best[0] < MIN_SUPPORT:
            break
        support, s, move, agreeing = best
        ri, rj = root[s.i], root[s.j]
        moved = {m: move @ poses[m] for m in members[rj]}
        worst = max(overlap.share(m, poses[m], k, pk)
                    for m in members[ri] for k, pk in moved.items())
        union = {**{m: poses[m] for m in members[ri]}, **moved}
        why = (f"overlap {worst:.3f}" if worst > OVERLAP_SHARE
               else "upside down" if not _one_way_up(scraps, union)
               else "past the page" if page.box_area(union) > PAGE_SLACK * page.paper
               else None)
        gone = frozenset(agreeing)
        live = [t for t in live if t[0] not in gone]
        if why is not None:
            out.rejected.append((s, why))
            continue
        for m, p in moved.items():
            poses[m] = p
            root[m] = ri
        members[ri] += members.pop(rj)
        out.joins.append(s)
        out.support.append(support)
        out.made.append(gone)
    return out


def _one_way_up(scraps: Sequence[Levelled], poses: dict[int, np.ndarray]) -> bool:
    """Whether the scraps read the right way up (``up``) all stand the same way up at
    these poses (their levelled frames -> one frame). A seam between two scraps not read
    so can still join two clusters holding scraps that were: a paper-style Java page,
    N = 12, had a scrap joined upside down to a cluster whose other scraps read upright."""
    ways = {scraps[m].way_up(p) for m, p in poses.items()} - {None}
    return len(ways) <= 1


def _merge_move(s: Seam, poses: list[np.ndarray], turns: list[list[np.ndarray]]) -> np.ndarray:
    """The transform taking j's cluster frame into i's cluster frame that seam ``s`` says."""
    rel = s.pose @ turns[s.j][s.turn_j]
    return poses[s.i] @ rel @ np.linalg.inv(poses[s.j])


def _best_merge(live: list[tuple[int, Seam]], poses: list[np.ndarray], root: list[int],
                members: dict[int, list[int]], turns: list[list[np.ndarray]],
                centres: list[np.ndarray],
                ) -> tuple[float, Seam, np.ndarray, list[int]] | None:
    """The merge of two clusters with the most support: (support, its seam, the move of
    the second cluster's frame into the first's, the positions (``live``'s first members)
    of the seams agreeing with it)."""
    groups: dict[tuple[int, int], list[tuple[Seam, np.ndarray, int]]] = {}
    for at_k, s in live:
        ri, rj = root[s.i], root[s.j]
        if ri == rj:
            continue
        move = _merge_move(s, poses, turns)
        if ri > rj:  # one direction per cluster pair: the move of the higher into the lower
            ri, rj, move = rj, ri, np.linalg.inv(move)
        groups.setdefault((ri, rj), []).append((s, move, at_k))
    best = None
    for (_, rj), items in groups.items():
        # Where each candidate move puts the moving cluster's scraps' centres.
        probe = np.array([poses[m] @ centres[m] for m in members[rj]])  # (k, 3)
        at = np.array([(mv @ probe.T)[:2].T for _, mv, _ in items])  # (c, k, 2)
        ang = np.array([angle_of(mv) for _, mv, _ in items])
        far = np.abs(at[:, None] - at[None, :]).max(axis=(2, 3))
        turn = np.abs((ang[:, None] - ang[None, :] + np.pi) % (2 * np.pi) - np.pi)
        agree = (far <= AGREE_PX) & (turn <= np.deg2rad(AGREE_DEG))
        scores = np.array([s.score for s, _, _ in items])
        pairs = [(min(s.i, s.j), max(s.i, s.j)) for s, _, _ in items]
        for c in range(len(items)):
            # One seam per pair of scraps counts: the best of those that agree.
            per_pair: dict[tuple[int, int], float] = {}
            for d in np.flatnonzero(agree[c]):
                per_pair[pairs[d]] = max(per_pair.get(pairs[d], 0.0), float(scores[d]))
            support = sum(per_pair.values())
            if best is None or support > best[0]:
                s, mv, _ = items[c]
                ri_s = root[s.i]
                move = mv if ri_s == min(root[s.i], root[s.j]) else np.linalg.inv(mv)
                # ``move`` takes root[s.j]'s frame into root[s.i]'s.
                best = (support, s, move, [items[d][2] for d in np.flatnonzero(agree[c])])
    return best
