"""Nothing lost, nothing leaked: folders switched in whole, internal files apart, rows shuffled,
identifiers stopped, inputs never written over; the pair of folders switched as one unit (a kill
at every switch point leaves the old pair or the new one), clean-up by sdckit's journal only,
one writer at a time, and folders a release must never replace refused."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sdckit import InputError, Microdata
from sdckit.io import read_microdata
from sdckit.io.atomic import (
    FILE_POINTS,
    KILL_EXIT,
    RELEASE_MARK,
    SWITCH_POINTS,
    atomic_write_text,
    clean_stale,
    staged_folder,
)
from sdckit.masking.recode import Recode
from sdckit.masking.remove import RemoveVariables
from sdckit.release import Release
from sdckit.risk.identifiers import (
    identifier_check,
    linkage_all_columns,
    name_says_identifier,
    undeclared_scan,
)
from tests.release_helpers import (
    LOOK_ALIKE_FILES,
    keypair,
    mark_id,
    plant,
    planted_snapshot,
    run_id,
    small_run,
    snapshot,
    write_in_child,
)

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
    run = Release(md, [RemoveVariables(["Person ID"])], {"k_anonymity": 2}, rng=SEED).run()
    out = tmp_path / "rel"
    run.write(out)
    before = sha(out / "released.csv")
    with pytest.raises(InputError, match="a release is already there; pass --overwrite"):
        run.write(out)
    assert sha(out / "released.csv") == before
    run2 = Release(md, [RemoveVariables(["Person ID"])], {"k_anonymity": 2}, rng=SEED + 1).run()
    run2.write(out, overwrite=True)
    assert sha(out / "released.csv") != before  # another row order: the new release
    assert (out / RELEASE_MARK).exists()


def test_a_folder_sdckit_did_not_write_is_never_replaced(tmp_path):
    path = persons(tmp_path)
    md = read_microdata(path, key_vars=["region", "sex"])
    run = Release(md, [RemoveVariables(["Person ID"])], {"k_anonymity": 2}, rng=SEED).run()
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


def test_look_alike_names_of_dead_pids_are_never_deleted(tmp_path):
    """The old clean-up deleted any entry named like sdckit's temporary files whose digits were
    not a live pid (folders recursively). Now only what a journal of sdckit lists goes."""
    before = plant(tmp_path)
    assert clean_stale(tmp_path) == 0
    with staged_folder(tmp_path / "rel") as stage:  # a writer beside them, which cleans first
        (stage / "a.csv").write_text("1\n")
    atomic_write_text(tmp_path / "out.csv", "x\n")
    assert planted_snapshot(tmp_path) == before
    assert (tmp_path / ".backup.2019.tmp" / "deep" / "data.csv").read_bytes() == b"a,b\n1,2\n"


@pytest.mark.parametrize("point", FILE_POINTS)
def test_a_file_write_killed_at_any_moment_is_cleaned_by_its_journal_only(tmp_path, point):
    before = plant(tmp_path)
    (tmp_path / "out.csv").write_text("old\n")
    code = write_in_child(lambda: atomic_write_text(tmp_path / "out.csv", "new\n"), kill_at=point)
    assert code == KILL_EXIT
    # the target is the old file or the new one, never a part of one
    assert (tmp_path / "out.csv").read_text() == ("new\n" if point == "file_replaced" else "old\n")
    planted_top = {n.split("/")[0] for n in LOOK_ALIKE_FILES}
    left = {p.name for p in tmp_path.iterdir()} - {"out.csv"} - planted_top
    assert len([n for n in left if n.endswith(".journal")]) == 1  # the killed run's journal is there
    assert clean_stale(tmp_path) == (1 if point == "file_written" else 0)
    assert {p.name for p in tmp_path.iterdir()} == {"out.csv"} | planted_top
    assert planted_snapshot(tmp_path) == before


def test_a_journal_of_a_live_process_is_left_alone(tmp_path):
    """A write in progress (its process runs) keeps its temporary file."""
    from sdckit.io.atomic import atomic_path

    with atomic_path(tmp_path / "out.csv") as tmp:
        tmp.write_text("partial")
        assert clean_stale(tmp_path) == 0 and tmp.exists()
    assert (tmp_path / "out.csv").read_text() == "partial"
    assert [p.name for p in tmp_path.iterdir()] == ["out.csv"]


def test_a_journal_cannot_name_a_file_without_its_token(tmp_path):
    """A journal lists entries; only plain names in its folder that carry its own token go."""
    token = "ab" * 16
    (tmp_path / "precious.csv").write_text("mine")
    (tmp_path / f".sdckit-{token}.journal").write_text(json.dumps({
        "format": "sdckit-journal/1", "kind": "file", "token": token, "pid": 4_194_999,
        "entries": ["precious.csv", "../outside.txt", f"../x{token}", f".out.sdckit-{token}.tmp"]}))
    (tmp_path.parent / f"x{token}").write_text("outside")
    (tmp_path / f".out.sdckit-{token}.tmp").write_text("temp")
    assert clean_stale(tmp_path) == 1
    assert (tmp_path / "precious.csv").read_text() == "mine"
    assert (tmp_path.parent / f"x{token}").read_text() == "outside"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["precious.csv"]


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
    paths2 = Release(md, [RemoveVariables(["Person ID"])], {"k_anonymity": 2}, rng=SEED).run().write(tmp_path / "rel2")
    assert sha(paths2["data"]) == sha(paths["data"])
    kept = Release(md, [RemoveVariables(["Person ID"])], {"k_anonymity": 2}, rng=SEED).run().write(tmp_path / "rel3", keep_order=True)
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
    run = Release(md, [RemoveVariables(["Person ID"])], {"k_anonymity": 2}, rng=SEED).run()
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


# --------------------------------------------------------------------------- one switch for the pair

_ASIDES = ("internal_aside", "public_aside")
#: (switch point, scenario, renameat2 exchange used); the asides happen only when a previous
#: release is renamed aside (no exchange)
KILL_CASES = ([(p, "new", True) for p in SWITCH_POINTS if p not in _ASIDES]
              + [(p, "overwrite", True) for p in SWITCH_POINTS if p not in _ASIDES]
              + [(p, "overwrite", False) for p in SWITCH_POINTS])


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """Release A written and signed once (copied for each case); release B to be switched in."""
    from tests.release_helpers import persons as small_persons

    base = tmp_path_factory.mktemp("pair")
    data = small_persons(base)
    run_a, run_b = small_run(data, 11), small_run(data, 12)
    key, pub = keypair(base / "keys")
    template = base / "template"
    run_a.write(template / "rel", signing_key=key)
    return {"a": run_a, "b": run_b, "key": key, "pub": pub, "template": template,
            "a_id": run_id(template / "rel")}


def _leftovers(work):
    planted = {n.split("/")[0] for n in LOOK_ALIKE_FILES}
    return sorted(p.name for p in work.iterdir() if p.name not in planted | {"rel", "rel-internal"})


@pytest.mark.parametrize("point,scenario,exchange", KILL_CASES,
                         ids=[f"{p}-{s}-{'exchange' if e else 'renames'}" for p, s, e in KILL_CASES])
def test_a_kill_at_every_switch_point_leaves_the_old_pair_or_the_new_one(pair, tmp_path, point, scenario, exchange):
    import shutil

    from sdckit.report.verify import verify_release

    work = tmp_path / "work"
    if scenario == "overwrite":
        shutil.copytree(pair["template"], work, symlinks=True)
    else:
        work.mkdir()
    before = plant(work)
    out, intl = work / "rel", work / "rel-internal"
    code = write_in_child(lambda: pair["b"].write(out, overwrite=True, signing_key=pair["key"]),
                          kill_at=point, no_exchange=not exchange)
    assert code == KILL_EXIT, f"the write did not reach {point}"
    committed = SWITCH_POINTS.index(point) >= SWITCH_POINTS.index("committed")
    if point == "internal_switched":  # the one moment the folders on disk mix two runs
        assert mark_id(intl) != mark_id(out)
        if scenario == "overwrite":  # verify without the journal's help names the mix
            mixed = verify_release(out, key=pair["pub"], recover=False)
            assert not mixed.ok and any("mixes two runs" in p for p in mixed.problems)
    # ``sdckit verify`` finishes the interrupted switch by its journal, then checks the pair
    if scenario == "new" and not committed:
        with pytest.raises(InputError, match="no such release folder"):
            verify_release(out, key=pair["pub"])
    else:
        res = verify_release(out, key=pair["pub"])
        assert res.ok, res.problems
        assert mark_id(out) == mark_id(intl) == run_id(out)
    if committed:  # rolled forward: the new pair
        assert run_id(out) is not None and run_id(out) != pair["a_id"]
    elif scenario == "overwrite":  # rolled back: the old pair
        assert run_id(out) == pair["a_id"] == mark_id(intl)
    else:  # rolled back, and nothing was there before
        assert not out.exists() and not intl.exists()
    assert _leftovers(work) == []  # no staging folder, journal, lock or temporary file
    assert planted_snapshot(work) == before  # the user's look-alike files are untouched


@pytest.mark.parametrize("point", SWITCH_POINTS)
def test_the_next_run_finishes_a_switch_killed_at_any_point(pair, tmp_path, point):
    """Without verify: the next release run on the same folders rolls the killed switch back or
    forward first (it takes the killed run's lock, listed in its journal), then writes."""
    import shutil

    from sdckit.report.verify import verify_release

    work = tmp_path / "work"
    shutil.copytree(pair["template"], work, symlinks=True)
    before = plant(work)
    out, intl = work / "rel", work / "rel-internal"
    code = write_in_child(lambda: pair["b"].write(out, overwrite=True, signing_key=pair["key"]),
                          kill_at=point, no_exchange=True)
    assert code == KILL_EXIT
    assert _leftovers(work) != []  # the killed run's journal (and lock or staging) is there
    pair["a"].write(out, overwrite=True, signing_key=pair["key"])
    third = run_id(out)
    assert third not in (None, pair["a_id"]) and mark_id(intl) == third
    assert verify_release(out, key=pair["pub"]).ok
    assert _leftovers(work) == [] and planted_snapshot(work) == before


def test_verify_fails_on_a_pair_from_two_runs(pair, tmp_path):
    """No journal, no kill: an internal folder of another run beside the public one (its seeds
    and row order are not this release's)."""
    import shutil

    from sdckit.report.verify import verify_release

    shutil.copytree(pair["template"], tmp_path / "a")
    pair["b"].write(tmp_path / "b" / "rel", signing_key=pair["key"])
    shutil.rmtree(tmp_path / "a" / "rel-internal")
    shutil.copytree(tmp_path / "b" / "rel-internal", tmp_path / "a" / "rel-internal")
    res = verify_release(tmp_path / "a" / "rel", key=pair["pub"])
    assert not res.ok
    assert any(p.startswith("rel-internal/.sdckit-release: the internal folder belongs to the run") for p in res.problems)
    # the same with the folder named explicitly (sdckit verify DIR --internal OTHER)
    res = verify_release(tmp_path / "a" / "rel", key=pair["pub"], internal=tmp_path / "b" / "rel-internal")
    assert not res.ok and any("mixes two runs" in p for p in res.problems)
    assert verify_release(tmp_path / "b" / "rel", key=pair["pub"], internal=tmp_path / "b" / "rel-internal").ok
    missing = verify_release(tmp_path / "b" / "rel", internal=tmp_path / "nope")
    assert not missing.ok and any("the internal folder is missing" in p for p in missing.problems)


def test_each_folder_names_its_run_by_a_random_id_not_the_seed(pair, tmp_path):
    out = tmp_path / "rel"
    pair["a"].write(out)
    first = run_id(out)
    pair["a"].write(out, overwrite=True)  # the same run object, the same seed: another run id
    second = run_id(out)
    assert first != second and len(second) == 32 and mark_id(tmp_path / "rel-internal") == second
    internal = json.loads((tmp_path / "rel-internal" / "internal_report.json").read_text())
    assert internal["run_id"] == second


# --------------------------------------------------------------------------- the command line

SPEC = '''[input]
path = "persons.csv"
[roles]
key_vars = ["region", "sex", "job"]
[run]
seed = {seed}
[[steps]]
method = "remove"
variables = ["Person ID"]
[[steps]]
method = "pram"
variables = ["job"]
min_diagonal = 0.8
[gate]
k_anonymity = 2
[output]
directory = "{directory}"
{extra}
'''


def _spec(tmp_path, seed=1, directory="rel", extra=""):
    from tests.release_helpers import persons as small_persons

    small_persons(tmp_path)
    spec = tmp_path / "release.toml"
    spec.write_text(SPEC.format(seed=seed, directory=directory, extra=extra))
    return spec


def test_protect_killed_between_the_two_folders_then_verify_sees_one_pair(tmp_path):
    """Through the command line: `sdckit protect --key` ended (as by SIGKILL) after the internal
    folder was switched and before the public one; `sdckit verify --key` rolls the switch
    forward and passes, naming the recovery."""
    import subprocess
    import sys

    key, pub = keypair(tmp_path / "keys")
    spec = _spec(tmp_path)
    env = {**os.environ, "SDCKIT_PROGRESS": "0"}
    cmd = [sys.executable, "-m", "sdckit"]
    first = subprocess.run([*cmd, "protect", str(spec), "--key", str(key)], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr
    old = run_id(tmp_path / "rel")
    spec.write_text(spec.read_text().replace("seed = 1", "seed = 2"))
    killed = subprocess.run([*cmd, "protect", str(spec), "--key", str(key), "--overwrite"], cwd=tmp_path,
                            env={**env, "SDCKIT_TEST_KILL_AT": "internal_switched"}, capture_output=True, text=True,
                            timeout=600)
    assert killed.returncode == KILL_EXIT
    assert mark_id(tmp_path / "rel") == old != mark_id(tmp_path / "rel-internal")  # mixed on disk
    v = subprocess.run([*cmd, "verify", "rel", "--key", str(pub), "--json"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=600)
    assert v.returncode == 0, v.stdout + v.stderr
    doc = json.loads(v.stdout)
    assert doc["ok"] and doc["authenticity"]["checked"] and doc["authenticity"]["ok"]
    assert any("interrupted release switch was finished" in c["check"] for c in doc["checks"])
    assert run_id(tmp_path / "rel") != old and mark_id(tmp_path / "rel-internal") == run_id(tmp_path / "rel")
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


# --------------------------------------------------------------------------- one writer at a time

def _hold_lock_in_child(out):
    """A child process that holds the release lock of ``out`` (inside a staged release, as a
    writer does) until the parent closes the pipe. Returns (pid, write end)."""
    from sdckit.io.atomic import staged_release

    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(ready_r)
        os.close(go_w)
        code = 0
        try:
            with staged_release(out, out.with_name(out.name + "-internal"), overwrite=True) as st:
                (st.public / "x.csv").write_text("1\n")
                os.write(ready_w, b"1")
                os.read(go_r, 1)  # wait for the parent
        except BaseException:  # noqa: BLE001
            code = 3
        os._exit(code)
    os.close(ready_w)
    os.close(go_r)
    assert os.read(ready_r, 1) == b"1"
    os.close(ready_r)
    return pid, go_w


def test_a_second_run_on_the_same_folder_is_refused_while_the_first_writes(tmp_path, monkeypatch, capsys):
    from sdckit.cli import main

    spec = _spec(tmp_path)
    out = tmp_path / "rel"
    pid, go = _hold_lock_in_child(out)
    try:
        monkeypatch.chdir(tmp_path)
        monkeypatch.setenv("SDCKIT_PROGRESS", "0")
        capsys.readouterr()
        code = main(["protect", str(spec)])
        err = capsys.readouterr().err.strip()
    finally:
        os.close(go)
        _, status = os.waitpid(pid, 0)
    assert code == 2
    assert err == (f"error: another sdckit run is writing to rel (pid {pid}); wait for it or choose another folder")
    assert os.waitstatus_to_exitcode(status) == 0 and (out / "x.csv").read_text() == "1\n"  # the first run's
    assert main(["protect", str(spec), "--overwrite"]) == 0  # once it ended, the second may write
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


@pytest.mark.parametrize("content", [
    b'{"format": "sdckit-lock/1", "pid": 4194999, "token": "' + b"cd" * 16 + b'"}',  # dead, in no journal
    b"my own file that happens to have this name\n"])
def test_a_lock_no_journal_of_sdckit_lists_is_never_taken_for_stale(pair, tmp_path, content):
    lock = tmp_path / ".rel.sdckit-lock"
    lock.write_bytes(content)
    with pytest.raises(InputError, match="remove the lock file") as err:
        pair["a"].write(tmp_path / "rel")
    assert "\n" not in str(err.value)
    assert lock.read_bytes() == content  # not deleted
    assert sorted(p.name for p in tmp_path.iterdir()) == [".rel.sdckit-lock"]  # nothing else left


# --------------------------------------------------------------------------- folders never replaced

@pytest.mark.parametrize("where", ["root", "home", "cwd", "cwd-parent", "home-parent"])
def test_a_folder_a_release_must_never_replace_is_refused_in_one_line(tmp_path, monkeypatch, capsys, where):
    from sdckit.cli import main
    from sdckit.release import Release

    home = tmp_path / "home"
    cwd = home / "work"
    cwd.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(cwd)
    directory = {"root": "/", "home": str(home), "cwd": ".", "cwd-parent": "..", "home-parent": str(tmp_path)}[where]
    spec = _spec(cwd, directory=directory)
    monkeypatch.setattr(Release, "run", lambda self: pytest.fail("the release ran before its folder was checked"))
    before, root_before = snapshot(tmp_path), sorted(os.listdir("/"))
    capsys.readouterr()
    code = main(["protect", str(spec)])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and err.startswith("error: output.directory")
    assert "a release replaces its folder whole" in err and "internal error" not in err
    assert snapshot(tmp_path) == before and sorted(os.listdir("/")) == root_before


@pytest.mark.parametrize("directory,internal,fragment", [
    ("outer/rel", "outer", "must not be inside the internal folder"),
    ("rel", "rel/int", "must not be the public folder"),
    ("rel", "rel", "must not be the public folder")])
def test_nested_public_and_internal_folders_are_refused_before_any_work(tmp_path, monkeypatch, capsys,
                                                                        directory, internal, fragment):
    from sdckit.cli import main
    from sdckit.release import Release

    spec = _spec(tmp_path, directory=directory, extra=f'internal_directory = "{internal}"')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(Release, "run", lambda self: pytest.fail("the release ran before its folders were checked"))
    before = snapshot(tmp_path)
    capsys.readouterr()
    assert main(["protect", str(spec)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and fragment in err
    assert snapshot(tmp_path) == before  # no empty folder left behind


def test_release_folders_of_the_root_is_an_input_error_not_an_internal_one():
    from sdckit.release import release_folders
    from sdckit.spec import OutputSpec

    for folder in ("/", "/.", "//"):
        with pytest.raises(InputError, match="root folder"):
            release_folders(OutputSpec(Path(folder)))


def test_a_signing_key_inside_the_output_folders_is_refused(pair, tmp_path):
    import shutil

    for inside in ("rel", "rel-internal"):
        (tmp_path / inside).mkdir(exist_ok=True)
        shutil.copy(pair["key"], tmp_path / inside / "steward.key")
        with pytest.raises(InputError, match="never be written into a release"):
            pair["a"].write(tmp_path / "rel", signing_key=tmp_path / inside / "steward.key")
        shutil.rmtree(tmp_path / inside)
    assert sorted(os.listdir(tmp_path)) == []


# --------------------------------------------------------------------------- the Dask engine's writer

DASK_SPEC = """[input]
path = "persons"
format = "parquet"
[roles]
key_vars = ["region", "sex", "age", "job"]
numeric_vars = ["income", "hours"]
weight = "weight"
[run]
seed = 7
[[steps]]
method = "pram"
variables = ["age"]
matrix = { type = "invariant" }
min_diagonal = 0.7
[gate]
max_individual_risk = 0.99
min_diagonal = 0.7
[output]
directory = "release"
data = "persons_released.parquet"
signing_key = "keys/steward.key"
overwrite = true
"""


def test_the_dask_writer_signs_and_switches_the_pair_as_one(tmp_path, monkeypatch, capsys):
    """The Dask engine writes through the same switch and signs with [output] signing_key;
    killed after the internal folder's switch, verify rolls it forward; --key with --engine dask
    signs with the key given on the command line (another steward's key than the spec's)."""
    pytest.importorskip("distributed")
    from sdckit.engine.run import protect_with_dask
    from sdckit.report.verify import verify_release
    from tests.engine.conftest import person_frame

    df = person_frame(1500, seed=3)
    (tmp_path / "persons").mkdir()
    for i, part in enumerate(np.array_split(np.arange(len(df)), 2)):
        df.iloc[part].to_parquet(tmp_path / "persons" / f"part.{i}.parquet", index=False)
    key, pub = keypair(tmp_path / "keys")
    spec = tmp_path / "release.toml"
    spec.write_text(DASK_SPEC)
    protect_with_dask(spec, n_workers=1, processes=False, progress=False)
    first = run_id(tmp_path / "release")
    res = verify_release(tmp_path / "release", key=pub)
    assert res.ok and res.authenticity["ok"], res.problems
    import subprocess
    import sys

    # a fresh process (forking one that ran a Dask cluster can deadlock), ended at the switch point
    killed = subprocess.run([sys.executable, "-c", "import sys; from sdckit.engine.run import protect_with_dask; "
                             "protect_with_dask(sys.argv[1], n_workers=1, processes=False, progress=False)", str(spec)],
                            env={**os.environ, "SDCKIT_TEST_KILL_AT": "internal_switched", "SDCKIT_PROGRESS": "0"},
                            cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert killed.returncode == KILL_EXIT, killed.stderr[-2000:]
    assert mark_id(tmp_path / "release") == first != mark_id(tmp_path / "release-internal")
    res = verify_release(tmp_path / "release", key=pub)
    assert res.ok, res.problems
    assert run_id(tmp_path / "release") not in (None, first) and \
        mark_id(tmp_path / "release-internal") == run_id(tmp_path / "release")
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
    monkeypatch.chdir(tmp_path)
    key2, pub2 = keypair(tmp_path / "keys2")
    # what `sdckit protect --engine dask --key` passes on
    protect_with_dask(spec, n_workers=1, processes=False, progress=False, overwrite=True, signing_key=key2)
    assert verify_release(tmp_path / "release", key=pub2).ok
    res = verify_release(tmp_path / "release", key=pub)  # the spec's key did not sign this one
    assert not res.ok and not res.authenticity["ok"]


def test_a_kill_between_the_two_folder_switches_never_shows_a_mixed_pair(tmp_path):
    """The issue's case, found without the switch points: the writing process is ended right
    after the first folder of the pair was switched (the internal one). Earlier sdckit left run
    B's internal folder (its seeds and row order) beside run A's public release, and verify
    passed. Which run each folder belongs to is read from its content: the public data file
    against the same release written elsewhere, the internal report's seed."""
    import shutil

    import sdckit.io.atomic as atomic
    from sdckit.report.verify import verify_release
    from tests.release_helpers import persons as small_persons

    data = small_persons(tmp_path)
    run_a, run_b = small_run(data, 11), small_run(data, 12)
    work = tmp_path / "work"
    run_a.write(work / "rel")
    run_b.write(tmp_path / "ref" / "rel")
    data_of = {sha(work / "rel" / "released.csv"): 11, sha(tmp_path / "ref" / "rel" / "released.csv"): 12}
    shutil.rmtree(tmp_path / "ref")

    def killed_after_first_switch():
        real_rename, real_exchange = os.rename, atomic._exchange

        def once(fn):
            def call(a, b, *args, **kw):
                out = fn(a, b, *args, **kw)
                if "staging" in str(a) and out is not False and not str(b).endswith(("old-release", "previous")):
                    os._exit(KILL_EXIT)  # as SIGKILL: no clean-up
                return out
            return call

        atomic._exchange = once(real_exchange)
        os.rename = once(real_rename)
        run_b.write(work / "rel", overwrite=True)

    assert write_in_child(killed_after_first_switch) == KILL_EXIT
    res = verify_release(work / "rel")
    public_run = data_of.get(sha(work / "rel" / "released.csv"))
    internal = json.loads((work / "rel-internal" / "internal_report.json").read_text())
    internal_run = int(internal["seeds"]["root"]["entropy"])
    assert public_run == internal_run, f"public folder of run {public_run}, internal folder of run {internal_run}"
    assert res.ok, res.problems


def test_the_spec_names_the_signing_key_relative_to_itself_and_no_path_is_published(tmp_path):
    from sdckit.release import protect
    from sdckit.report.verify import verify_release

    keypair(tmp_path / "keys")
    spec = _spec(tmp_path, extra='signing_key = "keys/steward.key"')
    protect(spec)
    res = verify_release(tmp_path / "rel", key=tmp_path / "keys" / "steward.pub")
    assert res.ok and res.authenticity["ok"], res.problems
    for f in (tmp_path / "rel").iterdir():
        text = f.read_text("utf-8", "replace")
        assert "steward.key" not in text and str(tmp_path) not in text, f.name
    # a key that does not open stops the run before any work, in one line
    spec.write_text(spec.read_text().replace("keys/steward.key", "keys/steward.pub").replace('"rel"', '"rel2"'))
    with pytest.raises(InputError, match="is a public key; signing needs the private key"):
        protect(spec)
    assert not (tmp_path / "rel2").exists()
