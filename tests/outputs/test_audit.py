"""The LP audit: suppressed cells recoverable from margins (in the spirit of ACRO issue #198) and
differencing across outputs. Reference intervals come from brute-force enumeration of every
integer table consistent with what is published (independent of the LP)."""

import itertools

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.outputs import Session
from sdckit.outputs.audit import TableLayout, audit_linked, audit_published


def brute_interval(grid: np.ndarray, suppressed: np.ndarray, target: tuple[int, int], cap: int = 10):
    """Min and max of ``target`` over all non-negative integer interior tables that reproduce every
    published (not suppressed) cell of ``grid`` (interior plus margins), by enumeration."""
    r, c = grid.shape[0] - 1, grid.shape[1] - 1
    unknown = [(i, j) for i in range(r) for j in range(c) if suppressed[i, j]]
    assert len(unknown) <= 4
    found = []
    for vals in itertools.product(range(cap + 1), repeat=len(unknown)):
        t = grid[:r, :c].astype(float).copy()
        for (i, j), v in zip(unknown, vals, strict=True):
            t[i, j] = v
        full = np.zeros_like(grid, dtype=float)
        full[:r, :c] = t
        full[:r, c] = t.sum(axis=1)
        full[r, :c] = t.sum(axis=0)
        full[r, c] = t.sum()
        if np.allclose(full[~suppressed], grid[~suppressed]):
            found.append(full[target])
    return min(found), max(found)


def layout_from_grid(counts: np.ndarray, failed: np.ndarray) -> TableLayout:
    r, c = counts.shape
    cell = np.repeat(np.arange(r * c), counts.ravel())
    return TableLayout(uid="t", shape=(r, c), margins=True, record_ids=np.arange(cell.size), cell=cell,
                       weight=np.ones(cell.size), failed=failed)


def with_margins(t: np.ndarray) -> np.ndarray:
    g = np.zeros((t.shape[0] + 1, t.shape[1] + 1))
    g[:-1, :-1] = t
    g[:-1, -1] = t.sum(axis=1)
    g[-1, :-1] = t.sum(axis=0)
    g[-1, -1] = t.sum()
    return g


def test_single_small_cell_is_recovered_from_margins_with_its_interval():
    counts = np.array([[3, 12, 15], [11, 14, 20]])
    grid = with_margins(counts)
    failed = np.zeros(grid.shape, bool)
    failed[0, 0] = True
    found, status = audit_linked([layout_from_grid(counts, failed)], threshold=10, p=0.1)
    assert status == "exact" and len(found) == 1
    f = found[0]
    assert (f.lo, f.hi) == brute_interval(grid, failed, (0, 0), cap=60) == (3.0, 3.0)
    assert f.exact and f.position == ("t", 0, 0)
    # from the published numbers alone (the checker's batch re-check) the same interval
    (i, j, lo, hi), = audit_published(grid, failed)
    assert (i, j, lo, hi) == (0, 0, 3.0, 3.0)


def test_a_cycle_of_suppressed_cells_keeps_them_protected():
    counts = np.array([[3, 4, 15], [2, 5, 20]])
    grid = with_margins(counts)
    failed = np.zeros(grid.shape, bool)
    failed[:2, :2] = True           # a 2 x 2 cycle: each row and column has two unknowns
    found, _ = audit_linked([layout_from_grid(counts, failed)], threshold=10, p=0.1)
    assert found == []
    for i, j, lo, hi in audit_published(grid, failed):
        assert (lo, hi) == brute_interval(grid, failed, (i, j))  # e.g. cell (0,0): [0, 7]
        assert lo < counts[i, j] < hi


@settings(max_examples=25)
@given(st.lists(st.integers(0, 4), min_size=6, max_size=6),
       st.lists(st.booleans(), min_size=6, max_size=6))
def test_lp_interval_equals_integer_enumeration(values, mask):
    # two-way tables with margins have a totally unimodular constraint matrix: LP bounds are the integer bounds
    counts = np.array(values).reshape(2, 3)
    grid = with_margins(counts)
    failed = np.zeros(grid.shape, bool)
    failed[:2, :3] = np.array(mask).reshape(2, 3)
    if failed.sum() == 0 or failed.sum() > 3:
        return
    got = {(i, j): (lo, hi) for i, j, lo, hi in audit_published(grid, failed)}
    for (i, j), (lo, hi) in got.items():
        blo, bhi = brute_interval(grid, failed, (i, j), cap=12)
        assert np.isclose(lo, blo)
        assert np.isclose(hi, bhi)
        assert lo <= counts[i, j] <= hi


