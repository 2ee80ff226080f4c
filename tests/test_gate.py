"""The release gate as declared, typed checks validated before any step runs.

* every registered check is a frozen dataclass with declared thresholds (``KAnonymity(k=3)``);
  the dict, list and TOML forms build the same objects and every bad value is refused with
  the one parameter template (Python) or at its key path (spec), unknown names with
  "did you mean";
* a release needs a risk threshold, or ``none = "why"`` and then says NOT CHECKED;
* :meth:`Release.check` refuses a step naming a column the data lack or one without the role
  it needs, a threshold whose roles are missing, and sequences whose published matrix would not
  describe the release (PRAM twice, a recode or a change after PRAM), before any step runs.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from sdckit import Microdata
from sdckit.errors import InputError, ParameterError, SDCError, SpecError
from sdckit.gate import Gate, NoThreshold, as_gate, risk_gate_checks, run_gate
from sdckit.masking.local_suppression import LocalSuppression
from sdckit.masking.microaggregation import Microaggregation
from sdckit.masking.recode import Recode
from sdckit.masking.remove import RemoveVariables
from sdckit.params import is_declared, param, step_params
from sdckit.pram.steps import MinDiagonal, Pram
from sdckit.registry import (
    GateCheck,
    build_gate_check,
    gate_check,
    gate_check_class,
    known_gate_checks,
    register_gate_check,
)
from sdckit.release import Release
from sdckit.report.verify import verify_release
from sdckit.result import StepResult
from sdckit.risk.steps import KAnonymity, LDiversity, MaxGlobalRisk
from sdckit.risk.steps_identifiers import AllowIdentifiers
from sdckit.spec import spec_from_dict

pytestmark = pytest.mark.filterwarnings("ignore::sdckit.errors.InputWarning")


def census(n: int = 400, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"region": rng.choice(["north", "south", "east"], n),
                         "sex": rng.integers(1, 3, n), "age": rng.integers(1, 5, n),
                         "marital": rng.integers(1, 4, n),
                         "income": (rng.lognormal(10, 0.4, n) / 1000).round() * 1000,
                         "occupation": rng.choice(["clerk", "nurse", "pilot"], n)})


@pytest.fixture
def md() -> Microdata:
    return Microdata(census(), key_vars=["region", "sex", "age", "marital"], numeric_vars=["income"])


@dataclass(frozen=True)
class MustNotRun:
    """A step that fails the test when applied: a refusal must come before any step runs."""

    def apply(self, microdata, *, rng=None):
        raise AssertionError("a step ran before the plan was checked")


@dataclass(frozen=True)
class Shuffle:
    """A step (not registered) that permutes one column's values."""

    column: str

    def apply(self, microdata, *, rng=None):
        frame = microdata.frame.copy()
        frame[self.column] = np.random.default_rng(0).permutation(frame[self.column].to_numpy())
        return StepResult("shuffle", microdata.with_data(frame), {"column": self.column})


@dataclass(frozen=True)
class Publish:
    """A step (not registered) that publishes a file of a given name."""

    name: str

    def apply(self, microdata, *, rng=None):
        return StepResult("publish", microdata, {}, artifacts={self.name: "x\n"})


# ---------------------------------------------------------------------- declarations

def test_every_gate_check_is_a_declared_frozen_typed_object():
    for name in known_gate_checks():
        cls = gate_check_class(name)
        assert issubclass(cls, GateCheck) and dataclasses.is_dataclass(cls), name
        assert cls.__dataclass_params__.frozen and is_declared(cls), name
        first = step_params(cls)[0]
        assert first.help and first.label and first.rule(), name
        assert cls.gate_name == name and cls.description, name
    # which checks are risk thresholds (docs/release_spec.md says the same)
    assert set(known_gate_checks()) - set(risk_gate_checks()) == {"allow_identifiers", "min_diagonal"}


