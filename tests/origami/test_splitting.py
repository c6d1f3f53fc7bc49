"""Crossings of segment pairs and the edges left after cutting segments at their points."""

import numpy as np

from shredfold.origami.arrangement import arrange
from shredfold.origami.splitting import crossings, split_segments


def as_rays(seg: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a = seg[:, 0]
    d = seg[:, 1] - a
    return a, d, np.hypot(d[:, 0], d[:, 1])


def test_a_proper_crossing_is_found_and_parallel_or_distant_pairs_are_not():
    seg = np.array(
        [
            [[0.0, 0.0], [2.0, 2.0]],
            [[0.0, 2.0], [2.0, 0.0]],
            [[0.0, 0.5], [2.0, 2.5]],  # parallel to the first
            [[3.0, 0.0], [3.0, 1.0]],  # crosses nothing
            [[2.0, 2.0], [3.0, 1.0]],  # meets the first at its end
        ]
    )
    a, d, length = as_rays(seg)
    i = np.array([0, 0, 0, 1, 0])
    j = np.array([1, 2, 3, 3, 4])
    cross, x = crossings(a, d, length, i, j, 1e-9)
    assert cross.tolist() == [True, False, False, False, True]
    assert x.tolist() == [[1.0, 1.0], [2.0, 2.0]]


def test_crossings_just_past_an_end_count_within_eps():
    seg = np.array([[[0.0, 0.0], [1.0, 0.0]], [[1.0 + 0.5e-3, -1.0], [1.0 + 0.5e-3, 1.0]]])
    a, d, length = as_rays(seg)
    assert crossings(a, d, length, np.array([0]), np.array([1]), 1e-3)[0].tolist() == [True]
    assert crossings(a, d, length, np.array([0]), np.array([1]), 1e-4)[0].tolist() == [False]


def test_segments_cut_at_their_points_share_the_overlapping_edge():
    # segment 0: points 0 - 1 - 2 along x; segment 1 lies on its second half (points 1, 2)
    points = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [9.0, 9.0]])
    seg = np.array([[[0.0, 0.0], [2.0, 0.0]], [[2.0, 0.0], [1.0, 0.0]]])
    a, d, length = as_rays(seg)
    on_seg = np.array([0, 0, 0, 1, 1])
    on_vid = np.array([2, 0, 1, 2, 1])  # unordered along the segment
    kept, edges, ptr, src = split_segments(points, a, d, length, on_seg, on_vid, np.array([], np.int64))
    assert kept.tolist() == [[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]]  # point 3 ends no edge
    assert edges.tolist() == [[0, 1], [1, 2]]
    assert [src[ptr[e] : ptr[e + 1]].tolist() for e in range(2)] == [[0], [0, 1]]


def test_a_point_listed_to_keep_stays_though_it_ends_no_edge():
    points = np.array([[5.0, 5.0], [0.0, 0.0], [1.0, 0.0]])
    seg = np.array([[[0.0, 0.0], [1.0, 0.0]]])
    a, d, length = as_rays(seg)
    kept, edges, _, _ = split_segments(points, a, d, length, np.array([0, 0]), np.array([1, 2]), np.array([0]))
    assert kept.tolist() == points.tolist()
    assert edges.tolist() == [[1, 2]]


def test_arrange_splits_a_plus_into_four_edges_around_a_new_vertex():
    seg = np.array([[[0.0, 1.0], [2.0, 1.0]], [[1.0, 0.0], [1.0, 2.0]]])
    arr = arrange(seg, 1e-9)
    assert len(arr.points) == 5
    centre = int(np.flatnonzero((arr.points == [1.0, 1.0]).all(1))[0])
    assert all(centre in e for e in arr.edges.tolist())
    assert [arr.edge_sources(e).tolist() for e in range(4)] == [[0], [0], [1], [1]]


def test_arrange_merges_copies_and_near_duplicates_into_one_edge_with_all_sources():
    base = np.array([[0.0, 0.0], [1.0, 0.0]])
    seg = np.stack([base, base + 1e-12, base[::-1], base + [0.0, 0.5]])
    arr = arrange(seg, 1e-9)
    # points: the representatives' starts, then their ends
    assert arr.points.tolist() == [[0.0, 0.0], [0.0, 0.5], [1.0, 0.0], [1.0, 0.5]]
    assert arr.edges.tolist() == [[0, 2], [1, 3]]
    assert arr.edge_sources(0).tolist() == [0, 1, 2]
    assert arr.edge_sources(1).tolist() == [3]
