"""The parts of exact table counting that need no compiled kernel (numpy and Python only).

* the primes, their number for a count and the Chinese remainder theorem of
  :mod:`sdckit.tables.count_dp`, and the work models that predict the compiled counts' CPU time
  (:func:`kostka_work`, :func:`ie_mitm_work`): choosing a method loads no kernel;
* :func:`ie_mitm_small`: the ``"ie-mitm"`` count of :mod:`sdckit.tables.count_ie` (meet in the
  middle with inclusion-exclusion) vectorised with numpy, for margins whose count is small.
  Loading numba and a cached kernel costs about 0.5-0.8 s of CPU in a fresh process (numba
  imports SciPy's linear algebra to check BLAS), more than the whole count of such tables
  (the hair/eye margins: about 0.1 s in numpy, 0.006 s compiled): ``count_tables_exact`` runs
  it when the plan's work is at most :data:`SMALL_IE_WORK` and the count fits int64 (rule
  below). The count is the same exact integer as the compiled kernel's (property test in
  ``tests/tables/test_count_light.py``).

References
----------
Diaconis, P. and Gangolli, A. (1995). Rectangular arrays with fixed margins. In *Discrete
Probability and Algorithms*, IMA Vol. 72, 15-41 (the hair/eye margins).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["PRIMES", "KOSTKA_RATE", "IE_MITM_RATE", "SMALL_IE_WORK", "count_bound_bits", "n_primes_for", "crt",
           "layer_counts", "meet_plan", "kostka_work", "kostka_seconds", "ie_plans", "ie_mitm_work",
           "ie_mitm_seconds", "ie_mitm_small"]

# Work units per CPU second of the kernel (measured on the benchmark cases: bench_exact.py,
# frontier_count; see docs/methods/table_counting.md).
KOSTKA_RATE = 1.0e9

# The largest primes below 2**31 (checked by trial division in tests); a sum of two
# residues and a product of two residues fit in int64.
PRIMES = (2147483647, 2147483629, 2147483587, 2147483579, 2147483563, 2147483549, 2147483543,
          2147483497, 2147483489, 2147483477, 2147483423, 2147483399, 2147483353, 2147483323,
          2147483269, 2147483249, 2147483237, 2147483179, 2147483171, 2147483137)


def count_bound_bits(rows, cols) -> float:
    """log2 of an upper bound on the number of tables.

    A table is fixed by all its columns but one (the last is the row sums minus the others),
    and column ``j`` is a vector ``0 <= x <= r`` with sum ``c_j``: at most
    ``prod_{j != j*} B(r; c_j)`` tables, ``B`` the bounded composition count and ``j*`` the
    column with the most fillings (the same with rows and columns swapped). Exact integers,
    so the bound is rigorous.
    """
    from ._compositions import bounded_compositions

    def side(a, b):
        a = [int(x) for x in a if x]
        logs = [math.log2(bounded_compositions(int(x), a)) for x in b if x]
        return sum(logs) - max(logs) if logs else 0.0
    return min(side(rows, cols), side(cols, rows))


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


# Work units per CPU second of the ie-mitm kernel (measured on the benchmark cases: bench_exact.py, frontier_count).
IE_MITM_RATE = 3.0e9


def layer_counts(n: int, m: int) -> np.ndarray:
    """``p[k, s]`` = partitions of ``s`` into at most ``k`` parts (floats: an estimate)."""
    p = np.zeros((m + 1, n + 1))
    p[0, 0] = 1.0
    for k in range(1, m + 1):
        p[k] = p[k - 1]
        for s in range(k, n + 1):
            p[k, s] += p[k, s - k]
    return p


def meet_plan(r, c, remove="largest"):
    """The lower-layer meet of sorted margins: the removed entries ``a`` (of ``r``) and ``b``
    (of ``c``), the other entries ``r'`` and ``c'``, the top layer ``n - min(a, b)`` (the
    ranks' total) and the bottom layer ``n - a - b``.

    ``remove="largest"`` (default) takes the largest row and column sums: the builds then stop
    lower and the removals cover lower layers (5 x 5 total 300: 1.8 s against 2.5 s with the
    smallest; 6 x 6 total 300: 45 s against 56 s, and 0.56 GB per prime against 0.79 GB)."""
    n = sum(r)
    i = 0 if remove == "largest" else len(r) - 1
    j = 0 if remove == "largest" else len(c) - 1
    a, b = r[i], c[j]
    return a, b, r[:i] + r[i + 1:], c[:j] + c[j + 1:], n - min(a, b), n - a - b


def kostka_work(rows, cols) -> float:
    """Predicted work of :func:`kostka_count`: partition states visited times ``m`` parts
    times the primes, plus a fixed cost per state (an estimate: the cap on a part a strip
    creates is ignored). States: every layer of the strips of the builds (``r'``, ``c'``),
    with the parts the strip allows, then the layers ``n - a - b .. n - a`` and
    ``n - a - b .. n - b`` of the two strip removals (all ``m`` parts)."""
    r = sorted((x for x in rows if x), reverse=True)
    c = sorted((x for x in cols if x), reverse=True)
    m = min(len(r), len(c))
    if m <= 2:
        return float(sum(r) + 1)
    n = sum(r)
    a, b, r1, c1, top, lo = meet_plan(r, c)
    p = layer_counts(n, m)
    cum = np.concatenate([np.zeros((m + 1, 1)), np.cumsum(p, axis=1)], axis=1)
    K = n_primes_for(r, c)
    states = 0.0
    for parts, T in ((r1, n - a), (c1, n - b)):
        S = 0
        for k, L in enumerate(parts):
            states += cum[min(k + 1, m), S + L + 1] - cum[min(k + 1, m), S]
            S += L
        states += cum[m, T + 1] - cum[m, lo]
    # runs get shorter as m grows (the last coordinate is the smallest part): the per-state
    # overhead measured on the benchmark cases grows about like (m / 5)^2 beyond five parts
    return float(states * (m * K + 8) * max(1.0, (m / 5) ** 2))


def kostka_seconds(rows, cols) -> float:
    """Predicted CPU seconds of :func:`kostka_count` (:func:`kostka_work` / ``KOSTKA_RATE``)."""
    return kostka_work(rows, cols) / KOSTKA_RATE


def ie_mitm_work(rows, cols) -> float:
    """Vectors ``a`` visited times ``2 * 2**R`` inclusion-exclusion terms for the cheapest
    orientation and split (``inf`` when neither side has at most four entries)."""
    plans = ie_plans(rows, cols)
    return float(min(p[0] for p in plans)) if plans else math.inf


def ie_mitm_seconds(rows, cols) -> float:
    """Predicted CPU seconds of :func:`ie_mitm_count` (:func:`ie_mitm_work` / ``IE_MITM_RATE``)."""
    return ie_mitm_work(rows, cols) / IE_MITM_RATE


def ie_plans(rows, cols):
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


# Work (``ie_mitm_work`` units) up to which ``count_tables_exact`` counts in numpy rather than
# loading the compiled kernel: numpy does about 1.2e8 of these units per CPU second on the
# vectorised loops below (the hair/eye margins, 1.7e7 units: 0.14-0.19 s), the compiled kernel
# 3e9 but only after 0.5-0.8 s of importing numba and loading the cached kernel in a fresh
# process; at 6e7 units (about 0.5 s in numpy) both cost about the same.
SMALL_IE_WORK = 6.0e7


def _splits(r: list[int], total: int) -> np.ndarray:
    """Every ``a`` with ``0 <= a_i <= r_i`` and ``sum a = total``, one per row (int64).

    Coordinate by coordinate, each prefix is extended by exactly the values that leave the
    remaining coordinates able to absorb what is left (``np.repeat`` of the prefixes by the
    length of their range): no array larger than the result is built.
    """
    R = len(r)
    cap = np.zeros(R + 1, np.int64)
    for i in range(R - 1, -1, -1):
        cap[i] = cap[i + 1] + r[i]
    cols: list[np.ndarray] = []
    used = np.zeros(1, np.int64)
    for i in range(R - 1):
        left = total - used
        lo = np.maximum(0, left - cap[i + 1])
        hi = np.minimum(r[i], left)
        size = np.maximum(hi - lo + 1, 0)
        parent = np.repeat(np.arange(used.size), size)
        start = np.repeat(np.cumsum(size) - size, size)
        value = lo[parent] + (np.arange(parent.size) - start)
        cols = [c[parent] for c in cols]
        cols.append(value)
        used = used[parent] + value
    cols.append(total - used)  # the last coordinate is implied (and within [0, r_{R-1}] by the ranges)
    return np.stack(cols, axis=1)


def _bounded_comp(u: np.ndarray, t: int, binom1: np.ndarray) -> np.ndarray:
    """``B(u; t)`` for each row ``u`` of ``u`` by inclusion-exclusion over the subsets ``S``:
    ``sum_S (-1)^|S| binom(t - sum_S (u_i + 1) + R - 1, R - 1)`` (``binom1[s]`` is the binomial
    for ``s``).

    The subsets are visited depth first (one subtraction per subset, ``R`` arrays alive); a
    branch whose remainders are all negative holds only zero terms and is cut.
    """
    n, R = u.shape
    plus1 = [np.ascontiguousarray(u[:, i]) + 1 for i in range(R)]
    binom_z = np.concatenate([[0], binom1])  # binom_z[max(s + 1, 0)]: 0 for a negative s
    out = np.zeros(n, np.int64)

    def visit(i: int, rest: np.ndarray, sign: int) -> None:
        if i == R:
            term = binom_z.take(np.maximum(rest, -1) + 1)
            if sign > 0:
                out.__iadd__(term)
            else:
                out.__isub__(term)
            return
        visit(i + 1, rest, sign)
        nxt = rest - plus1[i]
        if nxt.max() >= 0:
            visit(i + 1, nxt, -sign)

    visit(0, np.full(n, t, np.int64), 1)
    return out


def ie_mitm_small(rows, cols) -> int | None:
    """The ``"ie-mitm"`` count in numpy, or None when the margins are not small.

    Small means: at most four columns (or rows), the cheapest plan's work (as
    :func:`ie_mitm_work`) at most :data:`SMALL_IE_WORK`, and ``#a * max B * max B < 2**62`` so
    that every term and the sum are exact in int64 (the condition under which the compiled
    kernel also counts in int64). The same plan as :func:`sdckit.tables.count_ie.ie_mitm_count`:
    ``N = sum_a B(a; c_0) B(r - a; c_2)`` over the splits ``a`` of ``c_0 + c_1``.
    """
    r0 = [int(x) for x in rows if x]
    c0 = [int(x) for x in cols if x]
    if sum(r0) != sum(c0):
        return 0
    if len(r0) <= 1 or len(c0) <= 1:
        return 1
    plans = ie_plans(r0, c0)
    if not plans:
        return None
    work, r, c = min(plans, key=lambda p: p[0])
    R = len(r)
    n_a = work / 2 ** (R + 1)
    if work > SMALL_IE_WORK or n_a * math.comb(c[0] + R - 1, R - 1) * math.comb(c[2] + R - 1, R - 1) >= 2 ** 62:
        return None
    t_max = max(c[0], c[2])
    binom1 = np.array([math.comb(t + R - 1, R - 1) for t in range(t_max + 1)], np.int64)
    a = _splits(r, c[0] + c[1])
    f = _bounded_comp(a, c[0], binom1)
    g = _bounded_comp(np.asarray(r, np.int64)[None, :] - a, c[2], binom1)
    return int(np.dot(f, g))
