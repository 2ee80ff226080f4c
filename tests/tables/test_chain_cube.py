"""Hypercubes with chain factors (large sparse tables) and the audit's matrix-free proof check."""

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import ParameterError
from sdckit.tables.audit import a_priori_bounds, audit
from sdckit.tables.audit_large import ProofSet, protection_audit, relation_residuals
from sdckit.tables.chain_cube import ChainCubeSuppression, chain_moves
from sdckit.tables.registry import build_table_method
from sdckit.tables.rules import ThresholdRule, primary_cells
from sdckit.tables.suppression import cell_costs
from sdckit.tables.table import Hierarchy, Table, aggregate_totals

from .helpers import table_2d


def _hierarchy(rng, d: int) -> Hierarchy:
    """A flat dimension, or 2-3 levels with 1-3 children per node."""
    kind = int(rng.integers(0, 3))
    if kind == 0:
        return Hierarchy.flat([f"{d}x{i}" for i in range(int(rng.integers(2, 4)))])
    lines = []
    for g in range(int(rng.integers(1, 3))):
        lines.append(f"{d}G{g}")
        for m in range(int(rng.integers(1, 3))):
            lines.append(f"@{d}G{g}m{m}")
            if kind == 2:
                lines += [f"@@{d}G{g}m{m}l{i}" for i in range(int(rng.integers(1, 3)))]
    return Hierarchy.from_hrc("\n".join(lines))


def _sparse_table(seed: int, k_max: int = 4) -> Table:
    """2..k_max dimensions (flat or 2-3 levels, single children included), most inner cells empty,
    the non-empty ones small counts (so most are sensitive), as in the sdcTable #146 shape."""
    rng = np.random.default_rng(seed)
    hs = [_hierarchy(rng, d) for d in range(int(rng.integers(2, k_max + 1)))]
    shape = tuple(len(h) for h in hs)
    inner = np.zeros(shape)
    leaf_grid = np.ix_(*[np.flatnonzero(h.is_leaf) for h in hs])
    sub = inner[leaf_grid]
    dens = rng.uniform(0.1, 0.6)
    sub = np.where(rng.random(sub.shape) < dens, rng.geometric(0.5, sub.shape), 0).astype(float)
    if not sub.any():
        sub.flat[0] = 1.0
    inner[leaf_grid] = sub
    v = aggregate_totals(hs, shape, inner.reshape(-1))
    return Table([f"v{d}" for d in range(len(hs))], hs, v, v.astype(np.int64))


def _moves(res):
    ps = res.proofs
    return [ps.move(i) for i in range(ps.n_moves)]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6))
def test_every_move_is_in_the_kernel_and_touches_only_nonempty_suppressed_cells(seed):
    t = _sparse_table(seed)
    p = primary_cells(t, ThresholdRule(3))
    w = cell_costs(t, "value")
    lb, ub = a_priori_bounds(t)
    sup, proofs, failed = chain_moves(t, p, w, lb, ub)
    m = t.relations  # the full relation matrix, independent of the method and of relation_residuals
    owners = set()
    for i in range(proofs.n_moves):
        cells, sg = proofs.move(i)
        d = np.zeros(t.n_cells)
        d[cells] = sg
        assert np.unique(cells).size == cells.size
        assert np.abs(m @ d).max(initial=0) == 0
        assert sup[cells].all()
        assert ((t.freq[cells] > 0) | p.sensitive[cells]).all()  # never an empty published cell
        owner = int(proofs.owner[i])
        owners.add(owner)
        assert d[owner] == 1
    # every primary with a level is covered by a move or handed to the LP fallback
    prim = np.flatnonzero(p.sensitive & ((p.upper > 0) | (p.lower > 0)))
    covered = np.zeros(t.n_cells, bool)
    for i in range(proofs.n_moves):
        covered[proofs.move(i)[0]] = True
    assert (covered[prim] | np.isin(prim, failed)).all()
    # frequency table, threshold rule, default bounds: every non-empty primary has a move
    assert failed.size == 0
    # only primaries and the moves' cells are suppressed
    assert (sup == (p.sensitive | covered)).all()


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10**6))
def test_pattern_passes_the_independent_full_audit_and_inputs_are_unchanged(seed):
    t = _sparse_table(seed, k_max=3)
    p = primary_cells(t, ThresholdRule(3))
    before = (t.value.copy(), t.freq.copy(), p.sensitive.copy(), p.upper.copy(), p.lower.copy())
    res = ChainCubeSuppression(audit_lps=None, audit_seconds=None).apply(t, p)
    # the two-LPs-per-cell audit of tables/audit.py, which takes no proofs
    again = audit(t, res.suppressed, primary=p)
    assert again.ok and res.audit.ok and res.audit.status == "exact"
    assert res.suppressed[p.sensitive].all()
    assert res.n_lp_fallback == 0 and res.audit.n_lps == 0  # the moves alone prove every primary
    for a, b in zip(before, (t.value, t.freq, p.sensitive, p.upper, p.lower)):
        assert np.array_equal(a, b)


