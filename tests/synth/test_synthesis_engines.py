"""The synthesis step on either engine: the file is defined by fixed row blocks, so the same
seed gives the same released values in memory and on the Dask engine for any partitioning.

* memory == Dask on 1, 3 and 7 partitions (blocks of 100 records crossing the partitions'
  borders; strata, a rule, missing values of a numeric and a categorical variable, a kept
  column), fitted on every record and on a seeded sample;
* the blocked draw: the records given as a frame or as the records fitted give the same
  file; a file of several blocks differs from one block but not with the partitioning;
* the disclosure figures of the step on the Dask engine equal the in-memory step's; the gate
  thresholds max_repU, max_disco and max_tcap give the in-memory outcomes on the Dask engine;
* the refusals: the Dask plan needs the synthesised columns named; a stratum the sample did not
  see is named; the disclosure thresholds on the Dask engine need synthesise as the only step.
"""

from __future__ import annotations

import dask
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdckit.engine.frame import from_pandas, same_values
from sdckit.engine.kernels import KERNELS
from sdckit.errors import InputError, SpecError
from sdckit.microdata import Microdata
from sdckit.registry import build_step
from sdckit.release import Release
from sdckit.synth import Synthesiser
from sdckit.synth.synthesis import block_stream, child_stream

ROLES = {"key_vars": ["region", "sex", "age", "job"], "numeric_vars": ["income", "hours"], "weight": "weight"}
PARAMS = {"variables": ["sex", "age", "job", "income", "hours"], "strata": ["region"], "draw_block": 100,
          "rules": ["age < 3 -> job == 'a'"], "utility": "none"}
SEED = 20261126


def persons(n: int = 900, seed: int = 11) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "region": rng.integers(1, 5, n),
        "sex": rng.choice(["f", "m"], n),
        "age": rng.integers(0, 18, n),
        "job": rng.choice(["a", "b", "c", "d"], n, p=[0.5, 0.25, 0.15, 0.1]),
        "income": rng.lognormal(10, 0.7, n).round(0),
        "hours": rng.normal(38, 6, n).round(1),
        "weight": rng.uniform(5, 80, n),   # kept: conditions the synthesis
    })
    df.loc[df["age"] < 3, "job"] = "a"      # the rule holds in the original
    df.loc[df.index[5::37], "job"] = None
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
        out = kernel.apply(pmd, fitted, stream).frame.compute().reset_index(drop=True)
    return out, kernel.summary(fitted)


def in_memory(df: pd.DataFrame, params: dict, *, result: bool = False):
    step = build_step("synthesise", params)
    run = Release(Microdata(df, **ROLES), [step], {"none": "engines compared"}, rng=SEED).run()
    frame = run.released.frame.reset_index(drop=True)
    return (frame, run.results[0]) if result else frame


@pytest.mark.parametrize("fit_sample", [0, 600])
def test_same_seed_same_values_in_memory_and_on_1_3_7_partitions(fit_sample):
    df = persons()
    params = {**PARAMS, "fit_sample": fit_sample}
    memory = in_memory(df, params)
    assert not same_values(memory, df)     # something was synthesised
    assert memory["weight"].equals(df["weight"]) and memory["region"].equals(df["region"])
    for npart in (1, 3, 7):
        out, summary = on_dask(df, params, npart)
        assert same_values(out, memory), (fit_sample, npart)
        assert summary["records_fitted"] == (fit_sample or len(df))
        assert "propensity figures (pMSE) from the records of the two files" in summary["scope"]
    # the rule holds on the engine's file too
    assert (out.loc[out["age"] < 3, "job"] == "a").all()


def test_fit_sample_is_seeded_and_of_the_stated_size():
    from sdckit.synth.steps import fit_records

    ss = np.random.SeedSequence(3)
    a, b = fit_records(1000, 250, ss), fit_records(1000, 250, np.random.SeedSequence(3))
    assert np.array_equal(a, b) and a.size == 250 and np.unique(a).size == 250 and (np.diff(a) > 0).all()
    assert fit_records(1000, 0, ss) is None and fit_records(1000, 1000, ss) is None


def _fit(df: pd.DataFrame):
    return Synthesiser(strata=("region",), categorical=("region",), rules=("age < 3 -> job == 'a'",),
                       variables=("sex", "age", "job", "income", "hours")).fit(df)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(block=st.integers(1, 400), seed=st.integers(0, 2**32 - 1))
def test_the_frame_given_or_the_records_fitted_draw_the_same_file(block, seed):
    df = persons(400, seed=2)
    fitted = _fit(df)
    a = fitted.draw(rng=seed, block_rows=block).frame(df)
    b = fitted.draw(rng=seed, frame=df, block_rows=block).frame(df)
    assert same_values(a, b)


def test_blocks_of_a_partitioned_draw_are_those_of_the_whole_file():
    df = persons(700, seed=4)
    fitted = _fit(df)
    ss = np.random.SeedSequence(9)
    whole, _ = fitted.draw_rows(df, ss, first_row=0, n_total=700, block_rows=100)
    # rows 200..500 alone (whole blocks) give the same records as in the whole file
    part, _ = fitted.draw_rows(df.iloc[200:500], ss, first_row=200, n_total=700, block_rows=100)
    def values(parts, lo, hi):
        out = {}
        for _lab, rows, syn in parts:
            for r, v in zip(rows, syn.values["hours"]):
                out[int(r)] = v
        return np.array([out[r] for r in range(lo, hi)])
    assert np.array_equal(values(whole, 200, 500), np.array([values(part, 0, 300)[i] for i in range(300)]))
    with pytest.raises(ValueError, match="whole blocks"):
        fitted.draw_rows(df.iloc[150:300], ss, first_row=150, n_total=700, block_rows=100)
    # a one-block file draws from the stream itself; block b of a longer file from child b
    assert block_stream(ss, 0, 1) is ss
    assert block_stream(ss, 2, 3).spawn_key == child_stream(ss, 2).spawn_key == (*ss.spawn_key, 2)
    one_block = fitted.draw(rng=5, block_rows=700).frame(df)
    seven = fitted.draw(rng=5, block_rows=100).frame(df)
    assert not same_values(one_block, seven)


