"""Information loss: the closed-form L2 loss of seed 000 agrees with a record-by-record evaluation
of its formula and with Monte Carlo (within 5%); KL by Monte Carlo; Hellinger and TV by hand."""

import numpy as np
import pytest

from sdckit import InputError
from sdckit.pram.builders import invariant_matrix, max_entropy_matrix
from sdckit.pram.loss import hellinger, kl_loss_monte_carlo, l2_loss, l2_loss_monte_carlo, total_variation
from sdckit.pram.matrix import TransitionMatrix


def l2_by_records(P, xi):
    """(1/n^2) sum_i sum_{k,l} (P^{-1}_{lk})^2 P_{xi(i) l} - 1/n, literally, one record at a time."""
    Pinv = np.linalg.inv(P)
    n = len(xi)
    total = 0.0
    for i in range(n):
        for k in range(P.shape[0]):
            for l in range(P.shape[0]):
                total += Pinv[l, k] ** 2 * P[xi[i], l]
    return total / n**2 - 1 / n


def test_closed_form_equals_the_formula_record_by_record():
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(4), 4) * 0.4 + 0.6 * np.eye(4)
    xi = rng.integers(0, 4, 60)
    counts = np.bincount(xi, minlength=4)
    assert l2_loss(P, counts) == pytest.approx(l2_by_records(P, xi), rel=1e-12)


@pytest.mark.parametrize("kind", ["max_entropy", "invariant", "with_y"])
def test_closed_form_matches_monte_carlo_within_5_percent(kind):
    counts = np.array([400, 250, 200, 100, 40, 10])
    if kind == "max_entropy":
        m = max_entropy_matrix(range(6), 0.75)
    else:
        m = invariant_matrix(range(6), counts, min_diagonal=0.7).matrix
    c = counts
    if kind == "with_y":  # U_0(x; y) over 3 groups of an unperturbed y: the loss does not depend on y
        c = np.stack([counts // 2, counts // 4, counts - counts // 2 - counts // 4], axis=1)
    mc = l2_loss_monte_carlo(m, c, n_draws=3000, rng=17)
    closed = l2_loss(m, c)
    assert abs(mc.value - closed) / closed < 0.05, (mc, closed)


def test_l2_identity_is_zero_and_grows_with_perturbation():
    counts = np.array([30, 20, 10])
    assert l2_loss(np.eye(3), counts) == pytest.approx(0, abs=1e-15)
    assert l2_loss(max_entropy_matrix(range(3), 0.9), counts) < l2_loss(max_entropy_matrix(range(3), 0.7), counts)


def test_kl_monte_carlo():
    counts = np.array([50, 30, 20])
    assert kl_loss_monte_carlo(np.eye(3), counts, n_draws=5, rng=1).value == pytest.approx(0, abs=1e-9)
    m = max_entropy_matrix(range(3), 0.6)
    ml = kl_loss_monte_carlo(m, counts, n_draws=60, rng=2)
    assert ml.n_infinite == 0 and np.isfinite(ml.value)
    mom = kl_loss_monte_carlo(m, np.array([95, 4, 1]), n_draws=60, rng=2, estimator="moment")
    assert mom.n_infinite > 0   # the moment estimate leaves the simplex for rare categories
    with pytest.raises(InputError, match="estimator"):
        kl_loss_monte_carlo(m, counts, estimator="x")


def test_hellinger_and_total_variation_by_hand():
    # a = (1/2, 1/2), b = (1, 0): TV = 1/2; Hellinger = sqrt(1/2 ((sqrt(.5) - 1)^2 + .5))
    assert total_variation([1, 1], [2, 0]) == pytest.approx(0.5)
    assert hellinger([1, 1], [2, 0]) == pytest.approx(np.sqrt(0.5 * ((np.sqrt(0.5) - 1) ** 2 + 0.5)))
    assert hellinger([3, 1], [6, 2]) == 0 and total_variation([3, 1], [6, 2]) == 0
    with pytest.raises(InputError):
        hellinger([1, 2], [1, 2, 3])


def test_l2_refuses_singular():
    with pytest.raises(InputError, match="condition number"):
        l2_loss(TransitionMatrix([0, 1], [[0.5, 0.5], [0.5, 0.5]]), [1, 1])
