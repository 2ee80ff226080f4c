"""Log-linear model risk: the probability that a sample unique is population unique.

Sample frequencies say which records are rare in the sample; a log-linear model of the key
table says how rare their combinations are likely to be in the population. Following
Skinner and Shlomo (2008), the sample count of each cell k of the key table (all
combinations of the observed levels, empty ones included) is Poisson,

    f_k ~ Poisson(mu_k),   mu_k = pi_k lambda_k,   log mu_k = x_k' beta        (S&S eq. 2-3)

with pi_k the sampling fraction and lambda_k the expected population count. Given f_k, the
unseen part of the population cell is F_k - f_k | f_k ~ Poisson(lambda_k (1 - pi_k)), so a
sample unique (f_k = 1) has, with nu_k = lambda_k (1 - pi_k) = mu_k (1 - pi_k) / pi_k,

    P(F_k = 1 | f_k = 1)   = exp(-nu_k)                                        (S&S eq. 5)
    E(1 / F_k | f_k = 1)   = (1 - exp(-nu_k)) / nu_k                           (S&S eq. 6)

and the file-level measures are their sums over the sample-unique cells, tau1 (expected
number of sample uniques that are population unique) and tau2 (expected number of correct
matches of sample uniques). For a record with f_k >= 1 the model gives, more generally,
E(1 / F_k | f_k) = 1F1(1; f_k + 1; -nu_k) / f_k (a Kummer function: 1/(f+X) = int_0^1
t^(f+X-1) dt with X ~ Poisson(nu)), which is the per-record risk reported here.

The five fitting methods of sdcMicro's ``modRisk`` are all available:

* ``"default"``: Poisson GLM of the counts f_k on the model terms;
* ``"CE"`` (Clogg & Eliason 1987): the same with the offset log(f_k / W_k + 0.1), W_k the sum
  of the weights in cell k (0 / 0 read as 0), bringing the sampling fraction into the fit;
* ``"PML"`` (pseudo maximum likelihood): the response is the weighted count scaled to the
  sample size and rounded, round(W_k n / N);
* ``"weightedLLM"``: the counts with W_k as one more (linear) predictor;
* ``"IPF"``: iterative proportional fitting of the counts to the margins of the model's
  generating class (sdcMicro's former ``LLmodGlobalRisk``; the same maximum-likelihood fit as
  ``"default"`` by another algorithm).

The GLM methods are fitted by IRLS (Newton's method for the canonical log link) with a
treatment-coded design on the full grid of cells, empty cells included (as S&S and sdcMicro
fit). The design is kept implicit (:class:`MarginDesign`): each of its columns is the
indicator of a cell of a margin, so X'v and X'WX are margins of dense tensors over the grid,
which is far faster than a sparse C x p product when the grid has millions of cells
(:func:`design_matrix` builds the explicit ``scipy.sparse`` matrix, used to check the
margins). Cells in a zero margin of a model term have mu_k = 0 exactly (the extended
maximum-likelihood estimate), so they are left out and their non-estimable parameters
dropped.

sdcMicro's figures (``gr1``, ``gr2``) are reproduced as well, as ``sdcmicro_gr1`` and
``sdcmicro_gr2``: its code uses nu_k = mu_k (1 - pi_k) (the fitted sample-scale mean, without
the division by pi_k of S&S eq. 5) and divides the sums by the number of non-empty cells.

References
----------
Skinner, C. J. and Shlomo, N. (2008). Assessing identification risk in survey microdata
using log-linear models. Journal of the American Statistical Association 103(483), 989-1001.

Skinner, C. J. and Holmes, D. J. (1998). Estimating the re-identification risk per record in
microdata. Journal of Official Statistics 14(4), 361-372.

Rinott, Y. and Shlomo, N. (2006). A generalized negative binomial smoothing model for sample
disclosure risk estimation. Privacy in Statistical Databases, LNCS 4302, 82-93.

Elamir, E. A. H. and Skinner, C. J. (2006). Record level measures of disclosure risk for
survey microdata. Journal of Official Statistics 22(3), 525-539.

Clogg, C. C. and Eliason, S. R. (1987). Some common problems in log-linear analysis.
Sociological Methods and Research 16(1), 8-44.

Templ, M., Kowarik, A. and Meindl, B. (2015). Statistical disclosure control for micro-data
using the R package sdcMicro. Journal of Statistical Software 67(4). (``modRisk``.)
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import scipy.linalg
import scipy.sparse as sp
from scipy.special import hyp1f1

from .._validation import check_choice, check_float, check_int
from ..errors import InputError
from ..result import jsonable

METHODS = ("default", "CE", "PML", "weightedLLM", "IPF")

#: Largest number of cells of the full key table fitted (the design has one row per cell).
MAX_CELLS = 20_000_000

#: Largest table whose model diagnostic is leverage-corrected (the correction costs about as
#: much as the fit; with many more cells than parameters it changes the score little).
LEVERAGE_MAX_CELLS = 200_000


# --------------------------------------------------------------------------------------------
# formula
# --------------------------------------------------------------------------------------------

def parse_formula(formula: str | None, names: Sequence[str]) -> tuple[tuple[int, ...], ...]:
    """Terms of a hierarchical log-linear model as tuples of key indices.

    ``"a + b + c + a:b"`` (R's notation; ``a*b`` is ``a + b + a:b``, a leading ``~`` is
    allowed). ``None`` gives the main effects of every key. Every key must appear as a main
    effect and every interaction needs its lower-order terms (hierarchical models).
    """
    names = list(names)
    if formula is None or not str(formula).strip().lstrip("~").strip():
        return tuple((j,) for j in range(len(names)))
    text = str(formula).strip()
    if text.startswith("~"):
        text = text[1:]
    terms: list[tuple[int, ...]] = []
    for raw in text.split("+"):
        raw = raw.strip()
        if not raw:
            raise InputError(f"formula {formula!r}: an empty term (two '+' in a row); write terms "
                             "as 'a + b + a:b'.")
        if "*" in raw:  # a*b*c: every sub-interaction
            parts = [p.strip() for p in raw.split("*")]
            idx = [_var_index(p, names, formula) for p in parts]
            for r in range(1, len(idx) + 1):
                terms.extend(tuple(sorted(c)) for c in itertools.combinations(idx, r))
            continue
        parts = [p.strip() for p in raw.split(":")]
        idx = sorted({_var_index(p, names, formula) for p in parts})
        terms.append(tuple(idx))
    unique: list[tuple[int, ...]] = []
    for t in terms:
        if t not in unique:
            unique.append(t)
    have = set(unique)
    for j, v in enumerate(names):
        if (j,) not in have:
            raise InputError(f"formula {formula!r}: key {v!r} has no main effect; add '+ {v}' to the "
                             "formula or drop it from the keys.")
    for t in unique:
        for r in range(1, len(t)):
            for sub in itertools.combinations(t, r):
                if sub not in have:
                    raise InputError(
                        f"formula {formula!r}: the term {_term_name(t, names)} needs its lower-order "
                        f"term {_term_name(sub, names)} (hierarchical models only); add it.")
    return tuple(sorted(unique, key=lambda t: (len(t), t)))


def _var_index(token: str, names: list[str], formula) -> int:
    token = token.strip().strip("`")
    if token not in names:
        from .._validation import close_names
        raise InputError(f"formula {formula!r}: {token!r} is not a key variable (keys: "
                         f"{', '.join(names)}){close_names(token, names) and ' - ' + close_names(token, names)}.")
    return names.index(token)


def _term_name(term: tuple[int, ...], names: Sequence[str]) -> str:
    return ":".join(names[j] for j in term)


def formula_text(terms: Sequence[tuple[int, ...]], names: Sequence[str]) -> str:
    return " + ".join(_term_name(t, names) for t in terms)


# --------------------------------------------------------------------------------------------
# the key table
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class KeyTable:
    """The full grid of the observed levels of the keys and its per-cell sums."""

    shape: tuple[int, ...]
    cell: np.ndarray          # cell index of each record (C order over ``shape``)
    counts: np.ndarray        # f_k
    weight_sums: np.ndarray   # W_k (sum of weights; = f_k without weights)
    inv_weight_sums: np.ndarray  # sum of 1 / w_i (sdcMicro's ``inclProb``)
    levels: tuple             # observed codes of each key

    @property
    def n_cells(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))


def key_table(codes: Sequence[np.ndarray], weights: np.ndarray | None, names: Sequence[str], *,
              weight_name: str = "weight", max_cells: int = MAX_CELLS) -> KeyTable:
    """Counts of the full grid of observed key levels (empty cells included)."""
    local, shape, levels = [], [], []
    for c, v in zip(codes, names):
        c = np.asarray(c)
        miss = np.flatnonzero(c < 0)
        if miss.size:
            raise InputError(f"log-linear risk: key {v!r} is missing in {miss.size} records (first "
                             f"record {miss[0]}); the model needs complete keys: recode missing values "
                             "to a category of their own or impute them.")
        lev, inv = np.unique(c, return_inverse=True)
        local.append(inv.astype(np.int64))
        shape.append(int(lev.size))
        levels.append(lev)
    n_cells = 1
    for m in shape:
        n_cells *= m
    if n_cells > max_cells:
        raise InputError(f"log-linear risk: the key table of {', '.join(names)} has {n_cells:,} cells "
                         f"({' x '.join(map(str, shape))}), above the limit of {max_cells:,}; recode "
                         "the keys to fewer categories or use fewer keys.")
    cell = np.ravel_multi_index(local, shape) if local else np.zeros(0, np.int64)
    counts = np.bincount(cell, minlength=n_cells).astype(np.float64)
    if weights is None:
        wsum = counts.copy()
        isum = counts.copy()
    else:
        w = np.asarray(weights, dtype=np.float64)
        bad = np.flatnonzero(~(w >= 1.0))
        if bad.size:
            raise InputError(f"log-linear risk: weight column {weight_name!r} has {bad.size} values below 1 "
                             f"(e.g. {w[bad[0]]:g} in record {bad[0]}): a weight is 1 / the sampling "
                             "fraction, so a weight below 1 means a fraction above 1; fix the weights.")
        wsum = np.bincount(cell, weights=w, minlength=n_cells)
        isum = np.bincount(cell, weights=1.0 / w, minlength=n_cells)
    return KeyTable(tuple(shape), cell.astype(np.int64), counts, wsum, isum, tuple(levels))


def design_matrix(shape: Sequence[int], terms: Sequence[tuple[int, ...]],
                  names: Sequence[str]) -> tuple[sp.csr_matrix, list[str]]:
    """Sparse treatment-coded design (intercept first) of the full grid, one row per cell.

    The column of term T at levels (l_j, j in T) is the indicator that every l_j is above the
    first level: a main effect of m levels has m - 1 columns, an interaction the product.
    Returns the matrix and the term name of each column.
    """
    C = int(np.prod(shape, dtype=np.int64))
    lev = np.unravel_index(np.arange(C, dtype=np.int64), tuple(shape)) if C else ()
    rows = [np.arange(C, dtype=np.int64)]
    cols = [np.zeros(C, dtype=np.int64)]
    col_terms = ["(intercept)"]
    p = 1
    for t in terms:
        radices = [shape[j] - 1 for j in t]
        size = int(np.prod(radices, dtype=np.int64))
        if size == 0:
            continue
        ok = np.ones(C, dtype=bool)
        idx = np.zeros(C, dtype=np.int64)
        for j, r in zip(t, radices):
            lj = lev[j]
            ok &= lj > 0
            idx = idx * r + (lj - 1)
        r_sel = np.flatnonzero(ok)
        rows.append(r_sel)
        cols.append(p + idx[r_sel])
        col_terms += [_term_name(t, names)] * size
        p += size
    r = np.concatenate(rows)
    c = np.concatenate(cols)
    X = sp.csr_matrix((np.ones(r.size), (r, c)), shape=(C, p))
    return X, col_terms


class MarginDesign:
    """The treatment-coded design of a hierarchical model on the full grid, kept implicit.

    Every column of the design (intercept first, then each term's levels above the first) is
    the indicator of one cell of a margin of the table, so X'v is a set of margins of v and
    X'WX (W = diag(mu)) holds margins of mu over the union of two terms' variables. Newton's
    method then needs dense tensor sums over the grid only, never the C x p matrix (which
    :func:`design_matrix` builds explicitly, for checks). An optional dense covariate (the
    weighted-LLM predictor) is one more column.
    """

    def __init__(self, shape: Sequence[int], terms: Sequence[tuple[int, ...]],
                 names: Sequence[str], covariate: np.ndarray | None = None,
                 covariate_name: str = "weights"):
        self.shape = tuple(int(m) for m in shape)
        self.K = len(self.shape)
        self.terms = [()] + [tuple(t) for t in terms]
        self.sizes, self.offsets, self.col_terms, self.levels = [], [], [], []
        p = 0
        for t in self.terms:
            radices = [self.shape[j] - 1 for j in t]
            size = int(np.prod(radices, dtype=np.int64)) if t else 1
            self.sizes.append(size)
            self.offsets.append(p)
            self.col_terms += ["(intercept)" if not t else _term_name(t, names)] * size
            # levels (all >= 1) of each column of the term, shape (size, |t|), C order
            lv = (np.stack(np.unravel_index(np.arange(size), radices), axis=1) + 1 if t
                  else np.zeros((1, 0), dtype=np.int64))
            self.levels.append(lv)
            p += size
        self.covariate = None if covariate is None else np.asarray(covariate, dtype=np.float64)
        if self.covariate is not None:
            self.col_terms.append(covariate_name)
            p += 1
        self.p = p

    def _margin(self, v: np.ndarray, t: tuple[int, ...]) -> np.ndarray:
        other = tuple(j for j in range(self.K) if j not in t)
        return v.reshape(self.shape).sum(axis=other) if other else v.reshape(self.shape)

    def xt(self, v: np.ndarray) -> np.ndarray:
        """X' v (margins of v at each column's cell)."""
        out = np.empty(self.p)
        for t, off, size in zip(self.terms, self.offsets, self.sizes):
            m = self._margin(v, t)
            out[off:off + size] = m[(slice(1, None),) * len(t)].ravel() if t else m.sum()
        if self.covariate is not None:
            out[-1] = float(v @ self.covariate)
        return out

    def x(self, beta: np.ndarray) -> np.ndarray:
        """X beta on the full grid (C order)."""
        eta = np.full(self.shape, float(beta[0]))
        for t, off, size in zip(self.terms[1:], self.offsets[1:], self.sizes[1:]):
            block = np.zeros([self.shape[j] for j in t])
            block[(slice(1, None),) * len(t)] = beta[off:off + size].reshape([self.shape[j] - 1 for j in t])
            eta += block.reshape([self.shape[j] if j in t else 1 for j in range(self.K)])
        eta = eta.ravel()
        if self.covariate is not None:
            eta = eta + beta[-1] * self.covariate
        return eta

    def gram(self, w: np.ndarray) -> np.ndarray:
        """X' diag(w) X from margins of w over the union of each pair of terms."""
        G = np.zeros((self.p, self.p))
        nt = len(self.terms)
        # margins over every union of two terms, each summed from the smallest margin already
        # computed that holds it (the largest unions first, from the full grid)
        full = tuple(range(self.K))
        cache: dict = {full: w.reshape(self.shape)}
        unions = {tuple(sorted(set(self.terms[a]) | set(self.terms[b])))
                  for a in range(nt) for b in range(a, nt)}
        for u in sorted(unions, key=len, reverse=True):
            if u in cache:
                continue
            src = min((k for k in cache if set(u) <= set(k)), key=lambda k: cache[k].size)
            axes = tuple(i for i, j in enumerate(src) if j not in u)
            cache[u] = cache[src].sum(axis=axes)
        for a in range(nt):
            ta, la, oa, sa = self.terms[a], self.levels[a], self.offsets[a], self.sizes[a]
            for b in range(a, nt):
                tb, lb, ob, sb = self.terms[b], self.levels[b], self.offsets[b], self.sizes[b]
                u = tuple(sorted(set(ta) | set(tb)))
                m = cache[u]
                if not u:
                    G[oa:oa + sa, ob:ob + sb] = m.sum()
                    continue
                idx, mask = [], np.ones((sa, sb), dtype=bool)
                for j in u:
                    if j in ta:
                        ia = la[:, ta.index(j)][:, None]
                        if j in tb:
                            mask &= ia == lb[:, tb.index(j)][None, :]
                        idx.append(np.broadcast_to(ia, (sa, sb)))
                    else:
                        idx.append(np.broadcast_to(lb[:, tb.index(j)][None, :], (sa, sb)))
                block = np.where(mask, m[tuple(idx)], 0.0)
                G[oa:oa + sa, ob:ob + sb] = block
                G[ob:ob + sb, oa:oa + sa] = block.T
        if self.covariate is not None:
            c = self.xt(w * self.covariate)
            G[-1, :] = c
            G[:, -1] = c
            G[-1, -1] = float(w @ (self.covariate ** 2))
        return G


    def leverages(self, mu: np.ndarray, keep: np.ndarray | None = None) -> np.ndarray:
        """Diagonal of the hat matrix of the Poisson fit, h_k = mu_k x_k' (X'WX)^-1 x_k.

        ``keep`` restricts to the estimable columns. Each cell's row holds one column per term
        at most (plus the covariate), so h_k is a sum of entries of the inverse over pairs of
        terms.
        """
        C = mu.size
        keep = np.arange(self.p) if keep is None else np.asarray(keep)
        G = self.gram(mu)[np.ix_(keep, keep)]
        Ginv = scipy.linalg.pinvh(G)
        pos = np.full(self.p, -1, dtype=np.int64)
        pos[keep] = np.arange(keep.size)
        lev_grid = np.unravel_index(np.arange(C, dtype=np.int64), self.shape)
        cols = []
        for t, off in zip(self.terms, self.offsets):
            if not t:
                cols.append(np.full(C, pos[off], dtype=np.int64))
                continue
            ok = np.ones(C, dtype=bool)
            idx = np.zeros(C, dtype=np.int64)
            for j in t:
                ok &= lev_grid[j] > 0
                idx = idx * (self.shape[j] - 1) + (lev_grid[j] - 1)
            cols.append(np.where(ok, pos[off + idx], -1))
        h = np.zeros(C)
        for a in range(len(cols)):
            ca = cols[a]
            for b in range(a, len(cols)):
                cb = cols[b]
                m = (ca >= 0) & (cb >= 0)
                v = np.where(m, Ginv[np.maximum(ca, 0), np.maximum(cb, 0)], 0.0)
                h += v if a == b else 2.0 * v
        if self.covariate is not None and pos[-1] >= 0:
            z, cz = self.covariate, pos[-1]
            for ca in cols:
                h += 2.0 * z * np.where(ca >= 0, Ginv[np.maximum(ca, 0), cz], 0.0)
            h += Ginv[cz, cz] * z ** 2
        return mu * h


