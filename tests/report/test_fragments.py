"""The HTML fragments and chart data the reports and the workbench share.

Reference values come from independent computations in the test (pandas ``value_counts`` and
``groupby`` on the raw columns, ``numpy`` counts by hand), never from the functions tested.
"""

import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.microdata import DatasetMeta, Microdata
from sdckit.registry import build_gate_check, build_step, gate_check_class, known_gate_checks
from sdckit.report import fragments as F

JSONISH = re.compile(r'[{}]|"\w+"\s*:|\[\s*"')


def _data(n=300, seed=1, missing=True):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"sex": rng.integers(1, 3, n).astype(float),
                       "age": rng.choice(["<25", "25-44", "45-64", "65+"], n),
                       "region": rng.integers(1, 5, n), "income": rng.normal(100, 20, n),
                       "hours": rng.normal(40, 5, n), "health": rng.choice(["good", "fair", "poor"], n),
                       "w": rng.uniform(5, 50, n)})
    if missing:
        df.loc[:5, "sex"] = np.nan
    meta = DatasetMeta(value_labels={"sex": {1: "Male", 2: "Female"}})
    return df, Microdata(df, key_vars=["sex", "age", "region"], numeric_vars=["income", "hours"],
                         sensitive=["health"], weight="w", meta=meta)


def _first_value(cls):
    from sdckit.params import step_params

    p = step_params(cls)[0]
    if p.kind == "int":
        return 2
    if p.kind == "float":
        return (p.high or 1.0) * 0.5
    return None


def test_every_registered_gate_check_measures_a_sentence_without_json(tmp_path):
    """Iterate the registry: run each check on a small dataset (a control file for the
    attacks) and read its measured value through the check's own sentence."""
    df, md = _data(missing=False)                            # the log-linear models need complete keys
    control = tmp_path / "control.csv"
    df.to_csv(control, index=False)
    seen = 0
    for name in known_gate_checks():
        cls = gate_check_class(name)
        kw = {}
        first = _first_value(cls)
        if first is not None:
            from sdckit.params import step_params

            kw[step_params(cls)[0].name] = first
        if "control_file" in cls.__dataclass_fields__:
            kw["control_file"] = str(control)
        outcome = cls(**kw).check(md, md, [])
        text = F.measured_sentence(name, outcome.value)
        assert text and not JSONISH.search(text), (name, text)
        # a labelled figure is shown by its label, never by its key
        value = outcome.value if isinstance(outcome.value, dict) else {}
        for key in cls.measured_labels:
            if key in value and "_" in key:
                assert key not in text, (name, key, text)
        seen += 1
    assert seen == len(known_gate_checks()) >= 20


def test_gate_table_has_labels_units_sentences_and_percentages():
    df, md = _data()
    rel = build_step("local_suppression", {"k": 3}).apply(md, rng=1).microdata
    k = build_gate_check("k_anonymity", 3).check(md, rel, [])
    g = build_gate_check("max_global_risk", 0.05).check(md, rel, [])
    page = F.gate_table_html([k, g])
    # independent: the smallest key class of the release, missing values as wildcards, is
    # what the gate measured; the sentence reads it with its label
    assert f"k reached: {k.value['k_reached']}; records below k: 0" in page
    assert "5.00% of records" in page                       # the threshold as a percentage
    assert f"global risk: {g.value['global_risk']:.2%}" in page
    assert "k_anonymity</td>" not in page and "max_global_risk</" not in page
    assert not JSONISH.search(re.sub(r"<[^>]+>", "", page))


def test_measured_sentence_of_nested_and_list_values_has_no_braces():
    from sdckit.registry import measured_words

    text = measured_words({"a_b": {"x": 1, "y": [1, 2]}, "flagged": [{"column": "id"}], "s": None})
    assert "{" not in text and "[" not in text and "id" in text


def test_frequency_table_labels_missing_and_order():
    df, md = _data()
    t = F.frequency_table(md, "sex").set_index("category")
    ref = df["sex"].value_counts(dropna=False)             # pandas, on the raw column
    assert t.loc["Male", "records"] == ref[1.0] and t.loc["Female", "records"] == ref[2.0]
    assert t.loc["(missing)", "records"] == df["sex"].isna().sum() == 6
    assert list(t.index)[-1] == "(missing)" and "1" not in t.index
    assert t["share"].sum() == pytest.approx(1.0)
    age = F.frequency_table(md, "age")
    assert list(age["category"]) == ["<25", "25-44", "45-64", "65+"]   # bands by their order
    html = F.frequency_table_html(md, "sex")
    assert "Male" in html and ">1<" not in html


def test_ordered_categorical_keeps_its_order():
    cats = pd.CategoricalDtype(["low", "middle", "high"], ordered=True)
    df = pd.DataFrame({"level": pd.Series(["high", "low", "middle", "high"], dtype=cats), "x": [1, 2, 3, 4]})
    md = Microdata(df, key_vars=["level"])
    assert list(F.frequency_table(md, "level")["category"]) == ["low", "middle", "high"]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(0, 5)), min_size=1, max_size=60))