def test_hand_computed_cheapest_move_is_the_sibling_rectangle():
    # rows r0..r2 x cols c0..c2 with totals; the one primary is (r0, c0) = 1. By hand (cost =
    # value): rectangle with r1, c1 -> cells 5, 6, 7 cost 18; r0-chain x c1 pair -> 5, 7, 21
    # (the column total of c1 is 5+7+9) ... every chain costs more; r2 and c2 pairs hit an empty cell.
    inner = [[1, 5, 0], [6, 7, 8], [0, 9, 9]]
    t = table_2d(inner)
    p = primary_cells(t, ThresholdRule(3))
    res = ChainCubeSuppression().apply(t, p)
    got = sorted(t.cell_codes(c) for c in np.flatnonzero(res.secondary))
    assert got == [("r0", "c1"), ("r1", "c0"), ("r1", "c1")]
    assert res.cost == 18.0 and res.audit.ok


def test_no_sibling_takes_the_chains_to_the_grand_total():
    # (r0, c0) = 1 has only empty neighbours: the move is the chain in both dimensions, its cell,
    # the two marginals (both 1, themselves primary) and the grand total (the one secondary)
    t = table_2d([[1, 0], [0, 9]])
    p = primary_cells(t, ThresholdRule(3))
    res = ChainCubeSuppression().apply(t, p)
    assert [t.cell_codes(c) for c in np.flatnonzero(res.secondary)] == [("Total", "Total")]
    assert res.audit.ok and audit(t, res.suppressed, primary=p).ok


def test_audit_proves_everything_without_building_the_relation_matrix():
    t = _sparse_table(7, k_max=4)
    p = primary_cells(t, ThresholdRule(3))
    res = ChainCubeSuppression(audit_lps=0, audit_seconds=0.0).apply(t, p)
    assert res.audit.status == "exact" and res.audit.ok and res.audit.n_lps == 0
    assert t._relations is None  # neither the method nor the audit built M


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10**6), st.booleans())
def test_relation_residuals_equal_the_sparse_product(seed, one_key):
    # any direction, in the kernel or not: the per-dimension residual equals max |M d| by scipy
    rng = np.random.default_rng(seed)
    t = _sparse_table(seed, k_max=3)
    n_items = int(rng.integers(1, 5))
    rows, sg, col = [], [], []
    for i in range(n_items):
        cells = rng.choice(t.n_cells, size=int(rng.integers(1, min(8, t.n_cells) + 1)), replace=False)
        rows.append(cells)
        sg.append(rng.integers(-2, 3, cells.size).astype(float))
        col.append(np.full(cells.size, i))
    rows, sg, col = np.concatenate(rows), np.concatenate(sg), np.concatenate(col)
    want = np.zeros(n_items)
    for i in range(n_items):
        d = np.zeros(t.n_cells)
        d[rows[col == i]] = sg[col == i]
        want[i] = np.abs(t.relations @ d).max(initial=0)
    import sdckit.tables.audit_large as al

    limit = al._ONE_KEY_LIMIT
    al._ONE_KEY_LIMIT = limit if one_key else 0  # 0: the lexsort path for huge tables
    try:
        assert np.allclose(relation_residuals(t, rows, sg, col, n_items), want)
    finally:
        al._ONE_KEY_LIMIT = limit


