"""The synthetic file's size (the step's ``n_records``, synthpop's ``k``) and the propensity
utility on the Dask engine.

* sizes smaller and larger than the original, in memory and on the Dask engine (the same file
  for the same seed on 1, 3 and 7 partitions), and exactly the size asked for any seed
  (hypothesis); a file of the original size is unchanged by the option;
* a kept column that is not a stratum refuses another size, naming the column;
* the disclosure figures are per original record (a hand-counted small case);
* pMSE and S_pMSE on the Dask engine equal the in-memory figures, read on every record and on
  a seeded sample (which the result says, with its sizes), for equal and unequal sizes;
* the pMSE's permutation null under unequal sizes against the exact hypergeometric
  expectation, and the release end to end with another size (report, linkage).
"""

from __future__ import annotations

import dask
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdckit.engine.frame import from_pandas
from sdckit.engine.kernels import KERNELS
from sdckit.errors import InputError
from sdckit.microdata import Microdata
from sdckit.registry import build_step
from sdckit.release import Release
from sdckit.synth import disclosure_measures, propensity_utility
from sdckit.synth.sized import utility_rows

ROLES = {"key_vars": ["region", "sex", "age", "job"], "numeric_vars": ["income", "hours"]}
PARAMS = {"variables": ["sex", "age", "job", "income", "hours"], "strata": ["region"], "draw_block": 100,
          "utility": "none"}
SEED = 20261127


def persons(n: int = 700, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "region": rng.integers(1, 4, n),
        "sex": rng.choice(["f", "m"], n),
        "age": rng.integers(0, 18, n),
        "job": rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2]),
        "income": rng.lognormal(10, 0.7, n).round(0),
        "hours": rng.normal(38, 6, n).round(1),
    })
    df.loc[df.index[3::41], "income"] = np.nan
    return df


def on_dask(df: pd.DataFrame, params: dict, npartitions: int) -> tuple[pd.DataFrame, dict]:
    """The step through its declared plan and the engine's kernel, with the runner's stream of step 0."""
    step = build_step("synthesise", params)
    stream = np.random.SeedSequence(SEED).spawn(1)[0]
    plan = step.dask_plan(ROLES)
    kernel = KERNELS[plan.kernel]
    s = kernel.settings(step, plan, ROLES)
    pmd = from_pandas(df, npartitions=npartitions, **ROLES)
    with dask.config.set(scheduler="sync"):
        fitted = kernel.fit(pmd, s, kernel.stats(pmd, s).compute(), stream)
        out = kernel.apply(pmd, fitted, stream)
        assert out.n_records == fitted.n_records
        frame = out.frame.compute().reset_index(drop=True)
    return frame, kernel.summary(fitted)


def in_memory(df: pd.DataFrame, params: dict):
    step = build_step("synthesise", params)
    run = Release(Microdata(df, **ROLES), [step], {"none": "sizes compared"}, rng=SEED).run()
    return run.released.frame.reset_index(drop=True), run.results[0]


@pytest.mark.parametrize("k", [450, 1130])
def test_another_size_in_memory_and_on_1_3_7_partitions(k):
    df = persons()
    frame, result = in_memory(df, {**PARAMS, "n_records": k})
    assert len(frame) == k and list(frame.columns) == list(df.columns)
    assert all(g.holds for g in result.guarantees), result.guarantees
    assert result.summary["records"] == k and result.summary["records_original"] == len(df)
    # each region keeps its share (largest remainders: within one record)
    share = frame["region"].value_counts() / k
    want = df["region"].value_counts() / len(df)
    assert (abs(share - want.reindex(share.index)) * k <= 1 + 1e-9).all()
    for parts in (1, 3, 7):
        dk, summary = on_dask(df, {**PARAMS, "n_records": k}, parts)
        assert summary["records"] == k
        pd.testing.assert_frame_equal(dk, frame, check_dtype=False)


def test_the_original_size_is_the_default_and_unchanged_by_the_option():
    df = persons()
    a, _ = in_memory(df, PARAMS)
    b, _ = in_memory(df, {**PARAMS, "n_records": len(df)})
    pd.testing.assert_frame_equal(a, b)
    dk, _ = on_dask(df, {**PARAMS, "n_records": len(df)}, 3)
    pd.testing.assert_frame_equal(dk, a, check_dtype=False)


@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 400))
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_released_file_has_exactly_the_size_asked(seed, k):
    df = persons(120, seed=5)
    md = Microdata(df, **ROLES)
    step = build_step("synthesise", {**PARAMS, "n_records": k, "draw_block": 64})
    r = step.apply(md, rng=seed)
    assert r.microdata.n_records == k == len(r.microdata.frame)
    assert r.summary["records"] == k


def test_a_kept_column_refuses_another_size():
    df = persons()
    params = {**PARAMS, "variables": ["sex", "age", "job", "income"], "n_records": 300}
    with pytest.raises(InputError, match="'hours' is kept"):
        build_step("synthesise", params).apply(Microdata(df, **ROLES), rng=1)


