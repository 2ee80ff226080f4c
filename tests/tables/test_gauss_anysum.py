"""GaussSuppression's anySum singleton handling (Langsrud 2024, sec. 4; Statistics Norway's
default): no singleton's contributor can determine another sensitive cell, across groups.

The reference computations are dense rank tests on the inner-cells x cells matrix ``X`` (built
by aggregating unit vectors), independent of the elimination's sparse difference basis."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.tables.audit import audit
from sdckit.tables.gauss import GaussSuppression, candidate_order, gauss_pattern
from sdckit.tables.rules import ThresholdRule, primary_cells
from sdckit.tables.table import Hierarchy, Table, aggregate_totals

from .helpers import table_2d


def random_table(seed: int, *, low: int, high: int = 6) -> Table:
    """2 or 3 dimensions, flat or with a 2-level hierarchy, inner counts in [low, high] and a
    few set to 1 or 2 (singletons and small cells)."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 4))
    hs = []
    for d in range(k):
        if rng.random() < 0.5 or k == 3:
            hs.append(Hierarchy.flat([f"{d}x{i}" for i in range(int(rng.integers(2, 4)))]))
        else:
            lines = []
            for g in range(2):
                lines += [f"{d}G{g}"] + [f"@{d}G{g}l{i}" for i in range(int(rng.integers(2, 4)))]
            hs.append(Hierarchy.from_hrc("\n".join(lines)))
    shape = tuple(len(h) for h in hs)
    inner = np.logical_and.reduce(np.meshgrid(*[h.is_leaf for h in hs], indexing="ij")).reshape(-1)
    vals = np.zeros(int(np.prod(shape)))
    vals[inner] = rng.integers(low, high + 1, int(inner.sum()))
    small = rng.choice(np.flatnonzero(inner), 3, replace=False)
    vals[small] = rng.integers(1, 3, 3)
    v = aggregate_totals(hs, shape, vals)
    return Table([f"d{d}" for d in range(k)], hs, v, v.astype(np.int64))


def x_matrix(t: Table) -> np.ndarray:
    inner = np.flatnonzero(t.is_inner)
    x = np.zeros((inner.size, t.n_cells))
    for r, i in enumerate(inner):
        e = np.zeros(t.n_cells)
        e[i] = 1.0
        x[r] = aggregate_totals(t.hierarchies, t.shape, e)
    return x


def in_span(basis: np.ndarray, v: np.ndarray) -> bool:
    if basis.shape[1] == 0:
        return not np.any(v)
    return np.linalg.matrix_rank(np.column_stack([basis, v])) == np.linalg.matrix_rank(basis)


def singletons(t: Table, p) -> np.ndarray:
    return np.flatnonzero(p.sensitive & t.is_inner & (t.freq == 1))


def singleton_leaks(t: Table, p, published: np.ndarray, x: np.ndarray) -> set:
    """Brute force: the pairs (s, q) of a singleton primary s and another primary q such that a
    combination a*y_s + b*y_q (b != 0: their sum, their difference...) is derivable from the
    published cells, i.e. x_q in the span of the published columns and x_s (q = s's equal,
    as a total with one child, is one number and left out)."""
    pub = x[:, published]
    out = set()
    for s in singletons(t, p):
        for q in np.flatnonzero(p.sensitive):
            if q != s and not np.array_equal(x[:, q], x[:, s]) and in_span(np.column_stack([pub, x[:, s]]), x[:, q]):
                out.add((int(s), int(q)))
    return out


def subsum_cells(t: Table, p, x: np.ndarray) -> list:
    """Langsrud's subSum cells by brute force: per cell holding >= 2 primary inner cells, one a
    singleton, the indicator of those inner cells."""
    inner = np.flatnonzero(t.is_inner)
    ip = np.isin(inner, np.flatnonzero(p.sensitive)) & (t.freq[inner] > 0)
    out, seen = [], set()
    for c in range(t.n_cells):
        members = (x[:, c] > 0) & ip
        if p.sensitive[c] or members.sum() < 2 or not (t.freq[inner][members] == 1).any():
            continue
        key = tuple(np.flatnonzero(members))
        if key not in seen:
            seen.add(key)
            out.append(members.astype(float))
    return out


def brute_anysum_greedy(t: Table, p) -> np.ndarray:
    """The greedy rule with the anySum check, by dense ranks: the empty cells are published, then
    each candidate in order is published unless a primary or subSum cell would lie in the span of
    the published columns, or in the span of the published columns and one singleton's column
    (pairs already so with the empty cells alone are known anyway and not counted)."""
    x = x_matrix(t)
    targets = [x[:, c] for c in np.flatnonzero(p.sensitive)] + subsum_cells(t, p, x)
    sing = [x[:, s] for s in singletons(t, p)]
    empty = (t.freq == 0) & ~p.sensitive
    pub = list(np.flatnonzero(empty))

    def pairs(basis):
        return {(i, j) for i, xs in enumerate(sing) for j, v in enumerate(targets)
                if not np.array_equal(v, xs) and in_span(np.column_stack([basis, xs]), v)}

    known = pairs(x[:, pub])
    sup = p.sensitive.copy()
    for c in candidate_order(t):
        if p.sensitive[c] or empty[c]:
            continue
        basis = x[:, pub + [int(c)]]
        if any(in_span(basis, v) for v in targets) or pairs(basis) - known:
            sup[c] = True
        else:
            pub.append(int(c))
    return sup


