"""measure_risk's optional analyses as composable measures (sdckit.risk.measures)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from sdckit import Microdata, ParameterError
from sdckit.risk.measures import Contributions, Suda2, Uniqueness
from sdckit.risk.report import measure_risk


@pytest.fixture(scope="module")
def md():
    rng = np.random.default_rng(20261126)
    n = 400
    df = pd.DataFrame({"a": rng.integers(0, 4, n), "b": rng.integers(0, 3, n), "c": rng.integers(0, 5, n)})
    return Microdata(df, key_vars=["a", "b", "c"])


def test_measures_are_added_not_flagged(md):
    flagged = measure_risk(md, suda=True, suda_max_size=2, uniqueness_max_size=2, contributions=True)
    added = measure_risk(md, measures=[Contributions(), Uniqueness(2), Suda2(max_size=2)])
    # the same figures in the same order whichever way (and in whatever order) they are asked for
    assert json.dumps(added.summary, default=str) == json.dumps(flagged.summary, default=str)
    assert list(added.summary)[-3:] == ["suda", "uniqueness", "key_contributions"]
    pd.testing.assert_frame_equal(added.records, flagged.records)
    assert added.suda is not None and added.uniqueness is not None
    # the uniqueness table agrees with a direct count (pandas groupby, independent of sdckit's
    # frequencies): combinations of (a, c) that occur once
    table = added.uniqueness.set_index("variables")
    once = int((md.frame.groupby(["a", "c"]).size() == 1).sum())
    assert int(table.loc["a + c", "n_unique"]) == once


def test_core_only_without_measures(md):
    r = measure_risk(md)
    assert "suda" not in r.summary and r.suda is None and r.uniqueness is None


def test_a_measure_given_twice_is_refused(md):
    with pytest.raises(ParameterError, match="at most one Suda2"):
        measure_risk(md, suda=True, measures=[Suda2(max_size=1)])
    with pytest.raises(ParameterError, match="The 'measures' parameter of measure_risk"):
        measure_risk(md, measures=["suda"])
    with pytest.raises(ParameterError, match="The 'weights' parameter of Suda2"):
        Suda2(weights="nope")
