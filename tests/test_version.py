"""The version is written in one place (src/sdckit/_version.py) and read from there by the
package metadata, ``sdckit.__version__``, the reports and the certificate."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import sdckit
from sdckit import _version

ROOT = Path(__file__).resolve().parents[1]


def test_pyproject_reads_the_version_from_the_one_module():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"]
    assert "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "sdckit._version.__version__"}


def test_the_package_exports_that_version():
    assert sdckit.__version__ == _version.__version__
    assert re.fullmatch(r"\d+\.\d+\.\d+([.-]?\w+)*", sdckit.__version__)


def test_no_other_module_writes_a_version_literal():
    # a second copy (e.g. a fallback "0.1.0") drifts: every module reads sdckit.__version__
    literal = _version.__version__
    copies = []
    for path in sorted((ROOT / "src" / "sdckit").rglob("*.py")):
        if path.name == "_version.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value == literal:
                copies.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not copies, f"the version {literal!r} is written again in: {copies}"
