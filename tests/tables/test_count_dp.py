"""Fast exact counting (sdckit.tables.count_dp): brute force, the reference DP, Barvinok."""

import itertools
import json
import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import InputError
from sdckit.tables import count_dp
from sdckit.tables.count import CountResult, count_tables, count_tables_exact, row_dp_count


def brute_force_count(rows, cols):
    """Enumerate the free (R-1) x (C-1) block; the last row and column are implied."""
    R, C = len(rows), len(cols)
    n = 0
    ranges = [range(min(rows[i], cols[j]) + 1) for i in range(R - 1) for j in range(C - 1)]
    for free in itertools.product(*ranges):
        t = np.array(free, dtype=np.int64).reshape(R - 1, C - 1)
        last_col = np.array(rows[:R - 1]) - t.sum(1)
        if (last_col < 0).any():
            continue
        last_row = np.array(cols) - np.concatenate([t, last_col[:, None]], axis=1).sum(0)
        if (last_row >= 0).all() and last_row.sum() == rows[R - 1]:
            n += 1
    return n


tables = st.integers(2, 4).flatmap(lambda R: st.integers(2, 4).flatmap(
    lambda C: st.lists(st.integers(0, 3), min_size=R * C, max_size=R * C).map(
        lambda v: np.array(v).reshape(R, C)))).filter(lambda t: np.prod(np.minimum.outer(t.sum(1), t.sum(0))[:-1, :-1] + 1) < 8_000)


@given(tables)
@settings(max_examples=35, deadline=None)
def test_counts_equal_brute_force(t):
    rows, cols = t.sum(1).tolist(), t.sum(0).tolist()
    want = brute_force_count(rows, cols)
    assert count_tables_exact(rows, cols, method="kostka").count == want
    assert count_tables(rows, cols) == want
    if min(sum(1 for x in rows if x), sum(1 for x in cols if x)) <= 4:
        assert count_tables_exact(rows, cols, method="ie-mitm").count == want


@given(st.lists(st.integers(0, 12), min_size=5, max_size=5), st.lists(st.integers(0, 12), min_size=5, max_size=5))
@settings(max_examples=15, deadline=None)
def test_kostka_equals_row_dp_on_5x5(a, b):
    # independent algorithms: RSK/Pieri modulo primes vs the exact-integer row DP
    if sum(a) != sum(b):
        b = b[:-1] + [max(0, b[-1] + sum(a) - sum(b))]
        if sum(a) != sum(b):
            a = a[:-1] + [a[-1] + sum(b) - sum(a)]
    assert count_tables_exact(a, b, method="kostka").count == row_dp_count(a, b)


def test_published_counts():
    # Diaconis & Gangolli (1995): hair/eye colour margins, 1,225,914,276,768,514 tables
    hair_eye = ([108, 286, 71, 127], [220, 215, 93, 64])
    res = count_tables_exact(*hair_eye)
    assert res.count == 1_225_914_276_768_514 and res.method == "ie-mitm"
    # seed 002, "Release only the margins": 18,272,363,056 tables (De Loera & Sturmfels)
    assert count_tables_exact([20, 55, 25, 35], [50, 35, 30, 20], method="kostka").count == 18_272_363_056


def test_big_count_needs_several_primes_and_is_exact():
    # a count above 2**64 (three primes and CRT); reference: the exact-integer row DP
    rows, cols = [70, 60, 80], [21] * 10
    got = count_tables_exact(rows, cols, method="kostka")
    assert count_dp.n_primes_for(rows, cols) >= 3
    assert got.count > 2 ** 64
    assert got.count == row_dp_count(rows, cols)


def test_primes_are_prime_and_crt_round_trips():
    for p in count_dp.PRIMES:  # trial division up to sqrt(p)
        assert p < 2 ** 31 and all(p % d for d in range(2, math.isqrt(p) + 1))
    x = 123456789012345678901234567890
    ps = count_dp.PRIMES[:4]
    assert count_dp.crt([x % p for p in ps], ps) == x


def test_trivial_and_errors():
    assert count_tables_exact([5], [2, 3]).method == "trivial"
    assert count_tables_exact([0, 0], [0, 0]).count == 1
    with pytest.raises(InputError):
        count_tables_exact([1, 2], [4])
    with pytest.raises(InputError):
        count_tables_exact([1] * 5, [1] * 5, method="ie-mitm")


