"""SafePub's data-independent variant: (epsilon, delta)-DP at levels the steward gives
(Li, Qardaji and Su 2012; ARX's EDDifferentialPrivacy with a DataGeneralizationScheme)."""

from __future__ import annotations

import json
import math
import tomllib

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import InputError, SDCError
from sdckit.lattice import find_hierarchies
from sdckit.lattice.dp_params import dp_parameters
from sdckit.lattice.hierarchies import Hierarchy
from sdckit.lattice.safepub_fixed import PRESETS, safepub_fixed
from sdckit.lattice.safepub_step import FixedSafePubDP
from sdckit.lattice.steps import Generalise
from sdckit.microdata import Microdata
from sdckit.params import step_params
from sdckit.registry import build_step
from sdckit.result import jsonable
from sdckit.spec import spec_from_dict

from ..conftest import shared_file
from .test_safepub import _arx_reference

QIS = ["sex", "age", "race", "education"]
LEVELS = {"sex": 0, "age": 2, "race": 1, "education": 2}


def _adult():
    data = pd.read_csv(shared_file("arx_adult.csv"), dtype=str)[QIS]
    return data, find_hierarchies(shared_file("arx_adult_hierarchies"), QIS)


def _reference_release(data, hier, levels, seed, beta, k):
    """The release computed with plain pandas: the same seeded draw (one uniform per record, as
    ARX draws nextDouble() < beta), each value mapped through its hierarchy's table at its level,
    classes counted by group-by and those below k dropped."""
    drawn = np.random.default_rng(seed).random(len(data)) < beta
    out = data.loc[drawn].copy()
    for q, lv in levels.items():
        table = hier[q].table
        out[q] = out[q].map(dict(zip(table.iloc[:, 0].astype(str), table.iloc[:, lv].astype(str))))
    size = out.groupby(list(levels), sort=False)[list(levels)[0]].transform("size")
    return out.loc[size >= k]


@pytest.mark.parametrize("epsilon, delta", [(0.5, 1e-6), (1.0, 1e-6), (1.0, 1e-5), (2.0, 1e-4)])
def test_k_and_beta_spend_the_whole_epsilon(epsilon, delta):
    # ARX's EDDifferentialPrivacy.initialize: no search budget is subtracted when the model has a
    # generalisation scheme; the reference is test_safepub's plain-double ParameterCalculation
    data, hier = _adult()
    rb, rk = _arx_reference(epsilon, delta)
    _, res = safepub_fixed(data, QIS, hier, epsilon=epsilon, delta=delta, levels=LEVELS,
                           rng=np.random.default_rng(0))
    assert res.k == rk and res.beta == pytest.approx(rb, rel=1e-12)
    assert res.epsilon_anon == epsilon


def test_release_equals_a_pandas_reference():
    data, hier = _adult()
    for seed, eps in [(3, 1.0), (4, 2.0)]:
        out, res = safepub_fixed(data, QIS, hier, epsilon=eps, delta=1e-5, levels=LEVELS,
                                 rng=np.random.default_rng(seed))
        ref = _reference_release(data, hier, LEVELS, seed, res.beta, res.k)
        assert len(ref) > 0
        pd.testing.assert_frame_equal(out.astype(str), ref.astype(str))
        assert res.n_released == len(out) and res.level_map == LEVELS


def test_sample_share_is_beta():
    # 30,162 records: the binomial sd of the share is sqrt(b (1 - b) / n); 5 sd tolerance, fixed seeds
    data, hier = _adult()
    for eps, seed in [(0.6, 1), (1.2, 2), (2.0, 3)]:
        _, res = safepub_fixed(data, QIS, hier, epsilon=eps, delta=1e-5, levels=LEVELS,
                               rng=np.random.default_rng(seed))
        sd = math.sqrt(res.beta * (1 - res.beta) / len(data))
        assert abs(res.n_sampled / len(data) - res.beta) < 5 * sd


