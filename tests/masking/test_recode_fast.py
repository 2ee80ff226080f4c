"""The fast paths of global recoding (top/bottom coding by a compiled pass, recoding of a
non-key column by its category table) against the general paths they replace, and the
summary whose distinct-value counts are computed when read."""

import copy
import json
import pickle

import numpy as np
import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from sdckit import Microdata
from sdckit.masking.recode import Recode, _encode_pair, check_recode
from sdckit.masking.summaries import LazySummary


def general_top_bottom(step: Recode, md: Microdata):
    """The general path: ``Series.where`` on every record, then both columns encoded by a
    hash table and checked by :func:`check_recode` (the code before the compiled pass)."""
    col = md.frame[step.variable]
    new, _, _ = step._recode(col)
    b_codes, b_cats, a_codes, a_cats = _encode_pair(col, new, True)
    g, counts = check_recode(b_codes, b_cats, a_codes, a_cats, None, step.top, step.bottom,
                             step.top_value, step.bottom_value)
    return new, g, {"variable": step.variable, "mode": "top_bottom", **counts}


values = st.lists(st.one_of(st.floats(-1e4, 1e4, allow_nan=False), st.just(float("nan"))),
                  min_size=1, max_size=80)


@given(values, st.floats(-100, 100), st.floats(0, 200), st.booleans(), st.booleans(),
       st.one_of(st.none(), st.floats(-50, 50)))
def test_top_bottom_fast_path_equals_the_general_path(vals, bottom, width, use_top, use_bottom, value):
    if not (use_top or use_bottom):
        use_top = True
    top = bottom + width + 1
    kw = {}
    if use_top:
        kw.update(top=top, top_value=None if value is None else top + abs(value))
    if use_bottom:
        kw.update(bottom=bottom, bottom_value=None if value is None else bottom - abs(value))
    step = Recode("x", **kw)
    md = Microdata(pd.DataFrame({"x": vals, "k": [1, 2] * (len(vals) // 2) + [1] * (len(vals) % 2)}),
                   key_vars=["k"], numeric_vars=["x"])
    r = step.apply(md)
    new, g, summary = general_top_bottom(step, md)
    got = r.microdata.frame["x"]
    assert got.dtype == new.dtype
    assert np.array_equal(got.to_numpy(), new.to_numpy(), equal_nan=True)
    assert [x.to_dict() for x in r.guarantees] == [x.to_dict() for x in g]
    assert r.summary == summary and dict(r.summary) == summary
    assert list(r.summary) == list(summary)
    assert md.frame["x"].equals(pd.Series(vals, name="x"))        # the input is unchanged


@given(st.lists(st.integers(0, 99), min_size=1, max_size=200), st.integers(1, 98))
def test_breaks_on_a_non_key_integer_column_equal_a_fresh_check(ages, cut):
    """The released labels equal pd.cut on every record; the checks and counts equal those of
    the released column encoded on its own (the earlier, independent encoding)."""
    md = Microdata(pd.DataFrame({"age": np.asarray(ages, dtype=np.int64)}))
    step = Recode("age", breaks=[-1, cut, 120], labels=["young", "old"], closed="right")
    r = step.apply(md)
    ref = pd.cut(pd.Series(ages), [-1, cut, 120], labels=["young", "old"], right=True).astype(object)
    assert (r.microdata.frame["age"].astype(object) == ref).all()
    b_codes, b_cats = pd.factorize(md.frame["age"], sort=False)
    a_codes, a_cats = pd.factorize(r.microdata.frame["age"], sort=False)
    g, counts = check_recode(b_codes, pd.Index(b_cats), a_codes, pd.Index(a_cats), {"young", "old"})
    assert [x.to_dict() for x in r.guarantees] == [x.to_dict() for x in g]
    assert r.summary == {"variable": "age", "mode": "breaks", **counts}


def test_lazy_summary_reads_as_the_dict_it_becomes():
    calls = []

    def later():
        calls.append(1)
        return {"b": 2}

    def fresh():
        return LazySummary({"a": 1, "b": None, "c": 3}, later)

    plain = {"a": 1, "b": 2, "c": 3}
    s = fresh()
    assert "b" in s and len(s) == 3 and not calls             # keys alone compute nothing
    assert s["b"] == 2 and calls == [1]
    assert s == plain and plain == fresh() and not (fresh() != plain)
    assert fresh().get("b") == 2 and list(fresh().items()) == list(plain.items())
    assert list(fresh().values()) == [1, 2, 3]
    assert dict(fresh()) == plain and {**fresh()} == plain
    assert json.loads(json.dumps(fresh())) == plain and json.loads(json.dumps(fresh(), indent=1)) == plain
    assert pickle.loads(pickle.dumps(fresh())) == plain
    assert copy.copy(fresh()) == plain and copy.deepcopy(fresh()) == plain
    assert repr(fresh()) == repr(plain) and fresh().copy() == plain
    t = fresh()
    t["d"] = 4
    assert t == {**plain, "d": 4} and list(t) == ["a", "b", "c", "d"]
