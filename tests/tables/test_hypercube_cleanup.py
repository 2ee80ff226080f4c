"""The hypercube's clean-up pass: fewer secondaries, never an unprotected primary, honest when partial."""

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.tables.audit import audit
from sdckit.tables.hypercube import HypercubeSuppression
from sdckit.tables.rules import ThresholdRule, primary_cells
from sdckit.tables.suppression import OptimalSuppression
from sdckit.tables.table import Hierarchy, Table

from .test_hypercube import _random_hier_table


def hier_table(branch: int, n_act: int, per_cell: float, seed: int):
    """The region hierarchy of benchmarks/bench_tables.py (same generator, same seed): regions
    branch x branch x branch (3 levels) by n_act activities."""
    lines = []
    for a in range(branch):
        lines.append(f"R{a}")
        for b in range(branch):
            lines.append(f"@R{a}{b}")
            lines += [f"@@R{a}{b}{c}" for c in range(branch)]
    h = Hierarchy.from_hrc("\n".join(lines))
    leaves = np.array(h.leaves)
    rng = np.random.default_rng(seed)
    shape = (leaves.size, n_act)
    n = int(per_cell * np.prod(shape))
    cols = {}
    for d, k in enumerate(shape):
        prop = rng.lognormal(0.0, 0.5, k)
        cols[f"d{d}"] = rng.choice(k, n, p=prop / prop.sum())
    df = pd.DataFrame({c: pd.Series(v).map(lambda i: f"{i:03d}") for c, v in cols.items()})
    df["d0"] = leaves[df["d0"].astype(int).to_numpy()]
    return Table.from_microdata(df, ["d0", "d1"], hierarchies={"d0": h}), df


def test_cleanup_on_the_region_hierarchy_moves_towards_the_optimum():
    # the 3-level region hierarchy (3 x 3 x 3 regions x 6 activities) of bench_tables: the hypercube
    # pattern alone is 27 secondaries / cost 176 against the proven optimum 11 / 82 (both computed by
    # sdckit here; the optimum is OptimalSuppression's proven one)
    t, _ = hier_table(3, 6, 8.0, seed=7)
    p = primary_cells(t, ThresholdRule(3))
    raw = HypercubeSuppression(cleanup=False).apply(t, p)
    hc = HypercubeSuppression().apply(t, p)
    opt = OptimalSuppression().apply(t, p)
    assert opt.proven_optimal and opt.cost <= hc.cost < raw.cost
    assert hc.n_secondary < raw.n_secondary
    assert not (hc.suppressed & ~raw.suppressed).any()  # it only ever publishes
    assert audit(t, hc.suppressed, primary=p).ok and hc.audit.status == "exact"
    assert hc.cleanup["complete"] and hc.cleanup["n_removed"] == raw.n_secondary - hc.n_secondary
    assert hc.cleanup["n_secondary_before"] == raw.n_secondary and hc.cleanup["cost_before"] == raw.cost


@settings(max_examples=8, deadline=None)
@given(st.integers(0, 100_000))
def test_cleanup_never_leaves_a_primary_unprotected(seed):
    t = _random_hier_table(seed)
    p = primary_cells(t, ThresholdRule(3))
    raw = HypercubeSuppression(cleanup=False).apply(t, p)
    hc = HypercubeSuppression().apply(t, p)
    assert audit(t, hc.suppressed, primary=p).ok  # the full LP audit, independent of the method's
    assert hc.audit.ok and hc.cost <= raw.cost + 1e-9
    assert not (hc.suppressed & ~raw.suppressed).any()
    assert hc.n_certificates_ok == len(hc.certificates)


def test_a_spent_budget_says_partial_and_the_pattern_is_still_audited():
    t, _ = hier_table(3, 6, 8.0, seed=7)
    p = primary_cells(t, ThresholdRule(3))
    hc = HypercubeSuppression(cleanup_seconds=0.0).apply(t, p)
    assert hc.cleanup["complete"] is False and "partial" in hc.status
    assert hc.audit.status == "exact" and audit(t, hc.suppressed, primary=p).ok
    raw = HypercubeSuppression(cleanup=False).apply(t, p)
    assert np.array_equal(hc.suppressed, raw.suppressed) or hc.n_secondary < raw.n_secondary
