"""The conformance suite of release steps and gate checks, public so a third-party method can run it.

In the spirit of scikit-learn's ``check_estimator`` / ``parametrize_with_checks``
(``sklearn/utils/estimator_checks.py``): every registered step and gate check is held to the
same promises, and a step another package registers proves it keeps them with one call::

    from sdckit.testing import check_step, parametrize_with_checks

    check_step(MyStep)                       # runs every check, raises AssertionError on a failure

    @parametrize_with_checks([MyStep, MyGateCheck])
    def test_conformance(obj, check):        # one pytest case per (class, check)
        check(obj)

The checks of a step: every parameter declared with :func:`~sdckit.params.param` (help text,
valid defaults and grids); every broken rule uses the one parameter-error template and the
spec reader restates it at the key path; a missing required parameter is named at its key
path; the same ``rng`` gives the same output; ``rng=None`` draws OS entropy and records it;
the step's own guarantees hold on a small built-in dataset, its record count is kept and
``to_dict()`` is plain JSON; ``eval(repr(step))`` rebuilds an equal step; the engines it
claims are honoured (for Dask: ``dask_plan(roles)`` returns a :class:`~sdckit.registry.DaskPlan`).
The checks of a gate check: declared, frozen and labelled; its spec form round-trips; every
broken rule uses the template; it runs on data holding its roles and returns a one-line
:class:`~sdckit.registry.GateOutcome`; the engines it claims are honoured (for Dask: a
``dask_summary`` and its own ``finish``).

A step with required parameters gives example values as a class attribute
``example_params = {...}`` (sdckit's own steps have theirs in :data:`EXAMPLE_PARAMS`).
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache
from typing import Any

__all__ = ["EXAMPLE_PARAMS", "GATE_EXAMPLE_PARAMS", "bad_values", "check_gate_check", "check_step",
           "example_microdata", "example_params", "gate_checks", "parametrize_with_checks", "step_checks"]

#: example values of sdckit's own steps' required parameters (and settings that keep a step
#: small and fast on :func:`example_microdata`)
EXAMPLE_PARAMS: dict[str, dict] = {
    "neighbours": {"neighbourhood": {"type": "radius", "eps": 0.5},
                   "variables": ["age", "sex", "income", "hours"]},
    # p = 0.9 of the masking's IL'1 is reached well within 100 000 steps on these data, so the
    # step's own band guarantee can be asked to hold (it fails honestly when a limit stops it)
    "postmask": {"masking": {"method": "rank_swap", "p": 10}, "p": 0.9, "max_steps": 100_000},
    "pram": {"variables": ["marital"]},
    "recode": {"variable": "age", "mapping": {"1-3": [1, 2, 3], "4-8": [4, 5, 6, 7, 8]}},
    "record_swap": {"hierarchy": ["region", "district"], "risk_variables": ["age", "marital"]},
    "remove": {"variables": ["person_id"]},
    "generalise": {"qis": ["age"], "hierarchy_files": {"age": "<bundled>/hierarchy_age.csv"}},
}

#: settings a gate check needs beyond its threshold (files the attack checks read)
GATE_EXAMPLE_PARAMS: dict[str, dict] = {
    name: {"control_file": "control.csv"}
    for name in ("max_singling_out", "max_linkability", "max_inference", "max_mia_auc")}


# --------------------------------------------------------------------------- data and settings
@lru_cache(maxsize=1)
def example_microdata() -> Any:
    """The first 2000 records of the bundled census teaching sample, plus three correlated
    synthetic numeric variables (fixed seed 20261123) for the continuous methods and a
    district nested in each region for record swapping."""
    from importlib import resources

    import numpy as np
    import pandas as pd

    from .microdata import Microdata

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


def _bundled(value: Any) -> Any:
    from importlib import resources

    if isinstance(value, str) and value.startswith("<bundled>/"):
        return str(resources.files("sdckit") / "data" / value.split("/", 1)[1])
    if isinstance(value, dict):
        return {k: _bundled(v) for k, v in value.items()}
    return value


def example_params(cls: type) -> dict:
    """Settings that build a step of ``cls`` for the checks: its ``example_params`` class
    attribute, else sdckit's own table :data:`EXAMPLE_PARAMS` (empty when every parameter
    has a default)."""
    own = getattr(cls, "example_params", None)
    if own is None:
        own = EXAMPLE_PARAMS.get(getattr(cls, "step_name", ""), {})
    return _bundled(dict(own))


def bad_values(p: Any) -> list:
    """Values that break a declared rule of parameter ``p``: outside the range, not a
    choice, the wrong type (scikit-learn's ``generate_invalid_param_val``)."""
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
    elif p.kind == "variant":
        bad += ["no-such-type", {"type": "no-such-type"}]
    return bad


def _build(cls: type, settings: dict) -> Any:
    from .registry import build_step

    name = getattr(cls, "step_name", None)
    return build_step(name, settings) if name is not None else cls(**settings)


def _same_frames(a: Any, b: Any) -> None:
    import pandas as pd

    pd.testing.assert_frame_equal(a, b)


# --------------------------------------------------------------------------- step checks
def check_declaration(cls: type, microdata: Any = None) -> None:
    """Every parameter is declared with ``param()`` and has help text; none is called
    ``method``; a required one has an example value; defaults and explore grids obey their
    own rules."""
    from .params import check_value, is_declared, step_params

    assert is_declared(cls), f"{cls.__name__}: every parameter must be declared with param(...)"
    examples = example_params(cls)
    for p in step_params(cls):
        assert p.help, f"{cls.__name__}.{p.name} has no help text"
        # a spec's [[steps]] table uses `method` for the step's name: a parameter of that name
        # could never be set from a spec
        assert p.name != "method", f"{cls.__name__}: rename the 'method' parameter"
        if p.required:
            assert p.name in examples, f"give {cls.__name__}.{p.name} an example value (example_params)"
        else:
            check_value(cls.__name__, p, p.default)  # the default obeys its own rule
        for v in p.grid or ():
            check_value(cls.__name__, p, v)  # every explore grid value is valid
        for t in p.variants:  # each type a variant parameter takes is declared the same way
            assert is_declared(t), f"{t.__name__}: every parameter must be declared with param(...)"
            for q in step_params(t):
                assert q.help, f"{t.__name__}.{q.name} has no help text"
                if not q.required:
                    check_value(t.__name__, q, q.default)


def check_invalid_values_use_the_template(cls: type, microdata: Any = None) -> None:
    """Every broken rule of every declared parameter raises ParameterError with the one
    template ("The 'k' parameter of X must be .... Got ....") and the spec reader restates the
    rule at the key path (``steps[0].k: must be ...``)."""
    from .errors import ParameterError, SpecError
    from .params import step_params
    from .registry import build_step

    name = cls.step_name
    tried = 0
    for p in step_params(cls):
        for value in bad_values(p):
            settings = {**example_params(cls), p.name: value}
            template = re.compile(rf"^The {re.escape(repr(p.name))} parameter of {cls.__name__} "
                                  rf"must be .+\. Got .+\.$", re.S)
            try:
                cls(**settings)
            except ParameterError as exc:
                assert template.match(str(exc)), str(exc)
                assert exc.param == p.name, (exc.param, p.name)
            else:
                raise AssertionError(f"{cls.__name__}({p.name}={value!r}) did not raise ParameterError")
            # the spec reader restates the same rule at the key path
            try:
                build_step(name, settings, where="steps[0]")
            except SpecError as exc:
                assert re.match(rf"^steps\[0\]\.{p.name}: must be ", str(exc)), str(exc)
            else:
                raise AssertionError(f"build_step({name!r}, {p.name}={value!r}) did not raise SpecError")
            tried += 1
    numeric = [p for p in step_params(cls) if p.kind in ("int", "float")]
    assert tried >= len(numeric)


def check_missing_required_is_named(cls: type, microdata: Any = None) -> None:
    """A required parameter left out of a spec table is named at its key path."""
    from .errors import SpecError
    from .params import step_params
    from .registry import build_step

    name = cls.step_name
    for p in step_params(cls):
        if p.required:
            settings = {k: v for k, v in example_params(cls).items() if k != p.name}
            try:
                build_step(name, settings, where="steps[0]")
            except SpecError as exc:
                assert re.match(rf"^steps\[0\]\.{p.name}: step '{name}' needs this parameter", str(exc)), str(exc)
            else:
                raise AssertionError(f"{name} built without its required {p.name!r}")


def check_same_rng_same_output(cls: type, microdata: Any = None) -> None:
    """Two steps built alike and run with the same ``rng`` give the same data and the same
    public parameters; the record count is kept; ``to_dict()`` is plain JSON."""
    md = example_microdata() if microdata is None else microdata
    r1 = _build(cls, example_params(cls)).apply(md, rng=7)
    r2 = _build(cls, example_params(cls)).apply(md, rng=7)
    # same rng -> same output
    _same_frames(r1.microdata.frame, r2.microdata.frame)
    assert json.dumps(r1.to_dict()["params"]) == json.dumps(r2.to_dict()["params"])
    # row count kept (steps mask values; none drops or adds records)
    assert r1.microdata.n_records == md.n_records
    # to_dict() is plain JSON
    text = json.dumps(r1.to_dict(), allow_nan=False)
    assert json.loads(text)["method"] == cls.step_name


def check_guarantees_hold(cls: type, microdata: Any = None) -> None:
    """The step states at least one guarantee, and every one holds on its output."""
    md = example_microdata() if microdata is None else microdata
    r = _build(cls, example_params(cls)).apply(md, rng=7)
    assert r.guarantees, f"{cls.step_name} states no guarantee"
    failed = [(g.name, g.value) for g in r.guarantees if not g.holds]
    assert not failed, f"{cls.step_name}: guarantees fail: {failed}"


def check_rng_none_records_os_entropy(cls: type, microdata: Any = None) -> None:
    """With ``rng=None`` a step that draws at random takes OS entropy and records it (a
    :class:`~sdckit._random.SeedRecord` with source ``"os"``); a step that records no seed
    must draw nothing (two runs give the same data)."""
    md = example_microdata() if microdata is None else microdata
    step = _build(cls, example_params(cls))
    r1 = step.apply(md, rng=None)
    if r1.seed is None:
        r2 = step.apply(md, rng=None)
        _same_frames(r1.microdata.frame, r2.microdata.frame)  # no seed recorded: nothing random
        return
    assert r1.seed.source == "os", f"{cls.step_name}: rng=None recorded source {r1.seed.source!r}, not 'os'"
    assert isinstance(r1.seed.entropy, int) and r1.seed.entropy > 0, r1.seed
    r2 = step.apply(md, rng=None)
    assert r2.seed is not None and r2.seed.entropy != r1.seed.entropy, "rng=None drew the same entropy twice"


def _repr_namespace(obj: Any) -> dict:
    """The classes ``repr(obj)`` names: its own and those of its (nested) dataclass values."""
    space: dict[str, Any] = {}

    def add(value: Any) -> None:
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            space[type(value).__name__] = type(value)
            for f in dataclasses.fields(value):
                add(getattr(value, f.name))
        elif isinstance(value, (list, tuple)):
            for v in value:
                add(v)
        elif isinstance(value, dict):
            for v in value.values():
                add(v)

    add(obj)
    return space


def check_repr_round_trips(cls: type, microdata: Any = None) -> None:
    """``eval(repr(step))`` rebuilds an equal step (its repr shows every setting)."""
    step = _build(cls, example_params(cls))
    again = eval(repr(step), {"__builtins__": {}, "inf": math.inf}, _repr_namespace(step))  # noqa: S307
    assert again == step, f"{repr(step)} does not rebuild an equal step"


def check_engines_honoured(cls: type, microdata: Any = None) -> None:
    """Every step runs in memory; a step claiming the Dask engine provides its partitioned
    plan: ``dask_plan(roles)`` returns a :class:`~sdckit.registry.DaskPlan` naming a kernel."""
    from .registry import DaskPlan

    engines = tuple(getattr(cls, "engines", ("memory",)))
    assert "memory" in engines, f"{cls.__name__}: every step runs in memory"
    if "dask" in engines:
        assert callable(getattr(cls, "dask_plan", None)), f"{cls.__name__} claims dask but has no dask_plan"
        md = example_microdata() if microdata is None else microdata
        plan = _build(cls, example_params(cls)).dask_plan(md.roles)
        assert isinstance(plan, DaskPlan) and isinstance(plan.kernel, str) and plan.kernel, plan


def step_checks(cls: type) -> Iterator[Callable[..., None]]:
    """The checks of a step class, in order."""
    yield check_declaration
    yield check_invalid_values_use_the_template
    yield check_missing_required_is_named
    yield check_same_rng_same_output
    yield check_guarantees_hold
    yield check_rng_none_records_os_entropy
    yield check_repr_round_trips
    yield check_engines_honoured


# --------------------------------------------------------------------------- gate checks
def _valid(p: Any) -> Any:
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


def _gate_settings(cls: type) -> dict:
    from .params import step_params

    first = step_params(cls)[0]
    return {first.name: _valid(first), **GATE_EXAMPLE_PARAMS.get(cls.gate_name, {}),
            **dict(getattr(cls, "example_params", None) or {})}


def check_gate_declaration(cls: type, microdata: Any = None) -> None:
    """Declared, frozen, its threshold labelled, every parameter with help text and a valid
    default; the spec form round-trips."""
    from .params import check_value, is_declared, step_params
    from .registry import build_gate_check

    name = cls.gate_name
    assert is_declared(cls) and cls.__dataclass_params__.frozen, name
    assert step_params(cls)[0].label, f"{cls.__name__}: declare the threshold's label"
    for p in step_params(cls):
        assert p.help, f"{cls.__name__}.{p.name}: declare its help"
        if not p.required:
            check_value(cls.__name__, p, p.default)
    check = cls(**_gate_settings(cls))
    assert build_gate_check(name, check.to_value()) == check  # the spec form round-trips


def check_gate_invalid_values_use_the_template(cls: type, microdata: Any = None) -> None:
    """Every broken rule raises the one template, restated at ``gate.<name>.<param>``."""
    from .errors import ParameterError, SpecError
    from .params import step_params
    from .registry import build_gate_check

    name = cls.gate_name
    tried = 0
    for p in step_params(cls):
        for value in bad_values(p) + ([None] if p.required else []):
            settings = {**_gate_settings(cls), p.name: value}
            try:
                cls(**settings)
            except ParameterError as exc:
                assert re.match(rf"^The {re.escape(repr(p.name))} parameter of {cls.__name__} must be .+\. Got .+\.$",
                                str(exc), re.S), str(exc)
            else:
                raise AssertionError(f"{cls.__name__}({p.name}={value!r}) did not raise ParameterError")
            try:
                build_gate_check(name, settings, where="gate")
            except SpecError as exc:
                assert re.match(rf"^gate\.{name}\.{p.name}: must be ", str(exc)), str(exc)
            else:
                raise AssertionError(f"gate {name} with {p.name}={value!r} did not raise SpecError")
            tried += 1
    assert tried >= 1


def check_gate_runs_on_data_with_its_roles(cls: type, microdata: Any = None) -> None:
    """The check runs on data holding the roles it declares and returns a one-line,
    JSON-ready :class:`~sdckit.registry.GateOutcome` under its own name (checks that read
    files, such as a control sample, are skipped here)."""
    from .microdata import Microdata
    from .params import step_params
    from .registry import GateOutcome, build_gate_check

    name = cls.gate_name
    if name in GATE_EXAMPLE_PARAMS:
        return  # reads a control file the example data do not have
    base = example_microdata() if microdata is None else microdata
    frame = base.frame.head(500).assign(weight=40.0)
    md = Microdata(frame, key_vars=["region", "sex", "age"], numeric_vars=["income", "hours"],
                   weight="weight", sensitive=["health"])
    check = build_gate_check(name, _gate_settings(cls)[step_params(cls)[0].name])
    out = check.check(md, md, ())
    assert isinstance(out, GateOutcome) and out.name == name and isinstance(out.passed, bool)
    assert out.detail and "\n" not in out.detail
    json.dumps(out.to_dict(), allow_nan=False)


def check_gate_engines_honoured(cls: type, microdata: Any = None) -> None:
    """A gate check claiming the Dask engine names the summary it reads (``dask_summary``)
    and has its own ``finish`` (the partitioned form of ``check``)."""
    from .registry import GateCheck

    if "dask" in tuple(cls.engines):
        assert isinstance(getattr(cls, "dask_summary", None), str), f"{cls.__name__} claims dask: dask_summary"
        assert cls.finish is not GateCheck.finish, f"{cls.__name__} claims dask but has no finish()"


def gate_checks(cls: type) -> Iterator[Callable[..., None]]:
    """The checks of a gate check class, in order."""
    yield check_gate_declaration
    yield check_gate_invalid_values_use_the_template
    yield check_gate_runs_on_data_with_its_roles
    yield check_gate_engines_honoured


# --------------------------------------------------------------------------- runners
def _checks_of(cls: type) -> Iterator[Callable[..., None]]:
    from .registry import GateCheck

    if isinstance(cls, type) and issubclass(cls, GateCheck):
        return gate_checks(cls)
    if hasattr(cls, "step_name"):
        return step_checks(cls)
    raise TypeError(f"{cls!r} is neither a registered step class nor a gate check class")


def _as_class(obj: Any) -> type:
    return obj if isinstance(obj, type) else type(obj)


def check_step(step_or_class: Any, microdata: Any = None) -> None:
    """Run every step check on a registered step class (or an instance's class); the first
    failure raises AssertionError. ``microdata`` replaces :func:`example_microdata`."""
    cls = _as_class(step_or_class)
    for check in step_checks(cls):
        check(cls, microdata)


def check_gate_check(check_or_class: Any, microdata: Any = None) -> None:
    """Run every gate-check check on a registered gate check class (or an instance's class)."""
    cls = _as_class(check_or_class)
    for check in gate_checks(cls):
        check(cls, microdata)


def _case_id(cls: type, check: Callable) -> str:
    name = getattr(cls, "step_name", None) or getattr(cls, "gate_name", None) or cls.__name__
    return f"{name}-{check.__name__}"


def parametrize_with_checks(classes: Iterable[Any]) -> Any:
    """A ``pytest.mark.parametrize("obj, check", ...)`` over every check of every class (step
    or gate check); the test calls ``check(obj)``. Ids read ``"<name>-<check>"``."""
    import pytest

    cases = [(c, chk) for c in map(_as_class, classes) for chk in _checks_of(c)]
    return pytest.mark.parametrize("obj, check", cases, ids=[_case_id(c, k) for c, k in cases])
