"""The best split of a tree node (numba): node impurities, category orderings and the scans
that :func:`sdckit.synth.tree.grow_tree` calls for each node.

A numeric or binary outcome orders a categorical predictor's categories by mean outcome and
cuts them like an ordered predictor (CART book, Theorem 4.5); a multi-class outcome tries every
grouping of at most :data:`EXHAUSTIVE_CATEGORIES` categories, else orders them along the first
principal component of their class proportions (Coppersmith, Hong & Hosking 1999, section 3).
Impurity: the sum of squares (regression) or the Gini index (classification), CART book,
sections 4.3 and 8.3 (see :mod:`sdckit.synth.tree` for the whole growing rule).

References
----------
Breiman, L., Friedman, J. H., Olshen, R. A. and Stone, C. J. (1984). Classification and
Regression Trees. Wadsworth.
Coppersmith, D., Hong, S. J. and Hosking, J. R. M. (1999). Partitioning nominal attributes in
decision trees. Data Mining and Knowledge Discovery 3, 197-217.
"""

from __future__ import annotations

import numba
import numpy as np

#: a multi-class outcome: every grouping of a categorical predictor's categories is tried
#: when at most this many are present in the node (2^(c-1) - 1 groupings)
EXHAUSTIVE_CATEGORIES = 10
#: power iterations for the first principal component of the class proportions
PC_ITERATIONS = 20
#: most bins of a predictor (a category bitset holds 256 bits)
MAX_BINS = 256


# ----------------------------------------------------------------------------- node statistics
@numba.njit(cache=True)
def node_risk_reg(y, start, end):
    s = 0.0
    for i in range(start, end):
        s += y[i]
    m = s / (end - start)
    ss = 0.0
    for i in range(start, end):
        d = y[i] - m
        ss += d * d
    return ss, s


@numba.njit(cache=True)
def node_risk_cls(yc, start, end, counts):
    counts[:] = 0
    for i in range(start, end):
        counts[yc[i]] += 1
    mx = 0
    for k in range(counts.shape[0]):
        if counts[k] > mx:
            mx = counts[k]
    return float(end - start - mx)


# ----------------------------------------------------------------------------- split search
# ----------------------------------------------------------------------------- split search
@numba.njit(cache=True, nogil=True, inline="always")
def _insertion_sort(a, k):
    """Sort ``a[:k]`` in place (small k: no call or allocation overhead)."""
    for i in range(1, k):
        v = a[i]
        j = i - 1
        while j >= 0 and a[j] > v:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = v


@numba.njit(cache=True, nogil=True)
def _sort_prefix(a, k):
    if k <= 48:
        _insertion_sort(a, k)
    else:
        a[:k].sort()


@numba.njit(cache=True, nogil=True)
def _order_by(score, k, out):
    """``out[:k]`` = positions 0..k-1 ordered by ``score`` (stable)."""
    for i in range(k):
        out[i] = i
    if k > 48:
        o = np.argsort(score[:k], kind="mergesort")
        for i in range(k):
            out[i] = o[i]
        return
    for i in range(1, k):
        v = out[i]
        sv = score[v]
        j = i - 1
        while j >= 0 and score[out[j]] > sv:
            out[j + 1] = out[j]
            j -= 1
        out[j + 1] = v


@numba.njit(cache=True, nogil=True)
def _scan_order(seq, keys, bin_start, bin_n, cnt_row, cmask, totc, leftc, stot, n, min_leaf):
    """Cut an ordering ``seq`` of the bins after each position: the best Gini decrease
    (times n) and where. Left and right sums of squared class counts are updated for the
    classes of the moved bin only."""
    leftc[:] = 0
    sl = 0.0
    sr = stot
    nl = 0
    base = stot / n
    best_gain = 0.0
    best_at = -1
    d = seq.shape[0]
    for jj in range(d - 1):
        j = seq[jj]
        for q in range(bin_start[j], bin_start[j + 1]):
            c = keys[q] & cmask
            m = cnt_row[keys[q]]
            a = leftc[c]
            bcount = totc[c] - a
            sl += float(m) * (2.0 * a + m)
            sr += float(m) * (m - 2.0 * bcount)
            leftc[c] = a + m
            nl += m
        nr = n - nl
        if nl < min_leaf:
            continue
        if nr < min_leaf:
            break
        gain = sl / nl + sr / nr - base
        if gain > best_gain:
            best_gain = gain
            best_at = jj
    return best_gain, best_at


