"""Sequential synthesis: what it promises (rules hold, strata never mix, same seed same file,
marginals kept in expectation), missing values and codes, passive variables, sizes, errors."""

from importlib import resources

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import InputError, ParameterError
from sdckit.synth import Synthesiser, synthesise
from sdckit.synth.expr import parse_rule


def people(n=600, seed=0):
    rng = np.random.default_rng(seed)
    age = rng.integers(0, 90, n).astype(float)
    region = rng.choice(["north", "south", "east"], n, p=[0.5, 0.3, 0.2])
    marital = np.where(age < 16, "single", rng.choice(["single", "married", "widowed"], n))
    income = np.round(np.exp(8 + 0.01 * age + rng.normal(0, 0.5, n)))
    income[age < 16] = -8
    income[rng.random(n) < 0.05] = np.nan
    height = np.round(150 + 30 * rng.random(n), 1)
    weight = np.round(height - 100 + rng.normal(0, 8, n), 1)
    return pd.DataFrame({"region": region, "age": age, "marital": marital, "income": income,
                         "height": height, "weight": weight})


@pytest.fixture(scope="module")
def data():
    return people()


@given(seed=st.integers(0, 2**32 - 1), bound=st.integers(5, 60))
@settings(max_examples=15)
def test_rules_always_hold(data, seed, bound):
    rules = [f"age < {bound} -> marital == 'single'", "age >= 80 -> income <= 5000"]
    out = synthesise(data, rng=seed, rules=rules, missing_codes={"income": [-8]})
    n = len(out)
    cols = {c: (out[c].to_numpy(dtype=float, na_value=np.nan) if c != "marital" and c != "region"
                else out[c].astype(object).to_numpy()) for c in out.columns}
    for r in rules:
        assert parse_rule(r).holds(cols, n).all(), r


@given(seed=st.integers(0, 2**32 - 1))
@settings(max_examples=10)
def test_strata_never_mix(data, seed):
    out = synthesise(data, rng=seed, strata=["region"])
    # every record keeps its stratum, and draws only values seen in its stratum
    assert (out["region"].to_numpy() == data["region"].to_numpy()).all()
    for reg in data["region"].unique():
        o, s = data[data.region == reg], out[out.region == reg]
        assert set(s["marital"]) <= set(o["marital"])
        for c in ("age", "height"):   # CART donors: values of the same stratum
            assert set(s[c].dropna()) <= set(o[c].dropna())


@given(seed=st.integers(0, 2**32 - 1))
@settings(max_examples=10)
def test_same_seed_same_file_and_threads_do_not_matter(data, seed):
    a = synthesise(data, rng=seed, missing_codes={"income": [-8]}, strata=["region"])
    b = synthesise(data, rng=seed, missing_codes={"income": [-8]}, strata=["region"], n_jobs=2)
    pd.testing.assert_frame_equal(a, b)


def test_different_seeds_give_different_files(data):
    assert not synthesise(data, rng=1).equals(synthesise(data, rng=2))


def test_sample_reproduces_marginals_in_expectation():
    # each sampled value is a draw from the original marginal, so the mean over 40 files of a
    # category's share is the original share; the standard error of that mean is
    # sqrt(p (1 - p) / (n * 40)) <= 0.5 / sqrt(24000) = 0.0032, and 0.0125 is ~4 standard errors
    rng = np.random.default_rng(11)
    n = 600
    df = pd.DataFrame({"a": rng.choice(list("xyz"), n, p=[0.6, 0.3, 0.1]), "b": rng.normal(0, 1, n)})
    shares = []
    for seed in range(40):
        out = synthesise(df, rng=seed, method="sample")
        shares.append(out["a"].value_counts(normalize=True).reindex(list("xyz"), fill_value=0).to_numpy())
    expected = df["a"].value_counts(normalize=True).reindex(list("xyz")).to_numpy()
    assert np.abs(np.mean(shares, axis=0) - expected).max() < 0.0125


def test_missing_values_and_special_codes_are_categories(data):
    out = synthesise(data, rng=3, missing_codes={"income": [-8]})
    # the codes and the missing values come back, and only where the synthesis put them
    assert (out["income"] == -8).any() and out["income"].isna().any()
    assert ((out["income"] == -8) | out["income"].isna() | (out["income"] > 0)).all()
    # synthesised like the original: about as many codes (10% of 600 is 60; the share is within
    # 6 standard errors sqrt(p(1-p)/600) ~ 0.012 of the original one)
    p_o = (data["income"] == -8).mean()
    p_s = (out["income"] == -8).mean()
    assert abs(p_o - p_s) < 0.075
    # a categorical missing value is one more category
    d2 = data.assign(marital=data["marital"].where(data.index % 7 != 0))
    out2 = synthesise(d2, rng=3)
    assert out2["marital"].isna().any()


