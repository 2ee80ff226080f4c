"""ACRO's checks on a table's cells, against per-cell figures computed independently (plain Python
loops over the records)."""

import numpy as np
import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from sdckit.outputs import OutputRules
from sdckit.outputs.checks import cell_evidence, table_checks


def brute(cell, values, shape, nk_n):
    """Per-cell figures by loops: count, total, top-1, top-2, top-n (reference)."""
    r, c = shape
    groups = {k: [] for k in range(r * c)}
    for k, v in zip(cell, values, strict=True):
        if k >= 0:
            groups[k].append(v)
    out = {}
    for k, vs in groups.items():
        s = sorted(vs, reverse=True)
        out[k] = (len(s), sum(s), s[0] if s else 0.0, sum(s[:2]), sum(s[:nk_n]))
    return out


@given(st.lists(st.tuples(st.integers(-1, 5), st.floats(0, 100, allow_nan=False)), min_size=1, max_size=60),
       st.integers(1, 4))
def test_evidence_equals_brute_force(records, nk_n):
    cell = np.array([k for k, _ in records])
    values = np.array([v for _, v in records])
    ev = cell_evidence(cell, values, (2, 3), margins=False, nk_n=nk_n)
    ref = brute(cell, values, (2, 3), nk_n)
    for k, (n, tot, top1, top2, topn) in ref.items():
        i, j = divmod(k, 3)
        assert ev.count[i, j] == n
        assert np.isclose(ev.total[i, j], tot)
        assert np.isclose(ev.largest[i, j], top1)
        assert np.isclose(ev.top2[i, j], top2)
        assert np.isclose(ev.top_n[i, j], topn)


@given(st.lists(st.integers(0, 5), min_size=1, max_size=80))
def test_margins_are_sums_of_their_cells(cells):
    cell = np.array(cells)
    ev = cell_evidence(cell, None, (2, 3), margins=True, nk_n=2)
    inner = ev.count[:-1, :-1]
    assert np.array_equal(ev.count[:-1, -1], inner.sum(axis=1))
    assert np.array_equal(ev.count[-1, :-1], inner.sum(axis=0))
    assert ev.count[-1, -1] == len(cells)


def test_threshold_zero_dominance_and_p_ratio_hand_case():
    # one row, three cells:
    #  cell 0: 12 records of 1.0            -> passes everything
    #  cell 1: 3 records 100, 1, 1          -> threshold; nk: (100+1)/102 = 0.99 >= 0.9; p: (102-101)/100 = 0.01 < 0.1
    #  cell 2: empty                        -> zero (count table), threshold
    cell = np.array([0] * 12 + [1] * 3)
    values = np.array([1.0] * 12 + [100.0, 1.0, 1.0])
    rules = OutputRules()
    ev = cell_evidence(cell, values, (1, 3), margins=False, nk_n=2)
    counts = {c.name: c.mask[0].tolist() for c in table_checks(ev, ("count",), rules, ["a"])}
    assert counts["MinimumThresholdCheck"] == [False, True, True]
    assert counts["PresenceOfZeroCheck"] == [False, False, True]
    means = {c.name: c.mask[0].tolist() for c in table_checks(ev, ("mean",), rules, ["a"])}
    assert means["NKCheck"] == [False, True, False]      # the empty cell (0/0) is not flagged, as ACRO
    assert means["PPercentCheck"] == [False, True, False]
    std = {c.name: c for c in table_checks(ev, ("std",), rules, ["a"])}
    assert std["MinimumDoFCheck"].mask[0].tolist() == [False, True, True]  # dof = count - 1 < 10


def test_negative_values_send_dominance_to_review():
    ev = cell_evidence(np.array([0, 0, 0]), np.array([5.0, -1.0, 2.0]), (1, 1), margins=False, nk_n=2)
    checks = {c.name: c for c in table_checks(ev, ("sum",), OutputRules(), ["a"])}
    assert checks["NKCheck"].status == "review" and checks["PPercentCheck"].status == "review"


def test_zeros_not_disclosive():
    ev = cell_evidence(np.array([0] * 3), None, (1, 2), margins=False, nk_n=2)
    checks = {c.name: c for c in table_checks(ev, ("count",), OutputRules(zeros_are_disclosive=False), ["a"])}
    assert checks["PresenceOfZeroCheck"].status == "pass"
    assert checks["MinimumThresholdCheck"].mask[0].tolist() == [True, False]  # the empty cell left out


def test_evidence_matches_pandas_crosstab():
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"a": rng.choice(list("xyz"), 300), "b": rng.choice(list("pq"), 300),
                       "v": rng.gamma(2.0, 5.0, 300)})
    a, _ = pd.factorize(df.a, sort=True)
    b, _ = pd.factorize(df.b, sort=True)
    ev = cell_evidence(a * 2 + b, df.v.to_numpy(), (3, 2), margins=True, nk_n=2)
    ref = pd.crosstab(df.a, df.b, margins=True)
    assert np.array_equal(ev.count, ref.to_numpy())
    ref_sum = pd.crosstab(df.a, df.b, values=df.v, aggfunc="sum", margins=True)
    assert np.allclose(ev.total, ref_sum.to_numpy())
    ref_max = pd.crosstab(df.a, df.b, values=df.v, aggfunc="max", margins=True)
    assert np.allclose(ev.largest, ref_max.to_numpy())
