"""Exact counting says what it will cost: limits on CPU time and memory, checked by a
prediction before the count starts, for every method, with a default time limit."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.cli import main
from sdckit.errors import ParameterError
from sdckit.tables import count as count_mod
from sdckit.tables import count_dp, count_ie
from sdckit.tables.count import (
    DEFAULT_TIME_LIMIT,
    CountTimeout,
    FibreTooLarge,
    _bounded_partitions,
    count_tables_exact,
    predict_count_cost,
    row_dp_count,
)
from sdckit.tables.exact_cli import count_command

TEN = [10] * 10  # 10 x 10 at total 100


def _no_count(monkeypatch):
    """Make every counting kernel fail: a refusal must come before any of them starts."""
    def boom(*a, **k):
        raise AssertionError("the count started although it should have been refused")
    for mod, name in ((count_dp, "kostka_count"), (count_ie, "ie_mitm_count"), (count_mod, "row_dp_count")):
        monkeypatch.setattr(mod, name, boom)


def test_refused_by_time_prediction_before_it_starts(monkeypatch):
    _no_count(monkeypatch)
    with pytest.raises(CountTimeout) as e:
        count_tables_exact(TEN, TEN, time_limit=5)
    msg = str(e.value)
    assert "\n" not in msg and "predicted to take about" in msg and "CPU seconds" in msg
    assert "time limit of 5 s" in msg and "--estimate" in msg and "--time-limit" in msg


def test_refused_by_memory_prediction_before_it_starts(monkeypatch):
    _no_count(monkeypatch)
    # 7 x 7 at total 300: the partitions of ~250 into at most 7 parts need several GB per prime
    r = [43, 43, 43, 43, 43, 43, 42]
    with pytest.raises(FibreTooLarge) as e:
        count_tables_exact(r, r)
    msg = str(e.value)
    assert "\n" not in msg and "GB" in msg and "memory limit of 2 GB" in msg and "--estimate" in msg


def test_a_count_that_fits_runs_and_reports_its_prediction():
    # Roehrig (2002), seed 002: 18,272,363,056 tables share the delinquent-children margins
    res = count_tables_exact([20, 55, 25, 35], [50, 35, 30, 20], time_limit=5, max_memory_gb=0.5)
    assert res.count == 18_272_363_056
    assert 0 <= res.predicted_seconds <= 5 and 0 <= res.predicted_gb <= 0.5
    d = res.to_dict()
    assert {"cpu_seconds", "predicted_cpu_seconds", "predicted_memory_gb"} <= set(d)


def test_every_method_is_checked_before_it_starts(monkeypatch):
    _no_count(monkeypatch)
    r, c = [30] * 8, [60] * 4  # at most four columns: all three methods apply
    for method in ("kostka", "ie-mitm", "row-dp"):
        sec, _ = predict_count_cost(r, c, method)[method]
        with pytest.raises(CountTimeout, match=method):
            count_tables_exact(r, c, method=method, time_limit=sec / 2)
        with pytest.raises(FibreTooLarge, match=method):
            count_tables_exact(r, c, method=method, time_limit=None, max_memory_gb=1e-12)


def test_default_time_limit_applies():
    import inspect

    assert inspect.signature(count_tables_exact).parameters["time_limit"].default == DEFAULT_TIME_LIMIT == 600
    assert inspect.signature(count_command).parameters["time_limit"].default == DEFAULT_TIME_LIMIT


def test_limits_are_validated():
    with pytest.raises(ParameterError):
        count_tables_exact([2, 2], [2, 2], time_limit=0)
    with pytest.raises(ParameterError):
        count_tables_exact([2, 2], [2, 2], max_memory_gb=-1)


def test_row_dp_running_limit_is_cpu_time(monkeypatch):
    import time
    import types

    state = {"t": 0.0}

    def perf_counter():  # the wall clock jumps by a day at every reading
        state["t"] += 86_400.0
        return state["t"]

    monkeypatch.setattr(count_mod, "time", types.SimpleNamespace(perf_counter=perf_counter,
                                                                  process_time=time.process_time))
    # 5 x 5 at total 40 counted by the row DP; reference: the kostka method (independent algorithm)
    r, c = [8, 9, 7, 6, 10], [5, 12, 8, 7, 8]
    assert row_dp_count(r, c, time_limit=60) == count_dp.kostka_count(r, c)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 30), st.integers(1, 5), st.integers(0, 8))
def test_bounded_partition_counts(n, k, b):
    # reference: brute-force enumeration of non-increasing k-tuples in [0, b]
    import itertools

    brute = [0] * (n + 1)
    for t in itertools.combinations_with_replacement(range(b + 1), k):
        if sum(t) <= n:
            brute[sum(t)] += 1
    assert _bounded_partitions(n, k, b).round().astype(int).tolist() == brute


def test_cli_refuses_in_one_line(capsys):
    ten = ",".join(map(str, TEN))
    code = main(["table", "count", "--rows", ten, "--cols", ten, "--time-limit", "5", "--json"])
    out = capsys.readouterr()
    assert code == 4 and len(out.err.strip().splitlines()) == 1
    msg = json.loads(out.out)["error"]["message"]
    assert "predicted" in msg and "--estimate" in msg
    code = main(["table", "count", "--rows", "20,55,25,35", "--cols", "50,35,30,20", "--max-memory", "0.5", "--json"])
    d = json.loads(capsys.readouterr().out)
    assert code == 0 and d["count"] == 18_272_363_056 and d["max_memory_gb"] == 0.5 and d["time_limit"] == 600
