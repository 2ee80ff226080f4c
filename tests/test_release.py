"""Release: steps in order, the gate, what is written and what is never written."""

import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest

from sdckit import GateError, InputError, Microdata
from sdckit.io import read_microdata
from sdckit.masking.recode import Recode
from sdckit.release import Release, protect

SEED = 987654321987


def data(tmp_path):
    df = pd.DataFrame({"age": [1, 2, 3, 4, 1, 2, 3, 4, 1, 2], "sex": [1, 2] * 5,
                       "id": range(10)})
    path = tmp_path / "in.csv"
    df.to_csv(path, index=False)
    return path


def test_gate_failure_writes_nothing(tmp_path):
    path = data(tmp_path)
    md = read_microdata(path, key_vars=["age", "sex"])
    # (age, sex) pairs: (1,1) x3, (2,2) x3, (3,1) x2, (4,2) x2 -> 4 records with f_k < 3
    run = Release(md, [], {"k_anonymity": 3}, rng=SEED).run()
    assert not run.passed
    out = tmp_path / "out"
    with pytest.raises(GateError, match=r"k_anonymity = 3: 4 of 10 records have f_k < 3"):
        run.write(out)
    assert not out.exists()


def test_release_writes_data_and_reports_and_keeps_seed_internal(tmp_path):
    path = data(tmp_path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    md = read_microdata(path, key_vars=["age"])
    steps = [Recode("age", {"young": [1, 2], "old": [3, 4]})]
    # "id" is released on purpose here (the identifier check would stop it otherwise)
    run = Release(md, steps, {"k_anonymity": 3, "allow_identifiers": ["id"]}, rng=SEED).run()
    assert run.passed
    paths = run.write(tmp_path / "out")
    released = pd.read_csv(paths["data"])
    assert len(released) == 10 and set(released["age"]) == {"young", "old"}
    public = paths["report"].read_text()
    internal = paths["internal_report"].read_text()
    internal_json = json.loads(paths["internal_json"].read_text())
    assert "Release report" in public and "k_anonymity" in public
    assert str(SEED) not in public and str(SEED) not in paths["data"].read_text()
    assert str(SEED) in internal and internal_json["seeds"]["root"]["entropy"] == str(SEED)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest  # input untouched


def test_output_over_input_is_refused(tmp_path):
    path = data(tmp_path)
    md = read_microdata(path, key_vars=["age"])
    run = Release(md, [], {"k_anonymity": 2, "allow_identifiers": ["id"]}).run()
    with pytest.raises(InputError, match="refusing to write over the input file"):
        run.write(tmp_path, data_name="in.csv")


def test_protect_from_spec(tmp_path):
    data(tmp_path)
    spec = tmp_path / "release.toml"
    spec.write_text(f"""
[input]
path = "in.csv"
[roles]
key_vars = ["age", "sex"]
[run]
seed = {SEED}
[[steps]]
method = "remove"
variables = ["id"]
[[steps]]
method = "recode"
variable = "age"
mapping = {{ "young" = [1, 2], "old" = [3, 4] }}
[gate]
k_anonymity = 2
[output]
directory = "rel"
data = "out.parquet"
""")
    run, paths = protect(spec)
    assert run.passed and [r.method for r in run.results] == ["remove", "recode"]
    out = pd.read_parquet(paths["data"])
    assert list(out.columns) == ["age", "sex"] and len(out) == 10


def test_same_seed_same_child_streams(tmp_path):
    md = Microdata(pd.DataFrame({"a": [1, 2, 3, 1, 2, 3]}), key_vars=["a"])
    gate = {"none": "a test of seed streams"}
    r1 = Release(md, [Recode("a", {"x": [1, 2]}, others="keep")], gate, rng=5).run()
    r2 = Release(md, [Recode("a", {"x": [1, 2]}, others="keep")], gate, rng=5).run()
    assert r1.seeds.to_dict() == r2.seeds.to_dict()


def test_utility_section_does_not_count_a_global_recoding_as_a_change():
    """A recoding alone changes no record beyond the published recoding (0.00%); a
    suppression changes exactly the suppressed records (hand count: 1 of 4 = 25.00%)."""
    from sdckit.report.release import utility_html

    md = Microdata(pd.DataFrame({"age": [1, 2, 3, 4], "sex": ["f", "m", "f", "m"]}), key_vars=["age", "sex"])
    none = {"none": "a test of the utility section"}
    run = Release(md, [Recode("age", {"young": [1, 2], "old": [3, 4]})], none, rng=1).run()
    page = utility_html(run)
    assert "<td>age</td><td>" in page and page.count("0.00%") == 2
    masked = md.frame.copy()
    masked.loc[0, "sex"] = None
    run2 = Release(md, [], none, rng=1).run()
    run2 = type(run2)(md, md.with_data(masked), (), (), run2.seeds, 0.0)
    assert "25.00%" in utility_html(run2)


# ------------------------------------------------------------------ nothing certified that was not
# checked, and every fresh release passes its own verify (each test below failed before the gate
# was declared and the plan checked: it uses only the dict gate, the spec and verify)

class _MustNotRun:
    """A step that fails the test when applied: a refusal must come before any step runs."""

    def apply(self, microdata, *, rng=None):
        raise AssertionError("a step ran before the plan was checked")


def _census(tmp_path, n=600, seed=5):
    import numpy as np

    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"region": rng.choice(["north", "south", "east"], n), "sex": rng.integers(1, 3, n),
                       "age": rng.integers(1, 5, n), "marital": rng.integers(1, 5, n)})
    df.to_csv(tmp_path / "census.csv", index=False)
    return df


