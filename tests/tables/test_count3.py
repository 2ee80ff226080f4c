"""Three-way tables with fixed 2-way margins: exact count, or Markov-chain samples with diagnostics."""

import itertools
import shutil

import numpy as np
import pytest

from sdckit.tables.count3 import analyse_3way, split_rhat


def brute_force_3way(t):
    """Every 2 x 2 x K table with the 2-way margins of ``t``: the free (1 x 1 x (K-1)) block."""
    I, J, K = t.shape
    a, b, c = t.sum(2), t.sum(1), t.sum(0)
    n = 0
    for free in itertools.product(*[range(int(t[:, :, k].sum()) + 1) for k in range(K - 1)]):
        x = np.zeros_like(t)
        x[0, 0, :K - 1] = free
        x[0, 0, K - 1] = a[0, 0] - sum(free)
        x[0, 1] = b[0] - x[0, 0]
        x[1, 0] = c[0] - x[0, 0]
        x[1, 1] = c[1] - x[0, 1]
        if (x >= 0).all() and (x.sum(2) == a).all() and (x.sum(1) == b).all() and (x.sum(0) == c).all():
            n += 1
    return n


@pytest.mark.parametrize("seed", range(5))
def test_exact_count_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    t = rng.multinomial(20, np.full(12, 1 / 12)).reshape(2, 2, 3)
    res = analyse_3way(t)
    assert res.method == "exact" and res.count == brute_force_3way(t)


def test_split_rhat():
    rng = np.random.default_rng(0)
    iid = rng.normal(size=(4, 1000, 3))
    assert np.all(np.abs(split_rhat(iid) - 1) < 0.01)
    stuck = iid + np.arange(4)[:, None, None]  # chains in different places
    assert np.all(split_rhat(stuck) > 1.5)
    assert split_rhat(np.ones((4, 10, 2))).tolist() == [1.0, 1.0]


@pytest.mark.skipif(shutil.which("4ti2-markov") is None and shutil.which("markov") is None,
                    reason="4ti2 is not installed (Debian package 4ti2)")
def test_sampling_fallback_keeps_margins_and_reports_diagnostics():
    rng = np.random.default_rng(3)
    t = rng.multinomial(60, np.full(18, 1 / 18)).reshape(3, 3, 2)
    res = analyse_3way(t, time_limit=0.0, n_chains=3, n_samples=300, thin=10, burn_in=200, rng=5)
    assert res.method == "mcmc" and res.count is None
    s = res.samples
    assert (s.sum(3) == t.sum(2)).all() and (s.sum(2) == t.sum(1)).all() and (s.sum(1) == t.sum(0)).all()
    d = res.to_dict()
    assert 0 < d["acceptance_rate"] <= 1 and d["ess_min"] > 0 and np.isfinite(d["rhat_max"])
    # the sampled cell distribution is uniform over the fibre: compare with the exact count's support
    exact = analyse_3way(t)
    assert exact.method == "exact" and exact.count >= len(np.unique(s.reshape(len(s), -1), axis=0))