def test_dict_and_typed_forms_build_the_same_objects():
    g = as_gate({"k_anonymity": 3, "max_global_risk": 0.04, "allow_identifiers": ["id"]})
    assert g.checks == (KAnonymity(k=3), MaxGlobalRisk(risk=0.04), AllowIdentifiers(columns=("id",)))
    assert as_gate([KAnonymity(3), MaxGlobalRisk(0.04), AllowIdentifiers(("id",))]).checks == g.checks
    assert dict(g) == {"k_anonymity": 3, "max_global_risk": 0.04, "allow_identifiers": ("id",)}
    assert g.to_dict() == {"k_anonymity": 3, "max_global_risk": 0.04, "allow_identifiers": ["id"]}
    assert as_gate({"k_anonymity": {"k": 4}}).checks == (KAnonymity(k=4),)
    assert as_gate(g.to_dict()).checks == g.checks  # the TOML form round-trips
    assert gate_check("k_anonymity").validate(5) == 5  # the name-based view uses the constructor


def test_registering_a_check_needs_a_declared_frozen_dataclass():
    with pytest.raises(TypeError, match="frozen dataclass deriving from GateCheck"):
        register_gate_check("gate_test_plain")(type("Plain", (), {}))

    @dataclass(frozen=True)
    class Undeclared(GateCheck):
        k: int = 3

    with pytest.raises(TypeError, match="declare every parameter"):
        register_gate_check("gate_test_undeclared")(Undeclared)

    @dataclass(frozen=True)
    class BadRole(GateCheck):
        k: int = param(3, kind="int", help="x")

    with pytest.raises(TypeError, match="unknown role"):
        register_gate_check("gate_test_role", requires=("keys",))(BadRole)


def test_param_label_and_role_are_declared_and_exported():
    p = next(p for p in step_params(Pram) if p.name == "variables")
    # role "pram": a key variable or a declared PRAM variable ([roles] pram_vars, as sdcMicro's pramVars)
    assert p.role == "pram" and p.to_dict()["role"] == "pram" and p.to_dict()["label"] == "variables to PRAM"
    q = next(p for p in step_params(Pram) if p.name == "min_diagonal")
    assert q.display_label == "min diagonal"  # no label declared: the name in words
    with pytest.raises(ValueError, match="role"):
        param(kind="int", help="x", role="key")
    with pytest.raises(ValueError, match="role"):
        param(kind="columns", help="x", role="keys")


# ---------------------------------------------------------------------- hostile gates, Python

TEMPLATE = r"^The '{p}' parameter of {c} must be {rule}\. Got {got}\.$"


