"""Sweeps, measures, the R-U map, the search and the explore command."""

import json
import pathlib
import subprocess
import sys
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from sdckit import Microdata, SpecError
from sdckit.explore import Candidate, Sweep, choose, entropy_utility, linkage_risk, pareto_front
from sdckit.explore import sweep as sweep_module
from sdckit.explore.search import refine
from sdckit.explore.spec import explore_spec_from_dict
from sdckit.risk import key_frequencies


def census(n=600, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"region": rng.integers(0, 6, n), "sex": rng.integers(1, 3, n),
                         "age": rng.integers(0, 8, n), "hid": np.arange(n)})


def test_linkage_risk_without_protection_is_combinations_over_n():
    """Hand reasoning: every person links to their own combination, of size f: sum 1/f = #combinations."""
    md = Microdata(census(), key_vars=["region", "sex", "age"])
    assert linkage_risk(md, md.frame[list(md.key_vars)]) == pytest.approx(key_frequencies(md).n_combinations / 600)


def test_linkage_risk_hand_case_with_suppression():
    """Released keys (a,1), (a,?), (b,1); intruder knows (a,1), (a,2), (b,1).
    Record 0: compatible views of (a,1): persons 0 -> 1/1. Record 1: (a,?) matches persons 0, 1 -> 1/2.
    Record 2: (b,1) -> 1/1. Mean = (1 + 0.5 + 1) / 3."""
    original = pd.DataFrame({"r": ["a", "a", "b"], "s": [1, 2, 1]})
    released = pd.DataFrame({"r": ["a", "a", "b"], "s": [1, np.nan, 1]})
    md = Microdata(released, key_vars=["r", "s"])
    assert linkage_risk(md, original) == pytest.approx(2.5 / 3)


def test_entropy_utility_bounds():
    md = Microdata(census(), key_vars=["region", "sex", "age"])
    assert entropy_utility(md, md) == pytest.approx(1.0)
    constant = md.with_data(md.frame.assign(age=0, region=0, sex=1))
    assert entropy_utility(md, constant) == pytest.approx(0.0, abs=1e-12)


def test_pareto_front_by_brute_force():
    rng = np.random.default_rng(1)
    r, u = rng.random(40), rng.random(40)
    mask = pareto_front(r, u)
    for i in range(40):
        dominated = any((r[j] <= r[i] and u[j] >= u[i] and (r[j] < r[i] or u[j] > u[i])) for j in range(40))
        assert mask[i] == (not dominated)


def test_cached_rerun_computes_nothing(tmp_path, monkeypatch):
    md = Microdata(census(), key_vars=["region", "sex", "age"])
    calls = Counter()
    real = sweep_module._evaluate

    def counting(task):
        calls[json.dumps(task)] += 1
        return real(task)

    monkeypatch.setattr(sweep_module, "_evaluate", counting)
    cands = [Candidate("local_suppression", {"k": [2, 3]}),
             Candidate("record_swap", {"swap_rate": [0.1, 0.3]},
                       {"hierarchy": ["region"], "similar": ["sex"], "risk_variables": ["age"],
                        "allow_across_top": True})]
    sweep = Sweep(md, cands, seeds=[1, 2], n_jobs=1, cache_dir=tmp_path / "cache", progress=False)
    first = sweep.run()
    assert first.n_computed == 8 and sum(calls.values()) == 8
    second = sweep.run()
    assert second.n_computed == 0 and second.n_cached == 8 and sum(calls.values()) == 8
    pd.testing.assert_frame_equal(first.summary(), second.summary())


def test_failing_candidate_is_reported_and_others_kept(tmp_path):
    md = Microdata(census(), key_vars=["region", "sex", "age"])
    cands = [Candidate("local_suppression", {"k": [2, 100000]})]
    res = Sweep(md, cands, seeds=[1], n_jobs=1, progress=False).run()
    assert len(res.summary()) == 1 and "larger than the number of records" in res.failures()["error"].iloc[0]


