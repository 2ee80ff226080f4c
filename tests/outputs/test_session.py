"""The researcher's session: results equal pandas/statsmodels, checks recorded, results.json in
ACRO's layout, inputs untouched."""

import json

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from sdckit.errors import InputError
from sdckit.outputs import OutputRules, Session


@pytest.fixture
def df():
    rng = np.random.default_rng(11)
    n = 300
    d = pd.DataFrame({"grade": rng.choice(["a", "b", "c"], n), "sex": rng.choice(["f", "m"], n),
                      "income": rng.gamma(2.0, 800.0, n), "age": rng.integers(18, 80, n).astype(float)})
    d.loc[d.index[:4], "grade"] = "d"   # a small row: 4 records
    d["high"] = (d.income > d.income.median()).astype(float)
    return d


def test_crosstab_returns_pandas_result_and_records_checks(df):
    before = df.copy()
    s = Session()
    t = s.crosstab(df.grade, df.sex)
    pd.testing.assert_frame_equal(t, pd.crosstab(df.grade, df.sex, dropna=False))
    pd.testing.assert_frame_equal(df, before)  # the input is never modified
    rec = s.outputs["output_0"]
    assert rec.status == "fail"
    thr = {c.name: c for c in rec.checks}["MinimumThresholdCheck"]
    small = pd.crosstab(df.grade, df.sex).to_numpy() < 10
    assert np.array_equal(thr.mask, small)
    assert rec.command.startswith("t = s.crosstab(")


def test_suppress_blanks_failing_cells(df):
    s = Session(suppress=True)
    t = s.crosstab(df.grade, df.sex)
    small = pd.crosstab(df.grade, df.sex).to_numpy() < 10
    assert np.array_equal(np.isnan(t.to_numpy(float)), small)


def test_pivot_table_mean_and_std(df):
    s = Session()
    t = s.pivot_table(df, index="grade", columns="sex", values="income", aggfunc=["mean", "std"])
    pd.testing.assert_frame_equal(t, pd.pivot_table(df, index="grade", columns="sex", values="income",
                                                    aggfunc=["mean", "std"], dropna=False, observed=False))
    names = [c.name for c in s.outputs["output_0"].checks]
    assert names == ["NKCheck", "PPercentCheck", "PresenceOfLinkedTableCheck", "MinimumThresholdCheck",
                     "MinimumDoFCheck"]


def test_models_check_residual_degrees_of_freedom(df):
    s = Session()
    x = sm.add_constant(df[["age"]])
    res = s.ols(df.income, x)
    ref = sm.OLS(df.income, x).fit()
    assert np.allclose(res.params, ref.params)
    assert s.outputs["output_0"].status == "pass"
    s.logit(df.high, x)
    s.probit(df.high, x)
    assert [r.properties["method"] for r in s.outputs.values()] == ["ols", "logit", "probit"]
    small = df.iloc[:8]
    s.ols(small.income, sm.add_constant(small[["age"]]))   # 8 - 2 = 6 residual degrees of freedom
    rec = s.outputs["output_3"]
    assert rec.status == "fail" and rec.checks[0].value == 6.0


def test_histogram_bins_and_survival_steps(df):
    s = Session()
    bins = s.hist(df, "income", bins=20)
    counts, _ = np.histogram(df.income, 20)
    assert bins["count"].tolist() == counts.tolist()
    thr = s.outputs["output_0"].checks[0]
    assert thr.mask[:, 0].tolist() == (counts < 10).tolist()
    time = np.repeat(np.arange(1, 6), 30).astype(float)
    status = np.tile([1, 0, 0], 50)
    table = s.survival(time, status)
    rec = s.outputs["output_1"]
    at_risk = table["num at risk"].to_numpy()
    surv = {c.name: c for c in rec.checks}
    assert surv["SurvivalThresholdCheck"].mask[:, 0].tolist() == (at_risk < 10).tolist()
    assert surv["MinimumDoFCheck"].value == 150 - 5
    assert rec.status == "review"  # ACRO's manual check of survival outputs


def test_custom_output_and_blocked_extension(tmp_path):
    s = Session()
    f = tmp_path / "figure.png"
    f.write_bytes(b"\x89PNG\r\n")
    uid = s.custom_output(f, "a plot")
    assert s.outputs[uid].status == "review"
    bad = tmp_path / "figure.svg"
    bad.write_text("<svg/>")
    with pytest.raises(InputError, match="figure.svg: the extension .svg is blocked"):
        s.custom_output(bad)


def test_finalise_writes_acro_layout(df, tmp_path):
    s = Session(OutputRules(threshold=5))
    s.crosstab(df.grade, df.sex, margins=True)
    s.ols(df.income, sm.add_constant(df[["age"]]))
    s.add_exception("output_0", "the small row is a published category")
    folder = s.finalise(tmp_path / "out")
    doc = json.loads((folder / "results.json").read_text())
    assert doc["version"] == "1.0.2" and doc["tool"]["name"] == "sdckit"
    rec = doc["results"]["output_0"]
    # ACRO's record fields (acro/record.py finalise_json), in its nesting
    for key in ("uid", "status", "type", "properties", "files", "outcome", "command", "summary", "timestamp",
                "comments", "exception"):
        assert key in rec
    assert rec["exception"] == "the small row is a published category"
    sdc = rec["files"][0]["sdc"]
    assert set(sdc) == {"summary", "cells"} and sdc["summary"]["MinimumThresholdCheck"] == len(
        sdc["cells"]["MinimumThresholdCheck"])
    assert (folder / rec["files"][0]["name"]).is_file()
    assert doc["results"]["output_1"]["properties"]["dof"] == 298.0
    assert json.loads((folder / "config.json").read_text())["safe_threshold"] == 5
    with pytest.raises(InputError):
        s.add_exception("output_9", "x")
