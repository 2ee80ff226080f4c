"""Fast exact counting of 2-way tables with fixed margins (compiled, modular, exact).

Exact methods compiled with numba and run modulo several primes below ``2**31``
(so that every sum fits in 32 bits and every product of two residues in 64 bits, and no
Python big integer sits in the hot loop); the count is rebuilt by the Chinese remainder
theorem from as many primes as an upper bound on the count needs.

``"kostka"`` — the RSK identity
    ``N(r, c) = sum_nu K_{nu, r} K_{nu, c}``
over partitions ``nu`` of the total with at most ``m = min(R, C)`` parts, where
``K_{nu, r}`` is the Kostka number (semistandard tableaux of shape ``nu`` and content ``r``;
Robinson-Schensted-Knuth puts the tables with margins ``(r, c)`` in bijection with pairs of
such tableaux of one shape). The vector ``(K_{nu, r})_nu`` is built by Pieri's rule
``h_k s_kappa = sum s_nu`` over horizontal strips ``nu / kappa`` of size ``k``, one margin
entry at a time (largest first). A horizontal strip is an interlacing
``nu_{i+1} <= kappa_i <= nu_i``; adding it part by part, last part first, is a cascade of
running sums along one coordinate (every intermediate vector is again a partition), done one
layer (partition size) at a time. States are partitions, i.e. the multiset of remaining sums,
so the symmetry of permuting rows is used exactly.

Layout: a partition of ``s`` is its tail ``(nu_2, ..., nu_m)`` (``nu_1`` is implied), ranked
lexicographically among the tails of partitions of the total ``n``. One array per part, over
all tails, is updated in place layer after layer: tails are visited in decreasing rank, so the
neighbour ``nu - e_p`` (lower rank) still holds the previous layer. Runs of consecutive ranks
(the last coordinate) are updated as contiguous uint32 slices, the residues of all primes of
a tail side by side. The tails with one value of ``nu_2`` form a block that is taken through
every layer of a strip while it is in cache; its one neighbour outside (``nu_2 - 1``) is read
from the previous block's history (one row per layer). A part that a strip creates holds at
most what the strip has added so far, which trims the costly last strip. The last part needs
no running sum: ``G_m^s(mu) = V(mu - (s - S) e_m)``, read from the vector ``V`` kept through
the strip.

Meeting at a lower layer (the default): with ``a`` one row sum, ``b`` one column sum (the
largest: :func:`_meet_plan`) and ``r', c'`` the others, ``h_a^perp h_b = sum_k h_{b-k} h_{a-k}^perp`` gives
    ``N = <h_{r'} h_a, h_{c'} h_b> = sum_{k=0}^{min(a,b)} <h_{b-k}^perp X, h_{a-k}^perp Y>``,
``X = K_{., r'}`` (partitions of ``n - a``), ``Y = K_{., c'}`` (of ``n - b``), each inner
product at the layer ``n - a - b + k`` (vectors restricted to ``m`` parts lose nothing: one
side has at most ``m - 1`` parts and removing a horizontal strip shortens a partition by at
most one). ``X`` and ``Y`` are built by Pieri's rule from ``r'`` and ``c'``, then the
strip removals ``h_j^perp`` run downwards from ``n - a`` and ``n - b`` to ``n - a - b`` in step
(:func:`_meet`), instead of the top layers with all ``m`` parts: less than half the time on
the benchmark margins.

``"ie-mitm"`` (at most four columns or rows) is in :mod:`sdckit.tables.count_ie`.

References
----------
Diaconis, P. and Gangolli, A. (1995). Rectangular arrays with fixed margins. In *Discrete
Probability and Algorithms*, IMA Vol. 72, 15-41 (the hair/eye margins, 1,225,914,276,768,514).
Knuth, D. E. (1970). Permutations, matrices, and generalized Young tableaux. *Pacific Journal
of Mathematics* 34, 709-727 (RSK: tables with margins ``(r, c)`` <-> pairs of tableaux).
Stanley, R. P. (1999). *Enumerative Combinatorics*, Vol. 2, sections 7.10-7.13 (Kostka numbers,
Pieri's rule, ``<h_r, h_c> = sum K K``).
Andrews, G. E. (1976). *The Theory of Partitions*, chapter 3 (partitions with bounded parts,
used for the ranks).
Macdonald, I. G. (1995). *Symmetric Functions and Hall Polynomials*, 2nd ed., chapter I
(skew Schur functions and the adjoint ``f^perp`` of multiplication by ``f``:
``h_j^perp s_lambda = sum s_mu`` over horizontal strips ``lambda / mu`` of size ``j``; since
``h_a`` has coproduct ``sum_i h_i (x) h_{a-i}``, ``h_a^perp (f g) = sum_i (h_i^perp f)(h_{a-i}^perp g)``,
and with ``h_i^perp h_b = h_{b-i}`` this is ``h_a^perp h_b = sum_k h_{b-k} h_{a-k}^perp``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .count_light import (  # noqa: F401  (the pure parts, importable from here as before)
    KOSTKA_RATE,
    PRIMES,
    count_bound_bits,
    crt,
    kostka_seconds,
    kostka_work,
    n_primes_for,
)
from .count_light import layer_counts as _layer_counts
from .count_light import meet_plan as _meet_plan

__all__ = ["PRIMES", "count_bound_bits", "n_primes_for", "crt", "kostka_count",
           "kostka_work", "kostka_memory", "kostka_seconds"]

# ----------------------------------------------------------------------------- tail indexing

@njit(cache=True)
def _tail_tables(n, m):
    """Ranks of the tails ``t = (nu_2, ..., nu_m)`` of partitions ``nu`` of at most ``n`` with at
    most ``m`` parts (``|t| + t_1 <= n``), in lexicographic order.

    ``F[k, b, u]`` counts non-increasing sequences of length ``k`` with entries in ``[0, b]``
    and sum ``<= u``; ``O[k, u, v] = sum_{w < v} F[k, w, u - w]`` is the rank offset of a
    coordinate ``v`` chosen with budget ``u`` and ``k`` coordinates after it;
    ``off1[v] = sum_{w < v} F[m - 2, w, n - 2 w]`` is the offset of the first coordinate (which
    uses its value twice: ``nu_1 >= nu_2``). Returns ``(O, off1, number of tails)``.
    """
    D = m - 1
    F = np.ones((n + 1, n + 1), np.int64)      # F[k] for the current k (k = 0: all ones)
    O = np.zeros((D, n + 3, n + 2), np.int64)
    for k in range(D):
        if k > 0:
            Fk = np.zeros((n + 1, n + 1), np.int64)
            for b in range(n + 1):
                for u in range(n + 1):
                    v = Fk[b - 1, u] if b > 0 else 0
                    if b <= u:
                        v += F[b, u - b]
                    Fk[b, u] = v
            F = Fk
        for u in range(n + 3):
            acc = 0
            for v in range(n + 2):
                O[k, u, v] = acc
                if v <= min(u, n):
                    acc += F[v, min(u - v, n)]
    off1 = np.zeros(n // 2 + 2, np.int64)   # F is now F[D - 1]
    acc = 0
    for v in range(n // 2 + 2):
        off1[v] = acc
        if 2 * v <= n:
            acc += F[v, n - 2 * v]
    return O, off1, acc


@njit(cache=True, inline="always")
def _add2(Z, z0, X, x0, Y, y0, cnt, PK):
    """``Z[z0:z0+cnt] = (X[x0:...] + Y[y0:...]) mod PK`` (residues below 2**31 in uint32; flat
    arrays, so one view per operand)."""
    z = Z[z0:z0 + cnt]
    x = X[x0:x0 + cnt]
    y = Y[y0:y0 + cnt]
    for e in range(cnt):
        v = x[e] + y[e]
        q = PK[e]
        z[e] = v - q if v >= q else v


@njit(cache=True)
def _strip(G, S, L, n, m, mk, jc, O, off1, PK, K, H0, H1):
    """Add a horizontal strip of size ``L`` to the vector ``G[0]`` over the partitions of ``S``
    (Pieri's rule), leaving the vector over the partitions of ``S + L`` in ``G[0]``.

    ``G[p]`` (p = 0..m-1) holds the running sum along part ``p + 1`` (1-based), indexed by tail
    rank, ``K`` residues per tail side by side. Layer ``s`` (partition size) from layer
    ``s - 1``, parts last to first:
        ``G_p^s(mu) = G_{p+1}^s(mu) + G_p^{s-1}(mu - e_p)``  (kept when ``mu - e_p`` is a partition)
    with ``G_{m+1}^s = 0`` above ``S`` and ``G_p^S = V``. Tails are visited in decreasing rank,
    so ``mu - e_p`` (lower rank) still holds layer ``s - 1``: one array per part, updated in
    place; ``G[m - 1]`` keeps ``V`` through the strip, since ``G_m^s(mu) = V(mu - (s - S) e_m)``.
    Blocks of equal ``nu_2`` are taken one at a time through all layers of the strip
    (they stay in cache); the only neighbour outside the block (``nu_2 - 1``) is read from the
    previous block's history ``H`` (one row per layer). ``mk`` caps the number of parts. When
    the strip is the first with ``mk`` parts, part ``mk`` (tail coordinate ``jc = mk - 2``) is
    new and holds at most what the strip has added so far, ``s - S``; ``jc = -1`` otherwise.
    """
    D = m - 1
    t = np.zeros(D, np.int64)
    us = np.zeros(D, np.int64)   # budgets at layer s
    un = np.zeros(D, np.int64)   # budgets at the top layer n (they define the ranks)
    A0 = np.zeros(D, np.int64)   # rank terms of coordinates 1..j, budgets + 0, + 1, + 2
    A1 = np.zeros(D, np.int64)
    A2 = np.zeros(D, np.int64)
    nb = np.zeros(D, np.int64)
    okn = np.zeros(D, np.bool_)
    t0max = (S + L) // 2 if mk >= 2 else 0
    G1 = G.reshape(G.size)           # flat views: one slice per operand
    W = G.shape[1]
    Wh = H0.shape[1]
    hp1, hc1 = H0.reshape(H0.size), H1.reshape(H1.size)
    for t0 in range(t0max + 1):
        bstart = off1[t0]
        pstart = off1[t0 - 1] if t0 >= 1 else 0
        for s in range(max(S, 2 * t0, S + t0 if jc == 0 else 0), S + L + 1):
            ls = s - S
            start = s == S
            t[0] = t0
            us[0] = s - 2 * t0
            un[0] = n - 2 * t0
            j = 1
            if D > 2:
                t[1] = (min(t0, us[0], ls if jc == 1 else n) if 1 < mk - 1 else 0) + 1
            while True:
                if D > 2:  # odometer over the middle coordinates, each descending
                    if j < 1:
                        break
                    t[j] -= 1
                    if t[j] < 0:
                        j -= 1
                        continue
                    us[j] = us[j - 1] - t[j]
                    un[j] = un[j - 1] - t[j]
                    kk = D - 1 - j
                    A0[j] = A0[j - 1] + O[kk, un[j - 1], t[j]]
                    A1[j] = A1[j - 1] + O[kk, un[j - 1] + 1, t[j]]
                    A2[j] = A2[j - 1] + O[kk, un[j - 1] + 2, t[j]]
                    if j < D - 2:
                        j += 1
                        t[j] = (min(t[j - 1], us[j - 1], ls if jc == j else n) if j < mk - 1 else 0) + 1
                        continue
                last = D - 2
                # a run over the last coordinate: consecutive ranks base .. base + hi
                hi = min(t[last], us[last], ls if jc == D - 1 else n) if D - 1 < mk - 1 else 0
                base = off1[t0] + A0[last]
                cnt = (hi + 1) * K
                b0 = base * K
                hb = (base - bstart) * K
                if start:
                    for p in range(1, m):
                        G1[p * W + b0:p * W + b0 + cnt] = G1[b0:b0 + cnt]
                    hc1[ls * Wh + hb:ls * Wh + hb + cnt] = G1[b0:b0 + cnt]
                else:
                    okn[0] = t0 >= 1 and (D == 2 or t0 - 1 >= t[1]) and (jc <= 0 or jc == D - 1 or t[jc] < ls)
                    if okn[0]:
                        nb[0] = off1[t0 - 1] + A2[last]
                    for jj in range(1, D - 1):
                        okn[jj] = t[jj] >= 1 and (jj == D - 2 or t[jj] - 1 >= t[jj + 1])
                        if okn[jj]:
                            nb[jj] = off1[t0] + A0[jj - 1] + O[D - 1 - jj, un[jj - 1], t[jj] - 1] + A1[last] - A1[jj]
                    # part m: G_m^s(mu) = V(mu - (s - S) e_m), and G[m - 1] keeps V through the strip
                    for jj in range(D - 2, -1, -1):
                        p = jj + 1
                        top = hi
                        src = p + 1
                        if jj == D - 2:  # mu - e_p is a partition only below the top of the run
                            top = min(hi, t[jj] - 1)
                            z = min(ls, hi + 1) * K
                            G1[p * W + b0:p * W + b0 + z] = 0
                            if z < cnt:
                                G1[p * W + b0 + z:p * W + b0 + cnt] = G1[(m - 1) * W + b0:(m - 1) * W + b0 + cnt - z]
                            src = p
                        c2 = (top + 1) * K
                        if c2 > 0:
                            if okn[jj]:
                                if jj == 0:
                                    if jc == D - 1 and top >= ls:
                                        if src != p:
                                            d0, s0 = p * W + b0, src * W + b0
                                            G1[d0 + ls * K:d0 + c2] = G1[s0 + ls * K:s0 + c2]
                                        c2 = ls * K
                                    if c2 > 0:
                                        _add2(G1, p * W + b0, G1, src * W + b0,
                                              hp1, (ls - 1) * Wh + (nb[0] - pstart) * K, c2, PK)
                                else:
                                    _add2(G1, p * W + b0, G1, src * W + b0, G1, p * W + nb[jj] * K, c2, PK)
                            elif src != p:
                                G1[p * W + b0:p * W + b0 + c2] = G1[src * W + b0:src * W + b0 + c2]
                    _add2(G1, b0, G1, b0, G1, W + b0, cnt, PK)
                    hc1[ls * Wh + hb:ls * Wh + hb + cnt] = G1[W + b0:W + b0 + cnt]
                if D <= 2:
                    break
        hp1, hc1 = hc1, hp1


@njit(cache=True)
def _dot_mod(a, b, primes):
    """``sum_i a[i, k] b[i, k] mod primes[k]`` for residues below 2**31."""
    K = primes.size
    out = np.zeros(K, np.int64)
    for i in range(a.shape[0]):
        for k in range(K):
            out[k] = (out[k] + (np.int64(a[i, k]) * np.int64(b[i, k])) % primes[k]) % primes[k]
    return out


@njit(cache=True, inline="always")
def _rank(t, D, n, O, off1):
    """Rank of the tail ``t`` (length ``D``) among the tails of partitions of ``n``."""
    r = off1[t[0]]
    u = n - 2 * t[0]
    for j in range(1, D - 1):
        r += O[D - 1 - j, u, t[j]]
        u -= t[j]
    if D >= 2:
        r += t[D - 1]
    return r


@njit(cache=True)
def _meet(X, Y, TX, TY, lo, D, n, O, off1, PK, primes):
    """``sum_k <h_{b-k}^perp X, h_{a-k}^perp Y>`` modulo each prime (the lower-layer meet).

    ``X`` holds a vector over the partitions of ``TX`` and ``Y`` one over the partitions of
    ``TY`` (flat, ``K`` residues per tail, tails ranked among those of partitions of ``n``,
    ``D = m - 1 >= 2`` tail coordinates). The layers run from ``max(TX, TY)`` down to ``lo``,
    and every layer ``s <= min(TX, TY)`` adds ``<h_{TX-s}^perp X, h_{TY-s}^perp Y>``.
    Strip removal ``h_j^perp`` is a cascade over the parts, first to last, layers downwards:
        ``R_1^s(nu) = X(nu + (T - s) e_1)`` (the same tail: ``X`` itself),
        ``R_p^s(nu) = R_{p-1}^s(nu) + R_p^{s+1}(nu + e_p)`` (kept when ``nu + e_p`` is a partition),
        ``R_m^s = h_{T-s}^perp X``.
    In place: the tails of a layer are visited in increasing rank, so ``nu + e_p`` (higher
    rank) still holds layer ``s + 1``; runs of the last coordinate are contiguous slices, and
    in the last part ``R_m^s(e) = R_{m-1}^s(e) + R_m^{s+1}(e + 1)`` reads ahead in its own run.
    The two sides run in step, so each layer's inner product is taken before it is
    overwritten.
    """
    K = primes.size
    W = X.size
    RX = np.zeros((D, W), np.uint32)
    RY = np.zeros((D, W), np.uint32)
    acc = np.zeros(K, np.uint64)
    t = np.zeros(D, np.int64)
    us = np.zeros(D, np.int64)
    nbb = np.zeros(D, np.int64)
    nbc = np.zeros(D, np.int64)
    top = max(TX, TY)
    dot_top = min(TX, TY)
    big = np.uint64(1) << np.uint64(63)
    L = D - 2   # the last coordinate of the prefix; the run is over coordinate D - 1
    for s in range(top, lo - 1, -1):
        j = 0
        t[0] = -1
        while j >= 0:   # odometer over the prefix (t_0 .. t_L), increasing
            t[j] += 1
            cap = s // 2 if j == 0 else min(t[j - 1], us[j - 1])
            if t[j] > cap:
                j -= 1
                continue
            us[j] = (s - 2 * t[0]) if j == 0 else us[j - 1] - t[j]
            if j < L:
                j += 1
                t[j] = -1
                continue
            hi = min(t[L], us[L])
            t[D - 1] = 0
            b0 = _rank(t, D, n, O, off1) * K
            cnt = (hi + 1) * K
            # neighbours nu + e_p (tail coordinate jj <= L): first rank and how many entries
            # of the run have one (nu_1 >= nu_2 + 1 limits the last coordinate for jj = 0)
            for jj in range(L + 1):
                if jj == 0:
                    c = min(hi, us[L] - 1) + 1
                else:
                    c = hi + 1 if t[jj] + 1 <= t[jj - 1] else 0
                nbc[jj] = max(c, 0) * K
                if c > 0:
                    t[jj] += 1
                    nbb[jj] = _rank(t, D, n, O, off1) * K
                    t[jj] -= 1
            clast = min(hi, t[L] - 1) + 1   # entries with e + 1 <= t_L
            for side in range(2):
                if side == 0:
                    T, Z, R = TX, X, RX
                else:
                    T, Z, R = TY, Y, RY
                if s > T:
                    continue
                for jj in range(L + 1):
                    z = R[jj, b0:b0 + cnt]
                    src = Z[b0:b0 + cnt] if jj == 0 else R[jj - 1, b0:b0 + cnt]
                    c2 = nbc[jj] if s < T else 0   # layer T + 1 is empty (and may lie above n)
                    nbr = R[jj, nbb[jj]:nbb[jj] + c2]
                    p = PK[:cnt]
                    for e in range(c2):
                        v = src[e] + nbr[e]
                        z[e] = v - p[e] if v >= p[e] else v
                    for e in range(c2, cnt):
                        z[e] = src[e]
                z = R[D - 1, b0:b0 + cnt + K]
                src = R[D - 2, b0:b0 + cnt]
                p = PK[:cnt]
                c2 = clast * K if s < T else 0
                for e in range(c2):
                    v = src[e] + z[e + K]
                    z[e] = v - p[e] if v >= p[e] else v
                for e in range(c2, cnt):
                    z[e] = src[e]
            if s <= dot_top:
                xa = RX[D - 1, b0:b0 + cnt]
                ya = RY[D - 1, b0:b0 + cnt]
                for e in range(hi + 1):
                    for k in range(K):
                        # products < 2**62: reduce only when the sum passes 2**63
                        v = acc[k] + np.uint64(xa[e * K + k]) * np.uint64(ya[e * K + k])
                        if v >= big:
                            v %= np.uint64(primes[k])
                        acc[k] = v
    out = np.zeros(K, np.int64)
    for k in range(K):
        out[k] = np.int64(acc[k] % np.uint64(primes[k]))
    return out


def _tail_sizes(n: int, m: int):
    """Rank tables, the number of tails and the largest block (tails with one ``nu_2``)."""
    O, off1, P = _tail_tables(n, m)
    blocks = np.diff(np.append(off1[:n // 2 + 1], P))
    return O, off1, int(P), int(blocks.max())


def _kostka_vectors(parts, n, m, O, off1, P, maxb, primes, G=None) -> np.ndarray:
    """``(K_{nu, parts} mod p)`` over the partitions ``nu`` of ``n`` with at most ``m`` parts
    (by tail rank), one column per prime; strips largest first, so the costly top layers are
    added by the smallest strip and the first ``m - 1`` strips run with fewer parts.

    ``G`` (``m x P K`` uint32, optional) is the work space, zeroed here, so that one
    allocation serves both vectors of a count (the second vector then touches no fresh
    pages). The result is a view of ``G[0]``.
    """
    parts = sorted(parts, reverse=True)
    K = len(primes)
    if G is None:
        G = np.zeros((m, P * K), np.uint32)
    else:
        G[:] = 0
    G[:, :K] = 1
    H0 = np.zeros((max(parts) + 1, maxb * K), np.uint32)
    H1 = np.zeros_like(H0)
    PK = np.tile(np.array(primes, np.uint32), n + 2)
    S = 0
    for k, L in enumerate(parts):
        mk = min(k + 1, m)
        _strip(G, S, L, n, m, mk, mk - 2 if k + 1 <= m else -1, O, off1, PK, K, H0, H1)
        S += L
    return G[0].reshape(P, K)


def kostka_memory(rows, cols, n_primes: int = 1) -> float:
    """Peak bytes of :func:`kostka_count` with ``n_primes`` primes per pass, over the tails of
    partitions of ``n - min(a, b)``: the builds hold ``m + 2`` uint32 vectors (the work space,
    ``X`` and ``Y``) and two block histories (one row per layer of the largest strip over the
    largest block), the strip removals ``2m`` vectors (``X``, ``Y`` and ``m - 1`` running sums
    per side); plus the rank tables."""
    r = sorted((x for x in rows if x), reverse=True)
    c = sorted((x for x in cols if x), reverse=True)
    m = min(len(r), len(c))
    if m <= 2:
        return 0.0
    _, _, _, _, nn, _ = _meet_plan(r, c)
    P = _layer_counts(nn, m)[m, nn]
    tables = 8.0 * ((m - 1) * (nn + 3) * (nn + 2) + 2 * (nn + 1) ** 2)   # rank tables
    if 4.0 * 2 * m * P + tables > 64e9:  # hopeless: do not build the rank tables to say so
        return float(4 * n_primes * 2 * m * P + tables)
    _, _, P, maxb = _tail_sizes(nn, m)
    return float(4 * n_primes * max((m + 2) * P + 2 * (max(r + c) + 1) * maxb, 2 * m * P) + tables)


def kostka_count(rows, cols, *, max_memory_gb: float = 2.0, meet: bool = True, remove: str = "largest") -> int:
    """Exact count by the RSK identity and Pieri's rule (see the module notes).

    ``meet=True`` (default): build ``X = K_{., r'}`` and ``Y = K_{., c'}`` without one row sum
    ``a`` and one column sum ``b`` (the largest, or the smallest with ``remove="smallest"``)
    and meet at the lower layers,
    ``N = sum_k <h_{b-k}^perp X, h_{a-k}^perp Y>`` (:func:`_meet`); ``meet=False``: both full
    vectors and ``N = <K_{., r}, K_{., c}>`` (the reference for tests). The primes run side
    by side as far as ``max_memory_gb`` allows, in several passes otherwise; two rows or
    columns are the closed form ``B(r_1; c)``.
    """
    from ._compositions import bounded_compositions

    r = sorted((int(x) for x in rows if x), reverse=True)
    c = sorted((int(x) for x in cols if x), reverse=True)
    if sum(r) != sum(c):
        return 0
    m = min(len(r), len(c))
    if m <= 1:
        return 1
    if m == 2:
        two, other = (r, c) if len(r) == 2 else (c, r)
        return bounded_compositions(two[0], other)
    n = sum(r)
    k = n_primes_for(r, c)
    a, b, r1, c1, nn, lo = _meet_plan(r, c, remove)
    if meet:
        per_prime = kostka_memory(r, c, 1)
    else:
        nn = n
        _, _, P, maxb = _tail_sizes(n, m)
        per_prime = 4.0 * ((m + 1) * P + 2 * (max(r + c) + 1) * maxb)
    batch = max(1, min(k, int(max_memory_gb * 1e9 // max(per_prime, 1.0))))
    O, off1, P, maxb = _tail_sizes(nn, m)
    residues = []
    for i in range(0, k, batch):
        primes = PRIMES[i:min(k, i + batch)]
        K = len(primes)
        pr = np.array(primes, np.int64)
        G = np.zeros((m, P * K), np.uint32)   # one work space for both builds
        if meet:
            X = _kostka_vectors(r1, nn, m, O, off1, P, maxb, primes, G).reshape(-1).copy()
            Y = _kostka_vectors(c1, nn, m, O, off1, P, maxb, primes, G).reshape(-1).copy()
            del G
            PK = np.tile(np.array(primes, np.uint32), nn + 2)
            residues.extend(int(x) for x in _meet(X, Y, n - a, n - b, lo, m - 1, nn, O, off1, PK, pr))
            del X, Y
        else:
            Kr = _kostka_vectors(r, n, m, O, off1, P, maxb, primes, G).copy()
            Kc = _kostka_vectors(c, n, m, O, off1, P, maxb, primes, G)
            residues.extend(int(x) for x in _dot_mod(Kr, Kc, pr))
            del Kr, Kc, G
    return crt(residues, PRIMES[:k])
