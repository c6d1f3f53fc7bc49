import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from shredfold.origami.graph import component_labels


def _scipy(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    graph = coo_matrix((np.ones(len(a)), (a, b)), shape=(n, n))
    return connected_components(graph, directed=False)[1]


def test_components_are_numbered_by_their_smallest_node():
    # 0-3-5 and 1-4; 2 and 6 alone
    labels = component_labels(7, np.array([3, 5, 4]), np.array([0, 3, 1]))
    assert labels.tolist() == [0, 1, 2, 0, 1, 0, 3]


def test_no_edges_leaves_every_node_alone():
    assert component_labels(4, np.zeros(0, np.int64), np.zeros(0, np.int64)).tolist() == [0, 1, 2, 3]


def test_same_labels_as_scipy_on_random_graphs():
    rng = np.random.default_rng(7)
    for _ in range(300):
        n = int(rng.integers(1, 200))
        m = int(rng.integers(0, 2 * n))
        a, b = rng.integers(0, n, m), rng.integers(0, n, m)
        assert np.array_equal(component_labels(n, a, b), _scipy(n, a, b))


def test_long_chains_and_large_graphs_agree_with_scipy():
    rng = np.random.default_rng(8)
    # a shuffled path needs many rounds of label propagation (the graph search takes over)
    n = 3000
    perm = rng.permutation(n)
    a, b = perm[:-1], perm[1:]
    assert np.array_equal(component_labels(n, a, b), _scipy(n, a, b))
    # more edges than the numpy path takes
    n = 20000
    a, b = rng.integers(0, n, 9000), rng.integers(0, n, 9000)
    assert np.array_equal(component_labels(n, a, b), _scipy(n, a, b))
