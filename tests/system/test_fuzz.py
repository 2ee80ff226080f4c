"""Fuzzing: the readers, ``risk`` and release runs (masking, gate and writing) on random input
raise only :class:`sdckit.errors.SDCError` subclasses, or succeed.

The default run tries a bounded number of examples (fast, for CI); the ``slow`` variant runs
10,000 in all (``pytest -m slow tests/system/test_fuzz.py``).
"""

from __future__ import annotations

import csv
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from sdckit.errors import SDCError
from sdckit.io.files import read_data, read_microdata
from sdckit.microdata import Microdata
from sdckit.params import REQUIRED, step_params
from sdckit.registry import build_step, discover, known_steps, step_class
from sdckit.release import Release
from sdckit.risk.report import measure_risk

pytestmark = pytest.mark.filterwarnings("ignore::sdckit.errors.InputWarning")

FAST = settings(max_examples=25, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))
# the slow run: 4,000 + 4,000 + 2,000 = 10,000 examples (a release example writes a whole folder)
SLOW_READ = settings(FAST, max_examples=4000)
SLOW_RISK = settings(FAST, max_examples=4000)
SLOW_RELEASE = settings(FAST, max_examples=2000)

# ------------------------------------------------------------------ cells and frames

TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=6)
CELL = st.one_of(st.integers(-3, 9), st.floats(allow_nan=True, allow_infinity=True, width=32), TEXT,
                 st.booleans(), st.none(), st.sampled_from(["", "NA", "-9", "1e308", "nan", "inf", "true"]))


@st.composite
def frames(draw, min_rows=1, max_rows=30, min_cols=1, max_cols=5, cell=CELL):
    n = draw(st.integers(min_rows, max_rows))
    k = draw(st.integers(min_cols, max_cols))
    names = draw(st.lists(st.sampled_from(["a", "b", "c", "d", "e", "sex", "age", "w", "id", "a b"]),
                          min_size=k, max_size=k, unique=True))
    cols = {}
    for name in names:
        kind = draw(st.sampled_from(["int", "float", "text", "bool", "mixed"]))
        if kind == "int":
            cols[name] = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
        elif kind == "float":
            cols[name] = draw(st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=n, max_size=n))
        elif kind == "text":
            cols[name] = draw(st.lists(st.sampled_from(["x", "y", "z", ""]) | TEXT, min_size=n, max_size=n))
        elif kind == "bool":
            cols[name] = draw(st.lists(st.booleans(), min_size=n, max_size=n))
        else:
            cols[name] = draw(st.lists(cell, min_size=n, max_size=n))
    return pd.DataFrame(cols)


def _only_sdc_errors(fn, *args, **kwargs):
    """Call ``fn``; an SDCError is an acceptable answer to bad input, anything else fails."""
    try:
        out = fn(*args, **kwargs)
    except SDCError as exc:
        assert str(exc).strip(), "an SDCError without a message"
        event(f"{getattr(fn, '__name__', 'call')}: {type(exc).__name__}")
        return None
    event(f"{getattr(fn, '__name__', 'call')}: ok")
    return out


# ------------------------------------------------------------------ readers

def _check_reader_bytes(data: bytes, suffix: str) -> None:
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / f"f{suffix}"
        p.write_bytes(data)
        _only_sdc_errors(read_data, p)
        _only_sdc_errors(read_data, p, na_values=[-9, "NA"])


CSV_BYTES = st.one_of(
    st.binary(max_size=300),
    st.lists(st.lists(st.one_of(TEXT, st.integers(-5, 5).map(str), st.sampled_from(['"', '""', ",", "\n", "\r"])),
                      min_size=1, max_size=4), min_size=0, max_size=8)
    .map(lambda rows: "\n".join(",".join(r) for r in rows).encode("utf-8")),
)


def _reader_case(data, suffix):
    _check_reader_bytes(data, suffix)


@FAST
@given(CSV_BYTES, st.sampled_from([".csv", ".csv", ".sav", ".dta", ".parquet"]))
def test_readers_on_random_bytes(data, suffix):
    _reader_case(data, suffix)


