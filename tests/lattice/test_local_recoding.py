"""Local recoding in the ``generalise`` step (ARX's: the search repeated on the suppressed records)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import InputError
from sdckit.microdata import Microdata
from sdckit.registry import build_step

from ..conftest import shared_file

QIS = ["sex", "age", "race", "education"]


def _adult(n: int | None = None) -> Microdata:
    data = pd.read_csv(shared_file("arx_adult.csv"), dtype=str)
    if n:
        data = data.iloc[:n]
    return Microdata(data, key_vars=QIS, sensitive=["salary-class"])


def _class_sizes(frame: pd.DataFrame, kept: np.ndarray) -> pd.Series:
    return frame.loc[kept, QIS].astype(str).groupby(QIS, sort=False).size()


def _starred(frame: pd.DataFrame) -> np.ndarray:
    """Records whose every QI reads ``*``: the suppressed ones, and any class released at the top
    level of every hierarchy (its label is ``*`` too)."""
    return (frame[QIS].astype(str) == "*").all(axis=1).to_numpy()


def test_local_recoding_releases_suppressed_records_and_keeps_k():
    md = _adult(3000)
    base = {"hierarchy_dir": str(shared_file("arx_adult_hierarchies")), "k": 5, "suppression": 0.05}
    glob = build_step("generalise", base).apply(md)
    local = build_step("generalise", {**base, "local_recoding": 3}).apply(md)
    s = local.summary
    assert s["n_suppressed_global"] == glob.summary["n_suppressed"] > 0
    assert s["n_suppressed"] < s["n_suppressed_global"]
    assert s["local_recoding"][0]["records"] == s["n_suppressed_global"]
    assert all(g.holds for g in local.guarantees)
    # an independent count on the released file: every class of kept records has >= 5 of them
    out = local.microdata.frame
    kept = ~_starred(out)
    assert int((~kept).sum()) >= s["n_suppressed"]
    assert _class_sizes(out, kept).min() >= 5
    # records the global pass kept are unchanged by local recoding
    gout = glob.microdata.frame
    gkept = ~_starred(gout)
    assert (out.loc[gkept, QIS].astype(str).to_numpy() == gout.loc[gkept, QIS].astype(str).to_numpy()).all()


@settings(max_examples=8, deadline=None)
@given(n=st.integers(300, 1500), k=st.integers(2, 12), passes=st.integers(1, 4))
def test_every_pass_keeps_k_anonymity_on_the_released_values(n, k, passes):
    md = _adult(n)
    step = build_step("generalise", {"hierarchy_dir": str(shared_file("arx_adult_hierarchies")), "k": k,
                                     "suppression": 0.02, "local_recoding": passes})
    res = step.apply(md)
    out = res.microdata.frame
    kept = ~_starred(out)
    if kept.any():
        assert _class_sizes(out, kept).min() >= k
    s = res.summary
    assert int((~kept).sum()) >= s["n_suppressed"]
    assert s["n_suppressed"] <= s["n_suppressed_global"]
    assert len(s["local_recoding"]) <= passes
    released = sum(p["released"] for p in s["local_recoding"] if p["accepted"])
    assert s["n_suppressed_global"] - released == s["n_suppressed"]


def test_models_measured_against_the_whole_file_are_refused():
    with pytest.raises(InputError, match="t-closeness"):
        build_step("generalise", {"hierarchy_dir": str(shared_file("arx_adult_hierarchies")), "k": 5, "t": 0.2,
                                  "local_recoding": 2})
