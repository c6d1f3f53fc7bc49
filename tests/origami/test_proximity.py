"""The compiled proximity queries answer exactly as the library calls they replace."""

import numpy as np
import pytest
import shapely
from scipy.spatial import cKDTree

from shredfold.origami.graph import component_labels
from shredfold.origami.proximity import (
    cluster_points,
    first_equal_rows,
    overlapping_boxes,
    points_near_segments,
    smallest_gap,
)


def reference_clusters(points: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """Copies on the eps grid are one point; representatives within 2 eps (cKDTree) join;
    clusters numbered by their first member."""
    n = len(points)
    cells = np.floor(points / eps).astype(np.int64)
    _, rep_first, inverse = np.unique(cells, axis=0, return_index=True, return_inverse=True)
    pairs = cKDTree(points[rep_first]).query_pairs(2 * eps, output_type="ndarray")
    label = component_labels(len(rep_first), pairs[:, 0], pairs[:, 1])[inverse.ravel()]
    first = np.full(label.max() + 1, n)
    np.minimum.at(first, label, np.arange(n))
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return rank[label], first[order]


def reference_near(points: np.ndarray, seg: np.ndarray, eps: float) -> set[tuple[int, int]]:
    tree = shapely.STRtree(shapely.linestrings(seg))
    pv, ps = tree.query(shapely.points(points), predicate="dwithin", distance=eps)
    return set(zip(pv.tolist(), ps.tolist(), strict=True))


def test_a_chain_of_near_points_is_one_cluster_numbered_by_its_first_member():
    eps = 0.25
    points = np.array([[5.0, 5.0], [0.0, 0.0], [0.45, 0.0], [0.9, 0.0], [0.9, 0.01]])
    vid, first = cluster_points(points, eps)
    # 0.45 apart is within 2 eps: the chain 0 - 0.45 - 0.9 joins however far its ends are
    assert vid.tolist() == [0, 1, 1, 1, 1]
    assert first.tolist() == [0, 1]


def test_points_exactly_two_eps_apart_join_and_just_beyond_do_not():
    eps = 0.25
    at = np.array([[0.0, 0.0], [0.5, 0.0]])
    beyond = np.array([[0.0, 0.0], [np.nextafter(0.5, 1.0), 0.0]])
    assert cluster_points(at, eps)[0].tolist() == [0, 0]
    assert cluster_points(beyond, eps)[0].tolist() == [0, 1]


@pytest.mark.parametrize("seed", range(6))
def test_clusters_match_cKDTree_on_noisy_lattices(seed):
    rng = np.random.default_rng(seed)
    eps = 10.0 ** rng.uniform(-9, -3)
    centres = rng.random((40, 2))
    points = np.concatenate(
        [
            centres[rng.integers(0, 40, 300)] + rng.normal(0, eps, (300, 2)),
            0.3 + rng.integers(0, 6, (200, 2)) * (2 * eps),  # spaced exactly at the limit
            centres + 2 * eps * np.stack([np.cos(a := rng.random(40) * 7), np.sin(a)], 1),
        ]
    )
    vid, first = cluster_points(points, eps)
    ref_vid, ref_first = reference_clusters(points, eps)
    assert vid.tolist() == ref_vid.tolist()
    assert first.tolist() == ref_first.tolist()


def test_first_equal_rows_points_each_row_at_its_first_copy():
    keys = np.array([[1, 2], [3, 4], [1, 2], [3, 5], [3, 4], [1, 2]], np.int64)
    assert first_equal_rows(keys).tolist() == [0, 1, 0, 3, 1, 0]


def test_a_point_exactly_eps_from_a_segment_is_near_it():
    seg = np.array([[[0.0, 0.0], [1.0, 0.0]], [[0.0, 1.0], [0.0, 2.0]]])
    points = np.array([[0.5, 0.25], [0.5, np.nextafter(0.25, 1.0)], [1.25, 0.0], [-0.25, 1.5]])
    pv, ps = points_near_segments(points, seg, 0.25)
    assert list(zip(pv.tolist(), ps.tolist(), strict=True)) == [(0, 0), (2, 0), (3, 1)]


@pytest.mark.parametrize("seed", range(6))
def test_points_near_segments_match_geos_at_the_margin(seed):
    rng = np.random.default_rng(seed)
    eps = 10.0 ** rng.uniform(-8, -2)
    a = rng.random((150, 2))
    b = a + rng.normal(0, 0.3, (150, 2))
    b[:40, 1] = a[:40, 1]  # horizontal
    b[40:80, 0] = a[40:80, 0]  # vertical
    seg = np.stack([a, b], 1)
    d = b - a
    normal = np.stack([-d[:, 1], d[:, 0]], 1) / np.hypot(d[:, 0], d[:, 1])[:, None]
    on = a + rng.random(150)[:, None] * d
    points = np.concatenate(
        [on, on + eps * normal, on - eps * normal, a - [eps, 0], b + [0, eps], b + eps / np.sqrt(2), rng.random((60, 2))]
    )
    pv, ps = points_near_segments(points, seg, eps)
    assert (np.diff(pv) >= 0).all()  # ordered by point, as shapely's query
    found = set(zip(pv.tolist(), ps.tolist(), strict=True))
    assert len(found) == len(pv)
    assert found == reference_near(points, seg, eps)


def test_boxes_that_only_touch_overlap():
    lo = np.array([[0.0, 0.0], [1.0, 0.0], [2.5, 0.0], [0.0, 1.0]])
    hi = np.array([[1.0, 1.0], [2.0, 1.0], [3.0, 1.0], [1.0, 2.0]])
    i, j = overlapping_boxes(lo, hi)
    assert list(zip(i.tolist(), j.tolist(), strict=True)) == [(0, 1), (0, 3), (1, 3)]


@pytest.mark.parametrize("seed", range(4))
def test_overlapping_boxes_match_an_all_pairs_check(seed):
    rng = np.random.default_rng(seed)
    lo = np.round(rng.random((200, 2)) * 16) / 16
    hi = lo + np.round(rng.random((200, 2)) * 4) / 16
    i, j = overlapping_boxes(lo, hi)
    meet = (
        (lo[None, :, 0] <= hi[:, None, 0])
        & (hi[None, :, 0] >= lo[:, None, 0])
        & (lo[None, :, 1] <= hi[:, None, 1])
        & (hi[None, :, 1] >= lo[:, None, 1])
    )
    ref_i, ref_j = np.nonzero(np.triu(meet, 1))
    assert i.tolist() == ref_i.tolist()
    assert j.tolist() == ref_j.tolist()


def test_identical_and_zero_size_boxes_all_meet():
    lo = np.array([[0.5, 0.5]] * 4)
    i, j = overlapping_boxes(lo, lo.copy())
    assert list(zip(i.tolist(), j.tolist(), strict=True)) == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]


