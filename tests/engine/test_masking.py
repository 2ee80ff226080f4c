"""PRAM and noise at scale: the same output for any partitioning, equal to the in-memory
reference path, and the statistical behaviour each method promises."""

import numpy as np
import pytest
from scipy import stats

from sdckit.engine.frame import from_pandas, same_values
from sdckit.engine.masking import (
    NoiseSettings,
    PramSettings,
    child_stream,
    fit_noise,
    fit_pram,
    run_in_memory,
    transform,
)
from sdckit.errors import InputError, ParameterError

from .conftest import person_frame

ROLES = dict(key_vars=["region", "sex", "age", "job"], strata=["sex"], numeric_vars=["income", "hours"],
             weight="weight")


def _run(df, npartitions, pram, noise, seed=7):
    pmd = from_pandas(df, npartitions=npartitions, **ROLES)
    root = np.random.SeedSequence(seed)
    seeds = [child_stream(root, 0), child_stream(root, 1)]
    plans = [fit_pram(pmd, pram, seeds[0]), fit_noise(pmd, noise)]
    out = transform(pmd, plans, seeds).frame.compute().reset_index(drop=True)
    return out, plans, seeds


def test_pram_and_noise_do_not_depend_on_partitions_and_equal_the_in_memory_path(client):
    df = person_frame(12_000, seed=1)
    pram = PramSettings(("age", "job"), "invariant", min_diagonal=0.6, strata=("sex",),
                        options={"base": "uniform"})
    noise = NoiseSettings(("income", "hours"), 0.15)
    outs = [_run(df, p, pram, noise) for p in (1, 4, 11)]
    reference = run_in_memory(df, outs[0][1], outs[0][2])
    for out, plans, _ in outs:
        assert same_values(out, reference)
        # the fitted plans agree too (counts are exact, moments correctly rounded)
        assert plans[1].sd == outs[0][1][1].sd
        assert all(np.array_equal(plans[0].counts[v], outs[0][1][0].counts[v]) for v in ("age", "job"))
    out = outs[0][0]
    assert (out["age"] != df["age"]).mean() > 0.05  # PRAM did change records
    assert out["job"].isna().sum() == df["job"].isna().sum()
    assert (out["job"].isna() == df["job"].isna()).all()  # missing values never change
    assert same_values(out[["region", "sex", "weight"]], df[["region", "sex", "weight"]])


def test_empirical_transitions_follow_the_matrix(client):
    # chi-square of the released categories of each original category against row k of P
    df = person_frame(30_000, seed=2, missing=False)
    K = 5
    P = np.full((K, K), 0.05) + np.diag(np.full(K, 0.75))  # rows sum to 1
    pmd = from_pandas(df, npartitions=3, key_vars=["job"], weight="weight")
    plan = fit_pram(pmd, PramSettings(("job",), "max_entropy"), matrices={"job": [P]})
    ss = np.random.SeedSequence(99)
    out = transform(pmd, [plan], [ss]).frame.compute().reset_index(drop=True)
    cats = list(pmd.categories["job"])
    before = df["job"].map(cats.index).to_numpy()
    after = out["job"].map(cats.index).to_numpy()
    for k in range(K):
        obs = np.bincount(after[before == k], minlength=K)
        assert stats.chisquare(obs, P[k] * obs.sum()).pvalue > 1e-3


def test_identity_matrix_changes_nothing(client):
    df = person_frame(3000, seed=3)
    pmd = from_pandas(df, npartitions=4, **ROLES)
    plan = fit_pram(pmd, PramSettings(("age", "job", "region"), "identity"))
    out = transform(pmd, [plan], [np.random.SeedSequence(1)]).frame.compute().reset_index(drop=True)
    assert same_values(out, df)


def test_invariant_pram_from_distributed_counts_keeps_p(client):
    df = person_frame(20_000, seed=4)
    pmd = from_pandas(df, npartitions=5, **ROLES)
    plan = fit_pram(pmd, PramSettings(("job",), "invariant", min_diagonal=0.7, options={"base": "uniform"}),
                    np.random.SeedSequence(3))
    counts = df["job"].value_counts().reindex(pmd.categories["job"]).to_numpy()
    assert np.array_equal(plan.counts["job"][0], counts)  # exact distributed counts
    m = plan.matrices["job"][0]
    p = counts / counts.sum()
    assert np.allclose(p @ m.to_dense(), p, atol=1e-12)
    assert m.min_diagonal >= 0.7