@numba.njit(cache=True, nogil=True)
def _first_pc_order(props, weights, d, kk):
    """Categories ordered along the first principal component of their class proportions
    (weighted by counts): power iteration on the weighted covariance (Coppersmith et al.)."""
    mean = np.zeros(kk)
    wsum = 0.0
    for j in range(d):
        wsum += weights[j]
        for c in range(kk):
            mean[c] += weights[j] * props[j, c]
    for c in range(kk):
        mean[c] /= wsum
    v = np.empty(kk)
    for c in range(kk):
        v[c] = 1.0 + 0.01 * c  # a fixed start: the result is deterministic
    proj = np.empty(d)
    for _ in range(PC_ITERATIONS):
        for j in range(d):
            s = 0.0
            for c in range(kk):
                s += (props[j, c] - mean[c]) * v[c]
            proj[j] = s * weights[j]
        w = np.zeros(kk)
        for j in range(d):
            for c in range(kk):
                w[c] += proj[j] * (props[j, c] - mean[c])
        nrm = 0.0
        for c in range(kk):
            nrm += w[c] * w[c]
        if nrm == 0.0:
            break
        nrm = np.sqrt(nrm)
        for c in range(kk):
            v[c] = w[c] / nrm
    for j in range(d):
        s = 0.0
        for c in range(kk):
            s += (props[j, c] - mean[c]) * v[c]
        proj[j] = s
    return np.argsort(proj, kind="mergesort")


@numba.njit(cache=True, nogil=True)
def search_cls(xs, is_cat, yc, kk, shift, start, end, min_leaf, cnt, touched, nt, bnk, tbins,
                nb, totc, leftc, best, best_cats):
    """Best Gini split of a classification node. One pass over the node's records fills, for
    every feature, the counts keyed ``bin * K + class`` (``cnt``), the keys and the bins seen
    (``touched``, ``tbins``) and the number of keys per bin (``bnk``); each feature's keys are
    then grouped by bin with a counting sort, the bins ordered and cut. Returns the number of
    categories sent left (categorical split, in ``best_cats``). A key is ``bin << shift | class``
    (shift = bits of the number of classes: no division on the hot path)."""
    n = end - start
    p = xs.shape[1]
    cmask = (1 << shift) - 1
    totc[:] = 0
    nt[:] = 0
    nb[:] = 0
    for i in range(start, end):
        c = yc[i]
        totc[c] += 1
        for f in range(p):
            b = np.int64(xs[i, f])
            key = (b << shift) | c
            if cnt[f, key] == 0:
                touched[f, nt[f]] = key
                nt[f] += 1
                if bnk[f, b] == 0:
                    tbins[f, nb[f]] = b
                    nb[f] += 1
                bnk[f, b] += 1
            cnt[f, key] += 1
    stot = 0.0
    for c in range(kk):
        stot += float(totc[c]) * float(totc[c])
    base = stot / n
    best_gain = 0.0
    best_f = -1
    best_t = -1
    n_best = 0
    bin_start = np.empty(MAX_BINS + 1, dtype=np.int64)
    bin_id = np.empty(MAX_BINS, dtype=np.int64)
    bin_n = np.empty(MAX_BINS, dtype=np.int64)
    seq_buf = np.empty(MAX_BINS, dtype=np.int64)
    rate = np.empty(MAX_BINS)
    fill = np.empty(MAX_BINS, dtype=np.int64)
    keys = np.empty(touched.shape[1], dtype=np.int64)
    for f in range(p):
        k = nt[f]
        d = nb[f]
        for j in range(d):
            bin_id[j] = tbins[f, j]
        _sort_prefix(bin_id, d)
        pos = 0
        for j in range(d):
            b = bin_id[j]
            bin_start[j] = pos
            fill[b] = pos
            pos += bnk[f, b]
            bin_n[j] = 0
        bin_start[d] = pos
        for j in range(k):
            key = touched[f, j]
            b = key >> shift
            keys[fill[b]] = key
            fill[b] += 1
        if is_cat[f]:   # an ordered feature's scan counts its records as it goes
            for j in range(d):
                for q in range(bin_start[j], bin_start[j + 1]):
                    bin_n[j] += cnt[f, keys[q]]
        if d >= 2:
            if not is_cat[f] or kk == 2:
                if is_cat[f]:
                    for j in range(d):
                        c0 = 0
                        for q in range(bin_start[j], bin_start[j + 1]):
                            if keys[q] & cmask == 0:
                                c0 = cnt[f, keys[q]]
                        rate[j] = c0 / bin_n[j]
                    _order_by(rate, d, seq_buf)
                else:
                    for j in range(d):
                        seq_buf[j] = j
                seq = seq_buf[:d]
                g, at = _scan_order(seq, keys, bin_start, bin_n, cnt[f], cmask, totc, leftc, stot, n,
                                    min_leaf)
                if at >= 0 and g > best_gain:
                    best_gain = g
                    best_f = f
                    if is_cat[f]:
                        n_best = at + 1
                        for q in range(at + 1):
                            best_cats[q] = bin_id[seq[q]]
                        best_t = -1
                    else:
                        best_t = bin_id[at]
            elif d <= EXHAUSTIVE_CATEGORIES and (1 << (d - 1)) * k <= 4 * n * d:
                # every grouping: a Gray code over the first d-1 categories (the last stays right)
                leftc[:] = 0
                side = np.zeros(d, dtype=np.int64)
                sl = 0.0
                sr = stot
                nl = 0
                for step in range(1, 1 << (d - 1)):
                    j = 0
                    s = step
                    while (s & 1) == 0:
                        s >>= 1
                        j += 1
                    sign = 1 if side[j] == 0 else -1
                    side[j] = 1 - side[j]
                    for q in range(bin_start[j], bin_start[j + 1]):
                        c = keys[q] & cmask
                        m = cnt[f, keys[q]] * sign
                        a = leftc[c]
                        bcount = totc[c] - a
                        sl += float(m) * (2.0 * a + m)
                        sr += float(m) * (m - 2.0 * bcount)
                        leftc[c] = a + m
                    nl += bin_n[j] * sign
                    nr = n - nl
                    if nl < min_leaf or nr < min_leaf:
                        continue
                    gain = sl / nl + sr / nr - base
                    if gain > best_gain:
                        best_gain = gain
                        best_f = f
                        best_t = -1
                        n_best = 0
                        for q in range(d):
                            if side[q] == 1:
                                best_cats[n_best] = bin_id[q]
                                n_best += 1
            else:
                if d * kk * PC_ITERATIONS <= 2 * n:
                    props = np.zeros((d, kk))
                    wts = np.empty(d)
                    for j in range(d):
                        wts[j] = bin_n[j]
                        for q in range(bin_start[j], bin_start[j + 1]):
                            props[j, keys[q] & cmask] = cnt[f, keys[q]] / bin_n[j]
                    seq = _first_pc_order(props, wts, d, kk)
                else:
                    # a small node: order by the share of the node's most frequent class
                    cmax = 0
                    for c in range(kk):
                        if totc[c] > totc[cmax]:
                            cmax = c
                    for j in range(d):
                        cm = 0
                        for q in range(bin_start[j], bin_start[j + 1]):
                            if keys[q] & cmask == cmax:
                                cm = cnt[f, keys[q]]
                        rate[j] = cm / bin_n[j]
                    _order_by(rate, d, seq_buf)
                    seq = seq_buf[:d]
                g, at = _scan_order(seq, keys, bin_start, bin_n, cnt[f], cmask, totc, leftc, stot, n,
                                    min_leaf)
                if at >= 0 and g > best_gain:
                    best_gain = g
                    best_f = f
                    best_t = -1
                    n_best = at + 1
                    for q in range(at + 1):
                        best_cats[q] = bin_id[seq[q]]
        for j in range(k):
            cnt[f, touched[f, j]] = 0
        for j in range(d):
            bnk[f, bin_id[j]] = 0
    best[0] = best_gain
    best[1] = best_f
    best[2] = best_t
    return n_best


