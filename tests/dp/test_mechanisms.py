"""The DP table methods: sensitivity (by hand and by brute force), the loss recorded, the
intervals' coverage (exact for raw noise, simulated for post-processed cells), sums with
clipping, refusals."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.dp.mechanisms import (
    DiscreteGaussianCounts,
    DiscreteGaussianSums,
    DiscreteLaplaceCounts,
    DiscreteLaplaceSums,
    clipped_table,
    table_sensitivity,
)
from sdckit.dp.postprocess import TopDownLayout
from sdckit.dp.synthetic import synthetic_counts
from sdckit.errors import InputError, ParameterError
from sdckit.tables.table import Table


def test_sensitivity_by_hand():
    # geography with 2 levels under the total (3 levels of codes) x two flat dimensions (2 each):
    # a record counts in c = 3 * 2 * 2 = 12 cells
    t = synthetic_counts((2, 2), (2, 2), rng=0)
    s1 = table_sensitivity(t, 1)
    assert (s1.cells_per_record, s1.l1, s1.l2_squared) == (12, 12, 12)
    s3 = table_sensitivity(t, 3, bound=5)
    assert (s3.l1, s3.l2_squared) == (3 * 12 * 5, 25 * (3 + 9 * 11))


@pytest.mark.parametrize("m", [1, 2, 3])
def test_sensitivity_bounds_every_person_by_brute_force(m):
    """Add one person with m contributions (distinct inner cells) in every possible way: the
    change of the table never passes the stated L1 and L2 sensitivity (equal for m = 1)."""
    t = synthetic_counts((2, 2), (2,), rng=0)
    lay = TopDownLayout.from_hierarchies(t.hierarchies, 0)
    G, J = len(t.hierarchies[0]), lay.n_detail
    leaves = np.flatnonzero(t.hierarchies[0].is_leaf)
    inner = [(g, j) for g in leaves for j in range(J)]
    s = table_sensitivity(t, m)
    worst1 = worst2 = 0
    for cells in itertools.combinations(inner, m):
        X = np.zeros((G, J), np.int64)
        for g, j in cells:
            for a in t.hierarchies[0].ancestors(int(g)):
                X[a, j] += 1
        d = lay.cells(X)
        worst1, worst2 = max(worst1, int(np.abs(d).sum())), max(worst2, int((d * d).sum()))
    assert worst1 <= s.l1 and worst2 <= s.l2_squared
    if m == 1:
        assert (worst1, worst2) == (s.l1, s.l2_squared)


def test_the_loss_is_known_before_noise_and_never_above_the_setting():
    t = synthetic_counts((3, 4), (2, 3), rng=1)
    for method, key in ((DiscreteGaussianCounts(rho=0.3), "rho"), (DiscreteLaplaceCounts(epsilon=1.3), "epsilon")):
        ch = method.charge(t, "persons")
        assert getattr(ch.loss, key) <= getattr(method, key) and getattr(ch.loss, key) > 0.99 * getattr(method, key)
        res = method.apply(t, rng=3, name="persons")
        assert res.charge.loss == ch.loss and res.charge.table == "persons"


def test_same_rng_same_output_and_different_rng_differs():
    t = synthetic_counts((3, 4), (2, 3), rng=1)
    m = DiscreteGaussianCounts(rho=0.5)
    a, b, c = m.apply(t, rng=7), m.apply(t, rng=7), m.apply(t, rng=8)
    assert np.array_equal(a.published, b.published) and np.array_equal(a.lower, b.lower)
    assert not np.array_equal(a.noisy, c.noisy)


def test_raw_noise_intervals_cover_with_the_exact_probability():
    # consistent = false: every cell is truth + noise, the interval +/- q covers with the exact
    # probability computed from the pmf; over 60,000 independent cells the share is within
    # 4 binomial standard errors of it
    t = synthetic_counts((10, 20), (2, 2), rng=2)
    res = DiscreteGaussianCounts(rho=0.5, consistent=False).apply(t, rng=11)
    inside = (t.value >= res.lower) & (t.value <= res.upper) | (res.lower == 0) & (t.value <= res.upper)
    p = res.raw_coverage
    assert p >= 0.9
    cover = ((t.value >= res.noisy - res.raw_halfwidth) & (t.value <= res.noisy + res.raw_halfwidth)).mean()
    assert abs(cover - p) < 4 * math.sqrt(p * (1 - p) / t.n_cells)
    assert inside.mean() >= cover - 1e-12   # clipping the lower end at 0 loses no true count


@pytest.mark.parametrize("method", [DiscreteGaussianCounts(rho=0.5), DiscreteGaussianCounts(rho=2.0, invariant_depth=1),
                                    DiscreteLaplaceCounts(epsilon=8.0)], ids=["gauss", "gauss-inv1", "laplace"])
def test_simulated_intervals_cover_the_truth_at_the_stated_level(method):
    """A table whose truth is known (synthetic, fixed rng), released four times (fixed seeds):
    the stated 90% intervals of the post-processed cells hold the true value in 90% +/- 2
    percentage points of the 4 x 6,300 cells. (Noise sd 4 to 5 against a mean inner count of 3;
    see docs/methods/dp_tables.md for the conservative drift when the noise dwarfs the counts.)"""
    t = synthetic_counts((8, 12), (2, 3, 4), rng=21)
    covers = []
    for seed in (5, 6, 7, 8):
        res = method.apply(t, rng=seed)
        assert res.ok
        covers.append(float(((t.value >= res.lower) & (t.value <= res.upper)).mean()))
        assert abs(res.calibration.simulated_coverage - 0.9) <= 0.02
        inv = np.fromiter(res.invariant_cells, dtype=np.int64)
        assert (res.lower[inv] == t.value[inv]).all() and (res.upper[inv] == t.value[inv]).all()
    assert abs(np.mean(covers) - 0.9) <= 0.02, covers


def test_sums_are_clipped_noised_and_consistent():
    rng = np.random.default_rng(4)
    n = 3000
    df = pd.DataFrame({"region": rng.choice(["a", "b", "c"], n), "kind": rng.choice(["x", "y"], n),
                       "income": rng.gamma(2.0, 30.0, n), "pid": rng.integers(0, 2500, n)})
    before = df.copy()
    t, info = clipped_table(df, ["region", "kind"], response="income", person="pid", max_contributions=1,
                            lower=0, upper=100)
    pd.testing.assert_frame_equal(df, before)      # the input is not modified
    assert info["n_clipped"] > 0 and info["n_dropped"] > 0 and t.top[:, 0].max() <= 100
    res = DiscreteGaussianSums(rho=1.0, lower=0, upper=100).apply(t, rng=2)
    assert res.ok and res.sensitivity.bound == 100 and res.published.min() >= 0
    assert DiscreteLaplaceSums(epsilon=1.0, lower=0, upper=100).apply(t, rng=2).ok
    # a table that was not clipped is refused
    raw = Table.from_microdata(df.assign(income=df["income"].round()), ["region", "kind"], response="income")
    with pytest.raises(InputError, match="clipping bound"):
        DiscreteGaussianSums(rho=1.0, lower=0, upper=100).apply(raw, rng=1)


def test_counts_with_a_person_column_keep_the_bound():
    df = pd.DataFrame({"area": ["a", "a", "b", "b", "a"], "sex": ["f", "f", "m", "f", "m"],
                       "pid": [1, 1, 1, 2, 3]})
    t, info = clipped_table(df, ["area", "sex"], person="pid", max_contributions=1)
    # person 1: (a, f) twice -> once, (b, m) dropped (second cell); persons 2, 3 once each
    assert info == {"n_records": 5, "n_dropped": 2, "n_clipped": 0}
    assert t.value[t.cell_index("Total", "Total")] == 3


def test_refusals_name_the_problem():
    t = synthetic_counts((2,), (2,), rng=0)
    with pytest.raises(ParameterError, match=r"The 'rho' parameter of DiscreteGaussianCounts must be a number > 0"):
        DiscreteGaussianCounts(rho=0)
    with pytest.raises(ParameterError, match="max_contributions"):
        DiscreteGaussianCounts(rho=1.0, max_contributions=0)
    with pytest.raises(ParameterError, match="upper"):
        DiscreteGaussianSums(rho=1.0, lower=10, upper=5)
    with pytest.raises(InputError, match="geography 'region' is not a dimension"):
        DiscreteGaussianCounts(rho=1.0, geography="region").apply(t, rng=1)
    neg = Table(t.dims, t.hierarchies, -t.value, -t.freq)
    with pytest.raises(InputError, match="negative"):
        DiscreteGaussianCounts(rho=1.0).apply(neg, rng=1)
    frac = Table(t.dims, t.hierarchies, t.value + 0.5, t.freq)
    with pytest.raises(InputError, match="whole numbers"):
        DiscreteGaussianCounts(rho=1.0).apply(frac, rng=1)


def test_public_outputs_hold_no_seed():
    t = synthetic_counts((2, 3), (2,), rng=0)
    seed = 987654321987
    res = DiscreteGaussianCounts(rho=1.0).apply(t, rng=seed)
    text = json.dumps(res.to_dict()) + res.report_html() + res.frame().to_csv()
    assert str(seed) not in text
    assert res.seed.entropy == seed        # kept on the result, for the internal record only


def test_report_reads_as_words():
    t = synthetic_counts((2, 3), (2,), rng=0)
    html = DiscreteGaussianCounts(rho=1.0).apply(t, rng=1).report_html()
    assert "without noise" in html and "simulation" in html and "{" not in html


@settings(max_examples=10)
@given(st.lists(st.integers(1, 3), min_size=1, max_size=2), st.lists(st.integers(1, 3), max_size=2),
       st.integers(0, 2 ** 31), st.sampled_from(["gauss", "laplace"]), st.integers(0, 2))
def test_any_release_is_consistent_non_negative_exact_on_invariants_and_reproducible(fan, cats, seed, kind, depth):
    t = synthetic_counts(tuple(fan), tuple(cats), mean=2.0, rng=seed)
    m = (DiscreteGaussianCounts(rho=1.0, invariant_depth=depth) if kind == "gauss"
         else DiscreteLaplaceCounts(epsilon=2.0, invariant_depth=depth))
    a = m.apply(t, rng=seed)
    assert a.check["broken"] == 0 and a.check["negative"] == 0 and a.check["invariants_broken"] == 0
    assert (a.lower <= a.published).all() and (a.published <= a.upper).all()
    b = m.apply(t, rng=seed)
    assert np.array_equal(a.published, b.published) and np.array_equal(a.upper, b.upper)
