import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from shredfold.origami import constraints
from shredfold.origami.constraints import (
    N_FACES,
    PAIRS,
    Problem,
    _cell_keys,
    _implied_transitivity_dropped,
    _read_vars,
    _stack_tree,
    _triple_keys,
    _unique_rows,
)


@given(arrays(np.int64, st.tuples(st.integers(0, 40), st.integers(1, 5)), elements=st.integers(-3, 2**20)))
def test_unique_rows_are_the_distinct_rows_in_lexicographic_order(rows):
    want = sorted(set(map(tuple, rows.tolist())))
    got = _unique_rows(rows)
    assert got.dtype == np.int64
    assert [tuple(r) for r in got.tolist()] == want


def test_unique_rows_of_wide_numbers_fall_back_to_a_sort_by_columns():
    rows = np.array([[2**40, 1, 5], [3, 2**40, 0], [2**40, 1, 5], [3, 0, 2**40]], np.int64)
    assert _unique_rows(rows).tolist() == [[3, 0, 2**40], [3, 2**40, 0], [2**40, 1, 5]]


def kept_triples(triples, tt, tto):
    """What the transitivity constraints keep, written out: a triple goes when a taco-taco
    or taco-tortilla constraint holds its three faces, or when two of its faces are joined,
    seen from its third as the tortilla, by a chain of taco-tortilla constraints."""
    implied = {tuple(sorted(r[list(c)])) for r in tt for c in itertools.combinations(range(4), 3)}
    implied |= {tuple(sorted(r)) for r in tto}
    parent: dict[tuple[int, int], tuple[int, int]] = {}

    def root(x):
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    for a, b, c in tto:
        parent[root((c, a))] = root((c, b))

    def chained(c, a, b):
        return (c, a) in parent and (c, b) in parent and root((c, a)) == root((c, b))

    return [
        t for t in triples
        if t not in implied and not any(chained(c, a, b) for c, a, b in ((t[2], t[0], t[1]), (t[0], t[1], t[2]), (t[1], t[0], t[2])))
    ]


@pytest.mark.parametrize("dense", [True, False])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_transitivity_keeps_exactly_the_triples_no_taco_chain_orders(dense, data):
    n = data.draw(st.integers(4, 9))
    faces = st.lists(st.integers(0, n - 1), min_size=3, max_size=3, unique=True)
    # chains of tacos over one tortilla c: (f0, f1, c), (f1, f2, c), ...
    chains = data.draw(st.lists(st.lists(st.integers(0, n - 1), min_size=3, max_size=5, unique=True), max_size=4))
    tto_rows = [(path[i], path[i + 1], path[0]) for path in chains for i in range(1, len(path) - 1)]
    tto_rows += data.draw(st.lists(faces, max_size=4))
    tto = np.array(tto_rows, np.int64).reshape(-1, 3)
    # triples at both ends of each chain, and some anywhere
    ends = [(path[0], path[1], path[-1]) for path in chains]
    triples = sorted({tuple(sorted(t)) for t in ends + data.draw(st.lists(faces, min_size=1, max_size=30))})
    quads = st.lists(st.integers(0, n - 1), min_size=4, max_size=4, unique=True)
    tt = np.array(data.draw(st.lists(quads, max_size=3)), np.int64).reshape(-1, 4)
    keys = np.sort(_triple_keys(np.array(triples, np.int64), n))
    with pytest.MonkeyPatch.context() as patch:
        if not dense:  # too many faces for a table of every node: the nodes are searched
            patch.setattr(constraints, "DENSE_KEYS", 0)
        got = _implied_transitivity_dropped(keys, tt, tto, n)
    assert [tuple(r) for r in got.tolist()] == kept_triples(triples, tt, tto)


@pytest.mark.parametrize("dense", [True, False])
@pytest.mark.parametrize("kind", range(4))
def test_constraints_read_the_variable_of_each_face_pair_as_var_index_gives_it(monkeypatch, dense, kind):
    rng = np.random.default_rng(kind)
    n = 12
    faces = np.array([rng.choice(n, N_FACES[kind], replace=False) for _ in range(50)])
    pairs = np.array(sorted({(a, b) for a in range(n) for b in range(a + 1, n) if (a * b + kind) % 3}))
    if not dense:  # too many faces for a table of every pair: the pairs are searched
        monkeypatch.setattr(constraints, "DENSE_KEYS", 0)
    problem = Problem(n, pairs, (), (), (), np.zeros(len(pairs), np.int8))
    idx, flip = _read_vars(problem, kind, faces)
    for col, (x, y) in enumerate(PAIRS[kind]):
        want_idx, want_flip = problem.var_index(faces[:, x], faces[:, y], strict=False)
        assert idx[:, col].tolist() == want_idx.tolist()
        assert flip[:, col].tolist() == want_flip.tolist()
    assert (idx == -1).any() and (idx >= 0).any()  # both kinds of pair occur


@pytest.mark.parametrize("r", [2, 3])
@settings(max_examples=80, deadline=None)
@given(st.lists(st.sets(st.integers(0, 14), min_size=1, max_size=9), min_size=1, max_size=12))
def test_cell_keys_are_every_r_subset_of_faces_sharing_a_stack_once(r, stacks):
    n = 15
    want = sorted(
        {(sub[0] * n + sub[1]) * (n if r == 3 else 1) + (sub[2] if r == 3 else 0) for s in stacks for sub in itertools.combinations(sorted(s), r)}
    )
    got = _cell_keys([np.array(sorted(s), np.int64) for s in stacks], r, n)
    assert got.tolist() == want


def test_the_stack_forest_hangs_each_stack_on_its_largest_overlap_under_the_largest_root():
    stacks = [[3, 4, 5], [0, 1, 2, 3], [1, 2, 3, 4, 9], [7, 8]]
    parent = _stack_tree([np.array(s, np.int64) for s in stacks], 10)
    # stack 2 (five faces) is the root; 1 shares three faces with it, 0 shares two with
    # it and one with 1; 3 shares none and is a root of its own
    assert parent.tolist() == [2, 2, -1, -1]
