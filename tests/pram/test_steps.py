"""The pram release step: spec wiring, published matrices next to the data, the min_diagonal gate,
guarantees, bad input (labels, rows, unknown methods, joint space too large), evolved matrices."""

import numpy as np
import pandas as pd
import pytest

from sdckit import InputError, Microdata
from sdckit.errors import SpecError
from sdckit.pram.builders import File, Identity, MaxEntropy
from sdckit.pram.matrix import TransitionMatrix
from sdckit.pram.steps import Evolved, Pram, PramResult, check_min_diagonal
from sdckit.release import Release
from sdckit.spec import spec_from_dict


@pytest.fixture
def md():
    rng = np.random.default_rng(0)
    n = 3000
    df = pd.DataFrame({
        "occ": rng.choice(["clerk", "farmer", "nurse", "pilot", "judge"], n, p=[0.5, 0.3, 0.17, 0.025, 0.005]),
        "region": rng.choice(["N", "S", "E"], n),
        "sex": rng.choice(["f", "m"], n),
        "income": rng.normal(size=n),
    })
    df.loc[:20, "occ"] = None
    return Microdata(df, key_vars=["occ", "region", "sex"], numeric_vars=["income"])


def test_step_guarantees_missing_and_strata(md):
    r = Pram(["occ", "region"], min_diagonal=0.8, strata=["sex"]).apply(md, rng=3)
    assert isinstance(r, PramResult)
    assert {g.name for g in r.guarantees} == {"rows_sum_to_one", "missing_unchanged", "changes_allowed",
                                              "min_diagonal", "invariance"}
    assert all(g.holds for g in r.guarantees)
    assert set(r.matrices) == {(("occ",), "f"), (("occ",), "m"), (("region",), "f"), (("region",), "m")}
    assert all(m.min_diagonal >= 0.8 for m in r.matrices.values())        # the rare 'judge' too
    occ_before, occ_after = md.codes("occ"), r.microdata.codes("occ")
    assert np.array_equal(occ_before < 0, occ_after < 0)
    assert r.microdata.frame["income"].equals(md.frame["income"])
    T = r.transitions[(("occ",), "f")]
    assert T.sum() == r.before[(("occ",), "f")].sum()
    assert np.array_equal(T.sum(axis=0), r.after[(("occ",), "f")])
    assert "pram_occ_f.csv" in r.artifacts and "pram_region_m.json" in r.artifacts
    html = r.report_html()
    assert html.count("<img") == 4 and "expected share of changed records" in html
    assert "seed" not in str(r.to_dict()).lower()


def test_same_rng_same_release(md):
    a = Pram(["occ"], matrix=MaxEntropy(), min_diagonal=0.6).apply(md, rng=11)
    b = Pram(["occ"], matrix=MaxEntropy(), min_diagonal=0.6).apply(md, rng=11)
    assert np.array_equal(a.microdata.codes("occ"), b.microdata.codes("occ"))


def test_identity_step_changes_nothing(md):
    r = Pram(["occ", "sex"], matrix=Identity()).apply(md, rng=1)
    assert r.microdata.frame.equals(md.frame)


def test_joint_step(md):
    r = Pram(["occ", "region"], joint=True, min_diagonal=0.85).apply(md, rng=2)
    m = r.matrices[(("occ", "region"), "all")]
    assert m.n_categories == 15 and m.categories[0] == ("clerk", "E")
    assert all(g.holds for g in r.guarantees)
    miss = md.codes("occ") < 0  # region of records with occ missing is kept (joint group)
    assert np.array_equal(r.microdata.codes("region")[miss], md.codes("region")[miss])


