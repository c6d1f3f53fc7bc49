"""Sub-pixel edges: the alpha across a cut edge puts the edge where it is, ink or not."""

from __future__ import annotations

import cv2
import numpy as np

from shredfold.shred.solvers.jigsaw.edge import edge_alpha

TABLE = np.array([92.0, 74.0, 58.0])
PAPER = np.array([240.0, 238.0, 230.0])
INK = np.array([24.0, 24.0, 28.0])
EDGE = 30.3  # x of the cut (pixel corners at integers); paper to the right


def straight_edge(ink_rows: slice | None = None) -> tuple[np.ndarray, ...]:
    h, w = 60, 64
    cover = np.clip(np.arange(w) + 1.0 - EDGE, 0.0, 1.0)[None, :].repeat(h, axis=0)
    paper = np.broadcast_to(PAPER, (h, w, 3)).copy()
    if ink_rows is not None:
        paper[ink_rows, :46] = INK  # a stroke crossing the tear
    img = cover[..., None] * paper + (1.0 - cover[..., None]) * TABLE
    img += 1.5 * np.random.default_rng(0).standard_normal(img.shape)
    img = np.clip(img, 0, 255).astype(np.float32)
    filled = cover >= 0.5
    near = cv2.dilate(filled.view(np.uint8), np.ones((5, 5), np.uint8)).astype(bool)
    plain_table = cover == 0.0
    given = np.zeros_like(filled)
    if ink_rows is not None:
        given[ink_rows] = filled[ink_rows]  # ink the table's colour, given to the scrap
    return img, filled, near, plain_table, given


def edge_per_row(alpha: np.ndarray) -> np.ndarray:
    """x of the edge in each row: the width not covered by paper."""
    return alpha.shape[1] - alpha.sum(axis=1)


def test_a_clean_edge_is_placed_to_a_tenth_of_a_pixel() -> None:
    alpha, colour = edge_alpha(*straight_edge())
    assert np.abs(edge_per_row(alpha) - EDGE).max() < 0.1
    # The edge pixel's colour is the paper's, not paper mixed with table.
    assert np.abs(colour[:, 30] - PAPER).max() < 12


def test_ink_crossing_the_edge_does_not_bite_into_it() -> None:
    rows = slice(24, 30)
    alpha, _ = edge_alpha(*straight_edge(rows))
    assert np.abs(edge_per_row(alpha)[rows] - EDGE).max() < 0.5
    assert np.abs(edge_per_row(alpha) - EDGE).max() < 0.5
