"""Disclosure measures against a hand-computed example and identities they must satisfy."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import InputError
from sdckit.synth import disclosure_measures

ORIG = pd.DataFrame({"k": list("AABBCDDE"), "t": list("xxxyyxxz")})
SYN = pd.DataFrame({"k": list("AABCEF"), "t": list("xyyyzx")})


def test_hand_computed_example():
    # worked by hand from the definitions (Raab, Nowok & Dibben 2024; synthpop 1.9 disclosure()):
    # f_d: A2 B2 C1 D2 E1, f_s: A2 B1 C1 E1 F1; N_d = 8, N_s = 6
    d = disclosure_measures(ORIG, SYN, ["k"], "t")
    assert d.identity == pytest.approx({"UiO": 25.0, "UiS": 400 / 6, "UiOiS": 25.0, "repU": 25.0})
    assert d.attribute["Dorig"] == pytest.approx(75.0)      # A-x 2, C-y 1, D-x 2, E-z 1
    assert d.attribute["Dsyn"] == pytest.approx(400 / 6)    # B-y, C-y, E-z, F-x
    assert d.attribute["iS"] == pytest.approx(75.0)         # keys A, B, C, E occur in the synthetic file
    assert d.attribute["DiS"] == pytest.approx(50.0)        # keys B, C, E have a certain target there
    assert d.attribute["DiSCO"] == pytest.approx(37.5)      # records 4 (B, y), 5 (C, y), 8 (E, z)
    assert d.attribute["DiSDiO"] == pytest.approx(25.0)     # of those, C and E are certain in the original
    assert d.attribute["max_denom"] == 1 and d.attribute["mean_denom"] == 1
    assert d.cap["baseCAPd"] == pytest.approx(100 * 30 / 64)
    assert d.cap["CAPd"] == pytest.approx(87.5)
    assert d.cap["CAPs"] == pytest.approx(500 / 6)
    assert d.cap["DCAP"] == pytest.approx(50.0)             # A-x 0.5*2 + B-y 1 + C-y 1 + E-z 1
    assert d.cap["TCAP"] == pytest.approx(50.0)             # 3 of the 6 records whose keys occur


def test_cells_over_the_denominator_limit_are_excluded():
    d = disclosure_measures(ORIG, SYN, ["k"], "t", exclude_ov_denom_lim=True, denom_lim=1)
    assert d.attribute["Dorig"] == pytest.approx(25.0)      # A-x and D-x (2 records each) dropped
    d2 = disclosure_measures(ORIG, SYN, ["k"], "t", not_targetlev=["z"])
    assert d2.attribute["DiSCO"] == pytest.approx(25.0)     # E-z no longer counts


def test_missing_values_are_a_level_of_their_own():
    o = pd.DataFrame({"k": ["A", None, None, "B"], "t": ["x", "y", "y", "x"]})
    s = pd.DataFrame({"k": [None, "A", "B", "B"], "t": ["y", "x", "y", "x"]})
    d = disclosure_measures(o, s, ["k"], "t")
    # Missing: f_d = 2 (both y), f_s = 1 (y): its two records are disclosed correctly; A too
    assert d.attribute["DiSCO"] == pytest.approx(75.0)
    d_nokeyna = disclosure_measures(o, s, ["k"], "t", usekeysNA=False)
    assert d_nokeyna.attribute["DiSCO"] == pytest.approx(25.0)


@given(st.integers(0, 10_000), st.integers(2, 6))
@settings(max_examples=25)
def test_a_file_against_itself(seed, levels):
    # the released file is the original: every unique is replicated, every certain target disclosed
    rng = np.random.default_rng(seed)
    n = 60
    df = pd.DataFrame({"a": rng.integers(0, levels, n), "b": rng.choice(list("pq"), n),
                       "t": rng.integers(0, 3, n).astype(float)})
    d = disclosure_measures(df, df, ["a", "b"], "t")
    assert d.identity["repU"] == pytest.approx(d.identity["UiO"])
    assert d.attribute["DiSCO"] == pytest.approx(d.attribute["Dorig"])
    assert d.attribute["iS"] == pytest.approx(100.0)
    assert d.cap["TCAP"] == pytest.approx(d.attribute["Dorig"])
    assert d.cap["CAPs"] == pytest.approx(d.cap["CAPd"])


def test_floats_are_levels_by_their_15_digit_text():
    o = pd.DataFrame({"k": [0.1 + 0.2, 1.0], "t": ["x", "y"]})
    s = pd.DataFrame({"k": [0.3, 1.0], "t": ["x", "y"]})
    assert disclosure_measures(o, s, ["k"], "t").attribute["DiSCO"] == pytest.approx(100.0)


def test_errors_name_the_column():
    with pytest.raises(InputError, match="no column 'kk'"):
        disclosure_measures(ORIG, SYN, ["kk"], "t")
    with pytest.raises(InputError, match="also a key"):
        disclosure_measures(ORIG, SYN, ["k"], "k")
