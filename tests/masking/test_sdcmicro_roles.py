"""Roles as sdcMicro has them: a PRAM-only categorical variable (``pramVars``) and a declared
household id (``hhId``) that the direct-identifier check expects instead of flagging."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit import InputError, Microdata
from sdckit.params import check_columns
from sdckit.registry import build_step
from sdckit.risk.steps_identifiers import check_identifiers


def _frame(n=300, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"hh_id": np.repeat(np.arange(n // 3), 3), "person_id": np.arange(n),
                         "sex": rng.choice(["f", "m"], n), "region": rng.choice(list("abcd"), n),
                         "job": rng.choice(["x", "y", "z"], n), "income": rng.gamma(2, 1000, n)})


def test_pram_accepts_a_pram_variable_that_is_not_a_key():
    md = Microdata(_frame(), key_vars=["sex", "region"], pram_vars=["job"])
    assert md.pram_vars == ("job",) and "job" not in md.key_vars
    step = build_step("pram", {"variables": ["job"], "matrix": {"type": "invariant"}})
    check_columns(step, md.columns, md.roles, where="step 1 (pram)")      # the role check passes
    res = step.apply(md, rng=1)
    assert all(g.holds for g in res.guarantees)
    assert set(res.microdata.frame["job"]) <= {"x", "y", "z"}
    assert res.microdata.key_vars == ("sex", "region")                   # keys untouched


def test_pram_still_refuses_a_column_without_either_role():
    md = Microdata(_frame(), key_vars=["sex", "region"])
    step = build_step("pram", {"variables": ["job"]})
    with pytest.raises(InputError, match="pram_vars"):
        check_columns(step, md.columns, md.roles, where="step 1 (pram)")
    with pytest.raises(InputError, match="pram_vars"):
        step.apply(md, rng=1)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_pram_with_identity_like_matrix_keeps_categories_of_a_pram_variable(seed):
    # invariant: every released value of a PRAM variable is one of its categories, and the
    # other columns are untouched
    f = _frame(120, seed)
    md = Microdata(f, key_vars=["sex"], pram_vars=["job", "region"])
    res = build_step("pram", {"variables": ["job", "region"]}).apply(md, rng=seed)
    out = res.microdata.frame
    assert set(out["job"]) <= set(f["job"]) and set(out["region"]) <= set(f["region"])
    assert out["income"].equals(f["income"]) and out["sex"].equals(f["sex"])


def test_declared_household_id_is_expected_and_its_release_stated():
    f = _frame().drop(columns="income")
    plain = Microdata(f.drop(columns="person_id"), key_vars=["sex", "region"])
    with_role = Microdata(f.drop(columns="person_id"), key_vars=["sex", "region"], household="hh_id")
    # hh_id: its name says it is an identifier: without the role it fails the gate
    assert not check_identifiers(plain, plain, [], ()).passed
    out = check_identifiers(with_role, with_role, [], ())
    assert out.passed
    assert "household id 'hh_id' is released" in out.detail
    # a person id is still flagged when a household id is declared
    both = Microdata(f, key_vars=["sex", "region"], household="hh_id")
    out = check_identifiers(both, both, [], ())
    assert not out.passed and "person_id" in out.detail


def test_a_spec_with_pram_vars_and_a_household_runs(tmp_path):
    import tomli_w

    from sdckit.release import protect

    f = _frame(600, 3)
    f["hh_id"] = np.repeat(np.arange(200), 3)
    f.drop(columns=["person_id", "income"]).to_csv(tmp_path / "in.csv", index=False)
    spec = {"input": {"path": "in.csv"},
            "roles": {"key_vars": ["sex", "region"], "pram_vars": ["job"], "household": "hh_id"},
            "steps": [{"method": "pram", "variables": ["job"]}],
            "gate": {"k_anonymity": 2}, "output": {"directory": "out"}}
    (tmp_path / "s.toml").write_text(tomli_w.dumps(spec))
    run, _ = protect(tmp_path / "s.toml")
    assert run.passed
    ident = next(o for o in run.gate if o.name == "allow_identifiers")
    assert ident.passed and "household id 'hh_id' is released" in ident.detail
