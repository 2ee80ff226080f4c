"""The documentation site builds with MkDocs (Material + mkdocstrings) with no warning."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_site_builds_strict(tmp_path):
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings")
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-f", str(ROOT / "mkdocs.yml"),
                        "-d", str(tmp_path / "site")], capture_output=True, text=True, timeout=300,
                       env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    assert "WARNING" not in r.stderr, r.stderr[-3000:]
    site = tmp_path / "site"
    for page in ("index.html", "report.html", "guides/release_census.html", "guides/verify.html",
                 "guides/from_sdcmicro.html", "api/report.html"):
        assert (site / page).is_file(), page
    # the API pages come from the numpydoc docstrings
    assert "verify_release" in (site / "api" / "report.html").read_text()
    # the report page shows the screenshots
    report = (site / "report.html").read_text()
    for img in ("report_public.png", "report_rumap.png", "report_internal.png", "report_table.png"):
        assert img in report and (site / "img" / img).is_file()
    shutil.rmtree(site)
