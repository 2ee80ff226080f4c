"""Modular (HiTaS) suppression: single-child chains as one cell, the clean-up pass, and the
comparison with tau-Argus's MOD on the Sex x Age batch."""

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import SolverError
from sdckit.tables.audit import a_priori_bounds, audit
from sdckit.tables.cleanup import prune_secondaries
from sdckit.tables.modular import ModularSuppression, collapse_single_children, subtables
from sdckit.tables.rules import DominanceRule, PPercentRule, ThresholdRule, primary_cells
from sdckit.tables.suppression import HeuristicSuppression, OptimalSuppression, cell_costs
from sdckit.tables.table import Hierarchy, Table

from .helpers import table_2d

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"
META = SHARED / "tauargus_meta"
needs_shared = pytest.mark.skipif(not (META / "dim_age.hrc").is_file(),
                                  reason="../shared/data/tauargus_meta (tau-Argus example files, EUPL) is absent")


def test_collapse_merges_every_single_child_chain():
    # Total > A1 > 1 (one child), A2 > 2 (one child), 3, 4; G > H > I > {x, y} (a chain of two)
    h = Hierarchy.from_hrc("A1\n@1\nA2\n@2\n3\n4\nG\n@H\n@@I\n@@@x\n@@@y")
    red, node = collapse_single_children(h)
    assert red.codes == ("Total", "A1", "A2", "3", "4", "G", "x", "y")
    assert [red.codes[node[h.index[c]]] for c in ("1", "2", "H", "I", "x")] == ["A1", "A2", "G", "G", "x"]
    assert all(len(k) != 1 for k in red.children)
    assert [red.codes[p] for p in red.parent[1:]] == ["Total"] * 5 + ["G", "G"]


@needs_shared
def test_sex_by_age_batch_is_no_worse_than_tau_argus_mod():
    # The Sex x Age batch: Savings by Sex (Total > male > 2, Total > female > 1) x Age (Total > A1 > 1,
    # A2 > 2, 3..6), rules P(15,1)|NK(3,75), tau-Argus's cost scaling. Reference: tau-Argus MOD
    # (pytauargus 0.6.0, <SUPPRESS> MOD(1,5,1,0,0)) suppressed (male|2, 5), (male|2, 6) and (female|1, 5):
    # 6 cells of the 45, value cost 2 x (43,233 + 3,610 + 37,218) = 168,122. Before single-child chains
    # were merged, sdckit's MOD took 10 cells (value cost 597,444).
    micro = pd.read_csv(SHARED / "tauargus_ckm_microdata.csv", dtype=str)
    micro["Savings"] = micro["Savings"].astype(float)
    hs = {"Sex": Hierarchy.from_hrc(META / "dim_sex.hrc"), "Age": Hierarchy.from_hrc(META / "dim_age.hrc")}
    t = Table.from_microdata(micro, ["Sex", "Age"], response="Savings", hierarchies=hs)
    p = primary_cells(t, [PPercentRule(15), DominanceRule(3, 75)])
    res = ModularSuppression(cost="tauargus").apply(t, p)
    tau = np.zeros(t.n_cells, bool)
    for s in ("male", "2", "female", "1"):
        tau[t.cell_index(s, "5")] = True
    for s in ("male", "2"):
        tau[t.cell_index(s, "6")] = True
    assert audit(t, tau | p.sensitive, primary=p).ok  # the reference pattern is itself safe
    w = cell_costs(t, "tauargus")
    assert res.audit.ok and audit(t, res.suppressed, primary=p).ok
    assert w[res.secondary].sum() <= w[tau].sum()
    assert t.value[res.secondary].sum() <= t.value[tau].sum() == 168_122
    assert res.n_secondary <= int(tau.sum())
    # a cell and its single-child copy always share their status
    for a, b in (("male", "2"), ("female", "1")):
        for age in t.hierarchies[1].codes:
            assert res.suppressed[t.cell_index(a, age)] == res.suppressed[t.cell_index(b, age)]


