"""Operational risk check: rare records followed into the release (the paper's worked example)."""

import numpy as np
import pandas as pd
import pytest

from sdckit import InputError, Microdata
from sdckit.risk.tracking import track_records

QUERY = "sex == 2 and phd == 1 and age < 31"


def employees():
    """Section 6's situation by hand: record 7997 is the one young female PhD; in the release
    she became a man (her row now says sex 1, age 31.97), and record 12522 now fits her
    description with an income of 50,000."""
    orig = pd.DataFrame({"age": [30.79517, 31.5, 45.0, 52.0], "sex": [2, 2, 1, 1], "phd": [1, 1, 0, 1],
                         "wageinc": [100000, 50000, 80000, 120000]}, index=[7997, 12522, 3, 4])
    rel = orig.copy()
    rel.loc[7997, ["age", "sex"]] = [31.9746, 1]
    rel.loc[12522, "age"] = 30.5725
    return orig, rel


def test_paper_worked_example():
    orig, rel = employees()
    rep = track_records(orig, rel, queries=[QUERY], variables=["age", "sex", "phd", "wageinc"])
    t = rep.targets[0]
    assert t.original_rows == (7997,) and t.released_rows == (12522,)
    assert t.still_exist and t.original_among_released == ()
    rec = t.records[0]
    assert rec.status == "changed" and rec.changed == ("age", "sex")
    assert rec.now["sex"] == 1 and rec.now["age"] == pytest.approx(31.9746)
    assert rec.original["wageinc"] == 100000 and rec.still_matches is False
    # nearest released record to her original values, by hand: standardised distances (sd with
    # n - 1 of the original columns; sex and phd as one standardised dummy each)
    sd = orig.std(ddof=1)
    d = np.sqrt((((rel - orig.loc[7997]) / sd) ** 2).sum(axis=1))
    assert rec.nearest_distance == pytest.approx(d.min())
    assert rec.nearest_row == d.idxmin()


def test_suppressed_record_and_rows_by_id():
    orig, rel = employees()
    rel.loc[7997] = np.nan
    rep = track_records(orig, rel, queries=[QUERY], rows=[4])
    rec = rep.targets[0].records[0]
    assert rec.status == "suppressed" and set(rec.changed) == set(orig.columns)
    assert rep.targets[1].records[0].status == "unchanged"
    assert rep.targets[1].records[0].nearest_distance == pytest.approx(0.0)
    assert rep.targets[1].records[0].nearest_is_self


def test_key_unique_records_left_unchanged_by_hand():
    orig = pd.DataFrame({"a": [1, 1, 2, 3, 4], "b": ["x", "x", "y", "y", "z"], "v": [1.0, 2, 3, 4, 5]})
    rel = orig.copy()
    rel.loc[2, "v"] = 9.0    # unique (2, y): keys kept, value changed
    rel.loc[3, "a"] = 2      # unique (3, y): key changed
    # uniques on (a, b): rows 2, 3, 4; unchanged completely: row 4; keys unchanged: rows 2, 4
    rep = track_records(Microdata(orig, key_vars=["a", "b"]), Microdata(rel, key_vars=["a", "b"]))
    assert rep.n_key_unique == 3
    assert rep.unique_unchanged_rows == (4,)
    assert rep.unique_keys_unchanged_rows == (2, 4)


def test_public_html_holds_no_original_values():
    orig, rel = employees()
    orig.loc[7997, "wageinc"] = 123457  # a value found nowhere in the release
    html = track_records(orig, rel, queries=[QUERY]).report_html()
    assert "123457" not in html
    assert "sex=1" in html


def test_bad_input():
    orig, rel = employees()
    with pytest.raises(InputError, match="cannot be evaluated"):
        track_records(orig, rel, queries=["sexx == 2"])
    with pytest.raises(InputError, match="row id 99"):
        track_records(orig, rel, rows=[99])
    with pytest.raises(InputError, match="same records in the same order"):
        track_records(orig, rel.iloc[:3])
