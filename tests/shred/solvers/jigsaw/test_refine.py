from __future__ import annotations

import numpy as np

from shredfold.shred.solvers.jigsaw.geometry import apply, rigid
from shredfold.shred.solvers.jigsaw.refine import refine
from shredfold.shred.solvers.jigsaw.sides import Side

SIZE = 100.0  # px: a 3 x 3 grid of square pieces, cut by jagged lines between them
GRID = 3


def _cut(vertical: bool, at: float, start: float, phase: float) -> np.ndarray:
    """A jagged cut (3 px, as the cutter makes) between two neighbours, 1 px apart."""
    u = np.arange(start, start + SIZE + 0.5)
    w = at + 3.0 * np.sin(u / 7.0 + phase) + 1.5 * np.sin(u / 3.1 + 2 * phase)
    return np.column_stack([w, u] if vertical else [u, w])


def grid_links() -> list[tuple[Side, Side]]:
    """Every shared cut of the grid as a matched side pair, in page coordinates (each
    piece's frame is the page's: its true pose is the identity)."""
    links = []
    for r in range(GRID):
        for c in range(GRID):
            m = r * GRID + c
            for dr, dc in ((0, 1), (1, 0)):
                if r + dr >= GRID or c + dc >= GRID:
                    continue
                k = (r + dr) * GRID + c + dc
                vertical = dc == 1
                at = (c + 1) * SIZE if vertical else (r + 1) * SIZE
                start = r * SIZE if vertical else c * SIZE
                pts = _cut(vertical, at, start, phase=0.7 * m + 0.3 * k)
                links.append((Side(m, len(links), 0, pts, False),
                              Side(k, len(links), 0, pts[::-1].copy(), False)))
    return links


def corners(m: int) -> np.ndarray:
    r, c = divmod(m, GRID)
    x, y = c * SIZE, r * SIZE
    return np.array([[x, y], [x + SIZE, y], [x + SIZE, y + SIZE], [x, y + SIZE]])


def test_a_block_of_pieces_turned_together_is_turned_back_by_the_joint_refinement() -> None:
    # The right-hand column laid 0.6 degrees off as one block (a short join's error that
    # every later join inherited): inside the block the links agree, and only the three
    # across its rim say otherwise. Refined piece by piece, the block hardly moved.
    links = grid_links()
    block = rigid(np.deg2rad(0.6), 0.0, 0.0)
    pivot = np.array([2.5 * SIZE, 1.5 * SIZE])
    block[:2, 2] = pivot - block[:2, :2] @ pivot + (0.8, -1.2)
    poses = [block.copy() if m % GRID == GRID - 1 else np.eye(3) for m in range(GRID * GRID)]
    refined = refine(poses, list(range(GRID * GRID)), links, rounds=10, anchor=4)
    for m in range(GRID * GRID):
        off = np.abs(apply(refined[m], corners(m)) - corners(m)).max()
        assert off < 0.2, (m, off)


def test_refinement_leaves_a_layout_that_fits_where_it_is_and_pieces_outside_alone() -> None:
    links = grid_links()
    shift = rigid(np.deg2rad(3.0), 40.0, -25.0)  # the whole page turned: nothing to fix
    poses = [shift.copy() for _ in range(GRID * GRID)]
    poses.append(rigid(1.0, 7.0, 9.0))  # piece 9, in no link
    refined = refine(poses, list(range(GRID * GRID)), links, rounds=10, anchor=0)
    for m in range(GRID * GRID):
        assert np.abs(refined[m] - shift).max() < 1e-6
    assert np.array_equal(refined[9], poses[9])
