"""The linked audit solved component by component (with witnesses, shared targets solved once and
the dual's witness sets) gives the intervals of the one-system audit it replaced
(``_reference_linked.reference_audit_linked``: one HiGHS model for the whole set, both LPs of
every target), on random sessions; and a set's witness outputs alone give the same interval."""

import re

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdckit.outputs import Session
from sdckit.outputs.audit import audit_linked

from ._reference_linked import reference_audit_linked


def _key(f) -> tuple:
    return (f.what, tuple(f.position) if f.position is not None else f.cell)


def _session(seed: int, n: int, n_tables: int, sums: bool, frames: bool = False):
    """Random small tables of a few variables on random subsets of one frame (counts or sums);
    with ``frames`` also each table's (row, column) series, by output id."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.choice(list("xyz"), n), "b": rng.choice(list("pq"), n),
                       "c": rng.choice(list("uvw"), n, p=[0.6, 0.3, 0.1]),
                       "v": rng.integers(1, 50, n).astype(float)})
    s = Session()
    series = {}
    for k in range(n_tables):
        keep = rng.random(n) < rng.choice([1.0, 0.97, 0.9, 0.6])
        sub = df[keep]
        pair = [("a", "b"), ("a", "c"), ("b", "c"), ("a", None), ("c", None)][rng.integers(5)]
        cols = sub[pair[1]] if pair[1] else pd.Series("all", index=sub.index, name="all")
        if sums:
            s.crosstab(sub[pair[0]], cols, values=sub["v"], aggfunc="sum", margins=bool(rng.integers(2)))
        else:
            s.crosstab(sub[pair[0]], cols, margins=bool(rng.integers(2)))
        series[f"output_{k}"] = (sub[pair[0]], cols)
    layouts = [r.layout for r in s.outputs.values()]
    return (layouts, series) if frames else layouts


def _records(series: dict, uid: str, row: str, col: str) -> set:
    """The records of one published cell (``All``: a margin), from the data (not from the audit)."""
    r, c = series[uid]
    keep = ((r == row) | (row == "All")) & ((c == col) | (col == "All"))
    return set(r.index[keep.to_numpy()])


def _records_of(f, series: dict) -> frozenset:
    """The records a recovered quantity counts, read from its words and the data."""
    if f.position is not None:
        row, col = re.fullmatch(r"\[(.*), (.*)\]", f.cell).groups()
        return frozenset(_records(series, f.position[0], row, col))
    head, _, tail = f.cell.partition(" but in none of ")
    out = None
    for uid, row, col in re.findall(r"(output_\d+)\[([^,\]]*), ([^\]]*)\]", head):
        cell = _records(series, uid, row, col)
        out = cell if out is None else out & cell
    for uid in filter(None, tail.split(", ")):
        out -= set(series[uid][0].index)
    return frozenset(out)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.integers(15, 80), st.integers(1, 4), st.booleans())
def test_component_audit_equals_the_one_system_audit(seed, n, n_tables, sums):
    layouts = _session(seed, n, n_tables, sums)
    new, st_new = audit_linked(layouts, threshold=10, p=0.1)
    ref, st_ref = reference_audit_linked(layouts, threshold=10, p=0.1)
    assert st_new == st_ref == "exact"
    got = {_key(f): f for f in new}
    want = {_key(f): f for f in ref}
    assert got.keys() == want.keys()
    for k, f in want.items():
        g = got[k]
        assert g.value == f.value and g.exact == f.exact
        assert np.isclose(g.lo, f.lo, atol=1e-6) or g.lo == f.lo
        assert np.isclose(g.hi, f.hi, atol=1e-6) or g.hi == f.hi
        assert set(g.outputs) <= {t.uid for t in layouts}
        if f.what == "suppressed cell":
            assert g.position[0] in g.outputs


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.integers(20, 80), st.integers(2, 4))
def test_witness_outputs_alone_give_the_same_interval(seed, n, n_tables):
    # LP duality: the equations with a zero multiplier in both optimal duals can be dropped
    layouts = _session(seed, n, n_tables, sums=False)
    found, _ = audit_linked(layouts, threshold=10, p=0.1)
    for f in found:
        if f.what != "suppressed cell":
            continue
        alone = [t for t in layouts if t.uid in f.outputs]
        ref, _ = reference_audit_linked(alone, threshold=10, p=0.1, derived=False)
        same = [r for r in ref if tuple(r.position) == tuple(f.position)]
        assert len(same) == 1
        assert np.isclose(same[0].lo, f.lo) and (np.isclose(same[0].hi, f.hi) or same[0].hi == f.hi)


def test_a_table_published_many_times_adds_nothing_and_any_number_of_tables_links():
    # 24 copies of two 3 x 3 tables: the old mixed-radix atom key (10^48) would overflow an int64
    layouts = _session(3, 60, 2, sums=False)
    ref, _ = reference_audit_linked(layouts, threshold=10, p=0.1)
    assert ref  # the case discloses something
    copies = []
    for k in range(12):
        for t in layouts:
            c = type(t)(**{f: getattr(t, f) for f in t.__dataclass_fields__})
            c.uid = f"{t.uid}_copy{k}"
            copies.append(c)
    stats: dict = {}
    found, status = audit_linked(copies, threshold=10, p=0.1, stats=stats)
    assert status == "exact"
    want = {(f.what, f.value, f.lo, f.hi) for f in ref}
    got = {(f.what, f.value, round(f.lo, 9), round(f.hi, 9)) for f in found}
    assert {(w, v, round(lo, 9), round(hi, 9)) for w, v, lo, hi in want} == got
    # the copies' targets are the same quantities: most are settled without an LP of their own
    assert stats["n_lps"] < stats["n_targets"] / 4


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.integers(20, 80), st.integers(3, 4))
def test_one_system_with_pair_targets_finds_all_that_pairs_audited_alone_find(seed, n, n_tables):
    # the session audits a large linked set in groups, with the small cells of each pair's difference
    # as targets: whatever a pair audited alone recovers (reference, one system per pair) is
    # recovered too (the same records, by the data), within an interval as narrow or narrower
    layouts, series = _session(seed, n, n_tables, sums=False, frames=True)
    found, status = audit_linked(layouts, threshold=10, p=0.1, pairs=True)
    assert status == "exact"
    got = {}
    for f in found:
        got.setdefault(_records_of(f, series), []).append(f)
    for i, a in enumerate(layouts):
        for b in layouts[i + 1:]:
            if not set(a.record_ids[a.cell >= 0]) & set(b.record_ids[b.cell >= 0]):
                continue
            for f in reference_audit_linked([a, b], threshold=10, p=0.1)[0]:
                same = got.get(_records_of(f, series), [])
                assert same, f.sentence()
                assert any(g.lo >= f.lo - 1e-6 and g.hi <= f.hi + 1e-6 for g in same)


def test_a_large_linked_set_is_audited_by_groups_and_names_the_differencing_pair():
    # 32 linked tables (over MAX_LINKED): the session splits them by variables; a table on all records
    # and the same table on all records but one give that record away; the set reported is the
    # outputs of the proof, not the whole group
    rng = np.random.default_rng(5)
    n = 3000
    df = pd.DataFrame({"region": rng.choice(list("abcde"), n), "x": rng.choice(list("pqr"), n),
                       "y": rng.choice(list("uv"), n)})
    s = Session()
    for _ in range(3):
        for r in "abcde":
            sub = df[df.region == r]
            s.crosstab(sub.x, sub.y)          # link_dims {x, y}
            s.crosstab(sub.x, sub.region)     # link_dims {x}: one column
    s.crosstab(df.x, df.y)                    # output_30: all records
    rest = df.drop(index=df.index[0])
    s.crosstab(rest.x, rest.y)                # output_31: all but one
    assert all(r.status == "pass" for r in s.outputs.values())
    sets = s.audit()
    assert s.n_linked_systems == 1 and all(x["mode"] == "by variables" for x in sets)
    # independent: the difference of the two published tables is one record in one cell
    diff = pd.crosstab(df.x, df.y) - pd.crosstab(rest.x, rest.y)
    assert int(diff.to_numpy().sum()) == 1
    found = [(x["outputs"], d) for x in sets for d in x["recovered"] if d["what"] == "derived cell"]
    assert found and all(d["value"] == 1 and d["interval"] == [1.0, 1.0] for _, d in found)
    # the proof is the difference of the two tables (elimination's difference rule), not the group
    assert [outs for outs, _ in found] == [["output_30", "output_31"]]
    assert s.outputs["output_31"].status == "fail" and s.outputs["output_30"].status == "fail"
    assert s.linked_stats["n_targets"] > s.linked_stats["n_lps"]
