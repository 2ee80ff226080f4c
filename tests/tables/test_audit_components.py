"""The audit's connected components of suppressed cells (a vectorised union-find) against scipy's
``connected_components`` (an independent implementation), on random graphs."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from sdckit.tables.audit import component_labels


@st.composite
def graphs(draw):
    n = draw(st.integers(1, 40))
    edges = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=3 * n))
    u = np.array([a for a, _ in edges], dtype=np.int64)
    v = np.array([b for _, b in edges], dtype=np.int64)
    return n, u, v


@settings(max_examples=300, deadline=None)
@given(graphs())
def test_same_partition_as_scipy_and_labelled_by_the_smallest_node(g):
    n, u, v = g
    label = component_labels(n, u, v)
    _, ref = connected_components(coo_matrix((np.ones(u.size), (u, v)), shape=(n, n)), directed=False)
    assert (np.equal.outer(label, label) == np.equal.outer(ref, ref)).all()
    for node in range(n):
        assert label[node] == np.flatnonzero(label == label[node]).min()


def test_a_long_path_in_reverse_order_is_one_component():
    # a path n-1 -> ... -> 0 given edge by edge from the far end: the worst order for hooking
    n = 10_000
    u = np.arange(n - 1, 0, -1)
    label = component_labels(n, u, u - 1)
    assert (label == 0).all()


def test_no_edges_every_node_alone():
    assert component_labels(4, np.array([], int), np.array([], int)).tolist() == [0, 1, 2, 3]