@numba.njit(cache=True, nogil=True)
def search_reg(xs, is_cat, y, start, end, min_leaf, cnt, sm, touched, nt, best, best_cats):
    """Best least-squares split of a regression node (one pass over its records for every
    feature, then each feature's bins ordered and cut). Returns the number of categories sent
    left (categorical split, in ``best_cats``)."""
    n = end - start
    p = xs.shape[1]
    nt[:] = 0
    tot = 0.0
    for i in range(start, end):
        v = y[i]
        tot += v
        for f in range(p):
            b = xs[i, f]
            if cnt[f, b] == 0:
                touched[f, nt[f]] = b
                nt[f] += 1
            cnt[f, b] += 1
            sm[f, b] += v
    base = tot * tot / n
    best_gain = 0.0
    best_f = -1
    best_t = -1
    n_best = 0
    score = np.empty(MAX_BINS, dtype=np.float64)
    catbuf = np.empty(MAX_BINS, dtype=np.int64)
    o = np.empty(MAX_BINS, dtype=np.int64)
    bins = np.empty(MAX_BINS, dtype=np.int64)
    for f in range(p):
        k = nt[f]
        if k >= 2:
            for j in range(k):
                bins[j] = touched[f, j]
            _sort_prefix(bins, k)
            if is_cat[f]:
                for j in range(k):
                    score[j] = sm[f, bins[j]] / cnt[f, bins[j]]
                _order_by(score, k, o)
                for j in range(k):
                    catbuf[j] = bins[o[j]]
                for j in range(k):
                    bins[j] = catbuf[j]
            nl = 0
            sl = 0.0
            for j in range(k - 1):
                b = bins[j]
                nl += cnt[f, b]
                sl += sm[f, b]
                nr = n - nl
                if nl < min_leaf:
                    continue
                if nr < min_leaf:
                    break
                sr = tot - sl
                gain = sl * sl / nl + sr * sr / nr - base
                if gain > best_gain:
                    best_gain = gain
                    best_f = f
                    if is_cat[f]:
                        n_best = j + 1
                        for q in range(j + 1):
                            best_cats[q] = bins[q]
                        best_t = -1
                    else:
                        best_t = b
        for j in range(k):
            cnt[f, touched[f, j]] = 0
            sm[f, touched[f, j]] = 0.0
    best[0] = best_gain
    best[1] = best_f
    best[2] = best_t
    return n_best


__all__ = ["EXHAUSTIVE_CATEGORIES", "PC_ITERATIONS", "MAX_BINS", "node_risk_reg", "node_risk_cls", "search_cls",
           "search_reg"]
