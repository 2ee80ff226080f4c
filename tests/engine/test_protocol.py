"""The Dask engine as a protocol on steps and gate checks (no list of names in the engine).

* every step claiming ``engines=("memory", "dask")`` declares its partitioned plan
  (``dask_plan(roles)`` -> :class:`sdckit.registry.DaskPlan` of a kernel the engine has, whose
  columns exist); every gate check claiming it declares ``dask_summary`` and ``finish``;
* a step or gate check that claims the engine without the protocol fails the check and is
  refused by the engine;
* same seed, same bytes: every step claiming the engine, run through its declared plan with
  the runner's stream for step 0, gives the same released values for 1 and 3 partitions; for
  the exact kernels (pram, noise, rows) these are the in-memory release's values;
* the engine runs its steps through the one runner's partitioned form.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from sdckit import registry, runner
from sdckit.engine.frame import from_pandas, same_values
from sdckit.engine.kernels import KERNELS, gate_protocol_problems, plan_problems, step_protocol_problems
from sdckit.errors import SpecError
from sdckit.microdata import Microdata
from sdckit.params import param
from sdckit.registry import DaskPlan, GateCheck, build_step, gate_check_class, known_gate_checks, known_steps
from sdckit.registry import step_class as step_class_of
from sdckit.release import Release
from sdckit.result import StepResult

from .conftest import person_frame

ROLES = {"key_vars": ["region", "sex", "age", "job"], "numeric_vars": ["income", "hours"], "weight": "weight"}
HH_ROLES = {"key_vars": ["region", "district", "sex", "age"], "household": "hid"}


def _households(n_hh: int = 300, seed: int = 7) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    hid = np.repeat(np.arange(n_hh), 2)
    region = rng.integers(0, 4, n_hh)
    district = region * 10 + rng.integers(0, 5, n_hh)
    return pd.DataFrame({"hid": hid, "region": region[hid], "district": district[hid], "hsize": 2,
                         "sex": rng.integers(1, 3, hid.size), "age": rng.integers(0, 18, hid.size)})


#: one case per step claiming the engine: (data, roles, parameters)
CASES = {
    "pram": ("persons", ROLES, {"variables": ["age", "job"], "min_diagonal": 0.7, "strata": ["sex"]}),
    "noise": ("persons", ROLES, {"variables": ["income", "hours"], "level": 0.1, "kind": "correlated",
                                 "restore": "kim"}),
    "remove": ("persons", ROLES, {"variables": ["grade"]}),
    "recode": ("persons", ROLES, {"variable": "job", "mapping": {"ab": ["a", "b"], "cde": ["c", "d", "e"]}}),
    "rank_swap": ("persons", ROLES, {"variables": ["hours"], "p": 3}),
    "microaggregation": ("persons", ROLES, {"variables": ["hours"], "k": 4}),
    "local_suppression": ("persons", ROLES, {"k": 3}),
    "record_swap": ("households", HH_ROLES, {"hierarchy": ["region", "district"], "similar": [["hsize"]],
                                             "risk_variables": ["sex", "age"], "swap_rate": 0.1,
                                             "k_anonymity": 3}),
    "synthesise": ("persons", ROLES, {"variables": ["sex", "age", "job", "income", "hours"], "strata": ["region"],
                                      "draw_block": 256, "utility": "none"}),
}
EXACT = ("pram", "noise", "rows", "synthesis")


def _claiming_steps() -> list[str]:
    return [n for n in known_steps() if "dask" in step_class_of(n).engines
            and step_class_of(n).__module__.startswith("sdckit.")]


def test_every_step_claiming_dask_declares_a_valid_plan():
    assert sorted(_claiming_steps()) == sorted(CASES), "give every step claiming dask a case here"
    for name in _claiming_steps():
        cls = step_class_of(name)
        assert step_protocol_problems(cls) == [], name
        data, roles, params = CASES[name]
        df = _data(data)
        plan = build_step(name, params).dask_plan(roles)
        assert plan_problems(plan, list(df.columns)) == [], (name, plan)
        assert set(plan.writes) <= set(df.columns) and plan.kernel in KERNELS


def test_every_gate_check_claiming_dask_implements_its_partitioned_form():
    claiming = [n for n in known_gate_checks() if "dask" in gate_check_class(n).engines]
    assert {"k_anonymity", "max_global_risk", "max_individual_risk", "min_diagonal"} <= set(claiming)
    for name in claiming:
        assert gate_protocol_problems(gate_check_class(name)) == [], name


@dataclass(frozen=True)
class ClaimsDaskWithoutPlan:
    """A step claiming the Dask engine without declaring its partitioned plan."""

    variables: tuple = param(("x",), kind="columns", help="columns")

    def apply(self, microdata, *, rng=None):  # pragma: no cover - never run
        return StepResult("claims_dask_without_plan", microdata, dict(self.__dict__), {})


def test_a_step_claiming_dask_without_its_plan_fails_the_check_and_is_refused(tmp_path, monkeypatch):
    from sdckit.engine.run import engine_steps, load_engine_spec
    from sdckit.testing import check_engines_honoured

    monkeypatch.setitem(registry._STEPS, "claims_dask_without_plan", ClaimsDaskWithoutPlan)
    monkeypatch.setattr(ClaimsDaskWithoutPlan, "step_name", "claims_dask_without_plan", raising=False)
    monkeypatch.setattr(ClaimsDaskWithoutPlan, "engines", ("memory", "dask"), raising=False)
    monkeypatch.setattr(ClaimsDaskWithoutPlan, "dask_note", None, raising=False)
    problems = step_protocol_problems(ClaimsDaskWithoutPlan)
    assert len(problems) == 1 and "dask_plan" in problems[0]
    with pytest.raises(AssertionError, match="dask_plan"):
        check_engines_honoured(ClaimsDaskWithoutPlan)
    assert "claims_dask_without_plan" not in engine_steps()
    (tmp_path / "in.csv").write_text("x,y\n1,2\n")
    spec = tmp_path / "release.toml"
    spec.write_text('[input]\npath = "in.csv"\n[[steps]]\nmethod = "claims_dask_without_plan"\n'
                    '[gate]\nnone = "test"\n[output]\ndirectory = "out"\n')
    with pytest.raises(SpecError, match="'claims_dask_without_plan' does not run on the Dask engine"):
        load_engine_spec(spec)
    # a plan of a kernel the engine does not have, or of missing columns, is named too
    assert "unknown kernel" in plan_problems(DaskPlan("teleport", ("x",), ("x",)), ["x"])[0]
    assert "not in the data" in plan_problems(DaskPlan("rows", ("z",), ("z",)), ["x"])[0]


def test_a_gate_check_claiming_dask_without_finish_fails_the_check():
    @dataclass(frozen=True)
    class NoFinish(GateCheck):
        k: int = param(kind="int", low=1, label="k", help="a threshold")

    NoFinish.gate_name, NoFinish.engines = "no_finish", ("memory", "dask")
    assert "dask_summary" in gate_protocol_problems(NoFinish)[0]
    NoFinish.dask_summary = "frequencies"
    assert "finish" in gate_protocol_problems(NoFinish)[0]


def _data(kind: str) -> pd.DataFrame:
    if kind == "households":
        return _households()
    return person_frame(1200, seed=11).assign(grade=np.arange(1200) % 4)


def _run_plan(df: pd.DataFrame, roles: dict, step, stream, npartitions: int) -> pd.DataFrame:
    """The step through its declared plan and the engine's kernel, on ``npartitions`` partitions."""
    plan = step.dask_plan(roles)
    kernel = KERNELS[plan.kernel]
    settings = kernel.settings(step, plan, roles)
    pmd = from_pandas(df, npartitions=npartitions, **roles)
    stats = kernel.stats(pmd, settings).compute(scheduler="sync")
    fitted = kernel.fit(pmd, settings, stats, stream)
    return kernel.apply(pmd, fitted, stream).frame.compute(scheduler="sync").reset_index(drop=True)


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_seed_same_bytes_on_any_partitioning_and_as_in_memory(name):
    data, roles, params = CASES[name]
    df = _data(data)
    step = build_step(name, params)
    seed = 20261126
    stream = np.random.SeedSequence(seed).spawn(1)[0]  # the runner's stream of step 0
    one = _run_plan(df, roles, step, stream, 1)
    three = _run_plan(df, roles, step, np.random.SeedSequence(seed).spawn(1)[0], 3)
    assert same_values(one, three), name
    if step.dask_plan(roles).kernel in EXACT:
        memory = Release(Microdata(df, **roles), [step], {"none": "engines compared"}, rng=seed).run()
        expected = memory.released.frame.reset_index(drop=True)
        for c in expected.columns:  # a recoded or noised column is written as the engine's dtype
            if c in step.dask_plan(roles).writes and pd.api.types.is_numeric_dtype(one[c]):
                expected[c] = expected[c].astype(one[c].dtype)
        assert same_values(one, expected), name


