"""Local suppression's algorithm as a declared variant type: construction-time validation with the
one template, the spec's inline table, the refusal of the earlier flat form with the table to
write, the declaration the docs and the workbench read, the repr / to_dict round trip, and the
same released values as the kernels called directly."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit import Microdata, ParameterError, SpecError
from sdckit._random import seed_sequence
from sdckit.masking.local_suppression import (
    ExactSuppression,
    GreedySuppression,
    LocalSuppression,
    restore_suppressions,
    suppress_to_k,
)
from sdckit.params import step_params
from sdckit.registry import build_step
from sdckit.spec import spec_from_dict


def _spec(step: dict) -> dict:
    return {"input": {"path": "x.csv"}, "roles": {"key_vars": ["a"]},
            "steps": [{"method": "local_suppression", **step}], "gate": {"k_anonymity": 2}}


def test_the_algorithms_are_declared_types():
    assert [q.name for q in step_params(LocalSuppression)] == ["k", "importance", "use_weights", "algorithm"]
    p = next(q for q in step_params(LocalSuppression) if q.name == "algorithm")
    assert p.kind == "variant" and p.variants == (GreedySuppression, ExactSuppression)
    d = p.to_dict()
    json.dumps(d)
    by_type = {v["type"]: [q["name"] for q in v["params"]] for v in d["variants"]}
    assert by_type == {"greedy": ["batch_share", "restore", "max_restore_checks"], "exact": ["time_limit"]}
    assert d["default"] == {"type": "greedy", "batch_share": 0.1, "restore": True, "max_restore_checks": 200}


def test_a_bad_setting_fails_at_construction_with_the_template():
    with pytest.raises(ParameterError, match=r"^The 'time_limit' parameter of ExactSuppression must be a number > 0\. Got 0\.$"):
        ExactSuppression(time_limit=0)
    with pytest.raises(ParameterError, match=r"^The 'max_restore_checks' parameter of GreedySuppression must be an int >= 0\."):
        GreedySuppression(max_restore_checks=-1)
    with pytest.raises(ParameterError, match=r"^The 'algorithm' parameter of LocalSuppression must be one of "
                                             r"GreedySuppression\(\.\.\.\), ExactSuppression\(\.\.\.\)"):
        LocalSuppression(k=2, algorithm="exact")
    with pytest.raises(SpecError, match=r"^steps\[0\]\.algorithm\.time_limit: must be a number > 0, got -1$"):
        build_step("local_suppression", {"algorithm": {"type": "exact", "time_limit": -1}}, where="steps[0]")
    with pytest.raises(SpecError, match=r"^steps\[0\]\.algorithm: must be a table of ExactSuppression's parameters"):
        build_step("local_suppression", {"algorithm": {"type": "exact", "restore": False}}, where="steps[0]")


def test_the_spec_takes_an_inline_table_and_refuses_the_flat_form():
    spec = spec_from_dict(_spec({"k": 2, "algorithm": {"type": "exact", "time_limit": 5}}))
    assert spec.steps[0].algorithm == ExactSuppression(time_limit=5)
    spec = spec_from_dict(_spec({"k": 2, "algorithm": {"type": "greedy", "restore": False}}))
    assert spec.steps[0].algorithm == GreedySuppression(restore=False)
    with pytest.raises(SpecError) as e:
        spec_from_dict(_spec({"k": 2, "algorithm": "exact", "time_limit": 5}))
    text = str(e.value)
    assert "\n" not in text and text.startswith("steps[0]: ")
    assert 'write algorithm = { type = "exact", time_limit = 5 } instead of algorithm, time_limit' in text
    # the greedy settings beside the step's own: the table to write names the default type
    with pytest.raises(SpecError, match=r'write algorithm = \{ type = "greedy", restore = false, '
                                        r'max_restore_checks = 10 \} instead of algorithm, restore, max_restore_checks'):
        spec_from_dict(_spec({"k": 2, "restore": False, "max_restore_checks": 10}))
    with pytest.raises(SpecError, match=r'write algorithm = \{ type = "greedy" \}$'):
        spec_from_dict(_spec({"k": 2, "algorithm": "greedy"}))


algorithms = st.one_of(
    st.builds(GreedySuppression, batch_share=st.floats(0.01, 1.0), restore=st.booleans(),
              max_restore_checks=st.integers(0, 500)),
    st.builds(ExactSuppression, time_limit=st.floats(0.01, 600)))


@settings(max_examples=60, deadline=None)
@given(algorithm=algorithms, k=st.integers(2, 10), importance=st.sampled_from([None, [1, 2], [2, 1]]))
def test_repr_and_spec_form_round_trip(algorithm, k, importance):
    step = LocalSuppression(k=k, importance=importance, algorithm=algorithm)
    form = {p.name: getattr(step, p.name) for p in step_params(LocalSuppression)}
    form["algorithm"] = {"type": algorithm.variant_name,
                         **{p.name: getattr(algorithm, p.name) for p in step_params(type(algorithm))}}
    assert LocalSuppression(**json.loads(json.dumps(form))) == step      # the spec form, through JSON
    namespace = {c.__name__: c for c in (LocalSuppression, GreedySuppression, ExactSuppression)}
    assert eval(repr(step), {"__builtins__": {}}, namespace) == step


@pytest.mark.parametrize("algorithm", [GreedySuppression(), GreedySuppression(restore=False),
                                       GreedySuppression(max_restore_checks=3, batch_share=0.5)])
def test_greedy_releases_what_the_kernels_release(algorithm):
    # independent computation: the two kernels called directly with the step's stream (the
    # step's seed sequence, then suppress_to_k and restore_suppressions on one generator)
    rng = np.random.default_rng(4)
    n = 500
    df = pd.DataFrame({"a": rng.integers(0, 9, n), "b": rng.integers(0, 4, n), "c": rng.integers(0, 6, n)})
    md = Microdata(df, key_vars=["a", "b", "c"])
    r = LocalSuppression(k=3, importance=[1, 3, 2], algorithm=algorithm).apply(md, rng=21)
    before = [md.codes(v) for v in "abc"]
    ncat = [md.n_categories(v) for v in "abc"]
    gen = np.random.default_rng(seed_sequence(21)[0])
    after, _ = suppress_to_k(before, ncat, 3, [1, 3, 2], batch_share=algorithm.batch_share, rng=gen)
    if algorithm.restore:
        after, _ = restore_suppressions(before, after, ncat, 3, rng=gen, max_checks=algorithm.max_restore_checks)
    for v, codes in zip("abc", after):
        np.testing.assert_array_equal(r.microdata.codes(v), codes)
    assert r.params["algorithm"] == {"type": "greedy", "batch_share": algorithm.batch_share,
                                     "restore": algorithm.restore, "max_restore_checks": algorithm.max_restore_checks}
    assert r.summary["algorithm"] == "greedy"
