"""Connected components of small undirected graphs given as edge lists."""

from __future__ import annotations

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

# up to this many edges the components come from label propagation in numpy; scipy's
# search costs about a millisecond per call in argument checks and conversions alone,
# which on small designs added up to more than the search
_SMALL = 4096
_ROUNDS = 24


def component_labels(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Each node's component among ``n`` nodes joined by edges ``a[i] - b[i]``, numbered
    0, 1, ... in the order of each component's smallest node (as scipy's
    ``connected_components`` numbers them)."""
    a = np.asarray(a, np.int64)
    b = np.asarray(b, np.int64)
    if len(a) > _SMALL:
        return _scipy_labels(n, a, b)
    label = np.arange(n)
    if len(a) == 0:
        return label
    for _ in range(_ROUNDS):
        # every node takes the smallest label among its neighbours, then the label of
        # that label (pointer jumping), until nothing changes: each label is then its
        # component's smallest node
        low = np.minimum(label[a], label[b])
        new = label.copy()
        np.minimum.at(new, a, low)
        np.minimum.at(new, b, low)
        new = new[new]
        if np.array_equal(new, label):
            break
        label = new
    else:
        return _scipy_labels(n, a, b)  # a long chain: leave it to the graph search
    roots = np.flatnonzero(label == np.arange(n))
    rank = np.empty(n, np.int64)
    rank[roots] = np.arange(len(roots))
    return rank[label]


def _scipy_labels(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    graph = coo_matrix((np.ones(len(a)), (a, b)), shape=(n, n))
    return connected_components(graph, directed=False)[1].astype(np.int64)
