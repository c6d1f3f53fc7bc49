import numpy as np

from shredfold.origami.components import components
from shredfold.origami.constraints import N_FACES, PAIRS, Problem


def two_stacks(initial):
    """Faces 0, 1, 2 stacked in one cell, and 3, 4, 5 in another: one transitivity
    constraint each. Variables: the pairs (0, 1), (0, 2), (1, 2), (3, 4), (3, 5), (4, 5);
    each triple reads (a, b), (b, c) and (c, a), the last from the higher face."""
    none = [np.zeros((0, len(PAIRS[k])), np.int64) for k in range(3)]
    return Problem(
        n_faces=6,
        pairs=np.array([(0, 1), (0, 2), (1, 2), (3, 4), (3, 5), (4, 5)]),
        cons_vars=(*none, np.array([[0, 2, 1], [3, 5, 4]])),
        cons_flip=(*[x.astype(bool) for x in none], np.array([[False, False, True], [False, False, True]])),
        cons_faces=(*[np.zeros((0, N_FACES[k]), np.int64) for k in range(3)], np.array([[0, 1, 2], [3, 4, 5]])),
        initial=np.array(initial, np.int8),
    )


def test_independent_stacks_are_components_with_their_no_cycle_clauses():
    comps, clauses = components(two_stacks([0] * 6), np.zeros(6, np.int8))
    assert [c.tolist() for c in comps] == [[0, 1, 2], [3, 4, 5]]
    # no cycle: not (0 over 1, 1 over 2, 2 over 0), and not the reverse; variables are
    # numbered 1.. in each component, and (2, 0) is read from face 2, so it is negated
    assert clauses == [[[-1, -3, 2], [1, 3, -2]], [[-1, -3, 2], [1, 3, -2]]]


def test_a_fixed_variable_leaves_its_component_and_the_clauses_it_satisfies():
    # 0 lies over 1: the cycle 0 > 1 > 2 > 0 is still possible, its reverse is not
    comps, clauses = components(two_stacks([1, 0, 0, 0, 0, 0]), np.array([1, 0, 0, 0, 0, 0], np.int8))
    assert [c.tolist() for c in comps] == [[1, 2], [3, 4, 5]]
    assert clauses == [[[-2, 1]], [[-1, -3, 2], [1, 3, -2]]]


def test_nothing_free_is_nothing_to_solve():
    assign = np.array([1, 1, 1, 2, 2, 2], np.int8)
    assert components(two_stacks(assign), assign) == ([], [])
