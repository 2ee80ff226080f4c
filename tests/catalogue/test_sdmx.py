"""SDMX-CSV 2.0: every suppressed and perturbed cell carries a CONF_STATUS code, the file reads
back (sdckit's reader and pysdmx's) into the same values and flags, and the structure
definition is valid SDMX-ML 2.1 (pysdmx validates it against the SDMX schemas)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdckit.catalogue.sdmx import CONF_STATUS, read_sdmx_csv, sdmx_status, write_sdmx_csv
from sdckit.errors import InputError
from sdckit.tables.argus.write import table_status
from sdckit.tables.table import Table


def _table(seed: int = 1) -> Table:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"region": rng.choice(["N", "S", "E", "W"], 300), "sex": rng.choice(["M", "F"], 300)})
    return Table.from_microdata(df, ["region", "sex"])


def test_status_mapping_follows_the_code_lists():
    # hand-built from CL_CONF_STATUS v1.3 / CL_OBS_STATUS v2.2 (see the module table)
    conf, obs = sdmx_status(["S", "U", "M", "C", "R", "Z", "P"])
    assert list(conf) == ["F", "A", "D", "F", "F", "F", "F"]
    assert list(obs) == ["A", "Q", "Q", "E", "E", "A", "A"]
    conf, _ = sdmx_status(["U", "U", "S"], primary_code=["O", "T", "A"])
    assert list(conf) == ["O", "T", "F"]
    with pytest.raises(InputError, match="not a CL_CONF_STATUS primary code"):
        sdmx_status(["U"], primary_code="F")
    with pytest.raises(InputError, match="not a tau-Argus cell status"):
        sdmx_status(["x"])


@given(st.integers(0, 2**32 - 1), st.floats(0.05, 0.6))
def test_every_protected_cell_is_flagged_and_reads_back(tmp_path_factory, seed, share):
    rng = np.random.default_rng(seed)
    t = _table(seed % 7)
    primary = rng.random(t.n_cells) < share
    secondary = ~primary & (rng.random(t.n_cells) < share)
    status = table_status(t, primary=primary, suppressed=secondary)
    path = tmp_path_factory.mktemp("sdmx") / "t.csv"
    write_sdmx_csv(t, status, path)
    back = read_sdmx_csv(path)
    f = back.frame
    suppressed = np.isin(status, ["U", "M"])
    # 100% of suppressed cells: a confidentiality code other than F, and no value
    assert (f["CONF_STATUS"].to_numpy()[suppressed] != "F").all()
    assert set(f["CONF_STATUS"]) <= set(CONF_STATUS)
    assert f["OBS_VALUE"].isna().to_numpy()[suppressed].all()
    np.testing.assert_array_equal(f["OBS_VALUE"].to_numpy()[~suppressed], t.value[~suppressed])
    assert list(back.dims) == ["region", "sex"]


def test_perturbed_cells_carry_codes_and_pysdmx_reads_the_same(tmp_path):
    pysdmx_io = pytest.importorskip("pysdmx.io")
    t = _table()
    noisy = t.value + np.where(np.arange(t.n_cells) % 2 == 0, 1.0, -1.0)
    status = table_status(t, kind="ckm")
    path = write_sdmx_csv(t, status, tmp_path / "ckm.csv", values=noisy, structure_path=tmp_path / "dsd.xml")
    ours = read_sdmx_csv(path).frame
    assert (ours["CONF_STATUS"] == "F").all() and (ours["OBS_STATUS"] == "E").all()
    ds = pysdmx_io.read_sdmx(path).data[0]
    theirs = ds.data
    np.testing.assert_array_equal(theirs["OBS_VALUE"].astype(float).to_numpy(), noisy)
    assert list(theirs["CONF_STATUS"]) == list(ours["CONF_STATUS"])
    assert list(theirs["OBS_STATUS"]) == list(ours["OBS_STATUS"])
    assert str(ds.short_urn) == "Dataflow=SDCKIT:TABLE(1.0.0)"


def test_structure_is_valid_sdmx_ml(tmp_path):
    pytest.importorskip("xmltodict")  # pysdmx's xml extra
    from pysdmx.io import read_sdmx

    t = _table()
    write_sdmx_csv(t, table_status(t), tmp_path / "t.csv", structure_path=tmp_path / "dsd.xml")
    msg = read_sdmx(tmp_path / "dsd.xml", validate=True)
    ids = {s.id for s in msg.structures}
    assert {"CL_REGION", "CL_SEX", "CL_CONF_STATUS", "CL_OBS_STATUS", "DSD_TABLE"} <= ids


def test_read_as_table_input(tmp_path):
    t = _table()
    write_sdmx_csv(t, table_status(t), tmp_path / "t.csv")
    back = read_sdmx_csv(tmp_path / "t.csv").to_table()
    np.testing.assert_array_equal(back.to_frame().set_index(["region", "sex"])["value"].sort_index(),
                                  t.to_frame().set_index(["region", "sex"])["value"].sort_index())
    status = table_status(t, primary=t.freq < 40)
    write_sdmx_csv(t, status, tmp_path / "s.csv")
    with pytest.raises(InputError, match="no OBS_VALUE"):
        read_sdmx_csv(tmp_path / "s.csv").to_table()


def test_not_sdmx_is_refused(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text("a,b\n1,2\n")
    with pytest.raises(InputError, match="STRUCTURE"):
        read_sdmx_csv(p)
