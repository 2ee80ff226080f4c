import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import ParameterError
from sdckit.tables.audit import audit
from sdckit.tables.modular import ModularSuppression, subtables
from sdckit.tables.rules import ThresholdRule, primary_cells
from sdckit.tables.suppression import HeuristicSuppression, OptimalSuppression, cell_costs
from sdckit.tables.table import Hierarchy, Table

from .helpers import seed_table, table_2d


def _random_table(seed: int, rmax: int = 5, cmax: int = 5) -> Table:
    rng = np.random.default_rng(seed)
    r, c = int(rng.integers(2, rmax + 1)), int(rng.integers(2, cmax + 1))
    return table_2d(rng.integers(0, 12, size=(r, c)))


def _hier_table(seed: int, n: int = 400) -> Table:
    """A 2-D table whose rows are a 3-level hierarchy (2 regions x 2 provinces x 2 towns)."""
    rng = np.random.default_rng(seed)
    h = Hierarchy.from_hrc("A\n@A1\n@@a11\n@@a12\n@A2\n@@a21\n@@a22\nB\n@B1\n@@b11\n@@b12\n@B2\n@@b21\n@@b22\n")
    leaves = list(h.leaves)
    df = pd.DataFrame({"reg": rng.choice(leaves, n, p=rng.dirichlet(np.full(len(leaves), 0.8))),
                       "ind": rng.choice(["x", "y", "z", "w"], n, p=rng.dirichlet(np.ones(4)))})
    return Table.from_microdata(df, ["reg", "ind"], hierarchies={"reg": h})


@settings(max_examples=12)
@given(st.integers(0, 10_000))
def test_every_pattern_passes_the_audit_and_optimal_beats_heuristic(seed):
    t = _random_table(seed)
    p = primary_cells(t, ThresholdRule(3))
    opt = OptimalSuppression().apply(t, p)
    heu = HeuristicSuppression().apply(t, p)
    mod = ModularSuppression().apply(t, p)
    for res in (opt, heu, mod):
        # re-audit independently of the result's own audit
        again = audit(t, res.suppressed, primary=p)
        assert again.ok and res.audit.ok
        assert (res.suppressed[p.sensitive]).all()
    assert opt.proven_optimal
    assert opt.cost <= heu.cost + 1e-9
    assert opt.cost <= mod.cost + 1e-9


@settings(max_examples=6)
@given(st.integers(0, 10_000))
def test_hierarchical_patterns_pass_the_audit(seed):
    t = _hier_table(seed)
    p = primary_cells(t, ThresholdRule(3))
    opt = OptimalSuppression().apply(t, p)
    for res in (opt, HeuristicSuppression().apply(t, p), ModularSuppression().apply(t, p)):
        assert audit(t, res.suppressed, primary=p).ok
        assert opt.cost <= res.cost + 1e-9


def _brute_force_optimum(t: Table, p, among=None) -> float:
    """Cheapest pattern by enumerating every subset of the candidate cells (checked by the audit)."""
    w = cell_costs(t, "value")
    ok = ~p.sensitive & (t.freq > 0) & (True if among is None else among)
    cand = np.flatnonzero(ok)
    subsets = np.array(list(itertools.product([0, 1], repeat=cand.size)), dtype=bool)
    costs = subsets.astype(float) @ w[cand]
    for k in np.argsort(costs, kind="stable"):
        sup = p.sensitive.copy()
        sup[cand[subsets[k]]] = True
        if audit(t, sup, primary=p).ok:
            return float(costs[k])
    raise AssertionError("no pattern protects the table")


@settings(max_examples=8)
@given(st.integers(0, 10_000))
def test_optimal_matches_brute_force_on_tiny_tables(seed):
    rng = np.random.default_rng(seed)
    inner = rng.integers(0, 9, size=(2, 3))
    inner[rng.integers(0, 2), rng.integers(0, 3)] = rng.integers(1, 3)  # at least one primary
    t = table_2d(inner)
    p = primary_cells(t, ThresholdRule(3))
    opt = OptimalSuppression().apply(t, p)
    assert opt.proven_optimal
    assert opt.cost == pytest.approx(_brute_force_optimum(t, p))


def test_seed_table_optimal_pattern_is_cheaper_than_the_seeds():
    t = seed_table()
    p = primary_cells(t, ThresholdRule(3))
    res = OptimalSuppression().apply(t, p)
    # the seed's secondaries Alpha/High (3), Gamma/High (10), Delta/Medium (14) cost 27 and pass the audit
    seed_sup = p.sensitive.copy()
    for c in [("Alpha", "High"), ("Gamma", "High"), ("Delta", "Medium")]:
        seed_sup[t.cell_index(*c)] = True
    assert audit(t, seed_sup, primary=p).ok
    assert res.proven_optimal and res.n_secondary == 3
    # reference: enumerating the 2^12 subsets of the non-primary inner cells gives 20; every
    # total costs at least 20 (the smallest margins are 20), so no pattern using one is cheaper
    assert _brute_force_optimum(t, p, among=t.is_inner) == pytest.approx(20)
    assert t.value[~t.is_inner].min() == 20
    assert res.cost == pytest.approx(20)