def test_presets_round_half_up_as_java():
    # heights of adult's hierarchies: sex 1, age 4, race 1, education 3 (read from the files below);
    # Java's Math.round(share * height), half up, by hand: medium 0.5 -> sex 1 (0.5), age 2, race 1,
    # education 2 (1.5); low 0.2 -> 0 (0.2), 1 (0.8), 0, 1 (0.6); high 0.8 -> 1, 3 (3.2), 1, 2 (2.4)
    data, hier = _adult()
    assert {q: hier[q].n_levels for q in QIS} == {"sex": 1, "age": 4, "race": 1, "education": 3}
    expected = {"medium": {"sex": 1, "age": 2, "race": 1, "education": 2},
                "low": {"sex": 0, "age": 1, "race": 0, "education": 1},
                "high": {"sex": 1, "age": 3, "race": 1, "education": 2},
                "none": dict.fromkeys(QIS, 0), "complete": {"sex": 1, "age": 4, "race": 1, "education": 3}}
    for preset, lv in expected.items():
        _, res = safepub_fixed(data, QIS, hier, epsilon=1.0, delta=1e-5, levels={}, preset=preset,
                               rng=np.random.default_rng(0))
        assert res.level_map == lv, preset
    # a level given wins over the preset
    _, res = safepub_fixed(data, QIS, hier, epsilon=1.0, delta=1e-5, levels={"age": 0}, preset="complete",
                           rng=np.random.default_rng(0))
    assert res.level_map["age"] == 0 and res.level_map["education"] == 3
    assert set(PRESETS) == {"none", "low", "low_medium", "medium", "medium_high", "high", "complete"}


A_H = Hierarchy(pd.DataFrame({0: ["x", "y", "z"], 1: ["xy", "xy", "z"], 2: ["*"] * 3}), "a.csv")
B_H = Hierarchy(pd.DataFrame({0: ["p", "q"], 1: ["*", "*"]}), "b.csv")


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("xyz"), st.sampled_from("pq")), min_size=1, max_size=120),
       st.integers(0, 2 ** 32 - 1), st.integers(0, 2), st.integers(0, 1))
def test_release_invariants(rows, seed, la, lb):
    # any data, any seed, any levels: no released class below k; every released record is a drawn
    # input record with its values replaced by exactly the given levels' labels (epsilon 1, delta 0.2)
    data = pd.DataFrame(rows, columns=["a", "b"])
    hier = {"a": A_H, "b": B_H}
    out, res = safepub_fixed(data, ["a", "b"], hier, epsilon=1.0, delta=0.2, levels={"a": la, "b": lb},
                             rng=np.random.default_rng(seed))
    assert res.k == dp_parameters(1.0, 0.2)[1]
    assert res.n_released == len(out) <= res.n_sampled
    if len(out):
        assert out.groupby(["a", "b"]).size().min() >= res.k
        assert set(out.index) <= set(data.index)
        up_a = {0: {"x": "x", "y": "y", "z": "z"}, 1: {"x": "xy", "y": "xy", "z": "z"}, 2: dict.fromkeys("xyz", "*")}
        assert (out["a"] == data.loc[out.index, "a"].map(up_a[la])).all()
        assert (out["b"] == (data.loc[out.index, "b"] if lb == 0 else "*")).all()


def _step(**dp):
    return build_step("generalise", {"hierarchy_dir": str(shared_file("arx_adult_hierarchies")),
                                     "dp": {"type": "safepub_fixed", "epsilon": 1.0, "delta": 1e-5, **dp}})


def test_step_release_and_the_seed_is_not_public():
    data, _ = _adult()
    md = Microdata(data, key_vars=QIS)
    seed = 918273645546372819
    step = _step(levels=LEVELS)
    r1, r2 = step.apply(md, rng=seed), step.apply(md, rng=seed)
    assert r1.summary == r2.summary and r1.microdata.frame.equals(r2.microdata.frame)
    assert all(g.holds for g in r1.guarantees)
    assert {g.name for g in r1.guarantees} == {"dp_min_class_size", "dp_released_subset", "dp_given_levels"}
    d = r1.summary["dp"]
    assert d["k"] == dp_parameters(1.0, 1e-5)[1] and d["levels"] == LEVELS and "n_sampled" not in d
    assert r1.microdata.frame.groupby(QIS).size().min() >= d["k"]
    public = json.dumps(jsonable({"summary": r1.summary, "params": r1.params,
                                  "guarantees": [g.to_dict() for g in r1.guarantees]}))
    assert str(seed) not in public and "seed" not in public
    # the metric is not used: any metric is taken (the data-dependent variant refuses kl_divergence)
    assert build_step("generalise", {"hierarchy_dir": "h", "metric": "kl_divergence",
                                     "dp": {"type": "safepub_fixed", "levels": {"age": 1}}})