def test_disclosure_figures_are_per_original_record():
    # hand-counted: keys (a); original a = x, x, y, z (z unique), target t = 1, 1, 2, 3;
    # synthetic (6 records) a = x, x, x, z, z, w, t = 1, 1, 1, 3, 3, 9
    orig = pd.DataFrame({"a": ["x", "x", "y", "z"], "t": [1, 1, 2, 3]})
    syn = pd.DataFrame({"a": ["x", "x", "x", "z", "z", "w"], "t": [1, 1, 1, 3, 3, 9]})
    d = disclosure_measures(orig, syn, ["a"], "t")
    # unique in the original: y and z, 2 of 4 records; z is not unique in the synthetic file: repU 0
    assert d.identity["UiO"] == pytest.approx(50.0) and d.identity["repU"] == pytest.approx(0.0)
    # unique in the synthetic file: w, 1 of 6 synthetic records
    assert d.identity["UiS"] == pytest.approx(100 / 6)
    # the synthetic file's keys x and z give one target each, the person's own: records x, x, z
    # (3 of the 4 original records) are disclosed correctly
    assert d.attribute["DiSCO"] == pytest.approx(75.0)
    assert (d.n_original, d.n_synthetic) == (4, 6)


@pytest.mark.parametrize("k,sample", [(0, 0), (0, 600), (1100, 0), (1100, 900)])
def test_propensity_utility_on_dask_equals_the_in_memory_one(k, sample):
    df = persons()
    params = {**PARAMS, "utility": "cart", "utility_permutations": 4, "n_records": k, "utility_sample": sample}
    _, result = in_memory(df, params)
    _, summary = on_dask(df, params, 3)
    mem, dk = result.utility, summary["utility"]
    assert dk["sampled"] == mem["sampled"] == bool(sample)
    for key in ("pMSE", "S_pMSE", "null_pMSE", "records_original", "records_synthetic"):
        assert dk[key] == pytest.approx(mem[key], rel=1e-12, abs=0), key
    if sample:
        n_syn = k or len(df)
        assert dk["sample_original"] + dk["sample_synthetic"] == sample
        # the sample keeps the files' proportions (c = n_syn / N up to rounding)
        assert abs(dk["sample_synthetic"] / sample - n_syn / (len(df) + n_syn)) < 1 / sample
        assert summary["pMSE"] == dk["pMSE"]


def test_utility_rows_are_bounded_seeded_and_proportional():
    ss = np.random.SeedSequence(4)
    assert utility_rows(100, 50, 0, ss) == (None, None)
    assert utility_rows(100, 50, 150, ss) == (None, None)
    a, b = utility_rows(1000, 3000, 400, ss)
    a2, b2 = utility_rows(1000, 3000, 400, np.random.SeedSequence(4))
    assert (len(a), len(b)) == (100, 300) and (a == a2).all() and (b == b2).all()
    assert len(np.unique(a)) == 100 and a.max() < 1000 and b.max() < 3000


@pytest.mark.parametrize("n_orig,n_syn", [(4, 8), (8, 4)])
def test_permutation_null_under_unequal_sizes_against_exact_enumeration(n_orig, n_syn):
    # The permutations draw the labels uniformly among the C(N, n_syn) ways to mark n_syn of the
    # N stacked records synthetic: their mean pMSE is exactly the average of the propensity
    # pMSE over every such marking, enumerated here (each marking fitted as a file pair, with no
    # permutation). sdckit's null is (1 - c) times that mean (Snoke et al. 2018, eq. (3)'s
    # scale for any c; synthpop's halving is the same only for c = 1/2).
    from itertools import combinations

    x = np.array([0.0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]) ** 1.5
    N = n_orig + n_syn
    assert N == len(x)
    c = n_syn / N
    exact = []
    for syn_rows in combinations(range(N), n_syn):
        mark = np.zeros(N, dtype=bool)
        mark[list(syn_rows)] = True
        u = propensity_utility(pd.DataFrame({"x": x[~mark]}), pd.DataFrame({"x": x[mark]}), method="cart",
                               cp=0.0, min_leaf=1, n_permutations=0)
        exact.append(u.pMSE)
    exact = np.array(exact)
    assert exact.std() > 0                                  # the trees do split on some markings
    perms = 2000
    orig, syn = pd.DataFrame({"x": x[:n_orig]}), pd.DataFrame({"x": x[n_orig:]})
    u = propensity_utility(orig, syn, method="cart", cp=0.0, min_leaf=1, n_permutations=perms, rng=7)
    se = exact.std() / np.sqrt(perms)
    assert abs(u.null_pmse / (1 - c) - exact.mean()) < 4 * se
    # and not synthpop's halving, which differs from (1 - c) here by a factor (1 - c) / (1/2)
    assert abs(u.null_pmse - exact.mean() / 2) > 4 * se * min(1 - c, 0.5)


def test_a_release_of_another_size_end_to_end(tmp_path):
    df = persons()
    step = build_step("synthesise", {**PARAMS, "n_records": 500, "utility": "cart", "utility_permutations": 3})
    run = Release(Microdata(df, **ROLES), [step], {"none": "size end to end"}, rng=SEED).run()
    assert run.released.n_records == 500
    link = run.disclosure()["linkage_all_columns"]["after"]
    assert link["n_records"] == 500 and link["expected_correct_links"] == 0.0
    run.write(tmp_path / "out")
    assert len(pd.read_csv(tmp_path / "out" / "released.csv")) == 500
    report = (tmp_path / "out" / "report.html").read_text()
    assert "500 records (the original has 700" in report
    assert "do not apply" in report