@pytest.mark.parametrize("gate, pattern", [
    ({"k_anonymity": -2}, TEMPLATE.format(p="k", c="KAnonymity", rule="an int >= 2", got="-2")),
    ({"k_anonymity": "3"}, TEMPLATE.format(p="k", c="KAnonymity", rule="an int >= 2", got="'3'")),
    ({"k_anonymity": 3.0}, TEMPLATE.format(p="k", c="KAnonymity", rule="an int >= 2", got="3.0")),
    ({"k_anonymity": True}, TEMPLATE.format(p="k", c="KAnonymity", rule="an int >= 2", got="True")),
    ({"k_anonymity": None}, TEMPLATE.format(p="k", c="KAnonymity", rule="an int >= 2", got="None")),
    ({"k_anonymity": 1}, TEMPLATE.format(p="k", c="KAnonymity", rule="an int >= 2", got="1")),
    ({"max_global_risk": 0}, TEMPLATE.format(p="risk", c="MaxGlobalRisk", rule=r"a number in \(0, 1\]", got="0")),
    ({"max_global_risk": 1.5}, TEMPLATE.format(p="risk", c="MaxGlobalRisk", rule=r"a number in \(0, 1\]", got="1.5")),
    ({"max_global_risk": float("nan")}, TEMPLATE.format(p="risk", c="MaxGlobalRisk", rule=r"a number in \(0, 1\]", got="nan")),
    ({"max_global_risk": "0.05"}, TEMPLATE.format(p="risk", c="MaxGlobalRisk", rule=r"a number in \(0, 1\]", got="'0.05'")),
    ({"max_individual_risk": -0.1}, TEMPLATE.format(p="risk", c="MaxIndividualRisk", rule=r"a number in \(0, 1\]", got="-0.1")),
    ({"max_dld": 101}, TEMPLATE.format(p="percent", c="MaxDLD", rule=r"a number in \[0, 100\]", got="101")),
    ({"l_diversity": 1}, TEMPLATE.format(p="l", c="LDiversity", rule="an int >= 2", got="1")),
    ({"min_diagonal": 0, "k_anonymity": 2}, TEMPLATE.format(p="d", c="MinDiagonal", rule=r"a number in \(0, 1\]", got="0")),
    ({"max_recognition_ratio": 1.0}, TEMPLATE.format(p="alpha", c="MaxRecognitionRatio", rule=r"a number in \(0, 1\)", got="1.0")),
    ({"max_tau1": float("inf")}, TEMPLATE.format(p="tau1", c="MaxTau1", rule="a number >= 0", got="inf")),
    ({"allow_identifiers": [1, 2], "k_anonymity": 2}, r"^The 'columns' parameter of AllowIdentifiers must be "),
    ({"allow_identifiers": ["id", "id"], "k_anonymity": 2}, r"^The 'columns' parameter of AllowIdentifiers must be "),
    ({"none": ""}, TEMPLATE.format(p="reason", c="NoThreshold", rule="a non-empty text saying why", got="''")),
    ({"none": "   \n "}, r"^The 'reason' parameter of NoThreshold must be a non-empty text saying why"),
    ({"none": 3}, TEMPLATE.format(p="reason", c="NoThreshold", rule="a non-empty text saying why", got="3")),
])
def test_bad_threshold_values_use_the_one_template(md, gate, pattern):
    with pytest.raises(ParameterError, match=pattern) as err:
        Release(md, [MustNotRun()], gate)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("gate, pattern", [
    ({"k_anonimity": 3}, r"^gate\.k_anonimity: unknown gate threshold \(did you mean 'k_anonymity'\?\)"),
    ({"K_ANONYMITY": 3}, r"^gate\.K_ANONYMITY: unknown gate threshold \(did you mean 'k_anonymity'\?\)"),
    ({"max_global": 0.1}, r"did you mean 'max_global_risk'"),
    ({"k_anonymity": {"kk": 3}}, r"^gate\.k_anonymity\.kk: unknown parameter of the gate threshold 'k_anonymity'"),
    ({"none": "x", "k_anonymity": 3}, r"^gate\.none: the gate has the risk threshold\(s\) k_anonymity"),
    ([KAnonymity(3), KAnonymity(4)], r"^gate\.k_anonymity: given twice"),
    ([NoThreshold("a"), NoThreshold("b")], r"^gate: more than one NoThreshold"),
])
def test_bad_threshold_names_are_one_line_spec_errors(md, gate, pattern):
    with pytest.raises(SpecError, match=pattern) as err:
        Release(md, [MustNotRun()], gate)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("gate", [None, {}, [], {"allow_identifiers": ["occupation"]}, [AllowIdentifiers()],
                                  Gate()])
def test_no_risk_threshold_is_refused_with_what_to_do(md, gate):
    with pytest.raises(SpecError, match=r'^gate: the release has no risk threshold.*k_anonymity = 3.*none = "why"'):
        Release(md, [MustNotRun()], gate)


def test_min_diagonal_alone_is_not_a_risk_threshold(md):
    with pytest.raises(SpecError, match=r"no risk threshold \(min_diagonal is not\)"):
        Release(md, [Pram(["marital"])], {"min_diagonal": 0.8})


@pytest.mark.parametrize("gate", ["k_anonymity", 42, KAnonymity])
def test_gate_of_the_wrong_type(md, gate):
    with pytest.raises(ParameterError, match=r"^The 'gate' parameter of Release must be a dict of thresholds"):
        Release(md, [], gate)