def test_json_count_is_string_above_2_53():
    assert CountResult(2 ** 53, "kostka", 0.1).to_dict()["count"] == 2 ** 53
    big = CountResult(2 ** 53 + 1, "kostka", 0.1).to_dict()
    assert big["count"] == str(2 ** 53 + 1)
    json.dumps(big)


def barvinok_count(rows, cols):
    isl = pytest.importorskip("islpy")
    R, C = len(rows), len(cols)
    names = [f"x{i}_{j}" for i in range(R) for j in range(C)]
    cons = [f"{v} >= 0" for v in names]
    cons += [" + ".join(f"x{i}_{j}" for j in range(C)) + f" = {rows[i]}" for i in range(R)]
    cons += [" + ".join(f"x{i}_{j}" for i in range(R)) + f" = {cols[j]}" for j in range(C)]
    s = isl.BasicSet("{ [" + ", ".join(names) + "] : " + " and ".join(cons) + " }")
    if not hasattr(s, "card"):
        pytest.skip("islpy is installed without Barvinok (install islpy-barvinok)")
    return int(re.search(r"\{\s*(\d+)\s*\}", str(s.card())).group(1))


@pytest.mark.parametrize("seed", range(6))
def test_counts_equal_barvinok(seed):
    # islpy-barvinok (the algorithm LattE implements) on small random margins
    rng = np.random.default_rng(seed)
    R, C = [(3, 3), (3, 4), (4, 4), (2, 5), (4, 3), (3, 5)][seed]
    t = rng.multinomial(12 + 4 * seed, np.full(R * C, 1 / (R * C))).reshape(R, C)
    rows, cols = t.sum(1).tolist(), t.sum(0).tolist()
    want = barvinok_count(rows, cols)
    assert count_tables_exact(rows, cols, method="kostka").count == want
    assert count_tables(rows, cols) == want


# ----------------------------------------------------------------------------- the "kostka" kernel

def test_tail_ranks_are_the_lexicographic_order():
    # every tail (nu_2..nu_m) of a partition of at most n into at most m parts, listed by brute
    # force in lexicographic order, gets rank 0, 1, 2, ... from the tables used by the kernel
    for n, m in [(7, 3), (9, 4), (8, 5), (6, 6)]:
        O, off1, P = count_dp._tail_tables(n, m)
        tails = sorted(t for t in itertools.product(range(n + 1), repeat=m - 1)
                       if all(t[i] >= t[i + 1] for i in range(m - 2)) and sum(t) + t[0] <= n)
        assert P == len(tails)
        for want, t in enumerate(tails):
            rank, u = off1[t[0]], n - 2 * t[0]
            for j in range(1, m - 1):
                rank += O[m - 2 - j, u, t[j]]
                u -= t[j]
            assert rank == want


rect = st.integers(3, 6).flatmap(lambda R: st.integers(3, 5).flatmap(
    lambda C: st.lists(st.integers(0, 6 if C <= 4 else 3), min_size=R * C, max_size=R * C).map(
        lambda v: np.array(v).reshape(R, C))))


@given(rect)
@settings(max_examples=30, deadline=None)
def test_kostka_equals_row_dp_on_rectangular_margins(t):
    # medium margins, 3..6 rows, 3..5 columns, zeros allowed; reference: the exact-integer row DP
    rows, cols = t.sum(1).tolist(), t.sum(0).tolist()
    assert count_tables_exact(rows, cols, method="kostka").count == row_dp_count(rows, cols)


medium = st.integers(3, 7).flatmap(lambda R: st.integers(3, 7).flatmap(
    lambda C: st.tuples(st.lists(st.integers(0, 40), min_size=R, max_size=R),
                        st.lists(st.integers(0, 40), min_size=C, max_size=C))))


