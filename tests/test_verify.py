"""``sdckit verify``: the certificate of the demo release, and what verify finds when a
released file is changed or removed."""

import hashlib
import json
import shutil
import subprocess
import sys

import pandas as pd
import pytest

from sdckit.report.verify import verify_release
from tests.report.demo_release import write_demo_release

CMD = [sys.executable, "-m", "sdckit"]


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    out = tmp_path_factory.mktemp("verify")
    run, paths, _ = write_demo_release(out, with_map=False)
    return run, paths


@pytest.fixture
def copy(release, tmp_path):
    """A fresh copy of the release folder (tests change files in it)."""
    _, paths = release
    dst = tmp_path / "release"
    shutil.copytree(paths["data"].parent, dst)
    return dst


def _verify_cli(folder, capsys):
    """``sdckit verify FOLDER --json`` through the command's entry point (in process)."""
    from sdckit.cli import main

    capsys.readouterr()
    code = main(["verify", str(folder), "--json"])
    out, err = capsys.readouterr()
    assert len(out.strip().splitlines()) == 1  # one JSON document on stdout
    return code, json.loads(out)


def test_certificate_holds_hashes_versions_gate_and_no_seed(release):
    run, paths = release
    folder = paths["data"].parent
    cert = json.loads((folder / "certificate.json").read_text())
    files = {f["name"]: f["sha256"] for f in cert["files"]}
    # independent hashes with hashlib over the whole files
    for name in ("census_released.csv", "pram_Marital-Status.csv", "pram_Marital-Status.json"):
        assert files[name] == hashlib.sha256((folder / name).read_bytes()).hexdigest()
    assert cert["dependencies"]["numpy"] == __import__("numpy").__version__
    assert {"k_anonymity", "min_diagonal", "max_global_risk"} <= {g["name"] for g in cert["gate"]}
    assert all(g["passed"] for g in cert["gate"]) and cert["guarantees_hold"]
    assert "seed" not in cert["spec"].get("run", {})
    assert "input" not in cert
    text = (folder / "certificate.json").read_text()
    assert str(run.seeds.root.entropy) not in text and "20261122" not in text
    internal = json.loads(paths["internal_certificate"].read_text())
    src = run.original.meta.source
    assert internal["input"]["sha256"] == hashlib.sha256(open(src, "rb").read()).hexdigest()
    assert "20261122" not in paths["internal_certificate"].read_text()


def test_verify_passes_on_the_demo_release(release, capsys):
    _, paths = release
    code, out = _verify_cli(paths["data"].parent, capsys)
    assert code == 0 and out["ok"] is True and out["problems"] == []
    checked = " ".join(c["check"] for c in out["checks"])
    assert "gate k_anonymity = 3" in checked and "rows sum to 1" in checked and "invariance" in checked


def test_one_changed_cell_fails_naming_the_data_file(copy, capsys):
    data = copy / "census_released.csv"
    df = pd.read_csv(data)
    df.loc[0, "Health"] = 5 if df.loc[0, "Health"] != 5 else 4  # one non-key cell
    df.to_csv(data, index=False)
    code, out = _verify_cli(copy, capsys)
    assert code == 5 and out["ok"] is False
    assert any(p.startswith("census_released.csv: changed since release") for p in out["problems"])
    assert not any("gate" in p for p in out["problems"])  # a non-key cell breaks no threshold


def test_a_removed_matrix_fails_naming_it(copy, capsys):
    (copy / "pram_Marital-Status.csv").unlink()
    code, out = _verify_cli(copy, capsys)
    assert code != 0
    assert any(p.startswith("pram_Marital-Status.csv: missing") for p in out["problems"])


def test_a_changed_key_cell_fails_the_threshold(copy):
    data = copy / "census_released.csv"
    df = pd.read_csv(data)
    # give record 0 a region code no other record has: a sample unique, so f_k = 1 < 3
    df["Region"] = df["Region"].astype(object)
    df.loc[0, "Region"] = "Z99999999"
    df.to_csv(data, index=False)
    res = verify_release(copy)
    assert not res.ok
    assert any(p.startswith("gate k_anonymity = 3: fails on census_released.csv") for p in res.problems)
    assert any(p.startswith("census_released.csv: changed since release") for p in res.problems)


