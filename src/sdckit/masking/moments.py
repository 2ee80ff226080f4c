"""The noise scale from exact sums, shared by the in-memory ``noise`` step and the Dask engine.

Means, standard deviations (ddof = 1) and the covariance matrix of the complete records are
computed from double-double sums (:mod:`sdckit._sums`), merged across partitions without
rounding, so the in-memory step and the engine scale the noise alike bit for bit. The factor
F of a covariance matrix (F F^T = Sigma) comes from its eigen-decomposition, so singular
matrices are accepted.

References
----------
Brand, R. (2002). Microdata protection through noise addition. In *Inference Control in
Statistical Databases*, LNCS 2316, 97-116.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
from numba import njit

from .._sums import dd_bincount, dd_moments, mean_sd, merge_moments
from ..errors import InputError

#: key of the complete records' count, sums and cross-products in a moments dict
CROSS = "__cross__"


def psd_factor(S: np.ndarray) -> np.ndarray:
    """A factor F with F F^T = S for a positive semi-definite S (eigen-decomposition, so
    singular covariance matrices are accepted)."""
    vals, vecs = np.linalg.eigh(S)
    return vecs * np.sqrt(np.clip(vals, 0.0, None))


@njit(cache=True, nogil=True)
def _dd_cross(X):  # pragma: no cover - compiled
    """Double-double sums of x_a (a < p) and of x_a x_b (index p + a p + b) over the rows of
    X whose values are all finite, each sum accumulated in row order with TwoSum (as
    :func:`sdckit._sums.dd_bincount` adds them); no product array is formed. x_a x_b = x_b x_a,
    so each product below the diagonal is the sum above it, copied."""
    n, p = X.shape
    m = p + p * p
    hi = np.zeros(m)
    lo = np.zeros(m)
    count = 0
    for i in range(n):
        ok = True
        for a in range(p):
            if not np.isfinite(X[i, a]):
                ok = False
                break
        if not ok:
            continue
        count += 1
        for a in range(p):
            b = X[i, a]
            a0 = hi[a]
            s = a0 + b                     # TwoSum(a0, b): s + e == a0 + b exactly
            bb = s - a0
            lo[a] += (a0 - (s - bb)) + (b - bb)
            hi[a] = s
        for r in range(p):
            xr = X[i, r]
            for c in range(r, p):
                g = p + r * p + c
                b = xr * X[i, c]
                a0 = hi[g]
                s = a0 + b
                bb = s - a0
                lo[g] += (a0 - (s - bb)) + (b - bb)
                hi[g] = s
    for r in range(p):
        for c in range(r):
            hi[p + r * p + c] = hi[p + c * p + r]
            lo[p + r * p + c] = lo[p + c * p + r]
    return count, hi, lo


def cross_sums(X: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
    """The complete rows' count and the double-double sums of each variable and of each
    product of two variables (the :data:`CROSS` entry of :func:`moments_partition`)."""
    count, hi, lo = _dd_cross(np.asarray(X, dtype=np.float64))     # any memory order
    s = hi + lo                            # renormalised: hi the float64 nearest to hi + lo
    return int(count), s, lo - (s - hi)


def moments_partition(pdf: pd.DataFrame, variables: tuple[str, ...], cross: bool = False) -> dict:
    """{var: (n, sum hi, lo, sum of squares hi, lo)} of one frame; with ``cross`` also the
    complete records' count, sums and cross-products under :data:`CROSS`."""
    out = {v: dd_moments(pdf[v].to_numpy(dtype=np.float64, na_value=np.nan)) for v in variables}
    if cross:
        # sums and cross-products of the complete records, each a double-double pair
        out[CROSS] = cross_sums(pdf[list(variables)].to_numpy(dtype=np.float64, na_value=np.nan))
    return out


def merge_moment_dicts(parts: list[dict]) -> dict:
    """Merge the :func:`moments_partition` dicts of several partitions exactly."""
    out = {v: merge_moments([p[v] for p in parts]) for v in parts[0] if v != CROSS}
    if CROSS in parts[0]:
        n = sum(p[CROSS][0] for p in parts)
        m = parts[0][CROSS][1].size
        hi, lo = dd_bincount(np.tile(np.arange(m), len(parts)), np.concatenate([p[CROSS][1] for p in parts]),
                             m, np.concatenate([p[CROSS][2] for p in parts]))
        out[CROSS] = (n, hi, lo)
    return out


def covariance_from_sums(cross: tuple, p: int) -> np.ndarray:
    """Covariance (ddof = 1) of the complete records from the merged sums, in exact rationals:
    S_ij = (sum x_i x_j - sum x_i sum x_j / n) / (n - 1)."""
    n, hi, lo = cross
    if n < 2:
        raise InputError("noise: fewer than 2 records have all the variables; the covariance matrix cannot "
                         "be estimated: use method = \"additive\" or impute.")
    tot = [Fraction(float(a)) + Fraction(float(b)) for a, b in zip(hi, lo)]
    sums, prods = tot[:p], tot[p:]
    S = np.empty((p, p))
    for i in range(p):
        for j in range(p):
            S[i, j] = float((prods[i * p + j] - sums[i] * sums[j] / n) / (n - 1))
    return S


def exact_scale(X: np.ndarray, method: str = "additive", *,
                moments: bool = True) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None]:
    """In memory, the noise scale the Dask engine fits: means and sds (ddof = 1) of each
    column's finite values, and for ``"correlated"`` the covariance of the complete rows, from
    the same double-double sums (so both engines scale the noise alike). ``moments=False``
    leaves the means and sds out (None): correlated noise scales by the covariance alone."""
    X = np.asarray(X, dtype=np.float64).reshape(len(X), -1)
    means = sds = cov = None
    if moments:
        ms = [mean_sd(dd_moments(X[:, j])) for j in range(X.shape[1])]
        means, sds = np.array([m for m, _ in ms]), np.array([s for _, s in ms])
    if method == "correlated":
        cov = covariance_from_sums(cross_sums(X), X.shape[1])
    return means, sds, cov
