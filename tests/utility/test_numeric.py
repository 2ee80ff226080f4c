"""Information loss: IL1..IL5 and IL against a hand-computed case, IL'1 with the
nearest-original mapping, zero denominators, bad input."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import InputError
from sdckit.utility.numeric import (
    eigen_loss,
    il1,
    il1_primed,
    il1s,
    il2,
    il3,
    il4,
    il5,
    information_loss,
    nearest_original,
)

# Tiny case computed by hand:
#   X  = (1,10) (2,20) (3,30) (4,40);   X' = (2,10) (2,20) (3,30) (3,40)
#   IL1 = (1/1 + 1/4) / 8 = 0.15625
#   means equal (2.5, 25): IL2 = 0
#   covariances / n: X v00 = 1.25, v01 = 12.5, v11 = 125; X' v00 = 0.25, v01 = 5, v11 = 125
#   IL3 = (0.8 + 0.6 + 0) / 3; IL4 = (0.8 + 0) / 2 = 0.4
#   rho = 1 and 5 / sqrt(0.25 * 125) = 2 / sqrt(5): IL5 = 1 - 2/sqrt(5)
X = np.array([[1, 10], [2, 20], [3, 30], [4, 40]], dtype=float)
XM = np.array([[2, 10], [2, 20], [3, 30], [3, 40]], dtype=float)
HAND = {"il1": 0.15625, "il2": 0.0, "il3": 1.4 / 3, "il4": 0.4, "il5": 1 - 2 / np.sqrt(5)}


def test_hand_computed_il1_to_il5():
    assert il1(X, XM) == pytest.approx(HAND["il1"])
    assert il2(X, XM) == pytest.approx(HAND["il2"])
    assert il3(X, XM) == pytest.approx(HAND["il3"])
    assert il4(X, XM) == pytest.approx(HAND["il4"])
    assert il5(X, XM) == pytest.approx(HAND["il5"])
    r = information_loss(X, XM)
    assert not r.primed
    assert r.il == pytest.approx(100 * sum(HAND.values()) / 5)


def test_il1s_is_the_mean_of_sdcmicro_terms():
    # |x - x'| / (sqrt(2) sd): column 0 sd = sqrt(5/3), two deviations of 1; column 1 exact
    expected = 2 / (np.sqrt(2) * np.sqrt(5 / 3)) / 8
    assert il1s(X, XM) == pytest.approx(expected)


def test_eigen_zero_for_identical_and_positive_otherwise():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(200, 3))
    assert eigen_loss(A, A) == pytest.approx(0.0, abs=1e-12)
    assert eigen_loss(A, A + rng.normal(size=A.shape)) > 0


def test_primed_mapping_and_automatic_choice():
    # X' = three records of X (exact copies) -> every masked record maps to its copy: IL'1 = 0
    rng = np.random.default_rng(1)
    A = rng.normal(10, 2, size=(50, 4))
    sub = A[[3, 17, 40]]
    assert list(nearest_original(A, sub)) == [3, 17, 40]
    assert il1_primed(A, sub) == 0.0
    r = information_loss(A, sub)
    assert r.primed and "IL'" in r.note and r.il1 == 0.0
    with pytest.raises(InputError, match="primed=False"):
        information_loss(A, sub, primed=False)


@given(st.integers(0, 10_000))
@settings(max_examples=20)
def test_il1_primed_of_a_permutation_is_zero(seed):
    # permuting the records keeps each masked record's nearest original at distance 0
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(30, 3)) + 5
    Am = A[rng.permutation(30)]
    assert il1_primed(A, Am) == pytest.approx(0.0, abs=1e-12)
    assert il2(A, Am) == pytest.approx(0.0, abs=1e-12)
    assert il3(A, Am) == pytest.approx(0.0, abs=1e-9)


def test_zero_denominators_are_skipped_and_counted():
    A = np.array([[0.0, 1.0], [0.0, -1.0], [1.0, 2.0], [-1.0, -2.0]])   # column 0 mean 0, cov(0,1) != 0
    B = A + 0.5
    r = information_loss(A, B)
    assert np.isfinite([r.il1, r.il2, r.il3, r.il4, r.il5]).all()
    assert r.skipped["il1"] == 2            # two zero values of column 0
    assert r.skipped["il2"] == 2            # column 0 and column 1 both have mean 0
    s = information_loss(A, B, zero="scale")
    assert s.skipped["il1"] == 0 and np.isfinite(s.il)
    # zero covariance: independent columns built to have cov exactly 0
    C = np.array([[1.0, 1.0], [1.0, -1.0], [-1.0, 1.0], [-1.0, -1.0]]) + 3
    r = information_loss(C, C * 1.1)
    assert r.skipped["il3"] == 1 and np.isfinite(r.il3)


def test_bad_input():
    a = pd.DataFrame({"x": [1.0, 2, 3], "y": [1.0, 2, 4]})
    b = pd.DataFrame({"x": [1.0, 2, 3], "z": [1.0, 2, 4]})
    with pytest.raises(InputError, match="different columns"):
        information_loss(a, b)
    # same names in another order are matched by name
    assert information_loss(a, a[["y", "x"]]).il == 0.0
    with pytest.raises(InputError, match="variables"):
        information_loss(np.ones((3, 2)), np.ones((3, 3)))
    with pytest.raises(InputError, match="missing or infinite"):
        information_loss(np.array([[1.0], [np.nan], [2.0]]), np.ones((3, 1)))
