"""ARX's further models and metrics through the ``generalise`` step and ``sdckit anonymise``."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from sdckit.cli import main
from sdckit.errors import InputError
from sdckit.lattice.checks_arx import arx_guarantees
from sdckit.microdata import Microdata
from sdckit.registry import build_step

from ..conftest import shared_file

QIS = ["sex", "age", "race", "education"]


def _md():
    data = pd.read_csv(shared_file("arx_adult.csv"), dtype=str)
    return Microdata(data, key_vars=QIS, sensitive=["salary-class"])


@pytest.mark.parametrize("settings, names", [
    ({"beta": 1.0, "k": 2}, {"beta_likeness", "k_anonymity"}),
    ({"beta": 1.0, "beta_variant": "enhanced"}, {"beta_likeness"}),
    ({"delta_disclosure": 1.0}, {"delta_disclosure"}),
    ({"t": 0.1, "t_distance": "ordered", "k": None}, {"t_closeness_ordered"}),
    ({"k": None, "k_map": 5, "population_size": 300_000.0}, {"k_map"}),
    ({"k": None, "population_uniqueness": 0.001, "population_size": 300_000.0, "uniqueness_model": "zayatz"},
     {"population_uniqueness"}),
])
def test_step_guarantees_hold(settings, names):
    step = build_step("generalise", {"hierarchy_dir": str(shared_file("arx_adult_hierarchies")),
                                     "suppression": 0.0, **settings})
    res = step.apply(_md())
    got = {g.name: g for g in res.guarantees}
    assert names <= set(got)
    assert all(g.holds for g in res.guarantees), [g for g in res.guarantees if not g.holds]


def test_step_classification_metric_uses_the_sensitive_variable():
    step = build_step("generalise", {"hierarchy_dir": str(shared_file("arx_adult_hierarchies")), "k": 5,
                                     "metric": "classification"})
    res = step.apply(_md())
    assert res.summary["metric"] == "classification" and 0.0 <= res.summary["metric_value"] <= 1.0


def test_release_check_catches_a_violation():
    # a hand-made release: class a has p(x) = 1 against q(x) = 0.5, (1 - 0.5) / 0.5 = 1 > beta 0.5,
    # and |log2(1 / 0.5)| = 1 >= delta 1
    out = pd.DataFrame({"a": ["a", "a", "b", "b"], "s": ["x", "x", "y", "y"]})

    class S:
        beta, beta_variant, delta_disclosure, t, t_distance = 0.5, "basic", 1.0, None, "equal"
        k_map = population_uniqueness = None

    g = {x.name: x for x in arx_guarantees(out, out, ["a"], S, "s")}
    assert g["beta_likeness"].holds is False and g["beta_likeness"].value == pytest.approx(0.5)
    assert g["delta_disclosure"].holds is False and g["delta_disclosure"].value == pytest.approx(1.0)


def test_cli_new_model_and_metric(capsys):
    rc = main(["anonymise", str(shared_file("arx_adult.csv")), "--hierarchies",
               str(shared_file("arx_adult_hierarchies")), "--qis", ",".join(QIS), "--beta", "1",
               "--sensitive", "salary-class", "--metric", "normalised_entropy", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0 and doc["metric"] == "normalised_entropy" and doc["optimal"] is True


def test_cli_k_map_needs_population_size(capsys):
    rc = main(["anonymise", str(shared_file("arx_adult.csv")), "--hierarchies",
               str(shared_file("arx_adult_hierarchies")), "--qis", ",".join(QIS), "--k-map", "5"])
    err = capsys.readouterr().err.strip()
    assert rc != 0 and len(err.splitlines()) == 1 and "population size" in err


def test_step_refuses_uniqueness_without_population_size():
    with pytest.raises(InputError, match="population size"):
        build_step("generalise", {"hierarchy_dir": str(shared_file("arx_adult_hierarchies")), "k": None,
                                  "population_uniqueness": 0.01})


def test_step_and_cli_anytime_search(capsys):
    step = build_step("generalise", {"hierarchy_dir": str(shared_file("arx_adult_hierarchies")), "k": 5,
                                     "suppression": 0.01, "search": {"type": "anytime"}, "time_limit": 20.0})
    res = step.apply(_md())
    assert res.summary["search"] == "anytime" and res.summary["events"][-1]["event"] == "end"
    assert all(g.holds for g in res.guarantees)
    rc = main(["anonymise", str(shared_file("arx_adult.csv")), "--hierarchies",
               str(shared_file("arx_adult_hierarchies")), "--qis", ",".join(QIS), "--k", "5", "--suppression",
               "0.01", "--search", "anytime", "--time-limit", "20", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0 and doc["search"] == "anytime" and doc["events"][-1]["best"] == doc["value"]