@pytest.mark.parametrize("args, pattern", [
    ((census(), [], {"k_anonymity": 2}), r"^The 'microdata' parameter of Release must be a Microdata"),
    (("md", Pram(["marital"]), {"k_anonymity": 2}), r"^The 'steps' parameter of Release must be a list of steps"),
    (("md", ["pram"], {"k_anonymity": 2}), r"^The 'steps' parameter of Release must be a list of steps; item 0"),
])
def test_release_arguments_of_the_wrong_type(md, args, pattern):
    args = tuple(md if isinstance(a, str) and a == "md" else a for a in args)
    with pytest.raises(ParameterError, match=pattern):
        Release(*args)


def test_direct_construction_validates():
    with pytest.raises(ParameterError, match=r"^The 'k' parameter of KAnonymity must be an int >= 2\. Got 0\.$"):
        KAnonymity(k=0)
    with pytest.raises(ParameterError, match="MinDiagonal"):
        MinDiagonal(d=2)
    assert KAnonymity(3).threshold == 3 and KAnonymity(3).describe().startswith("k_anonymity = 3: every record")
    with pytest.raises(dataclasses.FrozenInstanceError):
        KAnonymity(3).k = 2  # type: ignore[misc]
    with pytest.raises(ParameterError, match="must be a KAnonymity or its value"):
        build_gate_check("k_anonymity", MaxGlobalRisk(0.1))


# ---------------------------------------------------------------------- hostile gates, TOML

BASE = {"input": {"path": "in.csv"}, "roles": {"key_vars": ["region"]}}


@pytest.mark.parametrize("gate, pattern", [
    ({"k_anonymity": "3"}, r"^gate\.k_anonymity: must be an int >= 2, got '3'$"),
    ({"k_anonymity": 2.5}, r"^gate\.k_anonymity: must be an int >= 2, got 2\.5$"),
    ({"k_anonymity": {"k": 1}}, r"^gate\.k_anonymity\.k: must be an int >= 2, got 1$"),
    ({"k_anonymity": {}}, r"^gate\.k_anonymity: .*missing 1 required positional argument: 'k'"),
    ({"k_anonymity": {"kk": 3}}, r"^gate\.k_anonymity\.kk: unknown parameter"),
    ({"max_global_risk": 0}, r"^gate\.max_global_risk: must be a number in \(0, 1\], got 0$"),
    ({"max_linkage_all_columns": [0.1]}, r"^gate\.max_linkage_all_columns: must be a number in \[0, 1\], got \[0\.1\]$"),
    ({"allow_identifiers": 3}, r"^gate\.allow_identifiers: must be a column name or a list"),
    ({"none": ""}, r"^gate\.none: must be a non-empty text saying why"),
    ({"none": ["x"]}, r"^gate\.none: must be a non-empty text saying why"),
    ({"none": "x", "max_global_risk": 0.1}, r"^gate\.none: the gate has the risk threshold"),
    ({"k_anonymty": 3}, r"^gate\.k_anonymty: unknown gate threshold \(did you mean 'k_anonymity'\?\)"),
    ({"None": "x"}, r"^gate\.None: unknown gate threshold"),
])
def test_bad_gate_tables_in_a_spec(gate, pattern):
    with pytest.raises(SpecError, match=pattern) as err:
        spec_from_dict({**BASE, "gate": gate})
    assert "\n" not in str(err.value)


def test_spec_gate_is_typed_and_a_none_spec_reads(tmp_path):
    spec = spec_from_dict({**BASE, "gate": {"k_anonymity": 3, "min_diagonal": 0.8}})
    assert isinstance(spec.gate, Gate) and spec.gate.checks == (KAnonymity(3), MinDiagonal(0.8))
    spec = spec_from_dict({**BASE, "gate": {"none": "  synthetic   teaching file "}})
    assert spec.gate.not_checked == "synthetic teaching file" and not spec.gate.risk_checks
    assert spec.gate.to_dict() == {"none": "synthetic teaching file"}


