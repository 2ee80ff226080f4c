"""``sdckit table --help`` lists each table method's ``[protection]`` keys with their labels, from
the table-method registry (before: the help named no key of the table spec)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass

from typer.testing import CliRunner

from sdckit import cli_table
from sdckit.cli import app
from sdckit.params import param, step_params
from sdckit.tables import registry
from sdckit.tables.registry import TableMethod, known_table_methods, register_table_method, table_method_class
from sdckit.tables.spec import PROTECTION_COMMON, protection_keys, spec_methods

HEAVY = {"numpy", "pandas", "numba", "llvmlite", "scipy", "highspy", "pyarrow"}


def _help() -> str:
    out = CliRunner().invoke(app, ["table", "--help"], env={"COLUMNS": "4000"}).output
    return " ".join(out.replace("│", " ").split())


def _method_line(text: str, method: str) -> str:
    """The part of the help listing ``method``'s keys (up to the next method)."""
    head = f'method = "{method}" ('
    assert head in text, method
    return text.split(head, 1)[1].split(' method = "', 1)[0]


def test_every_registered_method_and_each_of_its_keys_is_listed():
    text = _help()
    assert "Keys of [protection] in a table spec" in text
    common = {p.name for p in PROTECTION_COMMON}
    every = text.split("every method: ", 1)[1].split(' method = "', 1)[0]
    for p in PROTECTION_COMMON:
        assert p.name in every and (p.label is None or p.label in every), p.name
    registered = [n for n in known_table_methods() if not n.startswith("dp_")]
    assert set(registered) | {"dp"} == set(spec_methods())
    for method in spec_methods():
        line = _method_line(text, method)
        for key in set(protection_keys(method)) - common:  # the reader's own list (sdckit.tables.spec)
            assert key in line, (method, key)
        if method != "dp":  # each declared parameter with its declared label
            cls = table_method_class(method)
            assert line.startswith(f"{cls.label}): ")
            for p in step_params(cls):  # a label that is only the name in words is not repeated
                shown = p.label and p.label != p.name.replace("_", " ")
                assert (f"{p.name} ({p.label})" if shown else p.name) in line, (method, p.name)
    for name in known_table_methods():  # the four DP settings under "dp"
        if name.startswith("dp_"):
            assert name in _method_line(text, "dp")


def test_a_method_registered_at_run_time_is_listed(monkeypatch):
    monkeypatch.setattr(registry, "_METHODS", dict(registry._METHODS))

    @register_table_method("help_probe", label="a probe method", help="registered by this test only")
    @dataclass(frozen=True)
    class Probe(TableMethod):
        strength: int = param(2, kind="int", low=1, label="probe strength", help="how strong")

    line = _method_line(_help(), "help_probe")
    assert line.startswith("a probe method): strength (probe strength)")


def test_the_stored_listing_is_the_registrys():
    # a declaration changed without `python tools/write_table_keys.py`: the help then reads the
    # registry itself (numpy and numba on every `sdckit table --help`)
    stored = cli_table.stored_listing()
    assert stored is not None, "the stored listing is stale: run python tools/write_table_keys.py"
    assert stored == cli_table.protection_key_listing()


def test_a_stale_stored_listing_is_not_used(tmp_path, monkeypatch):
    good = json.loads(cli_table.LISTING_FILE.read_text(encoding="utf-8"))
    target = tmp_path / "keys.json"
    monkeypatch.setattr(cli_table, "LISTING_FILE", target)
    target.write_text(json.dumps(good), encoding="utf-8")
    assert cli_table.stored_listing() == good["listing"]  # the control: the same file, current
    target.write_text(json.dumps({**good, "fingerprint": "0" * 64}), encoding="utf-8")
    assert cli_table.stored_listing() is None
    target.write_text("not json", encoding="utf-8")
    assert cli_table.stored_listing() is None


def test_the_fingerprint_follows_the_declaring_files(tmp_path, monkeypatch):
    for rel in cli_table._declaring_files():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes((cli_table._PACKAGE / rel).read_bytes())
    monkeypatch.setattr(cli_table, "_PACKAGE", tmp_path)
    before = cli_table.listing_fingerprint()
    assert "tables/table_methods.py" in cli_table._declaring_files()
    with open(tmp_path / "tables" / "table_methods.py", "a", encoding="utf-8") as f:
        f.write("\n# a changed declaration\n")
    assert cli_table.listing_fingerprint() != before
    (tmp_path / "extra").mkdir()
    (tmp_path / "extra" / "table_methods.py").write_text("", encoding="utf-8")  # a new provider
    assert "extra/table_methods.py" in cli_table._declaring_files()


def test_the_help_in_a_fresh_process_loads_no_numerical_package():
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPROFILEIMPORTTIME"} | {"COLUMNS": "4000"}
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "sdckit", "table", "--help"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-500:]
    names = {line.rsplit("|", 1)[1].strip().split(".")[0] for line in proc.stderr.splitlines()
             if line.startswith("import time:") and "|" in line}
    assert not names & HEAVY, sorted(names & HEAVY)
    text = " ".join(proc.stdout.replace("│", " ").split())
    for method in spec_methods():
        assert f'method = "{method}"' in text, method
