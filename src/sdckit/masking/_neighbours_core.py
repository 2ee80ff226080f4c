"""The neighbourhood-resampling core of Matloff & Tendick's ``nbrs``, on arrays: the mixed
metric (standardised continuous variables, categorical ones as scaled dummies), the k-NN and
epsilon-ball searches with a ``scipy.spatial.cKDTree``, the neighbour draws, the distance
summary, and the independent checker of a release (:func:`check_neighbours`). The method and
its result are in :mod:`sdckit.masking.neighbours`.

References
----------
Matloff, N. and Tendick, P. (2018). A new method for avoiding data disclosure while
automatically preserving multivariate relations. arXiv:1510.04406 (``nbrs``), sections 2-4.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.spatial import cKDTree

from ..errors import InputError
from ..result import Guarantee


OWNER = "NeighbourResampling"


# ---------------------------------------------------------------------------------- metric
@dataclass(frozen=True)
class MixedMetric:
    """Standardised, weighted coordinates of mixed data (section 4's metric M).

    Built from a reference frame with :meth:`fit`; :meth:`transform` maps any frame with the
    same columns to coordinates on the reference's scale (NaN rows where a continuous value
    is missing). Euclidean distance between coordinate rows is the method's distance.

    Attributes
    ----------
    continuous, categorical : tuple of str
        Variables used in the distance, by kind (constant or zero-weight ones left out).
    excluded : dict
        Variable -> reason it takes no part in the distance (constant, weight 0).
    """

    continuous: tuple[str, ...]
    categorical: tuple[str, ...]
    weights: Mapping[str, float]
    centre: Mapping[str, float]
    scale: Mapping[str, float]
    levels: Mapping[str, tuple]
    level_mean: Mapping[str, np.ndarray]
    level_sd: Mapping[str, np.ndarray]
    excluded: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def fit(cls, frame: pd.DataFrame, continuous: Sequence[str], categorical: Sequence[str],
            weights: Mapping[str, float] | None = None, *, where: str = "neighbours") -> "MixedMetric":
        weights = dict(weights or {})
        n = len(frame)
        cont, cat, excluded = [], [], {}
        centre, scale, levels, lmean, lsd = {}, {}, {}, {}, {}
        for v in continuous:
            x = pd.to_numeric(frame[v], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
            bad = np.flatnonzero(~np.isfinite(x))
            if bad.size:
                raise InputError(f"{where}: continuous variable {v!r} is missing or not finite in "
                                 f"{bad.size} records (first row {frame.index[bad[0]]!r}); distances "
                                 "need every value: impute or drop those records, or declare "
                                 f"{v!r} categorical.")
            sd = float(np.std(x, ddof=1)) if n > 1 else 0.0
            if weights.get(v, 1.0) == 0.0:
                excluded[v] = "weight 0"
            elif not sd > 1e-12 * max(1.0, abs(float(np.mean(x)))):
                excluded[v] = "constant (cannot be standardised)"
            else:
                cont.append(v)
                centre[v], scale[v] = float(np.mean(x)), sd
        for v in categorical:
            codes, uniq = pd.factorize(frame[v], sort=True, use_na_sentinel=False)
            c = len(uniq)
            if weights.get(v, 1.0) == 0.0:
                excluded[v] = "weight 0"
                continue
            if c < 2 or n < 2:
                excluded[v] = "constant (a single category)"
                continue
            p = np.bincount(codes, minlength=c) / n
            sd = np.sqrt(p * (1 - p) * n / (n - 1))  # sd of each dummy, n - 1 as R's scale()
            cat.append(v)
            levels[v] = tuple(uniq)
            lmean[v], lsd[v] = p, sd
        return cls(tuple(cont), tuple(cat), {v: float(weights.get(v, 1.0)) for v in (*cont, *cat)},
                   centre, scale, levels, lmean, lsd, excluded)

    @property
    def variables(self) -> tuple[str, ...]:
        return self.continuous + self.categorical

    @property
    def n_continuous(self) -> int:
        """Continuous coordinates come first in :meth:`transform`'s columns."""
        return len(self.continuous)

    @property
    def n_dims(self) -> int:
        return len(self.continuous) + sum(1 if len(self.levels[v]) == 2 else len(self.levels[v])
                                          for v in self.categorical)

    def codes(self, frame: pd.DataFrame, v: str) -> np.ndarray:
        """Index of each record's category of ``v`` in the reference's levels; missing values
        are a category of their own when the reference had them, else -1 (as unknown values)."""
        lv = self.levels[v]
        codes = pd.Index(lv).get_indexer(pd.Index(frame[v]))
        miss = pd.isna(frame[v]).to_numpy()
        nan_code = next((i for i, x in enumerate(lv) if pd.isna(x)), -1)
        return np.where(miss, nan_code, codes).astype(np.int64)

    def combinations(self, frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """Dense id of each record's combination of categorical values (in the distance), and
        the first record of each combination."""
        ids = np.zeros(len(frame), dtype=np.int64)
        for v in self.categorical:
            code = ids * (len(self.levels[v]) + 1) + (self.codes(frame, v) + 1)
            _, ids = np.unique(code, return_inverse=True)
        _, first, ids = np.unique(ids, return_index=True, return_inverse=True)
        return ids.astype(np.int64).ravel(), first

    def transform(self, frame: pd.DataFrame) -> np.ndarray:
        """Coordinates (n, n_dims) float64: w * (x - mean) / sd per continuous variable, and the
        weighted standardised dummies of each categorical variable (1/sqrt(2) for c > 2)."""
        n = len(frame)
        out = np.empty((n, self.n_dims), dtype=np.float64)
        col = 0
        for v in self.continuous:
            x = pd.to_numeric(frame[v], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
            out[:, col] = self.weights[v] * (x - self.centre[v]) / self.scale[v]
            col += 1
        for v in self.categorical:
            lv = self.levels[v]
            codes = self.codes(frame, v)  # -1: unknown or missing -> NaN coordinates
            w, p, sd = self.weights[v], self.level_mean[v], self.level_sd[v]
            use = [1] if len(lv) == 2 else range(len(lv))
            factor = w if len(lv) == 2 else w / math.sqrt(2.0)
            for c in use:
                out[:, col] = factor * ((codes == c) - p[c]) / sd[c]
                out[codes < 0, col] = np.nan
                col += 1
        return out


def values_equal(a: pd.Series, b: pd.Series) -> np.ndarray:
    """Element-wise equality of two aligned columns (by position), missing == missing."""
    a, b = a.reset_index(drop=True), b.reset_index(drop=True)
    if isinstance(a.dtype, pd.CategoricalDtype) or isinstance(b.dtype, pd.CategoricalDtype):
        a, b = a.astype(object), b.astype(object)
    both = (a.isna() & b.isna()).to_numpy(dtype=bool)
    eq = (a == b).to_numpy(dtype=bool, na_value=False)
    return eq | both


# ---------------------------------------------------------------------------------- search
def _knn(tree: cKDTree, x: np.ndarray, rows: np.ndarray, k: int, workers: int) -> tuple[np.ndarray, np.ndarray]:
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


def _ball(tree: cKDTree, x: np.ndarray, rows: np.ndarray, radius: np.ndarray, probe: int,
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


def _draw(offsets: np.ndarray, members: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each row t and variable j the member ranked floor(u[t, j] |S_t|) of S_t (eq. (2):
    one independent uniform draw with replacement per variable); -1 where S_t is empty."""
    c = np.diff(offsets)
    got = c > 0
    rank = np.minimum((u * c[:, None]).astype(np.int64), np.maximum(c[:, None] - 1, 0))
    out = np.full(u.shape, -1, dtype=np.int64)
    out[got] = members[(offsets[:-1, None] + rank)[got]]
    return out, c


def _grouped_ball_draws(x: np.ndarray, n_cont: int, comb: np.ndarray, first: np.ndarray,
                        sel: np.ndarray, radius: np.ndarray, u: np.ndarray, src: np.ndarray,
                        count: np.ndarray, probe: int, chunk: int, workers: int) -> None:
    """Ball draws searched by categorical combination (fills ``src`` and ``count``).

    The distance splits as d^2 = d_cont^2 + D^2[g, h], D[g, h] the distance between the
    categorical parts of combinations g and h. A record of g has in h exactly the records
    with d_cont <= sqrt(eps_i^2 - D^2[g, h]), so each partner h with D[g, h] <= eps_i is one
    KD-tree query on the continuous coordinates only. Members are merged in increasing row
    order, as :func:`_ball` gives them, so the draws equal the single-tree search's.
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
                    local_off, local = _ball(trees[h], xc[rows[ok]], self_local, np.sqrt(rr2[ok]),
                                             probe, workers)
                owner = np.repeat(ok, np.diff(local_off))
                keys.append(owner * n + members_h[local])
            key = np.sort(np.concatenate(keys)) if keys else np.zeros(0, dtype=np.int64)
            c = np.bincount(key // n, minlength=pos.size)
            offsets = np.concatenate([[0], np.cumsum(c)])
            src[pos], count[pos] = _draw(offsets, key % n, u[pos])


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
    _, d = _knn(tree, x[rows], rows, kmax, 1)
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