def _zero_margin_cells(y: np.ndarray, shape: Sequence[int], terms: Sequence[tuple[int, ...]]) -> np.ndarray:
    """Cells lying in a zero margin of some term (their fitted value is 0 in the extended MLE)."""
    arr = y.reshape(shape)
    zero = np.zeros(arr.shape, dtype=bool)
    K = len(shape)
    for t in terms:
        other = tuple(j for j in range(K) if j not in t)
        m = arr.sum(axis=other, keepdims=True)
        zero |= np.broadcast_to(m <= 0, arr.shape)
    return zero.ravel()


def _independent_columns(G: np.ndarray, rtol: float = 1e-10) -> np.ndarray:
    """Indices of a maximal set of linearly independent columns of X, from X'WX (pivoted QR)."""
    if G.size == 0:
        return np.zeros(0, dtype=np.int64)
    d = np.sqrt(np.maximum(np.diag(G), 0.0))
    d[d == 0] = 1.0
    Gs = G / d[:, None] / d[None, :]
    _, R, piv = scipy.linalg.qr(Gs, pivoting=True, mode="economic")
    diag = np.abs(np.diag(R))
    rank = int((diag > rtol * max(diag[0], 1e-300)).sum())
    return np.sort(piv[:rank])


@dataclass(frozen=True)
class PoissonFit:
    """A Poisson log-linear fit: fitted means, deviance, iterations, convergence."""

    mu: np.ndarray
    deviance: float
    n_iter: int
    converged: bool
    n_params: int
    dropped_params: int


