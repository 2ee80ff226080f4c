"""Every fresh release passes its own verify.

Hypothesis draws random sequences of registered steps (repeats allowed, in any order) with
parameters drawn from each step's declaration (:func:`sdckit.params.step_params`), and a gate
of risk thresholds (or a stated ``none``), on a small census-like frame. The property: the
release either refuses with one one-line :class:`~sdckit.errors.SDCError` (a bad plan, a step
that cannot apply, a failed gate), or it is written and
:func:`sdckit.report.verify.verify_release` passes on the folder it wrote.

The default run tries a bounded number of examples; ``pytest -m slow`` runs many more.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from sdckit import Microdata
from sdckit.errors import SDCError
from sdckit.params import step_params
from sdckit.registry import build_step, discover, known_steps, step_class
from sdckit.release import Release
from sdckit.report.verify import verify_release

pytestmark = pytest.mark.filterwarnings("ignore::sdckit.errors.InputWarning")

FAST = settings(max_examples=12, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))
SLOW = settings(FAST, max_examples=300)

KEYS = ["region", "sex", "age", "marital", "country"]
NUMERIC = ["income", "hours"]
#: steps that need files the draw cannot make (hierarchies) or a budget a test cannot give
SKIP = {"generalise"}
#: budgets kept small so one example stays fast (speed settings, not behaviour)
BUDGET = {"generations": 3, "population": 4, "max_nodes": 20, "time_limit": 2.0, "max_steps": 200,
          "max_restore_checks": 5, "block": 50, "probe": 4, "max_probe": 8, "chunk_size": 64,
          "workers": 1}


def census_frame(n: int, seed: int) -> pd.DataFrame:
    """A census-like frame: five categorical keys (integer codes and text), two numeric
    variables, a weight; a few missing key values."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "region": rng.choice(["north", "south", "east", "west", "centre"], n, p=[.3, .25, .2, .15, .1]),
        "sex": rng.integers(1, 3, n),
        "age": rng.choice(np.arange(1, 9), n),
        "marital": rng.choice(np.arange(1, 6), n, p=[.4, .35, .1, .1, .05]),
        "country": rng.choice(["uk", "eu", "other"], n, p=[.8, .15, .05]),
        "income": (rng.lognormal(10, 0.5, n) / 1000).round(0) * 1000,
        "hours": rng.normal(37, 6, n).round(0),
        "weight": rng.choice([50.0, 80.0, 100.0, 120.0, 150.0], n),
        "note": rng.choice(["a", "b"], n),  # no role: a column to remove
    })
    df.loc[rng.random(n) < 0.02, "marital"] = np.nan
    return df


def _columns_for(p, draw) -> list[str]:
    if p.role == "key" or p.name in ("qis", "hierarchy", "strata", "risk_variables", "categorical"):
        pool = KEYS
    elif p.name in ("variables",) and p.role is None:
        pool = NUMERIC if draw(st.integers(0, 3)) else KEYS + NUMERIC
    else:
        pool = KEYS + NUMERIC
    return draw(st.lists(st.sampled_from(pool), min_size=1, max_size=2, unique=True))


def _value(draw, p):
    """A value for one declared parameter, drawn from its declaration."""
    if p.name in BUDGET and p.kind in ("int", "float"):
        return BUDGET[p.name]
    if p.kind == "int":
        lo = int(math.ceil(p.low)) if p.low is not None else 0
        hi = int(p.high) if p.high is not None else lo + 5
        return draw(st.integers(lo, min(hi, lo + 5)))
    if p.kind == "float":
        lo = float(p.low) if p.low is not None else 0.0
        hi = float(p.high) if p.high is not None else lo + 5.0
        v = draw(st.floats(lo, hi, allow_nan=False, allow_infinity=False))
        if (p.low_open and v == lo) or (p.high_open and v == hi):
            v = (lo + hi) / 2
        return v
    if p.kind == "bool":
        return draw(st.booleans())
    if p.kind == "choice":
        return draw(st.sampled_from([c for c in p.options() if c != "file"]))
    if p.kind == "columns":
        return _columns_for(p, draw)
    if p.kind == "column":
        return draw(st.sampled_from(KEYS if p.name in ("variable",) else KEYS + NUMERIC))
    if p.kind == "variant":  # one of the declared types (a table), its own settings drawn the same way
        t = draw(st.sampled_from([t for t in p.variants if t.variant_name != "file"]))
        table = {"type": t.variant_name}
        for q in step_params(t):
            if q.required or draw(st.integers(0, 3)) == 0:
                v = _value(draw, q)
                if v is not None:
                    table[q.name] = v
        return table
    return None  # path, mapping, lists, any: the declared default


