"""The generalise step and ``sdckit anonymise`` with a population table (``population_file``,
``--population``): k-map counted in the table and the journalist profitability models, equal to
the library (``Problem(..., population=...)``) and to ARX's figures on adult."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from sdckit.cli import main
from sdckit.errors import InputError
from sdckit.lattice import Evaluator, Problem, exact, find_hierarchies
from sdckit.lattice.models_arx import make_models
from sdckit.lattice.profitability import CostBenefit
from sdckit.microdata import Microdata
from sdckit.registry import build_step
from sdckit.result import jsonable
from sdckit.spec import spec_from_dict

from ..conftest import shared_file

QIS8 = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation"]


@pytest.fixture(scope="module")
def adult(tmp_path_factory):
    """The research subset of every tenth row of adult, and the whole file as the population
    (the setting of benchmarks/compare_arx.py's journalist cases)."""
    path = shared_file("arx_adult.csv")
    data = pd.read_csv(path, dtype=str)
    sub = data.iloc[::10].reset_index(drop=True)
    folder = tmp_path_factory.mktemp("adult")
    sub.to_csv(folder / "subset.csv", index=False)
    return {"population": data, "subset": sub, "population_file": path, "subset_file": folder / "subset.csv",
            "hierarchies": shared_file("arx_adult_hierarchies")}


def _step(adult, **params):
    return build_step("generalise", {"hierarchy_dir": str(adult["hierarchies"]), "qis": QIS8, "k": None,
                                     "population_file": str(adult["population_file"]), **params})


def _md(frame):
    return Microdata(frame, key_vars=QIS8, sensitive=["salary-class"])


# ARX 3.9.2's optimum and value on adult, from the table "Side by side with ARX 3.9.2" of
# docs/methods/lattice.md (cases profit_journalist_no_attack_dm_s2 and
# profit_journalist_no_attack_loss_g1000_c3 of benchmarks/compare_arx.py; n = 3,017)
ARX_CASES = [
    ({"profitability": {"type": "journalist_no_attack"}, "suppression": 0.02, "metric": "discernibility"},
     (1, 0, 1, 2, 3, 2, 2, 2), 361415.0),
    ({"profitability": {"type": "journalist_no_attack", "adversary_gain": 1000.0, "adversary_cost": 3.0},
      "suppression": 0.0, "metric": "loss"},
     (0, 4, 1, 1, 3, 2, 2, 1), 0.6655158821551219),
]


@pytest.mark.parametrize("params, arx_levels, arx_value", ARX_CASES)
def test_step_reaches_arx_optimum_on_adult(adult, params, arx_levels, arx_value):
    res = _step(adult, **params).apply(_md(adult["subset"]))
    s = res.summary
    assert tuple(s["levels"][q] for q in QIS8) == arx_levels
    assert s["metric_value"] == pytest.approx(arx_value, rel=1e-8)
    assert s["optimal"] and s["population_records"] == len(adult["population"])
    assert all(g.holds for g in res.guarantees), [g for g in res.guarantees if not g.holds]
    assert "profitability_no_attack" in {g.name for g in res.guarantees}


@pytest.mark.parametrize("params, models", [
    ({"k_map": 5, "suppression": 0.01}, {"k_map": 5}),
    ({"k_map": 3, "population_size": 1e6, "suppression": 0.0, "metric": "loss"}, {"k_map": 3}),
    ({"profitability": {"type": "journalist", "publisher_benefit": 100.0, "publisher_loss": 1000.0},
      "qis": QIS8[:5], "suppression": 1.0, "metric": "publisher_payout"},
     {"profitability": "journalist", "cost_benefit": CostBenefit(100.0, 1000.0, 300.0, 4.0, True)}),
    ({"profitability": {"type": "journalist_no_attack", "adversary_gain": 30.0}, "k": 2, "suppression": 0.02},
     {"profitability": "journalist_no_attack", "k": 2, "cost_benefit": CostBenefit(1200.0, 300.0, 30.0, 4.0)}),
])
def test_step_equals_the_library(adult, params, models):
    qis = params.get("qis", QIS8)
    step = _step(adult, **{"metric": "discernibility", **params})
    res = step.apply(_md(adult["subset"]))
    # the library: the same research subset and population table, exact search
    hier = find_hierarchies(adult["hierarchies"], qis)
    prob = Problem(adult["subset"], qis, hier, population=adult["population"])
    ev = Evaluator(prob, make_models(**models), params["suppression"], step.metric,
                   cost_benefit=models.get("cost_benefit"))
    lib = exact(ev)
    assert tuple(res.summary["levels"][q] for q in qis) == lib.levels
    assert res.summary["metric_value"] == pytest.approx(lib.value, rel=1e-12)
    assert res.summary["n_suppressed"] == lib.n_suppressed
    assert all(g.holds for g in res.guarantees), [g for g in res.guarantees if not g.holds]
    if "k_map" in models:   # counted in the table, not estimated from population_size
        g = {g.name: g for g in res.guarantees}["k_map"]
        assert "population table" in g.statement and g.value >= models["k_map"]


def test_k_map_from_the_table_differs_from_the_estimate(adult):
    # the population table gives ARX's accurate k-map; the estimate from N alone is another model
    md = _md(adult["subset"])
    table = _step(adult, k_map=10, suppression=0.0).apply(md).summary
    est = build_step("generalise", {"hierarchy_dir": str(adult["hierarchies"]), "qis": QIS8, "k": None,
                                    "k_map": 10, "population_size": len(adult["population"]),
                                    "suppression": 0.0}).apply(md).summary
    assert table["levels"] != est["levels"] or table["metric_value"] != est["metric_value"]


def test_release_check_counts_the_population(adult):
    # a release checked against a smaller population fails k-map: the check counts the table
    from sdckit.lattice.population_table import population_guarantees

    res = _step(adult, k_map=5, suppression=0.0).apply(_md(adult["subset"]))
    lv = res.summary["levels"]
    hier = find_hierarchies(adult["hierarchies"], QIS8)
    out = res.microdata.frame
    sup = np.zeros(len(out), dtype=bool)
    ok = population_guarantees(out, sup, QIS8, adult["population"], hier, lv, k_map=5, game=None,
                               cost_benefit=None)
    assert ok[0].holds
    bad = population_guarantees(out, sup, QIS8, adult["subset"], hier, lv, k_map=5, game=None, cost_benefit=None)
    assert not bad[0].holds


def test_public_outputs_hold_no_path(adult):
    res = _step(adult, k_map=5, suppression=0.01).apply(_md(adult["subset"]))
    text = json.dumps(jsonable({"params": res.params, "summary": res.summary,
                                "guarantees": [g.statement for g in res.guarantees]}))
    assert "population_file" not in res.params
    assert str(adult["population_file"].parent) not in text and adult["population_file"].name not in text


def test_spec_resolves_the_path_against_its_folder(adult, tmp_path):
    pop = tmp_path / "data" / "population.csv"
    pop.parent.mkdir()
    adult["population"].to_csv(pop, index=False)
    raw = {"input": {"path": "subset.csv"},
           "steps": [{"method": "generalise", "hierarchy_dir": str(adult["hierarchies"]), "qis": QIS8,
                      "k": None, "k_map": 5, "population_file": "data/population.csv"}]}
    spec = spec_from_dict(raw, base_dir=tmp_path)
    assert spec.steps[0].population_file == str(tmp_path / "data" / "population.csv")


# --------------------------------------------------------------------------- errors
def test_refuses_data_not_a_subset_of_the_population(adult, tmp_path):
    # a combination with more records in the data than in the population: the library would count
    # fewer population records than data records in its class
    pop = adult["population"].copy()
    first = adult["subset"].iloc[0]
    same = (pop[QIS8] == first[QIS8]).all(axis=1)
    keep = pop.loc[~same]
    small = pd.concat([keep, pop.loc[same].iloc[:1]])   # one population record of that combination
    data = pd.concat([adult["subset"], adult["subset"].iloc[[0]]], ignore_index=True)   # two in the data
    path = tmp_path / "small.csv"
    small.to_csv(path, index=False)
    step = build_step("generalise", {"hierarchy_dir": str(adult["hierarchies"]), "qis": QIS8, "k": None,
                                     "k_map": 5, "population_file": str(path)})
    with pytest.raises(InputError, match=r"population_file small\.csv: the data hold 2 records of .* table 1"):
        step.apply(_md(data))


def test_refuses_a_population_without_a_quasi_identifier(adult, tmp_path):
    path = tmp_path / "pop.csv"
    adult["population"].drop(columns=["race"]).to_csv(path, index=False)
    step = build_step("generalise", {"hierarchy_dir": str(adult["hierarchies"]), "qis": QIS8, "k": None,
                                     "k_map": 5, "population_file": str(path)})
    with pytest.raises(InputError, match=r"population_file pop\.csv: no column 'race'"):
        step.apply(_md(adult["subset"]))


def test_refuses_a_missing_population_file(adult, tmp_path):
    step = build_step("generalise", {"hierarchy_dir": str(adult["hierarchies"]), "qis": QIS8, "k": None,
                                     "k_map": 5, "population_file": str(tmp_path / "none.csv")})
    with pytest.raises(InputError, match=r"population_file none\.csv: no such file"):
        step.apply(_md(adult["subset"]))


def test_journalist_needs_the_population_file(adult):
    with pytest.raises(InputError, match="needs the population table: set population_file"):
        build_step("generalise", {"hierarchy_dir": str(adult["hierarchies"]), "k": None,
                                  "profitability": {"type": "journalist"}})


def test_refuses_an_unused_population_file(adult):
    with pytest.raises(InputError, match="population_file is used by k_map"):
        build_step("generalise", {"hierarchy_dir": str(adult["hierarchies"]), "k": 5,
                                  "population_file": str(adult["population_file"])})


# --------------------------------------------------------------------------- the CLI
def test_anonymise_cli_population(adult, capsys):
    rc = main(["anonymise", str(adult["subset_file"]), "--hierarchies", str(adult["hierarchies"]),
               "--qis", ",".join(QIS8), "--population", str(adult["population_file"]),
               "--profitability", "journalist_no_attack", "--suppression", "0.02", "--json"])
    assert rc in (0, None)
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    # ARX 3.9.2 (docs/methods/lattice.md, case profit_journalist_no_attack_dm_s2)
    assert tuple(out["levels"][q] for q in QIS8) == (1, 0, 1, 2, 3, 2, 2, 2)
    assert out["value"] == 361415.0 and out["optimal"]
    assert out["population_records"] == len(adult["population"])
    assert str(adult["population_file"]) not in json.dumps(out)


def test_anonymise_cli_k_map_from_the_table(adult, capsys):
    rc = main(["anonymise", str(adult["subset_file"]), "--hierarchies", str(adult["hierarchies"]),
               "--qis", ",".join(QIS8[:4]), "--population", str(adult["population_file"]), "--k-map", "5",
               "--json"])
    assert rc in (0, None)
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    hier = find_hierarchies(adult["hierarchies"], QIS8[:4])
    lib = exact(Evaluator(Problem(adult["subset"], QIS8[:4], hier, population=adult["population"]),
                          make_models(k_map=5), 0.0, "discernibility"))
    assert tuple(out["levels"][q] for q in QIS8[:4]) == lib.levels and out["value"] == lib.value


def test_anonymise_cli_journalist_needs_population(adult, capsys):
    rc = main(["anonymise", str(adult["subset_file"]), "--hierarchies", str(adult["hierarchies"]),
               "--qis", ",".join(QIS8), "--profitability", "journalist", "--json"])
    err = capsys.readouterr().err.strip()
    assert rc != 0 and len(err.splitlines()) == 1 and "--population" in err