def fit_poisson_newton(y: np.ndarray, design: MarginDesign, offset: np.ndarray | None = None, *,
                       max_iter: int = 100, tol: float = 1e-12,
                       check_rank: bool = True) -> PoissonFit:
    """Maximum-likelihood Poisson log-linear fit by IRLS (Newton's method for the log link).

    Each iteration solves (X'WX) beta = X'W z with W = diag(mu), z = eta - offset + (y - mu)/mu
    (R's ``glm.fit``, started at mu = y + 0.1), halving the step while the deviance rises;
    it stops when the relative change of the deviance is below ``tol``. Cells in a zero
    margin of a term get mu = 0 (extended MLE); parameters they alone identify are dropped
    (pivoted QR of X'WX). ``check_rank`` raises InputError naming the term of the first
    aliased column when the design on the full grid is rank-deficient (only an extra
    covariate can make it so: the term columns of a hierarchical model are independent).
    """
    C = y.size
    p = design.p
    off = np.zeros(C) if offset is None else np.asarray(offset, dtype=np.float64)
    # the corner-point columns of a hierarchical model on the full grid are linearly
    # independent by construction; only an extra covariate can make the design rank-deficient
    if check_rank and design.covariate is not None:
        keep_all = _independent_columns(design.gram(np.ones(C)))
        if keep_all.size < p:
            bad = sorted(set(range(p)) - set(keep_all.tolist()))[0]
            raise InputError(f"log-linear risk: the design is rank-deficient: the term "
                             f"{design.col_terms[bad]!r} is a linear combination of the other terms "
                             "(aliased); drop it from the formula.")
    use = ~_zero_margin_cells(y, design.shape, [t for t in design.terms if t])
    usef = use.astype(np.float64)
    mu = np.where(use, y + 0.1, 0.0)   # R's glm start for the Poisson family
    eta = np.log(np.where(use, mu, 1.0))   # cells not in use: mu = 0, eta unused
    keep = None
    beta = np.zeros(p)
    dev_old = np.inf
    converged = False
    it = 0
    for it in range(1, max_iter + 1):
        G = design.gram(mu)
        if keep is None:
            keep = (np.arange(p) if use.all() and design.covariate is None
                    else _independent_columns(G))
        # X'W z = X'(mu (eta - offset)) + X'(y - mu), on the cells in use
        wz = np.where(use, mu * (eta - off) + (y - mu), 0.0)
        b = design.xt(wz)[keep]
        Gk = G[np.ix_(keep, keep)]
        try:
            beta_new = scipy.linalg.cho_solve(scipy.linalg.cho_factor(Gk, check_finite=False), b,
                                              check_finite=False)
        except np.linalg.LinAlgError:
            beta_new = scipy.linalg.lstsq(Gk, b)[0]
        full_new = np.zeros(p)
        full_new[keep] = beta_new
        step = 1.0
        for _ in range(30):             # step halving while the deviance rises
            beta_try = beta + step * (full_new - beta) if np.isfinite(dev_old) else full_new
            eta_try = design.x(beta_try) + off
            mu_try = np.exp(np.minimum(eta_try, 700.0)) * usef
            dev = _deviance(y, mu_try)
            if not np.isfinite(dev_old) or dev <= dev_old * (1 + 1e-12):
                break
            step *= 0.5
        beta, eta, mu = beta_try, eta_try, mu_try
        if abs(dev - dev_old) / (abs(dev) + 0.1) < tol:
            converged = True
            break
        dev_old = dev
    return PoissonFit(mu, float(_deviance(y, mu)), it, converged, int(keep.size),
                      int(p - keep.size))