# ---------------------------------------------------------------------- the plan against the data

@pytest.mark.parametrize("steps, error, pattern", [
    ([Pram(["occupation"])], InputError,
     r"^steps\[1\] \(pram\)\.variables: `occupation` is not a key or PRAM variable; add it to \[roles\] key_vars "
     r"or \[roles\] pram_vars\.$"),
    ([Pram(["marital"]), Pram(["occupatoin"])], InputError,
     r"^steps\[2\] \(pram\)\.variables: column `occupatoin` is not in the data; did you mean 'occupation'\?$"),
    ([Pram(["marital"], strata=["zone"])], InputError, r"^steps\[1\] \(pram\)\.strata: column `zone` is not in the data"),
    ([Recode("agee", {"young": [1, 2]})], InputError, r"^steps\[1\] \(recode\)\.variable: column `agee` is not in the data"),
    ([RemoveVariables(["occupation", "notes"])], InputError,
     r"^steps\[1\] \(remove\)\.variables: column `notes` is not in the data"),
    ([Microaggregation(k=3, variables=["incme"])], InputError,
     r"^steps\[1\] \(microaggregation\)\.variables: column `incme` is not in the data; did you mean 'income'\?"),
])
def test_a_step_that_cannot_apply_is_refused_before_step_one(md, steps, error, pattern):
    release = Release(md, [MustNotRun(), *steps], {"k_anonymity": 2})
    with pytest.raises(error, match=pattern):
        release.run()


@pytest.mark.parametrize("gate, pattern", [
    ({"l_diversity": 2}, r"^gate\.l_diversity: the data have no sensitive variable .*add it to \[roles\] sensitive"),
    ({"max_tau1": 1.0}, r"^gate\.max_tau1: the data have no weight variable .*set \[roles\] weight"),
    ({"max_dld": 10.0}, r"^gate\.max_dld: the data have no numeric variable"),
    ({"k_anonymity": 2, "min_diagonal": 0.8},
     r"^gate\.min_diagonal: no step of this release publishes a PRAM matrix, so there is nothing to check"),
])
def test_a_threshold_that_cannot_be_checked_is_refused_before_step_one(gate, pattern):
    md = Microdata(census(), key_vars=["region", "sex"])
    with pytest.raises(SpecError, match=pattern):
        Release(md, [MustNotRun()], gate).run()


# ---------------------------------------------------------------------- PRAM and recode sequences

@pytest.mark.parametrize("steps, pattern", [
    (lambda: [Pram(["marital"]), Pram(["marital"], min_diagonal=0.6)],
     r"^steps\[2\] \(pram\): `marital` is already perturbed by steps\[1\] \(pram\)"),
    (lambda: [Pram(["sex", "marital"], joint=True), Pram(["age", "marital"])],
     r"^steps\[2\] \(pram\): `marital` is already perturbed by steps\[1\] \(pram\)"),
    (lambda: [Pram(["marital"], strata=["region"]), Pram(["sex", "marital"])],
     r"^steps\[2\] \(pram\): `marital` is already perturbed"),
    (lambda: [Pram(["age"]), Recode("age", {"young": [1, 2], "old": [3, 4]})],
     r"^steps\[2\] \(recode\): recodes `age`, which steps\[1\] \(pram\) perturbed with a published matrix"),
    (lambda: [Pram(["age"]), LocalSuppression(k=2), Recode("age", {"young": [1, 2]}, others="keep")],
     r"^steps\[3\] \(recode\): recodes `age`, which steps\[1\] \(pram\)"),
])
def test_pram_twice_or_recode_after_pram_is_refused_before_step_one(md, steps, pattern):
    with pytest.raises(SpecError, match=pattern) as err:
        Release(md, [MustNotRun(), *steps()], {"k_anonymity": 2}).run()
    assert "\n" not in str(err.value)


