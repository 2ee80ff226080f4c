"""The neighbourhood-resampling core of Matloff & Tendick's ``nbrs``, on arrays: the k-NN and
epsilon-ball searches on the mixed metric (:class:`sdckit.risk.metric.MixedMetric`) with a
``scipy.spatial.cKDTree``, the neighbour draws, the distance summary, and the independent checker of a release (:func:`check_neighbours`). The method and
its result are in :mod:`sdckit.masking.neighbours`.

References
----------
Matloff, N. and Tendick, P. (2018). A new method for avoiding data disclosure while
automatically preserving multivariate relations. arXiv:1510.04406 (``nbrs``), sections 2-4.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.spatial import cKDTree

from ..result import Guarantee
from ..risk.metric import values_equal

OWNER = "NeighbourResampling"


# ---------------------------------------------------------------------------------- search
def knn_search(tree: cKDTree, x: np.ndarray, rows: np.ndarray, k: int, workers: int) -> tuple[np.ndarray, np.ndarray]:
    """The k nearest other records of each query row: (m, k) indices and distances.

    Self is removed by index; when ``rows[t]`` is not among the k + 1 returned (more than k
    exact duplicates), the (k + 1)-th is dropped instead.
    """
    d, idx = tree.query(x, k=k + 1, workers=workers)
    d, idx = d.reshape(len(rows), k + 1), idx.reshape(len(rows), k + 1)
    keep = idx != rows[:, None]
    has_self = ~keep.all(axis=1)
    keep[~has_self, -1] = False
    return idx[keep].reshape(len(rows), k), d[keep].reshape(len(rows), k)


def ball_search(tree: cKDTree, x: np.ndarray, rows: np.ndarray, radius: np.ndarray, probe: int,
          workers: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR of the balls S_i = {j != i : d(i, j) <= radius_i}: (offsets (m + 1,), members).

    A bounded k-NN query with ``probe + 1`` neighbours gives the ball exactly when it holds
    fewer than ``probe + 1`` points (self included); the others are listed by query_ball_point.
    """
    m = len(rows)
    kq = min(probe + 1, tree.n)
    bound = float(np.nextafter(radius.max(), np.inf))
    d, idx = tree.query(x, k=kq, distance_upper_bound=bound, workers=workers)
    d, idx = d.reshape(m, kq), idx.reshape(m, kq)
    inside = (d <= radius[:, None]) & (idx != rows[:, None])
    full = (d[:, -1] <= radius) & (kq < tree.n)  # probe exhausted: the ball may hold more
    inside[full] = False
    counts = inside.sum(axis=1)
    extra_rows = np.flatnonzero(full)
    extra_members = np.zeros(0, dtype=np.int64)
    if extra_rows.size:
        lists = tree.query_ball_point(x[extra_rows], radius[extra_rows], workers=workers,
                                      return_sorted=True)
        lens = np.fromiter((len(a) for a in lists), dtype=np.int64, count=len(lists))
        flat = np.fromiter(itertools.chain.from_iterable(lists), dtype=np.int64, count=int(lens.sum()))
        owner = np.repeat(rows[extra_rows], lens)
        keep = flat != owner
        extra_members = flat[keep]
        counts[extra_rows] = np.bincount(np.repeat(np.arange(extra_rows.size), lens)[keep],
                                         minlength=extra_rows.size)
    offsets = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    members = np.empty(int(offsets[-1]), dtype=np.int64)
    # members in increasing row order (the same whichever path found them, so the output does
    # not depend on ``probe``): sort each probe row with non-members pushed to the end
    probe_rows = np.where(inside, idx, tree.n)
    probe_rows.sort(axis=1)
    in_probe = np.repeat(~full, counts)  # destination slots filled from the probe
    members[in_probe] = probe_rows[probe_rows < tree.n]
    if extra_rows.size:
        members[~in_probe] = extra_members
    return offsets, members


