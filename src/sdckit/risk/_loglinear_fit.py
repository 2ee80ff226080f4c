"""The Poisson log-linear model of a key table: formulas, the table, the design kept as
margins, and its fits (IRLS/Newton, IPF). Used by :mod:`sdckit.risk.loglinear`, which turns a
fit into disclosure risk.

References
----------
Skinner, C. J. and Shlomo, N. (2008). Assessing identification risk in survey microdata using
log-linear models. *Journal of the American Statistical Association* 103(483), 989-1001.
Bishop, Y. M. M., Fienberg, S. E. and Holland, P. W. (1975). *Discrete Multivariate Analysis*.
MIT Press (iterative proportional fitting).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from ..errors import InputError

#: Largest number of cells of the full key table fitted (the design has one row per cell).
MAX_CELLS = 20_000_000


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


def independent_columns(G: np.ndarray, rtol: float = 1e-10) -> np.ndarray:
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
        keep_all = independent_columns(design.gram(np.ones(C)))
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
    for it in range(1, max_iter + 1):  # noqa: B007 - the iterations run are read after the loop
        G = design.gram(mu)
        if keep is None:
            keep = (np.arange(p) if use.all() and design.covariate is None
                    else independent_columns(G))
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
    for it in range(1, max_iter + 1):  # noqa: B007 - the iterations run are read after the loop
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
