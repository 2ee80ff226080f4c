"""Posterior cell distributions against independent forward enumeration; the seed's theorem."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import InputError, SDCError
from sdckit.tables.count import FibreTooLarge, count_tables
from sdckit.tables.cyclic import perturb_once, shift_cycles
from sdckit.tables.posterior import (
    margins_posterior,
    perturbation_posterior,
    prior_at_least,
    prior_from_table,
    rounding_posterior,
)

PERTURBED = np.array([[16, 0, 2, 2], [21, 11, 9, 14], [2, 11, 11, 1], [11, 13, 8, 3]])  # seed 002


def forward_likelihood(original, published, cycles, alpha, beta):
    """Pr(published | original): every sequence of coin outcomes, the mechanism simulated step by step."""
    gamma = 1 - alpha - beta
    total = 0.0
    for outcome in itertools.product((1, -1, 0), repeat=len(cycles)):
        t, p = original.copy(), 1.0
        for o, c in zip(outcome, cycles):
            p *= {1: alpha, -1: beta, 0: gamma}[o]
            if o and (t + o * c >= 0).all():
                t = t + o * c
        total += p * np.array_equal(t, published)
    return total


def forward_posterior(published, cycles, alpha, beta, prior=None):
    """Candidates T_P - sum e_k C_k with |e_k| <= 2 (a superset), weighted by the forward likelihood."""
    cands = {}
    for e in itertools.product(range(-2, 3), repeat=len(cycles)):
        t = published - np.tensordot(np.array(e), cycles, axes=1)
        if (t >= 0).all():
            cands[t.tobytes()] = t
    ts = np.array(list(cands.values()))
    lik = np.array([forward_likelihood(t, published, cycles, alpha, beta) for t in ts])
    w = lik * (np.ones(len(ts)) if prior is None else prior(ts))
    return ts, w / w.sum()


small = st.tuples(st.integers(2, 3), st.integers(2, 3)).flatmap(
    lambda s: st.lists(st.integers(0, 4), min_size=s[0] * s[1], max_size=s[0] * s[1]).map(
        lambda v: np.array(v).reshape(s)))


@given(small, st.floats(0.05, 0.45), st.floats(0.05, 0.45), st.integers(0, 1000))
@settings(max_examples=25)
def test_posterior_matches_forward_enumeration(t, alpha, beta, seed):
    cyc = shift_cycles(*t.shape)
    published, _ = perturb_once(t, cyc, alpha, beta, np.random.default_rng(seed))
    post = perturbation_posterior(published, cyc, alpha, beta)
    ts, w = forward_posterior(published, cyc, alpha, beta)
    for cell in np.ndindex(*t.shape):
        ref = np.bincount(ts[(slice(None),) + cell], weights=w)
        got = post.cell(cell)
        n = max(ref.size, got.size)
        assert np.allclose(np.pad(ref, (0, n - ref.size)), np.pad(got, (0, n - got.size)), atol=1e-12)


def test_insider_prior_matches_forward_enumeration():
    cyc = shift_cycles(2, 3)
    published = np.array([[1, 0, 2], [0, 2, 1]])
    prior = prior_at_least((0, 1), 1)
    post = perturbation_posterior(published, cyc, 0.3, 0.2, prior=prior)
    ts, w = forward_posterior(published, cyc, 0.3, 0.2, prior)
    assert np.allclose(post.cell((0, 1)), np.bincount(ts[:, 0, 1], weights=w))
    assert post.cell((0, 1))[0] == 0


def test_seed_example_interior_cell():
    # cell (1,4) is published as 2 and lies in cycles 3 and 4 only, with no zero near: its original is
    # 2 - (e_4 - e_3), e iid (alpha, gamma, beta); alpha = beta = 1/4 gives (1, 4, 6, 4, 1) / 16 (by hand),
    # the seed's 0.06, 0.25, 0.38, 0.25, 0.06
    post = perturbation_posterior(PERTURBED, shift_cycles(4, 4), 0.25, 0.25)
    assert np.allclose(post.cell((0, 3)), np.array([1, 4, 6, 4, 1]) / 16)
    assert post.mode_violations() == []


interior = st.tuples(st.integers(2, 3), st.integers(2, 4)).flatmap(
    lambda s: st.lists(st.integers(4, 9), min_size=s[0] * s[1], max_size=s[0] * s[1]).map(
        lambda v: np.array(v).reshape(s)))


@given(interior, st.floats(0.01, 0.6), st.floats(0.01, 0.39))
@settings(max_examples=30)
def test_theorem_mode_is_published_value_away_from_zero(published, alpha, beta):
    # seed 002's theorem (uniform prior: each cell's posterior mode is its published value) holds
    # whenever no cell is within 2 x coverage of zero, for any alpha and beta: no move is ever
    # skipped, e_k are iid and P(e_a = e_b) >= P(e_a - e_b = +-1) because
    # a^2 + b^2 + g^2 >= g (a + b)
    cyc = shift_cycles(*published.shape)
    assert perturbation_posterior(published, cyc, alpha, beta).mode_violations() == []


def test_theorem_fails_near_zero():
    # a counterexample found by search (alpha = beta = 0.3): published 1 in cell (1,3), but 0 is more
    # probable, because tables with a zero block moves and so produce this published table more often
    published = np.array([[1, 0, 1], [1, 1, 0]])
    post = perturbation_posterior(published, shift_cycles(2, 3), 0.3, 0.3)
    v = post.mode_violations()
    assert v and v[0]["cell"] == (0, 2) and v[0]["mode"] == 0
    ts, w = forward_posterior(published, shift_cycles(2, 3), 0.3, 0.3)
    ref = np.bincount(ts[:, 0, 2], weights=w)
    assert ref[0] > ref[1]  # confirmed by the forward enumeration


def deterministic_rounder(t, b):
    """Test rounding: among all zero-restricted additive roundings (cell up or down), the one with the
    smallest total absolute deviation of cells and margins, first in lexicographic order."""
    best = None
    lo = (t // b) * b
    for ups in itertools.product((0, 1), repeat=t.size):
        r = lo + b * np.array(ups).reshape(t.shape) * (t % b != 0)
        full = np.zeros((t.shape[0] + 1, t.shape[1] + 1), np.int64)
        full[:-1, :-1] = r
        full[:-1, -1] = r.sum(1)
        full[-1, :-1] = r.sum(0)
        full[-1, -1] = r.sum()
        tf = np.zeros_like(full)
        tf[:-1, :-1] = t
        tf[:-1, -1] = t.sum(1)
        tf[-1, :-1] = t.sum(0)
        tf[-1, -1] = t.sum()
        if (np.abs(full - tf) >= b).any():
            continue
        cost = np.abs(full - tf).sum()
        if best is None or cost < best[0]:
            best = (cost, full)
    return best[1]


def test_rounding_posterior_matches_brute_force():
    b = 3
    original = np.array([[4, 1], [2, 5]])
    published = deterministic_rounder(original, b)
    post = rounding_posterior(published, b, rounder=lambda t: deterministic_rounder(t, b))
    # brute force: every 2 x 2 table in a generous box, rounded by the same algorithm
    hits = [np.array(v).reshape(2, 2) for v in itertools.product(range(9), repeat=4)
            if np.array_equal(deterministic_rounder(np.array(v).reshape(2, 2), b), published)]
    assert post.n_candidates == len(hits)
    ref = np.bincount([h[0, 0] for h in hits], minlength=9) / len(hits)
    got = post.cell((0, 0))
    assert np.allclose(np.pad(got, (0, 9 - got.size)), ref)


def test_rounding_posterior_refuses_huge_sets():
    rounded = np.array([[15, 0, 3, 0, 18], [21, 9, 12, 15, 57], [3, 9, 9, 3, 24], [12, 15, 6, 3, 36],
                        [51, 33, 30, 21, 135]])
    with pytest.raises(FibreTooLarge, match="1,025,908,683 tables"):
        rounding_posterior(rounded, 3)


def test_margins_posterior_exact_and_sampled():
    rows, cols = [3, 2, 2], [2, 3, 2]
    exact = margins_posterior(rows, cols)
    assert exact.method == "margins-enumeration" and exact.n_candidates == count_tables(rows, cols)
    sampled = margins_posterior(rows, cols, max_tables=5, n_samples=30_000, thin=5, rng=3)
    assert sampled.method == "margins-mcmc" and sampled.n_fibre == exact.n_candidates
    assert "sampled" in sampled.params["note"]
    for cell in np.ndindex(3, 3):
        a, b = exact.cell(cell), sampled.cell(cell)
        n = max(a.size, b.size)
        assert 0.5 * np.abs(np.pad(a, (0, n - a.size)) - np.pad(b, (0, n - b.size))).sum() < 0.02


def test_historical_prior_shifts_the_posterior():
    cyc = shift_cycles(4, 4)
    flat = perturbation_posterior(PERTURBED, cyc, 0.25, 0.25)
    hist = perturbation_posterior(PERTURBED, cyc, 0.25, 0.25, prior=prior_from_table(PERTURBED + 5 * np.eye(4, dtype=int)))
    assert hist.mean()[0, 0] > flat.mean()[0, 0]


def test_prior_errors():
    with pytest.raises(InputError, match="zero weight to every table"):
        perturbation_posterior(PERTURBED, shift_cycles(4, 4), 0.25, 0.25, prior=lambda ts: np.zeros(len(ts)))


# ----------------------------------------------------------------------------- the seed's posterior table

# Seed 002 ("Results for the Example", the table under "q = 0 1 2 3 4 5" after the perturbed
# table): Pr(t(i,j) = q | T_P) for the four published cells, read column by column.
SEED_POSTERIOR = {(1, 2): [0.71, 0.25, 0.04, 0.00, 0.00, 0.00],
                  (1, 4): [0.06, 0.25, 0.38, 0.25, 0.06, 0.00],
                  (3, 4): [0.00, 0.71, 0.25, 0.04, 0.00, 0.00],
                  (4, 4): [0.00, 0.05, 0.29, 0.44, 0.21, 0.01]}


def _rounded_cells(post):
    out = {}
    for i, j in SEED_POSTERIOR:
        p = np.zeros(6)
        x = post.cell((i - 1, j - 1))
        p[:min(6, x.size)] = x[:6]
        out[(i, j)] = p
    return out


def test_seed_posterior_table_under_skip_cycle_model():
    # all 24 published probabilities to 2 decimals, alpha = beta = 1/4, the seed's four cycles
    post = perturbation_posterior(PERTURBED, shift_cycles(4, 4), 0.25, 0.25, model="skip-cycle")
    got = _rounded_cells(post)
    matches = sum(abs(round(float(p), 2) - r) < 1e-9 for c, ref in SEED_POSTERIOR.items()
                  for p, r in zip(got[c], ref))
    assert matches == 24
    # (1,2) in closed form (by hand): weights 17 : 6 : 1 for q = 0, 1, 2
    assert np.allclose(got[(1, 2)][:3], np.array([17, 6, 1]) / 24)


def test_seed_posterior_table_under_default_model_differs():
    post = perturbation_posterior(PERTURBED, shift_cycles(4, 4), 0.25, 0.25)
    got = _rounded_cells(post)
    matches = sum(abs(round(float(p), 2) - r) < 1e-9 for c, ref in SEED_POSTERIOR.items()
                  for p, r in zip(got[c], ref))
    assert matches == 13
    # (1,2) by hand under "an impossible move becomes no change": 10 : 5 : 1
    assert np.allclose(got[(1, 2)][:3], np.array([10, 5, 1]) / 16)


def skip_cycle_forward(original, published, cycles, alpha, beta):
    """Weight of ``published`` from ``original`` under the skip-cycle reading, by walking every
    coin sequence: a cycle with a blocked direction stays with weight 1, the open direction
    keeps its alpha or beta (independent of the backward programme)."""
    gamma = 1 - alpha - beta
    total = 0.0

    def rec(k, t, w):
        nonlocal total
        if k == len(cycles):
            total += w * np.array_equal(t, published)
            return
        c = cycles[k]
        ok = {s: bool((t + s * c >= 0).all()) for s in (1, -1)}
        for s, p in ((1, alpha), (-1, beta)):
            if ok[s]:
                rec(k + 1, t + s * c, w * p)
        rec(k + 1, t, w * (1.0 if not (ok[1] and ok[-1]) else gamma))

    rec(0, original.copy(), 1.0)
    return total


@given(small, st.floats(0.05, 0.5), st.floats(0.05, 0.45))
@settings(max_examples=20, deadline=None)
def test_skip_cycle_matches_forward_enumeration(published, alpha, beta):
    cyc = shift_cycles(*published.shape)
    post = perturbation_posterior(published, cyc, alpha, beta, model="skip-cycle")
    for t, p in zip(post.tables, post.likelihood):
        assert p == pytest.approx(skip_cycle_forward(t, published, cyc, alpha, beta))


def test_default_model_is_proper_and_skip_cycle_is_not():
    # sum over every reachable published table of Pr(published | T): 1 for a probability model
    original = np.array([[0, 2], [1, 0]])
    cyc = shift_cycles(2, 2)
    reach = {}
    for e in itertools.product((-1, 0, 1), repeat=len(cyc)):
        t = original + np.tensordot(np.array(e), cyc, axes=1)
        if (t >= 0).all():
            reach[t.tobytes()] = t
    sums = {}
    for model, lik in (("no-change", forward_likelihood), ("skip-cycle", skip_cycle_forward)):
        sums[model] = sum(lik(original, p, cyc, 0.25, 0.25) for p in reach.values())
    assert sums["no-change"] == pytest.approx(1.0)
    assert sums["skip-cycle"] > 1.0


def test_unknown_model_is_refused():
    with pytest.raises(SDCError):
        perturbation_posterior(PERTURBED, shift_cycles(4, 4), 0.25, 0.25, model="other")
