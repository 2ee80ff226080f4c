"""A cell-key table release lists the p-table it used, whichever form the spec gives it in: as
``ptable = {D, V, js}`` (or a file), or as the registered method's declared ``D``, ``V``, ``js``
(or ``ptable_file``), which the listed settings used to leave out."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from sdckit.params import step_params
from sdckit.report.table_release import release_table_spec
from sdckit.tables.ckm import PTable
from sdckit.tables.registry import table_method_class

BASE = """
[input]
microdata = "m.csv"
[table]
dimensions = ["r", "s"]
[protection]
method = "ckm"
key = "Key"
{protection}
[output]
folder = "release"
"""


@pytest.fixture
def folder(tmp_path):
    g = np.random.default_rng(11)
    pd.DataFrame({"r": g.choice(list("abc"), 300), "s": g.choice(list("xy"), 300),
                  "Key": g.random(300)}).to_csv(tmp_path / "m.csv", index=False)
    return tmp_path


def _listed(folder, protection: str) -> dict:
    spec = folder / "rel.toml"
    spec.write_text(BASE.format(protection=protection), encoding="utf-8")
    release_table_spec(spec, overwrite=True)
    cert = json.loads((folder / "release" / "certificate.json").read_text(encoding="utf-8"))
    (entry,) = cert["tables"]
    assert entry["method"] == "ckm"
    return entry["params"]


def test_declared_d_v_js_are_listed(folder):
    params = _listed(folder, "D = 3\nV = 1.5\njs = 1")
    assert params["D"] == 3 and params["V"] == 1.5 and params["js"] == 1 and params["key"] == "Key"
    assert "ptable" not in params


def test_the_declarations_defaults_are_listed_where_the_spec_gives_only_d(folder):
    defaults = {p.name: p.default for p in step_params(table_method_class("ckm"))}  # the declaration
    params = _listed(folder, "D = 4")
    assert (params["D"], params["V"], params["js"]) == (4, defaults["V"], defaults["js"])


def test_a_ptable_table_is_listed_as_given(folder):
    params = _listed(folder, "ptable = {D = 3, V = 1.5, js = 1}")
    assert params["ptable"] == {"D": 3, "V": 1.5, "js": 1}
    assert not {"D", "V", "js"} & set(params)


def test_a_declared_ptable_file_is_listed_by_its_name_only(folder):
    (folder / "tables").mkdir()
    path = folder / "tables" / "ptab.txt"
    path.write_text(PTable.generate(3, 1.5, 1).to_text(), encoding="utf-8")
    params = _listed(folder, 'ptable_file = "tables/ptab.txt"')
    assert params["ptable_file"] == "ptab.txt"
    assert not {"D", "V", "js", "ptable"} & set(params)
    assert str(folder) not in (folder / "release" / "certificate.json").read_text(encoding="utf-8")
