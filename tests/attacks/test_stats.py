"""The success rates (Wilson score interval) and the excess risk over the control."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdckit.attacks.stats import Rate, excess_risk, wilson_rate, z_value
from sdckit.errors import ParameterError

Z95 = 1.959963984540054  # the 0.975 quantile of the standard normal (tables)


def test_z_value_is_the_normal_quantile():
    assert z_value(0.95) == pytest.approx(Z95, rel=1e-12)


def test_wilson_hand_computed():
    # 5 successes in 10 at 95%: centre (5 + z^2/2) / (10 + z^2) = 0.5 by symmetry; half-width
    # z / (10 + z^2) * sqrt(5 * 5 / 10 + z^2 / 4), worked by hand from Wilson (1927)
    r = wilson_rate(5, 10)
    assert r.value == pytest.approx(0.5)
    assert r.error == pytest.approx(Z95 / (10 + Z95**2) * math.sqrt(2.5 + Z95**2 / 4))
    assert (r.low, r.high) == pytest.approx((0.2365931, 0.7634069), abs=1e-6)  # the published 5/10 interval


@given(st.integers(1, 5000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
       st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_wilson_bounds_solve_the_score_equation(kn, conf):
    # the Wilson bounds are the two roots p of (p_hat - p)^2 = z^2 p (1 - p) / n: check them
    # by substitution (an independent route to the same interval)
    k, n = kn
    r = wilson_rate(k, n, conf)
    z = z_value(conf)
    p_hat = k / n
    for p in (r.value - r.error, r.value + r.error):
        assert (p_hat - p) ** 2 == pytest.approx(z * z * p * (1 - p) / n, abs=1e-9)
    assert -1e-12 <= r.value - r.error <= p_hat + 1e-12 and p_hat - 1e-12 <= r.value + r.error <= 1 + 1e-12
    # the centre lies between the plain estimate and 1/2
    assert min(p_hat, 0.5) - 1e-12 <= r.value <= max(p_hat, 0.5) + 1e-12


def test_wilson_refuses_impossible_counts():
    with pytest.raises(ParameterError, match="'n_success' parameter of wilson_rate"):
        wilson_rate(11, 10)
    with pytest.raises(ParameterError, match="'n_trials'"):
        wilson_rate(0, 0)


rates = st.builds(Rate, st.floats(0, 0.999), st.floats(0, 0.2))


@given(rates, rates)
def test_excess_risk_is_clipped_and_inside_its_interval(a, c):
    risk, (lo, hi), raw = excess_risk(a, c)
    assert 0.0 <= lo <= risk <= hi <= 1.0
    assert raw == pytest.approx((a.value - c.value) / (1 - c.value))
    assert risk == pytest.approx(min(max(raw, 0.0), 1.0))


@given(st.floats(0, 0.99), st.floats(0, 0.2), st.floats(0, 0.2))
def test_no_excess_when_training_and_control_agree(p, e1, e2):
    risk, (lo, hi), raw = excess_risk(Rate(p, e1), Rate(p, e2))
    assert raw == pytest.approx(0.0, abs=1e-12) and risk == pytest.approx(0.0, abs=1e-12) and lo == 0.0


@given(st.floats(0, 0.98), st.floats(0, 0.98), st.floats(0.001, 0.02))
def test_excess_risk_grows_with_training_success_and_falls_with_control_success(a, c, step):
    base = excess_risk(Rate(a, 0.0), Rate(c, 0.0))[2]
    assert excess_risk(Rate(a + step, 0.0), Rate(c, 0.0))[2] > base
    assert excess_risk(Rate(a, 0.0), Rate(c + step, 0.0))[2] <= base + 1e-12


def test_excess_risk_limits():
    assert excess_risk(Rate(1.0, 0.0), Rate(0.3, 0.0))[0] == pytest.approx(1.0)  # every training attack won
    assert excess_risk(Rate(0.4, 0.0), Rate(0.0, 0.0))[0] == pytest.approx(0.4)  # no control success
    assert math.isnan(excess_risk(Rate(1.0, 0.0), Rate(1.0, 0.0))[2])           # nothing left to gain
    # the error propagated by hand: d/da = 1/(1-c), d/dc = (a-1)/(1-c)^2
    risk, (lo, hi), _ = excess_risk(Rate(0.6, 0.05), Rate(0.2, 0.04))
    err = math.hypot(0.05 / 0.8, 0.04 * 0.4 / 0.64)
    assert risk == pytest.approx(0.5) and (lo, hi) == pytest.approx((0.5 - err, 0.5 + err))
