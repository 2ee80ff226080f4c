"""The ``generalise`` step's search and l-diversity variant as declared variant types:
construction-time validation with the one template, the spec's inline tables, the refusal of the
earlier flat form with the table to write, the repr round trip, and the same result as the
search functions called directly."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit import Microdata, ParameterError, SpecError
from sdckit.lattice.hierarchies import check_hierarchy
from sdckit.lattice.models import KAnonymity, RecursiveCLDiversity
from sdckit.lattice.problem import Problem
from sdckit.lattice.profitability import GAME_VARIANTS
from sdckit.lattice.safepub_step import DP_VARIANTS
from sdckit.lattice.search import Evaluator, exact, exhaustive, heuristic
from sdckit.lattice.steps import (
    DistinctDiversity,
    EntropyDiversity,
    ExactSearch,
    ExhaustiveSearch,
    Generalise,
    HeuristicSearch,
    RecursiveDiversity,
)
from sdckit.params import step_params
from sdckit.registry import build_step
from sdckit.spec import spec_from_dict

H = {"hierarchy_files": {"age": "age.csv", "zip": "zip.csv"}}


def _spec(step: dict) -> dict:
    return {"input": {"path": "x.csv"}, "roles": {"key_vars": ["age", "zip"]},
            "steps": [{"method": "generalise", **H, **step}], "gate": {"k_anonymity": 2}}


def test_the_alternatives_are_declared_types():
    names = [q.name for q in step_params(Generalise)]
    assert "max_nodes" not in names and "c" not in names
    by_name = {q.name: q for q in step_params(Generalise)}
    assert by_name["search"].kind == "variant" and by_name["l_variant"].kind == "variant"
    d = {n: by_name[n].to_dict() for n in ("search", "l_variant")}
    json.dumps(d)
    assert {v["type"]: [q["name"] for q in v["params"]] for v in d["search"]["variants"]} == \
        {"exact": [], "exhaustive": [], "heuristic": ["max_nodes"], "anytime": ["max_nodes"]}
    assert {v["type"]: [q["name"] for q in v["params"]] for v in d["l_variant"]["variants"]} == \
        {"distinct": [], "entropy": [], "recursive": ["c"]}
    assert d["search"]["default"] == {"type": "exact"} and d["l_variant"]["default"] == {"type": "distinct"}


def test_a_bad_setting_fails_at_construction_with_the_template():
    with pytest.raises(ParameterError, match=r"^The 'max_nodes' parameter of HeuristicSearch must be an int >= 1\. Got 0\.$"):
        HeuristicSearch(max_nodes=0)
    with pytest.raises(ParameterError, match=r"^The 'c' parameter of RecursiveDiversity must be a number > 0\. Got 0\.$"):
        RecursiveDiversity(c=0)
    with pytest.raises(ParameterError, match=r"^The 'search' parameter of Generalise must be one of ExactSearch"):
        Generalise(**H, search="heuristic")
    # recursive (c, l) without c: refused where the table is read, naming what is required
    with pytest.raises(SpecError, match=r"^steps\[0\]\.l_variant: must be a table of RecursiveDiversity's "
                                        r"parameters \(c; c required\)"):
        build_step("generalise", {**H, "l": 2, "l_variant": {"type": "recursive"}}, where="steps[0]")


def test_the_spec_takes_inline_tables_and_refuses_the_flat_form():
    spec = spec_from_dict(_spec({"search": {"type": "heuristic", "max_nodes": 50},
                                 "l": 2, "l_variant": {"type": "recursive", "c": 3}}))
    step = spec.steps[0]
    assert step.search == HeuristicSearch(max_nodes=50) and step.l_variant == RecursiveDiversity(c=3)
    with pytest.raises(SpecError) as e:
        spec_from_dict(_spec({"search": "heuristic", "max_nodes": 50}))
    text = str(e.value)
    assert "\n" not in text and text.startswith("steps[0]: ")
    assert 'write search = { type = "heuristic", max_nodes = 50 } instead of search, max_nodes' in text
    with pytest.raises(SpecError, match=r'write l_variant = \{ type = "recursive", c = 3 \} instead of l_variant, c'):
        spec_from_dict(_spec({"l": 2, "l_variant": "recursive", "c": 3}))
    with pytest.raises(SpecError, match=r'write search = \{ type = "exhaustive" \}$'):
        spec_from_dict(_spec({"search": "exhaustive"}))


@settings(max_examples=40, deadline=None)
@given(search=st.one_of(st.just(ExactSearch()), st.just(ExhaustiveSearch()),
                        st.builds(HeuristicSearch, max_nodes=st.integers(1, 10_000))),
       l_variant=st.one_of(st.just(DistinctDiversity()), st.just(EntropyDiversity()),
                           st.builds(RecursiveDiversity, c=st.floats(0.1, 10))),
       k=st.sampled_from([None, 2, 5]))
def test_repr_round_trips(search, l_variant, k):
    step = Generalise(**H, k=k, l=2, l_variant=l_variant, search=search)
    namespace = {c.__name__: c for c in (Generalise, ExactSearch, ExhaustiveSearch, HeuristicSearch,
                                         DistinctDiversity, EntropyDiversity, RecursiveDiversity, *GAME_VARIANTS,
                                         *DP_VARIANTS)}
    assert eval(repr(step), {"__builtins__": {}, "inf": np.inf}, namespace) == step


def _data(tmp_path):
    rng = np.random.default_rng(3)
    n = 400
    df = pd.DataFrame({"age": rng.integers(20, 60, n).astype(str), "zip": rng.choice(["1301", "1302", "1401", "1402"], n),
                       "disease": rng.choice(["flu", "cold", "ulcer", "cancer"], n)})
    ages = sorted(df["age"].unique())
    pd.DataFrame({0: ages, 1: [f"{int(a) // 10 * 10}s" for a in ages], 2: ["*"] * len(ages)}).to_csv(
        tmp_path / "age.csv", sep=";", header=False, index=False)
    pd.DataFrame({0: ["1301", "1302", "1401", "1402"], 1: ["130*", "130*", "140*", "140*"], 2: ["*"] * 4}).to_csv(
        tmp_path / "zip.csv", sep=";", header=False, index=False)
    files = {"age": str(tmp_path / "age.csv"), "zip": str(tmp_path / "zip.csv")}
    return df, files


@pytest.mark.parametrize("search, direct", [
    (ExactSearch(), lambda ev: exact(ev)),
    (ExhaustiveSearch(), lambda ev: exhaustive(ev)),
    (HeuristicSearch(max_nodes=3), lambda ev: heuristic(ev, max_nodes=3)),
])
def test_the_step_releases_the_node_the_search_finds(tmp_path, search, direct):
    # independent computation: the search functions on the same problem, called directly
    from sdckit.lattice.hierarchies import read_hierarchy

    df, files = _data(tmp_path)
    md = Microdata(df, key_vars=["age", "zip"], sensitive=["disease"])
    step = Generalise(hierarchy_files=files, k=5, l=3, l_variant=RecursiveDiversity(c=4), suppression=0.02,
                      search=search)
    r = step.apply(md)
    hs = {q: check_hierarchy(read_hierarchy(files[q])) for q in ("age", "zip")}
    ev = Evaluator(Problem(df, ["age", "zip"], hs, sensitive="disease"),
                   [KAnonymity(5), RecursiveCLDiversity(4.0, 3)], 0.02, "discernibility")
    res = direct(ev)
    assert r.summary["levels"] == res.level_map() and r.summary["metric_value"] == res.value
    assert r.params["search"] == {"type": search.variant_name, **({"max_nodes": 3} if search.variant_name == "heuristic" else {})}
    assert r.params["l_variant"] == {"type": "recursive", "c": 4}
    assert all(g.holds for g in r.guarantees)
    assert "recursive_cl_diversity" in {g.name for g in r.guarantees}