#: what the declarations cannot say: a recode's mapping, a swap's hierarchy, postmask's masking
REQUIRED = {
    "recode": lambda draw: draw(st.sampled_from([
        {"variable": "age", "mapping": {"young": [1, 2, 3], "middle": [4, 5, 6], "old": [7, 8]}},
        {"variable": "marital", "mapping": {"single": [1], "other": [2, 3, 4, 5]}},
        {"variable": "region", "mapping": {"n/s": ["north", "south"]}, "others": "keep"},
        {"variable": "country", "mapping": {"uk": ["uk"], "abroad": ["eu", "other"]}},
        {"variable": "income", "breaks": [0, 20000, 40000, float("inf")]},
    ])),
    "record_swap": lambda draw: {"hierarchy": ["region"], "risk_variables": ["sex", "age"]},
    "postmask": lambda draw: {"masking": {"method": "noise", "level": 0.1}, "variables": NUMERIC},
    "remove": lambda draw: {"variables": ["note"]},
    "neighbours": lambda draw: {"neighbourhood": {"type": "knn", "k": 3}},
    "pram": lambda draw: {"variables": draw(st.lists(st.sampled_from(KEYS), min_size=1, max_size=2,
                                                     unique=True))},
}


@st.composite
def plans(draw):
    discover()
    names = [n for n in known_steps() if n not in SKIP and step_class(n).__module__.startswith("sdckit.")]
    steps = []
    for _ in range(draw(st.integers(1, 3))):
        name = draw(st.sampled_from(names))
        params = {}
        for p in step_params(step_class(name)):
            if name in REQUIRED and name != "pram":
                break  # its settings come whole from REQUIRED
            if p.required or draw(st.integers(0, 3)) == 0:
                v = _value(draw, p)
                if v is not None:
                    params[p.name] = v
        params.update(REQUIRED.get(name, lambda d: {})(draw))
        if name == "pram" and (params.get("matrix") or {}).get("type") == "optimal":
            params.update(joint=True, matrix={**params["matrix"], "alpha": 0.5, "combinations": 1})
        steps.append((name, params))
    gate = draw(st.one_of(
        st.fixed_dictionaries({"k_anonymity": st.integers(2, 3)}),
        st.fixed_dictionaries({"max_global_risk": st.sampled_from([0.05, 0.2, 1.0])},
                              optional={"min_diagonal": st.sampled_from([0.5, 0.8])}),
        st.fixed_dictionaries({"max_individual_risk": st.sampled_from([0.5, 1.0]),
                               "max_linkage_all_columns": st.sampled_from([0.5, 1.0])}),
        st.just({"none": "a property test of verify"}),
    ))
    return draw(st.integers(150, 300)), draw(st.integers(0, 2**31)), steps, gate


def one_line(exc: BaseException) -> None:
    text = str(exc)
    assert text.strip() and "\n" not in text, f"not one line: {text!r}"


def check_plan(plan) -> None:
    n, seed, steps, gate = plan
    md = Microdata(census_frame(n, seed), key_vars=KEYS, numeric_vars=NUMERIC, weight="weight")
    try:
        built = [build_step(name, params, where=f"steps[{i}]") for i, (name, params) in enumerate(steps)]
        run = Release(md, built, gate, rng=seed).run()
    except SDCError as exc:
        one_line(exc)
        event(f"refused: {type(exc).__name__}")
        return
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "rel"
        try:
            run.write(out)
        except SDCError as exc:  # a failed gate: nothing written
            one_line(exc)
            assert not run.passed and not out.exists()
            event("gate failed")
            return
        res = verify_release(out)
        assert res.ok, f"{[s for s, _ in steps]}: {res.problems}"
        event("written and verified")


@given(plans())
@FAST
def test_every_fresh_release_passes_its_own_verify(plan):
    check_plan(plan)


@pytest.mark.slow
@given(plans())
@SLOW
def test_every_fresh_release_passes_its_own_verify_slow(plan):
    check_plan(plan)
