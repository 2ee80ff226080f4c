"""Secondary suppression by Gaussian elimination (Langsrud 2024) with interval protection."""

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import ParameterError
from sdckit.tables.audit import audit
from sdckit.tables.gauss import GaussSuppression, candidate_order, gauss_pattern, model_columns
from sdckit.tables.rules import ThresholdRule, primary_cells
from sdckit.tables.suppression import OptimalSuppression
from sdckit.tables.table import Hierarchy, Table, aggregate_totals

from .helpers import table_2d


def _table(seed: int, *, low: int = 1, high: int = 9, dims: int | None = None) -> Table:
    """2 or 3 dimensions, each flat or a 2-level hierarchy; inner counts uniform in [low, high],
    with a few forced to 1 or 2 so that there are primaries."""
    rng = np.random.default_rng(seed)
    k = dims or int(rng.integers(2, 4))
    hs = []
    for d in range(k):
        if rng.random() < 0.5 or k == 3:
            hs.append(Hierarchy.flat([f"{d}x{i}" for i in range(int(rng.integers(2, 4)))]))
        else:
            lines = []
            for g in range(2):
                lines.append(f"{d}G{g}")
                lines += [f"@{d}G{g}l{i}" for i in range(int(rng.integers(2, 4)))]
            hs.append(Hierarchy.from_hrc("\n".join(lines)))
    shape = tuple(len(h) for h in hs)
    inner_mask = np.logical_and.reduce(np.meshgrid(*[h.is_leaf for h in hs], indexing="ij")).reshape(-1)
    vals = np.zeros(int(np.prod(shape)))
    vals[inner_mask] = rng.integers(low, high + 1, int(inner_mask.sum()))
    small = rng.choice(np.flatnonzero(inner_mask), 2, replace=False)
    vals[small] = rng.integers(1, 3, 2)
    v = aggregate_totals(hs, shape, vals)
    return Table([f"d{d}" for d in range(k)], hs, v, v.astype(np.int64))


def _x_matrix(t: Table) -> np.ndarray:
    """Inner cells x cells, 1 where the inner cell is part of the cell (built by aggregating unit
    vectors, independent of the elimination's difference basis)."""
    inner = np.flatnonzero(t.is_inner)
    x = np.zeros((inner.size, t.n_cells))
    for r, i in enumerate(inner):
        e = np.zeros(t.n_cells)
        e[i] = 1.0
        x[r] = aggregate_totals(t.hierarchies, t.shape, e)
    return x


def _in_span(basis: np.ndarray, v: np.ndarray) -> bool:
    if basis.shape[1] == 0:
        return not np.any(v)
    r0 = np.linalg.matrix_rank(basis)
    return np.linalg.matrix_rank(np.column_stack([basis, v])) == r0


def _brute_greedy(t: Table, p, order: np.ndarray, singletons: bool) -> np.ndarray:
    """The greedy rule of Langsrud (2024, sec. 3) by dense ranks: the empty cells are published,
    then each candidate in order is published unless a primary (or a subSum cell) would then lie
    in the span of the published columns."""
    x = _x_matrix(t)
    inner = np.flatnonzero(t.is_inner)
    targets = [x[:, c] for c in np.flatnonzero(p.sensitive)]
    if singletons:
        ip = np.isin(inner, np.flatnonzero(p.sensitive)) & (t.freq[inner] > 0)
        seen = set()
        for c in range(t.n_cells):
            members = (x[:, c] > 0) & ip
            if p.sensitive[c] or members.sum() < 2 or not (t.freq[inner][members] == 1).any():
                continue
            key = tuple(np.flatnonzero(members))
            if key not in seen:
                seen.add(key)
                targets.append(members.astype(float))
    empty = (t.freq == 0) & ~p.sensitive
    pub = list(np.flatnonzero(empty))
    sup = p.sensitive.copy()
    for c in order:
        if p.sensitive[c] or empty[c]:
            continue
        basis = x[:, pub + [c]]
        if any(_in_span(basis, v) for v in targets):
            sup[c] = True
        else:
            pub.append(int(c))
    return sup


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 100_000), st.booleans())
def test_pattern_equals_the_brute_force_greedy(seed, singletons):
    t = _table(seed, low=0, high=6)
    p = primary_cells(t, ThresholdRule(3))
    got, info = gauss_pattern(t, p, singletons="subsum" if singletons else "none")
    want = _brute_greedy(t, p, candidate_order(t), singletons)
    assert np.array_equal(got, want)
    assert info["n_unsafe"] == 0


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 100_000))
def test_every_primary_meets_its_interval_in_the_exact_audit(seed):
    t = _table(seed)
    p = primary_cells(t, ThresholdRule(3))
    res = GaussSuppression().apply(t, p)
    # the full LP audit (two LPs per suppressed cell), independent of the method's own audit
    again = audit(t, res.suppressed, primary=p)
    assert again.ok and res.audit.ok and res.audit.status == "exact"
    assert res.suppressed[p.sensitive].all()


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 100_000))
def test_no_primary_depends_linearly_on_the_published_cells(seed):
    t = _table(seed, low=0, high=5)
    p = primary_cells(t, ThresholdRule(3))
    res = GaussSuppression(interval_protection=False).apply(t, p)
    x = _x_matrix(t)
    pub = x[:, ~res.suppressed]
    for c in np.flatnonzero(p.sensitive):
        assert not _in_span(pub, x[:, c])


