"""The expression language of rules and passive variables: what it evaluates, and what it refuses."""

import math

import numpy as np
import pytest

from sdckit.errors import InputError
from sdckit.synth.expr import parse_expression, parse_rule


def ev(text, **cols):
    n = len(next(iter(cols.values()))) if cols else 1
    return parse_expression(text).evaluate({k: np.asarray(v, dtype=object if isinstance(v[0], str) else None)
                                            for k, v in cols.items()}, n)


def test_arithmetic_and_functions_match_numpy():
    w = np.array([60.0, 80.0, 95.5])
    h = np.array([160.0, 180.0, 175.0])
    got = ev("weight / (height / 100) ** 2", weight=w, height=h)
    np.testing.assert_allclose(got, w / (h / 100) ** 2)
    np.testing.assert_allclose(ev("round(log(x) + sqrt(x), 2)", x=[1.0, 4.0]),
                               np.round(np.log([1, 4]) + np.sqrt([1, 4]), 2))
    np.testing.assert_allclose(ev("max(x, 2) - min(x, 2)", x=[1.0, 3.0]), [1.0, 1.0])


def test_comparisons_with_missing_values_are_false():
    x = np.array([10.0, np.nan, 20.0])
    assert ev("x < 15", x=x).tolist() == [True, False, False]
    assert ev("x >= 15", x=x).tolist() == [False, False, True]
    assert ev("isna(x)", x=x).tolist() == [False, True, False]
    s = np.array(["a", None, "b"], dtype=object)
    assert ev("s == 'a'", s=s).tolist() == [True, False, False]
    assert ev("s != 'a'", s=s).tolist() == [False, False, True]


def test_logic_in_chained_and_conditional():
    age = [5.0, 30.0, 70.0]
    assert ev("0 < age < 18 or age > 65", age=age).tolist() == [True, False, True]
    assert ev("not (age in [30, 70])", age=age).tolist() == [True, False, False]
    assert ev("'old' if age > 65 else 'young'", age=age).tolist() == ["young", "young", "old"]
    assert ev("where(age > 18, 1, 0)", age=age).tolist() == [0, 1, 1]


def test_cut_intervals_closed_on_the_left_last_closed():
    got = ev("cut(age, [0, 16, 65, 100], ['child', 'adult', 'senior'])", age=[0.0, 15.9, 16.0, 100.0, 120.0])
    assert got.tolist() == ["child", "child", "adult", "senior", None]


def test_backquoted_and_col_names():
    e = parse_expression("`Marital Status` == 1 and col('Age') < 3")
    assert e.columns == ("Marital Status", "Age")
    out = e.evaluate({"Marital Status": np.array([1, 2, 1]), "Age": np.array([1, 1, 5])}, 3)
    assert out.tolist() == [True, False, False]


@pytest.mark.parametrize("text", [
    "__import__('os').system('true')",      # a call of something not listed
    "x.__class__",                           # attribute access
    "x[0]",                                  # subscripts
    "lambda: 1",                             # lambdas
    "[v for v in x]",                        # comprehensions
    "open('f')",                             # functions not in the language
    "x if",                                  # syntax errors
    "round(x, digits=2)",                    # keyword arguments
])
def test_refuses_what_is_not_in_the_language(text):
    with pytest.raises(InputError, match="expression"):
        parse_expression(text)


def test_unknown_column_is_named_with_the_close_ones():
    with pytest.raises(InputError, match="'agee'.*'age'"):
        parse_expression("agee < 3", known=["age", "sex"])


def test_rule_parts_target_and_assignment():
    r = parse_rule("age < 16 -> marital == 'SINGLE'")
    assert r.target == "marital" and r.assigns and r.value == "SINGLE"
    data = {"age": np.array([10.0, 10.0, 40.0]), "marital": np.array(["SINGLE", "MARRIED", "MARRIED"], dtype=object)}
    assert r.holds(data, 3).tolist() == [True, False, True]
    g = parse_rule("age < 16 -> income <= 100")
    assert not g.assigns and g.target == "income"
    with pytest.raises(InputError, match="condition -> consequent"):
        parse_rule("age < 16")


def test_numbers_on_text_refused():
    with pytest.raises(InputError, match="text"):
        ev("s + 1", s=np.array(["a", "b"], dtype=object))
    assert math.isnan(ev("x / 0 - x / 0", x=[1.0])[0])
