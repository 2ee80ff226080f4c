"""Classification and regression trees for synthesis and propensity scores (numba).

The tree follows CART as rpart grows it (Breiman, Friedman, Olshen & Stone 1984; Therneau &
Atkinson, "An introduction to recursive partitioning using the RPART routines", sections 3-4),
which is what synthpop's ``syn.cart`` and ``utility.gen(method = "cart")`` fit:

* splits chosen by the largest decrease of the node's impurity: the sum of squares for a
  numeric outcome, the Gini index for a categorical one (CART book, sections 4.3 and 8.3);
* a split is allowed only when each child keeps at least ``min_leaf`` records (rpart's
  ``minbucket``), and a node is split only when it holds at least ``min_split`` records
  (rpart's ``minsplit``, ``3 * minbucket`` when only ``minbucket`` is given) and lies at depth
  below ``max_depth`` (30);
* complexity pruning while growing: with ``alpha = cp * R(root)``, the risk ``R`` being the
  sum of squares (regression) or the number of misclassified records (classification), a
  subtree whose cost-complexity ``(R(node) - R(subtree)) / (splits in subtree)`` is at most
  ``alpha`` is collapsed into a leaf, children bounded by their parent's complexity (the
  weakest-link rule of the CART book, section 3.3, applied as the tree is built);
* a categorical predictor is split into two groups of categories: for a numeric or a binary
  outcome the categories are ordered by their mean outcome and cut like an ordered variable,
  which finds the best of all groupings (CART book, Theorem 4.5); for an outcome with more
  than two classes every grouping is tried when at most ``EXHAUSTIVE_CATEGORIES`` categories
  are present (rpart tries every grouping whatever their number), otherwise the categories
  are ordered along the first principal component of their class proportions (Coppersmith,
  Hong & Hosking 1999, section 3), a near-optimal ordering (also used when trying every
  grouping would cost more than four passes over the node's records; in a node too small for
  the component to cost less than its records, the categories are ordered by the share of the
  node's most frequent class);
* a category not present in a node during growing follows the larger child.

Predictors arrive binned, one row of uint8 bins per record (``xb[row, feature]``, so that
a record's predictors share a cache line): an ordered predictor as the rank of its value among
at most 255 cut points (exact when it has at most 256 distinct values, quantile cut points otherwise),
a categorical one as its category code (at most 256 categories; :mod:`sdckit.synth.models`
orders a predictor with more categories by its mean outcome and bins it as ordered).

Each node holds its records contiguously in ``order`` (the training rows grouped by node),
so a leaf's donors are ``order[start:end]``. The search for a node's best split (impurities,
category orderings, the scans) is in :mod:`sdckit.synth.tree_split`; this module grows the
tree from it and predicts with it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from .tree_split import (
    EXHAUSTIVE_CATEGORIES,
    MAX_BINS,
    PC_ITERATIONS,
    node_risk_cls,
    node_risk_reg,
    search_cls,
    search_reg,
)


@dataclass(frozen=True)
class Tree:
    """A grown tree: node arrays, and the training rows grouped by node."""

    feature: np.ndarray      # int32, -1 at a leaf
    threshold: np.ndarray    # int32: ordered split, left when bin <= threshold
    mask: np.ndarray         # uint64 (nodes, 4): categorical split, left when the bit is set
    left: np.ndarray         # int32
    right: np.ndarray        # int32
    start: np.ndarray        # int64: node's rows are order[start:end]
    end: np.ndarray
    order: np.ndarray        # int64 training rows grouped by node
    n_nodes: int

    @property
    def leaves(self) -> np.ndarray:
        """The ids of the leaves reachable from the root."""
        return _reachable_leaves(self.feature, self.left, self.right)

    def apply(self, xb: np.ndarray, is_cat: np.ndarray, feats: np.ndarray | None = None,
              rows: np.ndarray | None = None) -> np.ndarray:
        """The leaf of records ``rows`` (default: all) of a binned matrix (rows x columns),
        the tree's features being its columns ``feats`` (default: all, in order)."""
        feats = np.arange(xb.shape[1], dtype=np.int64) if feats is None else np.asarray(feats, dtype=np.int64)
        rows = np.arange(xb.shape[0], dtype=np.int64) if rows is None else np.asarray(rows, dtype=np.int64)
        packed = np.column_stack([self.feature, self.threshold, self.left, self.right]).astype(np.int32)
        return _apply(np.ascontiguousarray(packed), self.mask, np.ascontiguousarray(xb, dtype=np.uint8),
                      feats, rows, np.ascontiguousarray(is_cat, dtype=np.bool_))


