"""Global recoding: mapping, ARX hierarchy, interval bins, top/bottom coding; remove."""

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdckit import InputError, Microdata, ParameterError
from sdckit.errors import InputWarning
from sdckit.masking.recode import Recode
from sdckit.masking.remove import RemoveVariables
from sdckit.risk import key_frequencies
from tests.conftest import shared_file


def md(**cols):
    df = pd.DataFrame(cols)
    return Microdata(df, key_vars=[c for c in df.columns if c != "income"],
                     numeric_vars=["income"] if "income" in df else ())


def test_mapping_merges_and_keeps_missing():
    m = md(age=[1, 2, 3, np.nan, 4], sex=[1, 2, 1, 2, 1])
    r = Recode("age", mapping={"young": [1, 2], "old": [3]}, others="keep").apply(m)
    assert r.microdata.frame["age"].tolist()[:3] == ["young", "young", "old"]
    assert pd.isna(r.microdata.frame["age"][3]) and r.microdata.frame["age"][4] == "4"
    assert all(g.holds for g in r.guarantees)


def test_a_partial_mapping_is_an_error_unless_others_says_what_to_do():
    """A mapping that leaves codes out would release a mix of labels and codes."""
    m = md(age=[1, 2, 3, 4, 5, 6, 7, 8], sex=[1, 2] * 4)
    with pytest.raises(InputError, match=r"does not list the values '5', '6', '7', '8'.*others = \"keep\""):
        Recode("age", mapping={"young": [1, 2], "old": [3, 4]}).apply(m)
    r = Recode("age", mapping={"young": [1, 2], "old": [3, 4]}, others="other").apply(m)
    assert r.microdata.frame["age"].tolist() == ["young"] * 2 + ["old"] * 2 + ["other"] * 4
    assert all(g.holds for g in r.guarantees)
    with pytest.raises(ParameterError, match="'others' parameter of Recode must be set only with a mapping"):
        Recode("age", breaks=[0, 4], others="keep")


def test_hierarchy_level_matches_file():
    path = shared_file("arx_adult_hierarchies/adult_hierarchy_age.csv")
    adult = pd.read_csv(shared_file("arx_adult.csv"))
    m = Microdata(adult, key_vars=["age", "sex"])
    r = Recode("age", hierarchy_file=str(path), level=2).apply(m)
    # reference: the file's own table, read with the csv module
    import csv
    table = {row[0]: row[2] for row in csv.reader(open(path))}
    expected = adult["age"].astype(str).map(table)
    assert (r.microdata.frame["age"] == expected).all()
    # generalising can only merge combinations: every f_k grows or stays
    assert (key_frequencies(r.microdata).fk >= key_frequencies(m).fk).all()


def test_hierarchy_missing_values_are_listed(tmp_path):
    h = tmp_path / "h.csv"
    h.write_text("1;low;*\n2;low;*\n")
    with pytest.raises(InputError, match=r"lacks 1 values of 'age': \['3'\]"):
        Recode("age", hierarchy_file=str(h), level=1).apply(md(age=[1, 2, 3], sex=[1, 1, 2]))


def test_breaks_like_the_education_recode():
    """Seed 002's education recode: 0-25 years into 5 classes (hand-made expectations)."""
    m = md(educ=[0, 5, 6, 12, 13, 16, 17, 25], sex=[1] * 8)
    r = Recode("educ", breaks=[0, 6, 12, 16, 20, 26],
               labels=["<6", "6-11", "12-15", "16-19", "20+"]).apply(m)
    assert r.microdata.frame["educ"].tolist() == ["<6", "<6", "6-11", "12-15", "12-15", "16-19", "16-19", "20+"]


def test_breaks_outside_is_an_error():
    with pytest.raises(InputError, match="lie outside the breaks"):
        Recode("educ", breaks=[0, 10]).apply(md(educ=[1, 11], sex=[1, 2]))


@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=3, max_size=50),
       st.floats(-1e3, 1e3), st.floats(0, 1e3))