def test_spec_release_writes_matrices_and_gate(tmp_path, md):
    md.frame.to_csv(tmp_path / "in.csv", index=False)
    raw = {"input": {"path": "in.csv"}, "roles": {"key_vars": ["occ", "region", "sex"]}, "run": {"seed": 4},
           "steps": [{"method": "pram", "variables": ["occ"], "min_diagonal": 0.8}],
           # income is continuous and unmasked here: released on purpose (the identifier check
           # would stop a nearly unique column otherwise)
           "gate": {"min_diagonal": 0.8, "allow_identifiers": ["income"], "none": "a test of the matrices"},
           "output": {"directory": "out"}}
    run = Release.from_spec(spec_from_dict(raw, base_dir=tmp_path)).run()
    assert run.passed
    run.write(tmp_path / "out")
    m = TransitionMatrix.read(tmp_path / "out" / "pram_occ.csv")
    assert m.min_diagonal >= 0.8 and m.variables == ("occ",)
    raw["gate"] = {"min_diagonal": 0.9, "allow_identifiers": ["income"], "none": "a test of the matrices"}
    run = Release.from_spec(spec_from_dict(raw, base_dir=tmp_path)).run()
    assert not run.passed and "raise the step's min_diagonal" in run.failures()[-1].detail
    raw["steps"][0]["colour"] = 1
    with pytest.raises(SpecError, match="unknown parameter"):
        spec_from_dict(raw, base_dir=tmp_path)


def test_gate_without_pram_passes_vacuously(md):
    out = check_min_diagonal(md, md, [], 0.9)
    assert out.passed and "no PRAM step" in out.detail


def test_file_matrix_labels_checked(tmp_path, md):
    good = TransitionMatrix(["clerk", "farmer", "judge", "nurse", "pilot"], np.eye(5) * 0.9 + 0.02)
    good.write(tmp_path / "occ.csv")
    r = Pram(["occ"], matrix=File(str(tmp_path / "occ.csv"))).apply(md, rng=1)
    assert r.matrices[(("occ",), "all")].categories == tuple(md.categories("occ"))
    bad = TransitionMatrix(["clerk", "farmer", "judge", "nurse", "poet"], np.eye(5))
    bad.write(tmp_path / "bad.csv")
    with pytest.raises(InputError) as e:
        Pram(["occ"], matrix=File(str(tmp_path / "bad.csv"))).apply(md, rng=1)
    assert "'pilot'" in str(e.value) and "'poet'" in str(e.value)
    (tmp_path / "rows.csv").write_text("occ \\ released,clerk,farmer\nclerk,0.5,0.4\nfarmer,0.5,0.5\n")
    with pytest.raises(InputError, match="do not sum to 1"):
        Pram(["occ"], matrix=File(str(tmp_path / "rows.csv"))).apply(md, rng=1)
    with pytest.raises(InputError, match="probability 0.92 < min_diagonal 0.95"):
        Pram(["occ"], matrix=File(str(tmp_path / "occ.csv")), min_diagonal=0.95).apply(md, rng=1)


def test_parameter_and_input_errors(md):
    with pytest.raises(InputError, match="'matrix' parameter of Pram must be one of"):
        Pram(["occ"], matrix="magic")
    with pytest.raises(InputError, match="min_diagonal"):
        Pram(["occ"], min_diagonal=1.5)
    with pytest.raises(InputError, match="'income' is neither a key variable nor a PRAM variable"):
        Pram(["income"]).apply(md)
    with pytest.raises(InputError, match="does not exist"):
        Pram(["ocupation"]).apply(md)


def test_joint_space_too_large_says_what_to_do():
    n = 200
    df = pd.DataFrame({f"v{i}": np.arange(n) % 150 for i in range(3)})
    md = Microdata(df, key_vars=list(df.columns))
    with pytest.raises(InputError, match="joint = false"):
        Pram(list(df.columns), joint=True).apply(md, rng=1)


def test_evolved_matrix_method(md):
    r = Pram(["occ"], matrix=Evolved(d_min=0.8, d_max=0.95, generations=3, population=6)).apply(md, rng=5)
    assert all(g.holds for g in r.guarantees)
    m = r.matrices[(("occ",), "all")]
    assert 0.8 - 1e-12 <= m.min_diagonal and m.is_invariant(r.before[(("occ",), "all")])


def test_evolved_report_shows_fitness_terms_and_front(md):
    r = Pram(["occ"], matrix=Evolved(d_min=0.8, d_max=0.95, generations=3, population=6,
                                   pareto=True)).apply(md, rng=5)
    ev = r.evidence[(("occ",), "all")]
    assert ev["front"] and all(len(p) == 2 for p in ev["front"])
    page = r.report_html()
    assert "Evolved invariant matrix" in page and "risk R" in page and "utility loss U" in page
    assert "risk-utility front of the evolved matrices" in page