@pytest.mark.slow
@SLOW_READ
@given(CSV_BYTES, st.sampled_from([".csv", ".csv", ".sav", ".dta", ".parquet"]))
def test_readers_on_random_bytes_slow(data, suffix):
    _reader_case(data, suffix)


# ------------------------------------------------------------------ risk

def _risk_case(df: pd.DataFrame, data) -> None:
    cols = list(df.columns)
    keys = data.draw(st.lists(st.sampled_from(cols), min_size=1, max_size=len(cols), unique=True))
    rest = [c for c in cols if c not in keys]
    weight = data.draw(st.none() | st.sampled_from(rest)) if rest else None
    kwargs = data.draw(st.fixed_dictionaries({}, optional={
        "suda": st.booleans(), "missing_alpha": st.floats(0, 1), "risk_method": st.sampled_from(["approx", "exact"]),
        "max_global_risk": st.floats(0.001, 1), "uniqueness_max_size": st.integers(1, 3),
        "attacker_threshold": st.floats(0, 1), "contributions": st.booleans(), "population_uniques": st.booleans()}))
    via_file = data.draw(st.booleans())
    if via_file:
        with tempfile.TemporaryDirectory() as d:
            p = Path(d) / "r.csv"
            df.to_csv(p, index=False, quoting=csv.QUOTE_ALL)  # a bare "\r" in a cell would split a row
            md = _only_sdc_errors(read_microdata, p, key_vars=keys, weight=weight)
    else:
        md = _only_sdc_errors(Microdata, df, key_vars=keys, weight=weight)
    if md is not None:
        rep = _only_sdc_errors(measure_risk, md, **kwargs)
        if rep is not None:
            d = rep.to_dict()
            assert d["n_records"] == len(df)


@FAST
@given(frames(), st.data())
def test_risk_on_random_frames(df, data):
    _risk_case(df, data)


@pytest.mark.slow
@SLOW_RISK
@given(frames(), st.data())
def test_risk_on_random_frames_slow(df, data):
    _risk_case(df, data)


# ------------------------------------------------------------------ release runs

# steps whose parameters the random draw below cannot build meaningfully without files
_NEEDS_FILES = {"generalise"}
# settings kept small so one example stays fast (these are budgets, not behaviour)
_BUDGET = {"generations": 3, "population": 4, "max_nodes": 20, "time_limit": 2.0, "max_steps": 200,
           "max_restore_checks": 5, "block": 50, "probe": 4, "max_probe": 8, "chunk_size": 64}

GOOD_CELL = st.one_of(st.integers(0, 4), st.sampled_from([np.nan, 1.5, 2.5]))


@st.composite
def release_frames(draw):
    """Small frames with a few categorical and numeric columns (some missing values, some text)."""
    n = draw(st.integers(8, 40))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    df = pd.DataFrame({"k1": rng.integers(0, draw(st.integers(1, 4)), n),
                       "k2": rng.integers(0, draw(st.integers(1, 5)), n),
                       "k3": rng.choice(["a", "b", "c"], n),
                       "x1": rng.normal(100, 20, n).round(1),
                       "x2": rng.lognormal(3, 1, n).round(2)})
    if draw(st.booleans()):
        df.loc[rng.random(n) < 0.1, "k1"] = np.nan
    if draw(st.booleans()):
        df.loc[rng.random(n) < 0.1, "x1"] = np.nan
    if draw(st.booleans()):
        df["w"] = rng.integers(1, 5, n).astype(float)
    return df


def _draw_param(draw, p, df):
    cols = list(df.columns)
    num_cols = ["x1", "x2"]
    if p.name in _BUDGET and p.kind in ("int", "float"):
        return _BUDGET[p.name]
    if p.kind == "int":
        lo = int(p.low) if p.low is not None else -2
        hi = int(p.high) if p.high is not None else lo + 6
        return draw(st.integers(lo, hi))
    if p.kind == "float":
        lo = float(p.low) if p.low is not None else -2.0
        hi = float(p.high) if p.high is not None else lo + 5.0
        return draw(st.floats(lo, hi, allow_nan=False))
    if p.kind == "bool":
        return draw(st.booleans())
    if p.kind == "choice":
        choices = p.choices() if callable(p.choices) else p.choices
        return draw(st.sampled_from(list(choices)))
    if p.kind == "columns":
        pool = num_cols if draw(st.booleans()) else cols
        return draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3, unique=True))
    if p.kind == "column":
        return draw(st.sampled_from(cols))
    if p.kind in ("int_list",):
        return draw(st.lists(st.integers(1, 3), min_size=1, max_size=3))
    if p.kind in ("float_list",):
        return sorted(draw(st.lists(st.floats(-10, 200, allow_nan=False), min_size=1, max_size=4, unique=True)))
    if p.kind in ("str_list",):
        return draw(st.lists(st.sampled_from(["lo", "mid", "hi"]), min_size=1, max_size=3))
    if p.kind == "str":
        return draw(st.sampled_from(["keep", "other"]))
    return None  # path, mapping, any: left at their defaults