def test_top_bottom_coding_bounds(values, bottom, width):
    top = bottom + width + 1
    df = pd.DataFrame({"k": [1, 2] * (len(values) // 2) + [1] * (len(values) % 2), "income": values})
    m = Microdata(df, key_vars=["k"], numeric_vars=["income"])
    out = Recode("income", top=top, bottom=bottom).apply(m).microdata.frame["income"]
    v = np.array(values)
    np.testing.assert_array_equal(out.to_numpy(), np.clip(v, bottom, top))


def test_exactly_one_mode():
    with pytest.raises(ParameterError, match="set exactly one of"):
        Recode("a")
    with pytest.raises(ParameterError, match="set exactly one of"):
        Recode("a", mapping={"x": [1]}, breaks=[0, 1])
    with pytest.raises(ParameterError, match="'level' parameter of Recode must be an int >= 1"):
        Recode("a", hierarchy_file="h.csv")
    with pytest.raises(ParameterError, match="strictly increasing"):
        Recode("a", breaks=[0, 0])


def test_remove_refuses_role_columns():
    m = md(age=[1, 2, 1], sex=[1, 1, 2])
    with pytest.raises(InputError, match="holds the key_vars role"):
        RemoveVariables(["age"]).apply(m)
    with pytest.raises(InputError, match="does not exist"):
        RemoveVariables(["agee"]).apply(m)


@given(values=st.lists(st.one_of(st.none(), st.integers(0, 30)), min_size=3, max_size=60),
       as_text=st.booleans(), key=st.booleans(), upper=st.integers(1, 29))
def test_recode_by_category_table_matches_a_fresh_encoding(values, as_text, key, upper):
    """The recoded key's codes and categories (computed from the category table) equal those
    a new Microdata encodes from the released column; the other keys keep their codes; the
    released values equal a record-by-record recoding (pd.cut on every record)."""
    if all(v is None for v in values):
        values = [1] + values
    raw = pd.Series([np.nan if v is None else float(v) for v in values])
    col = raw.map(lambda v: v if pd.isna(v) else f"{int(v):02d}") if as_text else raw
    other = pd.Series(np.arange(len(values)) % 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputWarning)      # tiny random keys look like identifiers
        m = Microdata(pd.DataFrame({"a": col, "b": other}), key_vars=["a", "b"] if key else ["b"])
        if as_text:
            step = Recode("a", mapping={"low": [f"{v:02d}" for v in range(upper) if f"{v:02d}" in set(col.dropna())]
                                        or [col.dropna().iloc[0]]}, others="high")
        else:
            step = Recode("a", breaks=[-1, upper, 31], labels=["low", "high"], closed="right")
        r = step.apply(m)
        fresh = Microdata(r.microdata.frame, key_vars=m.key_vars)
    for v in m.key_vars:
        assert np.array_equal(r.microdata.codes(v), fresh.codes(v))
        assert r.microdata.categories(v).equals(fresh.categories(v))
    assert r.microdata.codes("b") is m.codes("b")          # untouched key: same array, no re-encoding
    if not as_text:  # independent reference: pandas' own binning of every record
        ref = pd.cut(raw, [-1, upper, 31], labels=["low", "high"], right=True).astype(object)
        got = r.microdata.frame["a"].astype(object)
        assert ((got == ref) | (got.isna() & ref.isna())).all()
    assert all(g.holds for g in r.guarantees)
    assert m.frame["a"].equals(col)                         # the input is unchanged


def test_remove_keeps_the_encodings_and_refuses_role_columns():
    m = Microdata(pd.DataFrame({"id": [1, 2, 3, 4], "k": ["a", "b", "a", "b"], "w": [1.0, 2, 3, 4]}),
                  key_vars=["k"], weight="w")
    r = RemoveVariables(["id"]).apply(m)
    assert r.microdata.columns == ["k", "w"] and r.microdata.codes("k") is m.codes("k")
    assert "id" in m.columns                                # the input keeps its column
    with pytest.raises(InputError, match="weight role"):
        RemoveVariables(["w"]).apply(m)
