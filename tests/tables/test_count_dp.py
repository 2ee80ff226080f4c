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
