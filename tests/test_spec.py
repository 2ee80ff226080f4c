"""Release spec: validation errors name the key path and the rule."""

from dataclasses import dataclass

import pytest

from sdckit import SpecError
from sdckit._validation import check_int
from sdckit.registry import register_step
from sdckit.result import StepResult
from sdckit.spec import load_spec, spec_from_dict


@register_step("spec_test_noop")
@dataclass(frozen=True)
class NoOp:
    """A do-nothing step with one int parameter, for these tests only."""

    k: int = 2

    def __post_init__(self):
        check_int("NoOp", "k", self.k, min_value=2)

    def apply(self, microdata, *, rng=None):
        return StepResult("spec_test_noop", microdata, {"k": self.k})


def base(**extra):
    raw = {"input": {"path": "data.csv"}, "roles": {"key_vars": ["a"]},
           "steps": [{"method": "spec_test_noop", "k": 3}]}
    raw.update(extra)
    return raw


def test_valid_spec(tmp_path):
    spec = spec_from_dict(base(gate={"k_anonymity": 3}, output={"directory": "out"}), base_dir=tmp_path)
    assert spec.input_path == tmp_path / "data.csv"
    assert spec.output.directory == tmp_path / "out"
    assert spec.gate == {"k_anonymity": 3}
    assert spec.steps[0].k == 3 and spec.roles["key_vars"] == ("a",)


def test_step_parameter_error_names_key_path():
    raw = base(steps=[{"method": "spec_test_noop"}, {"method": "spec_test_noop"},
                      {"method": "spec_test_noop", "k": 1}])
    with pytest.raises(SpecError, match=r"^steps\[2\]\.k: must be an int >= 2, got 1$"):
        spec_from_dict(raw)


def test_unknown_method_lists_known():
    with pytest.raises(SpecError, match=r"steps\[0\]\.method: unknown step method 'pramm'; the known methods are .*recode"):
        spec_from_dict(base(steps=[{"method": "pramm"}]))


def test_unknown_parameter_lists_valid():
    with pytest.raises(SpecError, match=r"steps\[0\]\.kk: unknown parameter of step 'spec_test_noop'; the valid ones are k"):
        spec_from_dict(base(steps=[{"method": "spec_test_noop", "kk": 3}]))


@pytest.mark.parametrize("raw, pattern", [
    ({"roles": {}}, r"^input: must be a table"),
    ({"input": {}}, r"^input\.path: is required"),
    ({"input": {"path": "x.csv"}, "rols": {}}, r"^rols: unknown key.*did you mean 'roles'"),
    ({"input": {"path": "x.csv"}, "roles": {"keys": ["a"]}}, r"^roles\.keys: unknown key"),
    ({"input": {"path": "x.csv"}, "roles": {"weight": 3}}, r"^roles\.weight: must be a column name, got 3"),
    ({"input": {"path": "x.csv"}, "gate": {"k_anonymity": 1}}, r"^gate\.k_anonymity: must be an int >= 2, got 1"),
    ({"input": {"path": "x.csv"}, "gate": {"k_anon": 1}}, r"^gate\.k_anon: unknown gate threshold"),
    ({"input": {"path": "x.csv"}, "run": {"seed": -1}}, r"^run\.seed: must be an int >= 0"),
    ({"input": {"path": "x.csv"}, "output": {"data": "../x.csv"}}, r"^output\.data: must be a file name"),
    ({"input": {"path": "x.csv"}, "steps": [{"k": 2}]}, r"^steps\[0\]\.method: is required"),
])
def test_structural_errors(raw, pattern):
    with pytest.raises(SpecError, match=pattern):
        spec_from_dict(raw)


def test_load_spec_file_errors(tmp_path):
    with pytest.raises(SpecError, match="no such spec file"):
        load_spec(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[input\npath = 'x'")
    with pytest.raises(SpecError, match="is not valid TOML"):
        load_spec(bad)
    wrong = tmp_path / "wrong.toml"
    wrong.write_text("[input]\npath = 'x.csv'\n[[steps]]\nmethod = 'spec_test_noop'\nk = 0\n")
    with pytest.raises(SpecError, match=r"wrong\.toml: steps\[0\]\.k: must be an int >= 2, got 0"):
        load_spec(wrong)
