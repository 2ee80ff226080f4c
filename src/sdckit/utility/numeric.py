"""Information loss of continuous microdata: IL1..IL5, IL, the primed IL'1 / IL' for masked
files without a one-to-one record correspondence, sdcMicro's IL1s, and the eigenvalue measure.

Definitions (Domingo-Ferrer & Torra 2001; Mateo-Sanz, Sebé & Domingo-Ferrer 2004), for an
original file X (n x d) and a masked file X' (n' x d), with means xbar_j, covariances v_jk
(divided by n, the moments of eq. 5.3) and correlations rho_jk:

- IL1 = 1/(n d) sum_j sum_i |x_ij - x'_ij| / |x_ij|           (values; needs n' = n)
- IL2 = 1/d sum_j |xbar_j - xbar'_j| / |xbar_j|                (means)
- IL3 = 1/(d(d+1)/2) sum_{j<=k} |v_jk - v'_jk| / |v_jk|        (covariances, variances included)
- IL4 = 1/d sum_j |v_jj - v'_jj| / |v_jj|                      (variances)
- IL5 = 1/(d(d-1)/2) sum_{j<k} |rho_jk - rho'_jk|             (correlations)
- IL  = 100 (IL1 + IL2 + IL3 + IL4 + IL5) / 5
- IL'1 = 1/(n' d) sum_j sum_i |x_{c(i),j} - x'_ij| / |x_{c(i),j}|, where c(i) is the original
  record nearest to masked record i (Euclidean distance on records standardised with the
  original's means and standard deviations), and IL' = IL with IL'1 in place of IL1.

Zero denominators (a zero value, a zero mean, a zero covariance) are not turned into inf: with
``zero="skip"`` (the default, sdcMicro's choice for IL1) the term is left out of its mean and
counted in ``skipped``; with ``zero="scale"`` the denominator is replaced by the variable's
scale (the standard deviation for values and means, the product of the two standard
deviations for a covariance). A term whose numerator is zero as well is always 0.

References
----------
Domingo-Ferrer, J. and Torra, V. (2001). A quantitative comparison of disclosure control
methods for microdata. In Doyle et al. (eds.), *Confidentiality, Disclosure and Data Access*,
North-Holland, 111-133.
Mateo-Sanz, J. M., Sebé, F. and Domingo-Ferrer, J. (2004). Outlier protection in continuous
microdata masking. *PSD 2004*, LNCS 3050, 201-215 (post-masking optimisation, IL'1, Score').
Templ, M. (2008). Statistical disclosure control for microdata using the R-package sdcMicro.
*Transactions on Data Privacy* 1, 67-85 (IL1s and the eigenvalue measure of ``dUtility``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.spatial import cKDTree

from ..errors import InputError

ZERO_RULES = ("skip", "scale")


# --------------------------------------------------------------------------- inputs
def as_pair(X, Xm, *, where: str = "information loss",
            names: Sequence[str] | None = None) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Check an original and a masked file and return them as float64 arrays with names.

    Accepts arrays or DataFrames. DataFrames must have the same column names (the masked
    file's are reordered to the original's); arrays the same number of columns. Missing or
    infinite values are refused with the column and row named.
    """
    import pandas as pd

    if isinstance(X, pd.DataFrame) or isinstance(Xm, pd.DataFrame):
        if not (isinstance(X, pd.DataFrame) and isinstance(Xm, pd.DataFrame)):
            raise InputError(f"{where}: give both files as DataFrames or both as arrays.")
        a, b = [str(c) for c in X.columns], [str(c) for c in Xm.columns]
        if set(a) != set(b):
            only_x = sorted(set(a) - set(b))
            only_m = sorted(set(b) - set(a))
            raise InputError(f"{where}: the original and masked files have different columns "
                             f"(only in the original: {only_x}; only in the masked: {only_m}); "
                             "compare the same variables.")
        names = a
        X, Xm = X[a].to_numpy(dtype=np.float64), Xm[a].to_numpy(dtype=np.float64)
    X = np.asarray(X, dtype=np.float64)
    Xm = np.asarray(Xm, dtype=np.float64)
    if X.ndim == 1:
        X = X[:, None]
    if Xm.ndim == 1:
        Xm = Xm[:, None]
    if X.ndim != 2 or Xm.ndim != 2:
        raise InputError(f"{where}: the files must be 2-d (records x variables); got shapes "
                         f"{X.shape} and {Xm.shape}.")
    if X.shape[1] != Xm.shape[1]:
        raise InputError(f"{where}: the original has {X.shape[1]} variables and the masked file "
                         f"{Xm.shape[1]}; compare the same variables.")
    names = list(names) if names is not None else [f"x{j}" for j in range(X.shape[1])]
    for label, A in (("original", X), ("masked", Xm)):
        if A.shape[0] < 2:
            raise InputError(f"{where}: the {label} file has {A.shape[0]} records; at least 2 are needed.")
        bad = ~np.isfinite(A)
        if bad.any():
            r, c = np.argwhere(bad)[0]
            raise InputError(f"{where}: the {label} file has {int(bad.sum())} missing or infinite "
                             f"values (first in column {names[c]!r}, row {r}); impute or drop them first.")
    return X, Xm, names


