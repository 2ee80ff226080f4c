"""Interval disclosure: ID by hand, ID' for other sizes, sdcMicro's sd-based variant, the
max_id gate."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit import Microdata
from sdckit.registry import gate_check
from sdckit.risk.interval import interval_disclosure, interval_disclosure_sd

X = np.array([[1, 10], [2, 20], [3, 30], [4, 40]], dtype=float)
XM = np.array([[2, 10], [2, 20], [3, 30], [3, 40]], dtype=float)


def test_id_hand_computed():
    # widths 25% and 50% of 4 records: half-widths 1 and 2 ranks.
    # column 0 masked sorted 2,2,3,3: the value 2 holds ranks 0-1, 3 holds 2-3; every interval is
    # [2, 3] for both widths -> originals 1 and 4 fall outside: 2 of 4.
    # column 1 is unchanged: 4 of 4. ID_25 = ID_50 = 6/8.
    r = interval_disclosure(X, XM, widths=[25, 50])
    assert r.per_width == pytest.approx({"25": 75.0, "50": 75.0})
    assert r.per_variable == pytest.approx({"x0": 50.0, "x1": 100.0})
    assert r.value == pytest.approx(75.0)


def test_id_width_one_rank():
    # 10 records, width 10% -> one rank each side. Masked column = original shifted by two ranks:
    # original value k+2 lies in [k-1, k+1] never; shifted by one rank: always (inside the file)
    x = np.arange(10.0)
    one = interval_disclosure(x[:, None], np.roll(x, 1)[:, None], widths=[10])
    two = interval_disclosure(x[:, None], np.roll(x, 2)[:, None], widths=[10])
    # roll by 1: record i holds x[i-1]; original x[i] is one rank above -> inside, except record 0
    # (holds 9, interval [8, 9], original 0 outside)
    assert one.value == pytest.approx(90.0)
    # roll by 2: records 0, 1 hold 8, 9 (originals 0, 1 outside); the rest two ranks off -> outside
    assert two.value == pytest.approx(0.0)


@given(st.integers(0, 100_000))
@settings(max_examples=20)
def test_id_full_for_identical_and_monotone_in_width(seed):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(50, 3))
    assert interval_disclosure(A, A).value == 100.0
    r = interval_disclosure(A, A + rng.normal(scale=0.5, size=A.shape))
    vals = list(r.per_width.values())
    assert all(a <= b + 1e-12 for a, b in zip(vals, vals[1:]))


def test_id_primed_other_sizes():
    rng = np.random.default_rng(2)
    A = rng.normal(size=(60, 2))
    sub = A[:25]
    r = interval_disclosure(A, sub)
    assert r.primed and "ID'" in r.note and r.value == 100.0


def test_sd_variant_hand_computed():
    # sd of masked column 0 = sqrt(1/3): intervals +-0.029 around 2, 2, 3, 3 -> records 0 and 3 have
    # column 0 outside; column 1 exact. At most one variable outside: 4/4; none outside: 2/4.
    assert interval_disclosure_sd(X, XM) == pytest.approx(1.0)
    assert interval_disclosure_sd(X, XM, max_outside=0) == pytest.approx(0.5)


def test_gate_max_id():
    rng = np.random.default_rng(7)
    df = pd.DataFrame(rng.normal(size=(200, 2)), columns=["a", "b"])
    md = Microdata(df, numeric_vars=["a", "b"])
    check = gate_check("max_id")
    out = check.check(md, md, [], 90.0)
    assert not out.passed and out.value["id"] == 100.0
    noisy = md.with_columns({v: df[v] + rng.normal(scale=2, size=200) for v in "ab"})
    assert check.check(md, noisy, [], 90.0).passed
