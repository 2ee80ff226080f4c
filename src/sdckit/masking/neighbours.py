"""Neighbourhood resampling of mixed data (Matloff & Tendick's ``nbrs``).

Each selected record i is replaced, variable by variable, by the value of an independently
drawn neighbour: for j = 1..p draw a record a_j from the set S_i of records within distance
epsilon of record i (record i itself excluded) and release W'_ij = W_{a_j, j} (seed 003,
section 2, eq. (2)). The conditional independence of the draws does not break the dependence
between variables: as epsilon -> 0 the joint law of the released record tends to that of the
original data (section 3, eqs. (4)-(12)), so the multivariate structure of continuous,
categorical and mixed data is kept without modelling it.

Distance (section 4): Euclidean on standardised variables (sd with n - 1, as R's ``scale``),
each variable's coordinate multiplied by its weight (``wts``). Categorical variables are coded
inside the method and their released values are values of real neighbours, so they are always
valid categories: a binary variable becomes one standardised dummy (exactly the paper's coding
of sex, ms and phd); a variable with c > 2 categories becomes c standardised dummies, each
multiplied by 1/sqrt(2), so two categories a, b lie at distance
w * sqrt((1/var_a + 1/var_b) / 2): the single-dummy distance w / sd when c = 2.

Neighbour search: a ``scipy.spatial.cKDTree``, never an n x n matrix. The ball S_i is read
from a k-nearest-neighbour query of ``probe`` neighbours bounded by epsilon (fixed-size
arrays, vectorised); only records whose ball holds more than ``probe`` records get their
ball listed by ``query_ball_point``. The draws are uniform numbers drawn once for all
(selected record, variable) pairs, so the output does not depend on the chunk size or the
number of workers.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.spatial import cKDTree

from .._random import seed_sequence
from .._validation import check_float, close_names, param_error
from ..errors import InputError
from ..microdata import Microdata
from ..params import check_params, param
from ..result import Guarantee, StepResult

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


# ---------------------------------------------------------------------------------- result
@dataclass(frozen=True)
class NeighbourResult(StepResult):
    """Neighbourhood resampling result.

    Attributes
    ----------
    source : ndarray (n, p) int64
        Row whose value each released value is: ``source[i, j]`` for variable j; ``i`` for
        records left unchanged, ``-1`` for suppressed ones.
    selected, suppressed, fallback : ndarray of bool (n,)
        Records chosen for modification (q), records set to missing (no neighbour, policy
        "suppress"), records whose neighbourhood came from the k-NN fallback.
    n_neighbours : ndarray (n,) int64
        |S_i| for selected records (0 otherwise).
    radius : ndarray (n,) float64
        Radius of S_i (epsilon_i, or the k-th neighbour distance for k-NN neighbourhoods).
    variables : tuple of str
        Resampled variables, in the column order of ``source``.
    metric : MixedMetric
        The distance used.
    """

    source: np.ndarray | None = None
    selected: np.ndarray | None = None
    suppressed: np.ndarray | None = None
    fallback: np.ndarray | None = None
    n_neighbours: np.ndarray | None = None
    radius: np.ndarray | None = None
    variables: tuple[str, ...] = ()
    metric: MixedMetric | None = None


# ---------------------------------------------------------------------------------- method
@dataclass(frozen=True)
class NeighbourResampling:
    """Replace each selected record's values by values of independently drawn neighbours.

    Parameters
    ----------
    eps : float > 0, optional
        Neighbourhood radius epsilon on the standardised, weighted scale (required unless
        ``neighbourhood="knn"`` or ``eps_column`` is given).
    q : float in (0, 1]
        Share of records modified (``modprop``).
    selection : {"exact", "bernoulli"}
        ``"exact"`` (default, as the published code ``nbrs``): exactly floor(n q) records
        chosen at random without replacement. ``"bernoulli"`` (as the paper's text): each
        record independently with probability q.
    variables : list of str
        Variables used in the distance and resampled (default: every column except the
        weight and household roles). Other columns are left as they are.
    categorical : list of str, optional
        Variables treated as categories (coded as dummies in the distance). Default: the key
        variables among ``variables`` and every non-numeric column.
    weights : mapping column -> float >= 0
        Per-variable weight of the standardised coordinate (``wts``); default 1. Weight 0
        leaves a variable out of the distance (it is still resampled).
    neighbourhood : {"radius", "knn"}
        ``"radius"``: S_i = records within eps_i (section 2). ``"knn"``: the k nearest other
        records (section 8), never empty.
    k : int >= 1
        Neighbourhood size for ``"knn"`` and for the ``no_neighbour="knn"`` fallback.
    no_neighbour : {"suppress", "knn"}
        A selected record with no neighbour within eps: ``"suppress"`` sets all its
        ``variables`` to missing (the paper's NA record); ``"knn"`` resamples it from its k
        nearest records instead.
    min_neighbours : int >= 1, optional
        Per-record radius (section 8): eps_i = max(eps, distance to the m-th nearest other
        record), so every neighbourhood holds at least m records.
    eps_column : str, optional
        Per-record radius read from this numeric column (it takes no part in the distance and
        is not resampled); combined with ``min_neighbours`` when both are given.
    probe : int >= 1
        Ball members read from the bounded k-NN query before ``query_ball_point`` lists a
        ball; changes speed only, never the output.
    max_groups : int >= 0
        Search by categorical combination (one KD-tree on the continuous coordinates per
        combination, partner combinations within eps) when the categorical variables form at
        most this many combinations; otherwise one KD-tree on all coordinates. Speed only:
        both searches give the same output.
    chunk_size : int >= 1
        Records queried at a time (memory: about chunk_size * probe * 16 bytes).
    workers : int
        Threads of the KD-tree queries (-1 = all cores); changes speed only.

    Notes
    -----
    Guarantees (checked on the output by :func:`check_neighbours`, which recomputes every
    distance from a closed pairwise formula, independent of the coordinates used here):
    every released value of a modified record equals the original value of the same variable
    in a record at distance <= eps_i from it (or among its k nearest for k-NN
    neighbourhoods), never the record itself; unmodified records are identical; suppressed
    records are missing in every resampled variable; categorical values are categories of
    the input; the number of modified records is floor(n q) for ``selection="exact"``.

    References
    ----------
    Matloff, N. and Tendick, P. (2018). A new method for avoiding data disclosure while
    automatically preserving multivariate relations. arXiv:1510.04406; R code ``nbrs`` in
    github.com/matloff/statdb (Neighbors.R).
    """

    eps: float | None = param(None, kind="float", low=0.0, low_open=True, nullable=True,
                              symbol="epsilon", grid=(0.1, 0.2, 0.3, 0.5),
                              unit="standardised, weighted distance",
                              help="neighbourhood radius (required for radius neighbourhoods "
                                   "without eps_column)")
    q: float = param(1.0, kind="float", low=0.0, high=1.0, low_open=True, symbol="q",
                     unit="share of records", grid=(0.25, 0.5, 1.0),
                     help="share of records modified (modprop)")
    selection: str = param("exact", kind="choice", choices=("exact", "bernoulli"),
                           help="exactly floor(n q) records, or each record with probability q")
    variables: Sequence[str] = param((), kind="columns",
                                     help="variables in the distance and resampled (default: all "
                                          "but the weight and household roles)")
    categorical: Sequence[str] | None = param(None, kind="columns", nullable=True, allow_empty=True,
                                              help="variables treated as categories (default: key "
                                                   "variables and non-numeric columns)")
    weights: Mapping[str, float] = param({}, kind="mapping",
                                         help="per-variable weight >= 0 of the standardised "
                                              "coordinate (wts); default 1")
    neighbourhood: str = param("radius", kind="choice", choices=("radius", "knn"),
                               help="records within eps, or the k nearest other records")
    k: int = param(10, kind="int", low=1, unit="records", symbol="k",
                   help="neighbourhood size for knn and for the no_neighbour='knn' fallback")
    no_neighbour: str = param("suppress", kind="choice", choices=("suppress", "knn"),
                              help="a selected record with no neighbour within eps: set missing, "
                                   "or resample from its k nearest")
    min_neighbours: int | None = param(None, kind="int", low=1, nullable=True, symbol="m",
                                       unit="records",
                                       help="per-record radius reaching at least this many records")
    eps_column: str | None = param(None, kind="column", nullable=True, advanced=True,
                                   help="numeric column holding a per-record radius")
    probe: int = param(32, kind="int", low=1, advanced=True,
                       help="ball members read by the bounded k-NN query (speed only)")
    max_groups: int = param(4096, kind="int", low=0, advanced=True,
                            help="search per categorical combination up to this many combinations "
                                 "(speed only)")
    chunk_size: int = param(65_536, kind="int", low=1, unit="records", advanced=True,
                            help="records queried at a time (memory only)")
    workers: int = param(1, kind="int", low=-1, advanced=True,
                         help="threads of the KD-tree queries, -1 = all cores (speed only)")

    def __post_init__(self) -> None:
        check_params(self)
        owner = type(self).__name__
        if self.eps is None and self.neighbourhood == "radius" and self.eps_column is None:
            raise param_error(owner, "eps", "a number > 0 (the neighbourhood radius) for "
                              "neighbourhood 'radius' without eps_column", self.eps)
        for name, w in self.weights.items():
            check_float(owner, f"weights[{name!r}]", w, low=0.0)
        object.__setattr__(self, "weights", {str(k): float(v) for k, v in self.weights.items()})
        if self.workers == 0:
            raise param_error(owner, "workers", "an int >= 1 or -1 (all cores)", self.workers)

    # ------------------------------------------------------------------ set-up
    def _variables(self, md: Microdata) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
        cols = md.columns
        skip = {md.weight, md.household, self.eps_column} - {None}
        variables = self.variables or tuple(c for c in cols if c not in skip)
        for v in variables:
            if v not in cols:
                raise InputError(f"neighbours: variable {v!r} does not exist; {close_names(v, cols)}")
        if self.eps_column is not None:
            if self.eps_column not in cols:
                raise InputError(f"neighbours: eps_column {self.eps_column!r} does not exist; "
                                 f"{close_names(self.eps_column, cols)}")
            if self.eps_column in variables:
                raise InputError(f"neighbours: eps_column {self.eps_column!r} cannot also be a "
                                 "resampled variable; take it out of 'variables'.")
        for name in self.weights:
            if name not in variables:
                where = "is not one of the resampled variables" if name in cols else "does not exist"
                raise InputError(f"neighbours: weights name column {name!r}, which {where}; "
                                 f"{close_names(name, variables)}")
        frame = md.frame
        if self.categorical is None:
            cat = tuple(v for v in variables if v in md.key_vars
                        or not pd.api.types.is_numeric_dtype(frame[v])
                        or pd.api.types.is_bool_dtype(frame[v]))
        else:
            for v in self.categorical:
                if v not in variables:
                    raise InputError(f"neighbours: categorical column {v!r} is not one of the "
                                     f"resampled variables; {close_names(v, variables)}")
            cat = tuple(self.categorical)
        cont = tuple(v for v in variables if v not in cat)
        for v in cont:
            if not pd.api.types.is_numeric_dtype(frame[v]) or pd.api.types.is_bool_dtype(frame[v]):
                raise InputError(f"neighbours: column {v!r} is not numeric; list it in 'categorical'.")
        return tuple(variables), cont, cat

    def _radius(self, md: Microdata, x: np.ndarray, tree) -> np.ndarray:
        n = md.n_records
        radius = np.full(n, np.inf if self.eps is None else float(self.eps))
        if self.eps_column is not None:
            col = pd.to_numeric(md.frame[self.eps_column], errors="coerce").to_numpy(np.float64, na_value=np.nan)
            bad = np.flatnonzero(~(col > 0) | ~np.isfinite(col))
            if bad.size:
                raise InputError(f"neighbours: eps_column {self.eps_column!r} must hold finite numbers "
                                 f"> 0; {bad.size} records do not (first row {md.frame.index[bad[0]]!r}).")
            radius = np.minimum(radius, col) if self.eps is not None else col
        if self.min_neighbours is not None:
            m = min(self.min_neighbours, n - 1)
            dm = np.empty(n)
            for s in range(0, n, self.chunk_size):  # eps_i = max(eps, d_m(i))  (section 8)
                rows = np.arange(s, min(n, s + self.chunk_size))
                _, d = _knn(tree(), x[rows], rows, m, self.workers)
                dm[rows] = d[:, -1]
            radius = dm if (self.eps is None and self.eps_column is None) else np.maximum(radius, dm)
        return radius

    # ------------------------------------------------------------------ apply
    def apply(self, microdata: Microdata, *, rng: Any = None) -> NeighbourResult:
        variables, cont, cat = self._variables(microdata)
        n, p = microdata.n_records, len(variables)
        if n < 2:
            raise InputError("neighbours: needs at least 2 records (a record is never its own neighbour).")
        ss, record = seed_sequence(rng)
        select_ss, draw_ss = ss.spawn(2)
        frame = microdata.frame
        metric = MixedMetric.fit(frame, cont, cat, self.weights)
        notes = [f"{v!r} takes no part in the distance: {why}" for v, why in metric.excluded.items()]
        if metric.n_dims == 0:
            raise InputError("neighbours: every variable is constant or has weight 0; there is no "
                             "distance to find neighbours by.")
        x = metric.transform(frame)
        trees: dict[str, cKDTree] = {}

        def full_tree() -> cKDTree:  # built only when a k-NN query needs it
            if "full" not in trees:
                trees["full"] = cKDTree(x)
            return trees["full"]

        # which records are modified: floor(n q) at random, or each with probability q
        gsel = np.random.default_rng(select_ss)
        if self.selection == "exact":
            sel = np.sort(gsel.choice(n, size=int(math.floor(n * self.q)), replace=False))
        else:
            sel = np.flatnonzero(gsel.random(n) < self.q)
        u = np.random.default_rng(draw_ss).random((sel.size, p))  # one uniform per (i, j)

        k = min(self.k, n - 1)
        src = np.full((sel.size, p), -1, dtype=np.int64)
        count = np.zeros(sel.size, dtype=np.int64)
        used_radius = np.zeros(sel.size)
        fallback = np.zeros(sel.size, dtype=bool)
        path = "knn"
        if self.neighbourhood == "knn":
            for s in range(0, sel.size, self.chunk_size):
                part = slice(s, min(sel.size, s + self.chunk_size))
                rows = sel[part]
                nbr, d = _knn(full_tree(), x[rows], rows, k, self.workers)
                src[part] = nbr[np.arange(rows.size)[:, None], (u[part] * k).astype(np.int64)]
                count[part], used_radius[part] = k, d[:, -1]
        else:
            radius = self._radius(microdata, x, full_tree)
            used_radius = radius[sel]
            radius = radius * (1 + 1e-10)  # a boundary point counts in whichever way d is rounded
            comb, first = metric.combinations(frame)
            if first.size <= self.max_groups:
                path = "grouped"
                _grouped_ball_draws(x, metric.n_continuous, comb, first, sel, radius, u, src, count,
                                    self.probe, self.chunk_size, self.workers)
            else:
                path = "tree"
                for s in range(0, sel.size, self.chunk_size):
                    part = slice(s, min(sel.size, s + self.chunk_size))
                    rows = sel[part]
                    offsets, members = _ball(full_tree(), x[rows], rows, radius[rows], self.probe,
                                             self.workers)
                    src[part], count[part] = _draw(offsets, members, u[part])
            lonely = np.flatnonzero(count == 0)
            if lonely.size and self.no_neighbour == "knn":
                for s in range(0, lonely.size, self.chunk_size):
                    t = lonely[s:s + self.chunk_size]
                    nbr, d = _knn(full_tree(), x[sel[t]], sel[t], k, self.workers)
                    src[t] = nbr[np.arange(t.size)[:, None], (u[t] * k).astype(np.int64)]
                    count[t], used_radius[t], fallback[t] = k, d[:, -1], True
        notes.append(f"neighbour search: {path}"
                     + (f" ({first.size} categorical combinations)" if path == "grouped" else ""))

        if self.neighbourhood == "radius" and self.no_neighbour == "suppress" and sel.size \
                and not count.any():
            ds = distance_summary(x)
            d1 = ds.get("d1", {})
            raise InputError(
                f"neighbours: none of the {sel.size} selected records has a neighbour within "
                f"eps = {self.eps}; every one would be suppressed. Distances to the nearest other "
                f"record: median {d1.get('median', float('nan')):.4g}, 90% quantile "
                f"{d1.get('q90', float('nan')):.4g}; try eps = {d1.get('q90', float('nan')):.3g} "
                f"(gives 90% of records a neighbour), lower the weights of categorical variables, "
                f"or use no_neighbour = 'knn'.")

        return self._release(microdata, variables, cat, metric, sel, src, count, used_radius,
                             fallback, notes, record)

    def _release(self, md: Microdata, variables, cat, metric, sel, src, count, used_radius,
                 fallback, notes, record) -> NeighbourResult:
        n, p = md.n_records, len(variables)
        frame = md.frame
        source = np.tile(np.arange(n, dtype=np.int64)[:, None], (1, p))
        source[sel] = src
        suppressed = np.zeros(n, dtype=bool)
        suppressed[sel] = (src < 0).all(axis=1) if p else False
        selected = np.zeros(n, dtype=bool)
        selected[sel] = True
        n_nb = np.zeros(n, dtype=np.int64)
        n_nb[sel] = count
        rad = np.zeros(n)
        rad[sel] = used_radius
        fb = np.zeros(n, dtype=bool)
        fb[sel] = fallback

        key_codes, columns = {}, {}
        take = np.where(source < 0, 0, source)
        for j, v in enumerate(variables):
            if v in md.key_vars:
                codes = md.codes(v)[take[:, j]]
                codes[suppressed] = -1
                key_codes[v] = codes
                continue
            col = frame[v].take(take[:, j])
            col.index = frame.index
            if suppressed.any():
                if pd.api.types.is_integer_dtype(col.dtype) and not isinstance(col.dtype, pd.CategoricalDtype):
                    col = col.astype("Int64")
                elif pd.api.types.is_bool_dtype(col.dtype):
                    col = col.astype("boolean")
                col = col.mask(suppressed)
            columns[v] = col
        out = md.with_codes(key_codes) if key_codes else md
        out = out.with_columns(columns) if columns else out

        guarantees = check_neighbours(frame, out.frame, variables, cat, self.weights, source,
                                      selected, suppressed, rad, fb, knn=(self.neighbourhood == "knn"),
                                      k=min(self.k, n - 1),
                                      expected_selected=(int(math.floor(n * self.q))
                                                         if self.selection == "exact" else None))
        modified = selected & ~suppressed
        changed = np.zeros(n, dtype=bool)
        for v in variables:
            a, b = frame[v], out.frame[v]
            changed |= ~values_equal(a, b)
        sizes = count[count > 0] if count.size else count
        summary = {
            "n_records": n, "variables": list(variables), "categorical": list(cat),
            "distance_dims": metric.n_dims,
            "records_selected": int(selected.sum()), "records_resampled": int(modified.sum()),
            "records_suppressed": int(suppressed.sum()), "suppressed_share": float(suppressed.mean()),
            "records_knn_fallback": int(fb.sum()),
            "records_changed": int(changed.sum()),
            "values_changed_share": float(np.mean([(~values_equal(frame[v], out.frame[v])).mean()
                                                   for v in variables])) if variables else 0.0,
            "neighbours_mean": float(sizes.mean()) if sizes.size else 0.0,
            "neighbours_median": float(np.median(sizes)) if sizes.size else 0.0,
            "neighbours_min": int(sizes.min()) if sizes.size else 0,
            "notes": notes,
        }
        params = {"eps": self.eps, "q": self.q, "selection": self.selection,
                  "variables": list(variables), "categorical": list(cat), "weights": dict(self.weights),
                  "neighbourhood": self.neighbourhood, "k": self.k, "no_neighbour": self.no_neighbour,
                  "min_neighbours": self.min_neighbours, "eps_column": self.eps_column}
        return NeighbourResult("neighbours", out, params, summary, tuple(guarantees), record,
                               source=source, selected=selected, suppressed=suppressed,
                               fallback=fb, n_neighbours=n_nb, radius=rad,
                               variables=tuple(variables), metric=metric)


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
