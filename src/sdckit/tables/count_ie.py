"""Exact counting of 2-way tables with at most four columns (or rows): meet in the middle
with inclusion-exclusion, compiled with numba, in int64 when the count allows, otherwise modulo
the primes of :mod:`sdckit.tables.count_dp` with the Chinese remainder theorem.

``"ie-mitm"`` — at most four columns (or rows): meet in the middle over the row sums ``a``
of the first two columns,
    ``N = sum_a B(a; c_1) B(r - a; c_3)``,
where ``B(u; t) = #{x : 0 <= x <= u, sum x = t}`` is a bounded composition count, in closed
form by inclusion-exclusion ``sum_S (-1)^|S| binom(t - sum_{i in S}(u_i + 1) + R - 1, R - 1)``.

References
----------
Diaconis, P. and Gangolli, A. (1995). Rectangular arrays with fixed margins. In *Discrete
Probability and Algorithms*, IMA Vol. 72, 15-41 (the hair/eye margins, 1,225,914,276,768,514).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .count_dp import PRIMES, crt, n_primes_for
from .count_light import IE_MITM_RATE, ie_mitm_seconds, ie_mitm_work  # noqa: F401  (importable from here as before)
from .count_light import ie_plans as _ie_plans

__all__ = ["ie_mitm_count", "ie_mitm_work", "ie_mitm_seconds"]

@njit(cache=True)
def _bounded_comp_mod(u, t, binom, primes, out):
    """``B(u; t) = #{x: 0 <= x <= u, sum x = t}`` modulo each prime, by inclusion-exclusion
    over subsets ``S``: ``sum_S (-1)^|S| binom(t - sum_S (u_i + 1) + R - 1, R - 1)``."""
    R = u.size
    K = primes.size
    for k in range(K):
        out[k] = 0
    for mask in range(1 << R):
        rest = t
        sign = 1
        for i in range(R):
            if mask & (1 << i):
                rest -= u[i] + 1
                sign = -sign
        if rest < 0:
            continue
        for k in range(K):
            v = binom[rest, k]
            if sign > 0:
                out[k] += v
                if out[k] >= primes[k]:
                    out[k] -= primes[k]
            else:
                out[k] -= v
                if out[k] < 0:
                    out[k] += primes[k]


@njit(cache=True)
def _split_start(r, a, total_left):
    """State of the odometer over the splits ``a`` (0 <= a_i <= r_i, sum a = total_left):
    remainders, suffix capacities (the last coordinates must absorb what is left) and the
    position."""
    R = r.size
    cap = np.zeros(R + 1, np.int64)
    for i in range(R - 1, -1, -1):
        cap[i] = cap[i + 1] + r[i]
    rem = np.zeros(R + 1, np.int64)
    rem[0] = total_left
    pos = np.zeros(1, np.int64)
    a[0] = max(0, rem[0] - cap[1]) - 1
    return rem, cap, pos


@njit(cache=True)
def _split_next(r, a, b, rem, cap, pos):
    """Advance to the next split: a_0..a_{R-2} run as an odometer, a_{R-1} is implied and
    b = r - a. Returns False when every split has been visited."""
    R = r.size
    i = pos[0]
    while i >= 0:
        a[i] += 1
        hi = min(r[i], rem[i])
        if a[i] > hi:
            i -= 1
            continue
        rem[i + 1] = rem[i] - a[i]
        if i < R - 2:
            i += 1
            a[i] = max(0, rem[i] - cap[i + 1]) - 1
            continue
        last = rem[i + 1]
        if last < 0 or last > r[R - 1]:
            continue
        a[R - 1] = last
        for j in range(R):
            b[j] = r[j] - a[j]
        pos[0] = i
        return True
    pos[0] = i
    return False


@njit(cache=True)
def _ie_mitm(r, c, binom, primes):
    R = r.size
    K = primes.size
    total_left = c[0] + c[1]
    acc = np.zeros(K, np.int64)
    a = np.zeros(R, np.int64)
    b = np.zeros(R, np.int64)
    f = np.zeros(K, np.int64)
    g = np.zeros(K, np.int64)
    rem, cap, pos = _split_start(r, a, total_left)
    while _split_next(r, a, b, rem, cap, pos):
        _bounded_comp_mod(a, c[0], binom, primes, f)
        _bounded_comp_mod(b, c[2], binom, primes, g)
        for k in range(K):
            acc[k] = (acc[k] + (f[k] * g[k]) % primes[k]) % primes[k]
    return acc


@njit(cache=True, inline="always")
def _h(t, sums, signs, v, binom):
    """``h(v) = sum_S (-1)^|S| binom(t - sums[S] - v + R - 1, R - 1)`` over the subsets ``S`` of
    all but the last two coordinates."""
    out = 0
    for mask in range(sums.size):
        rest = t - sums[mask] - v
        if rest >= 0:
            out += signs[mask] * binom[rest]
    return out


@njit(cache=True)
def _ie_mitm_exact(r, c, binom):
    """:func:`_ie_mitm` in plain int64 when ``sum_a B B`` is known to stay below ``2**63``.

    The subsets of inclusion-exclusion split into those of the first ``R - 2`` coordinates and
    of the last two, ``(x, sigma - x)`` with ``sigma`` fixed by the first ones:
    ``B(a; t) = h(0) - h(x + 1) - h(sigma - x + 1) + h(sigma + 2)``; the outer coordinates run
    as an odometer, ``x`` in the inner loop with ``h(0)``, ``h(sigma + 2)`` and the subset
    sums computed once per outer tuple (half the binomials of the plain formula).
    """
    R = r.size
    T = c[0] + c[1]
    Ro = R - 2
    no = 1 << Ro
    signs = np.ones(no, np.int64)
    for mask in range(no):
        bits = 0
        for j in range(Ro):
            if mask & (1 << j):
                bits += 1
        signs[mask] = -1 if bits % 2 else 1
    cap = np.zeros(R + 1, np.int64)
    for i in range(R - 1, -1, -1):
        cap[i] = cap[i + 1] + r[i]
    sL = np.zeros(no, np.int64)
    sR = np.zeros(no, np.int64)
    a = np.zeros(max(Ro, 1), np.int64)
    P = np.zeros(Ro + 1, np.int64)   # P[i] = a_0 + ... + a_{i-1}
    r2, r1 = r[R - 2], r[R - 1]
    acc = 0
    i = 0
    if Ro > 0:
        a[0] = max(0, T - cap[1]) - 1
    while True:
        if Ro > 0:
            # odometer over the outer coordinates (each a_i within its row sum and what is left)
            if i < 0:
                break
            a[i] += 1
            if a[i] > min(r[i], T - P[i]):
                i -= 1
                continue
            P[i + 1] = P[i] + a[i]
            if i < Ro - 1:
                i += 1
                a[i] = max(0, T - P[i] - cap[i + 1]) - 1
                continue
        sigma = T - P[Ro]
        if 0 <= sigma <= r2 + r1:
            for mask in range(no):
                x1 = 0
                x2 = 0
                for j in range(Ro):
                    if mask & (1 << j):
                        x1 += a[j] + 1
                        x2 += r[j] - a[j] + 1
                sL[mask] = x1
                sR[mask] = x2
            sig2 = r2 + r1 - sigma
            hL0 = _h(c[0], sL, signs, 0, binom)
            hL2 = _h(c[0], sL, signs, sigma + 2, binom)
            hR0 = _h(c[2], sR, signs, 0, binom)
            hR2 = _h(c[2], sR, signs, sig2 + 2, binom)
            for x in range(max(0, sigma - r1), min(r2, sigma) + 1):
                f = hL0 - _h(c[0], sL, signs, x + 1, binom) - _h(c[0], sL, signs, sigma - x + 1, binom) + hL2
                if f:
                    g = (hR0 - _h(c[2], sR, signs, r2 - x + 1, binom)
                         - _h(c[2], sR, signs, sig2 - r2 + x + 1, binom) + hR2)
                    acc += f * g
        if Ro == 0:
            break
    return acc


def ie_mitm_count(rows, cols) -> int:
    """Exact count for tables with at most four columns (or rows), see the module notes.

    Of the two orientations and the three ways to split four columns into halves, the one
    visiting the fewest vectors ``a`` runs; plain int64 arithmetic when
    ``#a * max B * max B < 2**62``, otherwise modulo primes with CRT.
    """
    r0 = [int(x) for x in rows if x]
    c0 = [int(x) for x in cols if x]
    if sum(r0) != sum(c0):
        return 0
    if len(r0) <= 1 or len(c0) <= 1:
        return 1
    plans = _ie_plans(r0, c0)
    if not plans:
        raise ValueError("ie-mitm needs at most four columns or four rows")
    work, r, c = min(plans, key=lambda p: p[0])
    n = sum(r)
    R = len(r)
    n_a = work / 2 ** (R + 1)
    if n_a * math.comb(c[0] + R - 1, R - 1) * math.comb(c[2] + R - 1, R - 1) < 2 ** 62:
        binom1 = np.array([math.comb(t + R - 1, R - 1) for t in range(n + 1)], np.int64)
        return int(_ie_mitm_exact(np.array(r, np.int64), np.array(c, np.int64), binom1))
    k = n_primes_for(r, c)
    primes = np.array(PRIMES[:k], np.int64)
    binom = np.zeros((n + 1, k), np.int64)
    for t in range(n + 1):
        v = math.comb(t + R - 1, R - 1)
        binom[t] = [v % p for p in PRIMES[:k]]
    res = _ie_mitm(np.array(r, np.int64), np.array(c, np.int64), binom, primes)
    return crt(res, PRIMES[:k])
