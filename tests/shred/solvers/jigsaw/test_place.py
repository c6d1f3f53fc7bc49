"""Merges of levelled scraps refused where the page could not hold them."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from shredfold.shred.solvers.jigsaw.geometry import rigid
from shredfold.shred.solvers.jigsaw.level import Levelled
from shredfold.shred.solvers.jigsaw.photo import border_edges, page_edges
from shredfold.shred.solvers.jigsaw.place import place
from shredfold.shred.solvers.jigsaw.seam import Seam
from shredfold.shred.solvers.jigsaw.straight import Edge


def square(index: int, up: int | None = None) -> Levelled:
    """A 40 px square of paper on a 44 px frame, levelled as it is."""
    paper = np.zeros((44, 44), np.float32)
    paper[2:42, 2:42] = 1.0
    return Levelled(index, 0, np.eye(3), paper, np.zeros_like(paper), [], 1.0, False, up)


def join(i: int, j: int, dx: float, score: float = 1.0, turn: int = 0) -> Seam:
    """Scrap ``j`` put ``dx`` px right of scrap ``i`` (``turn`` quarter turns round first)."""
    pose = np.eye(3)
    pose[0, 2] = dx
    return Seam(i, j, turn, 0, 0, pose, score, score, 40.0)


def seam(dx: float, turn: int = 0) -> Seam:
    """Scrap 1 put ``dx`` px right of scrap 0 (``turn`` quarter turns round first)."""
    return join(0, 1, dx, turn=turn)


def test_scraps_side_by_side_are_joined() -> None:
    placed = place([square(0), square(1)], [seam(40.0)])
    assert placed.clusters() == [[0, 1]] and not placed.rejected


def test_a_join_that_would_reach_past_the_page_is_refused() -> None:
    # Far apart: the pair's box would hold five times the paper of both.
    placed = place([square(0), square(1)], [seam(400.0)])
    assert placed.clusters() == [[0], [1]]
    assert [why for _, why in placed.rejected] == ["past the page"]


def test_a_scrap_read_upright_is_not_joined_upside_down() -> None:
    placed = place([square(0, up=0), square(1, up=0)], [seam(40.0, turn=2)])
    assert [why for _, why in placed.rejected] == ["upside down"]
    # Not read: the same join is made.
    assert place([square(0, up=0), square(1)], [seam(40.0, turn=2)]).clusters() == [[0, 1]]


def test_a_scraps_way_up_follows_its_pose() -> None:
    lv = square(0, up=2)
    assert lv.way_up(np.eye(3)) == 2 and lv.way_up(rigid(np.pi)) == 0
    assert replace(lv, up=None).way_up(np.eye(3)) is None


def test_an_edge_with_text_up_to_it_is_a_cut_not_the_pages() -> None:
    paper = np.ones((200, 300), np.float32)
    ink = np.zeros_like(paper)
    for top in range(20, 180, 30):  # lines of text from a 40 px margin to the right side
        ink[top : top + 10, 40:300] = 0.5
    lv = Levelled(0, 0, np.eye(3), paper, ink, [
        Edge(np.array([0.0, 200.0]), np.array([0.0, 0.0]), 0.1, True, True),  # left: margin
        Edge(np.array([300.0, 0.0]), np.array([300.0, 200.0]), 0.1, True, True),  # right: text
    ], 1.0, False)
    assert [e.p0[0] for e in border_edges(lv, pitch=30.0)] == [0.0]


def test_long_edges_square_to_the_lines_may_be_the_pages() -> None:
    lv = replace(square(3), edges=[
        Edge(np.array([0.0, 0.0]), np.array([200.0, 1.0]), 0.1, True, True),  # level, long
        Edge(np.array([0.0, 0.0]), np.array([2.0, 150.0]), 0.1, True, True),  # upright, long
        Edge(np.array([0.0, 0.0]), np.array([200.0, 40.0]), 0.1, True, True),  # a slanted cut
        Edge(np.array([0.0, 0.0]), np.array([60.0, 0.0]), 0.1, True, True),  # too short
    ])
    sides = page_edges(lv, pitch=30.0)
    assert [s.border for s in sides] == [True, True]
    assert np.allclose(sides[0].points, [[0.0, 0.0], [200.0, 1.0]])


def test_scraps_lying_a_tenth_on_each_other_are_joined_a_seventh_not() -> None:
    # A curled rim, or a neighbour joined a few px off, lays a merge's scraps a little on
    # each other: a tenth of the smaller one's core is let through, a seventh is not.
    near = place([square(0), square(1)], [seam(25.0)])
    assert near.clusters() == [[0, 1]] and not near.rejected
    far = place([square(0), square(1)], [seam(24.0)])
    assert far.clusters() == [[0], [1]]
    assert [why for _, why in far.rejected] == ["overlap 0.143"]


def test_a_strong_wrong_join_blocking_two_true_ones_is_struck_off() -> None:
    # The page: 0, 2, 1 side by side. A table's rows repeat: one seam puts 1 next to 0,
    # where 2 belongs, more strongly than either true seam, and then both are refused.
    seams = [join(0, 1, 40.0, 0.5), join(0, 2, 40.0, 0.35), join(2, 1, 40.0, 0.3)]
    placed = place([square(0), square(1), square(2)], seams)
    assert placed.clusters() == [[0, 1, 2]]
    assert [(s.i, s.j) for s in placed.joins] == [(0, 2), (2, 1)]
    assert placed.support == [0.35, 0.3]
    assert np.allclose(np.linalg.inv(placed.poses[0]) @ placed.poses[1] @ [0, 0, 1], [80, 0, 1])


def test_a_strong_join_is_kept_where_striking_it_gains_less() -> None:
    # The same, but the true seams together hold less than the wrong one: kept.
    seams = [join(0, 1, 40.0, 0.7), join(0, 2, 40.0, 0.35), join(2, 1, 40.0, 0.3)]
    placed = place([square(0), square(1), square(2)], seams)
    assert [(s.i, s.j) for s in placed.joins] == [(0, 1)]
    assert placed.clusters() == [[0, 1], [2]]
