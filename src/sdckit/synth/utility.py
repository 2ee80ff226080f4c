"""Utility of a synthetic file: propensity scores, table measures, fitted models.

Propensity-score utility (Woo, Reiter, Oganian & Karr 2009; Snoke, Raab, Nowok, Dibben &
Slavkovic 2018): stack the ``n_d`` original and ``n_s`` synthetic records, label them
``t = 0 / 1`` and fit a model of ``t``; with ``c = n_s / N`` and ``p_i`` the fitted
propensities,

    pMSE = sum_i (p_i - c)^2 / N                                   (Snoke et al. 2018, eq. (1))

is 0 when the model cannot tell the files apart. Its expectation when both files come from
the same distribution is, for a logistic model with ``k`` parameters,
``(k - 1) (1 - c)^2 c / N`` (Snoke et al. 2018, section 3.1, eq. (3)), and for a CART model it
is estimated by refitting on randomly permuted labels: their pMSE has mean about
``(k - 1) c (1 - c) / N`` (exactly ``c (1 - c) (J - 1) / (N - 1)`` for a model of ``J`` fixed
cells, the hypergeometric variance), so the mean times ``1 - c`` estimates the expectation
above for any ``c``; synthpop halves the mean, which is the same when the two files have equal
sizes (``c = 1/2``) and not otherwise (its ``utility.gen`` keeps the halving for ``k != n``;
sdckit follows the paper). The standardised ``S_pMSE = pMSE / expectation`` is about 1 for a good synthesis.
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
from .frames import frame_of, is_numeric

_frame = frame_of
_is_numeric = is_numeric


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
            sims[i] = float(np.sum((sc - c) ** 2)) / N
        # the permuted labels' pMSE has mean about (k - 1) c (1 - c) / N; scaled by (1 - c) it is
        # the expectation of Snoke et al. (2018), eq. (3), (k - 1) (1 - c)^2 c / N, the logit's
        # null, for any c. synthpop halves it whatever c: the same when the files have equal
        # sizes (c = 1/2), not when they differ
        null = (1.0 - c) * float(sims.mean()) if n_permutations else float("nan")
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


# the table measures and the model comparison live in their own modules (kept importable here)
from .utility_fit import FitComparison, compare_fit  # noqa: E402
from .utility_tables import TableUtility, table_utility  # noqa: E402

__all__ = ["PropensityUtility", "propensity_utility", "TableUtility", "table_utility", "FitComparison",
           "compare_fit", "logit_fitted_values"]
