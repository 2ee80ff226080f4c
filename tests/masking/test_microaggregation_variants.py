"""Microaggregation's algorithm as a declared variant type: construction-time validation with the
one template, the spec's inline table, the refusal of the earlier string and flat forms with the
table to write, the declaration the docs and the workbench read, the repr / to_dict round trip,
the Dask plan, and the same released values as the array function called directly."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit import Microdata, ParameterError, SpecError
from sdckit._random import seed_sequence
from sdckit.masking.microaggregation import (
    METHODS,
    MICROAGGREGATION_ALGORITHMS,
    Mdav,
    MdavPartitioned,
    Microaggregation,
    Onedims,
    Pca,
    Rmd,
    Simple,
    Single,
    Univariate,
    microaggregate_array,
)
from sdckit.params import step_params
from sdckit.registry import build_step
from sdckit.spec import spec_from_dict


def _spec(step: dict) -> dict:
    return {"input": {"path": "x.csv"}, "roles": {"key_vars": ["a"], "numeric_vars": ["x", "y"]},
            "steps": [{"method": "microaggregation", **step}], "gate": {"k_anonymity": 2}}


def test_the_algorithms_are_declared_types():
    p = next(q for q in step_params(Microaggregation) if q.name == "algorithm")
    assert p.kind == "variant" and p.variants == MICROAGGREGATION_ALGORITHMS
    assert [t.variant_name for t in p.variants] == list(METHODS)     # one type per array method
    assert "block" not in [q.name for q in step_params(Microaggregation)]
    d = p.to_dict()
    json.dumps(d)
    by_type = {v["type"]: [q["name"] for q in v["params"]] for v in d["variants"]}
    assert by_type == {"mdav": [], "mdav_partitioned": ["block"], "univariate": [], "simple": [],
                       "single": [], "onedims": [], "pca": [], "rmd": [], "clustpca": ["n_clusters"],
                       "clustpppca": ["n_clusters"], "clustmcdpca": ["n_clusters"], "influence": ["n_clusters"],
                       "pppca": [], "mcdpca": []}
    assert d["default"] == {"type": "mdav"}


def test_a_bad_setting_fails_at_construction_with_the_template():
    with pytest.raises(ParameterError, match=r"^The 'block' parameter of MdavPartitioned must be an int >= 4\. "
                                             r"Got 3\.$"):
        MdavPartitioned(block=3)
    with pytest.raises(ParameterError, match=r"^The 'algorithm\.block' parameter of Microaggregation must be an "
                                             r"int >= 10 \(2k\)\. Got 8\.$"):
        Microaggregation(k=5, algorithm=MdavPartitioned(block=8))
    with pytest.raises(ParameterError, match=r"^The 'algorithm' parameter of Microaggregation must be one of "
                                             r"Mdav\(\.\.\.\), MdavPartitioned\(\.\.\.\)"):
        Microaggregation(k=3, algorithm="pca")
    with pytest.raises(SpecError, match=r"^steps\[0\]\.algorithm\.block: must be an int >= 4, got 2$"):
        build_step("microaggregation", {"algorithm": {"type": "mdav_partitioned", "block": 2}}, where="steps[0]")
    with pytest.raises(SpecError, match=r"^steps\[0\]\.algorithm: must be a table of Pca's parameters \(none\)"):
        build_step("microaggregation", {"algorithm": {"type": "pca", "block": 100}}, where="steps[0]")
    with pytest.raises(SpecError, match=r"^steps\[0\]\.algorithm: must be one of Mdav"):
        build_step("microaggregation", {"algorithm": {"type": "kmeans"}}, where="steps[0]")


def test_the_spec_takes_an_inline_table_and_refuses_the_string_and_flat_forms():
    spec = spec_from_dict(_spec({"k": 3, "algorithm": {"type": "mdav_partitioned", "block": 1000}}))
    assert spec.steps[0].algorithm == MdavPartitioned(block=1000)
    spec = spec_from_dict(_spec({"k": 3, "algorithm": {"type": "pca"}}))
    assert spec.steps[0].algorithm == Pca()
    assert spec_from_dict(_spec({"k": 3})).steps[0].algorithm == Mdav()
    # a field-less type as a bare string: the variant kind takes tables only, so it is refused
    with pytest.raises(SpecError) as e:
        spec_from_dict(_spec({"k": 3, "algorithm": "pca"}))
    text = str(e.value)
    assert "\n" not in text and text.startswith("steps[0]: ")
    assert text.endswith('write algorithm = { type = "pca" }')
    with pytest.raises(SpecError, match=r'write algorithm = \{ type = "mdav_partitioned", block = 1000 \} '
                                        r'instead of algorithm, block$'):
        spec_from_dict(_spec({"k": 3, "algorithm": "mdav_partitioned", "block": 1000}))
    # block beside the step's own settings: the table to write names the default type
    with pytest.raises(SpecError, match=r'write algorithm = \{ type = "mdav", block = 1000 \} instead of '
                                        r'algorithm, block$'):
        spec_from_dict(_spec({"k": 3, "block": 1000}))


algorithms = st.one_of(st.builds(MdavPartitioned, block=st.integers(40, 10**6)),
                       *[st.just(t()) for t in MICROAGGREGATION_ALGORITHMS if t is not MdavPartitioned])


@settings(max_examples=60, deadline=None)
@given(algorithm=algorithms, k=st.integers(2, 20), vpg=st.sampled_from([None, 1, 2]),
       aggregate=st.sampled_from(["mean", "median"]))
def test_repr_and_spec_form_round_trip(algorithm, k, vpg, aggregate):
    step = Microaggregation(k=k, algorithm=algorithm, variables_per_group=vpg, aggregate=aggregate)
    form = {p.name: getattr(step, p.name) for p in step_params(Microaggregation)}
    form["algorithm"] = {"type": algorithm.variant_name,
                         **{p.name: getattr(algorithm, p.name) for p in step_params(type(algorithm))}}
    assert Microaggregation(**json.loads(json.dumps(form))) == step      # the spec form, through JSON
    namespace = {c.__name__: c for c in (Microaggregation, *MICROAGGREGATION_ALGORITHMS)}
    assert eval(repr(step), {"__builtins__": {}}, namespace) == step


def _data(n: int = 300) -> Microdata:
    rng = np.random.default_rng(8)
    df = pd.DataFrame({"x": rng.lognormal(3, 1, n), "y": rng.normal(50, 10, n), "z": rng.gamma(2, 3, n),
                       "s": rng.integers(0, 2, n)})
    return Microdata(df, numeric_vars=["x", "y", "z"], strata=["s"])


@pytest.mark.parametrize("algorithm", [Mdav(), MdavPartitioned(block=40), Univariate(), Simple(), Single(),
                                       Onedims(), Pca(), Rmd()], ids=lambda a: a.variant_name)
def test_each_type_releases_what_the_array_function_releases(algorithm):
    # independent computation: microaggregate_array called directly with the method's name (and
    # for rmd a generator on the step's recorded seed sequence), on the same columns and strata
    md = _data()
    r = Microaggregation(k=4, algorithm=algorithm, variables_per_group=2).apply(md, rng=31)
    X = md.frame[["x", "y", "z"]].to_numpy(np.float64)
    gen = np.random.default_rng(seed_sequence(31)[0]) if algorithm.variant_name == "rmd" else None
    out, _ = microaggregate_array(X, 4, variables_per_group=2, method=algorithm.variant_name,
                                  strata=md.frame["s"].to_numpy(), block=getattr(algorithm, "block", 50_000),
                                  rng=gen)
    np.testing.assert_array_equal(r.microdata.frame[["x", "y", "z"]].to_numpy(), out)
    assert r.summary["algorithm"] == algorithm.variant_name
    assert r.params["algorithm"] == {"type": algorithm.variant_name,
                                     **({"block": 40} if isinstance(algorithm, MdavPartitioned) else {})}
    assert (r.seed is not None) == isinstance(algorithm, Rmd)


def test_the_dask_plan_takes_the_mdav_types_only():
    roles = {"numeric_vars": ["x", "y"]}
    assert Microaggregation(k=3).dask_plan(roles).writes == ("x", "y")
    assert Microaggregation(k=3).cell_size == 50_000
    step = Microaggregation(k=3, algorithm=MdavPartitioned(block=500))
    assert step.dask_plan(roles).writes == ("x", "y") and step.cell_size == 500
    with pytest.raises(SpecError, match=r"^algorithm: 'pca' orders or clusters the whole file at once and runs "
                                        r"in memory only; run this step with the in-memory engine, or use "
                                        r"algorithm = \{ type = \"mdav_partitioned\" \} on the Dask engine\.$"):
        Microaggregation(k=3, algorithm=Pca()).dask_plan(roles)