def _deviance(y: np.ndarray, mu: np.ndarray) -> float:
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(y > 0, y * np.log(y / mu), 0.0)
    return float(2.0 * np.sum(t - (y - mu)))


def fit_ipf(y: np.ndarray, shape: Sequence[int], terms: Sequence[tuple[int, ...]], *,
            start: np.ndarray | None = None, max_iter: int = 1000, tol: float = 1e-10) -> PoissonFit:
    """Iterative proportional fitting of ``y`` to the margins of the generating class.

    The generating class is the set of maximal terms; each cycle scales the fitted table to
    each of their observed margins in turn (Deming-Stephan). The limit is the maximum
    likelihood fit of the hierarchical Poisson log-linear model (Bishop, Fienberg & Holland
    1975, ch. 3).
    """
    K = len(shape)
    arr = y.reshape(shape)
    maximal = [t for t in terms if not any(set(t) < set(u) for u in terms)]
    mu = np.ones(arr.shape) if start is None else start.reshape(shape).astype(np.float64).copy()
    total = max(float(arr.sum()), 1.0)
    targets = []
    for t in maximal:
        other = tuple(j for j in range(K) if j not in t)
        targets.append((other, arr.sum(axis=other, keepdims=True)))
    it, converged = 0, False
    for it in range(1, max_iter + 1):
        worst = 0.0
        for other, target in targets:
            cur = mu.sum(axis=other, keepdims=True)
            worst = max(worst, float(np.abs(cur - target).max()))
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(cur > 0, target / cur, 0.0)
            mu *= ratio
        if worst <= tol * total:
            converged = True
            break
    mu = mu.ravel()
    p = 1 + sum(int(np.prod([shape[j] - 1 for j in t])) for t in terms)
    return PoissonFit(mu, _deviance(y, mu), it, converged, p, 0)


