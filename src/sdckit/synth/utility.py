"""Utility of a synthetic file: propensity scores, table measures, fitted models.

Propensity-score utility (Woo, Reiter, Oganian & Karr 2009; Snoke, Raab, Nowok, Dibben &
Slavkovic 2018): stack the ``n_d`` original and ``n_s`` synthetic records, label them
``t = 0 / 1`` and fit a model of ``t``; with ``c = n_s / N`` and ``p_i`` the fitted
propensities,

    pMSE = sum_i (p_i - c)^2 / N                                   (Snoke et al. 2018, eq. (1))

is 0 when the model cannot tell the files apart. Its expectation when both files come from
the same distribution is, for a logistic model with ``k`` parameters,
``(k - 1) (1 - c)^2 c / N`` (Snoke et al. 2018, section 3.1, eq. (3)), and for a CART model it
is estimated by refitting on randomly permuted labels (synthpop: 50 permutations, the mean
halved); the standardised ``S_pMSE = pMSE / expectation`` is about 1 for a good synthesis.
:func:`propensity_utility` reproduces synthpop's ``utility.gen`` (logit with all two-way
interactions, ``maxorder = 1``; or CART with ``cp = 0.001``, ``minbucket = 5``), including its
handling of the data: numeric columns with missing values get a 0/1 indicator (and the
missing values 0), each special code of ``cont_na`` likewise, missing categories are one
more category, and columns with a single value are left out.

Table utility (synthpop's ``utility.tab``; Raab, Nowok & Dibben 2021): for a table of chosen
variables (numeric ones grouped into ``ngroups`` quantile groups), with ``o`` and ``s`` the
original and synthetic counts of the non-empty cells and ``c = sum(s) / N``:
``VW = sum (s - o c/(1-c))^2 / ((s + o) c)`` (Voas-Williamson), ``FT = 4 sum (sqrt(s) -
sqrt(c/(1-c) o))^2`` (Freeman-Tukey), ``JSD`` (Jensen-Shannon divergence of the two
distributions, base 2), ``SPECKS`` (Kolmogorov-Smirnov statistic of the cell propensities
``s / (s + o)`` of synthetic vs original records), ``U`` (Mann-Whitney statistic of the same),
``G`` (likelihood-ratio statistic), ``pMSE = VW c (1-c)^2 / N``, ``PO50``, ``MabsDD``,
``WMabsDD``, ``dBhatt``, and ``S_x = x / df`` with ``df`` = cells - 1.

Fitted-model comparison (synthpop's ``compare.fit.synds``; Karr, Kohnen, Oganian, Reiter &
Sanil 2006 for the interval overlap): a regression is fitted to both files; each coefficient's
standardised difference ``(b_s - b_o) / se_o``, the overlap of the two 95% intervals (the
synthetic one with the original's standard error), and the lack-of-fit statistic
``d' (V_o n / k)^-1 d`` (chi-squared with as many degrees of freedom as coefficients).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._random import RngLike, as_generator
from .._validation import close_names
from ..errors import InputError
from ..result import jsonable


def _frame(data: Any, what: str) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        return data
    frame = getattr(data, "frame", None)
    if isinstance(frame, pd.DataFrame):
        return frame
    raise InputError(f"utility: the {what} data must be a DataFrame or a Microdata; got {type(data).__name__}.")


def _is_numeric(s: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)


# ----------------------------------------------------------------------------- preparation
@dataclass
class _Prepared:
    """Both files as model columns: numeric arrays, or category codes over both files."""

    names: list
    numeric: list          # bool per column
    orig: list             # arrays
    syn: list
    n_levels: list         # categories (0 for numeric)
    ok_orig: np.ndarray    # records usable by the model (R drops those with a missing value)
    ok_syn: np.ndarray


def _prepare(d: pd.DataFrame, s: pd.DataFrame, variables: Sequence[str] | None,
             cont_na: Mapping[str, Sequence[float]] | None, categorical: Sequence[str] = ()) -> _Prepared:
    cont_na = dict(cont_na or {})
    if variables is None:
        variables = [c for c in s.columns]
    variables = list(variables)
    for c in variables:
        for name, fr in (("original", d), ("synthetic", s)):
            if c not in fr.columns:
                raise InputError(f"utility: the {name} data have no column {c!r}; "
                                 f"{close_names(c, [str(x) for x in fr.columns])}")
    for c in cont_na:
        if c not in d.columns:
            raise InputError(f"utility: cont_na names {c!r}, which is not a column of the original data.")
    names, numeric, orig, syn, levels = [], [], [], [], []
    ok_o = np.ones(len(d), dtype=bool)
    ok_s = np.ones(len(s), dtype=bool)
    extra_names, extra_o, extra_s = [], [], []
    for c in variables:
        do, so = d[c], s[c]
        num = _is_numeric(do) and c not in categorical
        if num:
            vo = do.to_numpy(dtype=np.float64, na_value=np.nan)
            vs = pd.to_numeric(so, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
            # a single value (or none) in both files: left out, as synthpop does
            if np.unique(vo[~np.isnan(vo)]).shape[0] <= 1 and np.unique(vs[~np.isnan(vs)]).shape[0] <= 1:
                continue
            if np.isnan(vo).any():
                extra_names.append(f"{c}_NA")
                extra_o.append(np.isnan(vo).astype(np.float64))
                extra_s.append(np.isnan(vs).astype(np.float64))
                vo = np.where(np.isnan(vo), 0.0, vo)
                vs = np.where(np.isnan(vs), 0.0, vs)
            for j, code in enumerate(cont_na.get(c, ())):
                extra_names.append(f"{c}_cna_{j + 1}")
                extra_o.append((vo == code).astype(np.float64))
                extra_s.append((vs == code).astype(np.float64))
                vo = np.where(vo == code, 0.0, vo)
                vs = np.where(vs == code, 0.0, vs)
            ok_s &= ~np.isnan(vs)
            names.append(c)
            numeric.append(True)
            orig.append(vo)
            syn.append(vs)
            levels.append(0)
        else:
            ao = do.astype(object).where(do.notna(), None)
            as_ = so.astype(object).where(so.notna(), None)
            o_na = ao.isna().to_numpy()
            # a category's identity is its text (character and factor columns alike)
            lo = pd.Series([None if v is None else str(v) for v in ao], dtype=object)
            ls = pd.Series([None if v is None else str(v) for v in as_], dtype=object)
            if lo.nunique(dropna=False) <= 1 and ls.nunique(dropna=False) <= 1:
                continue
            codes, uniq = pd.factorize(pd.concat([lo, ls], ignore_index=True), sort=True, use_na_sentinel=True)
            codes = codes.astype(np.int64)
            nl = len(uniq)
            if o_na.any():
                codes[codes < 0] = nl      # missing: one more category (addNA)
                nl += 1
            else:
                ok_s &= codes[len(d):] >= 0   # a missing value only the synthetic file has: dropped
            names.append(c)
            numeric.append(False)
            orig.append(codes[:len(d)])
            syn.append(np.where(codes[len(d):] < 0, 0, codes[len(d):]))
            levels.append(nl)
    for nm, a, b in zip(extra_names, extra_o, extra_s):
        names.append(nm)
        numeric.append(True)
        orig.append(a)
        syn.append(b)
        levels.append(0)
    if not names:
        raise InputError("utility: no variable with more than one value to compare.")
    return _Prepared(names, numeric, orig, syn, levels, ok_o, ok_s)


def _main_effects(col: np.ndarray, numeric: bool, present: np.ndarray | None) -> np.ndarray:
    """One column (numeric) or the dummies of the categories present but the first (treatment
    contrasts)."""
    if numeric:
        return col[:, None]
    lv = present[1:]
    return (col[:, None] == lv[None, :]).astype(np.float64)


def _logit_design(prep: _Prepared, maxorder: int) -> np.ndarray:
    """The model matrix of ``t ~ .^(maxorder + 1)`` without the intercept: main effects and
    every interaction of up to ``maxorder + 1`` variables (products of their columns)."""
    from itertools import combinations

    both = [np.concatenate([o[prep.ok_orig], s[prep.ok_syn]]) for o, s in zip(prep.orig, prep.syn)]
    blocks = []
    for j, col in enumerate(both):
        present = None if prep.numeric[j] else np.flatnonzero(np.bincount(col, minlength=prep.n_levels[j]))
        blocks.append(_main_effects(col, prep.numeric[j], present))
    parts = list(blocks)
    for order in range(2, maxorder + 2):
        for combo in combinations(range(len(blocks)), order):
            prod = blocks[combo[0]]
            for j in combo[1:]:
                b = blocks[j]
                prod = (prod[:, :, None] * b[:, None, :]).reshape(prod.shape[0], -1)
            parts.append(prod)
    return np.hstack(parts) if parts else np.zeros((len(both[0]), 0))


def independent_columns(X: np.ndarray, tol: float = 1e-7) -> np.ndarray:
    """Indices of a maximal set of linearly independent columns (pivoted QR), in order."""
    from scipy.linalg import qr

    norms = np.linalg.norm(X, axis=0)
    nz = np.flatnonzero(norms > 0)
    if nz.size == 0:
        return nz
    Xn = X[:, nz] / norms[nz]
    _, r, piv = qr(Xn, mode="economic", pivoting=True)
    diag = np.abs(np.diag(r))
    rank = int(np.sum(diag > tol * diag[0])) if diag.size else 0
    return np.sort(nz[piv[:rank]])


_THRESH = 30.0
_EPS = np.finfo(np.float64).eps


def logit_fitted_values(X: np.ndarray, y: np.ndarray, maxit: int = 200,
                        epsilon: float = 1e-8) -> tuple[np.ndarray, int, bool]:
    """Fitted probabilities of a logistic regression by iteratively reweighted least squares,
    as R's ``glm.fit`` runs it (start ``mu = (y + 1/2) / 2``; convergence when the relative
    change of the deviance is below ``epsilon``; the logistic link bounded at |eta| = 30),
    so the fitted values agree with R's, also for separated cells. Returns the fitted
    probabilities, the number of parameters estimated and whether it converged."""
    from scipy.linalg import solve_triangular

    cols = independent_columns(X)
    Xk = X[:, cols]

    def linkinv(eta: np.ndarray) -> np.ndarray:
        e = np.exp(np.clip(eta, -_THRESH, _THRESH))
        tmp = np.where(eta < -_THRESH, _EPS, np.where(eta > _THRESH, 1.0 / _EPS, e))
        return tmp / (1.0 + tmp)

    def mu_eta(eta: np.ndarray) -> np.ndarray:
        e = np.exp(np.clip(eta, -_THRESH, _THRESH))
        return np.where((eta > _THRESH) | (eta < -_THRESH), _EPS, e / ((1.0 + e) ** 2))

    def deviance(mu: np.ndarray) -> float:
        with np.errstate(divide="ignore"):
            return float(np.sum(np.where(y == 1, -2.0 * np.log(mu), -2.0 * np.log(1.0 - mu))))

    mu = (y + 0.5) / 2.0
    eta = np.log(mu / (1.0 - mu))
    devold = deviance(mu)
    converged = False
    coef = None
    for _ in range(maxit):
        me = mu_eta(eta)
        var = mu * (1.0 - mu)
        z = eta + (y - mu) / me
        w = np.sqrt(me * me / var)
        q, r = np.linalg.qr(Xk * w[:, None])
        coef_new = solve_triangular(r, q.T @ (z * w))
        eta_new = Xk @ coef_new
        mu_new = linkinv(eta_new)
        dev = deviance(mu_new)
        halvings = 0
        while (not math.isfinite(dev)) and coef is not None and halvings < 50:
            coef_new = (coef_new + coef) / 2.0
            eta_new = Xk @ coef_new
            mu_new = linkinv(eta_new)
            dev = deviance(mu_new)
            halvings += 1
        coef, eta, mu = coef_new, eta_new, mu_new
        if abs(dev - devold) / (abs(dev) + 0.1) < epsilon:
            converged = True
            break
        devold = dev
    return mu, int(cols.shape[0]), converged


def _ks_statistic(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sample Kolmogorov-Smirnov statistic sup |F_a - F_b|."""
    a = np.sort(a)
    b = np.sort(b)
    allv = np.concatenate([a, b])
    fa = np.searchsorted(a, allv, side="right") / a.shape[0]
    fb = np.searchsorted(b, allv, side="right") / b.shape[0]
    return float(np.max(np.abs(fa - fb)))


