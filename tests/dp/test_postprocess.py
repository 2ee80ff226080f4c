"""Consistent post-processing: each subproblem against an independent solver on small cases,
and the promises on whole tables (hypothesis): totals add up, no negative cell, invariants
exact, the same input gives the same output."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdckit.dp import postprocess as P
from sdckit.dp.postprocess import TopDownLayout, aggregation_matrix, check_consistency, topdown
from sdckit.dp.synthetic import geography, synthetic_counts
from sdckit.tables.table import Hierarchy, Table


def _qp_reference(z, A_eq, b_eq):
    """Independent reference: HiGHS' QP solver on min ||x - z||^2, A_eq x = b_eq, x >= 0."""
    import highspy
    import scipy.sparse as sp

    from sdckit._highs import build_lp, new_highs

    n = z.size
    h = new_highs()
    model = highspy.HighsModel()
    model.lp_ = build_lp(sp.csc_matrix(A_eq), cost=-2 * z, col_lower=np.zeros(n), col_upper=np.full(n, np.inf),
                         row_lower=b_eq.astype(float), row_upper=b_eq.astype(float))
    hess = highspy.HighsHessian()
    hess.dim_ = n
    hess.format_ = highspy.HessianFormat.kTriangular
    hess.start_ = np.arange(n + 1, dtype=np.int32)
    hess.index_ = np.arange(n, dtype=np.int32)
    hess.value_ = np.full(n, 2.0)
    model.hessian_ = hess
    h.passModel(model)
    h.run()
    assert h.modelStatusToString(h.getModelStatus()) == "Optimal"
    return np.asarray(h.getSolution().col_value)


@pytest.mark.parametrize("seed", range(6))
def test_simplex_projection_meets_its_optimality_conditions(seed):
    rng = np.random.default_rng(seed)
    v = rng.normal(2, 4, size=7)
    h = float(rng.integers(0, 20))
    out = np.empty_like(v)
    P.project_simplex(v, h, out)
    assert out.min() >= 0 and out.sum() == pytest.approx(h, abs=1e-9)
    if h > 0:
        # KKT of min ||x - v||^2, sum x = h, x >= 0 (sufficient, the problem being convex):
        # x_i = max(v_i - tau, 0) for one tau
        pos = out > 0
        tau = (v - out)[pos]
        assert np.ptp(tau) < 1e-9 and (v[~pos] <= tau[0] + 1e-9).all()
    assert out == pytest.approx(_qp_reference(v, np.ones((1, v.size)), np.array([h])), abs=1e-6)


def test_rounding_keeps_the_sum_and_is_l1_closest():
    rng = np.random.default_rng(1)
    for _ in range(50):
        x = rng.uniform(0, 4, size=4)
        x = x / x.sum() * 9  # sums to 9
        out = np.empty(4, np.int64)
        P.round_keep_sum(x, 9, out)
        assert out.sum() == 9 and out.min() >= 0
        # brute force over every non-negative integer vector summing to 9
        best = min(sum(abs(np.array(c) - x)) for c in itertools.product(range(10), repeat=4) if sum(c) == 9)
        assert np.abs(out - x).sum() == pytest.approx(best)


def test_transport_fit_and_rounding_match_independent_solvers():
    rng = np.random.default_rng(3)
    truth = rng.integers(0, 6, size=(3, 4))
    T, h = truth.sum(axis=1), truth.sum(axis=0)
    Z = truth + rng.normal(0, 2, size=truth.shape)
    X = P.transport_fit(Z, T, h, True, tol=1e-12)
    A = np.vstack([np.kron(np.eye(3), np.ones(4)), np.kron(np.ones(3), np.eye(4))])
    ref = _qp_reference(Z.reshape(-1), A, np.r_[T, h]).reshape(3, 4)
    assert X == pytest.approx(ref, abs=1e-5)
    R = P.transport_round(X, T, h, True)
    assert (R.sum(axis=1) == T).all() and (R.sum(axis=0) == h).all() and R.min() >= 0
    # brute force: every integer table within one of floor/ceil of X with these margins
    ranges = [range(max(0, int(np.floor(x)) - 1), int(np.ceil(x)) + 2) for x in X.reshape(-1)]
    best = np.inf
    for c in itertools.product(*ranges[:8]):
        c = np.array(c).reshape(2, 4)
        last = T[2] * 0 + h - c.sum(axis=0)   # the third row is forced by the column sums
        if (last < 0).any() or last.sum() != T[2] or (c.sum(axis=1) != T[:2]).any():
            continue
        full = np.vstack([c, last])
        best = min(best, np.abs(full - X).sum())
    assert np.abs(R - X).sum() == pytest.approx(best, abs=1e-9)


