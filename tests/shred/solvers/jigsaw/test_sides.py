from __future__ import annotations

import numpy as np
import pytest

from shredfold.shred.solvers.jigsaw.contour import paper_outline, signed_area
from shredfold.shred.solvers.jigsaw.geometry import apply, fit, rigid
from shredfold.shred.solvers.jigsaw.sides import split_sides


def rectangle_scrap(w: int = 300, h: int = 200, pad: int = 20) -> np.ndarray:
    rgba = np.zeros((h + 2 * pad, w + 2 * pad, 4), np.uint8)
    rgba[pad : pad + h, pad : pad + w] = 255
    return rgba


def test_outline_runs_with_the_paper_on_its_left() -> None:
    ring = paper_outline(rectangle_scrap())
    assert signed_area(ring) > 0
    steps = np.hypot(*np.diff(ring, axis=0).T)
    # Arc length is 1 px; chords that cut a corner are a little shorter.
    assert np.median(steps) == pytest.approx(1.0, abs=0.01) and steps.min() > 0.6


def test_a_rectangle_has_four_straight_border_sides() -> None:
    sides = split_sides(paper_outline(rectangle_scrap()))
    assert len(sides) == 4
    assert all(s.border for s in sides)
    lengths = sorted(s.length for s in sides)
    assert lengths == pytest.approx([199.5, 199.5, 299.5, 299.5], abs=1.0)


def test_fit_recovers_a_rigid_motion() -> None:
    rng = np.random.default_rng(0)
    pts = rng.uniform(0, 100, (30, 2))
    t = rigid(0.7, 12.0, -5.0)
    assert np.allclose(fit(pts, apply(t, pts)), t)
