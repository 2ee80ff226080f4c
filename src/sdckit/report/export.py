"""Reading back a written release, and exporting its report as PDF with headless Chromium."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..errors import InputError, SDCError
from ..io.atomic import atomic_path

_PUBLIC_KEYS = ("data", "steps", "gate", "passed")


def release_summary(release_dir: str | os.PathLike) -> dict:
    """The public figures of a release folder (never its seeds), from its internal JSON report."""
    release_dir = Path(release_dir)
    if not release_dir.is_dir():
        raise InputError(f"{release_dir}: no such release folder (run sdckit protect or sdckit demo first).")
    found = sorted(release_dir.glob("*.json"))
    internal = next((p for p in found if "internal" in p.name), None)
    if internal is None:
        raise InputError(f"{release_dir}: holds no internal_report.json; is it a folder written by sdckit?")
    d = json.loads(internal.read_text("utf-8"))
    public = {k: d[k] for k in _PUBLIC_KEYS if k in d}
    report = next((p for p in sorted(release_dir.glob("*.html")) if "internal" not in p.name), None)
    return {"n_records": public["data"]["n_records"], "steps": [s["method"] for s in public["steps"]],
            "gate": public["gate"], "passed": public["passed"],
            "report": str(report) if report else None}


def report_to_pdf(html_path: str | os.PathLike, pdf_path: str | os.PathLike | None = None) -> Path:
    """Print an HTML report to PDF with Debian's headless Chromium (atomic write)."""
    html_path = Path(html_path)
    pdf_path = Path(pdf_path) if pdf_path else html_path.with_suffix(".pdf")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if chromium is None:
        raise SDCError("PDF export needs a headless Chromium: install Debian's package 'chromium' "
                       "(apt-get install chromium), or print report.html from a browser.")
    with tempfile.TemporaryDirectory() as profile, atomic_path(pdf_path) as tmp:
        r = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                            "--no-first-run", "--disable-background-networking", "--disable-component-update",
                            "--disable-sync", f"--user-data-dir={profile}", "--no-pdf-header-footer",
                            f"--print-to-pdf={tmp}", html_path.resolve().as_uri()],
                           capture_output=True, text=True, timeout=180)
        if r.returncode != 0 or not tmp.exists() or tmp.stat().st_size == 0:
            raise SDCError(f"Chromium could not print {html_path} to PDF: {r.stderr.strip()[-300:]}")
    return pdf_path