def test_frequency_table_counts_every_record_once(values):
    df = pd.DataFrame({"v": pd.Series(values, dtype="Float64").astype(float), "id": range(len(values))})
    md = Microdata(df)                                       # a column that is not a key
    t = F.frequency_table(md, "v")
    assert t["records"].sum() == len(values)
    assert t["share"].sum() == pytest.approx(1.0)
    numbers = [float(c) for c in t["category"] if c != "(missing)"]
    assert numbers == sorted(numbers)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=80))
def test_risk_histogram_bands_cover_every_record(values):
    h = F.risk_histogram(np.array(values))
    assert h["records"].sum() == len(values)
    v = np.array(values)
    # by hand: the band of the largest risks is [0.5, 1], the smallest [0, 0.001)
    assert h["records"].iloc[-1] == int((v >= 0.5).sum())
    assert h["records"].iloc[0] == int((v < 0.001).sum())


def test_riskiest_and_below_k_records_show_keys_by_label():
    df, md = _data(n=120, seed=4)
    from sdckit.risk.report import measure_risk

    rep = measure_risk(md)
    page = F.riskiest_records_html(md, rep, page=1, per_page=5)
    top = int(np.argmax(rep.records["risk"].to_numpy()))
    assert f"<td>{top + 1:,}</td>" in page                  # the riskiest record comes first
    assert "Male" in page or "Female" in page or "(missing)" in page
    assert ">1.0<" not in page and ">2.0<" not in page
    below = F.below_k_records_html(md, k=3, risk_result=rep, per_page=1000)
    n_below = int((rep.records["fk"].to_numpy() < 3).sum())
    assert f"{n_below:,} records have a key combination shared by fewer than 3" in below
    assert below.count("<tr>") == n_below + 1


def test_ldiversity_counts_records_below_l():
    df, md = _data(n=200, seed=2)
    page = F.ldiversity_html(md, l=3)
    from sdckit.risk.ldiversity import l_diversity

    d = l_diversity(md).records["health_distinct"].to_numpy()
    assert f"{int((d < 3).sum()):,} records" in page


def test_utility_panel_and_branch_comparison():
    df, md = _data(n=250, seed=3)
    rel = build_step("local_suppression", {"k": 3}).apply(md, rng=1).microdata
    page = F.utility_panel_html(md, rel)
    for word in ("Hellinger", "TVD", "IL1", "Two-way tabulations", "Male"):
        assert word in page
    a = {"name": "k = 3", "steps": [build_step("local_suppression", {"k": 3})], "original": md, "released": rel}
    b = {"name": "k = 5", "steps": [{"method": "local_suppression", "params": {"k": 5}}],
         "figures": {"global_risk": 0.5, "sample_uniques": 7, "below_k": 2, "information_kept": 0.9}}
    cmp = F.compare_branches_html([a, b])
    assert "class='differs'" in cmp and "50.00%" in cmp and "local suppression" in cmp
    assert "k: 5" in cmp and "k: 3" in cmp


def test_rumap_data_puts_risk_on_x_and_the_release_as_given():
    summary = pd.DataFrame({"method": ["a", "a"], "label": ["p=1", "p=2"], "risk": [0.02, 0.01],
                            "risk_sd": [0, 0], "utility": [0.9, 0.7], "utility_sd": [0, 0]})
    data = F.rumap_data(summary, original_risk=0.08, release=(0.8, 0.015))
    rel = data[data["what"] == "this release"].iloc[0]
    assert rel["risk"] == 0.015 and rel["utility"] == 0.8
    spec = F.rumap_chart(data, threshold=0.03).to_dict()
    layers = {layer.get("name"): layer for layer in spec["layer"]}
    assert layers["points"]["encoding"]["x"]["field"] == "risk"
    assert layers["points"]["encoding"]["y"]["field"] == "utility"
    assert layers["threshold"]["encoding"]["x"]["field"] == "threshold"


def test_a_dominating_setting_on_the_ru_map_is_explained():
    from types import SimpleNamespace

    from sdckit.explore.rumap import dominating, dominating_html

    summary = pd.DataFrame({"method": ["recode", "pram", "pram"], "label": ["a", "b", "c"],
                            "risk": [0.02, 0.05, 0.01], "utility": [0.98, 0.99, 0.5]})
    # by hand: only "a" has risk <= 0.03 and utility >= 0.83
    assert list(dominating(summary, 0.03, 0.83)["label"]) == ["a"]
    run = SimpleNamespace(spec=None, gate=[SimpleNamespace(name="k_anonymity")])
    text = dominating_html(run, summary, 0.03, 0.83, threshold=0.04)
    assert "does better than this release" in text and "choice_reason" in text and "k_anonymity" in text
    spec = SimpleNamespace(raw={"report": {"choice_reason": "the users need the detail of age"}})
    text = dominating_html(SimpleNamespace(spec=spec, gate=[]), summary, 0.03, 0.83, threshold=0.04)
    assert "the steward chose otherwise: the users need the detail of age" in text
    # a dominating setting above the threshold is said to fail it
    text = dominating_html(SimpleNamespace(spec=None, gate=[]), summary, 0.03, 0.83, threshold=0.015)
    assert "fails the risk threshold (2.00% &gt; 1.50%)" in text or "fails the risk threshold (2.00% > 1.50%)" in text
    assert dominating_html(run, summary, 0.005, 0.999, threshold=0.04) == ""
