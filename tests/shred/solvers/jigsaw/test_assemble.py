from __future__ import annotations

import numpy as np

from shredfold.shred.solvers.jigsaw.assemble import PieceShape, assemble
from shredfold.shred.solvers.jigsaw.contour import resample, signed_area
from shredfold.shred.solvers.jigsaw.geometry import apply
from shredfold.shred.solvers.jigsaw.match import Candidate
from shredfold.shred.solvers.jigsaw.sides import Side, split_sides

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


def _jag(u: np.ndarray) -> np.ndarray:
    return 3.0 * np.sin(np.pi * u / 25.0)  # 0 at both ends of a 100 px cut


def _square(piece: int, x: float, y: float, kinds: str) -> PieceShape:
    """A 100 px square piece at (x, y) of the page (its frame is the page's), sides top,
    right, bottom, left (positive area, y down), each ``B`` page edge, ``J`` a jagged cut
    (x or y of the page plus :func:`_jag`) or ``S`` a straight cut."""
    corners = np.array([[x, y], [x + 100.0, y], [x + 100.0, y + 100.0], [x, y + 100.0]])
    sides, ring = [], []
    for k, kind in enumerate(kinds):
        a, b = corners[k], corners[(k + 1) % 4]
        pts = a + np.linspace(0.0, 1.0, 101)[:, None] * (b - a)
        if kind == "J":
            across = 0 if k % 2 else 1  # a side running down is displaced in x
            pts[:, across] += _jag(pts[:, 1 - across] % 100.0)
        sides.append(Side(piece, k, 100 * k, pts, kind == "B"))
        ring.append(pts[:-1])
    return PieceShape(np.vstack(ring), sides)


def test_a_join_that_slid_along_its_side_is_put_back_by_the_loop_the_layout_closes() -> None:
    # A 2 x 2 page; the cut between pieces 1 and 3 is straight, the others jagged. Piece 3
    # joined to piece 1 slid 3.5 px along their straight side, which that side cannot
    # tell. The candidate joining 3 to 2 is off by as much, too far to count as support
    # when it comes up, but it is the side pair that truly meets, and the finished layout
    # confirms it within LOOP_PX.
    shapes = [
        _square(0, 0.0, 0.0, "BJJB"),
        _square(1, 100.0, 0.0, "BBSJ"),
        _square(2, 0.0, 100.0, "JJBB"),
        _square(3, 100.0, 100.0, "SBBJ"),
    ]
    slid = np.array([[1.0, 0.0, 3.5], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    cands = [
        Candidate(0, 1, 1, 3, np.eye(3), 0.1, 1.0, 100.0),
        Candidate(0, 2, 2, 0, np.eye(3), 0.1, 1.0, 100.0),
        Candidate(1, 2, 3, 0, slid, 0.2, 1.0, 100.0),
        Candidate(2, 1, 3, 3, np.eye(3), 0.3, 1.0, 100.0),
    ]
    asm = assemble(shapes, cands)
    assert asm.clusters() == [[0, 1, 2, 3]]
    assert len(asm.joins) == 3 and asm.support == []
    rel = np.linalg.inv(asm.poses[0]) @ asm.poses[3]  # true: the identity
    corners = shapes[3].outline[::100]
    assert np.abs(apply(rel, corners) - corners).max() < 0.3