def test_the_engine_runs_its_steps_through_the_runner(tmp_path, monkeypatch):
    from sdckit.engine.run import protect_with_dask

    calls = []
    real = runner.run_partitioned

    def counting(data, steps, rng, **kw):
        calls.append([type(es.step).step_name for es in steps])
        return real(data, steps, rng, **kw)

    monkeypatch.setattr(runner, "run_partitioned", counting)
    df = person_frame(1500, seed=3)
    df.to_csv(tmp_path / "in.csv", index=False)
    (tmp_path / "release.toml").write_text(
        '[input]\npath = "in.csv"\n[roles]\nkey_vars = ["region", "sex", "age", "job"]\n'
        'numeric_vars = ["income", "hours"]\n[run]\nseed = 5\n'
        '[[steps]]\nmethod = "pram"\nvariables = ["age"]\n[[steps]]\nmethod = "noise"\nvariables = ["hours"]\n'
        'level = 0.1\nkind = "additive"\n[gate]\nnone = "runner test"\n'
        '[output]\ndirectory = "out"\ndata = "released.parquet"\nkeep_order = true\n')
    run = protect_with_dask(tmp_path / "release.toml", n_workers=1, processes=False, progress=False)
    assert calls == [["pram", "noise"]]
    assert run.seed_record["steps"] == [[0], [1]] and str(run.seed_record["root"]["entropy"]) == "5"
    memory = Release.from_spec(tmp_path / "release.toml").run()
    released = pd.read_parquet(run.paths["data"]).reset_index(drop=True)
    assert same_values(released, memory.released.frame.reset_index(drop=True))
    # both run kinds are release outcomes, and one template writes both public reports
    import sdckit.engine.output as output
    from sdckit.report.release import outcome_report_html

    assert isinstance(run, runner.ReleaseOutcome) and isinstance(memory, runner.ReleaseOutcome)
    assert not hasattr(output, "public_html")
    dask_report = run.paths["report"].read_text("utf-8")
    memory_report = outcome_report_html(memory)
    for marker in ('<section id="verdict"', '<nav class="toc" id="contents">', '<h2 id="steps">Steps</h2>'):
        assert marker in dask_report and marker in memory_report, marker
    assert "NOT CHECKED</span>: runner test" in dask_report
    assert "PRAM changed the categories of age" in dask_report
