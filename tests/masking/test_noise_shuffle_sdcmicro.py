"""Noise ``correlated2`` and data shuffling: the invariants each promises (fixed seeds,
hypothesis), and the same distribution as sdcMicro 5.8.1's ``addNoise(method =
"correlated2")`` and ``shuffle(method = "ds")`` on the same file (skipped without R)."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit import Microdata
from sdckit.errors import ParameterError
from sdckit.masking.noise import Noise, add_noise_array
from sdckit.masking.shuffle import Shuffle
from tests.masking.sdcmicro_r import run_r, sdcmicro_missing

COV = [[1.0, 0.6, 0.3], [0.6, 2.0, 0.4], [0.3, 0.4, 1.0]]


def _frame(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.multivariate_normal([10, 20, 30], COV, size=n)
    f = pd.DataFrame(X, columns=["a", "b", "c"])
    f["s"] = X[:, 0] + rng.normal(0, 0.5, n)
    f["g"] = np.where(X[:, 1] > 20, "hi", "lo")
    return f


def test_correlated2_shrinks_covariances_by_one_minus_level():
    # expected: Cov(z) = (1 - level) Cov(x) off the diagonal, Var(z) = Var(x) (Kim 1986)
    f = _frame(100_000, 1)
    X = f[["a", "b", "c"]].to_numpy()
    Z = add_noise_array(X, 0.09, 5, method="correlated2")
    cx, cz = np.cov(X, rowvar=False), np.cov(Z, rowvar=False)
    off = ~np.eye(3, dtype=bool)
    np.testing.assert_allclose(cz[off] / cx[off], 0.91, atol=0.02)
    np.testing.assert_allclose(np.diag(cz) / np.diag(cx), 1.0, atol=0.02)
    np.testing.assert_allclose(Z.mean(axis=0), X.mean(axis=0), atol=0.02)
    md = Microdata(f, numeric_vars=["a", "b", "c"])
    res = Noise(level=0.09, kind="correlated2").apply(md, rng=2)
    assert res.guarantees[0].holds
    assert abs(res.summary["covariance_factor_realised"] - 0.91) < 0.02


def test_correlated2_needs_level_below_one():
    with pytest.raises(ParameterError, match="level"):
        Noise(level=1.0, kind="correlated2")
    with pytest.raises(ParameterError, match="restore"):
        Noise(level=0.1, kind="correlated2", restore="exact")


@settings(max_examples=30, deadline=None)
@given(n=st.integers(10, 200), seed=st.integers(0, 2**32 - 1), ties=st.booleans())
def test_shuffle_releases_a_permutation_of_each_variable(n, seed, ties):
    f = _frame(n, seed)
    if ties:
        f["a"] = f["a"].round(0)
    md = Microdata(f, numeric_vars=["a", "b"], key_vars=["g"])
    res = Shuffle(predictors=["s", "g"], variables=["a", "b"]).apply(md, rng=seed)
    assert res.guarantees[0].holds
    for v in ("a", "b"):
        assert np.array_equal(np.sort(res.microdata.frame[v].to_numpy()), np.sort(f[v].to_numpy()))
    assert f.equals(md.frame)


def test_shuffle_keeps_rank_correlation_with_the_predictor():
    # Spearman correlation of a with s before: about 0.89; after shuffling the same in
    # expectation (Muralidhar & Sarathy 2006, sec. 3); n = 20,000, fixed seed
    f = _frame(20_000, 3)
    md = Microdata(f, numeric_vars=["a", "b", "c"])
    res = Shuffle(predictors=["s"], variables=["a", "b", "c"]).apply(md, rng=4)
    assert res.summary["max_rank_correlation_change"] < 0.03
    assert res.summary["changed_share"] > 0.5


@pytest.mark.skipif(sdcmicro_missing() is not None, reason=str(sdcmicro_missing()))
def test_same_distribution_as_sdcmicro(tmp_path):
    """Reference: sdcMicro's own outputs on the same file (set.seed(1)): the covariance factor of
    correlated2 with delta = 0.3 (level 0.09) and shuffle's rank correlations; the two tools'
    figures must agree within sampling error (n = 20,000)."""
    f = _frame(20_000, 7)
    f[["a", "b", "c", "s"]].to_csv(tmp_path / "in.csv", index=False)
    run_r("""
x <- read.csv("in.csv"); set.seed(1)
y <- addNoise(x[, c("a", "b", "c")], method = "correlated2", delta = 0.3)$xm
write.csv(y, "noise.csv", row.names = FALSE)
z <- shuffle(x, form = a + b + c ~ s, method = "ds")$shuffled
write.csv(z, "shuffle.csv", row.names = FALSE)
""", tmp_path)
    X = f[["a", "b", "c"]].to_numpy()
    off = ~np.eye(3, dtype=bool)
    cx = np.cov(X, rowvar=False)[off]
    r_factor = np.cov(pd.read_csv(tmp_path / "noise.csv").to_numpy(), rowvar=False)[off] / cx
    ours = np.cov(add_noise_array(X, 0.09, 1, method="correlated2"), rowvar=False)[off] / cx
    np.testing.assert_allclose(r_factor, 0.91, atol=0.03)
    np.testing.assert_allclose(ours, r_factor, atol=0.04)
    zr = pd.read_csv(tmp_path / "shuffle.csv")[["a", "b", "c"]].to_numpy()
    md = Microdata(f, numeric_vars=["a", "b", "c"])
    zs = Shuffle(predictors=["s"], variables=["a", "b", "c"]).apply(md, rng=1).microdata.frame[["a", "b", "c"]]
    from scipy.stats import spearmanr
    for j, v in enumerate("abc"):
        # sdcMicro's output is a permutation too (R writes 15 significant digits)
        np.testing.assert_allclose(np.sort(zr[:, j]), np.sort(X[:, j]), rtol=1e-13)
        rho_r = spearmanr(zr[:, j], f["s"]).statistic
        rho_s = spearmanr(zs[v], f["s"]).statistic
        assert abs(rho_r - rho_s) < 0.03, (v, rho_r, rho_s)
