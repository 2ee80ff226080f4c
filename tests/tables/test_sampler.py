"""Metropolis-Hastings sampler on the fibre against exact enumeration."""

import math
import shutil

import numpy as np
import pytest

from sdckit.errors import ParameterError
from sdckit.tables.count import enumerate_tables
from sdckit.tables.sampler import FibreSampler, cell_distributions, effective_sample_size

START = np.array([[2, 1, 0], [1, 2, 1], [0, 1, 1]])


def max_tv(exact: dict, empirical: dict) -> float:
    return max(0.5 * sum(abs(exact[c].get(v, 0) - empirical[c].get(v, 0)) for v in set(exact[c]) | set(empirical[c]))
               for c in exact)


@pytest.mark.parametrize("target", ["uniform", "hypergeometric"])
def test_cell_distributions_match_enumeration(target):
    tables = enumerate_tables(START.sum(1), START.sum(0))  # the exact fibre (39 tables)
    if target == "uniform":
        w = None
    else:  # pi(t) ~ 1 / prod t_ij!
        w = np.array([1 / math.prod(math.factorial(int(x)) for x in t.ravel()) for t in tables])
        w /= w.sum()
    exact = cell_distributions(tables, w)
    before = START.copy()
    res = FibreSampler(target=target, n_samples=40_000, thin=5, burn_in=500).sample(START, rng=11)
    assert np.array_equal(START, before)
    assert (res.samples.sum(axis=2) == START.sum(1)).all() and (res.samples.sum(axis=1) == START.sum(0)).all()
    assert max_tv(exact, res.cell_distributions()) < 0.02
    assert res.ess_min > 2_000


@pytest.mark.skipif(not (shutil.which("4ti2-markov") or shutil.which("markov")), reason="4ti2 is not installed")
def test_3way_samples_keep_2way_margins():
    t = np.random.default_rng(2).integers(0, 4, (3, 3, 2))
    res = FibreSampler(n_samples=500, thin=3).sample(t, rng=1)
    for axis in range(3):
        assert (res.samples.sum(axis=axis + 1) == t.sum(axis=axis)).all()
    assert res.acceptance_rate > 0


def test_ess_on_known_processes():
    rng = np.random.default_rng(0)
    iid = rng.normal(size=20_000)
    assert abs(effective_sample_size(iid)[0] / 20_000 - 1) < 0.15
    phi, x = 0.9, np.zeros(50_000)
    e = rng.normal(size=50_000)
    for k in range(1, x.size):
        x[k] = phi * x[k - 1] + e[k]
    expected = 50_000 * (1 - phi) / (1 + phi)  # AR(1): n (1 - phi) / (1 + phi)
    assert abs(effective_sample_size(x)[0] / expected - 1) < 0.25


def test_settings_are_validated():
    with pytest.raises(ParameterError, match="'target' parameter of FibreSampler"):
        FibreSampler(target="flat")
    with pytest.raises(ParameterError, match="'thin' parameter"):
        FibreSampler(thin=0)
