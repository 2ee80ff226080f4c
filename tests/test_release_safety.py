"""Nothing lost, nothing leaked: folders switched in whole, internal files apart, rows shuffled,
identifiers stopped, inputs never written over."""

from __future__ import annotations

import hashlib
import json
import os

import numpy as np
import pandas as pd
import pytest

from sdckit import InputError, Microdata
from sdckit.io import read_microdata
from sdckit.io.atomic import RELEASE_MARK, clean_stale, staged_folder
from sdckit.masking.recode import Recode
from sdckit.masking.remove import RemoveVariables
from sdckit.release import Release
from sdckit.risk.identifiers import (identifier_check, linkage_all_columns, name_says_identifier,
                                     undeclared_scan)

SEED = 4242424242


def persons(tmp_path, n=200, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"Person ID": np.arange(n) + 1000, "region": rng.integers(1, 4, n),
                       "sex": rng.integers(1, 3, n), "age": rng.integers(1, 9, n),
                       "job": rng.integers(1, 6, n)})
    path = tmp_path / "persons.csv"
    df.to_csv(path, index=False)
    return path


def sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_release_is_written_whole_with_internal_files_apart(tmp_path):
    path = persons(tmp_path)
    md = read_microdata(path, key_vars=["region", "sex"])
    run = Release(md, [RemoveVariables(["Person ID"])], {"k_anonymity": 2}, rng=SEED).run()
    assert run.passed
    out = tmp_path / "rel"
    paths = run.write(out)
    public = sorted(p.name for p in out.iterdir())
    internal_dir = tmp_path / "rel-internal"
    assert "internal_report.json" not in public and not any("internal" in n for n in public)
    assert (internal_dir / "internal_report.json").exists() and (internal_dir / "row_order.csv").exists()
    assert paths["internal_json"].parent == internal_dir
    # no staging folder or temporary file is left beside the release
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
    # the seed, in decimal and hex, is in no public file
    for f in out.iterdir():
        text = f.read_bytes().decode("utf-8", "replace")
        assert str(SEED) not in text and f"{SEED:x}" not in text.lower(), f.name
    assert str(SEED) in (internal_dir / "internal_report.json").read_text()


def test_an_existing_release_needs_overwrite_and_is_kept_until_the_switch(tmp_path):
    path = persons(tmp_path)
    md = read_microdata(path, key_vars=["region", "sex"])
    run = Release(md, [RemoveVariables(["Person ID"])], rng=SEED).run()
    out = tmp_path / "rel"
    run.write(out)
    before = sha(out / "released.csv")
    with pytest.raises(InputError, match="a release is already there; pass --overwrite"):
        run.write(out)
    assert sha(out / "released.csv") == before
    run2 = Release(md, [RemoveVariables(["Person ID"])], rng=SEED + 1).run()
    run2.write(out, overwrite=True)
    assert sha(out / "released.csv") != before  # another row order: the new release
    assert (out / RELEASE_MARK).exists()


def test_a_folder_sdckit_did_not_write_is_never_replaced(tmp_path):
    path = persons(tmp_path)
    md = read_microdata(path, key_vars=["region", "sex"])
    run = Release(md, [RemoveVariables(["Person ID"])], rng=SEED).run()
    other = tmp_path / "documents"
    other.mkdir()
    (other / "thesis.txt").write_text("precious")
    with pytest.raises(InputError, match="holds files sdckit did not write"):
        run.write(other, overwrite=True)
    assert (other / "thesis.txt").read_text() == "precious"


def test_a_failed_write_leaves_the_previous_release_and_no_staging(tmp_path):
    target = tmp_path / "rel"
    with staged_folder(target) as stage:
        (stage / "a.csv").write_text("1\n")
    with pytest.raises(RuntimeError):
        with staged_folder(target, overwrite=True) as stage:
            (stage / "a.csv").write_text("2\n")
            raise RuntimeError("killed half-way")
    assert (target / "a.csv").read_text() == "1\n"
    assert [p.name for p in tmp_path.iterdir()] == ["rel"]


def test_stale_staging_folders_and_temp_files_of_dead_runs_are_removed(tmp_path):
    # a pid that is certainly not running: beyond the kernel's pid range
    dead = 4_194_999
    (tmp_path / f".rel.staging-{dead}-abc").mkdir()
    (tmp_path / f".rel.staging-{dead}-abc" / "released.csv").write_text("x")
    (tmp_path / f".released.csv.{dead}-xyz.tmp").write_text("x")
    (tmp_path / f".released.csv.{os.getpid()}-mine.tmp").write_text("x")  # our own: kept
    assert clean_stale(tmp_path) == 2
    assert [p.name for p in tmp_path.iterdir()] == [f".released.csv.{os.getpid()}-mine.tmp"]


def test_rows_are_shuffled_by_default_and_the_order_is_internal(tmp_path):
    path = persons(tmp_path, n=300)
    md = read_microdata(path, key_vars=["region", "sex"])
    run = Release(md, [RemoveVariables(["Person ID"])], {"k_anonymity": 2}, rng=SEED).run()
    paths = run.write(tmp_path / "rel")
    released = pd.read_csv(paths["data"])
    original = pd.read_csv(path).drop(columns="Person ID")
    assert not released.equals(original)  # order changed
    order = pd.read_csv(tmp_path / "rel-internal" / "row_order.csv")
    assert sorted(order["input_row"]) == list(range(300))
    # released row i is input row order[i]
    pd.testing.assert_frame_equal(released, original.iloc[order["input_row"]].reset_index(drop=True))
    # the same seed gives the same order; keep_order keeps the input's
    paths2 = Release(md, [RemoveVariables(["Person ID"])], rng=SEED).run().write(tmp_path / "rel2")
    assert sha(paths2["data"]) == sha(paths["data"])
    kept = Release(md, [RemoveVariables(["Person ID"])], rng=SEED).run().write(tmp_path / "rel3", keep_order=True)
    pd.testing.assert_frame_equal(pd.read_csv(kept["data"]), original)
    assert not (tmp_path / "rel3-internal" / "row_order.csv").exists()


