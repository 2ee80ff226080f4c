"""Grouped sums whose result does not depend on how the rows are split into partitions.

A floating-point sum depends on the order of its terms. F_k (the sum of the weights of a key
combination) and the moments that scale noise are summed per partition and then across
partitions, so a plain sum would change in its last bits with the number of partitions.
These kernels keep each sum as an unevaluated pair ``hi + lo`` (double-double, error-free
TwoSum of Knuth), which carries about 106 bits; the pair rounded to float64 is then the
correctly rounded sum unless the exact sum lies within about ``(m * 2^-53)^2`` (relative)
of a rounding boundary, ``m`` the terms of one sum: for m = 10^6 about 1e-20, so the same
float64 comes out for any partitioning in practice.

References
----------
Knuth, D. E. (1998). The Art of Computer Programming, vol. 2, 3rd ed., sec. 4.2.2 (TwoSum).

Ogita, T., Rump, S. M. and Oishi, S. (2005). Accurate sum and dot product. SIAM Journal on
Scientific Computing 26(6), 1955-1988. (Algorithm Sum2 and its error bound.)
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _dd_bincount(group, values, n_groups):  # pragma: no cover - compiled
    hi = np.zeros(n_groups)
    lo = np.zeros(n_groups)
    for i in range(group.shape[0]):
        g = group[i]
        a = hi[g]
        b = values[i]
        s = a + b                      # TwoSum(a, b): s + e == a + b exactly
        bb = s - a
        e = (a - (s - bb)) + (b - bb)
        hi[g] = s
        lo[g] += e
    return hi, lo


def dd_bincount(group: np.ndarray, values: np.ndarray, n_groups: int,
                lo_values: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Double-double sums of ``values`` (plus optional ``lo_values``) per group id.

    Returns ``(hi, lo)``; ``hi + lo`` is the sum. ``lo_values`` are the low parts of values
    that are themselves double-double (merging partial sums).
    """
    group = np.ascontiguousarray(group, dtype=np.int64)
    hi, lo = _dd_bincount(group, np.ascontiguousarray(values, dtype=np.float64), int(n_groups))
    if lo_values is not None:
        lo = lo + np.bincount(group, weights=lo_values, minlength=int(n_groups))
    return _renormalise(hi, lo)


def _renormalise(hi: np.ndarray, lo: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Fast TwoSum: the pair with ``hi`` the float64 nearest to ``hi + lo``."""
    s = hi + lo
    return s, lo - (s - hi)


def dd_total(values: np.ndarray) -> tuple[float, float]:
    """Double-double sum of a whole array."""
    hi, lo = dd_bincount(np.zeros(values.shape[0], dtype=np.int64), values, 1)
    return float(hi[0]), float(lo[0])


def dd_merge(pairs: list[tuple[float, float]]) -> tuple[float, float]:
    """Merge double-double totals (``[(hi, lo), ...]``) into one pair."""
    if not pairs:
        return 0.0, 0.0
    arr = np.asarray(pairs, dtype=np.float64).reshape(-1, 2)
    hi, lo = dd_bincount(np.zeros(arr.shape[0], dtype=np.int64), arr[:, 0], 1, arr[:, 1])
    return float(hi[0]), float(lo[0])


@njit(cache=True)
def _dd_moments(x):  # pragma: no cover - compiled
    # n, sum x (hi, lo), sum x^2 (hi, lo) over the finite values; x*x split exactly
    # (Dekker's TwoProduct with Veltkamp's split, factor 2^27 + 1)
    n = 0
    s1 = 0.0
    c1 = 0.0
    s2 = 0.0
    c2 = 0.0
    for i in range(x.shape[0]):
        a = x[i]
        if not np.isfinite(a):
            continue
        n += 1
        s = s1 + a
        bb = s - s1
        c1 += (s1 - (s - bb)) + (a - bb)
        s1 = s
        p = a * a
        t = 134217729.0 * a
        ah = t - (t - a)
        al = a - ah
        pe = ((ah * ah - p) + 2.0 * ah * al) + al * al   # p + pe == a*a exactly
        s = s2 + p
        bb = s - s2
        c2 += (s2 - (s - bb)) + (p - bb) + pe
        s2 = s
    return n, s1, c1, s2, c2


def dd_moments(x: np.ndarray) -> tuple[int, float, float, float, float]:
    """Count, double-double sum and double-double sum of squares of the finite values."""
    n, a, b, c, d = _dd_moments(np.ascontiguousarray(x, dtype=np.float64))
    return int(n), float(a), float(b), float(c), float(d)


def merge_moments(parts: list[tuple]) -> tuple[int, float, float, float, float]:
    """Merge :func:`dd_moments` of partitions."""
    n = sum(int(p[0]) for p in parts)
    s1 = dd_merge([(p[1], p[2]) for p in parts])
    s2 = dd_merge([(p[3], p[4]) for p in parts])
    return n, s1[0], s1[1], s2[0], s2[1]


def mean_sd(moments: tuple[int, float, float, float, float], ddof: int = 1) -> tuple[float, float]:
    """Mean and standard deviation from merged moments, computed in exact rational arithmetic
    from the double-double sums (so they depend on those sums only)."""
    from fractions import Fraction

    n, a, b, c, d = moments
    if n <= ddof:
        return float("nan"), float("nan")
    s1 = Fraction(a) + Fraction(b)
    s2 = Fraction(c) + Fraction(d)
    var = (s2 - s1 * s1 / n) / (n - ddof)   # sum (x - mean)^2 / (n - ddof)
    return float(s1 / n), float(max(var, Fraction(0))) ** 0.5