def test_a_proofset_and_the_same_moves_as_a_dict_give_the_same_audit():
    t = _sparse_table(3)
    p = primary_cells(t, ThresholdRule(3))
    res = ChainCubeSuppression().apply(t, p)
    as_dict = {i: res.proofs.move(i) for i in range(res.proofs.n_moves)}
    a = protection_audit(t, res.suppressed, p, max_lps=0, cpu_budget=None, proofs=res.proofs)
    b = protection_audit(t, res.suppressed, p, max_lps=0, cpu_budget=None, proofs=as_dict)
    assert a.status == b.status == "exact" and a.n_proven_by_given == b.n_proven_by_given == p.n_primary
    assert np.array_equal(a.up_reach, b.up_reach) and np.array_equal(a.dn_reach, b.dn_reach)


def test_audit_rejects_a_proofset_move_outside_the_kernel_or_on_a_published_cell():
    t = table_2d([[1, 5], [6, 7]])
    p = primary_cells(t, ThresholdRule(3))
    cell = [t.cell_index(r, c) for r, c in (("r0", "c0"), ("r0", "c1"), ("r1", "c0"), ("r1", "c1"))]
    sup = np.zeros(t.n_cells, bool)
    sup[cell] = True
    good = (np.array(cell), np.array([1, -1, -1, 1]))
    bad_kernel = (np.array(cell[:3]), np.array([1, -1, -1]))
    dup = (np.array([cell[0], cell[0], cell[1], cell[2], cell[3]]), np.array([1, 0, -1, -1, 1]))
    published = sup.copy()
    published[cell[3]] = False  # the good move, but one of its cells is published
    for (c, g), pattern, n_bad in ((good, sup, 0), (bad_kernel, sup, 1), (good, published, 1), (dup, sup, 1)):
        ps = ProofSet(c, g, np.array([0, c.size]))
        a = protection_audit(t, pattern, p, max_lps=0, cpu_budget=None, proofs=ps)
        assert a.n_proofs_rejected == n_bad
        assert a.status == ("exact" if n_bad == 0 else "sampled")  # no LP allowed: unproven is not audited


def test_registered_method_runs_and_refuses_bad_settings():
    t = _sparse_table(11)
    p = primary_cells(t, ThresholdRule(3))
    res = build_table_method("chain_hypercube", {"cost": "unity"}).apply(t, p)
    assert res.audit.status == "exact" and res.method == "chain_hypercube"
    with pytest.raises(ParameterError):
        ChainCubeSuppression(max_pairs=0)


def test_magnitude_levels_beyond_the_cells_fall_back_to_lps():
    # an a-priori upper bound tight enough that no single move reaches the level: LP fallback
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = pd.DataFrame({"r": ["a", "a", "b", "b"], "c": ["x", "y", "x", "y"], "n": [1, 1, 1, 1]})
        t = Table.from_cells(df, ["r", "c"], "n")
    p = primary_cells(t, ThresholdRule(3))
    res = ChainCubeSuppression(upper_bound=1.5, audit_lps=None, audit_seconds=None).apply(t, p)
    assert res.n_lp_fallback > 0
    assert res.audit.status in ("exact", "failed")
    assert res.audit.ok == audit(t, res.suppressed, primary=p, upper_bound=1.5).ok


def test_spec_runs_the_method_by_its_registered_name(tmp_path):
    from sdckit.tables.spec import run_table_spec

    rows = [(r, c, n) for r, ns in zip("ab", ([5, 1, 7], [6, 4, 2])) for c, n in zip("xyz", ns)]
    pd.DataFrame(rows, columns=["r", "c", "n"]).to_csv(tmp_path / "cells.csv", index=False)
    (tmp_path / "s.toml").write_text('[input]\ntable = "cells.csv"\nvalue = "n"\n[table]\ndimensions = ["r", "c"]\n'
                                     '[[rules]]\ntype = "threshold"\nn = 3\n[protection]\n'
                                     'method = "chain_hypercube"\nmax_pairs = 2\n')
    run = run_table_spec(tmp_path / "s.toml", write=False)
    sup = np.asarray(run.result.status) == "suppressed"
    assert run.result.method == "chain_hypercube" and run.result.audit.status == "exact"
    # the two sensitive cells (1 and 2) and their partners pass the full audit
    assert audit(run.result.table, sup, primary=primary_cells(run.result.table, ThresholdRule(3))).ok