@numba.njit(cache=True)
def _reachable_leaves(feature, left, right):
    out = np.empty(feature.shape[0], dtype=np.int32)
    stack = np.empty(feature.shape[0] + 1, dtype=np.int32)
    top, k = 0, 0
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        if feature[node] < 0:
            out[k] = node
            k += 1
        else:
            stack[top] = right[node]
            stack[top + 1] = left[node]
            top += 2
    return out[:k]


@numba.njit(cache=True, nogil=True, parallel=True)
def _apply(packed, mask, xb, feats, rows, is_cat):
    """The leaf of each record ``rows[i]``: ``packed`` holds per node (feature, threshold,
    left, right), one cache line for the walk."""
    n = rows.shape[0]
    out = np.empty(n, dtype=np.int32)
    for i in numba.prange(n):
        r = rows[i]
        node = 0
        f = packed[0, 0]
        while f >= 0:
            b = xb[r, feats[f]]
            if is_cat[f]:
                go_left = (mask[node, b >> 6] >> np.uint64(b & 63)) & np.uint64(1)
                node = packed[node, 2] if go_left else packed[node, 3]
            else:
                node = packed[node, 2] if b <= packed[node, 1] else packed[node, 3]
            f = packed[node, 0]
        out[i] = node
    return out


@numba.njit(cache=True, nogil=True)
def _grow(xb, feats, is_cat, y, yc, n_classes, classification, min_split, min_leaf, cp, max_depth,
          rows):
    n = rows.shape[0]
    p = feats.shape[0]
    cap = 2 * (n // max(min_leaf, 1)) + 3
    feature = np.full(cap, -1, dtype=np.int32)
    threshold = np.full(cap, -1, dtype=np.int32)
    mask = np.zeros((cap, 4), dtype=np.uint64)
    left = np.full(cap, -1, dtype=np.int32)
    right = np.full(cap, -1, dtype=np.int32)
    start = np.zeros(cap, dtype=np.int64)
    end = np.zeros(cap, dtype=np.int64)
    risk = np.zeros(cap)
    bound = np.zeros(cap)      # rpart's "complexity" handed down by the parent, then the node's cp
    tempcp = np.zeros(cap)
    nsplit = np.zeros(cap, dtype=np.int64)
    sumrisk = np.zeros(cap)
    depth = np.zeros(cap, dtype=np.int32)
    order = rows.copy()
    buf = np.empty(n, dtype=np.int64)
    # the records' bins of the features used, their outcomes, in node order (moved at each split)
    xs = np.empty((n, p), dtype=np.uint8)
    for i in range(n):
        r = rows[i]
        for q in range(p):
            xs[i, q] = xb[r, feats[q]]
    xbuf = np.empty((n, p), dtype=np.uint8)
    ys = np.zeros(n)
    ycs = np.zeros(n, dtype=np.int64)
    for i in range(n):
        if classification:
            ycs[i] = yc[rows[i]]
        else:
            ys[i] = y[rows[i]]
    ybuf = np.empty(n)
    ycbuf = np.empty(n, dtype=np.int64)

    kk = max(n_classes, 1)
    shift = 0
    while (1 << shift) < kk:
        shift += 1
    counts = np.zeros(kk, dtype=np.int64)
    nt = np.zeros(p, dtype=np.int64)
    best_cats = np.zeros(MAX_BINS, dtype=np.int64)
    if classification:
        cnt = np.zeros((p, MAX_BINS << shift), dtype=np.int32)
        touched = np.empty((p, min(max(n, 1), MAX_BINS << shift)), dtype=np.int32)
        bnk = np.zeros((p, MAX_BINS), dtype=np.int32)
        tbins = np.empty((p, MAX_BINS), dtype=np.int32)
        nb = np.zeros(p, dtype=np.int64)
        totc = np.zeros(kk, dtype=np.int64)
        leftc = np.zeros(kk, dtype=np.int64)
        sm = np.zeros((1, 1))
    else:
        cnt = np.zeros((p, MAX_BINS), dtype=np.int32)
        touched = np.empty((p, MAX_BINS), dtype=np.int32)
        bnk = np.zeros((1, 1), dtype=np.int32)
        tbins = np.empty((1, 1), dtype=np.int32)
        nb = np.zeros(1, dtype=np.int64)
        totc = np.zeros(1, dtype=np.int64)
        leftc = np.zeros(1, dtype=np.int64)
        sm = np.zeros((p, MAX_BINS), dtype=np.float64)
    best = np.zeros(3)

    start[0] = 0
    end[0] = n
    if classification:
        risk[0] = node_risk_cls(ycs, 0, n, counts)
    else:
        risk[0] = node_risk_reg(ys, 0, n)[0]
    alpha = cp * risk[0]
    bound[0] = risk[0]
    n_nodes = 1

    stack_node = np.empty(cap, dtype=np.int32)
    stack_phase = np.empty(cap, dtype=np.int8)
    top = 0
    stack_node[0] = 0
    stack_phase[0] = 0
    top = 1
    while top > 0:
        top -= 1
        node = stack_node[top]
        phase = stack_phase[top]
        if phase == 0:
            nn = end[node] - start[node]
            t = risk[node]
            if bound[node] < t:
                t = bound[node]
            split_ok = nn >= min_split and t > alpha and depth[node] < max_depth
            n_cats = 0
            if split_ok:
                if classification:
                    n_cats = search_cls(xs, is_cat, ycs, kk, shift, start[node], end[node], min_leaf,
                                         cnt, touched, nt, bnk, tbins, nb, totc, leftc, best, best_cats)
                else:
                    n_cats = search_reg(xs, is_cat, ys, start[node], end[node], min_leaf,
                                         cnt, sm, touched, nt, best, best_cats)
                scale = risk[node] if risk[node] > 0 else 1.0
                split_ok = best[1] >= 0 and best[0] > 1e-12 * scale
            if not split_ok:
                bound[node] = alpha
                nsplit[node] = 0
                sumrisk[node] = risk[node]
                continue
            f = int(best[1])
            feature[node] = f
            # the split: rows to the left first
            s0 = start[node]
            e0 = end[node]
            if is_cat[f]:
                for q in range(n_cats):
                    c = best_cats[q]
                    mask[node, c >> 6] |= np.uint64(1) << np.uint64(c & 63)
            else:
                threshold[node] = int(best[2])
            # move the records (their bins, outcome and row id) so that each child's records
            # lie contiguously: the searches below read memory in order
            nl = 0
            nr = 0
            for i in range(s0, e0):
                b = xs[i, f]
                if is_cat[f]:
                    gl = (mask[node, b >> 6] >> np.uint64(b & 63)) & np.uint64(1)
                else:
                    gl = b <= threshold[node]
                if gl:
                    j = s0 + nl
                    if j != i:
                        for q in range(p):
                            xs[j, q] = xs[i, q]
                        order[j] = order[i]
                        ys[j] = ys[i]
                        ycs[j] = ycs[i]
                    nl += 1
                else:
                    for q in range(p):
                        xbuf[nr, q] = xs[i, q]
                    buf[nr] = order[i]
                    ybuf[nr] = ys[i]
                    ycbuf[nr] = ycs[i]
                    nr += 1
            for i in range(nr):
                j = s0 + nl + i
                for q in range(p):
                    xs[j, q] = xbuf[i, q]
                order[j] = buf[i]
                ys[j] = ybuf[i]
                ycs[j] = ycbuf[i]
            if is_cat[f]:
                # categories absent from this node follow the larger child
                if nl >= nr:
                    present = np.zeros(MAX_BINS, dtype=np.bool_)
                    for i in range(s0, e0):
                        present[xs[i, f]] = True
                    for c in range(MAX_BINS):
                        if not present[c]:
                            mask[node, c >> 6] |= np.uint64(1) << np.uint64(c & 63)
            else:
                pass  # an ordered split sends every value to a side already
            lc = n_nodes
            rc = n_nodes + 1
            n_nodes += 2
            left[node] = lc
            right[node] = rc
            start[lc] = s0
            end[lc] = s0 + nl
            start[rc] = s0 + nl
            end[rc] = e0
            depth[lc] = depth[node] + 1
            depth[rc] = depth[node] + 1
            for c in (lc, rc):
                if classification:
                    risk[c] = node_risk_cls(ycs, start[c], end[c], counts)
                else:
                    risk[c] = node_risk_reg(ys, start[c], end[c])[0]
            tempcp[node] = t
            bound[lc] = t - alpha
            stack_node[top] = node
            stack_phase[top] = 1
            stack_node[top + 1] = lc
            stack_phase[top + 1] = 0
            top += 2
        elif phase == 1:
            lc = left[node]
            t = (risk[node] - sumrisk[lc]) / (nsplit[lc] + 1)
            t2 = risk[node] - risk[lc]
            if t < t2:
                t = t2
            if t > bound[node]:
                t = bound[node]
            rc = right[node]
            bound[rc] = t - alpha
            stack_node[top] = node
            stack_phase[top] = 2
            stack_node[top + 1] = rc
            stack_phase[top + 1] = 0
            top += 2
        else:
            lc = left[node]
            rc = right[node]
            lr = sumrisk[lc]
            ls = nsplit[lc]
            rr = sumrisk[rc]
            rs = nsplit[rc]
            t = (risk[node] - (lr + rr)) / (ls + rs + 1)
            if bound[rc] > bound[lc]:
                if t > bound[lc]:
                    lr = risk[lc]
                    ls = 0
                    t = (risk[node] - (lr + rr)) / (ls + rs + 1)
                    if t > bound[rc]:
                        rr = risk[rc]
                        rs = 0
            elif t > bound[rc]:
                rr = risk[rc]
                rs = 0
                t = (risk[node] - (lr + rr)) / (ls + rs + 1)
                if t > bound[lc]:
                    lr = risk[lc]
                    ls = 0
            cpn = (risk[node] - (lr + rr)) / (ls + rs + 1)
            bound[node] = cpn
            if cpn <= alpha:
                feature[node] = -1   # collapsed: the subtree below is dropped
                nsplit[node] = 0
                sumrisk[node] = risk[node]
            else:
                nsplit[node] = ls + rs + 1
                sumrisk[node] = lr + rr
    return (feature[:n_nodes].copy(), threshold[:n_nodes].copy(), mask[:n_nodes].copy(),
            left[:n_nodes].copy(), right[:n_nodes].copy(), start[:n_nodes].copy(),
            end[:n_nodes].copy(), order, n_nodes)


def grow_tree(xb: np.ndarray, is_cat: np.ndarray, *, y: np.ndarray | None = None,
              y_class: np.ndarray | None = None, n_classes: int = 0, min_leaf: int = 5,
              min_split: int | None = None, cp: float = 1e-8, max_depth: int = 30,
              rows: np.ndarray | None = None, feats: np.ndarray | None = None) -> Tree:
    """Grow a tree on binned predictors ``xb`` (rows x columns, uint8 bins).

    Give ``y`` (float, regression) or ``y_class`` (int codes ``0..n_classes-1``), indexed like
    the rows of ``xb``. ``rows`` restricts the fit to some records (default: all), ``feats``
    to some columns (default: all; ``is_cat`` has one flag per feature used). ``min_split``
    defaults to ``3 * min_leaf``.
    """
    n_all = xb.shape[0]
    rows = np.arange(n_all, dtype=np.int64) if rows is None else np.asarray(rows, dtype=np.int64)
    feats = np.arange(xb.shape[1], dtype=np.int64) if feats is None else np.asarray(feats, dtype=np.int64)
    classification = y_class is not None
    yr = np.zeros(1) if y is None else np.ascontiguousarray(y, dtype=np.float64)
    yc = np.zeros(1, dtype=np.int64) if y_class is None else np.ascontiguousarray(y_class, dtype=np.int64)
    min_split = 3 * min_leaf if min_split is None else min_split
    out = _grow(np.ascontiguousarray(xb, dtype=np.uint8), feats, np.ascontiguousarray(is_cat, dtype=np.bool_),
                yr, yc, int(n_classes), classification, int(min_split), int(min_leaf), float(cp),
                int(max_depth), rows)
    return Tree(*out)


def cut_points(values: np.ndarray) -> np.ndarray:
    """At most ``MAX_BINS - 1`` cut points of a numeric predictor: the midpoints between its
    distinct values when it has at most ``MAX_BINS`` of them (the tree then splits exactly as
    on the values, at rpart's midpoints), else between the values at the quantiles
    ``j / MAX_BINS`` of the records. ``np.searchsorted(cuts, v)`` is a value's bin."""
    uniq, counts = np.unique(values, return_counts=True)
    if uniq.shape[0] <= MAX_BINS:
        return (uniq[:-1] + uniq[1:]) / 2.0
    cum = np.cumsum(counts)
    targets = cum[-1] * np.arange(1, MAX_BINS) / MAX_BINS
    idx = np.unique(np.minimum(np.searchsorted(cum, targets), uniq.shape[0] - 2))
    return (uniq[idx] + uniq[idx + 1]) / 2.0


__all__ = ["Tree", "grow_tree", "cut_points", "EXHAUSTIVE_CATEGORIES", "MAX_BINS", "PC_ITERATIONS"]