# --------------------------------------------------------------------------------------------
# risk
# --------------------------------------------------------------------------------------------

def expected_inverse_population(f: np.ndarray, nu: np.ndarray) -> np.ndarray:
    """E(1 / F | f) for F = f + X, X ~ Poisson(nu): 1F1(1; f + 1; -nu) / f (f >= 1).

    For f = 1 this is (1 - exp(-nu)) / nu (S&S eq. 6), with the limit 1 at nu = 0.
    """
    f = np.asarray(f, dtype=np.float64)
    nu = np.asarray(nu, dtype=np.float64)
    out = np.empty(np.broadcast(f, nu).shape)
    one = f == 1
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        small = nu < 1e-8
        r1 = np.where(small, 1.0 - nu / 2.0, -np.expm1(-nu) / np.where(small, 1.0, nu))
        rk = hyp1f1(1.0, f + 1.0, -nu) / np.maximum(f, 1.0)
    out[...] = np.where(one, r1, rk)
    return out


def selection_diagnostic(f: np.ndarray, mu: np.ndarray, pi: np.ndarray,
                         leverage: np.ndarray | None = None) -> dict:
    """Standardised score for under- / over-fitting, weighted towards tau1 and tau2.

    Under the Poisson model E[(f_k - mu_k)^2 - f_k] = 0 and Var[(f_k - mu_k)^2 - f_k] = 2 mu_k^2;
    a positive sum means more dispersion than the model allows (under-fitting: add
    interactions), a negative one less (over-fitting). Following the construction of Skinner
    and Shlomo (2008, sec. 4), each cell is weighted by the sensitivity of the risk measure to
    extra-Poisson variation of lambda_k: with E_k = pi_k g(lambda_k) the expected
    contribution of cell k to tau (g1(l) = l exp(-l) for tau1, g2(l) = (exp(-pi l) -
    exp(-l)) / (1 - pi) for tau2), a variance s^2 of lambda_k shifts it by about
    pi_k g''(lambda_k) s^2 / 2, and (f_k - mu_k)^2 - f_k estimates pi_k^2 s^2, so

        h_k = g''(lambda_k) / (2 pi_k),   bias = sum_k h_k [(f_k - mu_k)^2 - f_k],
        B = sum_k |h_k| [(f_k - mu_k)^2 - f_k] / sqrt(sum_k 2 h_k^2 mu_k^2).

    ``bias`` estimates tau(true) - tau(model); |B| > 1.96 flags the model (B > 0 under-, B < 0
    over-fitting). With fitted means, E[(f_k - mu_k)^2] = mu_k (1 - h_kk) (h_kk the leverage of
    cell k, McCullagh & Nelder 1989, sec. 12.5), so ``leverage`` adds mu_k h_kk back to each
    term; without it a model with many parameters looks over-fitted.
    """
    f = np.asarray(f, float)
    mu = np.asarray(mu, float)
    pi = np.clip(np.asarray(pi, float), 1e-12, 1.0)
    lam = mu / pi
    d = (f - mu) ** 2 - f
    if leverage is not None:
        d = d + mu * np.asarray(leverage, float)
    out = {}
    for name, g2 in (("tau1", (lam - 2.0) * np.exp(-lam)),
                     ("tau2", np.where(pi < 1, (pi ** 2 * np.exp(-pi * lam) - np.exp(-lam))
                                       / np.maximum(1.0 - pi, 1e-12), 0.0))):
        h = g2 / (2.0 * pi)
        den = float(np.sqrt(np.sum(2.0 * h ** 2 * mu ** 2)))
        score = float(np.sum(np.abs(h) * d) / den) if den > 0 else 0.0
        verdict = ("adequate" if abs(score) <= 1.96 else
                   "under-fitting (add interactions)" if score > 0 else
                   "over-fitting (remove terms)")
        out[name] = {"score": score, "bias": float(np.sum(h * d)), "verdict": verdict}
    return out


