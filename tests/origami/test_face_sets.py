"""The walk that gives each cell of the overlap graph its faces."""

import numpy as np

from shredfold.origami.face_sets import walk_face_sets


def walk(sides: list[tuple[int, int]], toggles: list[list[int]], n_loops: int = 4, n_faces: int = 4):
    left = np.array([a for a, _ in sides], np.int64)
    right = np.array([b for _, b in sides], np.int64)
    ptr = np.cumsum([0] + [len(t) for t in toggles]).astype(np.int64)
    tog = np.array([f for t in toggles for f in t], np.int64)
    flat, at, size, bad = walk_face_sets(n_loops, left, right, ptr, tog, 0, n_faces)
    sets = [None if size[i] < 0 else flat[at[i] : at[i] + size[i]].tolist() for i in range(n_loops)]
    return sets, int(bad)


def test_crossing_segments_toggles_their_faces_from_the_outside_in():
    # outside 0; loop 1 behind segment 0 (face 0); loop 2 behind segment 1 from loop 1
    # (face 1 added) and behind segment 2 from outside (faces 0 and 1); loop 3 unreached
    sets, bad = walk([(0, 1), (1, 2), (0, 2)], [[0], [1], [0, 1]])
    assert bad == -1
    assert sets == [[], [0], [0, 1], None]


def test_a_face_toggled_twice_is_gone_again():
    sets, bad = walk([(0, 1), (1, 2)], [[0, 2], [0, 3]])
    assert sets[2] == [2, 3]
    assert bad == -1


def test_the_first_segment_whose_sides_disagree_is_reported():
    # outside -> 1 by segment 0 gives {0}; outside -> 2 by segment 2 gives {1}; then from
    # loop 1 segment 1 reaches 2 as {0, 1}: that segment is where the sets disagree
    sets, bad = walk([(0, 1), (1, 2), (0, 2)], [[0], [1], [1]])
    assert bad == 1


def test_a_segment_inside_one_loop_must_toggle_nothing():
    assert walk([(0, 1), (1, 1)], [[0], []])[1] == -1
    assert walk([(0, 1), (1, 1)], [[0], [2]])[1] == 1