def test_choose_and_refine_find_the_boundary():
    md = Microdata(census(2000), key_vars=["region", "sex", "age"])
    cands = [Candidate("local_suppression", {"k": [2, 40]})]
    sweep = Sweep(md, cands, seeds=[1], n_jobs=1, progress=False)
    res = sweep.run()
    s = res.summary()
    threshold = float(s["risk"].mean())  # between the two settings
    before = choose(s, threshold)
    after = choose(refine(sweep, res, cands, threshold, steps=5).summary(), threshold)
    assert before.params["k"] == 40
    assert after.risk <= threshold and after.utility >= before.utility and after.params["k"] < 40


def test_explore_spec_errors():
    base = {"input": {"path": "x.csv"}, "explore": {"threshold": 0.1},
            "candidates": [{"method": "local_suppression", "grid": {"k": [2]}}]}
    explore_spec_from_dict(base)
    with pytest.raises(SpecError, match=r"candidates\[0\]\.grid\.k: must be a non-empty list"):
        explore_spec_from_dict({**base, "candidates": [{"method": "local_suppression", "grid": {"k": []}}]})
    with pytest.raises(SpecError, match=r"candidates\[0\]\.k: must be an int >= 2, got 1"):
        explore_spec_from_dict({**base, "candidates": [{"method": "local_suppression", "grid": {"k": [1]}}]})
    with pytest.raises(SpecError, match=r"explore\.threshold: must be a number > 0"):
        explore_spec_from_dict({**base, "explore": {}})
    with pytest.raises(SpecError, match="candidates: at least one"):
        explore_spec_from_dict({**base, "candidates": []})


def test_explore_command_proposes_a_spec_that_protect_runs(tmp_path):
    census(800).to_csv(tmp_path / "d.csv", index=False)
    (tmp_path / "x.toml").write_text("""
[input]
path = "d.csv"
[roles]
key_vars = ["region", "sex", "age"]
[[steps]]
method = "remove"
variables = ["hid"]
[explore]
threshold = 0.08
seeds = [1]
refine = 2
n_jobs = 1
[[candidates]]
method = "local_suppression"
grid = { k = [2, 5, 20, 40] }
[gate]
k_anonymity = 2
[output]
directory = "release"
""")
    cmd = [sys.executable, "-m", "sdckit"]
    r = subprocess.run([*cmd, "explore", str(tmp_path / "x.toml"), "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["chosen"]["method"] == "local_suppression" and out["risk"] <= out["threshold"] == 0.08
    # the proposal keeps the margin below the threshold, and its spec is gated on that threshold
    assert out["risk"] <= 0.08 * (1 - 0.02)
    assert "max_linkage_risk = 0.08" in pathlib.Path(out["spec_written"]).read_text()
    p = subprocess.run([*cmd, "protect", out["spec_written"], "--json"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["passed"] is True
    assert (tmp_path / "release" / "released.csv").exists()


def test_candidate_grid_comes_from_the_step_declaration():
    from sdckit.masking.local_suppression import LocalSuppression
    from sdckit.params import step_params
    base = {"input": {"path": "x.csv"}, "explore": {"threshold": 0.1}}
    # no grid: the declared grid of the step's first parameter with one (k of local_suppression)
    spec = explore_spec_from_dict({**base, "candidates": [{"method": "local_suppression"}]})
    declared = next(p for p in step_params(LocalSuppression) if p.name == "k").grid
    assert spec.candidates[0].grid == {"k": list(declared)}
    # a fixed parameter is not swept: record_swap's first grid (swap_rate) is fixed, the next is used
    spec = explore_spec_from_dict({**base, "candidates": [
        {"method": "record_swap", "fixed": {"hierarchy": ["region"], "swap_rate": 0.1}}]})
    assert list(spec.candidates[0].grid) == ["k_anonymity"]
    # each grid value is checked against its declaration, and unknown names are refused
    with pytest.raises(SpecError, match=r"candidates\[0\]\.p: must be a number in \(0, 100\], got 0"):
        explore_spec_from_dict({**base, "candidates": [{"method": "rank_swap", "grid": {"p": [5, 0]}}]})
    with pytest.raises(SpecError, match=r"candidates\[0\]\.grid\.kk: unknown parameter of step 'local_suppression'"):
        explore_spec_from_dict({**base, "candidates": [{"method": "local_suppression", "grid": {"kk": [2]}}]})