def draw_members(offsets: np.ndarray, members: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each row t and variable j the member ranked floor(u[t, j] |S_t|) of S_t (eq. (2):
    one independent uniform draw with replacement per variable); -1 where S_t is empty."""
    c = np.diff(offsets)
    got = c > 0
    rank = np.minimum((u * c[:, None]).astype(np.int64), np.maximum(c[:, None] - 1, 0))
    out = np.full(u.shape, -1, dtype=np.int64)
    out[got] = members[(offsets[:-1, None] + rank)[got]]
    return out, c


def grouped_ball_draws(x: np.ndarray, n_cont: int, comb: np.ndarray, first: np.ndarray,
                        sel: np.ndarray, radius: np.ndarray, u: np.ndarray, src: np.ndarray,
                        count: np.ndarray, probe: int, chunk: int, workers: int) -> None:
    """Ball draws searched by categorical combination (fills ``src`` and ``count``).

    The distance splits as d^2 = d_cont^2 + D^2[g, h], D[g, h] the distance between the
    categorical parts of combinations g and h. A record of g has in h exactly the records
    with d_cont <= sqrt(eps_i^2 - D^2[g, h]), so each partner h with D[g, h] <= eps_i is one
    KD-tree query on the continuous coordinates only. Members are merged in increasing row
    order, as :func:`ball_search` gives them, so the draws equal the single-tree search's.
    """
    n = x.shape[0]
    xc = np.ascontiguousarray(x[:, :n_cont])
    rep = x[first, n_cont:]  # categorical coordinates of each combination
    d2 = np.zeros((first.size, first.size))
    for j in range(rep.shape[1]):
        d2 += (rep[:, j, None] - rep[None, :, j]) ** 2
    order = np.argsort(comb, kind="stable")  # each combination's records in row order
    bounds = np.concatenate([[0], np.cumsum(np.bincount(comb, minlength=first.size))])
    position = np.empty(n, dtype=np.int64)
    position[order] = np.arange(n) - bounds[comb[order]]  # rank of a record within its combination
    trees: dict[int, cKDTree] = {}
    sel_comb = comb[sel]
    by_comb = np.argsort(sel_comb, kind="stable")
    sel_bounds = np.concatenate([[0], np.cumsum(np.bincount(sel_comb, minlength=first.size))])
    for g in np.flatnonzero(np.diff(sel_bounds)):
        positions = by_comb[sel_bounds[g]:sel_bounds[g + 1]]  # places in sel, increasing
        r_max = radius[sel[positions]].max()
        partners = np.flatnonzero(d2[g] <= r_max * r_max)
        for s in range(0, positions.size, chunk):
            pos = positions[s:s + chunk]
            rows = sel[pos]
            keys = []
            for h in partners:
                rr2 = radius[rows] ** 2 - d2[g, h]
                ok = np.flatnonzero(rr2 >= 0)
                if ok.size == 0:
                    continue
                members_h = order[bounds[h]:bounds[h + 1]]
                if n_cont == 0:  # no continuous part: every record of h is within reach
                    local_off = np.arange(ok.size + 1, dtype=np.int64) * members_h.size
                    local = np.tile(np.arange(members_h.size), ok.size)
                    if h == g:
                        keep = local != np.repeat(position[rows[ok]], members_h.size)
                        local_off = np.concatenate([[0], np.cumsum(np.full(ok.size, members_h.size - 1))])
                        local = local[keep]
                else:
                    if h not in trees:
                        trees[h] = cKDTree(xc[members_h])
                    self_local = position[rows[ok]] if h == g else np.full(ok.size, -1)
                    local_off, local = ball_search(trees[h], xc[rows[ok]], self_local, np.sqrt(rr2[ok]),
                                             probe, workers)
                owner = np.repeat(ok, np.diff(local_off))
                keys.append(owner * n + members_h[local])
            key = np.sort(np.concatenate(keys)) if keys else np.zeros(0, dtype=np.int64)
            c = np.bincount(key // n, minlength=pos.size)
            offsets = np.concatenate([[0], np.cumsum(c)])
            src[pos], count[pos] = draw_members(offsets, key % n, u[pos])


def distance_summary(x: np.ndarray, *, sample: int = 10_000, ks: Sequence[int] = (1, 5, 20),
                     seed: int = 0) -> dict:
    """Quantiles of the distance to the 1st, 5th, 20th nearest other record (on a sample).

    Used to suggest an epsilon: the 90% quantile of the 1st-neighbour distance gives 90% of
    the records at least one neighbour.
    """
    n = x.shape[0]
    tree = cKDTree(x)
    rows = np.sort(np.random.default_rng(seed).choice(n, size=min(n, sample), replace=False))
    kmax = min(max(ks), n - 1)
    if kmax < 1:
        return {}
    _, d = knn_search(tree, x[rows], rows, kmax, 1)
    out = {}
    for k in ks:
        if k <= kmax:
            q = np.quantile(d[:, k - 1], [0.1, 0.5, 0.9])
            out[f"d{k}"] = {"q10": float(q[0]), "median": float(q[1]), "q90": float(q[2])}
    return out


# ---------------------------------------------------------------------------------- checker
class PairDistance:
    """Distance between records of one frame by the closed pairwise form of the metric.

    d^2 = sum over continuous v of (w_v (x_av - x_bv) / sd_v)^2 + sum over categorical v with
    different categories c != c' of w_v^2 (1/var_c + 1/var_c') / 2 (var_c: variance, n - 1,
    of the dummy of c; for two categories this is w^2 / var). Constant variables add 0. It
    does not use :class:`MixedMetric`'s coordinates, so it checks them.
    """

    def __init__(self, frame: pd.DataFrame, variables: Sequence[str], categorical: Sequence[str],
                 weights: Mapping[str, float]) -> None:
        n = len(frame)
        self.parts = []
        for v in variables:
            w = float(weights.get(v, 1.0))
            if v in categorical:
                codes, uniq = pd.factorize(frame[v], sort=True, use_na_sentinel=False)
                if len(uniq) < 2:
                    continue
                pc = np.bincount(codes, minlength=len(uniq)) / n
                self.parts.append(("cat", codes, w * w / (pc * (1 - pc) * n / (n - 1)) / 2))
            else:
                x = frame[v].to_numpy(dtype=np.float64, na_value=np.nan)
                sd = np.std(x, ddof=1)
                if sd > 1e-12 * max(1.0, abs(float(np.mean(x)))):
                    self.parts.append(("num", x * (w / sd), None))

    def __call__(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        d2 = np.zeros(np.broadcast_shapes(np.shape(a), np.shape(b)))
        for kind, values, half_inv_var in self.parts:
            if kind == "num":
                d2 += (values[a] - values[b]) ** 2
            else:
                ca, cb = values[a], values[b]
                d2 += np.where(ca != cb, half_inv_var[ca] + half_inv_var[cb], 0.0)
        return np.sqrt(d2)


def check_neighbours(original: pd.DataFrame, released: pd.DataFrame, variables: Sequence[str],
                     categorical: Sequence[str], weights: Mapping[str, float], source: np.ndarray,
                     selected: np.ndarray, suppressed: np.ndarray, radius: np.ndarray,
                     fallback: np.ndarray, *, knn: bool, k: int,
                     expected_selected: int | None = None, knn_check_budget: float = 2e7) -> list[Guarantee]:
    """Independent checks of a neighbourhood resampling on the data before and after.

    Verifies, value by value, that each released value of a modified record is the original
    value of the same variable in its ``source`` record, that the source is another record at
    distance <= the record's radius (recomputed by :class:`PairDistance`), and, for k-NN
    neighbourhoods, that the radius is the k-th neighbour distance (brute force on a sample
    whose size keeps the work under ``knn_check_budget`` distance terms).
    """
    n = len(original)
    p = len(variables)
    modified = selected & ~suppressed
    rows = np.flatnonzero(modified)
    # 1. values come from the named source record, variable by variable
    same_value = True
    for j, v in enumerate(variables):
        same_value &= bool(values_equal(original[v].take(source[rows, j]), released[v].iloc[rows]).all())
    # 2. the source is another record within the radius
    pair = PairDistance(original, variables, categorical, weights)
    not_self, within, worst = True, True, -np.inf
    for s in range(0, rows.size, 1 + 2_000_000 // max(1, p)):  # blocks bound the memory
        block = rows[s:s + 1 + 2_000_000 // max(1, p)]
        ii = np.repeat(block, p)
        ss = source[block].ravel()
        not_self &= bool((ss != ii).all())
        excess = pair(ii, ss) - radius[ii]
        within &= bool((excess <= 1e-9 * np.maximum(1.0, radius[ii])).all())
        worst = max(worst, float(excess.max()) if excess.size else -np.inf)
    worst = 0.0 if not np.isfinite(worst) else worst
    # 3. k-NN radii are the k-th neighbour distance (brute force on a sample)
    knn_rows = np.flatnonzero(modified & (fallback | knn))
    knn_ok, n_knn_checked = True, 0
    if knn_rows.size:
        budget = max(5, int(knn_check_budget // max(1, n * p)))
        check = knn_rows[np.linspace(0, knn_rows.size - 1, min(budget, knn_rows.size)).astype(int)]
        for i in np.unique(check):
            d = pair(i, np.delete(np.arange(n), i))
            kth = np.partition(d, k - 1)[k - 1]
            knn_ok &= bool(abs(kth - radius[i]) <= 1e-9 * max(1.0, kth))
            n_knn_checked += 1
    # 4. untouched and suppressed records
    keep = np.flatnonzero(~selected)
    unchanged = True
    for v in original.columns:
        unchanged &= bool(values_equal(original[v].iloc[keep], released[v].iloc[keep]).all())
    others = [c for c in original.columns if c not in variables]
    rest_same = all(original[c].equals(released[c]) for c in others)
    supp = np.flatnonzero(suppressed)
    all_missing = all(bool(released[v].iloc[supp].isna().all()) for v in variables)
    # 5. categorical values are categories of the input
    valid = all(bool(released[v].dropna().isin(original[v].dropna().unique()).all()) for v in categorical)
    g = [
        Guarantee("values_from_neighbours",
                  "each released value of a modified record is that variable's original value "
                  "in another record of its neighbourhood", same_value and not_self,
                  same_value and not_self),
        Guarantee("within_radius", "each such neighbour lies within the record's radius "
                  "(eps_i, or its k-th neighbour distance for k-NN neighbourhoods); largest excess",
                  worst, within),
        Guarantee("unmodified_identical", "records not selected are identical to the input, and "
                  "columns not resampled are unchanged", unchanged and rest_same, unchanged and rest_same),
        Guarantee("suppressed_missing", "suppressed records are missing in every resampled variable",
                  int(supp.size), all_missing),
        Guarantee("valid_categories", "released categorical values are categories of the input",
                  valid, valid),
    ]
    if knn_rows.size:
        g.append(Guarantee("knn_radius", "k-NN neighbourhoods end at the k-th neighbour distance "
                           "(brute force on records checked)", n_knn_checked, knn_ok))
    if expected_selected is not None:
        g.append(Guarantee("selected_count", f"exactly floor(n q) = {expected_selected} records selected",
                           int(selected.sum()), int(selected.sum()) == expected_selected))
    return g
