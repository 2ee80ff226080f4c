"""The accountant: hand-computed conversions and compositions, budgets, and the properties the
composition promises (monotone, additive in rho)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdckit.dp.accountant import (
    ZCDP,
    Accountant,
    ApproxDP,
    Charge,
    MaxEpsilon,
    MaxRho,
    PureDP,
    zcdp_to_delta,
    zcdp_to_epsilon,
)
from sdckit.errors import ParameterError

rhos = st.floats(min_value=1e-4, max_value=5.0, allow_nan=False)
deltas = st.floats(min_value=1e-12, max_value=1e-2, allow_nan=False)


def _acc(*losses) -> Accountant:
    acc = Accountant()
    for i, loss in enumerate(losses):
        acc = acc.spend(Charge(f"t{i}", "m", loss))
    return acc


def test_bun_steinke_bound_by_hand():
    # rho = 0.5, delta = 1e-6: 0.5 + 2 sqrt(0.5 ln 1e6) = 0.5 + 2 sqrt(6.907755...) = 5.7565...
    eps = zcdp_to_epsilon(0.5, 1e-6, "bun-steinke")
    assert eps == pytest.approx(0.5 + 2 * math.sqrt(0.5 * math.log(1e6)), rel=1e-15)


def test_cks_conversion_is_the_infimum_over_alpha():
    # a brute-force grid over alpha (independent of the root-finding) cannot beat it, and gets close
    rho, delta = 0.3, 1e-7
    L = math.log(1 / delta)
    grid = [1 + k / 10000 for k in range(1, 400000)]
    brute = min(a * rho + (L + (a - 1) * math.log(1 - 1 / a) - math.log(a)) / (a - 1) for a in grid)
    eps = zcdp_to_epsilon(rho, delta)
    assert eps <= brute + 1e-12
    assert eps == pytest.approx(brute, abs=1e-6)
    assert eps < zcdp_to_epsilon(rho, delta, "bun-steinke")


def test_delta_and_epsilon_conversions_are_inverse():
    for rho in (0.05, 0.5, 2.0):
        for delta in (1e-9, 1e-5):
            eps = zcdp_to_epsilon(rho, delta)
            assert zcdp_to_delta(rho, eps) == pytest.approx(delta, rel=1e-6)


def test_composition_by_hand():
    acc = _acc(ZCDP(0.2), ZCDP(0.3), PureDP(1.0))
    assert acc.total_rho() == pytest.approx(0.2 + 0.3 + 0.5)   # eps-DP -> eps^2/2-zCDP
    assert _acc(PureDP(0.5), PureDP(0.25)).total_epsilon() == 0.75
    assert _acc(ApproxDP(1.0, 1e-6), ApproxDP(0.5, 2e-6)).total_epsilon(3e-6) == 1.5
    # zCDP at delta, plus a pure epsilon added (smaller here than folding it into rho)
    mixed = _acc(ZCDP(0.5), PureDP(0.1)).total_epsilon(1e-6)
    assert mixed == pytest.approx(min(zcdp_to_epsilon(0.5, 1e-6) + 0.1, zcdp_to_epsilon(0.505, 1e-6)))
    # approximate losses take their delta first
    ap = _acc(ZCDP(0.5), ApproxDP(0.2, 4e-7)).total_epsilon(1e-6)
    assert ap == pytest.approx(0.2 + zcdp_to_epsilon(0.5, 6e-7))
    with pytest.raises(ParameterError, match="max_epsilon"):
        _acc(ApproxDP(1.0, 1e-6)).total_rho()
    assert math.isinf(_acc(ZCDP(0.1)).total_epsilon(0.0))


def test_budget_checks_pass_and_fail():
    acc = _acc(ZCDP(0.25), ZCDP(0.25))
    assert acc.check(MaxRho(0.5)).passed
    fail = acc.check(MaxRho(0.4))
    assert not fail.passed and "OVER BUDGET" in fail.statement and fail.spent == pytest.approx(0.5)
    ok = acc.check(MaxEpsilon(6.0, 1e-6))
    assert ok.passed and ok.spent == pytest.approx(zcdp_to_epsilon(0.5, 1e-6))
    assert not acc.check(MaxEpsilon(5.0, 1e-6)).passed
    assert not acc.check(MaxEpsilon(100.0, 0.0)).passed   # zCDP has no pure-DP bound
    assert _acc(PureDP(1.0)).check(MaxEpsilon(1.0)).passed
    assert acc.per_table() == {"t0": {"rho": 0.25, "epsilon": 0.0, "delta": 0.0},
                               "t1": {"rho": 0.25, "epsilon": 0.0, "delta": 0.0}}


def test_bad_settings_use_the_template():
    with pytest.raises(ParameterError, match=r"The 'rho' parameter of MaxRho must be a number > 0\. Got -1"):
        MaxRho(-1)
    with pytest.raises(ParameterError, match="conversion"):
        MaxEpsilon(1.0, 1e-6, "renyi")


@given(st.lists(rhos, min_size=1, max_size=8), rhos)
def test_composition_is_additive_and_monotone_in_rho(parts, extra):
    acc = _acc(*[ZCDP(r) for r in parts])
    assert acc.total_rho() == pytest.approx(math.fsum(parts), rel=1e-12)
    more = acc.spend(Charge("x", "m", ZCDP(extra)))
    assert more.total_rho() == pytest.approx(acc.total_rho() + extra, rel=1e-12)
    # one more charge never lowers epsilon at any delta
    for d in (1e-9, 1e-6, 1e-3):
        assert more.total_epsilon(d) >= acc.total_epsilon(d) - 1e-12


@given(rhos, rhos, deltas)
def test_epsilon_grows_with_rho_and_shrinks_with_delta(r1, r2, delta):
    lo, hi = sorted((r1, r2))
    assert zcdp_to_epsilon(lo, delta) <= zcdp_to_epsilon(hi, delta) + 1e-12
    assert zcdp_to_epsilon(hi, delta * 10) <= zcdp_to_epsilon(hi, delta) + 1e-12
    # the tight conversion is never worse than the simple bound (CKS 2020 vs Bun & Steinke 2016)
    assert zcdp_to_epsilon(hi, delta) <= zcdp_to_epsilon(hi, delta, "bun-steinke") + 1e-12
