"""Shared pieces of the release-safety tests: a small release with a PRAM matrix, a key pair,
look-alike files planted beside an output, a snapshot of a folder, and a write in a child
process that may be ended at a switch point."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

#: names a user may well have beside an output; sdckit's old clean-up took each of them for its
#: own (a dead pid in the name) and deleted it, folders recursively
LOOK_ALIKE_FILES = {
    ".survey.2023.tmp": b"the 2023 survey, unsaved\n",
    ".backup.2019.tmp/notes.txt": b"notes\n",
    ".backup.2019.tmp/deep/data.csv": b"a,b\n1,2\n",
    ".rel.staging-1-abc/released.csv": b"x\n",
    ".rel.staging-4194999-abc/released.csv": b"y\n",
    "x.old-release": b"old\n",
    ".x.4194999-prev.old-release/keep.txt": b"keep\n",
    ".released.csv.4194999-xyz.tmp": b"z\n",
    ".out.csv.77777-q.tmp": b"q\n",
    ".report.pdf.4194999-a.tmp": b"%PDF-1.4\n",
    # sdckit's own name shapes, but no journal of sdckit lists them
    ".rel.sdckit-0123456789abcdef0123456789abcdef.staging/x.csv": b"not ours\n",
    ".out.csv.sdckit-fedcba9876543210fedcba9876543210.tmp": b"not ours\n",
    # a file named like a journal that sdckit did not write
    ".sdckit-00000000000000000000000000000000.journal": b"{\"format\": \"my own\"}\n",
}


def plant(folder: Path) -> dict[str, str]:
    """Write the look-alike files into ``folder``; returns their snapshot."""
    for name, data in LOOK_ALIKE_FILES.items():
        p = folder / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    return planted_snapshot(folder)


def planted_snapshot(folder: Path) -> dict[str, str]:
    out = {}
    for name in LOOK_ALIKE_FILES:
        p = folder / name
        out[name] = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "MISSING"
    return out


def snapshot(folder: Path) -> dict[str, str]:
    """Every entry under ``folder``: 'dir' or the SHA-256 of the file."""
    out = {}
    for p in sorted(folder.rglob("*")):
        rel = str(p.relative_to(folder))
        out[rel] = "dir" if p.is_dir() else hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def sha(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def persons(folder: Path, n: int = 600, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"Person ID": np.arange(n) + 1000, "region": rng.integers(1, 4, n),
                       "sex": rng.integers(1, 3, n), "age": rng.integers(1, 9, n),
                       "job": rng.integers(1, 6, n)})
    path = folder / "persons.csv"
    df.to_csv(path, index=False)
    return path


def small_run(data: Path, seed: int):
    """A release of ``data`` with a published PRAM matrix (its certificate lists it)."""
    from sdckit.io import read_microdata
    from sdckit.masking.remove import RemoveVariables
    from sdckit.pram.steps import Pram
    from sdckit.release import Release

    md = read_microdata(data, key_vars=["region", "sex", "job"])
    run = Release(md, [RemoveVariables(["Person ID"]), Pram(["job"], min_diagonal=0.8)],
                  {"k_anonymity": 2, "min_diagonal": 0.8}, rng=seed).run()
    assert run.passed
    return run


def keypair(folder: Path, name: str = "steward") -> tuple[Path, Path]:
    from sdckit.report.signing import generate_keypair

    folder.mkdir(parents=True, exist_ok=True)
    return generate_keypair(folder, name)


def run_id(folder: Path) -> str | None:
    cert = folder / "certificate.json"
    if cert.is_file():
        return json.loads(cert.read_text())["run_id"]
    return None


def mark_id(folder: Path) -> str | None:
    from sdckit.io.atomic import read_mark

    m = read_mark(folder)
    return None if m is None else m["run_id"]


def write_in_child(fn, *, kill_at: str | None = None, no_exchange: bool = False, timeout: float = 600) -> int:
    """Run ``fn()`` in a forked child; with ``kill_at`` the child ends at that switch point as a
    SIGKILL would end it (``os._exit``: no clean-up, no finally). Returns the child's exit status.

    The chart bundle is built in the parent first: building it starts vl-convert's JavaScript
    runtime, whose threads a forked child does not inherit (the child would wait for them for
    ever when a test earlier in the same process had started the runtime)."""
    from sdckit.report.charts import vega_script

    vega_script()
    pid = os.fork()
    if pid == 0:  # the child
        code = 0
        try:
            if kill_at is not None:
                os.environ["SDCKIT_TEST_KILL_AT"] = kill_at
            if no_exchange:
                os.environ["SDCKIT_TEST_NO_EXCHANGE"] = "1"
            fn()
        except BaseException:  # noqa: BLE001 - the child reports by its exit status only
            code = 3
        os._exit(code)
    import signal
    import time

    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:  # a hung child fails the test instead of the suite
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise AssertionError(f"the child process did not end within {timeout} s")
        time.sleep(0.02)