def test_time_limit_returns_the_audited_heuristic_marked_not_optimal():
    rng = np.random.default_rng(0)
    t = table_2d(rng.integers(0, 6, size=(12, 12)))
    p = primary_cells(t, ThresholdRule(3))
    assert p.n_primary > 5
    res = OptimalSuppression(time_limit=1e-6).apply(t, p)
    assert not res.proven_optimal and "time limit" in res.status
    assert res.audit.ok and audit(t, res.suppressed, primary=p).ok
    d = res.to_dict()
    assert d["proven_optimal"] is False and d["audit_ok"] is True


def test_three_dimensional_table():
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"a": rng.choice(list("pqr"), 120), "b": rng.choice(list("xyz"), 120),
                       "c": rng.choice(list("uv"), 120)})
    t = Table.from_microdata(df, ["a", "b", "c"])
    p = primary_cells(t, ThresholdRule(4))
    assert p.n_primary > 0
    opt = OptimalSuppression().apply(t, p)
    heu = HeuristicSuppression().apply(t, p)
    assert opt.audit.ok and heu.audit.ok and opt.cost <= heu.cost + 1e-9


def test_subtables_of_a_hierarchy_cover_every_relation():
    t = _hier_table(1)
    subs = subtables(t)
    # 7 non-leaf row nodes (Total, A, A1, A2, B, B1, B2) x 1 non-leaf column node
    assert len(subs) == 7
    assert subs[0][0] == (0, 0)  # top-down: the grand total's subtable first
    def rel_sets(m, cells):
        m = m.tocsr()
        return {frozenset(cells[m.indices[m.indptr[r]:m.indptr[r + 1]]].tolist()) for r in range(m.shape[0])}

    whole = rel_sets(t.relations, np.arange(t.n_cells))
    parts = set().union(*(rel_sets(Table(t.dims, hs, t.value[c], t.freq[c]).relations, c) for _, c, hs in subs))
    assert parts == whole  # every relation of the table lies in some subtable, and no other


def test_magnitude_table_with_dominance_rule():
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"a": rng.choice(list("pqrs"), 200), "b": rng.choice(list("xyz"), 200),
                       "t": rng.lognormal(3, 1.5, 200)})
    t = Table.from_microdata(df, ["a", "b"], response="t")
    from sdckit.tables.rules import DominanceRule
    p = primary_cells(t, DominanceRule(n=1, k=60))
    assert p.n_primary > 0
    res = OptimalSuppression().apply(t, p)
    assert res.audit.ok and res.proven_optimal


def test_parameter_errors():
    with pytest.raises(ParameterError, match="cost"):
        OptimalSuppression(cost="weird")
    with pytest.raises(ParameterError, match="time_limit"):
        HeuristicSuppression(time_limit=0)


def test_negative_magnitudes_with_dominance_rule():
    # profits can be negative: the rules use absolute contributions (with a warning saying so)
    # and the attacker's a-priori bounds become (-inf, inf)
    rng = np.random.default_rng(4)
    df = pd.DataFrame({"a": rng.choice(list("pqr"), 60), "b": rng.choice(list("xyz"), 60),
                       "t": rng.normal(0, 40, 60)})
    from sdckit.errors import InputWarning
    from sdckit.tables.rules import DominanceRule
    with pytest.warns(InputWarning, match="absolute contributions"):
        t = Table.from_microdata(df, ["a", "b"], response="t")
    assert (t.value < 0).any()
    p = primary_cells(t, DominanceRule(n=1, k=50))
    assert p.n_primary > 0
    res = OptimalSuppression().apply(t, p)
    from sdckit.tables.audit import a_priori_bounds
    assert np.all(a_priori_bounds(t)[0] == -np.inf)  # no lower bound is assumed for a signed table
    assert res.audit.ok and audit(t, res.suppressed, primary=p).ok


def test_tauargus_cost_scaling_by_hand():
    """tau-Argus' costs: value x 20,000 / largest cell, rounded half up, at least 1. Inner
    cells 1, 3 / 2, 2 give totals 4, 4 / 3, 5 and grand total 8 (the largest cell), so the
    scale is 2,500: 1 -> 2500, 3 -> 7500, 8 -> 20000 (hand computation)."""
    t = table_2d(np.array([[1, 3], [2, 2]]))
    w = cell_costs(t, "tauargus")
    assert w.max() == 20_000 and set(np.unique(w)) == {2500, 5000, 7500, 10000, 12500, 20000}
    assert np.array_equal(w, np.floor(np.abs(t.value) * 2500 + 0.5))
    big = table_2d(np.array([[1, 100_000], [2, 2]]))
    assert cell_costs(big, "tauargus").min() == 1      # 1 x 20,000 / 100,005 rounds to 0 -> 1
