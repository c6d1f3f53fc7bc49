"""Surfaces: the requested colour with a mild tint and grain, reproducible from the seed."""

from __future__ import annotations

import numpy as np

from shredfold.shred.texture import surface


def test_surface_is_the_colour_with_mild_variation() -> None:
    px = surface(300, 200, (246, 243, 236), 0.35, np.random.default_rng(0))
    assert px.shape == (200, 300, 3) and px.dtype == np.uint8
    assert np.abs(px.reshape(-1, 3).mean(axis=0) - (246, 243, 236)).max() < 2
    assert 0.5 < px.std() < 8


def test_surface_is_reproducible_and_seeded() -> None:
    a = surface(257, 131, (92, 74, 58), 1.0, np.random.default_rng(1), grain=0.0, speckle=3.0)
    b = surface(257, 131, (92, 74, 58), 1.0, np.random.default_rng(1), grain=0.0, speckle=3.0)
    c = surface(257, 131, (92, 74, 58), 1.0, np.random.default_rng(2), grain=0.0, speckle=3.0)
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_zero_strength_is_flat() -> None:
    px = surface(50, 40, (1, 2, 3), 0.0, np.random.default_rng(0))
    assert (px == (1, 2, 3)).all()