def test_a_step_that_changes_a_prammed_variable_is_refused_when_it_runs(md):
    with pytest.raises(SDCError, match=r"^steps\[1\] \(shuffle\): changed \d+ value\(s\) of `marital`, which "
                                       r"steps\[0\] \(pram\) perturbed with a published matrix"):
        Release(md, [Pram(["marital"]), Shuffle("marital")], {"k_anonymity": 2}).run()
    # another column may change; suppression (to missing) of the PRAMmed one is allowed
    run = Release(md, [Pram(["marital"]), Shuffle("income"), LocalSuppression(k=2)],
                  {"k_anonymity": 2}, rng=1).run()
    assert [r.method for r in run.results] == ["pram", "shuffle", "local_suppression"]


def test_a_file_published_twice_is_refused(md):
    with pytest.raises(SDCError, match=r"^steps\[1\] \(publish\): publishes pram_marital\.csv, which steps\[0\] "
                                       r"\(pram\) publishes too"):
        Release(md, [Pram(["marital"]), Publish("pram_marital.csv")], {"k_anonymity": 2}).run()


@pytest.mark.parametrize("steps", [
    lambda: [Recode("age", {"young": [1, 2], "old": [3, 4]}), Pram(["age"], min_diagonal=0.8)],
    lambda: [Pram(["marital"], min_diagonal=0.8), LocalSuppression(k=3)],
    lambda: [Pram(["sex", "marital"], joint=True), Pram(["region"], strata=["sex"])],
])
def test_allowed_sequences_pass_their_own_verify(tmp_path, md, steps):
    run = Release(md, steps(), {"max_global_risk": 1.0, "min_diagonal": 0.5}, rng=4).run()
    assert run.passed and run.verdict == "passed"
    run.write(tmp_path / "rel")
    res = verify_release(tmp_path / "rel")
    assert res.ok, res.problems


# ---------------------------------------------------------------------- NOT CHECKED

def test_not_checked_release_says_so_everywhere_and_verifies(tmp_path, md):
    run = Release(md, [Pram(["marital"], min_diagonal=0.8)],
                  {"none": "synthetic teaching file", "min_diagonal": 0.8}, rng=2).run()
    assert run.passed and run.verdict == "not checked"
    assert run.verdict_text == "NOT CHECKED: synthetic teaching file"
    assert [o.name for o in run.gate] == ["allow_identifiers", "min_diagonal"]
    paths = run.write(tmp_path / "rel")
    report = paths["report"].read_text("utf-8")
    assert "NOT CHECKED" in report and "synthetic teaching file" in report and "✔ Passed" not in report
    cert = json.loads((tmp_path / "rel" / "certificate.json").read_text("utf-8"))
    assert cert["verdict"] == "NOT CHECKED: synthetic teaching file" and cert["passed"] is False
    assert cert["not_checked"] == "synthetic teaching file"
    assert verify_release(tmp_path / "rel").ok


def test_a_failed_check_is_failed_even_without_a_risk_threshold(md):
    run = Release(md, [Pram(["marital"], min_diagonal=0.6)], {"none": "x", "min_diagonal": 0.99}, rng=2).run()
    assert not run.passed and run.verdict == "failed" and run.verdict_text.startswith("FAILED")


def test_run_gate_accepts_every_form(md):
    for form in ({"k_anonymity": 2}, [KAnonymity(2)], KAnonymity(2), as_gate({"k_anonymity": 2})):
        names = [o.name for o in run_gate(form, md, md, [])]
        assert names == ["allow_identifiers", "k_anonymity"]
    assert LDiversity(2).requires_roles == ("sensitive",)


# ---------------------------------------------------------------------- clients