def _wilcoxon_w(a: np.ndarray, b: np.ndarray) -> float:
    """Mann-Whitney / Wilcoxon W of ``a`` against ``b``: sum of a's mid-ranks - n_a (n_a + 1) / 2."""
    from scipy.stats import rankdata

    r = rankdata(np.concatenate([a, b]))
    na = a.shape[0]
    return float(r[:na].sum() - na * (na + 1) / 2.0)


@dataclass(frozen=True)
class PropensityUtility:
    """pMSE and its standardised value, with the other statistics of the propensity scores.

    ``df`` is the number of logistic parameters less one (``k - 1``), ``null_pmse`` the
    expected pMSE under the null (theoretical for logit, permutation mean for CART).
    """

    method: str
    pMSE: float
    S_pMSE: float
    null_pmse: float
    SPECKS: float
    PO50: float
    U: float
    df: int | None
    n_original: int
    n_synthetic: int
    variables: tuple[str, ...]
    converged: bool = True
    n_permutations: int = 0

    def to_dict(self) -> dict:
        return jsonable(self.__dict__)

    def describe(self) -> str:
        return (f"propensity ({self.method}) pMSE {self.pMSE:.6g}, S_pMSE {self.S_pMSE:.4g} "
                f"(about 1 when the files cannot be told apart)")


