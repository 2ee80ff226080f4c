"""Unbiased estimation from PRAMmed data, for analysts who hold the released file and P.

- moment estimator (Kooiman et al. 1997; Marés & Shlomo 2014 section 2): E(t* | t) = t P, so
  t_hat = t* P^{-1} is unbiased for the original frequencies t;
- Cator, Hensbergen and Rozenholc, equation (4): the joint distribution of the PRAMmed variables (k) with unperturbed
  variables y:  mu_hat(k; y) = (1/n) sum_l P^{-1}_{lk} U(l; y), with U(l; y) the released
  count of (l; y);
- its covariance from the multinomial model of the released counts: each record i is released
  as l with probability P_{xi(i) l}, independently, so
  Cov(t* | t) = diag(t P) - P^T diag(t) P, estimated without bias by diag(t*) - P^T diag(t_hat) P,
  and Cov(t_hat) = P^{-T} Cov(t*) P^{-1};
- the maximum-likelihood estimate on the probability simplex by EM, for when t_hat has negative
  entries (Cator, Hensbergen and Rozenholc, section 3: maximise sum_i log((mu P)_{x(i)}) over the simplex).

References
----------
Kooiman, P., Willenborg, L. and Gouweleeuw, J. (1997). PRAM: a method for disclosure
limitation of microdata. Statistics Netherlands research paper 9705.
Cator, E., Hensbergen, A. and Rozenholc, Y. Statistical disclosure control using PRAM
(section 3, equation (4)).
van den Hout, A. and van der Heijden, P. G. M. (2002). Randomized response, statistical
disclosure control and misclassification: a review. *International Statistical Review* 70(2).
Dempster, A. P., Laird, N. M. and Rubin, D. B. (1977). Maximum likelihood from incomplete
data via the EM algorithm. *JRSS B* 39(1).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from ..result import ResultDisplay
from .matrix import MAX_CONDITION, MAX_DENSE, TransitionMatrix, as_matrix, label_text, show_labels


# --------------------------------------------------------------------------- P^{-1}
class InverseSolver:
    """Products with P^{-1} for a dense or sparse P, refusing a singular P.

    ``right(B)`` = P^{-T} B, so a row vector t* gives t* P^{-1} = right(t*^T)^T.
    """

    def __init__(self, matrix: TransitionMatrix | Any, *, what: str = "the moment estimate t* P^{-1}") -> None:
        m = matrix if isinstance(matrix, TransitionMatrix) else TransitionMatrix(
            tuple(range(as_matrix(matrix).shape[0])), matrix, name="P")
        self.matrix = m
        self.condition = m.condition_number()
        if not math.isfinite(self.condition) or self.condition > MAX_CONDITION:
            raise InputError(
                f"{m.name}: P is singular or nearly so (condition number {self.condition:.3g} > "
                f"{MAX_CONDITION:.0e}), so {what} does not exist or is meaningless. Use the maximum-"
                "likelihood estimate (ml_estimate), or, as the data steward, publish a matrix with a "
                "dominant diagonal (every P_kk > 0.5 makes P invertible).")
        if m.is_sparse:
            from scipy.sparse.linalg import splu

            self._lu = splu(m.P.T.tocsc())
            self._inv = None
        else:
            self._lu = None
            self._inv = np.linalg.inv(m.P)

    @property
    def dense_inverse(self) -> np.ndarray:
        """P^{-1} as a dense array (small spaces only)."""
        if self._inv is None:
            if self.matrix.n_categories > MAX_DENSE:
                raise InputError(f"{self.matrix.name}: {self.matrix.n_categories} categories are too many "
                                 "for a dense P^{-1}; use products (InverseSolver.right).")
            self._inv = np.linalg.inv(self.matrix.P.toarray())
        return self._inv

    def right(self, B: np.ndarray) -> np.ndarray:
        """P^{-T} B for B of shape (L,) or (L, G)."""
        B = np.asarray(B, dtype=np.float64)
        if self._lu is not None:
            return self._lu.solve(B) if B.ndim == 1 else np.column_stack([self._lu.solve(b) for b in B.T])
        return self._inv.T @ B


def inverse(matrix: TransitionMatrix | Any) -> np.ndarray:
    """P^{-1} (dense); InputError naming the condition number when P is singular."""
    return InverseSolver(matrix, what="P^{-1}").dense_inverse


# --------------------------------------------------------------------------- estimators
def moment_estimate(released_counts: Sequence[float], matrix: TransitionMatrix | Any) -> np.ndarray:
    """t_hat = t* P^{-1}: unbiased for the original counts t (shape (L,) or (L, G) per group)."""
    return InverseSolver(matrix).right(released_counts)


def moment_covariance(released_counts: Sequence[float], matrix: TransitionMatrix | Any, *,
                      sampling: bool = False) -> np.ndarray:
    """Estimated covariance of t_hat = t* P^{-1} (one group).

    PRAM part (given the original data): Cov(t*) = diag(t P) - P^T diag(t) P, estimated
    without bias by diag(t*) - P^T diag(t_hat) P (linear in t, and t_hat P = t*); then
    Cov(t_hat) = P^{-T} Cov(t*) P^{-1} = P^{-T} diag(t*) P^{-1} - diag(t_hat) (as P P^{-1} = I).
    With ``sampling=True`` the multinomial sampling variance of t itself,
    n (diag(pi) - pi pi^T) with pi = t_hat / n, is added.
    """
    t_star = np.asarray(released_counts, dtype=np.float64).ravel()
    Pinv = _dense_inverse(matrix)
    t_hat = t_star @ Pinv
    cov = Pinv.T @ (t_star[:, None] * Pinv) - np.diag(t_hat)
    if sampling:
        n = t_star.sum()
        pi = t_hat / n
        cov = cov + n * (np.diag(pi) - np.outer(pi, pi))
    return 0.5 * (cov + cov.T)


def moment_variances(released_counts: np.ndarray, Pinv: np.ndarray) -> np.ndarray:
    """Diagonal of Cov(t_hat) per group: Var(t_hat_k) = sum_l t*_l (P^{-1}_{lk})^2 - t_hat_k."""
    T = np.asarray(released_counts, dtype=np.float64)
    return np.square(Pinv).T @ T - Pinv.T @ T


def _dense_inverse(matrix: TransitionMatrix | Any) -> np.ndarray:
    solver = InverseSolver(matrix)
    if solver.matrix.n_categories > MAX_DENSE:
        raise InputError(f"{solver.matrix.name}: a covariance over {solver.matrix.n_categories} categories is "
                         "too large; estimate a margin (fewer categories) instead.")
    return solver.dense_inverse


@dataclass(frozen=True)
class MLResult(ResultDisplay):
    """The EM maximum-likelihood estimate: relative frequencies on the simplex, per group."""

    shares: np.ndarray       # (L,) or (L, G), each column sums to 1
    log_likelihood: float
    iterations: int
    converged: bool


def ml_estimate(released_counts: Sequence[float], matrix: TransitionMatrix | Any, *, tol: float = 1e-10,
                max_iter: int = 20000) -> MLResult:
    """Maximum-likelihood original shares pi on the simplex, by EM (Cator, Hensbergen and Rozenholc, section 3).

    Maximises l(pi) = sum_l t*_l log((pi P)_l). EM step (the original category of each record
    is the missing data): pi_k <- pi_k sum_l P_kl t*_l / (pi P)_l / n. It starts from the
    moment estimate clipped into the simplex, so when t_hat >= 0 (then t_hat / n is the
    maximum) it converges at once. Works column by column for (L, G) counts.
    """
    T = np.asarray(released_counts, dtype=np.float64)
    one = T.ndim == 1
    T = T[:, None] if one else T
    P = as_matrix(matrix)
    n = T.sum(axis=0)
    if (n <= 0).any():
        raise InputError("ml_estimate: every group needs at least one released record.")
    try:
        start = InverseSolver(matrix).right(T)
    except InputError:
        start = T.copy()
    Pi = np.maximum(start, 0.0) + 1e-3 * n / T.shape[0]
    Pi /= Pi.sum(axis=0)
    it, converged = 0, False
    for it in range(1, max_iter + 1):  # noqa: B007  (the count is read after the loop)
        Q = np.asarray(P.T @ Pi)                       # (pi P)_l per group
        W = np.divide(T, Q, out=np.zeros_like(T), where=Q > 0)
        new = Pi * np.asarray(P @ W) / n
        step = float(np.abs(new - Pi).max())
        Pi = new
        if step < tol:
            converged = True
            break
    Q = np.asarray(P.T @ Pi)
    with np.errstate(divide="ignore"):
        ll = float(np.where(T > 0, T * np.log(np.where(Q > 0, Q, 1.0)), 0.0).sum())
    return MLResult(Pi[:, 0] if one else Pi, ll, it, converged)


# --------------------------------------------------------------------------- analysts' entry point
@dataclass(frozen=True)
class PramEstimate:
    """Estimated original frequencies of PRAMmed variables, optionally by unperturbed ones.

    ``released`` and ``estimate`` are (L, G) count arrays (G groups of ``by``; G = 1
    without), ``std_error`` the standard errors of ``estimate`` (PRAM variance), ``shares``
    = estimate / n (Cator, Hensbergen and Rozenholc's mu_hat), ``ml_shares`` the EM estimate of the same shares.
    """

    variables: tuple
    categories: tuple
    by: tuple
    groups: tuple
    released: np.ndarray
    estimate: np.ndarray
    std_error: np.ndarray
    ml_shares: np.ndarray
    n: float
    condition_number: float

    @property
    def shares(self) -> np.ndarray:
        return self.estimate / self.n

    @property
    def has_negative(self) -> bool:
        """Whether the moment estimate has negative cells (then prefer ``ml_shares``)."""
        return bool((self.estimate < 0).any())

    def table(self) -> pd.DataFrame:
        """One row per (category, group): released count, estimate, standard error, ML estimate."""
        rows = []
        for g, grp in enumerate(self.groups):
            for k, cat in enumerate(self.categories):
                lab = cat if isinstance(cat, tuple) else (cat,)
                gl = () if not self.by else (grp if isinstance(grp, tuple) else (grp,))
                rows.append((*lab, *gl, self.released[k, g], self.estimate[k, g], self.std_error[k, g],
                             self.ml_shares[k, g] * self.n))
        cols = [*self.variables, *self.by, "released", "estimate", "std_error", "ml_estimate"]
        return pd.DataFrame(rows, columns=cols)


def _variable_codes(values: pd.Series, labels: list, var: str, where: str) -> np.ndarray:
    """Codes of a released column in the matrix's label order (-1 for missing)."""
    index: dict = {}
    for i, c in enumerate(labels):
        index.setdefault(c, i)
        index.setdefault(label_text(c), i)
    inv, uniq = pd.factorize(values, use_na_sentinel=True)
    mapped = np.empty(len(uniq) + 1, dtype=np.int64)
    mapped[-1] = -1
    unknown = []
    for j, u in enumerate(uniq):
        key = u.item() if isinstance(u, np.generic) else u
        if isinstance(key, float) and key.is_integer() and key not in index and int(key) in index:
            key = int(key)
        if key in index:
            mapped[j] = index[key]
        elif label_text(key) in index:
            mapped[j] = index[label_text(key)]
        elif isinstance(key, float) and key.is_integer() and int(key) in index:
            mapped[j] = index[int(key)]
        else:
            unknown.append(key)
            mapped[j] = -1
    if unknown:
        raise InputError(f"{where}: column {var!r} of the released file has {len(unknown)} values not in the "
                         f"transition matrix: {show_labels(unknown)}; use the matrix published with this file.")
    return mapped[np.where(inv < 0, len(uniq), inv)]


def released_codes(frame: pd.DataFrame, matrix: TransitionMatrix,
                   variables: Sequence[str] | None = None) -> np.ndarray:
    """Row index into ``matrix.categories`` of every record of a released file (-1 = missing)."""
    variables = tuple(variables or matrix.variables)
    where = matrix.name
    if not variables:
        raise InputError(f"{where}: name the PRAMmed variable(s); the matrix does not record them.")
    for v in variables:
        if v not in frame.columns:
            from .._validation import close_names
            raise InputError(f"{where}: the released file has no column {v!r}; "
                             f"{close_names(v, [str(c) for c in frame.columns])}")
    joint = len(variables) > 1
    if not joint:
        return _variable_codes(frame[variables[0]], list(matrix.categories), variables[0], where)
    cats = matrix.categories
    if not all(isinstance(c, tuple) and len(c) == len(variables) for c in cats):
        raise InputError(f"{where}: the matrix is not over the joint space of {list(variables)} "
                         "(its labels are not tuples of that length).")
    per_var = [list(dict.fromkeys(c[j] for c in cats)) for j in range(len(variables))]
    codes = [_variable_codes(frame[v], per_var[j], v, where) for j, v in enumerate(variables)]
    shape = tuple(len(x) for x in per_var)
    missing = np.zeros(len(frame), dtype=bool)
    for c in codes:
        missing |= c < 0
    lookup = np.full(int(np.prod(shape)), -1, dtype=np.int64)
    where_of = [{lab: i for i, lab in enumerate(labels)} for labels in per_var]
    multi = np.array([[where_of[j][c[j]] for j in range(len(variables))] for c in cats], dtype=np.int64)
    pos = np.ravel_multi_index(tuple(multi.T), shape)
    lookup[pos] = np.arange(len(cats))
    flat = np.ravel_multi_index(tuple(np.where(missing, 0, c) for c in codes), shape)
    out = np.where(missing, -1, lookup[flat])
    if ((out < 0) & ~missing).any():
        raise InputError(f"{where}: the released file has combinations of {list(variables)} that are not "
                         "in the transition matrix; use the matrix published with this file.")
    return out


def estimate_frequencies(released: pd.DataFrame | Any, matrix: TransitionMatrix,
                         variables: Sequence[str] | None = None, *, by: Sequence[str] | str = (),
                         weights: str | None = None) -> PramEstimate:
    """Estimate the original frequencies of PRAMmed variables from the released file alone.

    Parameters
    ----------
    released : pandas.DataFrame or Microdata
        The released file as published.
    matrix : TransitionMatrix
        The published matrix (``TransitionMatrix.read("pram_<var>.csv")``).
    variables : list of str, optional
        The PRAMmed variable(s), default the matrix's own.
    by : list of str
        Unperturbed variables y: the estimate is Cator et al.'s equation (4),
        mu_hat(k; y) = (1/n) sum_l P^{-1}_{lk} U(l; y), for every y.
    weights : str, optional
        A weight column: U(l; y) then sums weights (the covariance treats them as counts).

    Notes
    -----
    Records with a missing PRAMmed value are left out (PRAM never changes missing values);
    missing values of ``by`` form their own group.
    """
    frame = released.frame if hasattr(released, "frame") and not isinstance(released, pd.DataFrame) else released
    by = (by,) if isinstance(by, str) else tuple(by)
    codes = released_codes(frame, matrix, variables)
    variables = tuple(variables or matrix.variables)
    keep = codes >= 0
    if by:
        grp = frame.loc[:, list(by)].groupby(list(by), dropna=False, sort=True).ngroup().to_numpy()
        first = pd.Series(np.arange(len(frame))).groupby(grp).first().to_numpy()
        labels = frame.loc[:, list(by)].iloc[first]
        groups = tuple(tuple(r) if len(by) > 1 else r[0] for r in labels.itertuples(index=False, name=None))
    else:
        grp = np.zeros(len(frame), dtype=np.int64)
        groups = ("all",)
    G, L = len(groups), matrix.n_categories
    w = None if weights is None else frame[weights].to_numpy(dtype=np.float64)[keep]
    flat = codes[keep] * G + grp[keep]
    U = np.bincount(flat, weights=w, minlength=L * G).reshape(L, G).astype(np.float64)
    solver = InverseSolver(matrix)
    T_hat = solver.right(U)
    if L <= MAX_DENSE:
        se = np.sqrt(np.clip(moment_variances(U, solver.dense_inverse), 0, None))
    else:
        se = np.full_like(T_hat, np.nan)
    ml = ml_estimate(U, matrix).shares
    return PramEstimate(variables, matrix.categories, by, groups, U, T_hat, se, ml * (U.sum(axis=0) / U.sum()),
                        float(U.sum()), solver.condition)