def test_a_singleton_and_a_primary_in_opposite_corners():
    # the singleton (1) at r0/c0 and a primary (2) at r1/c1: subSum protects sums within a
    # group, and no published group holds both, so the 2 x 2 pattern r0/c1, r1/c0 is accepted.
    # Its contributor knows 1, reads r1/c0 off column c0 and then r1/c1 off row r1
    t = table_2d([[1, 30, 40, 35], [20, 2, 30, 35], [30, 20, 25, 45]])
    p = primary_cells(t, ThresholdRule(3))
    x = x_matrix(t)
    s, q = t.cell_index("r0", "c0"), t.cell_index("r1", "c1")
    sub, _ = gauss_pattern(t, p, singletons="subsum")
    assert (s, q) in singleton_leaks(t, p, ~sub, x)  # the failure anySum prevents
    anysum, _ = gauss_pattern(t, p, singletons="anysum")
    assert singleton_leaks(t, p, ~anysum, x) == set()
    assert (anysum & ~p.sensitive).sum() > (sub & ~p.sensitive).sum()  # it costs more suppressions
    assert not any(in_span(x[:, ~anysum], x[:, c]) for c in np.flatnonzero(p.sensitive))


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 100_000))
def test_no_singleton_leak_on_tables_without_zeros(seed):
    t = random_table(seed, low=1)
    p = primary_cells(t, ThresholdRule(3))
    sup, info = gauss_pattern(t, p, singletons="anysum")
    x = x_matrix(t)
    assert singleton_leaks(t, p, ~sup, x) == set() and info["n_unsafe"] == 0
    assert not any(in_span(x[:, ~sup], x[:, c]) for c in np.flatnonzero(p.sensitive))


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 100_000))
def test_anysum_pattern_equals_the_brute_force_greedy(seed):
    t = random_table(seed, low=0)  # zeros included: their leaks are known anyway
    p = primary_cells(t, ThresholdRule(3))
    got, _ = gauss_pattern(t, p, singletons="anysum")
    assert np.array_equal(got, brute_anysum_greedy(t, p))


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 100_000))
def test_anysum_protects_at_least_the_subsum_cells_and_passes_the_audit(seed):
    t = random_table(seed, low=1)
    p = primary_cells(t, ThresholdRule(3))
    res = GaussSuppression(singletons="anysum").apply(t, p)
    x = x_matrix(t)
    for v in subsum_cells(t, p, x):
        assert not in_span(x[:, ~res.suppressed], v)
    assert audit(t, res.suppressed, primary=p).ok and res.audit.status == "exact"
    assert singleton_leaks(t, p, ~res.suppressed, x) == set()  # the interval repair only adds cells


def test_anysum_from_a_table_spec(tmp_path):
    import pandas as pd

    from sdckit.params import step_params
    from sdckit.tables.registry import table_method_class
    from sdckit.tables.spec import run_table_spec

    choices = {p.name: p.options() for p in step_params(table_method_class("gauss"))}["singletons"]
    assert "anysum" in choices
    rows = [(r, c, n) for r, ns in zip(("a", "b", "c"), ([1, 30, 40], [20, 2, 30], [30, 20, 25]))
            for c, n in zip(("x", "y", "z"), ns)]
    pd.DataFrame(rows, columns=["r", "c", "n"]).to_csv(tmp_path / "cells.csv", index=False)
    (tmp_path / "s.toml").write_text('[input]\ntable = "cells.csv"\nvalue = "n"\n[table]\ndimensions = ["r", "c"]\n'
                                     '[[rules]]\ntype = "threshold"\nn = 3\n'
                                     '[protection]\nmethod = "gauss"\nsingletons = "anysum"\n')
    run = run_table_spec(tmp_path / "s.toml", write=False)
    assert run.to_dict()["audit_ok"] and run.result.params["singletons"] == "anysum"
    t, sup = run.table, run.result.suppressed
    p = run.primary
    assert singleton_leaks(t, p, ~sup, x_matrix(t)) == set()


@pytest.mark.parametrize("bad", ["anySum", "any", ""])
def test_an_unknown_singleton_method_is_refused(bad):
    from sdckit.errors import ParameterError

    with pytest.raises(ParameterError, match="The 'singletons' parameter of GaussSuppression must be one of"):
        GaussSuppression(singletons=bad)
