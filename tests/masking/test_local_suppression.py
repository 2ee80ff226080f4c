"""Local suppression: k-anonymity reached (independent wildcard count), exact optimum vs brute force."""

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit import InputError, Microdata
from sdckit.masking.local_suppression import (
    ExactSuppression,
    LocalSuppression,
    exact_local_suppression,
    restore_suppressions,
    suppress_to_k,
)
from tests.conftest import shared_file


def brute_fk(X):
    """Wildcard f_k by brute force: records i, j match when they agree or either is missing."""
    n = X.shape[0]
    f = np.zeros(n, dtype=int)
    for i in range(n):
        for j in range(n):
            f[i] += all(a == b or a < 0 or b < 0 for a, b in zip(X[i], X[j]))
    return f


def brute_optimum(X, k):
    """Fewest suppressed cells making the data k-anonymous, by enumerating cell subsets."""
    cells = [(i, v) for i in range(X.shape[0]) for v in range(X.shape[1])]
    for size in range(len(cells) + 1):
        for subset in itertools.combinations(cells, size):
            Y = X.copy()
            for i, v in subset:
                Y[i, v] = -1
            if (brute_fk(Y) >= k).all():
                return size
    raise AssertionError("unreachable")


@st.composite
def tiny(draw):
    n = draw(st.integers(3, 6))
    m = draw(st.integers(1, 2))
    X = np.array([[draw(st.integers(0, 2)) for _ in range(m)] for _ in range(n)], dtype=np.int32)
    k = draw(st.integers(2, min(3, n)))
    return X, k


@settings(max_examples=25)
@given(tiny())
def test_exact_equals_brute_force_and_heuristic_is_feasible(case):
    X, k = case
    codes = [X[:, v] for v in range(X.shape[1])]
    exact_codes, objective, status = exact_local_suppression(codes, k)
    assert status == "Optimal"
    assert round(objective) == brute_optimum(X, k)
    assert (brute_fk(np.stack(exact_codes, axis=1)) >= k).all()
    heur, _ = suppress_to_k(codes, [3] * X.shape[1], k, importance=list(range(1, X.shape[1] + 1)))
    H = np.stack(heur, axis=1)
    assert (brute_fk(H) >= k).all()  # independent brute-force check
    assert int((H < 0).sum()) >= round(objective)


@given(seed=st.integers(0, 10**6), k=st.integers(2, 5))
def test_step_reaches_k_anonymity(seed, k):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.integers(0, 6, 80), "b": rng.integers(0, 4, 80), "c": rng.integers(0, 3, 80)})
    md = Microdata(df, key_vars=["a", "b", "c"])
    r = LocalSuppression(k=k).apply(md, rng=seed)
    X = np.stack([r.microdata.codes(v) for v in "abc"], axis=1)
    assert (brute_fk(X) >= k).all()
    # only suppressions: every non-missing released value equals the original
    out = r.microdata.frame
    for v in "abc":
        kept = out[v].notna()
        assert (out.loc[kept, v] == df.loc[kept, v]).all()
    assert r.summary["suppressions"] == int(out.isna().sum().sum())


def test_importance_suppresses_least_important_first():
    # only (c, 1) is unique; suppressing its region gives f = 3 (matches (a, 1) x2),
    # suppressing its sex gives f = 3 (matches (c, 2) x2): importance decides which
    df = pd.DataFrame({"region": ["a", "a", "c", "c", "c"], "sex": [1, 1, 2, 2, 1]})
    md = Microdata(df, key_vars=["region", "sex"])
    r = LocalSuppression(k=2, importance=[2, 1]).apply(md, rng=0)   # region less important
    assert r.summary["suppressions_per_variable"] == {"region": 1, "sex": 0}
    r = LocalSuppression(k=2, importance=[1, 2]).apply(md, rng=0)   # sex less important
    assert r.summary["suppressions_per_variable"] == {"region": 0, "sex": 1}


def test_adult_gap_against_exact_on_a_sample():
    adult = pd.read_csv(shared_file("arx_adult.csv")).sample(40, random_state=3)
    keys = ["age", "sex", "race"]
    md = Microdata(adult, key_vars=keys)
    heur = LocalSuppression(k=2).apply(md, rng=1).summary["suppressions"]
    _, opt, status = exact_local_suppression([md.codes(v) for v in keys], 2)
    assert status == "Optimal" and opt <= heur


def test_bad_input():
    md = Microdata(pd.DataFrame({"a": [1, 2, 3]}), key_vars=["a"])
    with pytest.raises(InputError, match="k = 5 is larger than the number of records"):
        LocalSuppression(k=5).apply(md)
    with pytest.raises(InputError, match="importance has 2 entries for 1 key"):
        LocalSuppression(k=2, importance=[1, 2]).apply(md)


