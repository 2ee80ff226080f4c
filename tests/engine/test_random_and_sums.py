"""block_uniforms (partition-independent draws) and the double-double sums."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit._random import block_uniforms
from sdckit.engine.sums import dd_bincount, dd_merge, dd_moments, dd_total, mean_sd, merge_moments
from sdckit.errors import ParameterError


@settings(max_examples=25)
@given(st.lists(st.integers(0, 3000), min_size=0, max_size=6), st.integers(1, 700), st.integers(0, 2**32))
def test_block_uniforms_any_split_gives_the_same_draws(cuts, block, seed):
    ss = np.random.SeedSequence(seed)
    n = 3000
    whole = block_uniforms(ss, 0, n, block=block)
    edges = [0, *sorted(cuts), n]
    parts = np.concatenate([block_uniforms(ss, a, b, block=block) for a, b in zip(edges[:-1], edges[1:])])
    assert np.array_equal(whole.view(np.int64), parts.view(np.int64))


def test_block_b_is_the_b_th_spawned_child_stream():
    # reference: SeedSequence.spawn's children drawn with a fresh Generator (numpy's own path)
    ss = np.random.SeedSequence(2026)
    children = np.random.SeedSequence(2026).spawn(3)
    u = block_uniforms(ss, 0, 3 * 100, block=100)
    for b, child in enumerate(children):
        assert np.array_equal(u[100 * b:100 * (b + 1)], np.random.default_rng(child).random(100))


def test_block_uniforms_range_and_errors():
    u = block_uniforms(np.random.SeedSequence(1), 10, 20_000)
    assert u.shape == (19_990,) and u.min() >= 0 and u.max() < 1
    assert block_uniforms(np.random.SeedSequence(1), 5, 5).shape == (0,)
    with pytest.raises(ParameterError):
        block_uniforms(np.random.SeedSequence(1), 5, 4)
    with pytest.raises(ParameterError):
        block_uniforms(1, 0, 4)


def test_dd_sums_are_correctly_rounded_and_split_independent():
    # reference: math.fsum (exact, correctly rounded) per group
    rng = np.random.default_rng(3)
    n, G = 20_000, 37
    w = rng.lognormal(2, 3, n) * rng.choice([1.0, 1e-9, 1e9], n)
    g = rng.integers(0, G, n)
    hi, lo = dd_bincount(g, w, G)
    ref = np.array([math.fsum(w[g == k]) for k in range(G)])
    assert np.array_equal(hi, ref)
    # split into 5 parts, merged: the same float64
    cuts = [0, 17, 5000, 5001, 13_000, n]
    parts = [dd_bincount(g[a:b], w[a:b], G) for a, b in zip(cuts[:-1], cuts[1:])]
    merged_hi, _ = dd_bincount(np.tile(np.arange(G), len(parts)), np.concatenate([p[0] for p in parts]), G,
                               np.concatenate([p[1] for p in parts]))
    assert np.array_equal(merged_hi, ref)
    assert dd_merge([dd_total(w[a:b]) for a, b in zip(cuts[:-1], cuts[1:])])[0] == math.fsum(w)


def test_mean_sd_matches_exact_rational_statistics():
    # reference: mean and sample variance in exact fractions of the float64 data
    rng = np.random.default_rng(4)
    x = rng.normal(1e6, 3.0, 2000)
    x[::50] = np.nan
    parts = [dd_moments(x[a:b]) for a, b in [(0, 700), (700, 701), (701, 2000)]]
    mean, sd = mean_sd(merge_moments(parts))
    vals = [Fraction(v) for v in x[np.isfinite(x)]]
    m = sum(vals) / len(vals)
    var = sum((v - m) ** 2 for v in vals) / (len(vals) - 1)
    assert mean == float(m)
    assert sd == pytest.approx(math.sqrt(float(var)), rel=1e-15)
    assert mean_sd(dd_moments(x)) == (mean, sd)