def test_passive_variable_follows_its_formula(data):
    d = data.assign(bmi=data["weight"] / (data["height"] / 100) ** 2)
    out = synthesise(d, rng=4, passive={"bmi": "weight / (height / 100) ** 2"})
    np.testing.assert_allclose(out["bmi"], out["weight"] / (out["height"] / 100) ** 2)


def test_output_keeps_columns_and_dtypes(data):
    out = synthesise(data, rng=5)
    assert list(out.columns) == list(data.columns)
    assert (out.dtypes == data.dtypes).all()
    assert out.index.equals(data.index)


def test_a_file_of_another_size_and_strata_shares(data):
    out = synthesise(data, 1000, rng=6, strata=["region"])
    assert len(out) == 1000
    share_o = data["region"].value_counts(normalize=True)
    share_s = out["region"].value_counts(normalize=True)
    assert (abs(share_o - share_s.reindex(share_o.index)) <= 1 / 1000 + 1e-12).all()


def test_partition_draws_from_one_fit_match_the_whole(data):
    # one fit, strata drawn apart from their own streams = the whole draw
    fitted = Synthesiser(strata=("region",)).fit(data)
    whole = fitted.draw(rng=9)
    ss = np.random.SeedSequence(9)
    streams = dict(zip(fitted.stratum_rows, ss.spawn(len(fitted.stratum_rows))))
    for lab, rows, syn in whole.parts:
        alone, _ = fitted.draw_stratum(lab, len(rows), streams[lab], rows=rows)
        for c in syn.codes:
            assert (alone.codes[c] == syn.codes[c]).all()
        for c in syn.values:
            assert np.array_equal(alone.values[c], syn.values[c])


def test_visit_sequence_synthpop_rule_and_methods(data):
    s = Synthesiser(visit_sequence="synthpop", methods={"height": "normrank", "weight": "pmm", "income": "norm"},
                    missing_codes={"income": [-8]})
    plan = s.plan(data)
    assert plan.sequence[:2] == ("region", "marital")   # categorical, fewest categories first
    out = s.fit(data).draw(rng=1).frame(data)
    assert out["height"].between(data["height"].min(), data["height"].max()).all()   # normrank: observed values
    assert set(out["weight"]) <= set(data["weight"])                                  # pmm: donors


def test_parametric_categorical_methods(data):
    d = data.assign(sex=np.where(data.index % 2 == 0, "f", "m"))
    out = synthesise(d, rng=2, methods={"sex": "logreg", "marital": "polyreg"})
    assert set(out["sex"]) <= {"f", "m"} and set(out["marital"]) <= set(d["marital"])


def test_smoothing_changes_values_within_bounds(data):
    plain = synthesise(data, rng=8)
    smooth = synthesise(data, rng=8, smoothing=("height",))
    assert not set(smooth["height"]) <= set(data["height"])
    assert smooth["height"].between(data["height"].min(), data["height"].max() + 10).all()
    assert set(plain["height"]) <= set(data["height"])


@pytest.mark.parametrize("settings_, match", [
    ({"variables": ["agee"]}, "'agee'"),
    ({"passive": {"weight": "height / hieght"}}, "hieght"),
    ({"methods": {"marital": "norm"}}, "numeric variables"),
    ({"methods": {"age": "polyreg"}}, "categorical variables"),
    ({"rules": ["weight > 100 -> age < 50"], "visit_sequence": ["age", "weight"]}, "synthesised after"),
    ({"missing_codes": {"region": [-8]}}, "categorical"),
])
def test_plan_errors_name_the_column_and_rule(data, settings_, match):
    with pytest.raises(InputError, match=match):
        Synthesiser(**settings_).plan(data)


def test_settings_use_the_one_template():
    template = r"^The 'min_leaf' parameter of Synthesiser must be an int >= 1\. Got 0\.$"
    with pytest.raises(ParameterError, match=template):
        Synthesiser(min_leaf=0)
    with pytest.raises(ParameterError, match="'method' parameter of Synthesiser"):
        Synthesiser(method="forest")


def test_census_sample_runs_with_keys_as_categories():
    df = pd.read_csv(resources.files("sdckit") / "data" / "uk_census2011_teaching_10k.csv", nrows=3000)
    df = df.drop(columns=["Person ID"])
    out = synthesise(df, rng=1, categorical=tuple(df.columns))
    for c in df.columns:
        assert set(out[c]) <= set(df[c])
