"""The one step runner (:mod:`sdckit.runner`): the seed-per-step rule, the cache of step
prefixes, the progress callbacks, and the clients that run steps through it (the release,
the workbench's preview, the explore sweep; the Dask engine in tests/engine/test_protocol.py).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdckit import runner
from sdckit.errors import SDCError
from sdckit.masking.noise import Noise
from sdckit.masking.remove import RemoveVariables
from sdckit.microdata import Microdata
from sdckit.pram.steps import Pram
from sdckit.runner import StepCache, run_steps


def frame(n: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"region": rng.integers(1, 6, n), "sex": rng.choice(["f", "m"], n),
                         "age": rng.integers(0, 9, n), "income": rng.lognormal(10, 0.5, n),
                         "pid": np.arange(n)})


@pytest.fixture
def md() -> Microdata:
    return Microdata(frame(), key_vars=["region", "sex", "age"], numeric_vars=["income"])


@dataclass(frozen=True)
class Counting:
    """A step that records each time it really runs (the cache must spare it)."""

    inner: object
    log: list = field(default_factory=list, repr=False, compare=False)

    def apply(self, microdata, *, rng=None):
        self.log.append(repr(self.inner))
        return self.inner.apply(microdata, rng=rng)


def test_step_i_draws_from_child_i_of_the_root(md):
    steps = [Pram(["region"]), Noise(level=0.1, variables=["income"])]
    done = run_steps(md, steps, 123)
    # independent computation: NumPy's own SeedSequence(123).spawn(2), each step applied by hand
    children = np.random.SeedSequence(123).spawn(2)
    a = steps[0].apply(md, rng=children[0])
    b = steps[1].apply(a.microdata, rng=children[1])
    pd.testing.assert_frame_equal(done.released.frame, b.microdata.frame)
    assert done.datas[0] is md and len(done.results) == 2 and len(done.timings) == 2
    assert done.seeds.root.entropy == 123 and [s.spawn_key for s in done.seeds.steps] == [(0,), (1,)]
    other = run_steps(md, steps, 124)
    assert not other.released.frame.equals(done.released.frame)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**63 - 1), order=st.permutations([0, 1, 2]), n=st.integers(0, 3))
def test_any_seed_any_steps_the_rule_holds_and_the_cache_changes_nothing(md, seed, order, n):
    pool = [Pram(["region"]), Noise(level=0.1, variables=["income"]), Pram(["age"], min_diagonal=0.6)]
    steps = [pool[i] for i in order[:n]]
    cache = StepCache()
    done = run_steps(md, steps, seed, cache=cache)
    current = md
    for step, child in zip(steps, np.random.SeedSequence(seed).spawn(len(steps))):
        current = step.apply(current, rng=child).microdata
    pd.testing.assert_frame_equal(done.released.frame, current.frame)
    assert [s.spawn_key for s in done.seeds.steps] == [(i,) for i in range(n)]
    again = run_steps(md, steps, seed, cache=cache)
    assert all(again.cached) and all(a is b for a, b in zip(again.results, done.results))


def test_the_cache_reruns_only_from_the_first_changed_step(md):
    a, b, c = Counting(RemoveVariables(["pid"])), Counting(Pram(["region"])), Counting(Pram(["age"]))
    cache = StepCache()
    first = run_steps(md, [a, b, c], 5, cache=cache)
    assert first.cached == (False, False, False) and (len(a.log), len(b.log), len(c.log)) == (1, 1, 1)
    again = run_steps(md, [a, b, c], 5, cache=cache)
    assert again.cached == (True, True, True) and (len(a.log), len(b.log), len(c.log)) == (1, 1, 1)
    pd.testing.assert_frame_equal(again.released.frame, first.released.frame)
    b2 = Counting(Pram(["region"], min_diagonal=0.6))
    changed = run_steps(md, [a, b2, c], 5, cache=cache)
    assert changed.cached == (True, False, False) and len(c.log) == 2
    # another seed, or another input object with the same values, is another run
    assert run_steps(md, [a, b, c], 6, cache=cache).cached == (False, False, False)
    twin = Microdata(md.frame.copy(), key_vars=list(md.key_vars), numeric_vars=list(md.numeric_vars))
    assert run_steps(twin, [a], 5, cache=cache).cached == (False,)
    # OS entropy is a new run each time (and recorded)
    none = run_steps(md, [a], None, cache=cache)
    assert none.cached == (False,) and none.seeds.root.source == "os"


def test_on_step_sees_each_step_and_can_stop_the_run(md):
    seen = []

    def stop_after_first(i, step, result, seconds):
        seen.append((i, result.method))
        if i == 0:
            raise SDCError("stop")

    with pytest.raises(SDCError, match="stop"):
        run_steps(md, [Pram(["region"]), Pram(["age"])], 1, on_step=stop_after_first)
    assert seen == [(0, "pram")]


@pytest.fixture
def counted(monkeypatch):
    calls: list[int] = []
    real = runner.run_steps

    def counting(microdata, steps, rng, **kw):
        calls.append(len(tuple(steps)))
        return real(microdata, steps, rng, **kw)

    monkeypatch.setattr(runner, "run_steps", counting)
    return calls


def test_the_release_runs_its_steps_through_the_runner(md, counted):
    from sdckit.release import Release

    steps = [Pram(["region"]), Noise(level=0.1, variables=["income"])]
    run = Release(md, steps, {"k_anonymity": 2}, rng=9).run()
    assert counted == [2]
    # the release's rows are the runner's rows for the same seed
    pd.testing.assert_frame_equal(run.released.frame, run_steps(md, steps, 9).released.frame)
    assert [s.spawn_key for s in run.seeds.steps] == [(0,), (1,)]


def test_the_workbench_preview_runs_through_the_runner_and_its_cache(tmp_path, counted):
    from sdckit.app.session import Session
    from sdckit.release import Release

    data = tmp_path / "data"
    data.mkdir()
    frame().to_csv(data / "p.csv", index=False)
    s = Session(tmp_path / "wb", [data])
    s.open(data / "p.csv", roles={"key_vars": ["region", "sex", "age"], "numeric_vars": ["income"]})
    state = copy.deepcopy(s.state)
    state["steps"] = [{"method": "pram", "variables": ["region"]}, {"method": "pram", "variables": ["age"]}]
    state["run"] = {"seed": 77}
    state["gate"] = {"k_anonymity": 2}
    first = s.preview(state)
    second = s.preview(state)
    assert counted == [2, 2] and first.error is None
    assert second.results[0] is first.results[0] and second.results[1] is first.results[1]  # from the cache
    # the preview's rows are the release's rows for the same spec
    md = s.microdata(state["roles"])
    release = Release(md, [Pram(["region"]), Pram(["age"])], {"k_anonymity": 2}, rng=77).run()
    pd.testing.assert_frame_equal(first.released.frame, release.released.frame)
    # a failing step is reported with its number, the steps before it kept (from the cache)
    state["steps"].append({"method": "local_suppression", "k": 100000})
    bad = s.preview(state)
    assert bad.failed_step == 2 and len(bad.results) == 2 and bad.error.startswith("step 3 (local_suppression)")
    assert bad.results[1] is first.results[1] and counted[-1] == 3


def test_the_sweep_runs_through_the_runner_with_the_release_seed_rule(md, counted):
    from sdckit.explore.measures import get_measure
    from sdckit.explore.sweep import Candidate, Sweep, intruder_view
    from sdckit.registry import build_step
    from sdckit.release import Release

    pre = [RemoveVariables(["pid"])]
    sweep = Sweep(md, [Candidate("pram", {"min_diagonal": [0.6, 0.8]}, {"variables": ["region", "age"]})],
                  risk="linkage", pre_steps=pre, seeds=[3, 4], n_jobs=1, progress=False)
    res = sweep.run()
    assert res.n_computed == 4 and res.runs["error"].isna().all()
    assert counted.count(1) == 2 and counted.count(2) == 4  # pre-steps once per seed, then each task
    # seed s of the sweep is the release of [pre-steps, candidate] with seed s (the one rule)
    risk = get_measure("risk", "linkage")
    for row in res.runs.itertuples():
        step = build_step("pram", json.loads(row.params))
        released = Release(md, [*pre, step], {"none": "compared"}, rng=int(row.seed)).run().released
        assert row.risk == pytest.approx(risk(md, released, intruder_view(md, [*pre, step])), abs=0)