def reference_gap(points: np.ndarray, t: float) -> float:
    """What the pattern's tolerance read from cKDTree: each point's nearest neighbours
    (itself included, at most 8), the first dropped, those above t."""
    k = min(len(points), 8)
    dist = np.asarray(cKDTree(points).query(points, k=k)[0]).reshape(len(points), -1)[:, 1:]
    above = dist[dist > t]
    return float(above.min()) if above.size else np.inf


def test_a_point_with_eight_copies_sees_no_neighbour_but_its_neighbour_sees_it():
    crowd = np.repeat([[0.0, 0.0]], 8, axis=0)
    # the crowd's own lists hold only copies; the lone point's list reaches the crowd
    assert smallest_gap(np.concatenate([crowd, [[3.0, 4.0]]]), 1e-9, 8) == 5.0
    assert smallest_gap(np.concatenate([crowd, crowd + [3.0, 4.0]]), 1e-9, 8) == np.inf
    assert smallest_gap(np.concatenate([crowd[:7], crowd[:7] + [3.0, 4.0]]), 1e-9, 8) == 5.0


@pytest.mark.parametrize("seed", range(8))
def test_smallest_gap_reads_what_cKDTree_lists(seed):
    rng = np.random.default_rng(seed)
    base = rng.random((40, 2)) * 10.0 ** rng.uniform(-6, 6)
    points = np.repeat(base, rng.integers(1, 12, 40), axis=0)
    points[::3] += rng.normal(0, 1e-12, points[::3].shape) * np.abs(points).max()
    if seed % 2:
        points[:, 0] = np.round(points[:, 0] * 4) / 4  # many points on one vertical
    t = 64e-11 * np.ptp(points, axis=0).max()
    assert smallest_gap(points, t, min(len(points), 8)) == reference_gap(points, t)
