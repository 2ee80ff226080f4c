"""A ``mapping`` parameter whose values have a declared kind (``value_kind``, ``value_choices``):
the table passes exactly when every key is a column name and every value obeys the value's
own declaration, the error states the declared rule, and the schema the forms read carries it."""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdckit import ParameterError
from sdckit.params import Param, check_value, param

TEMPLATE = re.compile(r"^The 'x' parameter of Owner must be (?P<rule>.+)\. Got .+\.$", re.S)
CHOICES = ("cart", "sample", "norm")


def _choice_table() -> Param:
    return Param(name="x", kind="mapping", value_kind="choice", value_choices=CHOICES)


def _reject(p, value):
    with pytest.raises(ParameterError) as exc:
        check_value("Owner", p, value)
    m = TEMPLATE.match(str(exc.value))
    assert m, str(exc.value)
    assert exc.value.rule == p.rule() == m.group("rule")


@given(st.dictionaries(st.text(min_size=1, max_size=5), st.text(max_size=8), max_size=4))
def test_a_choice_table_passes_exactly_when_every_value_is_a_choice(table):
    p = _choice_table()
    if all(v in CHOICES for v in table.values()):
        assert check_value("Owner", p, table) == table  # kept as given
    else:
        _reject(p, table)


@given(st.dictionaries(st.text(min_size=1, max_size=5),
                       st.one_of(st.floats(allow_nan=True), st.lists(st.floats(allow_nan=True), max_size=3),
                                 st.text(max_size=3)), max_size=4))
def test_a_number_list_table_takes_lists_or_one_number_never_nan_or_text(table):
    p = Param(name="x", kind="mapping", value_kind="float_list")

    def ok(v):
        items = v if isinstance(v, list) else [v]
        return not isinstance(v, str) and all(x == x for x in items)  # NaN is the only float != itself

    if all(ok(v) for v in table.values()):
        assert check_value("Owner", p, table) == table
    else:
        _reject(p, table)


def test_an_empty_key_or_an_empty_formula_is_refused_with_the_rule():
    p = Param(name="x", kind="mapping", value_kind="str")
    assert p.rule() == "a table of column -> a string"
    _reject(p, {"": "a + b"})
    _reject(p, {"bmi": ""})
    _reject(p, ["bmi"])


def test_the_schema_carries_the_value_kind_and_its_choices():
    d = _choice_table().to_dict()
    assert d["value_kind"] == "choice" and d["value_choices"] == list(CHOICES)
    assert "value_kind" not in Param(name="x", kind="mapping").to_dict()  # an untyped table as before


def test_a_value_kind_is_declared_only_on_a_mapping_and_choices_only_with_choice():
    with pytest.raises(ValueError):
        param({}, kind="str", help="h", value_kind="str")
    with pytest.raises(ValueError):
        param({}, kind="mapping", help="h", value_kind="choice")
    with pytest.raises(ValueError):
        param({}, kind="mapping", help="h", value_kind="str", value_choices=("a",))
    with pytest.raises(ValueError):
        param({}, kind="mapping", help="h", value_kind="mapping")


def test_synthesise_declares_its_tables_values():
    from sdckit.params import step_params
    from sdckit.synth.steps import STEP_METHODS, Synthesise

    ps = {p.name: p for p in step_params(Synthesise)}
    assert ps["methods"].value_kind == "choice" and ps["methods"].value_param().options() == tuple(STEP_METHODS)
    assert ps["passive"].value_kind == "str"
    assert ps["missing_codes"].value_kind == "float_list"
    with pytest.raises(ParameterError, match="table of column -> one of 'cart'"):
        Synthesise(methods={"income": "forest"})