def test_child_stream_is_numpy_spawn():
    ss = np.random.SeedSequence(42)
    expected = [c.generate_state(2).tolist() for c in np.random.SeedSequence(42).spawn(3)]
    assert [child_stream(ss, i).generate_state(2).tolist() for i in range(3)] == expected


def test_the_dask_plan_needs_the_columns_named_and_writes_them():
    with pytest.raises(SpecError, match="variables: synthesise on the Dask engine needs"):
        build_step("synthesise", {}).dask_plan(ROLES)
    plan = build_step("synthesise", PARAMS).dask_plan(ROLES)
    assert plan.kernel == "synthesis" and plan.writes == tuple(PARAMS["variables"])
    assert {"region", "weight"} <= set(plan.reads)


def test_a_stratum_the_sample_did_not_see_is_named():
    df = persons(400, seed=6)
    df.loc[0, "region"] = 99            # one record alone in its stratum
    fitted = _fit(df.iloc[1:].reset_index(drop=True))
    with pytest.raises(InputError, match=r"strata: the value 99 of 'region' does not occur in the 399 records fitted"):
        fitted.draw(rng=1, frame=df)


def test_the_steps_disclosure_figures_on_dask_equal_the_in_memory_ones():
    df = persons(600, seed=8)
    params = {**PARAMS, "disclosure_keys": ["region", "sex", "age"], "disclosure_targets": ["job", "income"]}
    memory, result = in_memory(df, params, result=True)
    for npart in (1, 3, 7):
        out, summary = on_dask(df, params, npart)
        assert same_values(out, memory)
        assert [d["target"] for d in summary["disclosure"]] == ["job", "income"]
        assert summary["disclosure"] == [dict(d) for d in result.disclosure], npart
        assert summary["repU_percent"] == result.summary["repU_percent"]
        assert summary["DiSCO_percent"] == result.summary["DiSCO_percent"]


SPEC = """[input]
path = "{path}"
{fmt}
[roles]
key_vars = ["region", "sex", "age"]
sensitive = ["job"]

[run]
seed = 5

[[steps]]
method = "synthesise"
variables = ["sex", "age", "job", "income", "hours"]
strata = ["region"]
utility = "none"
draw_block = 100
{more}
[gate]
max_repU = {repu}
max_disco = {disco}
max_tcap = 100

[output]
directory = "{out}"
data = "released.csv"
overwrite = true
"""


def _spec(tmp_path, name: str, path: str, fmt: str = "", more: str = "", repu: float = 100, disco: float = 100):
    p = tmp_path / f"{name}.toml"
    p.write_text(SPEC.format(path=path, fmt=fmt, more=more, repu=repu, disco=disco, out=f"out_{name}"))
    return p


def test_disclosure_thresholds_on_dask_give_the_in_memory_outcomes(tmp_path):
    from sdckit.engine.run import protect_with_dask
    from sdckit.errors import GateError

    df = persons(700, seed=12)
    df.to_csv(tmp_path / "in.csv", index=False)
    (tmp_path / "parts").mkdir()
    for j, rows in enumerate(np.array_split(np.arange(len(df)), 3)):
        df.iloc[rows].to_parquet(tmp_path / "parts" / f"part-{j}.parquet", index=False)
    memory = Release.from_spec(_spec(tmp_path, "memory", "in.csv")).run()
    run = protect_with_dask(_spec(tmp_path, "dask", "parts", 'format = "parquet"'), n_workers=1,
                            processes=False, progress=False)
    mem = {g.name: g for g in memory.gate if g.name in ("max_repU", "max_disco", "max_tcap")}
    got = {g["name"]: g for g in run.gate}
    assert set(got) == set(mem) == {"max_repU", "max_disco", "max_tcap"}
    for name, g in got.items():
        assert g["passed"] and g["value"] == mem[name].value, name
        assert "measured on the Dask engine" in g["detail"]
    assert run.summaries[0]["disclosure"][0]["target"] == "job"
    # a threshold below the measured figure fails on either engine, and nothing is written
    repu = mem["max_repU"].value["repU"]
    assert repu > 0
    with pytest.raises(GateError, match="max_repU"):
        protect_with_dask(_spec(tmp_path, "fail", "parts", 'format = "parquet"', repu=repu / 2), n_workers=1,
                          processes=False, progress=False)
    assert not (tmp_path / "out_fail").exists() or not any((tmp_path / "out_fail").rglob("released*"))


def test_disclosure_thresholds_on_dask_need_synthesise_alone(tmp_path):
    from sdckit.engine.run import protect_with_dask

    persons(300).to_csv(tmp_path / "in.csv", index=False)
    more = '[[steps]]\nmethod = "noise"\nvariables = ["hours"]\nlevel = 0.1\n'
    with pytest.raises(SpecError, match="synthesise is the release's only step"):
        protect_with_dask(_spec(tmp_path, "two", "in.csv", more=more), n_workers=1, processes=False,
                          progress=False)