def test_zeros_are_never_secondaries_and_intervals_hold():
    # inner cells with zeros around a primary: the zeros are known to be 0, so publishing them
    # protects nothing; the pattern must use non-empty cells
    inner = [[1, 0, 7, 5], [0, 0, 6, 8], [4, 9, 0, 3]]
    t = table_2d(inner)
    p = primary_cells(t, ThresholdRule(3))
    res = GaussSuppression().apply(t, p)
    assert not (res.suppressed & (t.freq == 0)).any()
    again = audit(t, res.suppressed, primary=p)
    assert again.ok
    # the same table through the optimal method: gauss can be dearer, never cheaper than optimal
    opt = OptimalSuppression().apply(t, p)
    assert opt.proven_optimal and opt.cost <= res.cost + 1e-9


def test_singleton_sum_is_protected():
    # row r0: a singleton (1) and a pair (2) are primaries next to large cells. Without the
    # singleton handling the contributor of the singleton, who knows it is 1, learns the pair's
    # value from the row total if every other cell of the row is published
    inner = [[1, 2, 30, 40], [20, 25, 30, 35], [30, 20, 25, 45]]
    t = table_2d(inner)
    p = primary_cells(t, ThresholdRule(3))
    x = _x_matrix(t)
    s = t.cell_index("r0", "c0")
    pair = t.cell_index("r0", "c1")
    e_s = x[:, s]

    def pair_known_to_singleton(sup):
        return _in_span(np.column_stack([x[:, ~sup], e_s]), x[:, pair])

    plain, _ = gauss_pattern(t, p, singletons="none")
    assert pair_known_to_singleton(plain)  # the failure the singleton handling prevents
    handled, info = gauss_pattern(t, p, singletons="subsum")
    assert info["n_virtual_primaries"] >= 1
    assert not pair_known_to_singleton(handled)


def test_difference_basis_keeps_the_linear_dependencies():
    # the sparse columns (2^K entries) have the same rank on every subset of cells as X itself
    t = _table(7, dims=2)
    rows, signs, n_rows = model_columns(t)
    z = np.zeros((n_rows, t.n_cells))
    for c in range(t.n_cells):
        z[rows[c], c] = signs
    x = _x_matrix(t)
    rng = np.random.default_rng(0)
    for _ in range(20):
        cols = rng.choice(t.n_cells, int(rng.integers(1, t.n_cells)), replace=False)
        assert np.linalg.matrix_rank(z[:, cols]) == np.linalg.matrix_rank(x[:, cols])


def test_registered_method_runs_from_its_declaration():
    from sdckit.tables.registry import build_table_method

    t = table_2d([[1, 6, 8], [4, 5, 9], [7, 2, 6]])
    p = primary_cells(t, ThresholdRule(3))
    m = build_table_method("gauss", {"order": "value", "singletons": "none"})
    res = m.apply(t, p)
    assert res.method == "gauss" and res.audit.status == "exact" and res.audit.ok
    assert (res.status == "suppressed").sum() >= 4


def test_parameters_are_checked():
    with pytest.raises(ParameterError, match="'order' parameter of GaussSuppression"):
        GaussSuppression(order="random")
    with pytest.raises(ParameterError, match="'singletons' parameter"):
        GaussSuppression(singletons="subspace")  # a method of the R package not offered here


def test_microdata_table_with_a_hierarchy():
    rng = np.random.default_rng(3)
    h = Hierarchy.from_hrc("A\n@a1\n@a2\nB\n@b1\n@b2\n@b3")
    df = pd.DataFrame({"reg": rng.choice(list(h.leaves), 60), "act": rng.choice(["x", "y", "z"], 60)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = Table.from_microdata(df, ["reg", "act"], hierarchies={"reg": h})
    p = primary_cells(t, ThresholdRule(3))
    res = GaussSuppression(cost="freq").apply(t, p)
    assert audit(t, res.suppressed, primary=p).ok
    assert res.to_dict()["audit"]["status"] == "exact"


def test_table_spec_with_method_gauss(tmp_path):
    from sdckit.tables.cli import table_command

    rng = np.random.default_rng(11)
    df = pd.DataFrame({"a": rng.choice([f"a{i:02d}" for i in range(8)], 250),
                       "b": rng.choice([f"b{i:02d}" for i in range(8)], 250)})
    df.to_csv(tmp_path / "micro.csv", index=False)
    spec = tmp_path / "s.toml"
    spec.write_text('[input]\nmicrodata = "micro.csv"\n[table]\ndimensions = ["a", "b"]\n'
                    '[[rules]]\ntype = "threshold"\nn = 3\n[protection]\nmethod = "gauss"\ncost = "freq"\n'
                    'audit_lps = 100000\n')
    summary, run = table_command(str(spec))
    assert summary["audit_status"] == "exact" and summary["audit_ok"] is True
    assert summary["n_primary"] > 0
    assert "gauss" in run.describe()