def test_a_matrix_edited_below_its_promise_fails(copy):
    m = copy / "pram_Marital-Status.csv"
    df = pd.read_csv(m, index_col=0)
    df.iloc[1] = [0.3, 0.4, 0.3]  # row still sums to 1, diagonal 0.4 < 0.9
    df.to_csv(m)
    res = verify_release(copy)
    assert any("pram_Marital-Status.csv: smallest diagonal entry 0.4 is below the promised 0.9" in p
               for p in res.problems)
    assert any(p.startswith("gate min_diagonal = 0.9: fails") for p in res.problems)


def test_verify_text_output_and_missing_certificate(copy):
    (copy / "certificate.json").unlink()
    # the command itself, once, as a user runs it: text output and a non-zero exit
    r = subprocess.run([*CMD, "verify", str(copy)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 5 and "certificate.json: missing" in r.stdout
    assert r.stderr.startswith("error: ") and len(r.stderr.strip().splitlines()) == 1


# --------------------------------------------------------------------------- signed releases, hostile folders

import os  # noqa: E402
from pathlib import Path  # noqa: E402

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from sdckit.report.certificate import FORMAT  # noqa: E402
from tests.release_helpers import keypair, sha  # noqa: E402


@pytest.fixture(scope="module")
def signed(tmp_path_factory):
    """The demo release signed with the steward's key, and the same release written a second
    time (another run id) for the mixed-pair case."""
    from sdckit.release import Release
    from tests.report.demo_release import demo_spec

    base = tmp_path_factory.mktemp("signed")
    key, pub = keypair(base / "keys")
    intruder, _ = keypair(base / "keys", "intruder")
    spec, _ = demo_spec(base / "sdckit-demo")
    run = Release.from_spec(spec).run()
    paths = run.write(spec.output, signing_key=key)
    other = run.write(base / "again" / "sdckit-demo", signing_key=key)
    return {"folder": paths["data"].parent, "internal": paths["internal_directory"], "key": key, "pub": pub,
            "intruder": intruder, "other_internal": other["internal_directory"]}


@pytest.fixture
def pair_copy(signed, tmp_path):
    """A fresh copy of the signed public folder and its internal sibling."""
    pub, intl = tmp_path / "sdckit-demo", tmp_path / "sdckit-demo-internal"
    shutil.copytree(signed["folder"], pub)
    shutil.copytree(signed["internal"], intl)
    return pub, intl


def _cert(folder):
    return json.loads((folder / "certificate.json").read_text())


def _save(folder, cert):
    (folder / "certificate.json").write_text(json.dumps(cert, indent=2) + "\n")


def _rehash(folder, cert=None):
    """Rewrite the certificate's hashes and sizes to match the files as they are now (the
    signature is left as it was): what someone who edits a release would do."""
    cert = _cert(folder) if cert is None else cert
    for f in cert["files"]:
        p = folder / f["name"] if isinstance(f.get("name"), str) and not f["name"].startswith("/") else None
        if p is not None and p.is_file():
            f["sha256"], f["bytes"] = sha(p), p.stat().st_size
    _save(folder, cert)
    return cert


def _edit_cell(pub, intl):
    df = pd.read_csv(pub / "census_released.csv")
    df.loc[0, "Health"] = 5 if df.loc[0, "Health"] != 5 else 4
    df.to_csv(pub / "census_released.csv", index=False)
    _rehash(pub)


def _swap_rows(pub, intl):
    df = pd.read_csv(pub / "census_released.csv")
    j = int((df.drop(columns=[]).ne(df.iloc[0]).any(axis=1)).to_numpy().argmax())  # a row unlike row 0
    df.iloc[[0, j]] = df.iloc[[j, 0]].to_numpy()
    df.to_csv(pub / "census_released.csv", index=False)
    _rehash(pub)


def _edit_report(pub, intl):
    with open(pub / "report.html", "a") as fh:
        fh.write("<p>All records were kept exactly as collected.</p>")
    _rehash(pub)


def _format_only(pub, intl):
    _save(pub, {"format": FORMAT})


def _delete_matrices(pub, intl):
    cert = _cert(pub)
    for name in ("pram_Marital-Status.csv", "pram_Marital-Status.json"):
        (pub / name).unlink()
    cert["files"] = [f for f in cert["files"] if not f["name"].startswith("pram_")]
    cert["checks"]["matrices"] = []
    _rehash(pub, cert)


def _delete_matrices_everywhere(pub, intl):
    _delete_matrices(pub, intl)
    cert = _cert(pub)
    cert["gate"] = [g for g in cert["gate"] if g["name"] != "min_diagonal"]
    _save(pub, cert)


def _copy_internal_report(pub, intl):
    shutil.copy(intl / "internal_report.json", pub / "internal_report.json")


def _copy_and_list_internal_report(pub, intl):
    shutil.copy(intl / "internal_report.json", pub / "notes.json")
    cert = _cert(pub)
    cert["files"].append({"name": "notes.json", "role": "published", "sha256": "0" * 64, "bytes": 0})
    _rehash(pub, cert)


def _entry(name):
    def tamper(pub, intl):
        cert = _cert(pub)
        cert["files"].append({"name": name, "role": "published", "sha256": sha(Path("/etc/hostname")),
                              "bytes": Path("/etc/hostname").stat().st_size})
        _save(pub, cert)
    return tamper


def _no_sha256(pub, intl):
    cert = _cert(pub)
    del cert["files"][0]["sha256"]
    _save(pub, cert)


def _symlink_out(pub, intl):
    outside = pub.parent / "report-outside.html"
    shutil.move(pub / "report.html", outside)
    os.symlink(outside, pub / "report.html")  # the same bytes, through a link out of the folder


def _remove_report(pub, intl):
    (pub / "report.html").unlink()


def _unlisted(pub, intl):
    (pub / "notes.txt").write_text("to do\n")


def _mixed_pair(signed):
    def tamper(pub, intl):
        shutil.rmtree(intl)
        shutil.copytree(signed["other_internal"], intl)
    return tamper


def _resigned_by_intruder(signed):
    def tamper(pub, intl):
        from sdckit.report.signing import load_private_key, sign_certificate

        _edit_cell(pub, intl)
        _save(pub, sign_certificate(_cert(pub), load_private_key(signed["intruder"])))
    return tamper


def _signature_stripped(pub, intl):
    _edit_cell(pub, intl)
    cert = _cert(pub)
    cert["signature"] = None
    _save(pub, cert)


def _run_id_rewritten(pub, intl):
    cert = _cert(pub)
    cert["run_id"] = "f" * 32
    _save(pub, cert)


def _mark_edited(pub, intl):
    mark = json.loads((pub / ".sdckit-release").read_text())
    mark["run_id"] = "e" * 32
    (pub / ".sdckit-release").write_text(json.dumps(mark))
    _rehash(pub)


def _empty_folder(pub, intl):
    (pub / "extra").mkdir()


def _fifo(pub, intl):
    os.mkfifo(pub / "pipe")


def _duplicate_entry(pub, intl):
    cert = _cert(pub)
    cert["files"].append(dict(cert["files"][0]))
    _save(pub, cert)


def _internal_folder_missing(pub, intl):
    shutil.rmtree(intl)


#: (id, tampering, exit without --key, a fragment of a problem with --key, of one without)
TAMPERINGS = [
    ("edited-cell", _edit_cell, 0, "the signature does not match its content", None),
    ("swapped-rows", _swap_rows, 0, "the signature does not match its content", None),
    ("edited-report", _edit_report, 0, "the signature does not match its content", None),
    ("certificate-format-only", _format_only, 5, "field kind is missing", "field kind is missing"),
    ("matrices-and-entries-deleted", _delete_matrices, 5, "the signature does not match",
     "cannot be checked, the certificate lists no published matrix"),
    ("matrices-deleted-everywhere", _delete_matrices_everywhere, 0, "the signature does not match", None),
    ("internal-report-copied", _copy_internal_report, 5, "internal_report.json: not listed",
     "internal_report.json: not listed"),
    ("internal-report-copied-and-listed", _copy_and_list_internal_report, 5, "the signature does not match",
     "notes.json: a file of the internal folder"),
    ("entry-dotdot", _entry("../../etc/hostname"), 5, "leaves the release folder", "leaves the release folder"),
    ("entry-absolute", _entry("/etc/hostname"), 5, "is an absolute path", "is an absolute path"),
    ("entry-without-sha256", _no_sha256, 5, "sha256 of census_released.csv must be a SHA-256",
     "and is missing"),
    ("symlink-out", _symlink_out, 5, "report.html: is a symbolic link", "report.html: is a symbolic link"),
    ("listed-file-missing", _remove_report, 5, "report.html: missing", "report.html: missing"),
    ("unlisted-file", _unlisted, 5, "notes.txt: not listed in certificate.json", "notes.txt: not listed"),
    ("signature-stripped", _signature_stripped, 0, "certificate.json: is not signed", None),
    ("run-id-rewritten", _run_id_rewritten, 5, "the signature does not match", "mixes two runs"),
    ("mark-edited", _mark_edited, 5, "the signature does not match", "the folder mixes two runs"),
    ("empty-folder", _empty_folder, 5, "extra/: a folder holding no file", "extra/: a folder holding no file"),
    ("fifo", _fifo, 5, "pipe: is not a plain file", "pipe: is not a plain file"),
    ("duplicate-entry", _duplicate_entry, 5, "is listed twice", "is listed twice"),
]


def _verify_main(folder, *extra):
    from sdckit.cli import main

    return main(["verify", str(folder), "--json", *map(str, extra)])


@pytest.mark.parametrize("case", TAMPERINGS, ids=[c[0] for c in TAMPERINGS])
def test_a_tampered_signed_release_fails_with_the_key(case, signed, pair_copy, capsys):
    """Every tampering of the issue, with the certificate's hashes rewritten to match: verify
    --key exits 5 naming the file and the rule; without a key it fails on everything it can
    see from the files alone, and says it checked integrity only, never authenticity."""
    cid, tamper, code_without_key, with_key, without_key = case
    pub, intl = pair_copy
    tamper(pub, intl)
    capsys.readouterr()
    code = _verify_main(pub, "--key", signed["pub"])
    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert code == 5 and not doc["ok"], f"{cid}: {doc['problems']}"
    assert any(with_key in p for p in doc["problems"]), f"{cid}: {doc['problems']}"
    assert all("\n" not in p for p in doc["problems"]) and err.startswith("error: ") and len(err.splitlines()) == 1
    assert doc["authenticity"]["checked"] is True
    code = _verify_main(pub)
    doc = json.loads(capsys.readouterr().out)
    assert code == code_without_key, f"{cid}: {doc['problems']}"
    if without_key is not None:
        assert any(without_key in p for p in doc["problems"]), f"{cid}: {doc['problems']}"
    assert doc["authenticity"]["checked"] is False and "authenticity not checked" in doc["authenticity"]["note"]


@pytest.mark.parametrize("case", ["mixed-pair", "resigned-by-intruder", "internal-folder-named-but-missing"])
def test_more_tamperings_of_a_signed_release(case, signed, pair_copy, capsys):
    pub, intl = pair_copy
    extra: tuple = ()
    if case == "mixed-pair":
        _mixed_pair(signed)(pub, intl)
        fragment, without = "the pair mixes two runs", 5
    elif case == "resigned-by-intruder":
        _resigned_by_intruder(signed)(pub, intl)
        fragment, without = "signed by the key ed25519:", 0
    else:
        _internal_folder_missing(pub, intl)
        extra = ("--internal", intl)
        fragment, without = "the internal folder is missing", 5
    capsys.readouterr()
    code = _verify_main(pub, "--key", signed["pub"], *extra)
    doc = json.loads(capsys.readouterr().out)
    assert code == 5 and any(fragment in p for p in doc["problems"]), doc["problems"]
    code = _verify_main(pub, *extra)
    capsys.readouterr()
    assert code == without


def test_the_signed_release_verifies_and_the_text_says_what_was_checked(signed, pair_copy, capsys):
    pub, intl = pair_copy
    capsys.readouterr()
    assert _verify_main(pub, "--key", signed["pub"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] and doc["authenticity"]["ok"] and doc["authenticity"]["key_fingerprint"].startswith("ed25519:")
    from sdckit.cli import main

    assert main(["verify", str(pub)]) == 0
    text = capsys.readouterr().out
    assert "integrity only" in text and "authenticity not checked" in text
    assert main(["verify", str(pub), "--key", str(signed["pub"])]) == 0
    assert "authenticity: signed by the steward's key ed25519:" in capsys.readouterr().out
    # the steward's private key given where the public one belongs: one line, exit 2
    assert main(["verify", str(pub), "--key", str(signed["key"])]) == 2
    assert "is a private key" in capsys.readouterr().err


def test_an_unsigned_release_fails_verify_with_a_key(release, signed, capsys):
    _, paths = release
    capsys.readouterr()
    assert _verify_main(paths["data"].parent, "--key", signed["pub"]) == 5
    doc = json.loads(capsys.readouterr().out)
    assert any(p.startswith("certificate.json: is not signed") for p in doc["problems"])


def test_verify_never_reads_a_file_outside_the_folder(pair_copy, monkeypatch):
    import sdckit.report.certificate as certificate

    pub, intl = pair_copy
    _entry("../../etc/hostname")(pub, intl)
    read = []
    real = certificate.sha256_file
    monkeypatch.setattr(certificate, "sha256_file", lambda p, *a, **k: read.append(Path(p).resolve()) or real(p, *a, **k))
    res = verify_release(pub)
    assert not res.ok
    assert all(pub.resolve() in p.parents or intl.resolve() in p.parents for p in read), read


# --------------------------------------------------------------------------- fuzzing the certificate

def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node[:4]):
            yield from _paths(v, prefix + (i,))


json_leaf = (st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=True, allow_infinity=True)
             | st.text(max_size=12) | st.sampled_from(["../x", "/etc/hostname", "a" * 64, FORMAT, "ed25519", ""]))
json_any = st.recursive(json_leaf, lambda inner: st.lists(inner, max_size=3)
                        | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=6)


@pytest.fixture(scope="module")
def fuzz_folder(signed, tmp_path_factory):
    base = tmp_path_factory.mktemp("fuzz")
    shutil.copytree(signed["folder"], base / "sdckit-demo")
    shutil.copytree(signed["internal"], base / "sdckit-demo-internal")
    return base / "sdckit-demo"


@settings(max_examples=80)
@given(data=st.data())
def test_a_mutated_certificate_exits_0_only_when_unchanged_else_5_never_1(signed, fuzz_folder, data):
    import contextlib
    import copy
    import io

    from sdckit.cli import main

    path = fuzz_folder / "certificate.json"
    original_text = path.read_text()
    original = json.loads(original_text)
    cert = copy.deepcopy(original)
    where = data.draw(st.sampled_from(sorted(_paths(cert), key=repr)), label="path")
    op = data.draw(st.sampled_from(["replace", "delete", "wrap", "stringify", "duplicate", "add"]), label="op")
    if not where:
        cert = data.draw(json_any, label="whole") if op == "replace" else {"format": FORMAT}
    else:
        parent = cert
        for k in where[:-1]:
            parent = parent[k]
        last = where[-1]
        if op == "replace":
            parent[last] = data.draw(json_any, label="value")
        elif op == "delete":
            del parent[last]
        elif op == "wrap":
            parent[last] = [parent[last]]
        elif op == "stringify":
            parent[last] = str(parent[last])
        elif op == "duplicate" and isinstance(parent, list):
            parent.append(copy.deepcopy(parent[last]))
        else:
            target = parent[last]
            if isinstance(target, dict):
                target[data.draw(st.text(max_size=6), label="key")] = data.draw(json_any, label="value")
            elif isinstance(target, list):
                target.append(data.draw(json_any, label="value"))
            else:
                parent[last] = data.draw(json_any, label="value")
    unchanged = json.dumps(cert, sort_keys=True) == json.dumps(original, sort_keys=True)
    try:
        path.write_text(json.dumps(cert, indent=2))
        codes = []
        for extra in (["--key", str(signed["pub"])], []):
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                codes.append(main(["verify", str(fuzz_folder), "--json", *extra]))
            assert "internal error" not in err.getvalue(), err.getvalue()
            assert len(out.getvalue().strip().splitlines()) == 1
    finally:
        path.write_text(original_text)
    with_key, without_key = codes
    assert with_key == (0 if unchanged else 5), (where, op)
    assert without_key in ((0,) if unchanged else (0, 5)), (where, op)


def test_sdckit_demo_key_then_verify_key(tmp_path, monkeypatch, capsys):
    """`sdckit demo --key steward.key` writes a signed demo release that `sdckit verify --key
    steward.pub` passes, authenticity included; a key inside the demo's folders is refused."""
    from sdckit.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SDCKIT_PROGRESS", "0")
    assert main(["keygen", "steward"]) == 0
    (tmp_path / "sdckit-demo").mkdir()
    shutil.copy(tmp_path / "steward.key", tmp_path / "sdckit-demo" / "steward.key")
    capsys.readouterr()
    assert main(["demo", "--key", "sdckit-demo/steward.key", "--json"]) == 2
    assert "never be written into a release" in capsys.readouterr().err
    shutil.rmtree(tmp_path / "sdckit-demo")
    assert main(["demo", "--key", "steward.key", "--json"]) == 0
    capsys.readouterr()
    assert main(["verify", "sdckit-demo", "--key", "steward.pub", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] and doc["authenticity"] == {"checked": True, "ok": True,
                                                 "key_fingerprint": doc["authenticity"]["key_fingerprint"]}
    assert any("sdckit-demo-internal/internal_certificate.json: signed" in c["check"] for c in doc["checks"])