def propensity_utility(original: Any, synthetic: Any, *, method: str = "logit",
                       variables: Sequence[str] | None = None, maxorder: int = 1,
                       cont_na: Mapping[str, Sequence[float]] | None = None,
                       categorical: Sequence[str] = (), n_permutations: int = 50, cp: float = 1e-3,
                       min_leaf: int = 5, rng: RngLike = None) -> PropensityUtility:
    """pMSE and S_pMSE of ``synthetic`` against ``original`` (synthpop's ``utility.gen``).

    Parameters
    ----------
    method : "logit" or "cart"
        The propensity model: logistic regression with every interaction of up to
        ``maxorder + 1`` variables, or a classification tree (``cp``, ``min_leaf``).
    variables : list of str, optional
        The columns compared (default: every column of the synthetic file).
    cont_na : mapping, optional
        Special codes of numeric columns, each given its own indicator.
    categorical : list of str
        Numeric columns to treat as categorical (text columns always are).
    n_permutations : int
        CART only: permutations of the labels for the null expectation.
    rng
        CART only: the permutations' randomness (fixed seed: reproducible).
    """
    if method not in ("logit", "cart"):
        raise InputError(f"propensity_utility: method must be 'logit' or 'cart'; got {method!r}.")
    d, s = _frame(original, "original"), _frame(synthetic, "synthetic")
    prep = _prepare(d, s, variables, cont_na, categorical)
    n1, n2 = int(prep.ok_orig.sum()), int(prep.ok_syn.sum())
    N = len(d) + len(s)
    Nfit = n1 + n2
    c = len(s) / N
    t = np.concatenate([np.zeros(n1), np.ones(n2)])
    if method == "logit":
        X = np.column_stack([np.ones(Nfit), _logit_design(prep, maxorder)])
        score, k, conv = logit_fitted_values(X, t)
        km1 = k - 1
        pmse = float(np.sum((score - c) ** 2)) / N
        null = km1 * (1 - c) ** 2 * c / N
        s_pmse = pmse / null if null > 0 else float("nan")
        nperm = 0
    else:
        from .tree import grow_tree

        xb, is_cat = _tree_design(prep)
        score = _tree_scores(grow_tree(xb, is_cat, y_class=t.astype(np.int64), n_classes=2, min_leaf=min_leaf,
                                       cp=cp), t, Nfit)
        pmse = float(np.sum((score - c) ** 2)) / N
        gen = as_generator(rng)
        sims = np.empty(n_permutations)
        for i in range(n_permutations):
            tp = gen.permutation(t)
            sc = _tree_scores(grow_tree(xb, is_cat, y_class=tp.astype(np.int64), n_classes=2,
                                        min_leaf=min_leaf, cp=cp), tp, Nfit)
            sims[i] = float(np.sum((sc - c) ** 2)) / N / 2.0
        null = float(sims.mean()) if n_permutations else float("nan")
        s_pmse = pmse / null if null > 0 else float("nan")
        km1, conv, nperm = None, True, n_permutations
    so, ss = score[:n1], score[n1:]
    specks = _ks_statistic(ss, so)
    po50 = float(np.sum((score > 0.5) & (t == 1)) + np.sum((score <= 0.5) & (t == 0))) / N * 100 - 50
    u = _wilcoxon_w(ss, so)
    return PropensityUtility(method, pmse, s_pmse, null, specks, po50, u, km1, len(d), len(s),
                             tuple(prep.names), conv, nperm)


