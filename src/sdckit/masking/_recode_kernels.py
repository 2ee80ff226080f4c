"""Compiled loops of top and bottom coding: the coding itself (one pass) and its independent
check on the output (one pass over the input and the output), so that the step costs about
what the replacement costs (Hundepool et al. 2012, sec. 3.4.3).
"""

from __future__ import annotations

from numba import njit


@njit(cache=True, nogil=True)
def top_bottom_code(x, out, top, top_value, bottom, bottom_value):  # pragma: no cover - compiled
    """out[i] = top_value where x[i] > top, bottom_value where x[i] < bottom, else x[i]
    (NaN compares false, so it stays NaN; no top is top = inf, no bottom is bottom = -inf)."""
    for i in range(x.shape[0]):
        v = x[i]
        out[i] = top_value if v > top else (bottom_value if v < bottom else v)


@njit(cache=True, nogil=True)
def top_bottom_check(x, y, top, top_value, bottom, bottom_value):  # pragma: no cover - compiled
    """Read the input and the output once: whether missing values stayed missing, whether every
    record follows the coding rule (so the same value always maps to the same value), the
    records whose value changed and the released values present (branch-free, so the loop
    runs on vectors).

    Returns (missing_kept, rule_holds, changed, n_released)."""
    nan_mismatch = 0
    broken = 0
    changed = 0
    n = 0
    for i in range(x.shape[0]):
        a = x[i]
        b = y[i]
        a_nan = a != a
        b_nan = b != b
        nan_mismatch += a_nan ^ b_nan
        expected = top_value if a > top else (bottom_value if a < bottom else a)
        valid = not (a_nan or b_nan)
        broken += valid and (b != expected)
        changed += valid and (b != a)
        n += not b_nan
    return nan_mismatch == 0, broken == 0, changed, n
