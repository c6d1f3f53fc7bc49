"""Where two levelled scraps meet, and how far one slides along the other."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from shredfold.shred.solvers.jigsaw.level import Levelled
from shredfold.shred.solvers.jigsaw.seam import match
from shredfold.shred.solvers.jigsaw.straight import Edge

PITCH = 20.0


def lined(index: int, edge: Edge, height: int = 400, width: int = 120) -> Levelled:
    """Paper ``width`` x ``height`` px printed with a line of text every pitch (code, whose
    rows look alike: a seam correlates as well any whole number of lines off)."""
    paper = np.ones((height, width), np.float32)
    ink = np.zeros_like(paper)
    for top in range(6, height, int(PITCH)):
        ink[top : top + 8] = 0.6
    return Levelled(index, 0, np.eye(3), paper, ink, [edge], 1.0, False)


def test_two_halves_of_one_cut_share_it_whole() -> None:
    # The cut runs down the right side of one scrap and the left of the other, both ends
    # faded into curls (no corners): the text alone fits any whole number of lines off.
    left = lined(0, Edge(np.array([120.0, 0.0]), np.array([120.0, 400.0]), 0.0, False, False))
    right = lined(1, Edge(np.array([0.0, 400.0]), np.array([0.0, 0.0]), 0.0, False, False))
    seam = match(left, right, 0, 0, PITCH)
    assert seam is not None
    assert abs(seam.pose[0, 2] - 120.0) < 1.5
    # Not half the cut and ten lines off: within the one line a curled corner may leave.
    assert abs(seam.pose[1, 2]) <= PITCH + 1.0
    assert seam.shared >= 400.0 - PITCH - 1.0


def test_a_scrap_of_a_speck_or_two_slides_no_seam_by_its_text() -> None:
    lines = lined(0, Edge(np.array([120.0, 0.0]), np.array([120.0, 400.0]), 0.0, False, False))
    paper = np.ones((400, 120), np.float32)
    specks = np.zeros_like(paper)
    specks[106:114, 2:8] = 0.6  # a glyph's edge by the cut, and one more
    specks[206:214, 2:8] = 0.6
    # It shows no lines: levelled either way round (``across``).
    blank = Levelled(1, 0, np.eye(3), paper, specks,
                     [Edge(np.array([0.0, 400.0]), np.array([0.0, 0.0]), 0.0, False, False)], 0.0, True)
    seam = match(lines, blank, 0, 0, PITCH)
    assert seam is not None and seam.score <= 0.0
    # The same specks on a scrap whose lines were read do slide it.
    read = match(lines, replace(blank, across=False), 0, 0, PITCH)
    assert read is not None and read.score > 0.2


def table_rows(height: int) -> tuple[Levelled, Levelled]:
    """Two scraps of a table cut down the middle, ``height`` px tall: text in the cells
    either side, bare paper for 1.5 line pitches on both sides of the cut. Rows are filled
    irregularly, so only one slide fits them."""
    rows = [0, 1, 3, 4, 5, 8, 9, 11, 14, 15, 16]
    paper = np.ones((height, 120), np.float32)
    ink_left, ink_right = np.zeros_like(paper), np.zeros_like(paper)
    for r in rows:
        top = 10 + int(r * PITCH)
        ink_left[top : top + 8, 5:90] = 0.6
        ink_right[top : top + 8, 30:115] = 0.6
    edge_left = Edge(np.array([120.0, 0.0]), np.array([120.0, float(height)]), 0.0, False, False)
    edge_right = Edge(np.array([0.0, float(height)]), np.array([0.0, 0.0]), 0.0, False, False)
    left = Levelled(0, 0, np.eye(3), paper, ink_left, [edge_left], 1.0, False)
    right = Levelled(1, 0, np.eye(3), paper, ink_right, [edge_right], 1.0, False)
    return left, right


def test_a_cut_through_bare_paper_slides_by_the_rows_beside_it() -> None:
    seam = match(*table_rows(400), 0, 0, PITCH)
    assert seam is not None
    assert abs(seam.pose[1, 2]) <= 1.0
    assert seam.score > 0.4


def test_rows_beside_a_short_cut_say_less_than_beside_a_long_one() -> None:
    # Rows repeat more than the strokes at a seam do: four pitches of them are half the
    # evidence that sixteen are.
    long = match(*table_rows(400), 0, 0, PITCH)
    short = match(*table_rows(int(4 * PITCH)), 0, 0, PITCH)
    assert long is not None and short is not None
    assert abs(short.pose[1, 2]) <= 1.0
    assert 0.0 < short.score <= 0.55 * long.score


def bare_pair(turn_deg: float) -> tuple[Levelled, Levelled]:
    """Two scraps meeting along a 100 px cut through bare paper, both ends corners, the
    second's edge lying ``turn_deg`` from antiparallel to the first's."""
    paper = np.ones((100, 120), np.float32)
    left = Levelled(0, 0, np.eye(3), paper, np.zeros_like(paper),
                    [Edge(np.array([120.0, 0.0]), np.array([120.0, 100.0]), 0.0, True, True)], 1.0, False)
    t = np.deg2rad(turn_deg)
    half = 50.0 * np.array([np.sin(t), np.cos(t)])  # from the middle towards p0 (down)
    mid = np.array([0.0, 50.0])
    edge = Edge(mid + half, mid - half, 0.0, True, True)
    right = Levelled(1, 0, np.eye(3), paper, np.zeros_like(paper), [edge], 1.0, False)
    return left, right


def test_a_cut_fitted_by_its_corners_alone_must_lie_straight() -> None:
    # Nothing but the corners fits it: within a degree it is one cut (two scraps levelled
    # by their lines lie that close), two degrees out two short edges of a length met.
    straight = match(*bare_pair(0.5), 0, 0, PITCH)
    assert straight is not None and straight.text == 0.0
    assert straight.score > 0.3 and abs(straight.pose[1, 2]) <= 1.0
    assert match(*bare_pair(2.0), 0, 0, PITCH) is None


def test_a_cut_the_text_fits_may_lie_a_little_further_out() -> None:
    # The same two degrees out, with lines crossing the cut: the text fits it.
    left, right = bare_pair(2.0)
    for lv in (left, right):
        for top in range(6, 100, int(PITCH)):
            lv.ink[top : top + 8] = 0.6
    seam = match(left, right, 0, 0, PITCH)
    assert seam is not None and seam.text > 0.5


def cut_across(tilt_deg: float, drop: int = 37) -> tuple[Levelled, Levelled]:
    """A page of lines of words of many lengths cut along a line ``tilt_deg`` off the text
    lines; the part below the cut lies in a frame ``drop`` px lower than the part above."""
    h, w = 360, 400
    rng = np.random.default_rng(3)
    ink = np.zeros((h, w), np.float32)
    for top in range(6, h, int(PITCH)):
        x = int(rng.integers(0, 30))
        while x < w:
            word = int(rng.integers(8, 40))
            ink[top : top + 9, x : x + word] = 0.6
            x += word + int(rng.integers(6, 16))
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    slope, y0 = np.tan(np.deg2rad(tilt_deg)), 150.0
    above = ((yy + 0.5) < y0 + slope * (xx + 0.5)).astype(np.float32)
    top_part = Levelled(0, 0, np.eye(3), above, ink * above,
                        [Edge(np.array([w, y0 + slope * w]), np.array([0.0, y0]), 0.0, False, False)],
                        1.0, False)
    paper, lower_ink = np.zeros_like(ink), np.zeros_like(ink)
    paper[drop:] = (1.0 - above)[: h - drop]
    lower_ink[drop:] = (ink * (1.0 - above))[: h - drop]
    edge = Edge(np.array([0.0, y0 + drop]), np.array([w, y0 + slope * w + drop]), 0.0, False, False)
    return top_part, Levelled(1, 0, np.eye(3), paper, lower_ink, [edge], 1.0, False)


def test_a_cut_17_degrees_off_the_lines_is_slid_by_the_lines_it_crosses() -> None:
    # It crosses a line every three or four pitches: sampled square to the cut, each
    # crossing shows shifted by the band's slant (the slide came out 12 px along).
    seam = match(*cut_across(17.0), 0, 0, PITCH)
    assert seam is not None
    assert np.allclose(seam.pose[:2, 2], [0.0, -37.0], atol=1.0), seam.pose
