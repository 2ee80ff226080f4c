"""DDI-Codebook 2.5: written codebooks are valid against the shipped schema (lxml), and a
codebook read back keeps every label, value label, missing code and role."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdckit.catalogue.ddi import (
    SCHEMA_DIR,
    DdiCodebook,
    DdiMaterial,
    DdiVariable,
    codebook_from_microdata,
    ddi_xml,
    read_ddi,
    validate_ddi,
    write_ddi,
)
from sdckit.errors import InputError
from sdckit.microdata import DatasetMeta, Microdata

pytest.importorskip("lxml")


def _microdata() -> Microdata:
    df = pd.DataFrame({"region": [1, 2, 3, 1, -9], "sex": [1, 2, 1, 2, 1],
                       "income": [1.5, 2.0, 3.1, np.nan, 4.0], "w": [1.0, 2, 3, 4, 5]})
    meta = DatasetMeta(column_labels={"region": "Region of residence", "sex": "Sex & gender <self-reported>"},
                       value_labels={"region": {1: "North", 2: "South", 3: "East", -9: "Refused"},
                                     "sex": {1: "Male", 2: "Female"}},
                       missing_ranges={"region": [{"lo": -9, "hi": -9}], "income": [{"lo": 990, "hi": 999}]})
    return Microdata(df, meta=meta, key_vars=["region", "sex"], numeric_vars=["income"], weight="w")


def test_schema_and_licence_are_shipped():
    assert (SCHEMA_DIR / "codebook.xsd").is_file()
    assert "GNU LESSER GENERAL PUBLIC LICENSE" in (SCHEMA_DIR / "LICENSE").read_text()
    assert (SCHEMA_DIR / "NOTICE").is_file()


def test_written_codebook_is_valid_and_reads_back(tmp_path):
    md = _microdata()
    cb = codebook_from_microdata(md, title="Test survey", data_file="released.csv",
                                 treatment={"region": ["PRAM of region."]},
                                 materials=[DdiMaterial("pram_region.csv", "PRAM matrix of region")],
                                 risk_statement="Passed: k_anonymity = 3 met.")
    assert validate_ddi(ddi_xml(cb)) == []
    path = write_ddi(cb, tmp_path / "codebook.xml")
    assert validate_ddi(path) == []
    back = read_ddi(path)
    assert back == cb
    assert back.column_labels() == {"region": "Region of residence", "sex": "Sex & gender <self-reported>"}
    assert back.value_labels() == {"region": {1: "North", 2: "South", 3: "East", -9: "Refused"},
                                   "sex": {1: "Male", 2: "Female"}}
    assert back.missing_ranges() == {"region": [{"lo": -9, "hi": -9}], "income": [{"lo": 990, "hi": 999}]}
    assert back.roles() == {"key_vars": ("region", "sex"), "numeric_vars": ("income",), "weight": "w"}
    assert back.risk_statement == "Passed: k_anonymity = 3 met."
    assert back.materials[0].uri == "pram_region.csv"


def test_invalid_codebook_is_reported():
    """The validator is not a rubber stamp: an element out of the schema's order fails."""
    good = ddi_xml(DdiCodebook(title="t", variables=(DdiVariable("a", label="A"),)))
    bad = good.replace(b"<stdyDscr>", b"<dataDscr /><stdyDscr>", 1)
    assert validate_ddi(good) == []
    assert validate_ddi(bad)


def test_reads_a_third_party_codebook(tmp_path):
    """A hand-written DDI 2.5 file in the IHSN/Nesstar style: catgry missing="Y", invalrng
    items, varFormat, wgt="wgt"."""
    text = """<?xml version="1.0" encoding="UTF-8"?>
<codeBook xmlns="ddi:codebook:2_5" version="2.5">
 <stdyDscr><citation><titlStmt><titl>Labour force survey</titl></titlStmt></citation></stdyDscr>
 <fileDscr ID="F1"><fileTxt><fileName>lfs.csv</fileName><dimensns><caseQnty>120</caseQnty></dimensns></fileTxt></fileDscr>
 <dataDscr>
  <var ID="V1" name="emp" files="F1" intrvl="discrete">
   <labl>Employment status</labl>
   <invalrng><item VALUE="9"/></invalrng>
   <catgry><catValu>1</catValu><labl>Employed</labl></catgry>
   <catgry><catValu>2</catValu><labl>Unemployed</labl></catgry>
   <catgry missing="Y"><catValu>8</catValu><labl>Don't know</labl></catgry>
   <varFormat type="numeric" schema="other"/>
  </var>
  <var ID="V2" name="wt" files="F1" intrvl="contin" wgt="wgt"><labl>Person weight</labl>
   <varFormat type="numeric" schema="other"/></var>
  <var ID="V3" name="region" files="F1"><labl>Region</labl>
   <catgry><catValu>01</catValu><labl>North</labl></catgry><varFormat type="character" schema="other"/></var>
 </dataDscr>
</codeBook>"""
    p = tmp_path / "lfs.xml"
    p.write_text(text)
    assert validate_ddi(p) == []
    cb = read_ddi(p)
    assert cb.title == "Labour force survey" and cb.data_file == "lfs.csv" and cb.n_records == 120
    emp = cb.variable("emp")
    assert emp.label == "Employment status" and set(emp.missing) == {"8", "9"}
    assert cb.value_labels()["emp"] == {1: "Employed", 2: "Unemployed", 8: "Don't know"}
    assert cb.value_labels()["region"] == {"01": "North"}  # character codes stay text
    assert cb.roles() == {"weight": "wt"}
    assert sorted(cb.na_values()) == [8, 9]


@pytest.mark.parametrize("text, message", [
    ("<notxml", "well-formed"),
    ("<?xml version='1.0'?><!DOCTYPE x [<!ENTITY a 'b'>]><codeBook/>", "DOCTYPE"),
    ("<study/>", "<codeBook>"),
])
def test_bad_files_are_refused_in_one_line(tmp_path, text, message):
    p = tmp_path / "bad.xml"
    p.write_text(text)
    with pytest.raises(InputError, match=message) as info:
        read_ddi(p)
    assert "\n" not in str(info.value)


_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cc", "Cs", "Zl", "Zp")),
                min_size=1, max_size=12).map(str.strip).filter(bool)
_name = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,8}", fullmatch=True)


@given(st.lists(st.tuples(_name, _text, st.dictionaries(st.integers(-99, 999).map(str), _text, max_size=5),
                          st.lists(st.integers(-99, -1).map(str), max_size=3, unique=True)),
                min_size=1, max_size=5, unique_by=lambda t: t[0]))
def test_round_trip_keeps_every_label_and_missing_code(variables):
    """Property: write then read gives back every variable label, value label and missing code."""
    cb = DdiCodebook(title="t", variables=tuple(
        DdiVariable(name, label=label, value_labels=labels, missing=tuple(missing), representation="numeric")
        for name, label, labels, missing in variables))
    xml = ddi_xml(cb)
    back = read_ddi_bytes(xml)
    assert back.variables == cb.variables


def read_ddi_bytes(xml: bytes) -> DdiCodebook:
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "c.xml"
        p.write_bytes(xml)
        return read_ddi(p)
