"""The ``generalise`` release step and the ``sdckit anonymise`` command."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from sdckit.cli import main
from sdckit.microdata import Microdata
from sdckit.params import is_declared
from sdckit.registry import build_step, step_class

from ..conftest import shared_file

QIS = ["sex", "age", "race", "education"]


def test_step_is_declared_and_guarantees_hold():
    cls = step_class("generalise")
    assert is_declared(cls)
    data = pd.read_csv(shared_file("arx_adult.csv"), dtype=str)
    md = Microdata(data, key_vars=QIS, sensitive=["salary-class"])
    step = build_step("generalise", {"hierarchy_dir": str(shared_file("arx_adult_hierarchies")), "k": 5, "l": 2,
                                     "suppression": 0.01})
    res = step.apply(md)
    s = res.summary
    assert set(s["levels"]) == set(QIS)
    assert s["optimal"] is True and s["nodes_checked"] >= 1
    assert {g.name for g in res.guarantees} >= {"k_anonymity", "l_diversity", "suppressed_within_limit"}
    assert all(g.holds for g in res.guarantees)
    assert res.microdata.n_records == md.n_records


def test_step_needs_a_model_and_hierarchies():
    with pytest.raises(Exception, match="hierarchies"):
        build_step("generalise", {"k": 5})


def test_cli_json(capsys):
    d = shared_file("arx_adult.csv")
    rc = main(["anonymise", str(d), "--hierarchies", str(shared_file("arx_adult_hierarchies")),
               "--qis", ",".join(QIS), "--k", "5", "--suppression", "0.01", "--metric", "discernibility", "--json"])
    out = capsys.readouterr().out
    assert rc == 0
    doc = json.loads(out)
    assert set(doc) >= {"levels", "dm", "n_suppressed", "n_classes", "nodes_checked", "optimal", "seconds"}
    assert doc["levels"].keys() == set(QIS)
    assert doc["optimal"] is True
    assert doc["n_suppressed"] <= int(0.01 * 30162)


def test_cli_error_is_one_line(capsys):
    d = shared_file("arx_adult.csv")
    rc = main(["anonymise", str(d), "--hierarchies", str(shared_file("arx_adult_hierarchies")),
               "--qis", "sex,age", "--k", "100000"])
    err = capsys.readouterr().err.strip()
    assert rc == 2
    assert len(err.splitlines()) == 1 and "no node satisfies" in err and "100000-anonymity" in err


def test_explore_sweeps_the_generalise_step():
    # explore builds steps by name from the registry: generalise sweeps over its declared k grid
    from sdckit.explore.sweep import Candidate, Sweep

    data = pd.read_csv(shared_file("arx_adult.csv"), dtype=str).iloc[:3000]
    md = Microdata(data, key_vars=["sex", "age", "race"])
    cand = Candidate("generalise", {"k": [2, 10]}, {"hierarchy_dir": str(shared_file("arx_adult_hierarchies"))})
    res = Sweep(md, [cand], seeds=[1], n_jobs=1, risk="global_risk", utility="entropy").run()
    runs = res.runs
    assert runs["error"].isna().all(), runs["error"].tolist()
    assert len(runs) == 2
