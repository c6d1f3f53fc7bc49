from __future__ import annotations

import numpy as np

from shredfold.jigsaw.assemble import PieceShape, assemble
from shredfold.jigsaw.contour import resample, signed_area
from shredfold.jigsaw.match import Candidate
from shredfold.jigsaw.sides import split_sides

# The shared cut between two pieces of a page: x = 100, jagged by 3 px (as the cutter does).
CUT_Y = np.arange(0.0, 101.0)
CUT_X = 100.0 + 3.0 * np.sin(CUT_Y / 7.0)


def shape(corners: list[tuple[float, float]], cut: np.ndarray, piece: int) -> PieceShape:
    """A piece whose ring runs through ``corners`` with the jagged ``cut`` spliced in."""
    ring = np.vstack([np.asarray(corners, dtype=np.float64), cut])
    ring = resample(ring)
    if signed_area(ring) < 0:
        ring = ring[::-1].copy()
    return PieceShape(ring, split_sides(ring, piece))


def pair(tilt_deg: float, lift: float = 0.0) -> tuple[list[PieceShape], list[Candidate]]:
    """Left piece A (page top edge at y = 0) and right piece B, already in A's frame, whose
    top edge is tilted by ``tilt_deg`` (a curled sheet's edge) and raised by ``lift``."""
    cut = np.column_stack([CUT_X, CUT_Y])
    a = shape([(0.0, 100.0), (0.0, 0.0)], cut, 0)
    rise = 100.0 * np.tan(np.deg2rad(tilt_deg))
    b_cut = cut - [0.0, lift]
    b = shape([(200.0, -rise - lift), (200.0, 100.0 - lift)], b_cut[::-1], 1)
    side_a = next(s.index for s in a.sides if not s.border)
    side_b = next(s.index for s in b.sides if not s.border)
    pose = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    return [a, b], [Candidate(0, side_a, 1, side_b, pose, 0.3, 1.0, 100.0)]


def test_a_curled_edge_is_rejected_by_the_strict_border_check_and_joined_by_the_wider() -> None:
    assert assemble(*pair(tilt_deg=0.0)).clusters() == [[0, 1]]
    shapes, cands = pair(tilt_deg=2.0)  # past BORDER_ANGLE_DEG, within twice it
    strict = assemble(shapes, cands)
    assert strict.clusters() == [[0], [1]]
    assert [why for _, why in strict.rejected] == ["border"]
    assert assemble(shapes, cands, border_slack=2.0).clusters() == [[0, 1]]


def test_a_piece_far_across_the_page_edge_stays_apart_even_under_the_widest_check() -> None:
    shapes, cands = pair(tilt_deg=0.0, lift=30.0)  # B sticks out 30 px above the page
    assert assemble(shapes, cands, border_slack=3.0).clusters() == [[0], [1]]
