"""Hostile inputs to every workbench route that takes a path or a name.

The workbench reads only inside its folders (the data folder given at start, its work folder,
the packaged sample data) and writes releases only inside its output folder. Each row of the
table below sends one hostile value (an absolute path, ``..``, a literal ``%2e%2e``, a link out,
a NUL byte, a very long name, a folder, a FIFO) to one route and expects 403 (outside the
folders) or 400 (not a usable name), with a one-line JSON error: never 500, never a traceback,
and never a byte of the file outside the folders in the answer, nor a file written outside.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from starlette.testclient import TestClient

from sdckit.app.cli import build
from sdckit.app.security import FileRoots, PathRefused
from sdckit.errors import InputError

DEMO = Path(__file__).resolve().parents[2] / "src" / "sdckit" / "data" / "uk_census2011_teaching_10k.csv"
TOKEN = "hostile-token-0123456789"
SECRET = "TOPSECRET-7f3a"
KEYS = ["Region", "Sex", "Age"]


# ---------------------------------------------------------------------- the arena
@pytest.fixture(scope="module")
def arena(tmp_path_factory):
    """data/ (the picker's folder), wb/ (the work folder), outside/ (a secret nobody may read)."""
    base = tmp_path_factory.mktemp("hostile").resolve()
    data, wb, outside = base / "data", base / "wb", base / "outside"
    for d in (data, wb / "uploads", outside):
        d.mkdir(parents=True)
    pd.read_csv(DEMO).head(300).to_csv(data / "census.csv", index=False)
    (outside / "secret.csv").write_text(f"name,code\n{SECRET},1\n{SECRET},2\n")
    (outside / "hier.csv").write_text(f"1,{SECRET}\n2,{SECRET}\n")
    (data / "sub").mkdir()
    (data / "link.csv").symlink_to(outside / "secret.csv")       # a link out of a root
    (data / "linkdir").symlink_to(outside)                         # a folder link out
    (wb / "linkout").symlink_to(outside)                           # an output folder link out
    (wb / "uploads" / "up_link.csv").symlink_to(outside / "secret.csv")
    (wb / "afile").write_text("not a folder")
    (data / "hierdir").mkdir()
    (data / "hierdir" / "h_Age.csv").symlink_to(outside / "hier.csv")
    os.mkfifo(data / "pipe.csv")
    os.mkfifo(wb / "uploads" / "pipe.csv")
    return base


@pytest.fixture(scope="module")
def client(arena):
    app, token, url = build(arena / "data" / "census.csv", host="127.0.0.1", port=8000, token=TOKEN,
                            workdir=arena / "wb")
    c = TestClient(app, base_url="http://127.0.0.1:8000")
    assert c.get(f"/?token={TOKEN}", follow_redirects=False).status_code == 303
    c.headers["X-CSRF-Token"] = app.state.csrf
    assert c.post("/api/roles", json={"roles": {"key_vars": KEYS}}).status_code == 200
    return c


def _outside_state(arena: Path) -> dict:
    return {str(p.relative_to(arena)): (p.stat().st_mtime_ns, p.stat().st_size)
            for p in (arena / "outside").rglob("*")}


# hostile values, by name; "{A}" is the arena folder
LONG = "a" * 300 + ".csv"
VERY_LONG = "/".join(["d" * 200] * 25) + ".csv"
PATHS = {
    "absolute": "{A}/outside/secret.csv",
    "etc": "/etc/passwd",
    "proc": "/proc/self/environ",
    "dotdot": "../outside/secret.csv",
    "dotdot_deep": "../../../../../../../../etc/passwd",
    "dotdot_root_data": "../data/../outside/secret.csv",
    "tilde": "~/../../etc/passwd",
    "pct": "%2e%2e/%2e%2e/outside/secret.csv",
    "link_out": "{A}/data/link.csv",
    "linkdir_out": "{A}/data/linkdir/secret.csv",
    "nul": "census\x00.csv",
    "long_name": LONG,
    "very_long": VERY_LONG,
    "folder": "{A}/data/sub",
    "fifo": "{A}/data/pipe.csv",
}
# what a value is when it names a file to read: 403 outside the folders, 400 not usable
READ_EXPECT = {"absolute": 403, "etc": 403, "proc": 403, "dotdot": 403, "dotdot_deep": 403,
               "dotdot_root_data": 403, "tilde": 403, "pct": 400, "link_out": 403, "linkdir_out": 403,
               "nul": 400, "long_name": 400, "very_long": 400, "folder": 400, "fifo": 400}


def _value(name: str, arena: Path) -> str:
    return PATHS[name].replace("{A}", str(arena))


def _toml_str(text: str) -> str:
    return json.dumps(text)  # a JSON string is a valid TOML basic string (\u escapes included)


def _import_body(path: str, **extra) -> bytes:
    lines = ["[input]", f"path = {_toml_str(path)}", "[roles]", 'key_vars = ["Region", "Sex", "Age"]']
    for section, items in extra.items():
        lines.append(section)
        lines += [f"{k} = {v}" for k, v in items.items()]
    return "\n".join(lines).encode()


def _cases():
    """(id, method, url, kind, payload or callable, expected status)."""
    cases = []
    # /api/import: input.path
    for name, status in READ_EXPECT.items():
        cases.append((f"import-input-{name}", "import", name, status))
    # /api/steps: a recode's hierarchy file (a step's file parameter)
    for name, status in READ_EXPECT.items():
        cases.append((f"steps-hierarchy-{name}", "hierarchy", name, status))
    # /api/explore: a candidate grid over hierarchy files
    for name in ("absolute", "dotdot", "link_out", "nul", "fifo"):
        cases.append((f"explore-hierarchy-{name}", "explore", name, READ_EXPECT[name]))
    # /api/table: the cell list and the p-table must be uploads
    for name in READ_EXPECT:  # anything but a file of the uploads folder: 403; an unusable name: 400
        cases.append((f"table-file-{name}", "table", name, 400 if name in ("nul", "long_name", "very_long") else 403))
    for name in ("absolute", "dotdot", "nul", "long_name"):
        cases.append((f"ptable-file-{name}", "ptable", name, 403 if READ_EXPECT[name] == 403 else 400))
    cases += [("table-upload-link", "table_raw", "up_link.csv", 403),
              ("table-upload-fifo", "table_raw", "pipe.csv", 400)]
    # /api/open: the picker takes a folder number and a plain name
    for name, status in [("../census.csv", 403), ("/etc/passwd", 403), ("..", 403), ("sub/x.csv", 403),
                         ("link.csv", 403), ("sub", 400), ("pipe.csv", 400), ("x\x00.csv", 400),
                         (LONG, 400), ("%2e%2e", 400), ("nothere.csv", 400)]:
        cases.append((f"open-{name[:20]!r}", "open", name, status))
    for root, status in [(-1, 400), (99, 400), ("abc", 400), (True, 400)]:
        cases.append((f"open-root-{root!r}", "open_root", root, status))
    # /api/output: the release folder inside the output root only
    for value, status in [("{A}/outside/rel", 403), ("/tmp/sdckit-hostile-rel", 403), ("../rel", 403),
                          ("../../rel", 403), (".", 403), ("linkout/rel", 403), ("~/rel", 403),
                          ("rel\x00", 400), ("r" * 300, 400), (VERY_LONG, 400), ("afile", 400)]:
        cases.append((f"output-dir-{value[:20]!r}", "output", value, status))
    for value, status in [("../x.csv", 403), ("/tmp/x.csv", 403), ("..", 403), ("x\x00.csv", 400),
                          ("sub/x.csv", 403), (LONG, 400)]:
        cases.append((f"output-data-{value[:20]!r}", "output_data", value, status))
    # /api/import: output folders and names of the spec
    for value, status in [("{A}/outside/rel", 403), ("../rel", 403), ("linkout/rel", 403), ("rel\x00", 400)]:
        cases.append((f"import-outdir-{value[:16]!r}", "import_outdir", value, status))
    for value, status in [("{A}/outside/rel-int", 403), ("../int", 403)]:
        cases.append((f"import-internal-{value[:16]!r}", "import_internal", value, status))
    cases.append(("import-hierdir-link", "import_hierdir", "{A}/data/hierdir", 403))
    # /api/upload: the file name of an upload
    for value, status in [("..", 400), ("%2e%2e", 400), (LONG, 400), ("up_link.csv", 403), ("a.sh", 400)]:
        cases.append((f"upload-{value[:16]!r}", "upload", value, status))
    # names: a column, a branch, a job, a history position
    cases += [("categories-dotdot", "categories", "../../etc/passwd", 400),
              ("categories-nul", "categories", "a\x00b", 400),
              ("branch-switch-dotdot", "switch", "../main", 400),
              ("branch-new-long", "branch", "b" * 300, 400),
              ("job-dotdot", "job", "%2e%2e", 400),
              ("history-goto-text", "goto", "abc", 400)]
    return cases


CASES = _cases()


def test_there_are_at_least_40_cases():
    assert len(CASES) >= 40, len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_hostile_value_is_refused_in_one_line(case, client, arena):
    _, route, value, expected = case
    before = _outside_state(arena)
    if isinstance(value, str) and value in PATHS:
        value = _value(value, arena)
    elif isinstance(value, str):
        value = value.replace("{A}", str(arena))
    r = _send(client, route, value, arena)
    assert r.status_code == expected, (route, value[:80] if isinstance(value, str) else value, r.status_code, r.text[:300])
    body = r.json()
    assert set(body) == {"error"} and isinstance(body["error"], str)
    assert "\n" not in body["error"] and "Traceback" not in r.text and len(body["error"]) < 1000
    assert SECRET not in r.text
    # nothing outside the folders was changed or created, and the session still works
    assert _outside_state(arena) == before
    assert not Path("/tmp/sdckit-hostile-rel").exists()
    assert client.get("/api/state").status_code == 200


def _send(c: TestClient, route: str, value, arena: Path):
    hdr = {"Content-Type": "application/toml"}
    if route == "import":
        return c.post("/api/import", content=_import_body(value), headers=hdr)
    if route == "import_outdir":
        return c.post("/api/import", content=_import_body(str(arena / "data" / "census.csv"),
                                                          **{"[output]": {"directory": _toml_str(value)}}), headers=hdr)
    if route == "import_internal":
        return c.post("/api/import", content=_import_body(str(arena / "data" / "census.csv"),
                                                          **{"[output]": {"internal_directory": _toml_str(value)}}),
                      headers=hdr)
    if route == "import_hierdir":
        body = _import_body(str(arena / "data" / "census.csv"),
                            **{"[[steps]]": {"method": '"generalise"', "hierarchy_dir": _toml_str(value)}})
        return c.post("/api/import", content=body, headers=hdr)
    if route == "hierarchy":
        step = {"method": "recode", "variable": "Age", "hierarchy_file": value, "level": 1}
        return c.post("/api/steps", json={"action": "add", "step": step})
    if route == "explore":
        cand = {"method": "recode", "grid": {"hierarchy_file": [value]}, "fixed": {"variable": "Age", "level": 1}}
        return c.post("/api/explore", json={"candidates": [cand], "seeds": [1]})
    if route in ("table", "table_raw"):
        f = value if route == "table" else str(arena / "wb" / "uploads" / value)
        return c.post("/api/table", json={"dims": ["Region"], "table_file": f, "value": "n", "rules": [],
                                          "method": "rounding"})
    if route == "ptable":
        return c.post("/api/table", json={"dims": ["Region", "Age"], "rules": [], "method": "ckm",
                                          "options": {"ptable_file": value}})
    if route == "open":
        return c.post("/api/open", json={"root": 0, "name": value})
    if route == "open_root":
        return c.post("/api/open", json={"root": value, "name": "census.csv"})
    if route == "output":
        return c.post("/api/output", json={"directory": value, "data": "out.csv"})
    if route == "output_data":
        return c.post("/api/output", json={"directory": "rel", "data": value})
    if route == "upload":
        return c.post("/api/upload", content=b"a,b\n1,2\n", headers={"X-Filename": value})
    if route == "categories":
        return c.get("/api/categories", params={"column": value})
    if route == "switch":
        return c.post("/api/history", json={"action": "switch", "name": value})
    if route == "branch":
        return c.post("/api/history", json={"action": "branch", "name": value})
    if route == "job":
        return c.get(f"/api/jobs/{value}")
    if route == "goto":
        return c.post("/api/history", json={"action": "goto", "pos": value})
    raise AssertionError(route)


def test_url_encoded_traversal_in_url_paths_reads_nothing(client):
    for url in ("/static/%2e%2e%2f%2e%2e%2fserver.py", "/static/..%2Fsecurity.py", "/release/0/%2e%2e",
                "/static/%00", "/release/-1/report"):
        r = client.get(url)
        assert r.status_code in (400, 403, 404), (url, r.status_code)
        assert "import" not in r.text and SECRET not in r.text


def test_inside_paths_still_work(client, arena):
    """The refusals are not a blanket: a file inside the folders opens, by name or path; an
    output folder inside the work folder is taken; a literal '%2e%2e' folder stays inside."""
    assert client.post("/api/open", json={"root": 0, "name": "census.csv"}).status_code == 200
    text = _import_body(str(arena / "data" / "census.csv")) + b"\n[output]\ndirectory = \"%2e%2e/rel\"\n"
    r = client.post("/api/import", content=text, headers={"Content-Type": "application/toml"})
    assert r.status_code == 200, r.text
    assert r.json()["spec"]["output"]["directory"] == str(arena / "wb" / "%2e%2e" / "rel")
    r = client.post("/api/output", json={"directory": "releases/first", "data": "out.csv"})
    assert r.status_code == 200 and r.json()["spec"]["output"]["directory"] == str(arena / "wb" / "releases" / "first")
    sample = Path(__file__).resolve().parents[2] / "src" / "sdckit" / "data" / "hierarchy_age.csv"
    step = {"method": "recode", "variable": "Age", "hierarchy_file": str(sample), "level": 1}
    r = client.post("/api/steps", json={"action": "add", "step": step})
    assert r.status_code == 200, r.text


# ---------------------------------------------------------------------- links swapped in after the check
def test_a_link_swapped_in_after_the_check_is_refused_at_open(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.csv").write_text("x\n1\n")
    f = root / "data.csv"
    f.write_text("a\n1\n")
    roots = FileRoots([root], root)
    real = roots.check_read("data.csv", base=root)
    fd = roots.open_read(real)  # no swap: opens
    os.close(fd)
    f.unlink()
    f.symlink_to(outside / "secret.csv")  # the swap, after the check
    with pytest.raises(PathRefused):
        roots.open_read(real)


def test_a_folder_swapped_for_a_link_after_the_check_is_refused_at_open(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    (root / "sub" / "data.csv").write_text("a\n1\n")
    (outside / "data.csv").write_text("secret\n1\n")
    roots = FileRoots([root], root)
    real = roots.check_read("sub/data.csv", base=root)
    shutil.rmtree(root / "sub")
    (root / "sub").symlink_to(outside)  # the folder now leads out
    with pytest.raises(PathRefused):
        os.close(roots.open_read(real))


def test_a_fifo_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "p.csv")
    roots = FileRoots([tmp_path], tmp_path)
    with pytest.raises(InputError, match="not a regular file"):
        roots.check_read("p.csv", base=tmp_path)


def test_release_rechecks_its_folders_and_input_when_it_runs(tmp_path):
    """Paths checked when set are checked again at release time: an output folder whose parent
    became a link out, or an input swapped for a link out, stops the release (403), and nothing
    is written outside."""
    data, wb, outside = tmp_path / "data", tmp_path / "wb", tmp_path / "outside"
    for d in (data, wb, outside):
        d.mkdir()
    pd.read_csv(DEMO).head(200).to_csv(data / "census.csv", index=False)
    (outside / "secret.csv").write_text(f"Region,Sex,Age\n{SECRET},1,1\n")
    app, *_ = build(data / "census.csv", host="127.0.0.1", port=8000, token=TOKEN, workdir=wb)
    c = TestClient(app, base_url="http://127.0.0.1:8000")
    c.get(f"/?token={TOKEN}")
    c.headers["X-CSRF-Token"] = app.state.csrf
    c.post("/api/roles", json={"roles": {"key_vars": KEYS}})
    (wb / "sub").mkdir()
    assert c.post("/api/output", json={"directory": "sub/rel", "data": "out.csv"}).status_code == 200
    (wb / "sub").rmdir()
    (wb / "sub").symlink_to(outside)  # after the check: the release folder now leads out
    r = c.post("/api/release", json={})
    assert r.status_code == 403 and "output.directory" in r.json()["error"]
    assert sorted(p.name for p in outside.iterdir()) == ["secret.csv"]
    (wb / "sub").unlink()
    (wb / "sub").mkdir()
    (data / "census.csv").unlink()
    (data / "census.csv").symlink_to(outside / "secret.csv")  # the input swapped for a link out
    r = c.post("/api/release", json={})
    assert r.status_code == 403 and "input.path" in r.json()["error"]
    assert SECRET not in r.text


def test_output_root_option_moves_where_releases_may_go(tmp_path):
    data, wb, out = tmp_path / "data", tmp_path / "wb", tmp_path / "publish"
    data.mkdir()
    pd.read_csv(DEMO).head(100).to_csv(data / "census.csv", index=False)
    app, *_ = build(data / "census.csv", host="127.0.0.1", port=8000, token=TOKEN, workdir=wb, output_root=out)
    c = TestClient(app, base_url="http://127.0.0.1:8000")
    c.get(f"/?token={TOKEN}")
    c.headers["X-CSRF-Token"] = app.state.csrf
    # the default release folder lies inside the output root
    assert c.get("/api/state").json()["spec"]["output"]["directory"] == str(out.resolve() / "release")
    assert c.post("/api/output", json={"directory": str(out / "r1")}).status_code == 200
    assert c.post("/api/output", json={"directory": str(wb / "r1")}).status_code == 403


# ---------------------------------------------------------------------- the port, the key
def _listening_socket():
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.listen()
    return s


def test_a_port_in_use_is_one_line_and_exit_2_with_no_address(tmp_path):
    other = _listening_socket()  # somebody else's server on the port
    port = other.getsockname()[1]
    try:
        proc = subprocess.run([sys.executable, "-m", "sdckit", "app", "--port", str(port), "--no-browser",
                               "--workdir", str(tmp_path / "wb")], cwd=tmp_path, capture_output=True,
                              text=True, timeout=120)
    finally:
        other.close()
    lines = [x for x in proc.stderr.splitlines() if x.strip()]
    assert proc.returncode == 2, proc.stderr
    assert lines == [f"error: port {port} is in use; pass --port with another number (or leave it out for a free one)"]
    assert "token=" not in proc.stderr + proc.stdout and "http://" not in proc.stderr + proc.stdout


def test_bind_socket_gives_a_listening_socket_on_a_free_port():
    from sdckit.app.cli import bind_socket

    s = bind_socket("127.0.0.1", 0)
    try:
        port = s.getsockname()[1]
        assert port > 0
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass  # it listens: the address printed after it belongs to this server
        with pytest.raises(InputError, match=f"port {port} is in use"):
            bind_socket("127.0.0.1", port)
    finally:
        s.close()


def _job(c: TestClient, job: dict) -> dict:
    import time

    for _ in range(1200):
        j = c.get(f"/api/jobs/{job['id']}").json()
        if j["status"] not in ("queued", "running"):
            return j
        time.sleep(0.05)
    raise AssertionError("the job did not finish")


def test_key_option_signs_the_workbench_releases(tmp_path):
    """sdckit app --key steward.key: the release the workbench writes carries the steward's
    signature, which verify checks with the public key (and a wrong key file stops the start)."""
    from sdckit.app import server
    from sdckit.report.verify import verify_release

    data = tmp_path / "data"
    data.mkdir()
    pd.read_csv(DEMO).head(200).to_csv(data / "census.csv", index=False)
    if not server.signing_supported():  # the plumbing's own check, in one line
        with pytest.raises(InputError, match="--key: this sdckit cannot sign releases"):
            build(data / "census.csv", host="127.0.0.1", port=8000, token=TOKEN, workdir=tmp_path / "wb",
                  signing_key=tmp_path / "any.key")
        pytest.skip("ReleaseRun.write takes no signing_key in this tree")
    from sdckit.report.signing import generate_keypair

    keys = tmp_path / "keys"
    keys.mkdir()
    private, public = generate_keypair(keys)
    app, *_ = build(data / "census.csv", host="127.0.0.1", port=8000, token=TOKEN, workdir=tmp_path / "wb",
                    signing_key=private)
    c = TestClient(app, base_url="http://127.0.0.1:8000")
    c.get(f"/?token={TOKEN}")
    c.headers["X-CSRF-Token"] = app.state.csrf
    c.post("/api/roles", json={"roles": {"key_vars": KEYS}})
    c.post("/api/steps", json={"action": "add", "step": {"method": "remove", "variables": ["Person ID"]}})
    c.post("/api/steps", json={"action": "add", "step": {"method": "local_suppression", "k": 2}})
    assert c.post("/api/gate", json={"gate": {"k_anonymity": 2}}).status_code == 200
    j = _job(c, c.post("/api/release", json={}).json())
    assert j["status"] == "done", j
    folder = Path(j["result"]["directory"])
    cert = json.loads((folder / "certificate.json").read_text())
    assert cert.get("signature"), "the certificate is not signed"
    assert verify_release(folder, key=public).ok
    other_private, other_public = generate_keypair(keys, "other")
    assert not verify_release(folder, key=other_public).ok  # signed by this key, not any key
    (tmp_path / "not.key").write_text("not a key")
    with pytest.raises(InputError, match="not a PEM private key"):
        build(data / "census.csv", host="127.0.0.1", port=8000, token=TOKEN, workdir=tmp_path / "wb2",
              signing_key=tmp_path / "not.key")
    with pytest.raises(InputError, match="no such key file"):
        build(data / "census.csv", host="127.0.0.1", port=8000, token=TOKEN, workdir=tmp_path / "wb3",
              signing_key=tmp_path / "missing.key")