def test_noise_has_the_promised_scale(client):
    df = person_frame(30_000, seed=5)
    pmd = from_pandas(df, npartitions=3, **ROLES)
    add = fit_noise(pmd, NoiseSettings(("hours",), 0.04, "additive"))          # sd 0.2 s
    mult = fit_noise(pmd, NoiseSettings(("income",), 0.01, "multiplicative"))  # factor sd 0.1
    out = transform(pmd, [add, mult], [np.random.SeedSequence(1), np.random.SeedSequence(2)]).frame.compute()
    out = out.reset_index(drop=True)
    z = (out["hours"] - df["hours"]) / (0.2 * df["hours"].std())
    assert abs(z.mean()) < 0.02 and abs(z.std() - 1) < 0.02
    ratio = (out["income"] / df["income"] - 1) / 0.1
    assert abs(ratio.mean()) < 0.02 and abs(ratio.std() - 1) < 0.02
    assert out["income"].isna().sum() == df["income"].isna().sum()


def test_correlated_noise_has_level_times_the_data_covariance(client):
    # reference: the sample covariance of the complete records (numpy) times the level
    df = person_frame(30_000, seed=9)
    df["spend"] = 0.3 * df["income"] + np.random.default_rng(1).normal(0, 5000, len(df))
    pmd = from_pandas(df, npartitions=4, **{**ROLES, "numeric_vars": ["income", "hours", "spend"]})
    plan = fit_noise(pmd, NoiseSettings(("income", "spend"), 0.2))
    X = df[["income", "spend"]].dropna().to_numpy()
    assert np.allclose(plan.factor @ plan.factor.T, 0.2 * np.cov(X, rowvar=False), rtol=1e-10)
    out = transform(pmd, [plan], [np.random.SeedSequence(4)]).frame.compute().reset_index(drop=True)
    E = (out[["income", "spend"]] - df[["income", "spend"]]).dropna().to_numpy()
    ratio = np.cov(E, rowvar=False) / (0.2 * np.cov(X, rowvar=False))
    assert np.allclose(ratio, 1.0, atol=0.03)


def test_bad_settings_are_refused(client):
    with pytest.raises(ParameterError, match="'level' parameter of Noise"):
        NoiseSettings(("x",), -1)
    with pytest.raises(ParameterError, match="joint"):
        PramSettings(("a", "b"), joint=True)
    df = person_frame(300, seed=6)
    pmd = from_pandas(df, npartitions=2, **ROLES)
    with pytest.raises(InputError, match="'income' is not a key variable"):
        fit_pram(pmd, PramSettings(("income",)))
    with pytest.raises(InputError, match=r"the matrix for 'job' is 2 x 2"):
        fit_pram(pmd, PramSettings(("job",)), matrices={"job": [np.eye(2)]})


def test_equal_to_the_in_memory_pram_step(client):
    # the in-memory pram step (sdckit.pram.steps.Pram) samples with block uniforms
    # (pram_codes(..., uniforms=...)), so it gives the engine's release bit for bit
    from sdckit.microdata import Microdata
    from sdckit.pram.builders import Invariant
    from sdckit.pram.steps import Pram

    df = person_frame(5000, seed=8)
    step_ss = np.random.SeedSequence(77).spawn(1)[0]
    for strata in ([], ["sex"]):
        step = Pram(variables=["age", "job"], matrix=Invariant(), min_diagonal=0.7, strata=strata)
        mem = step.apply(Microdata(df, **{k: v for k, v in ROLES.items() if k != "strata"}), rng=step_ss)
        pmd = from_pandas(df, npartitions=4, **{**ROLES, "strata": strata})
        plan = fit_pram(pmd, PramSettings.from_step(step), step_ss)
        out = transform(pmd, [plan], [step_ss]).frame.compute().reset_index(drop=True)
        assert same_values(out[["age", "job"]], mem.microdata.frame[["age", "job"]].reset_index(drop=True))


def test_equal_to_the_in_memory_noise_step(client):
    # the in-memory noise step draws block_normals and scales with exact_scale (see
    # docs/engine.md), so it gives the engine's release bit for bit
    from sdckit.masking import noise as noise_module
    from sdckit.microdata import Microdata

    df = person_frame(5000, seed=9)
    ss = np.random.SeedSequence(5).spawn(2)[1]
    roles = {k: v for k, v in ROLES.items() if k != "strata"}
    for method, restore in [("additive", "none"), ("multiplicative", "none"), ("correlated", "kim")]:
        step = noise_module.Noise(level=0.05, variables=["income", "hours"], kind=method, restore=restore)
        mem = step.apply(Microdata(df, **roles), rng=ss).microdata.frame.reset_index(drop=True)
        pmd = from_pandas(df, npartitions=6, **roles)
        out = transform(pmd, [fit_noise(pmd, NoiseSettings.from_step(step))], [ss]).frame.compute()
        assert same_values(out.reset_index(drop=True)[["income", "hours"]], mem[["income", "hours"]])