def test_least_squares_fit_per_unit_is_the_normal_equations():
    t = synthetic_counts((2,), (2, 3), rng=0)
    lay = TopDownLayout.from_hierarchies(t.hierarchies, 0)
    y = t.value + np.random.default_rng(1).normal(0, 2, t.n_cells)
    z = lay.fit(y)
    A = np.kron(aggregation_matrix(t.hierarchies[1]), aggregation_matrix(t.hierarchies[2]))
    yg = lay.to_geo_first(y).reshape(len(t.hierarchies[0]), -1)
    ref = np.linalg.lstsq(A, yg.T, rcond=None)[0].T
    assert z == pytest.approx(ref, abs=1e-10)


def test_a_hand_made_table_is_made_consistent():
    # geography Total > {A, B}, one flat dimension {x, y}; noisy cells include negatives
    geo = Hierarchy(["T", "A", "B"], [-1, 0, 0])
    cat = Hierarchy.flat(["x", "y"])
    true = np.array([[10, 6, 4], [7, 5, 2], [3, 1, 2]], float).reshape(-1)
    t = Table(["geo", "c"], [geo, cat], true, true.astype(np.int64))
    noisy = true + np.array([1, -2, 3, 0, 1, -1, -4, 2, -3])
    lay = TopDownLayout.from_hierarchies(t.hierarchies, 0)
    cells, X, info = topdown(lay, noisy, invariant_totals={0: 10})
    chk = check_consistency(t, cells, invariant_cells={0: 10})
    assert chk["ok"] and cells[0] == 10 and cells.min() >= 0
    assert info["n_closed_form"] == 1 and info["n_lp"] == 0


def test_invariant_children_use_the_lp_and_hold_exactly():
    t = synthetic_counts((3, 4), (2, 3), rng=2)
    lay = TopDownLayout.from_hierarchies(t.hierarchies, 0)
    tot = lay.unit_totals_index()
    inv = {int(g): int(t.value[tot[g]]) for g in np.flatnonzero(lay.geo_depth <= 1)}
    noisy = t.value + np.random.default_rng(5).integers(-6, 7, t.n_cells)
    cells, _, info = topdown(lay, noisy, invariant_totals=inv)
    chk = check_consistency(t, cells, invariant_cells={int(tot[g]): v for g, v in inv.items()})
    assert chk["ok"] and chk["invariants"] == 4 and info["n_lp"] == 1


def test_invariants_must_cover_whole_levels():
    t = synthetic_counts((3, 2), (2,), rng=2)
    lay = TopDownLayout.from_hierarchies(t.hierarchies, 0)
    from sdckit.errors import InputError

    with pytest.raises(InputError, match="whole levels"):
        topdown(lay, t.value, invariant_totals={0: int(t.value[0]), 1: 5})


@st.composite
def tables(draw):
    fanout = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    cats = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=2)))
    seed = draw(st.integers(0, 2 ** 31))
    mean = draw(st.sampled_from([0.3, 2.0, 20.0]))
    return synthetic_counts(fanout, cats, mean=mean, rng=seed), seed


@given(tables(), st.integers(0, 3), st.sampled_from([0.5, 3.0, 10.0]))
def test_topdown_is_consistent_non_negative_and_keeps_invariants(tab, depth, scale):
    t, seed = tab
    lay = TopDownLayout.from_hierarchies(t.hierarchies, 0)
    rng = np.random.default_rng(seed + 1)
    noisy = np.rint(t.value + rng.normal(0, scale, t.n_cells))
    tot = lay.unit_totals_index()
    inv = {int(g): int(t.value[tot[g]]) for g in np.flatnonzero(lay.geo_depth <= depth)}
    cells, _, _ = topdown(lay, noisy, invariant_totals=inv)
    chk = check_consistency(t, cells, invariant_cells={int(tot[g]): v for g, v in inv.items()})
    assert chk["broken"] == 0 and chk["negative"] == 0 and chk["invariants_broken"] == 0
    again, _, _ = topdown(lay, noisy.copy(), invariant_totals=inv)
    assert np.array_equal(cells, again)


def test_geography_need_not_be_the_first_dimension():
    t = synthetic_counts((2, 3), (3,), rng=4)
    # the same table with its axes swapped: category first, geography second
    arr = t.value.reshape(t.shape).T.reshape(-1)
    t2 = Table(["c", "geo"], [t.hierarchies[1], t.hierarchies[0]], arr, arr.astype(np.int64))
    noisy = np.rint(t.value + np.random.default_rng(0).normal(0, 2, t.n_cells))
    a, _, _ = topdown(TopDownLayout.from_hierarchies(t.hierarchies, 0), noisy, invariant_totals={0: int(t.value[0])})
    b, _, _ = topdown(TopDownLayout.from_hierarchies(t2.hierarchies, 1), noisy.reshape(t.shape).T.reshape(-1),
                      invariant_totals={0: int(t.value[0])})
    assert np.array_equal(a.reshape(t.shape).T.reshape(-1), b)


def test_geography_codes():
    g = geography((2, 2))
    assert g.codes == ("Total", "1", "1.1", "1.2", "2", "2.1", "2.2") and g.n_levels == 2
