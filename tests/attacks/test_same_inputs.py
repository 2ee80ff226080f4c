"""Attacks on given inputs: predicates given to the singling-out attack, the deterministic tie
rule of the nearest-neighbour attacks, and the shared base of the attack thresholds.

Reference values come from plain pandas/numpy evaluations of the same definitions (predicate
counts on the distinct records; the mixed distance and a lexicographic sort by distance, then
row)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.attacks import inference, linkability, singling_out, singling_out_queries
from sdckit.attacks.encode import encode_frames
from sdckit.attacks.neighbours import nearest_released
from sdckit.attacks.steps import MaxInference, MaxLinkability, MaxMiaAuc, MaxSinglingOut
from sdckit.errors import InputError, ParameterError
from sdckit.params import param, step_params
from sdckit.registry import GateCheck, register_gate_check

OPS = ("==", "!=", "<", "<=", ">", ">=", "is_null", "not_null")


def _frames(seed: int, n: int = 120):
    """Original, released and control records: two text columns (with missing values), one
    numeric column; few distinct values, so predicates often isolate one record."""
    rng = np.random.default_rng(seed)

    def draw(m):
        a = rng.choice(["a", "b", "c", "d"], m).astype(object)
        a[rng.random(m) < 0.1] = None
        b = rng.choice(["1", "2", "10", "x"], m).astype(object)
        x = rng.integers(0, 6, m).astype(float)
        x[rng.random(m) < 0.1] = np.nan
        return pd.DataFrame({"a": a, "b": b, "x": x})

    return draw(n), draw(n), draw(n + 7)


def _holds(series: pd.Series, op: str, value, numeric: bool) -> np.ndarray:
    """One term on a pandas column: a missing value satisfies only ``is_null``; text columns
    compare their printed values as text."""
    miss = series.isna().to_numpy()
    if op == "is_null":
        return miss
    if op == "not_null":
        return ~miss
    vals = series.to_numpy()
    if not numeric:
        vals = np.array(["" if m else str(v) for v, m in zip(vals, miss)], dtype=object)
        value = str(value)
    out = np.zeros(len(vals), dtype=bool)
    for i, v in enumerate(vals):
        if not miss[i]:
            out[i] = {"==": v == value, "!=": v != value, "<": v < value, "<=": v <= value,
                      ">": v > value, ">=": v >= value}[op]
    return out


def _isolating(frame: pd.DataFrame, queries) -> int:
    """Predicates that match exactly one distinct record of ``frame`` (pandas)."""
    distinct = frame.drop_duplicates()
    n = 0
    for q in queries:
        mask = np.ones(len(distinct), dtype=bool)
        for col, op, value in q:
            mask &= _holds(distinct[col], op, value, col == "x")
        n += int(mask.sum() == 1)
    return n


term = st.tuples(st.sampled_from(["a", "b", "x"]), st.sampled_from(OPS),
                 st.sampled_from(["a", "b", "c", "zz", "1", "10", "2", "0", "3", "5.5"]))


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.lists(st.lists(term, min_size=1, max_size=3), min_size=1, max_size=25))
def test_given_queries_are_counted_as_pandas_counts_them(seed, raw):
    ori, rel, con = _frames(seed)
    # numeric column: numeric values only; null operators: value None
    queries = []
    for q in raw:
        terms = []
        for col, op, value in q:
            if op in ("is_null", "not_null"):
                value = None
            elif col == "x":
                value = float(value) if value.replace(".", "").isdigit() else 2.0
            terms.append((col, op, value))
        queries.append(terms)
    # as many distinct original as control records: no size correction
    ori, con = ori.drop_duplicates(), con.drop_duplicates()
    m = min(len(ori), len(con))
    ori, con = ori.iloc[:m], con.iloc[:m]
    res = singling_out(ori, rel, con, queries=queries, numeric=["x"], rng=seed)
    assert res.n_attacks == len(queries)
    assert res.n_success == _isolating(ori, queries)
    assert res.settings["n_control_before_size_correction"] == _isolating(con, queries)
    assert res.n_control == _isolating(con, queries)


def _rich(seed: int, n: int = 300):
    """Original, released and control records with many distinct records: three text columns
    of 8 values (some missing), one of 400 values and one numeric column of 40 values."""
    rng = np.random.default_rng(seed)

    def draw(m):
        out = {}
        for c in ("a", "b", "c"):
            v = rng.choice([f"v{i}" for i in range(8)], m).astype(object)
            v[rng.random(m) < 0.05] = None
            out[c] = v
        out["d"] = rng.choice([f"w{i}" for i in range(400)], m)
        out["x"] = rng.integers(0, 40, m).astype(float)
        return pd.DataFrame(out)

    return draw(n), draw(n), draw(n)


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["multivariate", "univariate"]))
def test_written_queries_given_back_give_the_same_counts(seed, mode):
    ori, rel, con = _rich(seed)
    kw = dict(mode=mode, n_attacks=40, n_cols=2, max_attempts=5000, numeric=["x"], rng=seed)
    own = singling_out(ori, rel, con, **kw)
    queries = singling_out_queries(ori, rel, con, **kw)
    assert len(queries) == own.settings["n_predicates"] > 0
    again = singling_out(ori, rel, con, queries=queries, **{k: v for k, v in kw.items() if k != "max_attempts"})
    assert (again.n_success, again.n_control) == (own.n_success, own.n_control)
    assert again.risk == own.risk and again.ci == own.ci
    # and pandas agrees on the written predicates
    assert own.n_success == _isolating(ori, queries)


def test_given_queries_errors_name_the_problem():
    ori, rel, con = _frames(0)
    with pytest.raises(InputError, match=r"query 0: the column 'zz' is not among"):
        singling_out(ori, rel, con, queries=[[("zz", "==", "a")]])
    with pytest.raises(InputError, match=r"query 1: unknown operator '=~'"):
        singling_out(ori, rel, con, queries=[[("a", "==", "a")], [("a", "=~", "a")]])
    with pytest.raises(InputError, match=r"'x' is numeric; the value 'big' is not a number"):
        singling_out(ori, rel, con, numeric=["x"], queries=[[("x", "<", "big")]])
    with pytest.raises(InputError, match=r"3 queries were given but n_attacks is 2"):
        singling_out(ori, rel, con, n_attacks=2, queries=[[("a", "==", "a")]] * 3)


def _brute_first(q, cand, k):
    """The k nearest candidates by (distance, row): the mixed distance over text codes."""
    d = (q[:, None, :] != cand[None, :, :]).sum(axis=2)
    rows = np.broadcast_to(np.arange(cand.shape[0]), d.shape)
    order = np.lexsort((rows, d), axis=1)[:, :k]
    return order, np.take_along_axis(d, order, axis=1)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 3))
def test_first_tie_rule_keeps_the_lowest_rows(seed, k):
    rng = np.random.default_rng(seed)
    rel = pd.DataFrame(rng.integers(0, 3, (80, 4)).astype(str), columns=list("pqrs"))
    tgt = pd.DataFrame(rng.integers(0, 3, (15, 4)).astype(str), columns=list("pqrs"))
    enc = encode_frames(rel, tgt, tgt)
    idx, dist = nearest_released(enc, enc.original, np.arange(4), k, rng, tie_break="first")
    want_idx, want_d = _brute_first(enc.original, enc.released, k)
    np.testing.assert_array_equal(idx, want_idx)
    np.testing.assert_allclose(dist, want_d)


def test_first_tie_rule_does_not_depend_on_the_seed_and_random_does():
    rng = np.random.default_rng(3)
    df = pd.DataFrame(rng.integers(0, 2, (400, 6)).astype(str), columns=list("abcdef"))
    ori, rel, con = df.iloc[:150], df.iloc[150:300], df.iloc[300:]
    # every record is a target (the targets are drawn with the seed), so only ties can differ
    kw = dict(aux_a=["a", "b"], aux_b=["c", "d"], n_attacks=150)
    firsts = {(linkability(ori, rel, con, rng=s, tie_break="first", **kw).n_success,
               inference(ori, rel, con, secret="f", aux=["a", "b", "c"], n_attacks=150, rng=s,
                         tie_break="first").n_success) for s in range(3)}
    randoms = {(linkability(ori, rel, con, rng=s, **kw).n_success,
                inference(ori, rel, con, secret="f", aux=["a", "b", "c"], n_attacks=150, rng=s).n_success)
               for s in range(3)}
    assert len(firsts) == 1
    assert len(randoms) > 1
    res = linkability(ori, rel, con, rng=0, tie_break="first", **kw)
    assert res.settings["tie_break"] == "first"
    with pytest.raises(ParameterError, match=r"'tie_break'.*one of 'random', 'first'.*'lowest'"):
        inference(ori, rel, con, secret="f", aux=["a"], tie_break="lowest")


def test_attack_thresholds_share_one_base_and_keep_the_threshold_first():
    for cls, threshold in ((MaxSinglingOut, "risk"), (MaxLinkability, "risk"), (MaxInference, "risk"),
                           (MaxMiaAuc, "auc")):
        names = [p.name for p in step_params(cls)]
        assert names[0] == threshold
        assert {"control_file", "na_values", "seed"} <= set(names)
        check = cls.from_value({threshold: 0.7, "control_file": "c.csv", "seed": 4})
        assert check.threshold == 0.7 and check.seed == 4
        assert cls.from_value(check.to_value()) == check
    assert MaxLinkability(0.2, control_file="c.csv").tie_break == "random"
    with pytest.raises(ParameterError, match="tie_break"):
        MaxInference(0.2, control_file="c.csv", tie_break="lowest")


def test_registry_puts_a_keyword_only_base_after_the_threshold(monkeypatch):
    import sdckit.registry

    # the toy check is registered in a copy of the registry, which the test then drops
    monkeypatch.setattr(sdckit.registry, "_GATES", dict(sdckit.registry._GATES))

    @dataclass(frozen=True, kw_only=True)
    class Shared(GateCheck):
        shared: int = param(1, kind="int", low=0, help="a parameter of several checks")

    @dataclass(frozen=True)
    class Toy(Shared):
        limit: float = param(kind="float", low=0.0, help="the threshold")
        other: int = param(2, kind="int", help="its own parameter")

    cls = register_gate_check("gate_test_shared_base")(Toy)
    assert [p.name for p in step_params(cls)] == ["limit", "other", "shared"]
    check = cls.from_value(0.5)
    assert check.threshold == 0.5 and check.shared == 1
    assert cls.from_value({"limit": 0.5, "shared": 3}).to_value() == {"limit": 0.5, "shared": 3}


def test_counting_through_sorted_orders_gives_the_scan_results(monkeypatch):
    """Large files are counted through sorted column orders: the whole attack gives the same
    result as with plain scans (the index threshold lowered below the files' size)."""
    from sdckit.attacks import singling

    ori, rel, con = _rich(11, n=400)
    con = con.iloc[:350]      # a smaller control: the size correction counts every match
    kw = dict(n_attacks=60, n_cols=2, max_attempts=5000, numeric=["x"], rng=2)
    monkeypatch.setattr(singling, "INDEX_FROM", 10**9)
    scan = singling_out(ori, rel, con, **kw)
    monkeypatch.setattr(singling, "INDEX_FROM", 1)
    indexed = singling_out(ori, rel, con, **kw)
    assert (indexed.n_success, indexed.n_control, indexed.n_baseline) == (scan.n_success, scan.n_control,
                                                                           scan.n_baseline)
    assert indexed.settings["n_control_before_size_correction"] == scan.settings["n_control_before_size_correction"]