def test_spec_and_declaration():
    spec = spec_from_dict(tomllib.loads("""
        [input]
        path = "x.csv"
        [roles]
        key_vars = ["age", "sex"]
        [[steps]]
        method = "generalise"
        hierarchy_dir = "h"
        dp = { type = "safepub_fixed", epsilon = 1.5, delta = 1e-6, levels = { age = 2, sex = 0 } }
        [gate]
        k_anonymity = 2
    """))
    assert spec.steps[0].dp == FixedSafePubDP(epsilon=1.5, delta=1e-6, levels={"age": 2, "sex": 0})
    # the workbench's form comes from the declaration: the variant and its own parameters
    dp = {q.name: q for q in step_params(Generalise)}["dp"].to_dict()
    fixed = {v["type"]: v for v in dp["variants"]}["safepub_fixed"]
    params = {p["name"]: p for p in fixed["params"]}
    assert list(params) == ["epsilon", "delta", "levels", "preset"]
    assert params["levels"]["value_kind"] == "int" and "complete" in params["preset"]["choices"]
    # a form's empty table (null) with a preset: no level given
    assert FixedSafePubDP(levels=None, preset="medium").levels == {}


@pytest.mark.parametrize("dp, match", [
    ({"levels": {"age": 9, "sex": 0, "race": 0, "education": 0}}, r"level 9 of 'age' is outside its hierarchy "
                                                                   r"\(adult_hierarchy_age.csv, height 4\)"),
    ({"levels": {"age": 1}}, "quasi-identifier 'sex' has no level"),
    ({"levels": {"age": 1, "zip": 0}, "preset": "none"}, "'zip', which is not a quasi-identifier"),
])
def test_refusals_at_apply(dp, match):
    data, _ = _adult()
    with pytest.raises(InputError, match=match):
        _step(**dp).apply(Microdata(data, key_vars=QIS), rng=1)


@pytest.mark.parametrize("extra, match", [
    ({"l": 2.0}, "SafePub"), ({"suppression": 0.01}, "SafePub"), ({"local_recoding": 1}, "SafePub"),
    ({"search": {"type": "heuristic"}}, "SafePub"), ({"time_limit": 5.0}, "SafePub"),
    ({"dp": {"type": "safepub_fixed"}}, "give levels"),
    ({"dp": {"type": "safepub_fixed", "levels": {"age": -1}}}, "negative"),
    ({"dp": {"type": "safepub_fixed", "preset": "most"}}, "preset"),
])
def test_refusals_at_construction(extra, match):
    params = {"hierarchy_dir": "h", "dp": {"type": "safepub_fixed", "levels": {"age": 1}}, **extra}
    with pytest.raises(SDCError, match=match):
        build_step("generalise", params)


def test_a_column_outside_the_qis_is_refused():
    full = Microdata(pd.read_csv(shared_file("arx_adult.csv"), dtype=str), key_vars=QIS)
    with pytest.raises(InputError, match="not a quasi-identifier"):
        _step(levels=LEVELS).apply(full, rng=1)


def test_cli_dp_levels(tmp_path, capsys):
    from sdckit.cli import main

    out = tmp_path / "rel.csv"
    base = ["anonymise", str(shared_file("arx_adult.csv")), "--hierarchies",
            str(shared_file("arx_adult_hierarchies")), "--qis", ",".join(QIS)]
    main([*base, "--epsilon", "1.0", "--delta", "1e-5", "--dp-levels", "age=2,sex=0", "--dp-preset", "medium",
          "--output", str(out), "--json"])
    summary = json.loads(capsys.readouterr().out)
    assert summary["levels"] == {"sex": 0, "age": 2, "race": 1, "education": 2}
    rel = pd.read_csv(out, dtype=str)
    k = dp_parameters(1.0, 1e-5)[1]
    assert summary["dp"]["k"] == k and list(rel.columns) == QIS and rel.groupby(QIS).size().min() >= k
    assert set(rel["age"]) <= set(find_hierarchies(shared_file("arx_adult_hierarchies"), ["age"])["age"].table[2])
    assert main([*base, "--dp-levels", "age=2", "--json"]) == 2
    assert "give --epsilon" in capsys.readouterr().out
    assert main([*base, "--epsilon", "1", "--dp-levels", "age=x", "--json"]) == 2
    assert "not qi=level" in capsys.readouterr().out