def _data(n=400, seed=7):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"region": rng.choice(["north", "south", "east"], n), "sex": rng.choice(["f", "m"], n),
                         "income": rng.gamma(3.0, 1000.0, n)})


def test_differencing_pair_is_flagged_as_a_set():
    df = _data()
    s = Session()
    s.crosstab(df.region, df.sex)
    sub = df.drop(index=df.index[0])           # the same table on a subset: one record less
    s.crosstab(sub.region, sub.sex)
    assert [r.status for r in s.outputs.values()] == ["pass", "pass"]  # each passes every rule alone
    sets = s.audit()
    # independent: the intruder subtracts the two published tables; one cell differs by one record
    diff = pd.crosstab(df.region, df.sex) - pd.crosstab(sub.region, sub.sex)
    (row, col), = [(r, c) for r in diff.index for c in diff.columns if diff.loc[r, c] != 0]
    assert diff.loc[row, col] == 1
    assert len(sets) == 1 and sets[0]["outputs"] == ["output_0", "output_1"]
    rec = [x for x in sets[0]["recovered"] if x["what"] == "derived cell"]
    assert len(rec) == 1 and rec[0]["value"] == 1 and rec[0]["interval"] == [1.0, 1.0]
    assert f"[{row}, {col}]" in rec[0]["cell"] and "none of output_1" in rec[0]["cell"]
    assert all(r.status == "fail" for r in s.outputs.values())
    linked = [c for c in s.outputs["output_0"].checks if c.name == "LinkedOutputsCheck"][0]
    assert linked.status == "fail"


def test_unrelated_tables_do_not_link():
    df = _data()
    s = Session()
    s.crosstab(df.region, df.sex)
    other = _data(seed=8).set_index(pd.RangeIndex(1000, 1400))  # other records
    s.crosstab(other.region, other.sex)
    assert s.audit() == []
    assert [r.status for r in s.outputs.values()] == ["pass", "pass"]


def test_margin_recovery_in_a_session_reports_the_interval():
    df = _data()
    df.loc[df.index[:3], "region"] = "west"      # a row of 3 records: fails the threshold
    s = Session()
    s.crosstab(df.region, df.sex, margins=True)
    rec = s.outputs["output_0"]
    audit = [c for c in rec.checks if c.name == "MarginAuditCheck"][0]
    assert audit.status == "fail"
    truth = pd.crosstab(df.region, df.sex, margins=True)
    for d in audit.details:
        _, i, j = d["position"]
        assert d["interval"][0] <= truth.iloc[i, j] <= d["interval"][1]
        assert d["exact"] and d["interval"][0] == truth.iloc[i, j]


def test_recomputed_margins_hide_cells_but_a_one_way_table_gives_them_back():
    df = _data()
    df.loc[df.index[:4], "region"] = "west"
    s = Session(suppress=True)
    t = s.crosstab(df.region, df.sex, margins=True)
    # the published margins add up the published cells only (as ACRO publishes them)
    assert t.loc["All", "f"] == t.loc[["east", "north", "south"], "f"].sum()
    assert [c.status for c in s.outputs["output_0"].checks if c.name == "MarginAuditCheck"] == ["pass"]
    s.crosstab(df.sex, pd.Series("all", index=df.index, name="all"))
    assert s.outputs["output_1"].status == "pass"
    sets = s.audit()
    # independent: the intruder subtracts the published f and m cells from the one-way totals
    truth = pd.crosstab(df.region, df.sex)
    one_way = df.sex.value_counts()
    for sex in ("f", "m"):
        assert one_way[sex] - t.loc[["east", "north", "south"], sex].sum() == truth.loc["west", sex]
    got = {r["cell"]: r["interval"] for st in sets for r in st["recovered"] if r["what"] == "suppressed cell"}
    assert got["[west, f]"] == [truth.loc["west", "f"]] * 2 and got["[west, m]"] == [truth.loc["west", "m"]] * 2
    assert s.outputs["output_1"].status == "fail"  # the one-way table is part of the disclosing set