@given(medium)
@settings(max_examples=40, deadline=None)
def test_lower_layer_meet_equals_full_vectors_on_medium_margins(rc):
    # the default kernel (strip removal, meet at the layers n - a - b .. n - min(a, b), a and b
    # the largest or the smallest sums) against the full Kostka vectors and their inner
    # product (meet=False): 3-7 x 3-7 margins, totals
    # up to 280, zeros and ties allowed (a = b, a or b the only entry of its size, ...)
    r, c = rc
    d = sum(r) - sum(c)
    if d > 0:
        c = c[:-1] + [c[-1] + d]
    else:
        r = r[:-1] + [r[-1] - d]
    full = count_dp.kostka_count(r, c, meet=False)
    assert count_dp.kostka_count(r, c) == count_dp.kostka_count(r, c, remove="smallest") == full


def test_lower_layer_meet_on_frontier_margins():
    # the benchmark's 5 x 5 total-100 and 6 x 6 total-100 margins: both kernels, and the
    # 5 x 5 count against islpy-barvinok's in docs/methods/table_counting.md (390495731042396)
    r5, c5 = [16, 27, 17, 19, 21], [20, 16, 22, 14, 28]
    assert (count_dp.kostka_count(r5, c5) == count_dp.kostka_count(r5, c5, remove="smallest")
            == count_dp.kostka_count(r5, c5, meet=False) == 390495731042396)
    r6, c6 = [14, 19, 18, 13, 24, 12], [19, 11, 16, 16, 22, 16]
    assert count_dp.kostka_count(r6, c6) == count_dp.kostka_count(r6, c6, meet=False)


def test_primes_in_several_passes_give_the_same_count():
    # a memory budget below two primes' vectors runs one prime per pass; reference: row DP
    rows, cols = [12, 9, 15, 7, 10], [14, 11, 8, 13, 7]
    one_pass = count_dp.kostka_count(rows, cols)
    per_prime = count_dp.kostka_memory(rows, cols, 1) / 1e9
    several = count_dp.kostka_count(rows, cols, max_memory_gb=per_prime * 1.5)
    assert count_dp.n_primes_for(rows, cols) >= 2
    assert one_pass == several == row_dp_count(rows, cols)


def test_memory_and_time_refusals():
    from sdckit.tables.count import CountTimeout, FibreTooLarge

    with pytest.raises(FibreTooLarge, match="max_memory_gb"):
        count_tables_exact([40] * 6, [40] * 6, method="kostka", max_memory_gb=1e-4)
    with pytest.raises(CountTimeout, match="predicted"):
        count_tables_exact([300] * 8, [300] * 8, time_limit=1.0)


narrow = st.integers(2, 6).flatmap(lambda R: st.integers(2, 4).flatmap(
    lambda C: st.lists(st.integers(0, 9), min_size=R * C, max_size=R * C).map(lambda v: np.array(v).reshape(R, C))))


@given(narrow)
@settings(max_examples=40, deadline=None)
def test_ie_mitm_equals_row_dp_on_medium_margins(t):
    # at most four columns, totals up to 216 (the outer/inner split of inclusion-exclusion);
    # reference: the exact-integer row DP
    rows, cols = t.sum(1).tolist(), t.sum(0).tolist()
    assert count_tables_exact(rows, cols, method="ie-mitm").count == row_dp_count(rows, cols)


@given(tables)
@settings(max_examples=30, deadline=None)
def test_count_bound_holds(t):
    # the CRT is exact only if the count is below the product of the primes: the bound must
    # hold (reference: brute-force enumeration)
    rows, cols = t.sum(1).tolist(), t.sum(0).tolist()
    assert brute_force_count(rows, cols) <= 2 ** count_dp.count_bound_bits(rows, cols) * (1 + 1e-9)


# --- the identity behind meeting at a lower layer (docs/methods/table_counting.md, next steps)
# N(r, c) = <h_r' h_a, h_c' h_b> = sum_k <h_{b-k}^perp K_{., r'}, h_{a-k}^perp K_{., c'}>
# (a = smallest row sum, b = smallest column sum, k = 0..min(a, b), both vectors at the layer
# n - a - b + k), with h_j^perp computed by the strip-removal cascade
#     R_1^s(nu) = X(nu + (T - s) e_1),  R_p^s(nu) = R_{p-1}^s(nu) + R_p^{s+1}(nu + e_p)
# (the term kept when nu + e_p is a partition), s = T, T - 1, ...; R_m^s = h_{T-s}^perp X.
# A plain-dict reference, checked against brute force and against the kernel.

