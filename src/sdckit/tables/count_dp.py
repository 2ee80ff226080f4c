"""Fast exact counting of 2-way tables with fixed margins (compiled, modular, exact).

Two exact methods, both compiled with numba and run modulo several primes below ``2**31``
(so that every sum and product fits in 64-bit integers and no Python big integer sits in the
hot loop); the count is rebuilt by the Chinese remainder theorem from as many primes as an
upper bound on the count needs.

``"kostka"`` — the RSK identity
    ``N(r, c) = sum_nu K_{nu, r} K_{nu, c}``
over partitions ``nu`` of the total with at most ``m = min(R, C)`` parts, where
``K_{nu, r}`` is the Kostka number (semistandard tableaux of shape ``nu`` and content ``r``;
Robinson-Schensted-Knuth puts the tables with margins ``(r, c)`` in bijection with pairs of
such tableaux of one shape). The vector ``(K_{nu, r})_nu`` is built by Pieri's rule
``h_k s_kappa = sum s_nu`` over horizontal strips ``nu / kappa`` of size ``k``, one margin
entry at a time. A horizontal strip is an interlacing ``nu_{i+1} <= kappa_i <= nu_i``;
adding it coordinate by coordinate from the last part up to the second is a running sum
along one coordinate of the partition (every intermediate vector is again a partition), and
the first part takes what is left. States are partitions, i.e. the multiset of remaining
sums, so the symmetry of permuting equal and unequal rows alike is used exactly: the work is
about ``m!`` times smaller than a dynamic programme over vectors of partial sums.
Partitions of each size are ranked in lexicographic order with precomputed tables, so
the running sums are array operations on one layer (one partition size) at a time.

``"ie-mitm"`` — at most four columns (or rows): meet in the middle over the row sums ``a``
of the first two columns,
    ``N = sum_a B(a; c_1) B(r - a; c_3)``,
where ``B(u; t) = #{x : 0 <= x <= u, sum x = t}`` is a bounded composition count, in closed
form by inclusion-exclusion ``sum_S (-1)^|S| binom(t - sum_{i in S}(u_i + 1) + R - 1, R - 1)``.

References
----------
Diaconis, P. and Gangolli, A. (1995). Rectangular arrays with fixed margins. In *Discrete
Probability and Algorithms*, IMA Vol. 72, 15-41 (the hair/eye margins, 1,225,914,276,768,514).
Knuth, D. E. (1970). Permutations, matrices, and generalized Young tableaux. *Pacific Journal
of Mathematics* 34, 709-727 (RSK: tables with margins ``(r, c)`` <-> pairs of tableaux).
Stanley, R. P. (1999). *Enumerative Combinatorics*, Vol. 2, sections 7.10-7.13 (Kostka numbers,
Pieri's rule, ``<h_r, h_c> = sum K K``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["PRIMES", "count_bound_bits", "n_primes_for", "crt", "kostka_count", "ie_mitm_count",
           "kostka_work", "kostka_memory", "ie_mitm_work"]

# The largest primes below 2**31 (checked by trial division in tests); a sum of two
# residues and a product of two residues fit in int64.
PRIMES = (2147483647, 2147483629, 2147483587, 2147483579, 2147483563, 2147483549, 2147483543,
          2147483497, 2147483489, 2147483477, 2147483423, 2147483399, 2147483353, 2147483323,
          2147483269, 2147483249, 2147483237, 2147483179, 2147483171, 2147483137)


def count_bound_bits(rows, cols) -> float:
    """log2 of an upper bound on the number of tables: each column alone has
    ``binom(c_j + R - 1, R - 1)`` fillings (and the same with rows and columns swapped)."""
    def lb(a, b):
        return sum(math.lgamma(x + len(b)) - math.lgamma(x + 1) - math.lgamma(len(b)) for x in a) / math.log(2)
    return min(lb(cols, rows), lb(rows, cols))


def n_primes_for(rows, cols) -> int:
    """How many primes of :data:`PRIMES` make their product exceed twice the count bound."""
    bits = count_bound_bits(rows, cols) + 2
    k, have = 0, 0.0
    while have <= bits:
        if k == len(PRIMES):
            raise ValueError("count too large for the built-in primes")
        have += math.log2(PRIMES[k])
        k += 1
    return k


def crt(residues, primes) -> int:
    """The integer ``0 <= x < prod(primes)`` with ``x = residues[k] (mod primes[k])``."""
    x, mod = 0, 1
    for r, p in zip(residues, primes):
        r, p = int(r), int(p)
        # x + mod * t = r (mod p)
        t = ((r - x) * pow(mod, -1, p)) % p
        x += mod * t
        mod *= p
    return x


# ----------------------------------------------------------------------------- partition ranking

def _rank_tables(n: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """``P[k, t, b]`` = partitions of ``t`` into <= k parts each <= b (as float then int64),
    ``Q[k, t, b] = sum_{v < min(b, t + 1)} P[k - 1, t - v, v]`` (partitions whose largest part
    is below ``b``) for the lexicographic rank."""
    P = np.zeros((m + 1, n + 1, n + 1), np.int64)
    P[0, 0, :] = 1
    for k in range(1, m + 1):
        # P[k, t, b] = sum_{v=0}^{min(b,t)} P[k-1, t-v, v]
        for t in range(n + 1):
            v = np.arange(t + 1)
            terms = P[k - 1, t - v, v]
            cs = np.cumsum(terms)
            P[k, t, :t + 1] = cs
            P[k, t, t + 1:] = cs[-1]
    Q = np.zeros((m + 1, n + 1, n + 2), np.int64)
    for k in range(1, m + 1):
        for t in range(n + 1):
            v = np.arange(t + 1)
            cs = np.concatenate([[0], np.cumsum(P[k - 1, t - v, v])])  # cs[b] = sum_{v<b}
            Q[k, t, :t + 2] = cs
            Q[k, t, t + 2:] = cs[-1]
    return P, Q


@njit(cache=True)
def _first_partition(s, m, mu):
    q = s // m
    r = s % m
    for i in range(m):
        mu[i] = q + 1 if i < r else q


@njit(cache=True)
def _next_partition(mu, m):
    """Lexicographic successor (increasing in mu_1, then mu_2, ...) among partitions of
    sum(mu) into <= m parts; returns False after the last."""
    t = 0
    for j in range(m):
        t += mu[j]
    # t_i = sum of mu[i:], walk i from m-2 down to 0
    suffix = mu[m - 1]
    for i in range(m - 2, -1, -1):
        suffix += mu[i]
        nv = mu[i] + 1
        if i > 0 and nv > mu[i - 1]:
            continue
        rest = suffix - nv
        k = m - 1 - i
        if rest < 0 or rest > k * nv:
            continue
        mu[i] = nv
        q = rest // k
        r = rest % k
        for j in range(k):
            mu[i + 1 + j] = q + 1 if j < r else q
        return True
    return False


@njit(cache=True)
def _pieri_step(V, S, L, m, Q, P, primes):
    """Add a horizontal strip of size ``L`` to every partition of ``S`` (vector ``V`` over
    the layer of ``S``, residues in the columns); returns the vector over the layer ``S + L``.

    ``G_i`` (i = m..2) is the vector after the parts ``m..i`` have taken their share of the
    strip: ``G_i(mu) = G_{i+1}(mu) + G_i(mu - e_i)`` (running sum along part ``i``, kept
    when ``mu - e_i`` is a partition), one layer ``s = sum(mu)`` at a time; the first part
    then takes the rest, ``nu = mu + (S + L - s) e_1``.
    """
    K = primes.size
    top = S + L
    W = np.zeros((P[m, top, top], K), np.int64)
    prev = np.zeros((m, 1, K), np.int64)
    mu = np.zeros(m, np.int64)
    tt = np.zeros(m + 1, np.int64)   # t_j = s - sum_{l<j} mu_l
    T = np.zeros(m, np.int64)        # rank terms Q[m-j, t_j, mu_j]
    A = np.zeros(m, np.int64)        # rank terms of the neighbour one layer down
    g = np.zeros(K, np.int64)
    for s in range(S, top + 1):
        size = P[m, s, s]
        cur = np.zeros((m, size, K), np.int64)
        _first_partition(s, m, mu)
        r = 0
        while True:
            t = s
            for j in range(m):
                tt[j] = t
                T[j] = Q[m - j, t, mu[j]]
                A[j] = Q[m - j, t - 1, mu[j]] if t >= 1 else 0
                t -= mu[j]
            # G_{m+1} at layer s is V when s == S, else 0
            if s == S:
                for k in range(K):
                    g[k] = V[r, k]
            else:
                for k in range(K):
                    g[k] = 0
            lower = 0  # sum_{j<i} A[j]
            upper = 0  # sum_{j>i} T[j]
            for j in range(1, m):
                upper += T[j]
            for j in range(m - 1):
                lower += A[j]
            for i in range(m - 1, 0, -1):  # 0-based part i (1-based i + 1), last part first
                # lower = sum_{j<i} A_j ; upper = sum_{j>i} T_j
                if i < m - 1:
                    lower -= A[i]
                upper_i = 0
                for j in range(i + 1, m):
                    upper_i += T[j]
                nxt = mu[i + 1] if i + 1 < m else 0
                if s > S and mu[i] - 1 >= nxt:
                    nr = lower + Q[m - i, tt[i] - 1, mu[i] - 1] + upper_i
                    for k in range(K):
                        x = g[k] + prev[i, nr, k]
                        if x >= primes[k]:
                            x -= primes[k]
                        g[k] = x
                for k in range(K):
                    cur[i, r, k] = g[k]
            # the first part takes the rest: nu = mu + (top - s) e_1
            wr = Q[m, top, mu[0] + top - s]
            for j in range(1, m):
                wr += T[j]
            for k in range(K):
                x = W[wr, k] + g[k]
                if x >= primes[k]:
                    x -= primes[k]
                W[wr, k] = x
            r += 1
            if not _next_partition(mu, m):
                break
        prev = cur
    return W


@njit(cache=True)
def _remap(V, S, m_old, m_new, Q, P):
    """Re-index a vector over the partitions of ``S`` into <= m_old parts by their ranks among
    the partitions into <= m_new parts (zeros padded)."""
    K = V.shape[1]
    out = np.zeros((P[m_new, S, S], K), np.int64)
    mu = np.zeros(m_new, np.int64)
    _first_partition(S, m_old, mu)
    r = 0
    while True:
        t = S
        rk = 0
        for j in range(m_new):
            rk += Q[m_new - j, t, mu[j]]
            t -= mu[j]
        for k in range(K):
            out[rk, k] = V[r, k]
        r += 1
        if not _next_partition(mu[:m_old], m_old):
            break
    return out


@njit(cache=True)
def _kostka_vector(parts, m, Q, P, primes):
    """``(K_{nu, parts})_nu`` over the partitions of ``sum(parts)`` into <= m parts. After ``k``
    strips a partition has at most ``k`` parts, so step ``k`` enumerates only those
    (``min(k, m)`` coordinates) and the vector is re-indexed when the count grows."""
    K = primes.size
    V = np.ones((1, K), np.int64)
    S = 0
    mk_old = 1
    for k in range(parts.size):
        L = parts[k]
        mk = min(k + 1, m)
        if mk != mk_old:
            V = _remap(V, S, mk_old, mk, Q, P)
        V = _pieri_step(V, S, L, mk, Q, P, primes)
        mk_old = mk
        S += L
    if mk_old != m:
        V = _remap(V, S, mk_old, m, Q, P)
    return V


@njit(cache=True)
def _dot_mod(a, b, primes):
    K = primes.size
    out = np.zeros(K, np.int64)
    for r in range(a.shape[0]):
        for k in range(K):
            out[k] = (out[k] + (a[r, k] * b[r, k]) % primes[k]) % primes[k]
    return out


def kostka_work(rows, cols) -> float:
    """Number of partition-states the Pieri passes visit (sum of layer sizes over each strip)."""
    r = sorted((x for x in rows if x), reverse=True)
    c = sorted((x for x in cols if x), reverse=True)
    m = min(len(r), len(c))
    n = sum(r)
    if m <= 1:
        return 1.0
    # partitions of s into <= k parts, by the standard recurrence (floats: an estimate)
    p = np.zeros((m + 1, n + 1))
    p[0, 0] = 1.0
    for k in range(1, m + 1):
        p[k] = p[k - 1]
        for s in range(k, n + 1):
            p[k, s] += p[k, s - k]
    cum = np.concatenate([np.zeros((m + 1, 1)), np.cumsum(p, axis=1)], axis=1)
    work = 0.0
    for parts in (r, c):
        S = 0
        for k, L in enumerate(parts):
            mk = min(k + 1, m)
            work += (cum[mk, S + L + 1] - cum[mk, S]) * mk
            S += L
    return float(work)


def kostka_memory(rows, cols) -> float:
    """Peak bytes of :func:`kostka_count`: ``2 m + 1`` vectors over the largest layer (the
    partitions of the total into at most ``m`` parts), one int64 per prime."""
    r = [x for x in rows if x]
    c = [x for x in cols if x]
    m = min(len(r), len(c))
    n = sum(r)
    if m <= 1:
        return 0.0
    p = np.zeros(n + 1)
    p[0] = 1.0
    for k in range(1, m + 1):
        for s in range(k, n + 1):
            p[s] += p[s - k]
    return float(p[n] * 8 * n_primes_for(r, c) * (2 * m + 1))


def kostka_count(rows, cols) -> int:
    """Exact count by the RSK identity and Pieri's rule (see the module notes)."""
    r = sorted((int(x) for x in rows if x), reverse=True)
    c = sorted((int(x) for x in cols if x), reverse=True)
    if sum(r) != sum(c):
        return 0
    m = min(len(r), len(c))
    if m <= 1:
        return 1
    n = sum(r)
    P, Q = _rank_tables(n, m)
    k = n_primes_for(r, c)
    primes = np.array(PRIMES[:k], np.int64)
    Kr = _kostka_vector(np.array(r, np.int64), m, Q, P, primes)
    Kc = _kostka_vector(np.array(c, np.int64), m, Q, P, primes)
    return crt(_dot_mod(Kr, Kc, primes), PRIMES[:k])