REQUIRED_PARAMS = {
    "pram": lambda draw: {"variables": [draw(st.sampled_from(["k1", "k2", "k3"]))]},
    "recode": lambda draw: {"variable": "k2", "mapping": {"low": [0, 1], "high": [2, 3, 4]}, "others": "keep"},
    "record_swap": lambda draw: {"hierarchy": ["k1"]},
    "remove": lambda draw: {"variables": [draw(st.sampled_from(["x1", "x2", "k3"]))]},
    "postmask": lambda draw: {"masking": {"method": "noise", "level": 0.1}, "variables": ["x1", "x2"]},
    "neighbours": lambda draw: {"neighbourhood": draw(st.one_of(
        st.builds(lambda eps: {"type": "radius", "eps": eps}, st.floats(0.1, 2.0)),
        st.builds(lambda k: {"type": "knn", "k": k}, st.integers(1, 5))))},
}


@st.composite
def release_cases(draw):
    discover()
    df = draw(release_frames())
    names = [n for n in known_steps() if n not in _NEEDS_FILES]
    steps = []
    for _ in range(draw(st.integers(1, 2))):
        name = draw(st.sampled_from(names))
        params = {}
        for p in step_params(step_class(name)):
            if p.default is REQUIRED or draw(st.integers(0, 2)) == 0:
                v = _draw_param(draw, p, df)
                if v is not None:
                    params[p.name] = v
        params.update(REQUIRED_PARAMS.get(name, lambda d: {})(draw))
        steps.append((name, params))
    gate = draw(st.fixed_dictionaries({}, optional={
        "k_anonymity": st.integers(2, 4), "max_global_risk": st.floats(0.05, 1.0),
        "max_linkage_all_columns": st.floats(0.0, 1.0), "allow_identifiers": st.just(["x1", "x2", "w"])}))
    if set(gate) <= {"allow_identifiers"}:  # a release needs a risk threshold or a stated reason
        gate["none"] = "a fuzz case"
    keys = ["k1", "k2", "k3"]
    fmt = draw(st.sampled_from(["csv", "csv", "sav", "dta", "parquet"]))
    return df, steps, gate, keys, fmt, draw(st.integers(0, 2**31))


def _release_case(case) -> None:
    df, steps, gate, keys, fmt, seed = case
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "in.csv"
        df.to_csv(src, index=False)
        roles = {"key_vars": keys, "numeric_vars": ["x1", "x2"]}
        if "w" in df.columns:
            roles["weight"] = "w"
        md = _only_sdc_errors(read_microdata, src, **roles)
        if md is None:
            return
        built = []
        for i, (name, params) in enumerate(steps):
            step = _only_sdc_errors(build_step, name, params, where=f"steps[{i}]")
            if step is None:
                return
            built.append(step)
        release = Release(md, built, gate, rng=seed)
        run = _only_sdc_errors(release.run)
        if run is None or not run.passed:
            return
        out = Path(d) / "rel"
        paths = _only_sdc_errors(run.write, out, data_name=f"out.{fmt}")
        if paths is not None:
            back, _ = read_data(paths["data"])
            assert back.shape[0] == len(df)


@FAST
@given(release_cases())
def test_release_runs_on_random_steps(case):
    _release_case(case)


@pytest.mark.slow
@SLOW_RELEASE
@given(release_cases())
def test_release_runs_on_random_steps_slow(case):
    _release_case(case)