def test_the_dask_engine_reads_the_declarations(tmp_path):
    pytest.importorskip("distributed")
    from sdckit.engine.run import dask_gates, engine_gates, load_engine_spec

    # every gate check that claims the engine implements its protocol
    assert sorted(engine_gates()) == sorted(dask_gates())
    census().to_csv(tmp_path / "in.csv", index=False)
    spec = tmp_path / "s.toml"
    head = '[input]\npath = "in.csv"\n[roles]\nkey_vars = ["region", "sex"]\n'
    spec.write_text(head + '[[steps]]\nmethod = "remove"\nvariables = ["occupation"]\n')
    with pytest.raises(SpecError, match=r"s\.toml: gate: the release has no risk threshold"):
        load_engine_spec(spec)
    spec.write_text(head + '[gate]\nmin_diagonal = 0.9\nnone = "engine test"\n')
    with pytest.raises(SpecError, match=r"gate\.min_diagonal: no step of this release publishes a PRAM matrix"):
        load_engine_spec(spec)
    spec.write_text(head + '[gate]\nk_anonymity = "3"\n')
    with pytest.raises(SpecError, match=r"gate\.k_anonymity: must be an int >= 2, got '3'"):
        load_engine_spec(spec)
    spec.write_text(head + '[gate]\nmax_linkage_all_columns = 0.1\n')
    with pytest.raises(SpecError, match=r"gate\.max_linkage_all_columns: not checked by the Dask engine"):
        load_engine_spec(spec)
    spec.write_text(head + '[gate]\nnone = "engine test"\n')
    loaded, _ = load_engine_spec(spec)
    assert loaded.gate.not_checked == "engine test"


@pytest.fixture
def workbench(tmp_path):
    pytest.importorskip("starlette")
    from tests.app.test_api import TOKEN, _client

    data = tmp_path / "data" / "census.csv"
    data.parent.mkdir()
    census().to_csv(data, index=False)
    c, app = _client(tmp_path, data)
    assert c.get(f"/?token={TOKEN}", follow_redirects=False).status_code == 303
    c.headers["X-CSRF-Token"] = app.state.csrf
    c.post("/api/roles", json={"roles": {"key_vars": ["region", "sex", "age", "marital"]}})
    c.post("/api/steps", json={"action": "add", "step": {"method": "remove", "variables": ["occupation"]}})
    return c


def test_workbench_release_without_threshold_is_refused(workbench):
    from tests.app.test_api import _wait

    assert workbench.get("/api/results").json()["verdict"] is None
    job = _wait(workbench, workbench.post("/api/release", json={}).json())
    assert job["status"] == "failed" and "no risk threshold" in job["error"]
    r = workbench.post("/api/gate", json={"gate": {"k_anonymity": "3"}})
    assert r.status_code >= 400 and "must be an int >= 2, got '3'" in r.text


def test_workbench_says_not_checked(workbench):
    from tests.app.test_api import _wait

    assert workbench.post("/api/gate", json={"gate": {"none": "teaching file"}}).status_code == 200
    res = workbench.get("/api/results").json()
    assert res["verdict"] == "NOT CHECKED: teaching file" and res["passed"] is None
    job = _wait(workbench, workbench.post("/api/release", json={}).json())
    assert job["status"] == "done", job
    assert job["result"]["verdict"] == "NOT CHECKED: teaching file" and job["result"]["passed"] is False
    names = [g["name"] for g in workbench.get("/api/methods").json()["gate_checks"]]
    assert "none" in names and "k_anonymity" in names


def test_pram_of_a_key_with_missing_values_passes_verify(tmp_path):
    """Found by the property test: a key read with missing values is a float column; the data
    file writes its codes as integers (3, not 3.0), so the published matrix labels them the
    same way, or verify finds released values that are not categories of the matrix."""
    df = census()
    df["marital"] = df["marital"].astype(float)
    df.loc[::17, "marital"] = np.nan
    md = Microdata(df, key_vars=["region", "sex", "age", "marital"])
    run = Release(md, [Pram(["marital"], min_diagonal=0.8), Pram(["age"], strata=["marital"])],
                  {"max_global_risk": 1.0}, rng=1).run()
    paths = run.write(tmp_path / "rel")
    assert "marital \\ released,1,2,3" in (tmp_path / "rel" / "pram_marital.csv").read_text()
    res = verify_release(paths["data"].parent)
    assert res.ok, res.problems