def test_identifier_columns_fail_the_gate_unless_removed_masked_or_allowed(tmp_path):
    path = persons(tmp_path)
    md = read_microdata(path, key_vars=["region", "sex"])
    run = Release(md, [], {"k_anonymity": 2}, rng=SEED).run()
    assert not run.passed
    fail = next(o for o in run.gate if o.name == "allow_identifiers")
    assert not fail.passed and "'Person ID'" in fail.detail and "allow_identifiers" in fail.detail
    assert "\n" not in fail.detail
    allowed = Release(md, [], {"k_anonymity": 2, "allow_identifiers": ["Person ID"]}, rng=SEED).run()
    assert allowed.passed
    removed = Release(md, [RemoveVariables(["Person ID"])], {"k_anonymity": 2}, rng=SEED).run()
    assert removed.passed


def test_identifier_check_by_hand():
    n = 100
    df = pd.DataFrame({"serial": np.arange(n), "email": ["a"] * n, "hhid": np.arange(n) % 10,
                       "income": np.linspace(1, 2, n), "sex": [1, 2] * 50})
    md = Microdata(df)
    masked = md.with_data(df.assign(income=df["income"] + 0.5))
    flagged = {f["column"]: f for f in identifier_check(md, masked)}
    # serial: all 100 values distinct; email and hhid: named like identifiers; income: distinct but masked
    assert set(flagged) == {"serial", "email", "hhid", "income"}
    assert flagged["income"]["masked"] and not flagged["serial"]["masked"]
    assert flagged["serial"]["nearly_unique"] and not flagged["email"]["nearly_unique"]
    assert name_says_identifier("Date of Birth") == "date of birth"
    assert name_says_identifier("PersonID") == "id" and name_says_identifier("Region") is None
    assert name_says_identifier("Country of Birth") is None


def test_linkage_on_all_columns_by_hand():
    # 6 records; after masking record 0 takes record 1's values.
    orig = pd.DataFrame({"a": [1, 1, 2, 2, 3, 4], "b": [1, 2, 1, 1, 1, 1]})
    rel = orig.copy()
    rel.loc[0, ["a", "b"]] = [1, 2]
    o, r = Microdata(orig), Microdata(rel)
    lk = linkage_all_columns(o, r)
    # by hand: record 0's original (1,1) matches no released record -> 0; record 1 (1,2) matches
    # released 0 and 1 -> 1/2; records 2, 3 (2,1) match 2 and 3 -> 1/2 each; 4 and 5 unique -> 1 each
    assert lk["expected_correct_links"] == pytest.approx(0 + 0.5 + 0.5 + 0.5 + 1 + 1)
    assert lk["sample_uniques"] == 2  # released (3,1) and (4,1)
    same = linkage_all_columns(o, o)
    # before masking: (1,1) 1, (1,2) 1, (2,1) 1/2 + 1/2, (3,1) 1, (4,1) 1 -> 5
    assert same["expected_correct_links"] == pytest.approx(5.0)


def test_undeclared_scan_by_hand():
    df = pd.DataFrame({"k": [1, 1, 1, 1, 2, 2], "x": [1, 2, 3, 4, 5, 5], "y": [1, 1, 1, 1, 1, 1]})
    scan = undeclared_scan(Microdata(df, key_vars=["k"]))
    # keys alone: no uniques; with x: records 0-3 are unique -> adds 4; y adds nothing
    assert scan[0] == {"column": "x", "n_categories": 5, "uniques_with": 4, "added_uniques": 4}
    assert scan[1]["column"] == "y" and scan[1]["added_uniques"] == 0


def test_links_and_symlinks_to_the_input_are_refused(tmp_path):
    path = persons(tmp_path)
    digest = sha(path)
    md = read_microdata(path, key_vars=["region", "sex"])
    run = Release(md, [RemoveVariables(["Person ID"])], rng=SEED).run()
    from sdckit.io.files import write_data

    for kind in ("symlink", "hardlink"):
        link = tmp_path / f"{kind}.csv"
        (os.symlink if kind == "symlink" else os.link)(path, link)
        with pytest.raises(InputError, match="refusing to write over the input file persons.csv"):
            write_data(run.released, link)
    assert sha(path) == digest


def test_disclosure_figures_are_in_the_public_data(tmp_path):
    path = persons(tmp_path, n=400)
    md = read_microdata(path, key_vars=["region", "sex"])
    run = Release(md, [RemoveVariables(["Person ID"]), Recode("age", {"young": [1, 2, 3, 4], "old": [5, 6, 7, 8]})],
                  {"k_anonymity": 2, "max_linkage_all_columns": 1.0}, rng=SEED).run()
    d = run.disclosure()
    assert d["linkage_all_columns"]["after"]["columns"] == ["region", "sex", "age", "job"]
    before = d["linkage_all_columns"]["before"]["correct_link_share"]
    after = d["linkage_all_columns"]["after"]["correct_link_share"]
    assert 0 < after < before <= 1
    out = next(o for o in run.gate if o.name == "max_linkage_all_columns")
    assert out.passed and out.value["correct_link_share"] == pytest.approx(after)
    json.dumps(d)
