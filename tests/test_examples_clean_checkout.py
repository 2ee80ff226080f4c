"""No reproduction writes into the checkout.

Every example under ``examples/`` (and ``examples/tables/``) is run in ``--quick`` mode in a
subprocess. The run happens in a copy of the checkout's examples/ and docs/ folders (src/ and
the reference data beside the checkout are linked, not copied), so that edits made to the
real tree by anyone else while the test runs cannot be mistaken for the example's: a script
that writes beside itself (``ROOT / "docs" / ...``) writes into the copy, where it is seen.
Before and after the run the test takes the file list and modification times of the copy's
examples/ and docs/ (what ``git status --porcelain`` of those paths would report) and
requires them unchanged: outputs go to the folder given with ``--out`` or to a temporary one.

The runs take a minute or two in all, so they are marked slow; the fast test checks the
declaration every writing example must have (an ``--out`` option).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WATCHED = ("examples", "docs")
EXAMPLES = sorted(p for p in [*ROOT.glob("examples/*.py"), *ROOT.glob("examples/tables/*.py")]
                  if not p.name.startswith("_"))
WRITES = re.compile(r"write_bytes|write_text|to_csv|to_parquet|savefig|\.mkdir\(|open\([^)]*['\"][wa]")


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """(mtime, size) of every file under root's examples/ and docs/ (caches excluded, as git
    ignores them)."""
    snap = {}
    for top in WATCHED:
        for dirpath, dirnames, filenames in os.walk(root / top):
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
            for f in filenames:
                st = Path(dirpath, f).stat()
                snap[str(Path(dirpath, f).relative_to(root))] = (st.st_mtime_ns, st.st_size)
    return snap


def _sandbox(tmp: Path) -> Path:
    """A copy of examples/ and docs/ beside links to src/ and to ../shared (the data)."""
    root = tmp / "checkout"
    root.mkdir()
    for top in WATCHED:
        shutil.copytree(ROOT / top, root / top, ignore=shutil.ignore_patterns("__pycache__"))
    (root / "src").symlink_to(ROOT / "src", target_is_directory=True)
    if (ROOT.parent / "shared").exists():
        (tmp / "shared").symlink_to(ROOT.parent / "shared", target_is_directory=True)
    return root


def test_examples_are_found():
    names = {p.name for p in EXAMPLES}
    # the reproductions this test exists for (a rename would silently drop them)
    assert {"matloff_prgeng.py", "postmask_tables.py", "cator_experiment.py",
            "evolve_census.py"} <= names


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: str(p.relative_to(ROOT)))
def test_writing_examples_take_an_output_folder(path: Path):
    """A script that writes files must let the caller choose where (``--out``)."""
    text = path.read_text()
    if WRITES.search(text):
        assert '"--out"' in text, f"{path.name} writes files but has no --out option"
        assert "docs/methods/img" not in text and '"docs" / "methods"' not in text, \
            f"{path.name} names a folder of the checkout as an output"


@pytest.mark.slow
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: str(p.relative_to(ROOT)))
def test_quick_run_leaves_the_checkout_unchanged(path: Path, tmp_path: Path):
    root = _sandbox(tmp_path)
    script = root / path.relative_to(ROOT)
    before = _snapshot(root)
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONDONTWRITEBYTECODE": "1"}
    run = subprocess.run([sys.executable, str(script), "--quick"], cwd=root, capture_output=True,
                         text=True, timeout=600, env=env)
    after = _snapshot(root)
    assert run.returncode == 0, run.stderr[-2000:]
    last = run.stdout.strip().splitlines()[-1]
    json.loads(last)                                  # the headline JSON line
    added = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    touched = sorted(k for k in set(before) & set(after) if before[k] != after[k])
    assert not (added or removed or touched), \
        f"{path.name} changed the checkout: added {added}, removed {removed}, modified {touched}"