@dataclass(frozen=True)
class LogLinearRisk:
    """Log-linear model risk of a sample (Skinner & Shlomo 2008).

    Attributes
    ----------
    method, formula : str
    tau1 : float
        Expected number of sample uniques that are population unique, sum over sample-unique
        cells of P(F_k = 1 | f_k = 1).
    tau2 : float
        Expected number of correct matches of sample uniques, sum of E(1 / F_k | f_k = 1).
    sdcmicro_gr1, sdcmicro_gr2 : float
        The same sums with sdcMicro's ``modRisk`` conventions (see the module notes).
    record_pop_unique : ndarray (n,)
        Per record P(F_k = 1 | f_k): exp(-nu_k) for sample uniques, 0 otherwise.
    record_risk : ndarray (n,)
        Per record E(1 / F_k | f_k), the probability that a match to the population is correct.
    cells : pandas.DataFrame
        Non-empty cells: ``f``, ``mu`` (fitted sample mean), ``pi``, ``lambda``, ``nu``,
        ``pop_unique`` (P(F=1|f), 0 unless f = 1), ``risk`` (E(1/F|f)).
    diagnostic : dict
        :func:`selection_diagnostic` of the fit.
    notes : tuple of str
    """

    method: str
    formula: str
    tau1: float
    tau2: float
    sdcmicro_gr1: float
    sdcmicro_gr2: float
    n_records: int
    n_sample_uniques: int
    n_cells: int
    n_nonempty_cells: int
    record_pop_unique: np.ndarray
    record_risk: np.ndarray
    cells: pd.DataFrame
    diagnostic: dict
    deviance: float
    n_params: int
    n_iter: int
    converged: bool
    seconds: float
    notes: tuple = ()
    extra: dict = field(default_factory=dict)

    def summary(self) -> dict:
        """Plain figures for reports and ``--json``."""
        return jsonable({
            "method": self.method, "formula": self.formula, "tau1": self.tau1, "tau2": self.tau2,
            "tau1_share": self.tau1 / self.n_sample_uniques if self.n_sample_uniques else 0.0,
            "tau2_share": self.tau2 / self.n_sample_uniques if self.n_sample_uniques else 0.0,
            "sdcmicro_gr1": self.sdcmicro_gr1, "sdcmicro_gr2": self.sdcmicro_gr2,
            "n_records": self.n_records, "n_sample_uniques": self.n_sample_uniques,
            "n_cells": self.n_cells, "n_nonempty_cells": self.n_nonempty_cells,
            "expected_correct_matches": float(self.record_risk.sum()),
            "max_record_risk": float(self.record_risk.max()) if self.record_risk.size else 0.0,
            "diagnostic": self.diagnostic, "deviance": self.deviance, "n_params": self.n_params,
            "n_iter": self.n_iter, "converged": self.converged, "notes": list(self.notes),
            **({"selection": self.extra["selection"]} if "selection" in self.extra else {})})

    def to_dict(self) -> dict:
        return self.summary()

    def describe(self) -> str:
        d = self.diagnostic
        lines = [f"log-linear risk ({self.method}): {self.formula}",
                 f"  sample uniques {self.n_sample_uniques:,} in {self.n_nonempty_cells:,} non-empty "
                 f"of {self.n_cells:,} cells",
                 f"  tau1 {self.tau1:.4f} expected population uniques among them, "
                 f"tau2 {self.tau2:.4f} expected correct matches",
                 f"  sdcMicro's gr1 {self.sdcmicro_gr1:.6g}, gr2 {self.sdcmicro_gr2:.6g}",
                 f"  fit: deviance {self.deviance:.4g}, {self.n_params} parameters, "
                 f"{self.n_iter} iterations{'' if self.converged else ' (NOT converged)'}",
                 f"  diagnostic: tau1 score {d['tau1']['score']:.3g} ({d['tau1']['verdict']}), "
                 f"tau2 score {d['tau2']['score']:.3g} ({d['tau2']['verdict']})"]
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


