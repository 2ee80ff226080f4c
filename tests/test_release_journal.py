"""Every writer of sdckit leaves the user's files beside its output alone.

A user's ``.survey.2023.tmp``, ``.backup.2019.tmp/`` (with files inside), ``.rel.staging-1-abc/``,
``x.old-release`` and names with dead pids look like the temporary names older sdckit used; its
clean-up deleted them (folders recursively) whenever the digits were not a live pid. Now
clean-up removes only what a journal sdckit wrote lists, under names carrying the journal's
random token. The look-alikes are planted beside the output of each writer: ``protect``,
``risk --output``, ``table``, ``anonymise``, ``report --pdf``, and the workbench's release and
upload (which write through the same functions: :func:`sdckit.release.protect` and
:func:`sdckit.io.atomic.atomic_write_bytes`); each must survive byte for byte, and no entry of
sdckit may be left behind.
"""

from __future__ import annotations

import shutil

import pytest

from sdckit.cli import main
from tests.release_helpers import LOOK_ALIKE_FILES, persons, plant, planted_snapshot

SPEC = """[input]
path = "../persons.csv"
[roles]
key_vars = ["region", "sex", "job"]
[run]
seed = 3
[[steps]]
method = "remove"
variables = ["Person ID"]
[gate]
k_anonymity = 2
[output]
directory = "rel"
"""

TABLE_SPEC = """[input]
table = "../cells.csv"
value = "n"
[table]
dimensions = ["county", "education"]
[[rules]]
type = "threshold"
n = 3
[output]
table = "pub.csv"
"""
CELLS = "county,education,n\n" + "".join(f"{c},{e},{(3 * i + 2 * j) % 11 + 1}\n"
                                         for i, c in enumerate("ABC") for j, e in enumerate("xyz"))


def _sdckit_entries(folder):
    planted = {n.split("/")[0] for n in LOOK_ALIKE_FILES}
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".") and p.name not in planted)


@pytest.fixture
def work(tmp_path, monkeypatch):
    persons(tmp_path)
    (tmp_path / "cells.csv").write_text(CELLS)
    hier = tmp_path / "h"
    hier.mkdir()
    (hier / "hierarchy_age.csv").write_text("".join(f"{a};{'low' if a < 5 else 'high'};*\n" for a in range(1, 9)))
    out = tmp_path / "out"
    out.mkdir()
    monkeypatch.chdir(out)
    monkeypatch.setenv("SDCKIT_PROGRESS", "0")
    return out


def _run(argv):
    code = main(argv)
    assert code == 0, argv
    return code


@pytest.mark.parametrize("writer", ["protect", "protect-overwrite", "risk-output", "table", "anonymise"])
def test_look_alike_files_beside_each_writer_survive(work, writer):
    before = plant(work)
    if writer.startswith("protect"):
        (work / "release.toml").write_text(SPEC)
        _run(["protect", "release.toml"])
        if writer == "protect-overwrite":  # the switch over an earlier release, and its clean-up
            _run(["protect", "release.toml", "--overwrite"])
        assert (work / "rel" / "certificate.json").is_file()
    elif writer == "risk-output":
        _run(["risk", "../persons.csv", "--keys", "region,sex", "--output", "risk.csv"])
        assert (work / "risk.csv").is_file()
    elif writer == "table":
        (work / "table.toml").write_text(TABLE_SPEC)
        _run(["table", "table.toml"])
        assert (work / "pub.csv").is_file()
    else:
        _run(["anonymise", "../persons.csv", "--hierarchies", "../h", "--qis", "age", "--k", "2",
              "--output", "anon.csv"])
        assert (work / "anon.csv").is_file()
    assert planted_snapshot(work) == before
    assert _sdckit_entries(work) == []


def test_look_alike_files_beside_report_pdf_survive(work):
    if shutil.which("chromium") is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    (work / "release.toml").write_text(SPEC)
    _run(["protect", "release.toml"])
    before = plant(work / "rel")
    _run(["report", "rel", "--pdf"])  # the PDF goes beside the release folder, never inside it
    assert (work / "rel-report.pdf").is_file()
    assert planted_snapshot(work / "rel") == before
    assert _sdckit_entries(work / "rel") == [".sdckit-release"]


def test_look_alike_files_beside_the_workbench_release_and_upload_survive(work):
    """The workbench's release runs :func:`sdckit.release.protect` on its exported spec and its
    upload writes with :func:`sdckit.io.atomic.atomic_write_bytes` (src/sdckit/app/server.py)."""
    from sdckit.io.atomic import atomic_write_bytes
    from sdckit.release import protect

    before = plant(work)
    (work / "release.toml").write_text(SPEC)
    protect(work / "release.toml")
    uploads = work / "uploads"
    uploads.mkdir()
    up_before = plant(uploads)
    atomic_write_bytes(uploads / "persons.csv", (work.parent / "persons.csv").read_bytes())
    assert planted_snapshot(work) == before and planted_snapshot(uploads) == up_before
    assert _sdckit_entries(work) == [] and _sdckit_entries(uploads) == []
