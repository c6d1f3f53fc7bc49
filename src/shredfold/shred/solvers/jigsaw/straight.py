"""The straight stretches of a scrap's outline: the cut edges a photograph shows reliably.

A scrap cut along straight lines (a Voronoi cell) and photographed as a curled sheet keeps
its interior cut edges straight, but not the rest of its outline: where the sheet curls,
the rim bulges out in smooth blobs of bare paper, and a page-border edge waves. So only
long, straight runs of the outline are trusted as sides to match. They are found by
Douglas-Peucker, kept where the points of a chord lie close to its fitted line, and
merged when two neighbours lie on one line (a bulge touching an edge in its middle).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

DP_TOLERANCE = 1.5  # px: Douglas-Peucker tolerance (a cut's staircase is ~1 px)
MIN_RUN = 20.0  # px: the shortest piece of outline that can be part of a straight edge
MAX_RMS = 1.0  # px: a run straighter than this about its fitted line is a cut edge
MERGE_ANGLE_DEG = 3.0  # two runs this parallel ...
MERGE_SLACK = 2.0  # ... whose points fit one line within this times the scatter allowed a
# single run are one edge: a curled sheet bends a long cut edge by a degree or two
CORNER_TURN_DEG = 25.0  # the outline turns at least this at a true corner
VERTEX_TURN_DEG = 15.0  # two edges meeting at a vertex turn at least this (and are no U)
VERTEX_REACH = 80.0  # px: an edge is carried on at most this far to its vertex ...
VERTEX_SLACK = 2.0  # px: ... which lies on the paper, give or take this


@dataclass(frozen=True)
class Edge:
    """A straight run of an outline, with paper on the left of travel from ``p0`` to ``p1``
    (x right, y down: the outward normal is ``(u_y, -u_x)``)."""

    p0: np.ndarray  # (2,) start, on the fitted line
    p1: np.ndarray  # (2,) end
    rms: float  # px: scatter of the run's points about the line
    corner0: bool  # the outline turns sharply at p0 (a vertex, not a fade into a bulge)
    corner1: bool

    @property
    def length(self) -> float:
        return float(np.hypot(*(self.p1 - self.p0)))

    @property
    def direction(self) -> np.ndarray:
        return (self.p1 - self.p0) / max(self.length, 1e-9)

    @property
    def normal(self) -> np.ndarray:
        """Unit normal pointing away from the paper."""
        u = self.direction
        return np.array([u[1], -u[0]])

    @property
    def angle(self) -> float:
        """Direction of travel, radians."""
        u = self.direction
        return float(np.arctan2(u[1], u[0]))

    def moved(self, t: np.ndarray) -> Edge:
        """The edge under the 3x3 rigid transform ``t``."""
        a = t[:2, :2] @ self.p0 + t[:2, 2]
        b = t[:2, :2] @ self.p1 + t[:2, 2]
        return Edge(a, b, self.rms, self.corner0, self.corner1)


def _line(points: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    c = points.mean(axis=0)
    _, s, vt = np.linalg.svd(points - c, full_matrices=False)
    rms = float(s[1] / np.sqrt(len(points))) if len(s) > 1 else 0.0
    return c, vt[0], rms


def _span(ring: np.ndarray, a: int, b: int) -> np.ndarray:
    n = len(ring)
    return ring[np.arange(a, a + ((b - a) % n or n) + 1) % n]


def straight_edges(ring: np.ndarray, min_length: float, max_rms: float = MAX_RMS) -> list[Edge]:
    """The straight runs at least ``min_length`` px long of a closed outline (paper on
    the left of travel: positive shoelace area with y down), in outline order; a run's
    points scatter at most ``max_rms`` px about its line (a little more once merged)."""
    n = len(ring)
    if n < 8:
        return []
    approx = cv2.approxPolyDP(ring.astype(np.float32).reshape(-1, 1, 2), DP_TOLERANCE, True)
    verts = approx.reshape(-1, 2).astype(np.float64)
    # approxPolyDP returns input points: recover their indices (in outline order).
    idx = sorted({int(np.argmin(np.hypot(*(ring - v).T))) for v in verts})
    if len(idx) < 2:
        return []
    runs: list[tuple[int, int]] = []
    for k, a in enumerate(idx):
        b = idx[(k + 1) % len(idx)]
        pts = _span(ring, a, b)
        # Short stretches (a nick, a wiggle of the rim) are gaps: the runs either side of
        # one may still be one edge.
        if len(pts) < 6 or np.hypot(*(pts[-1] - pts[0])) < max(0.5 * min_length, MIN_RUN):
            continue
        if _line(pts)[2] <= max_rms:
            runs.append((a, b))
    runs = _merge(ring, runs, MERGE_SLACK * max_rms)
    edges = []
    for a, b in runs:
        pts = _span(ring, a, b)
        c, u, rms = _line(pts)
        if np.dot(pts[-1] - pts[0], u) < 0:
            u = -u
        t = (pts - c) @ u
        p0, p1 = c + t.min() * u, c + t.max() * u
        if np.hypot(*(p1 - p0)) < min_length or rms > MERGE_SLACK * max_rms:
            continue
        edges.append(Edge(p0, p1, rms, _turns(ring, a, u, before=True),
                          _turns(ring, b, u, before=False)))
    return _vertices(edges, ring)


def _vertices(edges: list[Edge], ring: np.ndarray) -> list[Edge]:
    """Edges reaching on to the vertex they share with the next straight edge, where the
    two meet at a corner on the paper: a curled corner bulges over its vertex, and the
    runs stop short of it, but their lines still cross there. Where a short edge between
    the two was missed, their lines cross off the paper (the outline cuts that corner),
    and the ends stay as they are."""
    if len(edges) < 2:
        return edges
    contour = ring.astype(np.float32).reshape(-1, 1, 2)
    out = list(edges)
    for k in range(len(out)):
        e, f = out[k], out[(k + 1) % len(out)]
        turn = abs(float(np.degrees(np.arctan2(np.cross(e.direction, f.direction),
                                                  float(e.direction @ f.direction)))))
        if not VERTEX_TURN_DEG <= turn <= 180.0 - VERTEX_TURN_DEG:
            continue
        m = np.column_stack([e.direction, -f.direction])
        t = np.linalg.solve(m, f.p0 - e.p0)
        x = e.p0 + t[0] * e.direction
        ahead = float((x - e.p1) @ e.direction)
        behind = float((f.p0 - x) @ f.direction)
        if not (-VERTEX_SLACK <= ahead <= VERTEX_REACH and -VERTEX_SLACK <= behind <= VERTEX_REACH):
            continue
        if cv2.pointPolygonTest(contour, (float(x[0]), float(x[1])), True) < -VERTEX_SLACK:
            continue
        out[k] = Edge(e.p0, x, e.rms, e.corner0, True)
        out[(k + 1) % len(out)] = Edge(x, f.p1, f.rms, True, f.corner1)
    return out


def _merge(ring: np.ndarray, runs: list[tuple[int, int]], max_rms: float,
           ) -> list[tuple[int, int]]:
    """Neighbouring runs on one line joined (what lies between them, a bulge or a nick,
    is left out of neither fit: the joined run is refitted and kept only if straight)."""
    if len(runs) < 2:
        return runs
    out = [runs[0]]
    for a, b in runs[1:]:
        pa, pb = out[-1]
        if _collinear(ring, (pa, pb), (a, b), max_rms):
            out[-1] = (pa, b)
        else:
            out.append((a, b))
    if len(out) > 1 and _collinear(ring, out[-1], out[0], max_rms):
        out[0] = (out[-1][0], out[0][1])
        out.pop()
    return out


def _collinear(ring: np.ndarray, r: tuple[int, int], s: tuple[int, int], max_rms: float) -> bool:
    """Two runs lie on one line: nearly parallel, and their points together fit one line
    (a long cut edge that waves a little is split by Douglas-Peucker, and is one edge)."""
    one, two = _span(ring, *r), _span(ring, *s)
    _, u1, _ = _line(one)
    _, u2, _ = _line(two)
    if abs(float(u1 @ u2)) < np.cos(np.deg2rad(MERGE_ANGLE_DEG)):
        return False
    return _line(np.vstack([one, two]))[2] <= max_rms


def _turns(ring: np.ndarray, at: int, u: np.ndarray, *, before: bool) -> bool:
    """Whether the outline just beyond index ``at`` (before the run's start, or after its
    end) leaves the run's line at a corner's angle, straight away."""
    n = len(ring)
    steps = np.arange(4, 16)
    nxt = ring[(at - steps) % n] if before else ring[(at + steps) % n]
    d = nxt - ring[at]
    if before:
        d = -d
    along = d @ u
    across = np.abs(d @ np.array([-u[1], u[0]]))
    ang = np.degrees(np.arctan2(across, np.maximum(along, 1e-9)))
    return bool(np.median(ang) >= CORNER_TURN_DEG)
