"""Global assembly: accept pairwise joins cheapest first, merging clusters (union-find).

A join is accepted only if the merged cluster stays a plausible piece of one page:

* the pieces do not overlap (shapely, on outlines shrunk by a few pixels so that the
  shared jagged edges themselves do not count);
* every piece lies on the paper side of every page-border side in the cluster, and the
  border sides are parallel or perpendicular to each other (the page is a rectangle);
* text lines of the two joined pieces run in the same direction after the join.

``border_slack`` widens the border checks (their slack and angle) by that factor: a curled
sheet's pieces poke a few px past each other's page edges even at their true places.

Joins where each side is the other's best partner go first, joins on short sides last; a
join between pieces already in one cluster only counts as support (loop closure at
vertices where three pieces meet). Once all joins are made, every candidate the layout
confirms is a loop link of the final refinements.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from shapely import STRtree
from shapely.geometry import Polygon

from shredfold.shred.solvers.jigsaw.geometry import angle_of, apply, wrap_deg
from shredfold.shred.solvers.jigsaw.ink import LineAngle
from shredfold.shred.solvers.jigsaw.match import Candidate
from shredfold.shred.solvers.jigsaw.refine import refine
from shredfold.shred.solvers.jigsaw.sides import Side

SHRINK_PX = 3.0  # outlines are shrunk by this before overlap tests (jag + pose error)
OVERLAP_SHARE = 0.004  # of the smaller piece's area: more overlap rejects a join
BORDER_SLACK_PX = 4.0  # how far a piece may poke out past a page-border line ...
BORDER_SLACK_SLOPE = 0.012  # ... plus this per px of distance from the border side (drift)
BORDER_ANGLE_DEG = 1.5  # border sides must be parallel/perpendicular within this
TEXT_ANGLE_DEG = 2.5  # joined pieces' text lines must agree within this ...
TEXT_MIN_STRENGTH = 3.0  # ... when both pieces show clear lines
LOOP_PX = 8.0  # a candidate join the finished layout confirms this closely is a loop link
LOOP_ROUNDS = 2  # final refinements, the loop links found again before each
SHORT_SIDE_PX = 40.0  # joins on sides shorter than this are tried after all others


@dataclass
class Assembly:
    poses: list[np.ndarray]  # piece -> frame of its cluster
    root: list[int]  # cluster representative of each piece
    joins: list[Candidate] = field(default_factory=list)
    support: list[Candidate] = field(default_factory=list)  # consistent in-cluster joins
    rejected: list[tuple[Candidate, str]] = field(default_factory=list)  # and why

    def clusters(self) -> list[list[int]]:
        """Piece indices per cluster, biggest cluster first (ties: lowest piece first)."""
        groups: dict[int, list[int]] = {}
        for k, r in enumerate(self.root):
            groups.setdefault(r, []).append(k)
        return sorted(groups.values(), key=lambda g: (-len(g), g[0]))


@dataclass(frozen=True)
class PieceShape:
    outline: np.ndarray  # (n, 2) piece coordinates
    sides: list[Side]
    angle: LineAngle | None = None

    def polygon(self) -> Polygon:
        return Polygon(self.outline).simplify(0.5).buffer(-SHRINK_PX)


def _mutual(cands: list[Candidate]) -> set[int]:
    best: dict[tuple[int, int], tuple[float, int]] = {}
    for k, c in enumerate(cands):
        for side in ((c.i, c.a), (c.j, c.b)):
            if side not in best or c.cost < best[side][0]:
                best[side] = (c.cost, k)
    return {k for k, c in enumerate(cands) if best[(c.i, c.a)][1] == k == best[(c.j, c.b)][1]}


def _transform_poly(poly: Polygon, t: np.ndarray) -> Polygon:
    from shapely.affinity import affine_transform

    return affine_transform(poly, [t[0, 0], t[0, 1], t[1, 0], t[1, 1], t[0, 2], t[1, 2]])


class _Checker:
    def __init__(self, shapes: list[PieceShape], *, text_period: float,
                 border_slack: float = 1.0) -> None:
        self.shapes = shapes
        self.border_slack = border_slack
        self.polys = [s.polygon() for s in shapes]
        self.areas = [max(p.area, 1.0) for p in self.polys]
        self.text_period = text_period
        self.rim = [s.outline[::5] for s in shapes]

    def text_ok(self, i: int, pi: np.ndarray, j: int, pj: np.ndarray) -> bool:
        ai, aj = self.shapes[i].angle, self.shapes[j].angle
        if ai is None or aj is None:
            return True
        if min(ai.strength, aj.strength) < TEXT_MIN_STRENGTH:
            return True
        di = ai.degrees + np.degrees(angle_of(pi))
        dj = aj.degrees + np.degrees(angle_of(pj))
        return abs(wrap_deg(di - dj, self.text_period)) <= TEXT_ANGLE_DEG

    def overlap_ok(self, a: list[int], pa: dict[int, np.ndarray], b: list[int],
                   pb: dict[int, np.ndarray]) -> bool:
        polys_a = [_transform_poly(self.polys[k], pa[k]) for k in a]
        tree = STRtree(polys_a)
        for k in b:
            q = _transform_poly(self.polys[k], pb[k])
            for hit in tree.query(q):
                m = a[int(hit)]
                inter = polys_a[int(hit)].intersection(q).area
                if inter > OVERLAP_SHARE * min(self.areas[m], self.areas[k]):
                    return False
        return True

    def border_ok(self, members: list[int], poses: dict[int, np.ndarray]) -> bool:
        lines = []
        for k in members:
            for s in self.shapes[k].sides:
                if s.border:
                    p = apply(poses[k], s.points[[0, -1]])
                    d = (p[1] - p[0]) / max(float(np.hypot(*(p[1] - p[0]))), 1e-9)
                    lines.append((k, p[0], d))
        if not lines:
            return True
        ref = np.degrees(np.arctan2(lines[0][2][1], lines[0][2][0]))
        for _, _, d in lines[1:]:
            ang = np.degrees(np.arctan2(d[1], d[0]))
            if abs(wrap_deg(ang - ref, 90.0)) > BORDER_ANGLE_DEG * self.border_slack:
                return False
        for owner, p0, d in lines:
            normal = np.array([-d[1], d[0]])  # towards the paper
            for k in members:
                if k == owner:
                    continue
                rel = apply(poses[k], self.rim[k]) - p0
                # Residual rotation drift tilts a far piece against the line; wrong joins
                # overshoot by far more than that.
                slack = self.border_slack * (BORDER_SLACK_PX
                                             + BORDER_SLACK_SLOPE * np.abs(rel @ d))
                if ((rel @ normal) < -slack).any():
                    return False
        return True


def _links(shapes: list[PieceShape], cands: list[Candidate]) -> list[tuple[Side, Side]]:
    return [(shapes[c.i].sides[c.a], shapes[c.j].sides[c.b]) for c in cands]


def assemble(
    shapes: list[PieceShape],
    cands: list[Candidate],
    *,
    text_period: float = 180.0,
    scale: bool = False,
    border_slack: float = 1.0,
) -> Assembly:
    n = len(shapes)
    poses = [np.eye(3) for _ in range(n)]
    root = list(range(n))
    members = {k: [k] for k in range(n)}
    out = Assembly(poses=poses, root=root)
    checker = _Checker(shapes, text_period=text_period, border_slack=border_slack)
    mutual = _mutual(cands)
    # A short side fits many others about as well as its mate (a couple of dozen jagged
    # px): joins on short sides wait until the long sides have said what they can.
    order = sorted(range(len(cands)), key=lambda k: (cands[k].length < SHORT_SIDE_PX,
                                                      k not in mutual, cands[k].cost))
    for k in order:
        c = cands[k]
        ri, rj = root[c.i], root[c.j]
        # Pose of piece j implied by the join, in i's cluster frame.
        pj_new = poses[c.i] @ c.pose
        if ri == rj:
            err = np.abs(apply(pj_new, shapes[c.j].outline[::20]) -
                         apply(poses[c.j], shapes[c.j].outline[::20])).max()
            if err < 3.0:
                out.support.append(c)
            continue
        if not checker.text_ok(c.i, poses[c.i], c.j, pj_new):
            out.rejected.append((c, "text"))
            continue
        move = pj_new @ np.linalg.inv(poses[c.j])
        moved = {m: move @ poses[m] for m in members[rj]}
        stay = {m: poses[m] for m in members[ri]}
        if not checker.overlap_ok(members[ri], stay, members[rj], moved):
            out.rejected.append((c, "overlap"))
            continue
        union = members[ri] + members[rj]
        if not checker.border_ok(union, {**stay, **moved}):
            out.rejected.append((c, "border"))
            continue
        for m, p in moved.items():
            poses[m] = p
            root[m] = ri
        members[ri] = union
        del members[rj]
        out.joins.append(c)
        if len(union) > 2:
            # Re-settle the cluster on all its matched sides so drift never piles up
            # against the border checks of later joins.
            links = _links(shapes, out.joins + out.support)
            poses[:] = refine(poses, union, links, rounds=3, anchor=ri, scale=scale)
    # Loops close where the drift is: a join is "support" only if it agreed within 3 px
    # when it came up, and on scraps cut out of a photograph (outlines a little rougher)
    # most did not, so the cluster rested on its tree of joins. Every candidate the
    # finished layout puts within LOOP_PX of its own pose is a side pair that truly meets.
    for _ in range(LOOP_ROUNDS):
        loops = [c for c in cands
                 if root[c.i] == root[c.j] and _pose_gap(c, poses, shapes) < LOOP_PX]
        links = _links(shapes, out.joins + out.support + loops)
        for group in out.clusters():
            if len(group) > 2:
                poses[:] = refine(poses, group, links, rounds=10, anchor=root[group[0]],
                                  scale=scale)
    return out


def _pose_gap(c: Candidate, poses: list[np.ndarray], shapes: list[PieceShape]) -> float:
    """How far (px, the worst of a sparse set of outline points) the join ``c`` would
    put piece j from where the layout has it."""
    pts = shapes[c.j].outline[::20]
    return float(np.abs(apply(poses[c.i] @ c.pose, pts) - apply(poses[c.j], pts)).max())