def _spec(tmp_path, steps: str, gate: str) -> "Path":
    spec = tmp_path / "release.toml"
    spec.write_text('[input]\npath = "census.csv"\n[roles]\nkey_vars = ["region", "sex", "age", "marital"]\n'
                    f'[run]\nseed = 9\n{steps}\n{gate}\n[output]\ndirectory = "rel"\n')
    return spec


PRAM_MARITAL = '[[steps]]\nmethod = "pram"\nvariables = ["marital"]\nmin_diagonal = 0.8\n'


def test_a_spec_without_a_risk_threshold_is_refused(tmp_path):
    """Issue: a spec with no [gate] was written with "Passed: the release met every gate
    threshold" in its report and certificate."""
    from sdckit import SDCError

    _census(tmp_path)
    for gate in ("", "[gate]\nallow_identifiers = []\n", "[gate]\nmin_diagonal = 0.8\n"):
        with pytest.raises(SDCError, match=r"no risk threshold.*k_anonymity = 3.*none = \"why\"") as err:
            protect(_spec(tmp_path, PRAM_MARITAL, gate))
        assert "\n" not in str(err.value)
        assert not (tmp_path / "rel").exists()


def test_an_out_of_range_gate_value_is_refused_at_construction(tmp_path):
    """Issue: Release(md, [], gate={"k_anonymity": -2}) passed."""
    from sdckit import ParameterError

    md = read_microdata(data(tmp_path), key_vars=["age", "sex"])
    with pytest.raises(ParameterError, match=r"^The 'k' parameter of KAnonymity must be an int >= 2\. Got -2\.$"):
        Release(md, [_MustNotRun()], gate={"k_anonymity": -2})


def test_a_gate_value_of_the_wrong_type_is_refused_at_construction(tmp_path):
    """Issue: gate={"k_anonymity": "3"} ended in a numpy UFuncTypeError after every step ran."""
    from sdckit import ParameterError

    md = read_microdata(data(tmp_path), key_vars=["age", "sex"])
    with pytest.raises(ParameterError, match=r"^The 'k' parameter of KAnonymity must be an int >= 2\. Got '3'\.$"):
        Release(md, [_MustNotRun()], gate={"k_anonymity": "3"})


def test_a_misspelt_gate_name_is_found_before_any_step_runs(tmp_path):
    """Issue: a misspelt gate name was found only after every step had run."""
    from sdckit import SpecError

    md = read_microdata(data(tmp_path), key_vars=["age", "sex"])
    with pytest.raises(SpecError, match=r"^gate\.k_anonimity: unknown gate threshold \(did you mean 'k_anonymity'\?\)"):
        Release(md, [_MustNotRun()], gate={"k_anonimity": 3}).run()


def test_pram_twice_on_one_variable_is_refused(tmp_path):
    """Issue: the second matrix overwrote the first pram_<var>.csv, protect exited 0 and
    `sdckit verify` exited 5."""
    from sdckit import SDCError

    _census(tmp_path)
    twice = PRAM_MARITAL + PRAM_MARITAL.replace("0.8", "0.7")
    with pytest.raises(SDCError, match=r"^.*steps\[1\] \(pram\): `marital` is already perturbed by steps\[0\]"):
        protect(_spec(tmp_path, twice, "[gate]\nmax_global_risk = 1.0\n"))
    assert not (tmp_path / "rel").exists()


def test_recode_after_pram_is_refused(tmp_path):
    """Issue: the published matrix no longer described the released categories; protect
    exited 0 and `sdckit verify` exited 5."""
    from sdckit import SDCError

    _census(tmp_path)
    recode = '[[steps]]\nmethod = "recode"\nvariable = "marital"\nmapping = { "single" = [1], "other" = [2, 3, 4] }\n'
    with pytest.raises(SDCError, match=r"steps\[1\] \(recode\): recodes `marital`, which steps\[0\] \(pram\)"):
        protect(_spec(tmp_path, PRAM_MARITAL + recode, "[gate]\nmax_global_risk = 1.0\n"))
    assert not (tmp_path / "rel").exists()
    # in the other order the matrix describes the recoded categories, and verify agrees
    run, paths = protect(_spec(tmp_path, recode + PRAM_MARITAL, "[gate]\nmax_global_risk = 1.0\n"))
    from sdckit.report.verify import verify_release

    assert run.verdict == "passed" and verify_release(paths["data"].parent).ok


def test_a_release_without_a_risk_threshold_on_purpose_says_not_checked(tmp_path):
    """`[gate] none = "why"`: written, and the report and certificate say NOT CHECKED, never
    Passed."""
    from sdckit.report.verify import verify_release

    _census(tmp_path)
    run, paths = protect(_spec(tmp_path, PRAM_MARITAL, '[gate]\nnone = "a synthetic teaching file"\n'))
    report = paths["report"].read_text("utf-8")
    assert "NOT CHECKED" in report and "a synthetic teaching file" in report
    assert "Passed" not in report and "passed its gate" not in report
    cert = json.loads((paths["data"].parent / "certificate.json").read_text("utf-8"))
    assert cert["verdict"] == "NOT CHECKED: a synthetic teaching file" and cert["passed"] is False
    assert verify_release(paths["data"].parent).ok