def standardiser(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Means and standard deviations (ddof=1) of the original; a constant column gets sd 1.

    Every distance of the primed measures is taken on records standardised with these
    (the original's) figures, for both files (Algorithm 13, step 1).
    """
    mean = X.mean(axis=0)
    sd = X.std(axis=0, ddof=1)
    return mean, np.where(sd > 0, sd, 1.0)


def nearest_original(X: np.ndarray, Xm: np.ndarray, *, tree: cKDTree | None = None) -> np.ndarray:
    """c(i): index of the original record nearest to each masked record.

    Euclidean distance on records standardised with the original's means and sds (seed,
    section 5.1). A KD-tree makes it O(n' log n). Ties go to the tree's first hit.
    """
    mean, sd = standardiser(X)
    if tree is None:
        tree = cKDTree((X - mean) / sd)
    _, idx = tree.query((Xm - mean) / sd, k=1)
    return np.asarray(idx, dtype=np.int64)


def correspondence(X: np.ndarray, Xm: np.ndarray, primed: bool | None, c: np.ndarray | None,
                   what: str) -> tuple[np.ndarray, bool, str]:
    """The original record corresponding to each masked record, whether the primed measure is
    used, and a note saying why when it was chosen automatically.

    ``primed=None`` chooses the primed measure when n' != n: the corresponding record is then
    c(i), the nearest original (``c`` if given). Without it the correspondence is i -> i.
    """
    if c is not None and (primed or primed is None):
        return np.asarray(c, dtype=np.int64), True, ""
    note = ""
    if primed is None:
        primed = X.shape[0] != Xm.shape[0]
        if primed:
            note = (f"the masked file has {Xm.shape[0]} records and the original {X.shape[0]}: "
                    f"{what}' (corresponding record = nearest original on all variables) is used")
    elif not primed and X.shape[0] != Xm.shape[0]:
        raise InputError(f"{what}: primed=False needs files of the same size; got {X.shape[0]} and "
                         f"{Xm.shape[0]} records. Use primed=True (or None).")
    return (nearest_original(X, Xm) if primed else np.arange(Xm.shape[0])), bool(primed), note


# --------------------------------------------------------------------------- terms
def _relative(num: np.ndarray, den: np.ndarray, scale: np.ndarray, zero: str) -> tuple[np.ndarray, int]:
    """|num| / |den| elementwise with the zero-denominator rule; returns (terms, n_skipped).

    Skipped terms are NaN (left out of the mean by the caller)."""
    num = np.abs(num)
    den = np.abs(den)
    zero_den = den == 0
    if zero == "scale":
        den = np.where(zero_den, np.broadcast_to(scale, den.shape), den)
        zero_den = den == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        out = num / den
    out = np.where(zero_den & (num == 0), 0.0, out)
    skip = zero_den & (num != 0)
    out = np.where(skip, np.nan, out)
    return out, int(skip.sum())


def _mean(terms: np.ndarray) -> float:
    t = terms[~np.isnan(terms)]
    return float(t.mean()) if t.size else 0.0


def _moments(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Means and covariance matrix divided by n (the moments eq. 5.3 preserves)."""
    mean = A.mean(axis=0)
    C = A - mean
    return mean, (C.T @ C) / A.shape[0]


def _corr(cov: np.ndarray) -> np.ndarray:
    s = np.sqrt(np.diag(cov))
    with np.errstate(divide="ignore", invalid="ignore"):
        r = cov / np.outer(s, s)
    return np.where(np.outer(s, s) > 0, r, 0.0)


def il1(X, Xm, *, zero: str = "skip") -> float:
    """IL1: mean relative absolute deviation of corresponding values (needs n' = n)."""
    return _il1_terms(np.asarray(X, float), np.asarray(Xm, float), None, zero)[0]


def _il1_terms(X, Xm, c, zero):
    ref = X if c is None else X[c]
    if ref.shape != Xm.shape:
        raise InputError(f"IL1 needs one masked record per original record (shapes {X.shape} and "
                         f"{Xm.shape}); use IL'1 (primed=True) for files of different sizes.")
    sd = X.std(axis=0, ddof=1)
    terms, skipped = _relative(Xm - ref, ref, sd, zero)
    return _mean(terms), skipped, terms


def il1_primed(X, Xm, *, c: np.ndarray | None = None, zero: str = "skip") -> float:
    """IL'1 (seed eq. 5.2): IL1 against each masked record's nearest original record c(i)."""
    X, Xm = np.asarray(X, float), np.asarray(Xm, float)
    c = nearest_original(X, Xm) if c is None else c
    return _il1_terms(X, Xm, c, zero)[0]


def il1_record_contributions(X: np.ndarray, Xm: np.ndarray, c: np.ndarray, *, zero: str = "skip") -> np.ndarray:
    """Each masked record's share of the IL'1 sum: sum_j |x_{c(i)j} - x'_ij| / |x_{c(i)j}|."""
    terms = _il1_terms(np.asarray(X, float), np.asarray(Xm, float), c, zero)[2]
    return np.nansum(terms, axis=1)


def il2(X, Xm, *, zero: str = "skip") -> float:
    """IL2: mean relative absolute deviation of the means."""
    X, Xm = np.asarray(X, float), np.asarray(Xm, float)
    t, _ = _relative(Xm.mean(0) - X.mean(0), X.mean(0), X.std(0, ddof=1), zero)
    return _mean(t)


def il3(X, Xm, *, zero: str = "skip") -> float:
    """IL3: mean relative absolute deviation of the covariances v_jk, j <= k."""
    return _il34(X, Xm, zero)[0]


def il4(X, Xm, *, zero: str = "skip") -> float:
    """IL4: mean relative absolute deviation of the variances."""
    return _il34(X, Xm, zero)[2]


def _il34(X, Xm, zero):
    X, Xm = np.asarray(X, float), np.asarray(Xm, float)
    _, V = _moments(X)
    _, Vm = _moments(Xm)
    sd = np.sqrt(np.diag(V))
    iu = np.triu_indices(X.shape[1])
    t3, s3 = _relative(Vm[iu] - V[iu], V[iu], np.outer(sd, sd)[iu], zero)
    t4, s4 = _relative(np.diag(Vm) - np.diag(V), np.diag(V), sd * sd, zero)
    return _mean(t3), s3, _mean(t4), s4


def il5(X, Xm) -> float:
    """IL5: mean absolute difference of the correlations rho_jk, j < k (0 for one variable)."""
    X, Xm = np.asarray(X, float), np.asarray(Xm, float)
    d = X.shape[1]
    if d < 2:
        return 0.0
    iu = np.triu_indices(d, 1)
    return float(np.abs(_corr(_moments(Xm)[1])[iu] - _corr(_moments(X)[1])[iu]).mean())


def il1s(X, Xm) -> float:
    """IL1s as a mean: 1/(n d) sum |x_ij - x'_ij| / (sqrt(2) sd_j).

    sdcMicro's ``dUtility(method="IL1s")`` reports the unnormalised sum; this is that sum
    divided by n d, so it does not grow with the file. Needs n' = n.
    """
    X, Xm = np.asarray(X, float), np.asarray(Xm, float)
    if X.shape != Xm.shape:
        raise InputError(f"IL1s needs one masked record per original record (shapes {X.shape} and {Xm.shape}).")
    sd = X.std(axis=0, ddof=1)
    sd = np.where(sd > 0, sd, 1.0)
    return float((np.abs(X - Xm) / (np.sqrt(2) * sd)).mean())


def eigen_loss(X, Xm) -> float:
    """sdcMicro's eigenvalue measure: sum_k |e_k - e'_k| / e_k over the eigenvalues (sorted
    decreasingly) of the correlation matrices of X and X' (each standardised with its own
    figures, as ``var(scale(x))``). Eigenvalues that are 0 in X are skipped."""
    X, Xm = np.asarray(X, float), np.asarray(Xm, float)
    e1 = np.sort(np.linalg.eigvalsh(np.corrcoef(X, rowvar=False).reshape(X.shape[1], -1)))[::-1]
    e2 = np.sort(np.linalg.eigvalsh(np.corrcoef(Xm, rowvar=False).reshape(Xm.shape[1], -1)))[::-1]
    ok = np.abs(e1) > 1e-12
    return float((np.abs(e1 - e2)[ok] / e1[ok]).sum())


# --------------------------------------------------------------------------- together
@dataclass(frozen=True)
class InformationLoss:
    """IL1..IL5 (IL1 is IL'1 when ``primed``), IL = 100 mean(IL1..IL5), plus IL1s and eigen.

    ``skipped`` counts terms left out because of a zero denominator, per measure; ``note``
    says why primed measures were used when they were chosen automatically.
    """

    il1: float
    il2: float
    il3: float
    il4: float
    il5: float
    il: float
    primed: bool
    il1s: float | None
    eigen: float
    skipped: dict = field(default_factory=dict)
    note: str = ""

    def to_dict(self) -> dict:
        key = "il1_primed" if self.primed else "il1"
        return {key: self.il1, "il2": self.il2, "il3": self.il3, "il4": self.il4, "il5": self.il5,
                ("il_primed" if self.primed else "il"): self.il, "primed": self.primed,
                "il1s": self.il1s, "eigen": self.eigen, "skipped": dict(self.skipped), "note": self.note}


def information_loss(X, Xm, *, primed: bool | None = None, zero: str = "skip",
                     c: np.ndarray | None = None) -> InformationLoss:
    """All information-loss measures between an original and a masked file.

    Parameters
    ----------
    X, Xm : array (n, d) and (n', d), or DataFrames with the same columns
        Original and masked files.
    primed : bool, optional
        Use IL'1 (nearest-original mapping) instead of IL1. ``None`` chooses IL'1 when
        n' != n (there is no record correspondence) and says so in ``note``.
    zero : {"skip", "scale"}
        Rule for zero denominators (see the module docstring).
    c : array of int, optional
        Precomputed nearest-original indices c(i) for IL'1.
    """
    if zero not in ZERO_RULES:
        raise InputError(f"information_loss: zero must be one of {ZERO_RULES}; got {zero!r}.")
    X, Xm, _ = as_pair(X, Xm)
    true, primed, note = correspondence(X, Xm, primed, c, "IL")
    v1, s1, _ = _il1_terms(X, Xm, true if primed else None, zero)
    t2, s2 = _relative(Xm.mean(0) - X.mean(0), X.mean(0), X.std(0, ddof=1), zero)
    v3, s3, v4, s4 = _il34(X, Xm, zero)
    v2, v5 = _mean(t2), il5(X, Xm)
    parts = (v1, v2, v3, v4, v5)
    return InformationLoss(v1, v2, v3, v4, v5, 100.0 * float(np.mean(parts)), bool(primed),
                           None if X.shape != Xm.shape else il1s(X, Xm), eigen_loss(X, Xm),
                           {"il1": s1, "il2": s2, "il3": s3, "il4": s4}, note)


__all__ = ["InformationLoss", "as_pair", "correspondence", "eigen_loss", "il1", "il1_primed", "il1_record_contributions",
           "il1s", "il2", "il3", "il4", "il5", "information_loss", "nearest_original", "standardiser"]