def loglinear_risk(codes: Sequence[np.ndarray], weights: np.ndarray | None = None, *,
                   names: Sequence[str] | None = None, formula: str | None = None,
                   method: str = "default", sampling_fraction: float | None = None,
                   weight_name: str = "weight", max_cells: int = MAX_CELLS) -> LogLinearRisk:
    """Fit a Poisson log-linear model to the key table and estimate tau1, tau2 and per-record risk.

    Parameters
    ----------
    codes : list of int arrays
        One array of category codes per key (``-1`` = missing, refused here).
    weights : float array, optional
        Sampling weights (>= 1); a sample-unique record's sampling fraction is 1 / w, a cell's
        f_k / W_k. Without weights, ``sampling_fraction`` (default 1: the data are the population)
        is used for every cell.
    names : list of str
    formula : str, optional
        Model terms in R's notation, ``"a + b + c + a:b"``; default main effects only.
    method : {"default", "CE", "PML", "weightedLLM", "IPF"}
    sampling_fraction : float in (0, 1], optional
        Only without weights.

    Returns
    -------
    LogLinearRisk

    Raises
    ------
    InputError
        Missing key values, weights below 1, a rank-deficient design (naming the term), a key
        table above ``max_cells`` cells.

    References
    ----------
    Skinner and Shlomo (2008); sdcMicro's ``modRisk`` (Templ, Kowarik and Meindl 2015).
    """
    t0 = time.perf_counter()
    check_choice("loglinear_risk", "method", method, METHODS)
    max_cells = check_int("loglinear_risk", "max_cells", max_cells, min_value=1)
    names = list(names) if names is not None else [f"key{j}" for j in range(len(codes))]
    if len(codes) == 0:
        raise InputError("log-linear risk: no key variables given; name at least one key.")
    terms = parse_formula(formula, names)
    if weights is not None and sampling_fraction is not None:
        raise InputError("log-linear risk: give weights or a sampling fraction, not both.")
    if sampling_fraction is not None:
        sampling_fraction = check_float("loglinear_risk", "sampling_fraction", sampling_fraction,
                                        low=0.0, high=1.0, low_open=True)
    table = key_table(codes, weights, names, weight_name=weight_name, max_cells=max_cells)
    f, W, P = table.counts, table.weight_sums, table.inv_weight_sums
    n = int(f.sum())
    notes = []
    if weights is None:
        frac = 1.0 if sampling_fraction is None else sampling_fraction
        W = f / frac
        P = f * frac
        if sampling_fraction is None:
            notes.append("no weights and no sampling fraction: the data are taken as the population "
                         "(pi = 1), so every sample unique is population unique")
    N = float(W.sum())
    # response, offset and extra covariate of each method (sdcMicro modRisk)
    y = f
    offset = None
    covariate = None
    if method == "CE":
        with np.errstate(divide="ignore", invalid="ignore"):
            ec = np.where(W > 0, f / W, 0.0)
        offset = np.log(ec + 0.1)       # Clogg-Eliason offset, log(f_k / W_k + 0.1)
    elif method == "PML":
        y = np.round(W * (n / N))       # pseudo counts: weighted counts scaled to n, rounded
    elif method == "weightedLLM":
        scale = float(W.max()) if W.max() > 0 else 1.0
        covariate = W / scale           # W_k as a linear predictor (scaled: same fitted means)
    design = MarginDesign(table.shape, terms, names, covariate)
    if method == "IPF":
        fit = fit_ipf(y, table.shape, terms)
    else:
        fit = fit_poisson_newton(y, design, offset)
    if fit.dropped_params:
        notes.append(f"{fit.dropped_params} parameters are not estimable (zero margins of the "
                     "interaction terms); their cells have fitted mean 0")
    if not fit.converged:
        notes.append(f"the fit did not converge in {fit.n_iter} iterations")
    mu = fit.mu
    nonempty = np.flatnonzero(f > 0)
    fk = f[nonempty]
    # sampling fraction per non-empty cell: 1/w for a sample unique, f_k / W_k otherwise
    pi_cell = np.where(fk == 1, P[nonempty], fk / W[nonempty])
    pi_cell = np.clip(pi_cell, 1e-300, 1.0)
    mu_c = mu[nonempty]
    with np.errstate(divide="ignore", invalid="ignore"):
        nu = mu_c * (1.0 - pi_cell) / pi_cell   # nu_k = lambda_k (1 - pi_k), lambda_k = mu_k / pi_k
    pop_unique = np.where(fk == 1, np.exp(-nu), 0.0)                 # S&S eq. 5
    risk = expected_inverse_population(fk, nu)                       # S&S eq. 6 (f = 1), Kummer (f > 1)
    su = fk == 1
    n_su = int(su.sum())
    tau1 = float(pop_unique[su].sum())
    tau2 = float(risk[su].sum())
    # sdcMicro's conventions: nu = mu (1 - p), p = sum of 1/w in the cell, sums / non-empty cells
    nu_s = mu_c * (1.0 - P[nonempty])
    gr1 = float(np.exp(-nu_s[su]).sum() / nonempty.size) if nonempty.size else 0.0
    gr2 = float(expected_inverse_population(np.ones(n_su), nu_s[su]).sum() / nonempty.size) if nonempty.size else 0.0
    if n_su == 0:
        notes.append("no sample uniques: tau1 = tau2 = 0 (no record is unique on the keys)")
    # diagnostic on every cell with the overall sampling fraction n / N (S&S's constant pi; a
    # per-cell f_k / W_k would make the weights depend on f_k and bias the score), leverage-
    # corrected up to LEVERAGE_MAX_CELLS cells
    pi_all = np.full(f.size, n / N if N > 0 else 1.0)
    lev = None
    if table.n_cells <= LEVERAGE_MAX_CELLS:
        keep = None if np.all(mu > 0) else _independent_columns(design.gram(mu))
        lev = design.leverages(mu, keep)
    diag = selection_diagnostic(y if method == "PML" else f, mu, pi_all, leverage=lev)
    diag["leverage_corrected"] = lev is not None
    diag["sampling_fraction"] = float(pi_all[0]) if pi_all.size else 1.0
    cells = pd.DataFrame({"cell": nonempty, "f": fk.astype(np.int64), "mu": mu_c, "pi": pi_cell,
                          "lambda": mu_c / pi_cell, "nu": nu, "pop_unique": pop_unique, "risk": risk})
    pos = np.full(f.size, -1, dtype=np.int64)
    pos[nonempty] = np.arange(nonempty.size)
    rec = pos[table.cell]
    return LogLinearRisk(method=method, formula=formula_text(terms, names), tau1=tau1, tau2=tau2,
                         sdcmicro_gr1=gr1, sdcmicro_gr2=gr2, n_records=n, n_sample_uniques=n_su,
                         n_cells=table.n_cells, n_nonempty_cells=int(nonempty.size),
                         record_pop_unique=pop_unique[rec], record_risk=risk[rec], cells=cells,
                         diagnostic=diag, deviance=fit.deviance, n_params=fit.n_params,
                         n_iter=fit.n_iter, converged=fit.converged,
                         seconds=time.perf_counter() - t0, notes=tuple(notes))


