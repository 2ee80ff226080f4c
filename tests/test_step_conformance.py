"""Conformance of every registered release step (in the spirit of scikit-learn's
``check_estimator``): each step is built from its declared defaults (plus the required values
of the table below), run twice with the same seed on a small Microdata, and checked for
determinism, the record count, its own guarantees, a JSON-ready ``to_dict()``, and the one
parameter-error template for every out-of-range or mistyped value of a declared parameter.

A step registered later is picked up automatically; if it has required parameters the
``REQUIRED`` table must give them (the first test fails until it does).
"""

from __future__ import annotations

import json
import math
import re
from importlib import resources

import numpy as np
import pandas as pd
import pytest

from sdckit import Microdata, ParameterError, SpecError
from sdckit._spec_docs import package_steps
from sdckit.params import check_value, is_declared, step_params
from sdckit.registry import build_step, step_class

#: values for required parameters (and settings that keep a step small and fast here)
REQUIRED = {
    "neighbours": {"eps": 0.5, "variables": ["age", "sex", "income", "hours"]},
    # p = 0.9 of the masking's IL'1 is reached well within 100 000 steps on these data, so the
    # step's own band guarantee can be asked to hold (it fails honestly when a limit stops it)
    "postmask": {"masking": {"method": "rank_swap", "p": 10}, "p": 0.9, "max_steps": 100_000},
    "pram": {"variables": ["marital"]},
    "recode": {"variable": "age", "mapping": {"1-3": [1, 2, 3], "4-8": [4, 5, 6, 7, 8]}},
    "record_swap": {"hierarchy": ["region", "district"], "risk_variables": ["age", "marital"]},
    "remove": {"variables": ["person_id"]},
    "generalise": {"qis": ["age"],
                   "hierarchy_files": {"age": str(resources.files("sdckit") / "data" / "hierarchy_age.csv")}},
}

STEPS = package_steps()  # every step sdckit registers (not steps other tests register)


@pytest.fixture(scope="module")
def microdata() -> Microdata:
    """The first 2000 records of the bundled census teaching sample, plus three correlated
    synthetic numeric variables (fixed seed) for the continuous methods and a district nested
    in each region for record swapping."""
    raw = pd.read_csv(resources.files("sdckit") / "data" / "uk_census2011_teaching_10k.csv", nrows=2000)
    rng = np.random.default_rng(20261123)
    n = len(raw)
    z = rng.multivariate_normal([0, 0, 0], [[1, .6, .3], [.6, 1, .2], [.3, .2, 1]], n)
    df = pd.DataFrame({"person_id": raw["Person ID"], "region": raw["Region"],
                       "district": raw["Region"] + "-" + rng.integers(0, 3, n).astype(str),
                       "sex": raw["Sex"], "age": raw["Age"], "marital": raw["Marital Status"],
                       "health": raw["Health"],
                       "income": np.exp(10 + 0.5 * z[:, 0]).round(2),
                       "hours": (37 + 8 * z[:, 1]).round(1),
                       "savings": (5000 + 3000 * z[:, 2]).round(0)})
    return Microdata(df, key_vars=["region", "sex", "age", "marital"],
                     numeric_vars=["income", "hours", "savings"])


def _bad_values(p) -> list:
    """Values that break a declared rule: outside the range, not a choice, the wrong type."""
    bad: list = []
    if p.kind == "int":
        bad.append(2.5)
        if p.low is not None:
            bad.append(math.ceil(p.low) - 1)
        if p.high is not None:
            bad.append(math.floor(p.high) + 1)
    elif p.kind == "float":
        bad.append("x")
        if p.low is not None:
            bad.append(p.low if p.low_open else p.low - 1.0)
        if p.high is not None:
            bad.append(p.high if p.high_open else p.high + 1.0)
    elif p.kind in ("int_list", "float_list"):
        bad.append("x")
        if p.low is not None:
            bad.append([p.low - 1])
        if p.high is not None:
            bad.append([p.high + 1])
    elif p.kind == "choice":
        bad.append("no-such-choice")
    elif p.kind == "bool":
        bad.append("yes")
    elif p.kind in ("column", "path", "str"):
        bad.append(3)
    elif p.kind in ("columns", "str_list"):
        bad.append([1, 2])
    elif p.kind == "mapping":
        bad.append([1, 2])
    return bad


def _settings(name: str) -> dict:
    return dict(REQUIRED.get(name, {}))


@pytest.mark.parametrize("name", STEPS)
def test_declaration(name):
    cls = step_class(name)
    assert is_declared(cls), f"{cls.__name__}: every parameter must be declared with param(...)"
    for p in step_params(cls):
        assert p.help, f"{cls.__name__}.{p.name} has no help text"
        # a spec's [[steps]] table uses `method` for the step's name: a parameter of that name
        # could never be set from a spec
        assert p.name != "method", f"{cls.__name__}: rename the 'method' parameter"
        if p.required:
            assert p.name in REQUIRED.get(name, {}), f"add {name}.{p.name} to REQUIRED"
        else:
            check_value(cls.__name__, p, p.default)  # the default obeys its own rule
        for v in p.grid or ():
            check_value(cls.__name__, p, v)  # every explore grid value is valid