# ----------------------------------------------------------------------------- <= 4 columns

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


_LOWBIT = np.array([0 if k == 0 else (k & -k).bit_length() - 1 for k in range(256)], np.int64)


@njit(cache=True)
def _bounded_comp_exact(u, t, binom, sums, signs):
    """``B(u; t)`` in int64 (the caller has checked that no overflow can occur); subset sums
    ``sum_{i in S}(u_i + 1)`` built mask by mask from the lowest bit."""
    R = u.size
    out = binom[t] if t >= 0 else 0
    sums[0] = 0
    for mask in range(1, 1 << R):
        low = mask & (-mask)
        i = _LOWBIT[low & 0xFF] if low <= 0xFF else _LOWBIT[low >> 8] + 8
        sm = sums[mask ^ low] + u[i] + 1
        sums[mask] = sm
        rest = t - sm
        if rest >= 0:
            out += signs[mask] * binom[rest]
    return out


@njit(cache=True)
def _ie_mitm_exact(r, c, binom):
    """:func:`_ie_mitm` in plain int64 when ``sum_a B B`` is known to stay below ``2**63``."""
    R = r.size
    total_left = c[0] + c[1]
    acc = 0
    a = np.zeros(R, np.int64)
    b = np.zeros(R, np.int64)
    sums = np.zeros(1 << R, np.int64)
    signs = np.ones(1 << R, np.int64)
    for mask in range(1 << R):
        bits = 0
        for j in range(R):
            if mask & (1 << j):
                bits += 1
        signs[mask] = -1 if bits % 2 else 1
    rem, cap, pos = _split_start(r, a, total_left)
    while _split_next(r, a, b, rem, cap, pos):
        f = _bounded_comp_exact(a, c[0], binom, sums, signs)
        if f:
            acc += f * _bounded_comp_exact(b, c[2], binom, sums, signs)
    return acc


def ie_mitm_work(rows, cols) -> float:
    """Vectors ``a`` visited times ``2 * 2**R`` inclusion-exclusion terms for the cheapest
    orientation and split (``inf`` when neither side has at most four entries)."""
    plans = _ie_plans(rows, cols)
    return float(min(p[0] for p in plans)) if plans else math.inf


def _ie_plans(rows, cols):
    """Every (row side, column order) with at most four columns: the first two columns form the
    left half; the number of vectors ``a`` visited is the number of ``a <= r`` with
    ``sum a = c_0 + c_1`` (a bounded composition count)."""
    from ._compositions import bounded_compositions

    plans = []
    for r, c in ((rows, cols), (cols, rows)):
        r = sorted(int(x) for x in r if x)
        c = [int(x) for x in c if x]
        if len(c) > 4 or len(r) > 16 or len(r) < 2 or len(c) < 2:
            continue
        c = c + [0] * (4 - len(c))
        for first in ((0, 1), (0, 2), (0, 3)):
            rest = [k for k in range(4) if k not in first]
            order = [c[first[0]], c[first[1]], c[rest[0]], c[rest[1]]]
            plans.append((bounded_compositions(order[0] + order[1], r) * 2 ** (len(r) + 1), r, order))
    return plans


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