def _partitions(s, m, top=None):
    top = s if top is None else top
    if m == 0:
        if s == 0:
            yield ()
        return
    for a in range(min(s, top), -1, -1):
        if a * m < s:
            break
        for rest in _partitions(s - a, m - 1, a):
            yield (a,) + rest


def _kostka_dict(parts, m):
    """Pieri's rule by direct enumeration of the interlacing lam_1 >= mu_1 >= lam_2 >= ..."""
    X = {(0,) * m: 1}
    for L in sorted(parts, reverse=True):
        out = {}
        for mu, v in X.items():
            ranges = [range(mu[0], mu[0] + L + 1)] + [range(mu[i], mu[i - 1] + 1) for i in range(1, m)]
            for lam in itertools.product(*ranges):
                if sum(lam) - sum(mu) == L:
                    out[lam] = out.get(lam, 0) + v
        X = out
    return X


def _remove_direct(X, j, m):
    """h_j^perp X by enumeration: sum of X(lam) over lam / mu a horizontal strip of size j."""
    out = {}
    for lam, v in X.items():
        for mu in itertools.product(*[range(lam[i + 1] if i + 1 < m else 0, lam[i] + 1) for i in range(m)]):
            if sum(lam) - sum(mu) == j:
                out[mu] = out.get(mu, 0) + v
    return {k: v for k, v in out.items() if v}


def _remove_cascade(X, T, depth, m):
    """{s: h_{T-s}^perp X} for s = T .. T - depth by the removal cascade above."""
    prev, res = {}, {}
    for s in range(T, T - depth - 1, -1):
        cur = {}
        for nu in _partitions(s, m):
            nu = nu + (0,) * (m - len(nu))
            r = X.get((nu[0] + T - s,) + nu[1:], 0)
            for p in range(1, m):   # 0-based part p (part p + 1 in the formula)
                up = nu[:p] + (nu[p] + 1,) + nu[p + 1:]
                if up[p - 1] >= up[p]:
                    r += prev.get((up, p), 0)
                cur[(nu, p)] = r
        res[s] = {nu: v for (nu, p), v in cur.items() if p == m - 1 and v}
        prev = cur
    return res


def _meet_count(rows, cols):
    r = sorted((x for x in rows), reverse=True)
    c = sorted((x for x in cols), reverse=True)
    m, n = min(len(r), len(c)), sum(r)
    a, b = r[-1], c[-1]
    RX = _remove_cascade(_kostka_dict(r[:-1], m), n - a, b, m)
    RY = _remove_cascade(_kostka_dict(c[:-1], m), n - b, a, m)
    return sum(v * RY[n - a - b + k].get(nu, 0)
               for k in range(min(a, b) + 1) for nu, v in RX[n - a - b + k].items())


@given(tables)
@settings(max_examples=25, deadline=None)
def test_lower_layer_meet_identity_equals_brute_force(t):
    # independent: brute-force enumeration of the tables vs the symmetric-function identity
    rows, cols = t.sum(1).tolist(), t.sum(0).tolist()
    assert _meet_count(rows, cols) == brute_force_count(rows, cols)


@given(st.integers(3, 4).flatmap(lambda R: st.tuples(st.lists(st.integers(0, 9), min_size=R, max_size=R),
                                                      st.lists(st.integers(0, 9), min_size=R, max_size=R))))
@settings(max_examples=15, deadline=None)
def test_strip_removal_cascade_and_meet_on_medium_margins(rc):
    # the cascade equals the direct enumeration of h_j^perp; the identity equals the kernel
    a, b = rc
    b = b[:-1] + [max(0, b[-1] + sum(a) - sum(b))]
    a = a[:-1] + [a[-1] + sum(b) - sum(a)]
    m = len(a)
    X = _kostka_dict(sorted(a, reverse=True)[:-1], m)
    T = sum(a) - min(a)
    casc = _remove_cascade(X, T, min(T, 6), m)
    for j in range(min(T, 6) + 1):
        assert casc[T - j] == _remove_direct(X, j, m)
    assert _meet_count(a, b) == count_dp.kostka_count(a, b)