@pytest.mark.parametrize("name", STEPS)
def test_runs_deterministically_and_keeps_its_promises(name, microdata):
    step = build_step(name, _settings(name))
    r1 = step.apply(microdata, rng=7)
    r2 = build_step(name, _settings(name)).apply(microdata, rng=7)
    # same rng -> same output
    pd.testing.assert_frame_equal(r1.microdata.frame, r2.microdata.frame)
    assert json.dumps(r1.to_dict()["params"]) == json.dumps(r2.to_dict()["params"])
    # row count kept (steps mask values; none drops or adds records)
    assert r1.microdata.n_records == microdata.n_records
    # the step's own guarantees, checked on its output, all hold
    assert r1.guarantees, f"{name} states no guarantee"
    failed = [(g.name, g.value) for g in r1.guarantees if not g.holds]
    assert not failed, f"{name}: guarantees fail: {failed}"
    # to_dict() is plain JSON
    text = json.dumps(r1.to_dict(), allow_nan=False)
    assert json.loads(text)["method"] == name


@pytest.mark.parametrize("name", STEPS)
def test_every_broken_rule_uses_the_one_message_template(name):
    cls = step_class(name)
    tried = 0
    for p in step_params(cls):
        for value in _bad_values(p):
            settings = {**_settings(name), p.name: value}
            template = re.compile(rf"^The {re.escape(repr(p.name))} parameter of {cls.__name__} "
                                  rf"must be .+\. Got .+\.$", re.S)
            with pytest.raises(ParameterError) as exc:
                cls(**settings)
            assert template.match(str(exc.value)), str(exc.value)
            assert exc.value.param == p.name
            # the spec reader restates the same rule at the key path
            with pytest.raises(SpecError, match=rf"^steps\[0\]\.{p.name}: must be "):
                build_step(name, settings, where="steps[0]")
            tried += 1
    numeric = [p for p in step_params(cls) if p.kind in ("int", "float")]
    assert tried >= len(numeric)


@pytest.mark.parametrize("name", STEPS)
def test_a_missing_required_parameter_is_named_at_its_key_path(name):
    for p in step_params(step_class(name)):
        if p.required:
            settings = {k: v for k, v in _settings(name).items() if k != p.name}
            with pytest.raises(SpecError, match=rf"^steps\[0\]\.{p.name}: step '{name}' needs this parameter"):
                build_step(name, settings, where="steps[0]")


# ------------------------------------------------------------------ gate checks
# every registered gate threshold, the same way: a declared frozen typed object whose every
# broken rule uses the one template (restated at the spec's key path), and whose check runs on
# data holding the roles it declares

from sdckit.registry import GateOutcome, build_gate_check, gate_check_class, known_gate_checks  # noqa: E402

#: settings a gate check needs beyond its threshold (files the attack checks read)
GATE_REQUIRED = {name: {"control_file": "control.csv"}
                 for name in ("max_singling_out", "max_linkability", "max_inference", "max_mia_auc")}
GATES = [n for n in known_gate_checks() if gate_check_class(n).__module__.startswith("sdckit.")]


def _valid(p):
    """A value that obeys a declared rule."""
    if p.kind == "int":
        return int(math.ceil(p.low)) if p.low is not None else 1
    if p.kind == "float":
        lo = p.low if p.low is not None else 0.0
        hi = p.high if p.high is not None else lo + 2.0
        return (lo + hi) / 2
    if p.kind == "columns":
        return ()
    return p.default


def _gate_settings(name: str) -> dict:
    cls = gate_check_class(name)
    first = step_params(cls)[0]
    return {first.name: _valid(first), **GATE_REQUIRED.get(name, {})}


@pytest.mark.parametrize("name", GATES)
def test_gate_declaration(name):
    cls = gate_check_class(name)
    assert is_declared(cls) and cls.__dataclass_params__.frozen, name
    assert step_params(cls)[0].label, f"{cls.__name__}: declare the threshold's label"
    for p in step_params(cls):
        assert p.help, f"{cls.__name__}.{p.name}: declare its help"
        if not p.required:
            check_value(cls.__name__, p, p.default)
    check = cls(**_gate_settings(name))
    assert build_gate_check(name, check.to_value()) == check  # the spec form round-trips


@pytest.mark.parametrize("name", GATES)
def test_every_broken_gate_rule_uses_the_one_message_template(name):
    cls = gate_check_class(name)
    tried = 0
    for p in step_params(cls):
        for value in _bad_values(p) + ([None] if p.required else []):
            settings = {**_gate_settings(name), p.name: value}
            with pytest.raises(ParameterError) as exc:
                cls(**settings)
            assert re.match(rf"^The {re.escape(repr(p.name))} parameter of {cls.__name__} must be .+\. Got .+\.$",
                            str(exc.value), re.S), str(exc.value)
            with pytest.raises(SpecError, match=rf"^gate\.{name}\.{p.name}: must be "):
                build_gate_check(name, settings, where="gate")
            tried += 1
    assert tried >= 1


@pytest.mark.parametrize("name", [n for n in GATES if n not in GATE_REQUIRED])
def test_gate_check_runs_on_data_with_its_roles(name, microdata):
    frame = microdata.frame.head(500).assign(weight=40.0)
    md = Microdata(frame, key_vars=["region", "sex", "age"], numeric_vars=["income", "hours"],
                   weight="weight", sensitive=["health"])
    check = build_gate_check(name, _gate_settings(name)[step_params(gate_check_class(name))[0].name])
    out = check.check(md, md, ())
    assert isinstance(out, GateOutcome) and out.name == name and isinstance(out.passed, bool)
    assert out.detail and "\n" not in out.detail
    json.dumps(out.to_dict(), allow_nan=False)
