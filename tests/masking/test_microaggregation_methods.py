"""sdcMicro's microaggregation methods beside MDAV (simple, single, onedims, pca, rmd): group
sizes and values (property), a hand-computed case, and equality with sdcMicro 5.8.1's
``microaggregation(method = ...)`` on the same file (skipped without R and sdcMicro)."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit import Microdata
from sdckit.masking.ma_methods import consecutive_labels, rmd_labels
from sdckit.masking.mdav_kernels import aggregate_groups
from sdckit.masking.microaggregation import (
    Microaggregation,
    Onedims,
    Pca,
    Rmd,
    Simple,
    Single,
    microaggregate_array,
)
from tests.masking.sdcmicro_r import run_r, sdcmicro_missing

NEW = ("simple", "single", "onedims", "pca", "rmd")
TYPES = {"simple": Simple, "single": Single, "onedims": Onedims, "pca": Pca, "rmd": Rmd}


def test_consecutive_labels_by_hand():
    # n = 8, k = 3: floor(8/3) = 2 groups, the first 3 records of the order, then the other 5
    order = np.array([7, 6, 5, 4, 3, 2, 1, 0])
    assert consecutive_labels(order, 3).tolist() == [1, 1, 1, 1, 1, 0, 0, 0]


def test_single_by_hand():
    # sorted on the first variable: (1, 2, 3) | (10, 11, 12, 13); means by hand
    X = np.array([[10.0, 5.0], [1.0, 2.0], [12.0, 3.0], [2.0, 4.0], [13.0, 5.0], [3.0, 6.0], [11.0, 7.0]])
    out, _ = microaggregate_array(X, 3, method="single")
    assert out[:, 0].tolist() == [11.5, 2.0, 11.5, 2.0, 11.5, 2.0, 11.5]
    assert out[:, 1].tolist() == [5.0, 4.0, 5.0, 4.0, 5.0, 4.0, 5.0]      # (5+3+5+7)/4, (2+4+6)/3


@settings(max_examples=40, deadline=None)
@given(n=st.integers(6, 60), k=st.integers(2, 5), p=st.integers(2, 4), seed=st.integers(0, 2**32 - 1),
       method=st.sampled_from(NEW))
def test_groups_have_k_to_2k_minus_1_records_and_values_are_group_means(n, k, p, seed, method):
    rng = np.random.default_rng(seed)
    if n < 2 * k:
        n = 2 * k
    frame = pd.DataFrame(rng.lognormal(2, 1, size=(n, p)), columns=[f"x{j}" for j in range(p)])
    md = Microdata(frame, numeric_vars=list(frame.columns))
    res = Microaggregation(k=k, algorithm=TYPES[method]()).apply(md, rng=np.random.default_rng(seed))
    assert all(g.holds for g in res.guarantees), [g.to_dict() for g in res.guarantees]
    for lab in res.labels:
        sizes = np.bincount(lab)
        assert sizes.min() >= k and sizes.max() <= 2 * k - 1
    assert frame.equals(md.frame)                           # the input is not modified


def test_rmd_is_reproducible_from_the_seed_and_recorded():
    rng = np.random.default_rng(4)
    frame = pd.DataFrame(rng.normal(size=(40, 3)), columns=["a", "b", "c"])
    md = Microdata(frame, numeric_vars=["a", "b", "c"])
    r1 = Microaggregation(k=3, algorithm=Rmd()).apply(md, rng=9)
    r2 = Microaggregation(k=3, algorithm=Rmd()).apply(md, rng=9)
    assert r1.microdata.frame.equals(r2.microdata.frame)
    assert r1.seed is not None
    assert Microaggregation(k=3, algorithm=Pca()).apply(md).seed is None    # deterministic


@pytest.mark.skipif(sdcmicro_missing() is not None, reason=str(sdcmicro_missing()))
def test_equal_to_sdcmicro(tmp_path):
    """Reference: sdcMicro 5.8.1 ``microaggregation(x, method = m, aggr = 3)$mx`` on the same
    file; for rmd, sdcMicro's covMcd with the same R seed, its robust distances handed to
    sdckit's rmd (the MCD's random subsets are R's; the grouping is what is compared)."""
    rng = np.random.default_rng(3)
    n = 53
    x = pd.DataFrame({"a": np.round(rng.lognormal(3, 1, n), 2), "b": rng.normal(50, 10, n),
                      "c": rng.gamma(2, 10, n)})
    x.loc[5, "c"] = x.loc[9, "c"]                           # a tie
    x.to_csv(tmp_path / "in.csv", index=False)
    run_r("""
x <- read.csv("in.csv")
for (m in c("simple", "single", "onedims", "pca")) {
  write.csv(microaggregation(x, method = m, aggr = 3)$mx, sprintf("out_%s.csv", m), row.names = FALSE)
}
y <- apply(x, 2, function(v) (v - mean(v)) / sd(v))
set.seed(11); rr <- covMcd(y)
write.csv(data.frame(md = mahalanobis(y, rr$center, rr$cov)), "md.csv", row.names = FALSE)
set.seed(11); write.csv(microaggregation(x, method = "rmd", aggr = 3)$mx, "out_rmd.csv", row.names = FALSE)
""", tmp_path)
    X = x.to_numpy()
    for m in ("simple", "single", "onedims", "pca"):
        got, _ = microaggregate_array(X, 3, method=m)
        ref = pd.read_csv(tmp_path / f"out_{m}.csv").to_numpy()
        np.testing.assert_allclose(got, ref, rtol=1e-9, atol=0, err_msg=m)
    md = pd.read_csv(tmp_path / "md.csv")["md"].to_numpy()
    got = aggregate_groups(X, rmd_labels(X, 3, md))
    np.testing.assert_allclose(got, pd.read_csv(tmp_path / "out_rmd.csv").to_numpy(), rtol=1e-9, atol=0)


@pytest.mark.skipif(sdcmicro_missing() is not None, reason=str(sdcmicro_missing()))
def test_pca_direction_as_sdcmicro(tmp_path):
    """The sort direction of ``pca`` is the sign of the first loading: princomp's fix_sign
    (first element >= 0). Reference: sdcMicro's ``microaggregation(method = "pca")`` on eight
    files of 2 to 6 positively correlated variables, where LAPACK's own signs vary."""
    for seed in range(8):
        rng = np.random.default_rng(seed)
        p = 2 + seed % 5
        L = np.linalg.cholesky(0.5 * np.eye(p) + 0.5)
        X = np.round(np.exp(1 + 0.5 * rng.standard_normal((400, p)) @ L.T) * 100, 4)
        pd.DataFrame(X).to_csv(tmp_path / f"in{seed}.csv", index=False)
    run_r("""
for (s in 0:7) {
  x <- read.csv(sprintf("in%d.csv", s))
  write.csv(microaggregation(x, method = "pca", aggr = 3)$mx, sprintf("out%d.csv", s), row.names = FALSE)
}
""", tmp_path)
    for seed in range(8):
        X = pd.read_csv(tmp_path / f"in{seed}.csv").to_numpy()
        got, _ = microaggregate_array(X, 3, method="pca")
        np.testing.assert_allclose(got, pd.read_csv(tmp_path / f"out{seed}.csv").to_numpy(), rtol=1e-9, atol=0,
                                   err_msg=f"file {seed}")
