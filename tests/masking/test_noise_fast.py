"""The noise step's fast paths against the computations they replace, bit for bit: the
one-column draw, the cross-product sums of correlated noise, the before/after summary."""

import numpy as np
import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from sdckit import Microdata
from sdckit._random import block_normals, seed_sequence
from sdckit._sums import dd_bincount
from sdckit.masking._numeric import moments_summary
from sdckit.masking.moments import cross_sums, exact_scale
from sdckit.masking.noise import Noise, add_noise_array
from sdckit.masking.summaries import complete_moments_summary


@st.composite
def data(draw, min_cols=1, nan=False):
    n = draw(st.integers(2, 400))
    p = draw(st.integers(min_cols, 5))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    X = rng.lognormal(rng.normal(0, 4), rng.uniform(0.1, 2.5), (n, p)) * rng.choice([-1.0, 1.0], p)
    if draw(st.booleans()):
        X = np.round(X, 2)
    if nan and draw(st.booleans()):
        X[rng.random((n, p)) < 0.05] = np.nan
    return X


@given(data(nan=True))
def test_cross_sums_equal_the_product_matrix_sums(X):
    """Reference: the product matrix of the complete rows summed by dd_bincount in row order
    (the earlier construction)."""
    Xc = X[np.isfinite(X).all(axis=1)]
    p = Xc.shape[1]
    prods = np.concatenate([Xc, (Xc[:, :, None] * Xc[:, None, :]).reshape(-1, p * p)], axis=1)
    hi, lo = dd_bincount(np.tile(np.arange(prods.shape[1]), Xc.shape[0]), prods.reshape(-1), prods.shape[1])
    n, h, low = cross_sums(X)
    assert n == Xc.shape[0] and np.array_equal(h, hi) and np.array_equal(low, lo)


@given(data(), st.sampled_from([0.01, 0.09, 1.0]), st.integers(0, 10**6))
def test_one_column_additive_noise_equals_the_general_draw(X, level, seed):
    """Reference: the general path (block normals scaled by sqrt(level) * sd, plus X)."""
    x = X[:, :1]
    got = add_noise_array(x, level, seed, method="additive")
    ss, _ = seed_sequence(seed)
    _, sd, _ = exact_scale(x, "additive")
    E = block_normals(ss, 0, x.shape[0], 1)
    E *= np.sqrt(level) * sd
    E += x
    assert np.array_equal(got, E)


@given(data(), st.booleans())
def test_complete_summary_equals_the_general_summary(X, fortran):
    rng = np.random.default_rng(X.shape[0])
    Y = X + rng.normal(0, 1, X.shape) * np.abs(X).mean()
    Y[:, 0] = X[:, 0] if X.shape[0] % 2 else Y[:, 0]
    if fortran:
        Y = np.asfortranarray(Y)
    names = [f"v{j}" for j in range(X.shape[1])]
    assert complete_moments_summary(X, Y, names) == moments_summary(X, Y, names)


def test_noise_step_releases_the_drawn_buffer_without_a_copy_and_keeps_the_input():
    df = pd.DataFrame({"income": np.random.default_rng(1).lognormal(10, 1, 1000), "k": [1, 2] * 500})
    md = Microdata(df, key_vars=["k"], numeric_vars=["income"])
    r = Noise(level=0.09, kind="additive").apply(md, rng=7)
    ref = add_noise_array(df[["income"]].to_numpy(), 0.09, 7, method="additive")[:, 0]
    assert np.array_equal(r.microdata.frame["income"].to_numpy(), ref)
    assert md.frame["income"].equals(df["income"]) and all(g.holds for g in r.guarantees)


def test_step_summaries_read_the_same_moments_when_asked():
    """The moments are computed when the summary is read: the same figures as the general
    summary of the input and the output (noise and rank swapping)."""
    from sdckit.masking.rank_swap import RankSwap

    rng = np.random.default_rng(5)
    df = pd.DataFrame({"a": rng.lognormal(3, 1, 500), "b": rng.normal(10, 2, 500)})
    md = Microdata(df, numeric_vars=["a", "b"])
    X = md.numeric_array()
    for step in (Noise(level=0.05, kind="correlated"), Noise(level=0.05, kind="additive"), RankSwap(p=10)):
        r = step.apply(md, rng=11)
        Y = r.microdata.numeric_array()
        expected = moments_summary(X, Y, ["a", "b"])
        assert {k: r.summary[k] for k in expected} == expected
        assert list(r.summary)[-len(expected):] == list(expected)
