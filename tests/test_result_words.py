"""What ``sdckit protect`` prints for a step is words: no Python or JSON syntax (the command
line's text, as the workbench's and the reports')."""

from __future__ import annotations

import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from sdckit.microdata import Microdata
from sdckit.registry import build_step
from sdckit.result import words

SCALARS = st.one_of(st.booleans(), st.integers(-10**9, 10**9), st.floats(allow_nan=False, allow_infinity=False),
                    st.text("abcdefgh XYZ-", min_size=1, max_size=8), st.none())
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text("abcdef_", min_size=1, max_size=6), inner, max_size=4)),
    max_leaves=12)


@given(VALUES)
def test_words_never_show_python_or_json_syntax(value):
    text = words(value)
    for mark in ("{", "}", "[", "]", "'", '"', "True", "False", "None"):
        assert mark not in text


def test_numbers_and_truth_values_in_words():
    assert words(10000) == "10,000" and words(0.0706733) == "0.07067" and words(True) == "yes"
    assert words({"a": [1, 2], "b": [3]}) == "a: 1, 2; b: 3"
    assert words({"type": "greedy", "batch_share": 0.1}) == "greedy (batch share 0.1)"
    assert words([]) == "none" and words(None) == "none"


def test_a_step_describes_itself_in_words():
    df = pd.DataFrame({"age": [1, 2, 3, 1, 2, 3] * 5, "sex": [1, 2] * 15, "region": [1, 1, 2, 2, 3, 3] * 5})
    md = Microdata(df, key_vars=["age", "sex", "region"])
    res = build_step("recode", {"variable": "age", "mapping": {"young": [1, 2], "old": [3]}}).apply(md)
    text = res.describe()
    assert text.splitlines()[0] == "recode: variable age | mapping young: 1, 2; old: 3"
    assert "{" not in text and "'" not in text and "records changed: 30" in text
