"""Parameter declarations: a value passes exactly when it obeys the declared rule, and the
error states the same rule as the documentation (``Param.rule``)."""

import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdckit import ParameterError
from sdckit.params import Param, check_value

TEMPLATE = re.compile(r"^The 'x' parameter of Owner must be (?P<rule>.+)\. Got .+\.$", re.S)


def _reject(p, value):
    with pytest.raises(ParameterError) as exc:
        check_value("Owner", p, value)
    m = TEMPLATE.match(str(exc.value))
    assert m, str(exc.value)
    assert exc.value.rule == p.rule() == m.group("rule")  # the documented rule is the error's rule


@given(low=st.one_of(st.none(), st.integers(-5, 5)), span=st.integers(0, 10),
       has_high=st.booleans(), value=st.integers(-20, 20))
def test_int_passes_exactly_within_its_bounds(low, span, has_high, value):
    high = (low if low is not None else 0) + span if has_high else None
    p = Param("x", "int", 0, low=low, high=high)
    inside = (low is None or value >= low) and (high is None or value <= high)
    if inside:
        assert check_value("Owner", p, value) == value
    else:
        _reject(p, value)


@given(low=st.floats(-5, 5), span=st.floats(0.001, 10), low_open=st.booleans(),
       high_open=st.booleans(), value=st.floats(-20, 20))
def test_float_passes_exactly_within_its_interval(low, span, low_open, high_open, value):
    high = low + span
    p = Param("x", "float", 1.0, low=low, high=high, low_open=low_open, high_open=high_open)
    inside = (value > low if low_open else value >= low) and (value < high if high_open else value <= high)
    if inside:
        assert check_value("Owner", p, value) == value
    else:
        _reject(p, value)


@given(st.sampled_from([math.nan, math.inf, -math.inf, "1", True, None]))
def test_float_refuses_non_numbers(value):
    _reject(Param("x", "float", 1.0, low=0.0), value)


@given(st.text(min_size=1, max_size=8))
def test_choice_accepts_only_its_options(value):
    p = Param("x", "choice", "a", choices=("a", "b"))
    if value in ("a", "b"):
        assert check_value("Owner", p, value) == value
    else:
        _reject(p, value)


def test_callable_choices_are_read_when_checked():
    options = ["a"]
    p = Param("x", "choice", "a", choices=lambda: tuple(options))
    _reject(p, "b")
    options.append("b")  # a registry extended later
    assert check_value("Owner", p, "b") == "b" and p.to_dict()["choices"] == ["a", "b"]


def test_columns_empty_list_only_when_declared_or_default_empty():
    assert check_value("Owner", Param("x", "columns", ()), []) == ()
    assert check_value("Owner", Param("x", "columns", None, nullable=True, allow_empty=True), []) == ()
    _reject(Param("x", "columns", None, nullable=True), [])
    assert check_value("Owner", Param("x", "columns", None, nullable=True), "a") == ("a",)


def test_float_list_takes_infinite_breaks_but_not_nan():
    p = Param("x", "float_list", None, nullable=True)
    assert check_value("Owner", p, [-math.inf, 0, math.inf]) == (-math.inf, 0, math.inf)
    _reject(p, [0, math.nan])


def test_columns_refuse_repeated_names_with_the_declared_rule():
    _reject(Param("x", "columns", ()), ["a", "a"])
