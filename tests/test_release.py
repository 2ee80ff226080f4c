"""Release: steps in order, the gate, what is written and what is never written."""

import hashlib
import json

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
    run = Release(md, [], {"allow_identifiers": ["id"]}).run()
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
    r1 = Release(md, [Recode("a", {"x": [1, 2]}, others="keep")], rng=5).run()
    r2 = Release(md, [Recode("a", {"x": [1, 2]}, others="keep")], rng=5).run()
    assert r1.seeds.to_dict() == r2.seeds.to_dict()


def test_utility_section_does_not_count_a_global_recoding_as_a_change():
    """A recoding alone changes no record beyond the published recoding (0.00%); a
    suppression changes exactly the suppressed records (hand count: 1 of 4 = 25.00%)."""
    from sdckit.report.release import utility_html

    md = Microdata(pd.DataFrame({"age": [1, 2, 3, 4], "sex": ["f", "m", "f", "m"]}), key_vars=["age", "sex"])
    run = Release(md, [Recode("age", {"young": [1, 2], "old": [3, 4]})], rng=1).run()
    page = utility_html(run)
    assert "<td>age</td><td>" in page and page.count("0.00%") == 2
    masked = md.frame.copy()
    masked.loc[0, "sex"] = None
    run2 = Release(md, [], rng=1).run()
    run2 = type(run2)(md, md.with_data(masked), (), (), run2.seeds, 0.0)
    assert "25.00%" in utility_html(run2)
