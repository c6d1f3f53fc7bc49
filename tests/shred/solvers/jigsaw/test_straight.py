"""Straight edges of a scrap's outline: the cut edges, carried on to their vertices under a
bulging curled corner."""

from __future__ import annotations

import numpy as np

from shredfold.shred.solvers.jigsaw.contour import paper_outline
from shredfold.shred.solvers.jigsaw.straight import straight_edges

# A convex pentagon (x right, y down), as a Voronoi cut makes them.
PENTAGON = np.array([[60, 40], [300, 60], [340, 220], [180, 330], [40, 230]], float)


def outline(with_bulge: bool) -> np.ndarray:
    import cv2

    mask = np.zeros((400, 420), np.uint8)
    cv2.fillPoly(mask, [np.rint(PENTAGON * 4).astype(np.int32)], 255, shift=2)
    if with_bulge:
        # A curled corner: a smooth blob of bare paper over the vertex at (340, 220).
        cv2.circle(mask, (352, 222), 22, 255, -1)
    return paper_outline(np.dstack([mask, mask, mask, mask]))


def sides() -> list[tuple[np.ndarray, np.ndarray]]:
    return [(PENTAGON[k], PENTAGON[(k + 1) % 5]) for k in range(5)]


def nearest_side(p0: np.ndarray, p1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    def gap(s: tuple[np.ndarray, np.ndarray]) -> float:
        return float(np.hypot(*(s[0] - p0)) + np.hypot(*(s[1] - p1)))

    return min(sides(), key=gap)


def test_every_side_of_a_cut_polygon_is_a_straight_edge_from_vertex_to_vertex() -> None:
    edges = straight_edges(outline(with_bulge=False), min_length=40)
    assert len(edges) == 5
    for e in edges:
        a, b = nearest_side(e.p0, e.p1)
        assert np.hypot(*(e.p0 - a)) < 2.5 and np.hypot(*(e.p1 - b)) < 2.5
        assert e.corner0 and e.corner1
        # Paper lies to the left of travel: the outward normal points away from the middle.
        assert (e.p0 - PENTAGON.mean(axis=0)) @ e.normal > 0


def test_a_bulge_over_a_vertex_hides_it_but_the_two_edges_still_meet_there() -> None:
    edges = straight_edges(outline(with_bulge=True), min_length=40)
    assert len(edges) == 5
    hidden = PENTAGON[2]
    ends = [e.p1 for e in edges] + [e.p0 for e in edges]
    # Both edges around the bulged vertex reach it (their runs stop ~20 px short of it).
    assert sum(np.hypot(*(p - hidden)) < 3.0 for p in ends) == 2
