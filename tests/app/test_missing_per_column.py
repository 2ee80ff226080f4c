"""User-missing codes per column: ``[input] na_values = { Health = [-9] }`` blanks -9 in Health
only (the list form still blanks it everywhere), on the command line and in the workbench,
which reads the codes an SPSS file declares per column."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdckit.errors import InputError, SpecError
from sdckit.io.files import read_data, read_microdata, split_na_values
from sdckit.spec import spec_from_dict
from tests.app.test_api import TOKEN, _client

FRAME = pd.DataFrame({"Health": [1, -9, 2, -9, 3, 1] * 5, "Hours": [-9, 10, 20, 30, -9, 40] * 5,
                      "Sex": [1, 2] * 15})


def test_split_forms():
    assert split_na_values([-9, "x"]) == ([-9, "x"], {})
    assert split_na_values({"Health": [-9]}) == ([], {"Health": [-9]})
    assert split_na_values([-8, ("Health", (-9,))]) == ([-8], {"Health": [-9]})
    assert split_na_values(None) == ([], {})


def test_per_column_codes_blank_their_column_only(tmp_path):
    p = tmp_path / "d.csv"
    FRAME.to_csv(p, index=False)
    df, _ = read_data(p, na_values={"Health": [-9]})
    assert df["Health"].isna().sum() == (FRAME["Health"] == -9).sum() > 0
    assert df["Hours"].isna().sum() == 0 and (df["Hours"] == -9).sum() == (FRAME["Hours"] == -9).sum()
    every, _ = read_data(p, na_values=[-9])
    assert every["Hours"].isna().sum() == (FRAME["Hours"] == -9).sum()
    # a frame in memory: a copy is changed, never the input
    before = FRAME.copy()
    md = read_microdata(FRAME, na_values={"Health": [-9]}, key_vars=["Sex"])
    pd.testing.assert_frame_equal(FRAME, before)
    assert md.frame["Health"].isna().any() and not md.frame["Hours"].isna().any()
    with pytest.raises(InputError, match="column 'Helth' is not in the data"):
        read_data(p, na_values={"Helth": [-9]})


def test_spec_reads_the_table_form_and_the_release_honours_it(tmp_path):
    from sdckit.cli import main

    FRAME.to_csv(tmp_path / "d.csv", index=False)
    raw = {"input": {"path": "d.csv", "na_values": {"Health": [-9]}}, "roles": {"key_vars": ["Sex", "Health"]},
           "steps": [], "gate": {"k_anonymity": 2}, "output": {"directory": "out", "data": "out.csv"},
           "run": {"seed": 1}}
    spec = spec_from_dict(raw, base_dir=tmp_path)
    assert spec.na_values == (("Health", (-9,)),)
    with pytest.raises(SpecError, match=r"input.na_values.Health: must be a list of values"):
        spec_from_dict({**raw, "input": {"path": "d.csv", "na_values": {"Health": -9}}}, base_dir=tmp_path)
    import tomli_w

    (tmp_path / "spec.toml").write_text(tomli_w.dumps(raw), "utf-8")
    assert main(["protect", str(tmp_path / "spec.toml")]) == 0
    out = pd.read_csv(tmp_path / "out" / "out.csv")
    assert out["Health"].isna().sum() == (FRAME["Health"] == -9).sum()
    assert (out["Hours"] == -9).sum() == (FRAME["Hours"] == -9).sum()


def test_workbench_reads_spss_missing_codes_per_column(tmp_path):
    pyreadstat = pytest.importorskip("pyreadstat")
    p = tmp_path / "data" / "h.sav"
    p.parent.mkdir()
    pyreadstat.write_sav(FRAME, str(p), missing_ranges={"Health": [-9]})
    c, app = _client(tmp_path, p)
    assert c.get(f"/?token={TOKEN}", follow_redirects=False).status_code == 303
    s = app.state.session
    assert s.state["input"]["na_values"] == {"Health": [-9]}
    assert int(s.frame["Health"].isna().sum()) == int((FRAME["Health"] == -9).sum())
    assert int(s.frame["Hours"].isna().sum()) == 0 and int(np.sum(s.frame["Hours"] == -9)) > 0
    assert any("in those columns only" in w for w in s.warnings())
    import tomllib

    assert tomllib.loads(c.get("/api/export?seed=1").text)["input"]["na_values"] == {"Health": [-9]}
