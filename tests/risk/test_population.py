"""Population-uniqueness estimators (Zayatz, Pitman, SNB, Dankar et al.'s rule) on synthetic
populations with a known number of uniques.

Populations: (1) a Pitman-Yor / Chinese-restaurant partition (theta = 50, alpha = 0.6,
N = 10,000), the model Pitman's estimator assumes; (2) shifted-negative-binomial class sizes
(alpha = 0.5, beta = 0.2, K = 4,000 classes), the SNB model. A sample keeps each population
member with probability pi (Bernoulli sampling); the truth is the population's number of
classes of size 1.

Tolerances (derived, not taken from a paper): the relative error (estimate - truth) / truth
was measured over 100 seeds (0..99) at development time; its mean (bias b) and standard
deviation (s) are in docs/methods/population_uniqueness.md. The tests use 8 other seeds
(1000..1007) and require |mean relative error| <= |b| + 3 s / sqrt(8) (a 3-standard-error
band around the measured bias) and every single seed within |b| + 4 s.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit import InputError, Microdata
from sdckit.risk.population import microdata_population_uniques, population_uniques, snb_probabilities

SEEDS = range(1000, 1008)


def crp_sizes(rng, N, theta, alpha):
    """Class sizes of a Pitman-Yor (Chinese restaurant) partition of N members."""
    table = np.empty(N, np.int64)
    sizes = []
    for i in range(N):
        k = len(sizes)
        if i == 0 or rng.random() < (theta + k * alpha) / (theta + i):
            table[i] = k
            sizes.append(1)
            continue
        while True:   # a table with probability (n_j - alpha) / (i - k alpha), by rejection
            j = table[int(rng.random() * i)]
            if rng.random() < (sizes[j] - alpha) / sizes[j]:
                break
        table[i] = j
        sizes[j] += 1
    return np.array(sizes)


def snb_sizes(rng, K, alpha, beta):
    return 1 + rng.negative_binomial(alpha, beta, K)


def sample_classes(rng, sizes, pi):
    f = rng.binomial(sizes, pi)
    return f[f > 0]


# (population, pi, estimator) -> (bias b, sd s) measured over seeds 0..99 (see the docs page)
MEASURED = {
    ("crp", 0.05, "pitman"): (-0.032, 0.184),
    ("crp", 0.10, "pitman"): (-0.007, 0.124),
    ("crp", 0.30, "zayatz"): (0.023, 0.057),
    ("crp", 0.05, "dankar"): (-0.032, 0.184),
    ("snb", 0.50, "snb"): (0.010, 0.048),
    ("snb", 0.50, "dankar"): (0.010, 0.048),
}


@pytest.mark.parametrize("case", sorted(MEASURED))
def test_estimator_within_tolerance_of_truth(case):
    pop, pi, est = case
    b, s = MEASURED[case]
    errs = []
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        sizes = crp_sizes(rng, 10_000, 50.0, 0.6) if pop == "crp" else snb_sizes(rng, 4000, 0.5, 0.2)
        true = int((sizes == 1).sum())
        r = population_uniques(sample_classes(rng, sizes, pi), population_size=int(sizes.sum()))
        errs.append((getattr(r, est) - true) / true)
    errs = np.array(errs)
    assert abs(errs.mean()) <= abs(b) + 3 * s / math.sqrt(len(errs)), errs
    assert np.all(np.abs(errs) <= abs(b) + 4 * s), errs


def test_dankar_rule_choices():
    rng = np.random.default_rng(1)
    sizes = crp_sizes(rng, 5000, 50.0, 0.6)
    small = population_uniques(sample_classes(rng, sizes, 0.05), population_size=sizes.sum())
    assert small.dankar_model == "pitman" and small.dankar == small.pitman
    large = population_uniques(sample_classes(rng, sizes, 0.4), population_size=sizes.sum())
    assert large.dankar_model in ("zayatz", "snb")
    valid = [v for v in (large.zayatz, large.snb) if v == v and v > 0]
    assert large.dankar == min(valid)


def test_snb_probabilities_match_simulation():
    # P(f = 1), P(f = 2) of the SNB model against a Monte Carlo of the model itself
    rng = np.random.default_rng(0)
    a, b, pi = 0.7, 0.25, 0.2
    F = snb_sizes(rng, 400_000, a, b)
    f = rng.binomial(F, pi)
    p1, p2 = snb_probabilities(a, b, pi)
    assert np.mean(f == 1) == pytest.approx(p1, abs=4e-3)
    assert np.mean(f == 2) == pytest.approx(p2, abs=4e-3)


def test_no_uniques_census_and_bad_input():
    r = population_uniques([2, 3, 5], population_size=100)
    assert r.dankar == 0 and "no sample uniques" in r.notes[0]
    r = population_uniques([1, 1, 2], population_size=4)
    assert r.dankar == 2 and r.dankar_model == "census"
    with pytest.raises(InputError, match="below the sample size"):
        population_uniques([1, 1, 2], population_size=3)
    with pytest.raises(InputError, match="exactly one"):
        population_uniques([1, 2])


def test_microdata_population_size_from_weights():
    import pandas as pd
    df = pd.DataFrame({"a": list("aabbcde"), "w": [10.0] * 7})
    md = Microdata(df, key_vars=["a"], weight="w")
    r = microdata_population_uniques(md)
    assert r.N == 70 and r.n_sample_uniques == 3
    with pytest.raises(InputError, match="population size"):
        microdata_population_uniques(Microdata(df, key_vars=["a"]))


@settings(max_examples=30)
@given(st.lists(st.integers(1, 6), min_size=5, max_size=60), st.floats(0.02, 0.9))
def test_estimates_are_counts_within_population(sizes, pi):
    """Every valid estimate lies in [0, N]; the chosen one is one of the three."""
    r = population_uniques(sizes, sampling_fraction=pi)
    for v in (r.zayatz, r.pitman, r.snb):
        assert v != v or 0 <= v <= r.N
    assert 0 <= r.dankar <= r.N
    if r.n_sample_uniques and r.dankar_model not in ("census",):
        assert r.dankar == getattr(r, r.dankar_model)


def test_population_uniques_gate():
    import pandas as pd

    from sdckit.gate import run_gate
    from sdckit.registry import discover
    discover()
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"a": rng.integers(0, 30, 400), "b": rng.integers(0, 4, 400), "w": 25.0})
    md = Microdata(df, key_vars=["a", "b"], weight="w")
    r = microdata_population_uniques(md)
    def outcome(th):
        return {o.name: o for o in run_gate({"max_population_uniques": th}, md, md, [])}["max_population_uniques"]
    ok, bad = outcome(r.dankar + 1), outcome(max(r.dankar - 1, 0))
    assert ok.passed and not bad.passed
    assert ok.value["population_uniques"] == pytest.approx(r.dankar)