@settings(max_examples=15, deadline=None)
@given(tiny())
def test_step_exact_method_reaches_the_brute_force_optimum(case):
    # reference: brute-force enumeration of suppression patterns (brute_optimum)
    X, k = case
    df = pd.DataFrame({f"v{j}": X[:, j] for j in range(X.shape[1])})
    md = Microdata(df, key_vars=list(df.columns))
    r = LocalSuppression(k=k, algorithm=ExactSuppression()).apply(md, rng=0)
    assert r.summary["optimal"] and r.summary["suppressions"] == brute_optimum(X, k)
    assert all(g.holds for g in r.guarantees)
    Y = np.stack([r.microdata.codes(v) for v in df.columns], axis=1)
    assert (brute_fk(Y) >= k).all()


def test_step_exact_importance_breaks_ties():
    # same data as test_importance_suppresses_least_important_first: one suppression either
    # way (brute force), importance picks the variable
    df = pd.DataFrame({"region": ["a", "a", "c", "c", "c"], "sex": [1, 1, 2, 2, 1]})
    md = Microdata(df, key_vars=["region", "sex"])
    r = LocalSuppression(k=2, importance=[2, 1], algorithm=ExactSuppression()).apply(md)
    assert r.summary["suppressions_per_variable"] == {"region": 1, "sex": 0}
    r = LocalSuppression(k=2, importance=[1, 2], algorithm=ExactSuppression()).apply(md)
    assert r.summary["suppressions_per_variable"] == {"region": 0, "sex": 1}


def test_step_exact_refuses_large_or_weighted_data():
    from sdckit import ParameterError
    from sdckit.masking.local_suppression import EXACT_MAX_RECORDS
    n = EXACT_MAX_RECORDS + 1
    md = Microdata(pd.DataFrame({"a": np.arange(n) % 7}), key_vars=["a"])
    with pytest.raises(InputError, match="algorithm 'exact' is for at most 400 records.*greedy"):
        LocalSuppression(k=2, algorithm=ExactSuppression()).apply(md)
    with pytest.raises(ParameterError, match="'use_weights' parameter of LocalSuppression"):
        LocalSuppression(k=2, algorithm=ExactSuppression(), use_weights=True)


def test_step_exact_at_its_time_limit_is_never_worse_than_greedy():
    # 80 records, 3 keys: the MILP (3,160 pair variables) cannot be proved optimal in 1 ms, so
    # the step also runs the greedy pass (same seed, same draws) and keeps the smaller pattern
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"a": rng.integers(0, 6, 80), "b": rng.integers(0, 4, 80), "c": rng.integers(0, 3, 80)})
    md = Microdata(df, key_vars=["a", "b", "c"])
    exact = LocalSuppression(k=3, algorithm=ExactSuppression(time_limit=0.001)).apply(md, rng=9)
    greedy = LocalSuppression(k=3).apply(md, rng=9)
    assert exact.summary["optimal"] is False and exact.summary["pattern"] in ("milp", "greedy")
    assert exact.summary["suppressions"] <= greedy.summary["suppressions"]
    X = np.stack([exact.microdata.codes(v) for v in "abc"], axis=1)
    assert (brute_fk(X) >= 3).all()  # independent brute-force check


def test_spec_selects_the_exact_algorithm():
    from sdckit.spec import spec_from_dict
    raw = {"input": {"path": "x.csv"},
           "steps": [{"method": "local_suppression", "k": 2, "algorithm": {"type": "exact", "time_limit": 5}}]}
    step = spec_from_dict(raw).steps[0]
    assert step.algorithm == ExactSuppression(time_limit=5)


def brute_Fk(X, w):
    """Weighted wildcard F_k by brute force (sum of the weights of the matching records)."""
    n = X.shape[0]
    return np.array([sum(w[j] for j in range(n)
                         if all(a == b or a < 0 or b < 0 for a, b in zip(X[i], X[j]))) for i in range(n)])


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), k=st.integers(2, 6), weighted=st.booleans())
def test_greedy_and_restore_keep_k_anonymity(seed, k, weighted):
    # independent reference: brute-force wildcard counts over every pair of records
    rng = np.random.default_rng(seed)
    n = 40
    X = np.stack([rng.integers(0, c, n) for c in (5, 3, 4)], axis=1).astype(np.int32)
    X[rng.random(X.shape) < 0.05] = -1           # some values already missing
    codes = [X[:, v] for v in range(3)]
    w = rng.uniform(0.5, 2.0, n) if weighted else None
    out, _ = suppress_to_k(codes, [5, 3, 4], k, importance=[3, 1, 2], weights=w, rng=rng)
    Y = np.stack(out, axis=1)
    assert ((Y == X) | (Y < 0)).all()            # only suppressions
    f = brute_Fk(Y, w) if weighted else brute_fk(Y)
    assert (f >= k - 1e-9).all()
    back, n_back = restore_suppressions(codes, out, [5, 3, 4], k, weights=w, rng=rng)
    Z = np.stack(back, axis=1)
    assert ((Z == X) | (Z < 0)).all() and ((Z == Y) | (Y < 0)).all()   # only original values return
    assert int((Y < 0).sum() - (Z < 0).sum()) == n_back
    f = brute_Fk(Z, w) if weighted else brute_fk(Z)
    assert (f >= k - 1e-9).all()
