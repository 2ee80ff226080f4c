"""Rank swapping: marginals kept exactly, swap range, missing values, strata, partner law,
the independent checker, bad input, the step."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from sdckit import InputError, Microdata
from sdckit.errors import ParameterError
from sdckit.masking.rank_swap import RankSwap, _swap_partners, check_rank_swap, rank_swap_array
from sdckit.registry import build_step

cases = st.tuples(st.integers(1, 300), st.integers(1, 4), st.floats(0.1, 100.0), st.integers(0, 10**6))


@given(cases)
def test_marginals_kept_and_range_respected(case):
    n, p, pct, seed = case
    X = np.random.default_rng(seed).standard_normal((n, p))    # distinct values: ranks are unique
    X_in = X.copy()
    Y = rank_swap_array(X, pct, seed)
    assert np.array_equal(X, X_in)
    window = int(np.floor(pct / 100 * n + 1e-9))
    for j in range(p):
        assert np.array_equal(np.sort(Y[:, j]), np.sort(X[:, j]))
        rank_before = np.argsort(np.argsort(X[:, j]))           # rank of each record's value
        sorted_x = np.sort(X[:, j])
        rank_after = np.searchsorted(sorted_x, Y[:, j])         # rank of the value it receives
        assert np.abs(rank_after - rank_before).max() <= window
    chk = check_rank_swap(X, Y, pct, 0, 0)
    assert chk["within_window"] and chk["multiset_kept"]


@given(cases, st.floats(0, 20), st.floats(0, 20))
# three tied bottom values whose mean is 0.1 + 1 ulp: the checker must place the kernel's 0.1 at it
@example(case=(97, 1, 1.0, 101), top=0.0, bottom=4.0)
def test_missing_and_coding(case, top, bottom):
    n, p, pct, seed = case
    rng = np.random.default_rng(seed)
    X = np.round(rng.lognormal(size=(n, p)), 1)                 # ties on purpose
    X[rng.random((n, p)) < 0.2] = np.nan
    Y = rank_swap_array(X, pct, seed, top_percent=top, bottom_percent=bottom)
    assert np.array_equal(np.isnan(Y), np.isnan(X))             # missing values stay in place
    for j in range(p):
        x = np.sort(X[~np.isnan(X[:, j]), j])
        m = x.size
        nt, nb = int(np.floor(top / 100 * m + 1e-9)), int(np.floor(bottom / 100 * m + 1e-9))
        if nt > 1:
            x[m - nt:] = x[m - nt:].mean()                       # top coding by the mean
        if nb > 1:
            x[:nb] = x[:nb].mean()
        np.testing.assert_allclose(np.sort(Y[~np.isnan(Y[:, j]), j]), np.sort(x), rtol=1e-15)
    chk = check_rank_swap(X, Y, pct, top, bottom)
    assert chk["within_window"] and chk["multiset_kept"] and chk["missing_in_place"]


def test_strata_swap_inside():
    rng = np.random.default_rng(0)
    x = rng.normal(size=400)
    s = rng.integers(0, 3, 400)
    y = rank_swap_array(x, 50, 1, strata=s)
    for v in range(3):
        assert np.array_equal(np.sort(y[s == v]), np.sort(x[s == v]))
    assert check_rank_swap(x, y, 50, 0, 0, s)["within_window"]


def test_partner_of_rank_zero_is_uniform():
    # Moore's rule: rank 0 (nothing swapped yet) picks its partner uniformly in (0, P].
    # 3,000 fixed seeds, P = 5: each count ~ Binomial(3000, 1/5), sd 21.9; allow 5 sd.
    counts = np.bincount([_swap_partners(40, 5, s)[0] for s in range(3000)], minlength=6)
    assert counts[0] == 0
    assert np.all(np.abs(counts[1:] - 600) < 5 * 21.9)


def test_checker_detects_violations():
    x = np.arange(100, dtype=float)
    y = x.copy()
    y[[0, 50]] = y[[50, 0]]                                      # a swap 50 ranks apart
    chk = check_rank_swap(x, y, 10, 0, 0)
    assert not chk["within_window"] and chk["max_rank_distance"] == [50]
    y2 = x.copy()
    y2[3] = 3.5                                                  # a value not in the data
    assert not check_rank_swap(x, y2, 10, 0, 0)["multiset_kept"]


def test_reproducible_and_swaps_happen():
    X = np.random.default_rng(1).standard_normal((1000, 3))
    a, b, c = rank_swap_array(X, 5, 7), rank_swap_array(X, 5, 7), rank_swap_array(X, 5, 8)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert (a != X).mean() > 0.9                                 # nearly every value moves
    # p = 100: P = n, still the marginal exactly
    full = rank_swap_array(X, 100, 3)
    assert np.array_equal(np.sort(full, axis=0), np.sort(X, axis=0))


def test_bad_input():
    with pytest.raises(ParameterError, match=r"The 'p' parameter of RankSwap must be a number in \(0, 100\]. Got 0"):
        RankSwap(p=0)
    with pytest.raises(ParameterError, match="'p'"):
        RankSwap(p=101)
    with pytest.raises(ParameterError, match="'p'"):
        rank_swap_array(np.zeros(3), float("nan"))
    with pytest.raises(ParameterError, match="top_percent"):
        RankSwap(top_percent=60, bottom_percent=40)
    md = Microdata(pd.DataFrame({"x": [1.0, 2, 3], "t": ["a", "b", "c"], "z": [1.0, np.inf, -np.inf]}))
    with pytest.raises(InputError, match="'t' holds non-numeric values"):
        RankSwap(variables=["t"]).apply(md)
    with pytest.raises(InputError, match=r"2 infinite values \('z': 2 \(rows 1, 2\)\)"):
        RankSwap(variables=["z"]).apply(md)


def test_step_from_spec():
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"a": rng.lognormal(size=2000), "b": rng.normal(size=2000), "s": rng.integers(0, 2, 2000)})
    df.loc[5, "a"] = np.nan
    md = Microdata(df, numeric_vars=["a", "b"], strata="s")
    r = build_step("rank_swap", {"p": 10, "top_percent": 1}).apply(md, rng=3)
    assert all(g.holds for g in r.guarantees)
    assert r.summary["p_percent"] == 10
    assert max(r.summary["max_rank_distance"].values()) <= max(r.summary["window_ranks"].values())
    assert np.isnan(r.microdata.frame.loc[5, "a"])
    assert "sd before" in r.report_html()
    assert r.seed is not None and "seed" not in r.to_dict()