def _tree_design(prep: _Prepared) -> tuple[np.ndarray, np.ndarray]:
    from .tree import cut_points

    cols = []
    is_cat = []
    for j, (o, s) in enumerate(zip(prep.orig, prep.syn)):
        v = np.concatenate([o[prep.ok_orig], s[prep.ok_syn]])
        if prep.numeric[j]:
            cols.append(np.searchsorted(cut_points(v), v, side="left").astype(np.uint8))
            is_cat.append(False)
        elif prep.n_levels[j] > 256:
            cols.append((v * 256 // prep.n_levels[j]).astype(np.uint8))
            is_cat.append(False)
        else:
            cols.append(v.astype(np.uint8))
            is_cat.append(True)
    return np.ascontiguousarray(np.column_stack(cols)), np.array(is_cat, dtype=bool)


def _tree_scores(tree, t: np.ndarray, n: int) -> np.ndarray:
    """Each record's propensity: the share of synthetic records in its leaf."""
    score = np.empty(n)
    for leaf in tree.leaves:
        rows = tree.order[tree.start[leaf]:tree.end[leaf]]
        score[rows] = t[rows].mean()
    return score


# ----------------------------------------------------------------------------- tables
@dataclass(frozen=True)
class TableUtility:
    """synthpop's ``utility.tab`` measures for the table of ``variables``, over its
    ``n_cells`` non-empty cells (``df = n_cells - 1``)."""

    variables: tuple[str, ...]
    measures: dict
    df: int
    n_cells: int

    def to_dict(self) -> dict:
        return jsonable({"variables": list(self.variables), "measures": self.measures, "df": self.df,
                         "n_cells": self.n_cells})

    def describe(self) -> str:
        m = self.measures
        return (f"table of {' x '.join(self.variables)}: S_pMSE {m['S_pMSE']:.4g}, VW {m['VW']:.4g}, "
                f"FT {m['FT']:.4g}, JSD {m['JSD']:.4g}, SPECKS {m['SPECKS']:.4g} ({self.df} df)")


def _quantile_breaks(x: np.ndarray, n: int) -> np.ndarray:
    """Quantile breaks (R's type 7), distinct."""
    return np.unique(np.quantile(x, np.linspace(0.0, 1.0, n + 1)))


def _group(x1: np.ndarray, x2: np.ndarray, n: int, cont_na: Sequence[float], style: str) -> tuple:
    """Numeric values to ``n`` groups with breaks from both files' observed values (intervals
    closed on the left, the last one closed on both sides), missing and special codes kept as
    their own groups."""
    special = list(cont_na)
    m1 = ~np.isnan(x1) & ~np.isin(x1, special)
    m2 = ~np.isnan(x2) & ~np.isin(x2, special)
    pool = np.concatenate([x1[m1], x2[m2]])
    if pool.size == 0:
        raise InputError("utility: a numeric variable has only missing values.")
    if style == "quantile":
        br = _quantile_breaks(pool, n)
    else:
        br = np.unique(np.linspace(pool.min(), pool.max(), n + 1))

    def cut(x: np.ndarray, m: np.ndarray) -> np.ndarray:
        out = np.full(x.shape[0], -1, dtype=np.int64)
        if br.size < 2:
            out[m] = 0
        else:
            g = np.searchsorted(br, x[m], side="right") - 1
            out[m] = np.clip(g, 0, br.size - 2)
        for j, code in enumerate(special):
            out[x == code] = max(br.size - 1, 1) + j
        return out       # -1 = missing

    return cut(x1, m1), cut(x2, m2), (br.size - 1) + len(special)


def table_utility(original: Any, synthetic: Any, variables: Sequence[str], *, ngroups: int = 5,
                  use_na: bool = True, cont_na: Mapping[str, Sequence[float]] | None = None,
                  categorical: Sequence[str] = ()) -> TableUtility:
    """Utility of the table of ``variables`` (synthpop's ``utility.tab``; module docstring)."""
    d, s = _frame(original, "original"), _frame(synthetic, "synthetic")
    cont_na = dict(cont_na or {})
    variables = list(dict.fromkeys(variables))
    if not variables:
        raise InputError("table_utility: name the variables of the table.")
    for c in variables:
        for name, fr in (("original", d), ("synthetic", s)):
            if c not in fr.columns:
                raise InputError(f"table_utility: the {name} data have no column {c!r}; "
                                 f"{close_names(c, [str(x) for x in fr.columns])}")
    cell_o = np.zeros(len(d), dtype=np.int64)
    cell_s = np.zeros(len(s), dtype=np.int64)
    keep_o = np.ones(len(d), dtype=bool)
    keep_s = np.ones(len(s), dtype=bool)
    for c in variables:
        if _is_numeric(d[c]) and c not in categorical:
            x1 = d[c].to_numpy(dtype=np.float64, na_value=np.nan)
            x2 = pd.to_numeric(s[c], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
            g1, g2, n_groups = _group(x1, x2, ngroups, cont_na.get(c, ()), "quantile")
            if n_groups < 3:   # synthpop then tries equal-width groups
                g1, g2, n_groups = _group(x1, x2, ngroups, cont_na.get(c, ()), "equal")
            levels = int(max(g1.max(initial=0), g2.max(initial=0))) + 1
            a, b = g1, g2
        else:
            lo = d[c].astype(object).where(d[c].notna(), None)
            ls = s[c].astype(object).where(s[c].notna(), None)
            lo = pd.Series([None if v is None else str(v) for v in lo], dtype=object)
            ls = pd.Series([None if v is None else str(v) for v in ls], dtype=object)
            codes, uniq = pd.factorize(lo, sort=True, use_na_sentinel=True)
            cat = pd.Categorical(ls, categories=uniq)
            a, b = codes.astype(np.int64), np.asarray(cat.codes, dtype=np.int64)
            levels = len(uniq)
        has_na = (a < 0).any() and use_na
        if has_na:
            a = np.where(a < 0, levels, a)
            b = np.where(b < 0, levels, b)
            levels += 1
        else:
            keep_o &= a >= 0
            keep_s &= b >= 0
        cell_o = cell_o * (levels + 1) + np.where(a < 0, 0, a)
        cell_s = cell_s * (levels + 1) + np.where(b < 0, 0, b)
    cells, inv = np.unique(np.concatenate([cell_o[keep_o], cell_s[keep_s]]), return_inverse=True)
    no = int(keep_o.sum())
    td = np.bincount(inv[:no], minlength=cells.shape[0]).astype(np.float64)
    ts = np.bincount(inv[no:], minlength=cells.shape[0]).astype(np.float64)
    return _table_measures(variables, td, ts)


def _table_measures(variables: Sequence[str], td: np.ndarray, ts: np.ndarray) -> TableUtility:
    totcells = td.shape[0]
    df = totcells - 1
    N = float(np.sum(ts + td))
    cc = float(np.sum(ts)) / N
    expect = (ts + td) * cc
    diff = ts - td * cc / (1 - cc)
    VW = float(np.sum(diff ** 2 / expect))
    FT = 4 * float(np.sum((np.sqrt(ts) - np.sqrt(cc / (1 - cc) * td)) ** 2))
    pmse = VW * cc * (1 - cc) ** 2 / N
    ptd = td / td.sum()
    pts = ts / ts.sum()
    half = (ptd + pts) * 0.5
    with np.errstate(divide="ignore", invalid="ignore"):
        jsd = float(np.sum(np.where(ptd > 0, ptd * np.log2(ptd / half), 0.0))) / 2 + \
            float(np.sum(np.where(pts > 0, pts * np.log2(pts / half), 0.0))) / 2
        both = (ts > 1e-8) & (td > 1e-8)
        sok, dok = ts[both], td[both]
        G = 2 * float(np.sum(sok * np.log(sok / sok.sum() / dok * dok.sum())))
    dfG = int(both.sum()) - 1
    score = ts / (ts + td)
    specks = _weighted_ks(score, ts, td)
    u = _weighted_w(score, ts, td)
    predsyn = pts > ptd
    po50 = (float(ts[predsyn].sum()) + float(td[~predsyn].sum())) / (float(ts.sum()) + float(td.sum())) * 100 - 50
    mabsdd = float(np.sum(np.abs(diff))) / float(ts.sum())
    wmabsdd = float(np.sum(np.abs(diff) / np.sqrt(expect))) / math.sqrt(2 / math.pi)
    dbhatt = math.sqrt(max(0.0, 1 - float(np.sum(np.sqrt(ptd * pts)))))
    measures = {"VW": VW, "FT": FT, "JSD": jsd, "SPECKS": specks, "WMabsDD": wmabsdd, "U": u, "G": G,
                "pMSE": pmse, "PO50": po50, "MabsDD": mabsdd, "dBhatt": dbhatt,
                "S_VW": VW / df if df > 0 else float("nan"), "S_FT": FT / df if df > 0 else float("nan"),
                "S_JSD": jsd * 2 * N / df / math.log(2) if df > 0 else float("nan"),
                "S_WMabsDD": wmabsdd / df if df > 0 else float("nan"),
                "S_G": G / dfG if dfG > 0 else float("nan"),
                "S_pMSE": VW / df if df > 0 else float("nan"), "dfG": dfG}
    return TableUtility(tuple(variables), measures, df, totcells)


def _weighted_ks(score: np.ndarray, ws: np.ndarray, wd: np.ndarray) -> float:
    o = np.argsort(score, kind="mergesort")
    sc, a, b = score[o], ws[o], wd[o]
    # cumulative shares at each distinct score
    uniq, idx = np.unique(sc, return_index=True)
    ca = np.cumsum(a) / a.sum()
    cb = np.cumsum(b) / b.sum()
    last = np.r_[idx[1:] - 1, sc.shape[0] - 1]
    return float(np.max(np.abs(ca[last] - cb[last])))


def _weighted_w(score: np.ndarray, ws: np.ndarray, wd: np.ndarray) -> float:
    """Wilcoxon W of the synthetic records' cell scores against the original ones' (ties
    count one half)."""
    uniq, inv = np.unique(score, return_inverse=True)
    a = np.bincount(inv, weights=ws, minlength=uniq.shape[0])
    b = np.bincount(inv, weights=wd, minlength=uniq.shape[0])
    below = np.concatenate([[0.0], np.cumsum(b)[:-1]])
    return float(np.sum(a * (below + 0.5 * b)))


# ----------------------------------------------------------------------------- fitted models
@dataclass(frozen=True)
class FitComparison:
    """A regression fitted to both files (synthpop's ``compare.fit.synds``)."""

    model: str
    outcome: str
    regressors: tuple[str, ...]
    coefficients: tuple[dict, ...]
    mean_abs_std_diff: float
    mean_ci_overlap: float
    lack_of_fit: float
    lof_pvalue: float

    def to_dict(self) -> dict:
        return jsonable(self.__dict__)

    def describe(self) -> str:
        return (f"{self.model} regression of {self.outcome}: mean |standardised difference| "
                f"{self.mean_abs_std_diff:.3g}, mean interval overlap {self.mean_ci_overlap:.3g}, "
                f"lack of fit {self.lack_of_fit:.3g} (p = {self.lof_pvalue:.3g})")


def compare_fit(original: Any, synthetic: Any, outcome: str, regressors: Sequence[str], *,
                model: str = "linear", ci_level: float = 0.95) -> FitComparison:
    """Fit ``outcome ~ regressors`` (``"linear"``: OLS; ``"logistic"``: a 0/1 outcome) to both
    files and compare the coefficients (module docstring). Categorical regressors enter as
    dummies of the original's categories (first dropped); records with a missing value leave
    the fit."""
    import statsmodels.api as sm
    from scipy.stats import chi2, norm

    if model not in ("linear", "logistic"):
        raise InputError(f"compare_fit: model must be 'linear' or 'logistic'; got {model!r}.")
    d, s = _frame(original, "original"), _frame(synthetic, "synthetic")
    regressors = list(regressors)
    for c in [outcome, *regressors]:
        for name, fr in (("original", d), ("synthetic", s)):
            if c not in fr.columns:
                raise InputError(f"compare_fit: the {name} data have no column {c!r}; "
                                 f"{close_names(c, [str(x) for x in fr.columns])}")
    levels = {r: sorted(d[r].dropna().unique().tolist(), key=str) for r in regressors if not _is_numeric(d[r])}

    def design(fr: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series]:
        parts = {"(Intercept)": np.ones(len(fr))}
        for r in regressors:
            if r in levels:
                for lv in levels[r][1:]:
                    parts[f"{r}{lv}"] = np.where(fr[r].isna(), np.nan, (fr[r] == lv).astype(float))
            else:
                parts[r] = pd.to_numeric(fr[r], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        x = pd.DataFrame(parts, index=fr.index)
        y = pd.to_numeric(fr[outcome], errors="coerce").astype(float)
        ok = x.notna().all(axis=1) & y.notna()
        return x[ok], y[ok]

    xo, yo = design(d)
    xs, ys = design(s)
    if model == "logistic":
        fo = sm.Logit(yo, xo).fit(disp=0, maxiter=200)
        fs = sm.Logit(ys, xs).fit(disp=0, maxiter=200)
        vo = np.asarray(fo.cov_params())
    else:
        fo = sm.OLS(yo, xo).fit()
        fs = sm.OLS(ys, xs).fit()
        vo = np.asarray(fo.cov_params())
    bo, bs = np.asarray(fo.params), np.asarray(fs.params)
    se = np.sqrt(np.diag(vo))
    z = norm.ppf(1 - (1 - ci_level) / 2)
    rows = []
    for j, name in enumerate(xo.columns):
        lo_o, hi_o = bo[j] - z * se[j], bo[j] + z * se[j]
        lo_s, hi_s = bs[j] - z * se[j], bs[j] + z * se[j]
        ov = min(hi_o, hi_s) - max(lo_o, lo_s)
        overlap = 0.5 * (ov / (hi_o - lo_o) + ov / (hi_s - lo_s))
        rows.append({"coefficient": name, "synthetic": float(bs[j]), "original": float(bo[j]),
                     "original_se": float(se[j]), "std_diff": float((bs[j] - bo[j]) / se[j]),
                     "ci_overlap": float(overlap)})
    n, k = len(d), len(s)
    diffv = bs - bo
    lof = float(diffv @ np.linalg.pinv(vo * n / k) @ diffv)
    p = float(1 - chi2.cdf(lof, len(bo)))
    return FitComparison(model, outcome, tuple(regressors), tuple(rows),
                         float(np.mean([abs(r["std_diff"]) for r in rows])),
                         float(np.mean([r["ci_overlap"] for r in rows])), lof, p)


__all__ = ["PropensityUtility", "propensity_utility", "TableUtility", "table_utility", "FitComparison",
           "compare_fit", "logit_fitted_values"]
