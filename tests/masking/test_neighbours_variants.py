"""The neighbours step's neighbourhood as a declared variant type: construction-time validation
with the one template, the spec's inline table, the refusal of the earlier string and flat forms
with the table to write, the declaration the docs and the workbench read, the repr / to_dict
round trip, and the released values checked against brute-force distances."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit import Microdata, ParameterError, SpecError
from sdckit.masking.neighbours import NEIGHBOURHOODS, Knn, NeighbourResampling, Radius
from sdckit.masking.steps_neighbours import NeighboursStep
from sdckit.params import step_params
from sdckit.registry import build_step
from sdckit.spec import spec_from_dict


def _spec(step: dict) -> dict:
    return {"input": {"path": "x.csv"}, "roles": {"key_vars": ["a"]},
            "steps": [{"method": "neighbours", **step}], "gate": {"k_anonymity": 2}}


def test_the_neighbourhoods_are_declared_types():
    names = [q.name for q in step_params(NeighboursStep)]
    assert names[0] == "neighbourhood"
    assert not {"eps", "k", "no_neighbour", "min_neighbours", "eps_column"} & set(names)
    p = step_params(NeighboursStep)[0]
    assert p.kind == "variant" and p.variants == NEIGHBOURHOODS == (Radius, Knn) and p.required
    d = p.to_dict()
    json.dumps(d)
    by_type = {v["type"]: [q["name"] for q in v["params"]] for v in d["variants"]}
    assert by_type == {"radius": ["eps", "eps_column", "min_neighbours", "no_neighbour", "k"], "knn": ["k"]}


def test_a_bad_setting_fails_at_construction_with_the_template():
    with pytest.raises(ParameterError, match=r"^The 'eps' parameter of Radius must be a number > 0 \(the "
                                             r"neighbourhood radius\) when eps_column is not given\. Got None\.$"):
        Radius()
    with pytest.raises(ParameterError, match=r"^The 'k' parameter of Knn must be an int >= 1\. Got 0\.$"):
        Knn(k=0)
    with pytest.raises(ParameterError, match=r"^The 'neighbourhood' parameter of NeighbourResampling must be one "
                                             r"of Radius\(\.\.\.\), Knn\(\.\.\.\)"):
        NeighbourResampling("knn")
    with pytest.raises(TypeError):
        NeighbourResampling()                           # the neighbourhood has no default
    with pytest.raises(SpecError, match=r"^steps\[0\]\.neighbourhood\.eps: must be a number > 0, got -1$"):
        build_step("neighbours", {"neighbourhood": {"type": "radius", "eps": -1}}, where="steps[0]")
    with pytest.raises(SpecError, match=r"^steps\[0\]\.neighbourhood: must be a table of Knn's parameters \(k\)"):
        build_step("neighbours", {"neighbourhood": {"type": "knn", "eps": 0.3}}, where="steps[0]")


def test_the_spec_takes_an_inline_table_and_refuses_the_string_and_flat_forms():
    spec = spec_from_dict(_spec({"neighbourhood": {"type": "radius", "eps": 0.3, "min_neighbours": 2}}))
    assert spec.steps[0].neighbourhood == Radius(eps=0.3, min_neighbours=2)
    spec = spec_from_dict(_spec({"neighbourhood": {"type": "knn", "k": 4}}))
    assert spec.steps[0].neighbourhood == Knn(k=4)
    with pytest.raises(SpecError) as e:
        spec_from_dict(_spec({"eps": 0.3, "q": 0.5}))
    text = str(e.value)
    assert "\n" not in text and text.startswith("steps[0]: ")
    assert text.endswith('write neighbourhood = { type = "radius", eps = 0.3 } instead of neighbourhood, eps')
    with pytest.raises(SpecError, match=r'write neighbourhood = \{ type = "knn", k = 3 \} '
                                        r'instead of neighbourhood, k$'):
        spec_from_dict(_spec({"neighbourhood": "knn", "k": 3}))
    with pytest.raises(SpecError, match=r'write neighbourhood = \{ type = "knn" \}$'):
        spec_from_dict(_spec({"neighbourhood": "knn"}))
    with pytest.raises(SpecError, match=r'write neighbourhood = \{ type = "radius", eps = 0.3, no_neighbour = '
                                        r'"knn", k = 5 \} instead of neighbourhood, no_neighbour, k$'):
        spec_from_dict(_spec({"neighbourhood": {"type": "radius", "eps": 0.3}, "no_neighbour": "knn", "k": 5}))


neighbourhoods = st.one_of(
    st.builds(Radius, eps=st.floats(0.01, 5), min_neighbours=st.one_of(st.none(), st.integers(1, 9)),
              no_neighbour=st.sampled_from(["suppress", "knn"]), k=st.integers(1, 20)),
    st.builds(Radius, eps=st.none(), eps_column=st.just("r")),
    st.builds(Knn, k=st.integers(1, 50)))


@settings(max_examples=60, deadline=None)
@given(neighbourhood=neighbourhoods, q=st.floats(0.01, 1.0), selection=st.sampled_from(["exact", "bernoulli"]))
def test_repr_and_spec_form_round_trip(neighbourhood, q, selection):
    step = NeighbourResampling(neighbourhood, q=q, selection=selection, weights={"x": 0.5})
    form = {p.name: getattr(step, p.name) for p in step_params(NeighbourResampling)}
    form["neighbourhood"] = {"type": neighbourhood.variant_name,
                             **{p.name: getattr(neighbourhood, p.name) for p in step_params(type(neighbourhood))}}
    assert NeighbourResampling(**json.loads(json.dumps(form))) == step      # the spec form, through JSON
    namespace = {c.__name__: c for c in (NeighbourResampling, Radius, Knn)}
    assert eval(repr(step), {"__builtins__": {}}, namespace) == step


def _distances(df: pd.DataFrame) -> np.ndarray:
    # independent computation: pairwise Euclidean distance of the columns standardised with
    # ddof = 1 (the metric of section 2 for continuous variables with weight 1)
    z = ((df - df.mean()) / df.std(ddof=1)).to_numpy()
    return np.sqrt(((z[:, None, :] - z[None, :, :]) ** 2).sum(axis=2))


@pytest.mark.parametrize("neighbourhood", [Radius(eps=0.5), Radius(eps=0.05, min_neighbours=3),
                                           Radius(eps=0.02, no_neighbour="knn", k=2), Knn(k=4)],
                         ids=repr)
def test_each_type_takes_values_from_its_own_neighbourhood(neighbourhood):
    rng = np.random.default_rng(6)
    df = pd.DataFrame({"x": rng.normal(size=150), "y": rng.gamma(2, 1, 150)})
    r = NeighbourResampling(neighbourhood, selection="exact").apply(Microdata(df), rng=5)
    d = _distances(df)
    np.fill_diagonal(d, np.inf)
    out = r.microdata.frame
    for i in np.flatnonzero(r.selected & ~r.suppressed):
        if isinstance(neighbourhood, Knn) or r.fallback[i]:
            near = np.flatnonzero(d[i] <= np.sort(d[i])[neighbourhood.k - 1] * (1 + 1e-9))
        else:
            eps = neighbourhood.eps
            if neighbourhood.min_neighbours is not None:
                eps = max(eps, np.sort(d[i])[neighbourhood.min_neighbours - 1])
            near = np.flatnonzero(d[i] <= eps * (1 + 1e-9))
        for c in df.columns:
            assert (df[c].iloc[near] == out[c].iloc[i]).any(), (i, c)
    assert all(g.holds for g in r.guarantees)
    assert r.params["neighbourhood"]["type"] == neighbourhood.variant_name
    if isinstance(neighbourhood, Knn):
        assert not r.suppressed.any()