def select_loglinear_model(codes: Sequence[np.ndarray], weights: np.ndarray | None = None, *,
                           names: Sequence[str], method: str = "default", measure: str = "tau1",
                           critical: float = 1.96, max_interactions: int | None = None,
                           **kwargs) -> LogLinearRisk:
    """Forward selection of two-way interactions with the diagnostic (S&S 2008, sec. 4).

    Starts from the main effects; while the model under-fits (B > ``critical`` for
    ``measure``), adds the two-way interaction whose model has the smallest |B|, and stops when
    the model is adequate, when no candidate lowers |B|, or after ``max_interactions``. The
    returned fit's ``extra["selection"]`` lists each step (formula, score, tau1, tau2).
    """
    check_choice("select_loglinear_model", "measure", measure, ("tau1", "tau2"))
    names = list(names)
    terms = list(names)
    best = loglinear_risk(codes, weights, names=names, formula=" + ".join(terms), method=method, **kwargs)
    path = [{"formula": best.formula, "score": best.diagnostic[measure]["score"],
             "tau1": best.tau1, "tau2": best.tau2}]
    candidates = [f"{a}:{b}" for a, b in itertools.combinations(names, 2)]
    limit = len(candidates) if max_interactions is None else max_interactions
    while best.diagnostic[measure]["score"] > critical and candidates and len(path) <= limit:
        trials = []
        for c in candidates:
            r = loglinear_risk(codes, weights, names=names, formula=" + ".join(terms + [c]),
                               method=method, **kwargs)
            trials.append((abs(r.diagnostic[measure]["score"]), c, r))
        score, c, r = min(trials, key=lambda t: t[0])
        if score >= abs(best.diagnostic[measure]["score"]):
            break
        terms.append(c)
        candidates.remove(c)
        best = r
        path.append({"formula": r.formula, "score": r.diagnostic[measure]["score"],
                     "tau1": r.tau1, "tau2": r.tau2})
    extra = dict(best.extra)
    extra["selection"] = path
    return LogLinearRisk(**{**{f: getattr(best, f) for f in best.__dataclass_fields__}, "extra": extra})


def microdata_loglinear_risk(microdata, *, formula: str | None = None, method: str = "default",
                             keys: Sequence[str] | None = None,
                             sampling_fraction: float | None = None) -> LogLinearRisk:
    """:func:`loglinear_risk` on the key variables and weight role of a Microdata.

    ``formula="auto"`` runs :func:`select_loglinear_model` (forward selection of two-way
    interactions with the diagnostic).
    """
    keys = list(microdata.key_vars if keys is None else keys)
    if not keys:
        raise InputError("log-linear risk needs key variables: give the key_vars role (--keys).")
    codes = [microdata.codes(k) for k in keys]
    kw = dict(method=method, sampling_fraction=sampling_fraction,
              weight_name=microdata.weight or "weight")
    if formula is not None and formula.strip().lower() == "auto":
        return select_loglinear_model(codes, microdata.weights(), names=keys, **kw)
    return loglinear_risk(codes, microdata.weights(), names=keys, formula=formula, **kw)


__all__ = ["LogLinearRisk", "METHODS", "MarginDesign", "design_matrix", "expected_inverse_population",
           "fit_ipf", "fit_poisson_newton", "key_table", "loglinear_risk", "microdata_loglinear_risk",
           "parse_formula", "select_loglinear_model", "selection_diagnostic"]
