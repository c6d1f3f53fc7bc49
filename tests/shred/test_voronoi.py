"""The cut: n pieces that tile the page exactly, share their rough edges, no slivers."""

from __future__ import annotations

import hashlib
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from shapely import STRtree, line_merge, union_all
from shapely.geometry import LineString, Point

from shredfold.shred.voronoi import cut, jagged_edge, spread_seeds, uniform_seeds

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


def test_the_cut_of_a_seed_never_changes_silently() -> None:
    # Sample keys name SAMPLE_VERSION, not this code: a change that moves any piece must
    # bump SAMPLE_VERSION (shred/sample.py) and these digests together.
    def digest(n: int, seed: int, jagged: float) -> str:
        return hashlib.sha256(b"".join(p.wkb for p in _pieces(n, seed, jagged))).hexdigest()

    assert digest(12, 7, 3.0) == "c436a69db2249d6c1d55ae428599d236e84886f8a6b79fdd83b6fa0f2aeb4ab7"
    assert digest(5, 1, 0.0) == "b5bb3c0ec3042c6b3984abeb9db51eeb116e21ed7f13a69e8fcf1cb729790842"


def test_outline_coordinates_are_multiples_of_1_256() -> None:
    coords = np.concatenate([np.asarray(p.exterior.coords) for p in _pieces(12, 4, jagged=3.0)])
    assert np.all((coords * 256) == np.round(coords * 256))
    assert np.any((coords * 128) != np.round(coords * 128))  # not a coarser grid


def test_a_jagged_edge_has_a_point_every_6_px_within_the_amplitude() -> None:
    a, b = np.array([100.0, 200.0]), np.array([700.0, 200.0])  # 600 px, horizontal
    pts = jagged_edge(a, b, 4.0, np.random.default_rng(0))
    # k = 600 // 6 = 100 steps: the 99 interior points at x = 106, 112, ..., 694.
    assert pts.shape == (99, 2)
    assert np.allclose(pts[:, 0], 100.0 + 6.0 * np.arange(1, 100))
    offset = pts[:, 1] - 200.0
    assert np.abs(offset).max() <= 4.0 and np.abs(offset).max() > 2.0
    # The displacement fades out over 4 x amplitude = 16 px at both ends.
    assert np.abs(offset[[0, -1]]).max() < 0.6 * 4.0
    assert np.abs(offset[2:-2]).max() > np.abs(offset[[0, -1]]).max()


def test_short_or_flat_edges_stay_straight() -> None:
    rng = np.random.default_rng(0)
    a = np.array([0.0, 0.0])
    assert jagged_edge(a, np.array([31.0, 0.0]), 4.0, rng).shape == (0, 2)  # < 8 x amplitude
    assert jagged_edge(a, np.array([11.0, 0.0]), 0.1, rng).shape == (0, 2)  # fewer than 2 steps
    assert jagged_edge(a, np.array([300.0, 0.0]), 0.0, rng).shape == (0, 2)
    assert len(jagged_edge(a, np.array([33.0, 0.0]), 4.0, rng)) == 4  # 33 // 6 = 5 steps


def test_seeds_are_spread_evenly_inside_the_page() -> None:
    # Best-candidate sampling keeps seeds apart: over 20 seeds the closest pair of 16 is
    # never nearer than half the side of an average cell (0.62 measured; uniform random
    # seeds give 0.01, a single candidate per seed 0.24), and 0.72 of it on average.
    side = np.sqrt(W * H / 16)
    closest = []
    for seed in range(20):
        seeds = spread_seeds(W, H, 16, np.random.default_rng(seed))
        assert seeds.shape == (16, 2) and np.all((seeds > 0) & (seeds < (W, H)))
        closest.append(min(np.hypot(*(p - q)) for p, q in itertools.combinations(seeds, 2)) / side)
    assert min(closest) > 0.5 and np.mean(closest) > 0.65


def test_uniform_seeds_are_the_authors_draw_and_their_cells_tile_the_page():
    """The paper scene's cut: the ShredBench authors' cutter draws its seeds with
    ``np.random.rand(n, 2) * [w, h]``, nothing spread, and each seed gets its Voronoi cell."""
    seeds = uniform_seeds(W, H, 8, np.random.default_rng(5))
    assert np.array_equal(seeds, np.random.default_rng(5).random((8, 2)) * (W, H))
    polys = cut(W, H, 8, np.random.default_rng(5), 0.0, spread=False)
    assert all(p.contains(Point(s)) for p, s in zip(polys, seeds, strict=True))
    assert abs(sum(p.area for p in polys) - W * H) < 1e-6 and union_all(polys).area == pytest.approx(W * H)
    spread = cut(W, H, 8, np.random.default_rng(5), 0.0)
    assert [p.wkt for p in polys] != [p.wkt for p in spread]
    # Uneven, as chance makes them: the spread cut's smallest cell is larger than theirs
    # over these seeds (their cutter makes slivers that the spread cut avoids).
    smallest = [min(p.area for p in cut(W, H, 8, np.random.default_rng(s), 0.0, spread=sp))
                for sp in (False, True) for s in range(20)]
    assert np.median(smallest[:20]) < np.median(smallest[20:])
