"""The cut: n pieces that tile the page exactly, share their rough edges, no slivers."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from shapely import STRtree, line_merge, union_all
from shapely.geometry import LineString

from shredfold.shred.voronoi import cut

W, H = 800, 1100


def _pieces(n: int, seed: int, jagged: float = 3.0) -> list:
    return cut(W, H, n, np.random.default_rng(seed), jagged)


def _neighbours(polys: list) -> list[tuple[int, int]]:
    tree = STRtree(polys)
    pairs = set()
    for i, p in enumerate(polys):
        for j in tree.query(p):
            if i < j:
                pairs.add((i, int(j)))
    return sorted(pairs)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 32), seed=st.integers(0, 2**32 - 1))
def test_pieces_cover_the_page_exactly_without_overlap(n: int, seed: int) -> None:
    polys = _pieces(n, seed)
    assert len(polys) == n
    assert all(p.is_valid for p in polys)
    assert sum(p.area for p in polys) == pytest.approx(W * H, rel=1e-9)
    assert union_all(polys).area == pytest.approx(W * H, rel=1e-9)
    for i, j in _neighbours(polys):
        assert polys[i].intersection(polys[j]).area < 1e-6


def test_one_piece_is_the_whole_page() -> None:
    (page,) = _pieces(1, 0)
    assert page.bounds == (0, 0, W, H)
    assert page.area == W * H


def test_same_seed_same_cut() -> None:
    a, b = _pieces(12, 7), _pieces(12, 7)
    assert [p.wkb for p in a] == [p.wkb for p in b]
    assert [p.wkb for p in a] != [p.wkb for p in _pieces(12, 8)]


def test_neighbours_share_the_identical_rough_edge() -> None:
    polys = _pieces(12, 3, jagged=3.0)
    rough = 0
    for i, j in _neighbours(polys):
        shared = line_merge(polys[i].boundary.intersection(polys[j].boundary))
        if shared.length == 0:  # touching at a corner only
            continue
        assert isinstance(shared, LineString)  # one unbroken shared edge
        # Both outlines run through the very same vertices along the shared edge.
        vi = {tuple(c) for c in polys[i].exterior.coords}
        vj = {tuple(c) for c in polys[j].exterior.coords}
        common = vi & vj
        assert len(common) >= 2
        assert len(common) == len(shared.coords)
        if shared.length > 100:
            ends = np.hypot(*np.subtract(shared.coords[0], shared.coords[-1]))
            rough += shared.length > ends * 1.001  # jagged, not straight
            assert len(common) > 10
    assert rough > 0


def test_page_border_stays_straight() -> None:
    polys = _pieces(12, 5)
    for p in polys:
        for x, y in p.exterior.coords:
            assert 0 <= x <= W and 0 <= y <= H
    border = union_all(polys).exterior
    assert len(border.simplify(0).coords) == 5  # a rectangle


@pytest.mark.parametrize("n", [8, 12, 16, 32])
def test_no_slivers(n: int) -> None:
    mean = W * H / n
    for seed in range(10):
        for p in _pieces(n, seed):
            assert p.area > 0.15 * mean
            assert 4 * np.pi * p.area / p.length**2 > 0.3  # compactness: not a thin strip


def test_jagged_zero_gives_convex_cells() -> None:
    for p in _pieces(12, 1, jagged=0.0):
        assert p.convex_hull.area == pytest.approx(p.area, rel=1e-9)


def test_rejects_zero_pieces() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        _pieces(0, 0)


def test_pairwise_checks_cover_all_pairs_for_small_n() -> None:
    # The neighbour query must not hide overlaps: for few pieces compare every pair.
    polys = _pieces(6, 11)
    for a, b in itertools.combinations(polys, 2):
        assert a.intersection(b).area < 1e-6
