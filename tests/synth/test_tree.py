"""The CART tree: splits against brute-force enumeration, leaf sizes, pruning, and routing."""

from itertools import combinations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdckit.synth.tree import grow_tree


def _sse(y):
    return float(((y - y.mean()) ** 2).sum()) if y.size else 0.0


def _gini_n(c):
    n = c.sum()
    return float(n - (c ** 2).sum() / n) if n else 0.0


def _brute_best_regression(x, is_cat, y, min_leaf):
    """Best SSE decrease over every feature, every threshold and every subset of categories."""
    best = 0.0
    for f in range(x.shape[1]):
        vals = np.unique(x[:, f])
        if is_cat[f]:
            splits = [set(c) for r in range(1, len(vals)) for c in combinations(vals.tolist(), r)]
            masks = [np.isin(x[:, f], list(s)) for s in splits]
        else:
            masks = [x[:, f] <= v for v in vals[:-1]]
        for m in masks:
            if m.sum() < min_leaf or (~m).sum() < min_leaf:
                continue
            best = max(best, _sse(y) - _sse(y[m]) - _sse(y[~m]))
    return best


def _first_split_gain(tree, x, y):
    root_rows = tree.order[tree.start[0]:tree.end[0]]
    left, right = tree.left[0], tree.right[0]
    lrows = tree.order[tree.start[left]:tree.end[left]]
    rrows = tree.order[tree.start[right]:tree.end[right]]
    return _sse(y[root_rows]) - _sse(y[lrows]) - _sse(y[rrows])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_root_split_is_the_best_of_all_splits(seed):
    # reference: exhaustive enumeration of thresholds and of every grouping of categories
    rng = np.random.default_rng(seed)
    n = 120
    x = np.column_stack([rng.integers(0, 12, n), rng.integers(0, 5, n), rng.integers(0, 4, n)]).astype(np.uint8)
    is_cat = np.array([False, True, True])
    y = x[:, 0] * 0.3 + np.array([0.0, 2.0, -1.0, 0.5, 3.0])[x[:, 1]] + rng.normal(0, 1, n)
    tree = grow_tree(x, is_cat, y=y, min_leaf=5, cp=0.0)
    assert tree.feature[0] >= 0
    assert _first_split_gain(tree, x, y) == pytest.approx(_brute_best_regression(x, is_cat, y, 5), rel=1e-12)


def test_binary_classification_subset_split_is_optimal():
    # Breiman et al. (1984), Theorem 4.5: ordering categories by the class-1 share finds the best
    # grouping; checked against all 2^(L-1)-1 groupings
    rng = np.random.default_rng(3)
    n = 200
    x = rng.integers(0, 7, (n, 1)).astype(np.uint8)
    p1 = np.array([0.1, 0.9, 0.5, 0.2, 0.8, 0.3, 0.6])[x[:, 0]]
    y = (rng.random(n) < p1).astype(np.int64)
    tree = grow_tree(x, np.array([True]), y_class=y, n_classes=2, min_leaf=1, cp=0.0, max_depth=1)
    lrows = tree.order[tree.start[1]:tree.end[1]]
    rrows = tree.order[tree.start[2]:tree.end[2]]

    def counts(rows):
        return np.bincount(y[rows], minlength=2).astype(float)

    got = _gini_n(counts(np.arange(n))) - _gini_n(counts(lrows)) - _gini_n(counts(rrows))
    best = 0.0
    for r in range(1, 7):
        for c in combinations(range(7), r):
            m = np.isin(x[:, 0], c)
            best = max(best, _gini_n(counts(np.arange(n))) - _gini_n(counts(np.flatnonzero(m)))
                       - _gini_n(counts(np.flatnonzero(~m))))
    assert got == pytest.approx(best, rel=1e-12)


@given(st.integers(1, 8), st.integers(0, 10_000))
def test_every_leaf_keeps_min_leaf_records_and_routing_matches(min_leaf, seed):
    rng = np.random.default_rng(seed)
    n = 300
    x = np.column_stack([rng.integers(0, 30, n), rng.integers(0, 6, n)]).astype(np.uint8)
    is_cat = np.array([False, True])
    y = rng.integers(0, 4, n)
    tree = grow_tree(x, is_cat, y_class=y, n_classes=4, min_leaf=min_leaf, cp=0.0)
    leaves = tree.leaves
    assert ((tree.end[leaves] - tree.start[leaves]) >= min_leaf).all()
    # the leaves partition the records, and apply() sends each record to the leaf holding it
    pos = np.empty(n, dtype=np.int64)
    pos[tree.order] = np.arange(n)
    leaf = tree.apply(x, is_cat)
    assert ((pos >= tree.start[leaf]) & (pos < tree.end[leaf])).all()
    assert np.isin(leaf, leaves).all()


def test_split_that_does_not_reduce_misclassification_is_pruned():
    # hand-made: x separates 20 A's from a 40 A / 40 B mix that no predictor splits. The split
    # lowers the Gini index but leaves the misclassified count at 40, so its complexity is 0 and
    # it is collapsed (rpart's rule, even with cp = 0); a numeric outcome keeps the split
    x = np.array([0] * 20 + [1] * 80, dtype=np.uint8)[:, None]
    y = np.array([0] * 20 + [0] * 40 + [1] * 40)
    tree = grow_tree(x, np.array([False]), y_class=y, n_classes=2, min_leaf=5, cp=0.0)
    assert len(tree.leaves) == 1
    treg = grow_tree(x, np.array([False]), y=y.astype(float), min_leaf=5, cp=0.0)
    assert len(treg.leaves) == 2


def test_cp_prunes_weak_splits():
    rng = np.random.default_rng(5)
    n = 500
    x = rng.integers(0, 50, (n, 1)).astype(np.uint8)
    y = (x[:, 0] >= 25) * 10.0 + rng.normal(0, 1, n)
    big = grow_tree(x, np.array([False]), y=y, min_leaf=5, cp=1e-8)
    small = grow_tree(x, np.array([False]), y=y, min_leaf=5, cp=0.1)
    assert len(small.leaves) == 2 < len(big.leaves)
    assert small.threshold[0] == 24


def test_category_not_seen_in_a_node_follows_the_larger_child():
    x = np.array([0] * 30 + [1] * 10, dtype=np.uint8)[:, None]
    y = np.array([0.0] * 30 + [5.0] * 10)
    tree = grow_tree(x, np.array([True]), y=y, min_leaf=5, cp=0.0)
    leaf_of_unseen = tree.apply(np.array([[2]], dtype=np.uint8), np.array([True]))[0]
    leaf_of_0 = tree.apply(np.array([[0]], dtype=np.uint8), np.array([True]))[0]
    assert leaf_of_unseen == leaf_of_0
