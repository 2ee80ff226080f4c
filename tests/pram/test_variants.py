"""PRAM's matrix builder as a declared variant type: construction-time validation with the one
template, the spec's inline table, the refusal of the earlier flat form, the declaration the
docs and the workbench read, and the repr / to_dict round trip."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit import Microdata, ParameterError, SpecError
from sdckit.params import step_params
from sdckit.pram.builders import File, Identity, Invariant, MaxEntropy, matrix_types
from sdckit.pram.optimal import Optimal
from sdckit.pram.steps import Evolved, Pram
from sdckit.registry import build_step
from sdckit.spec import spec_from_dict


def _spec(step: dict) -> dict:
    return {"input": {"path": "x.csv"}, "roles": {"key_vars": ["a"]},
            "steps": [{"method": "pram", "variables": ["a"], **step}], "gate": {"k_anonymity": 2}}


def test_every_builder_is_a_declared_type():
    names = {t.variant_name: t for t in matrix_types()}
    assert {"identity", "max_entropy", "invariant", "file", "evolved", "optimal"} <= set(names)
    assert names["invariant"] is Invariant and names["optimal"] is Optimal and names["evolved"] is Evolved
    p = next(q for q in step_params(Pram) if q.name == "matrix")
    assert p.kind == "variant" and set(p.variants) == set(matrix_types())
    # Pram keeps only its own settings: the builder-only fields moved into the types
    assert [q.name for q in step_params(Pram)] == ["variables", "matrix", "min_diagonal", "strata", "joint"]
    d = p.to_dict()  # what the docs and the workbench's form read
    json.dumps(d)
    by_type = {v["type"]: [q["name"] for q in v["params"]] for v in d["variants"]}
    assert by_type["optimal"] == ["alpha", "combinations", "gamma", "support"]
    assert by_type["evolved"] == ["d_min", "d_max", "risk_weight", "generations", "population", "pareto"]
    assert by_type["identity"] == [] and d["default"] == {"type": "invariant", "alpha": 1.0, "base": "proportional"}


def test_a_bad_setting_fails_at_construction_with_the_template():
    with pytest.raises(ParameterError, match=r"^The 'alpha' parameter of Invariant must be a number in \(0, 1\]\. Got 0\.$"):
        Invariant(alpha=0)
    with pytest.raises(ParameterError, match=r"^The 'generations' parameter of Evolved must be an int >= 1\. Got 0\.$"):
        Evolved(generations=0)
    with pytest.raises(ParameterError, match="The 'support' parameter of Optimal must be one of 'full', 'restricted'"):
        Optimal(alpha=0.1, support="sparse")
    # the table form names the dotted key path in a spec
    with pytest.raises(SpecError, match=r"^steps\[0\]\.matrix\.alpha: must be a number in \(0, 1\], got 2$"):
        build_step("pram", {"variables": ["a"], "matrix": {"type": "invariant", "alpha": 2}}, where="steps[0]")
    with pytest.raises(SpecError, match=r"^steps\[0\]\.matrix: must be a table of Invariant's parameters"):
        build_step("pram", {"variables": ["a"], "matrix": {"type": "invariant", "gamma": 2}}, where="steps[0]")
    # Evolved's d_min follows the step's min_diagonal: the bounds are checked together
    with pytest.raises(ParameterError, match="d_max"):
        Pram(["a"], matrix=Evolved(d_max=0.6), min_diagonal=0.9)


def test_the_spec_takes_an_inline_table_and_refuses_the_flat_form(tmp_path):
    spec = spec_from_dict(_spec({"matrix": {"type": "optimal", "alpha": 0.1, "combinations": 2}, "joint": True}),
                          base_dir=tmp_path)
    assert spec.steps[0].matrix == Optimal(alpha=0.1, combinations=2)
    with pytest.raises(SpecError) as e:
        spec_from_dict(_spec({"matrix": "optimal", "alpha": 0.1, "joint": True}), base_dir=tmp_path)
    text = str(e.value)
    assert "\n" not in text and text.startswith("steps[0]: ")
    assert 'write matrix = { type = "optimal", alpha = 0.1 } instead of matrix, alpha' in text
    with pytest.raises(SpecError, match=r'matrix = \{ type = "invariant", base = "uniform" \}'):
        spec_from_dict(_spec({"base": "uniform"}), base_dir=tmp_path)
    # a file builder's path is relative to the spec, like every path parameter
    spec = spec_from_dict(_spec({"matrix": {"type": "file", "file": "m.csv"}}), base_dir=tmp_path)
    assert spec.steps[0].matrix == File(str(tmp_path / "m.csv"))


builders = st.one_of(
    st.just(Identity()), st.just(MaxEntropy()),
    st.builds(Invariant, alpha=st.floats(0.05, 1.0), base=st.sampled_from(["proportional", "uniform"])),
    st.builds(Optimal, alpha=st.floats(0.05, 0.95), combinations=st.sampled_from([None, 2]),
              gamma=st.sampled_from([None, 0.5])),
    st.builds(Evolved, d_max=st.sampled_from([None, 0.95]), risk_weight=st.floats(0, 1),
              generations=st.integers(1, 50), pareto=st.booleans()))


@settings(max_examples=60, deadline=None)
@given(matrix=builders, min_diagonal=st.sampled_from([None, 0.6, 0.8]), joint=st.booleans())
def test_repr_and_spec_form_round_trip(matrix, min_diagonal, joint):
    step = Pram(["a", "b"], matrix=matrix, min_diagonal=min_diagonal, joint=joint)
    assert Pram(**step.to_dict()) == step                       # the spec form (inline table)
    assert Pram(**json.loads(json.dumps(step.to_dict()))) == step   # through JSON
    namespace = {c.__name__: c for c in (Pram, Identity, MaxEntropy, Invariant, Optimal, Evolved)}
    assert eval(repr(step), {"__builtins__": {}}, namespace) == step


def test_same_matrix_and_seed_release_the_same_values_as_the_flat_settings_did():
    # the builder types call the same matrix code with the same streams: the invariant
    # matrix built here equals the one sdckit.pram.builders.invariant_matrix builds directly
    # from the counts (an independent call), and the release is the same for the same seed
    from sdckit.pram.builders import invariant_matrix

    rng = np.random.default_rng(5)
    df = pd.DataFrame({"a": rng.choice(list("pqrst"), 800, p=[0.4, 0.3, 0.15, 0.1, 0.05])})
    md = Microdata(df, key_vars=["a"])
    r = Pram(["a"], matrix=Invariant(alpha=0.7, base="uniform"), min_diagonal=0.75).apply(md, rng=3)
    counts = df["a"].value_counts().reindex(md.categories("a")).to_numpy(float)
    direct = invariant_matrix(md.categories("a"), counts, min_diagonal=0.75, alpha=0.7, base="uniform")
    np.testing.assert_allclose(r.matrices[(("a",), "all")].to_dense(), direct.matrix.to_dense(), atol=0)
    again = Pram(**r.params).apply(md, rng=3)  # rebuilt from the recorded parameters
    pd.testing.assert_frame_equal(again.microdata.frame, r.microdata.frame)