def _chain_table(seed: int) -> Table:
    """A 2-D table whose row hierarchy has single-child chains; counts from a skewed Poisson."""
    rng = np.random.default_rng(seed)
    lines = []
    for g in range(int(rng.integers(2, 4))):
        lines.append(f"G{g}")
        n_kids = int(rng.integers(1, 4))
        if n_kids == 1:  # a chain: G > H > leaf
            lines += [f"@H{g}", f"@@L{g}0"]
        else:
            lines += [f"@L{g}{i}" for i in range(n_kids)]
    h = Hierarchy.from_hrc("\n".join(lines))
    cols = [f"c{j}" for j in range(int(rng.integers(2, 5)))]
    n = int(rng.integers(25, 80))
    lv = list(h.leaves)
    df = pd.DataFrame({"r": rng.choice(lv, n, p=rng.dirichlet(np.full(len(lv), 0.6))),
                       "c": rng.choice(cols, n, p=rng.dirichlet(np.full(len(cols), 0.6)))})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Table.from_microdata(df, ["r", "c"], hierarchies={"r": h})


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 100_000))
def test_modular_patterns_pass_the_audit_and_copies_share_their_status(seed):
    t = _chain_table(seed)
    p = primary_cells(t, ThresholdRule(3))
    res = ModularSuppression().apply(t, p)
    assert audit(t, res.suppressed, primary=p).ok  # the full LP audit, independent of the method's
    assert res.suppressed[p.sensitive].all()
    h = t.hierarchies[0]
    grid = res.suppressed.reshape(t.shape)
    for par, kids in enumerate(h.children):
        if len(kids) == 1:
            assert np.array_equal(grid[par], grid[kids[0]])
    # the clean-up never costs more than the pattern it starts from
    raw = ModularSuppression(cleanup=False).apply(t, p)
    assert res.cost <= raw.cost + 1e-9
    # and no audited pattern beats the proven optimum of the same costs
    opt = OptimalSuppression().apply(t, p)
    if opt.proven_optimal:
        assert opt.cost <= res.cost + 1e-9


def test_subtables_of_a_collapsed_hierarchy_are_fewer():
    t = _chain_table(3)
    red, _ = collapse_single_children(t.hierarchies[0])
    assert len(red) <= len(t.hierarchies[0])
    assert len(subtables(t)) >= 1


# ----------------------------------------------------------------------------- the clean-up pass

def test_cleanup_publishes_a_hand_built_redundant_secondary():
    # 3 x 3 inner cells; r0/c0 = 1 is the only primary (threshold 3). By hand, the rectangle r0/c0,
    # r0/c1, r1/c0, r1/c1 lets r0/c0 move by +-1 (its level); r2/c2 on top is in no relation with a
    # suppressed cell, so it is redundant and must be published; no rectangle cell can go.
    t = table_2d([[1, 5, 8], [6, 7, 8], [8, 8, 9]])
    p = primary_cells(t, ThresholdRule(3))
    assert p.n_primary == 1
    rect = np.zeros(t.n_cells, bool)
    for r, c in (("r0", "c0"), ("r0", "c1"), ("r1", "c0"), ("r1", "c1")):
        rect[t.cell_index(r, c)] = True
    extra = rect.copy()
    extra[t.cell_index("r2", "c2")] = True
    lb, ub = a_priori_bounds(t)
    w = cell_costs(t, "value")
    res = prune_secondaries(t, extra, p, w, lb, ub)
    assert res.complete and res.n_removed == 1 and res.n_candidates == 4
    assert np.array_equal(res.suppressed, rect)
    assert audit(t, res.suppressed, primary=p).ok


def test_cleanup_stops_at_its_budget_and_says_so():
    t = table_2d([[1, 5, 8], [6, 7, 8], [8, 8, 9]])
    p = primary_cells(t, ThresholdRule(3))
    lb, ub = a_priori_bounds(t)
    sup = HeuristicSuppression(cleanup=False).apply(t, p).suppressed
    sup[t.cell_index("r2", "c2")] = True
    res = prune_secondaries(t, sup, p, cell_costs(t, "value"), lb, ub, max_lps=0)
    assert not res.complete and res.n_removed == 0 and np.array_equal(res.suppressed, sup)
    assert "partial" in res.statement()


def test_cleanup_refuses_an_unprotected_pattern():
    t = table_2d([[1, 5, 8], [6, 7, 8], [8, 8, 9]])
    p = primary_cells(t, ThresholdRule(3))
    lb, ub = a_priori_bounds(t)
    sup = p.sensitive.copy()
    sup[t.cell_index("r0", "c1")] = True  # row protected, column not: r0/c0 = total - the rest
    with pytest.raises(SolverError, match="does not protect"):
        prune_secondaries(t, sup, p, cell_costs(t, "value"), lb, ub)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 100_000))
def test_cleanup_never_leaves_a_primary_unprotected(seed):
    t = _chain_table(seed)
    p = primary_cells(t, ThresholdRule(3))
    lb, ub = a_priori_bounds(t)
    start = HeuristicSuppression(cleanup=False).apply(t, p).suppressed
    rng = np.random.default_rng(seed)
    noise = (rng.random(t.n_cells) < 0.2) & (t.freq > 0)  # redundant cells on top
    res = prune_secondaries(t, start | noise, p, cell_costs(t, "value"), lb, ub)
    assert audit(t, res.suppressed, primary=p).ok
    assert not (res.suppressed & ~(start | noise)).any()  # only ever publishes
    assert res.complete and res.suppressed[p.sensitive].all()
