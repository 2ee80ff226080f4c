"""Reading back a written release, and exporting its report as PDF with headless Chromium."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..errors import InputError, SDCError
from ..io.atomic import atomic_path

_PUBLIC_KEYS = ("data", "steps", "gate", "passed", "verdict")


def release_summary(release_dir: str | os.PathLike) -> dict:
    """The public figures of a release folder (never its seeds), from its internal JSON report."""
    release_dir = Path(release_dir)
    if not release_dir.is_dir():
        raise InputError(f"{release_dir}: no such release folder (run sdckit protect or sdckit demo first).")
    # the internal files sit in the sibling folder "<name>-internal" (older releases: inside)
    sibling = release_dir.with_name(release_dir.name + "-internal")
    found = sorted(sibling.glob("*.json")) + sorted(release_dir.glob("*.json"))
    internal = next((p for p in found if "internal" in p.name and "certificate" not in p.name), None)
    if internal is None:
        raise InputError(f"{release_dir}: no internal_report.json here or in {sibling.name}/; is it a "
                         "folder written by sdckit protect?")
    try:
        d = json.loads(internal.read_text("utf-8"))
        public = {k: d[k] for k in _PUBLIC_KEYS if k in d}
        _ = (public["data"]["n_records"], [s["method"] for s in public["steps"]], public["gate"], public["passed"])
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{internal.name}: is not valid JSON ({exc.msg if hasattr(exc, 'msg') else exc}); "
                         "the file is damaged: write the release again with sdckit protect") from None
    except (KeyError, TypeError) as exc:
        raise InputError(f"{internal.name}: lacks the key {exc} that sdckit writes; the file is damaged or "
                         "not sdckit's: write the release again with sdckit protect") from None
    report = next((p for p in sorted(release_dir.glob("*.html")) if "internal" not in p.name), None)
    return {"n_records": public["data"]["n_records"], "steps": [s["method"] for s in public["steps"]],
            "gate": public["gate"], "passed": public["passed"], "verdict": public.get("verdict"),
            "report": str(report) if report else None}


PAGE_SIZES = {"A4": "A4", "Letter": "Letter"}


def report_to_pdf(html_path: str | os.PathLike, pdf_path: str | os.PathLike | None = None, *,
                  page_size: str | None = None) -> Path:
    """Print an HTML report to PDF with Debian's headless Chromium (atomic write).

    The report's print style gives the pages: a title page (organisation, dataset, release
    from the spec's ``[report]`` section), a table of contents, then the sections, with
    "Page n of m" at the foot of every page but the first (CSS ``@page`` margin boxes). The
    charts are drawn by their script before printing (Chromium's virtual time budget).

    Parameters
    ----------
    page_size : {"A4", "Letter"}, optional
        A4 (595 x 842 pt) or US Letter (612 x 792 pt); by default the ``page_size`` of the
        spec's ``[report]`` section (read from ``certificate.json`` beside the report), else A4.
    """
    html_path = Path(html_path)
    if page_size is None:
        page_size = _spec_page_size(html_path.parent / "certificate.json") or "A4"
    if page_size not in PAGE_SIZES:
        raise SDCError(f"PDF page size must be one of {', '.join(PAGE_SIZES)}; got {page_size!r}.")
    html_path = Path(html_path)
    pdf_path = Path(pdf_path) if pdf_path else html_path.with_suffix(".pdf")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if chromium is None:
        raise SDCError("PDF export needs a headless Chromium: install Debian's package 'chromium' "
                       "(apt-get install chromium), or print report.html from a browser.")
    text = html_path.read_text("utf-8")
    # the page size is the report's CSS @page rule (its first one, in the head's style sheet;
    # the inlined chart script further on may itself contain any text); an HTML page without
    # it gets a rule of its own at the start of the head
    rule = "@page { size: A4;"
    if rule in text:
        text = text.replace(rule, f"@page {{ size: {PAGE_SIZES[page_size]};", 1)
    else:
        text = re.sub(r"<head[^>]*>", lambda m: m.group(0) + f"<style>@page {{ size: {PAGE_SIZES[page_size]}; }}</style>",
                      text, count=1)
    with tempfile.TemporaryDirectory() as work, atomic_path(pdf_path) as tmp:
        page = Path(work) / "page.html"  # beside nothing: the report is self-contained
        page.write_text(text, "utf-8")
        r = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                            "--no-first-run", "--disable-background-networking", "--disable-component-update",
                            "--disable-sync", f"--user-data-dir={Path(work) / 'profile'}", "--no-pdf-header-footer",
                            "--virtual-time-budget=20000", "--run-all-compositor-stages-before-draw",
                            f"--print-to-pdf={tmp}", page.resolve().as_uri()],
                           capture_output=True, text=True, timeout=180)
        if r.returncode != 0 or not tmp.exists() or tmp.stat().st_size == 0:
            raise SDCError(f"Chromium could not print {html_path} to PDF: {r.stderr.strip()[-300:]}")
    return pdf_path


def _spec_page_size(certificate: Path) -> str | None:
    """The ``[report] page_size`` of the release's spec, as its certificate records it."""
    try:
        spec = json.loads(certificate.read_text("utf-8")).get("spec") or {}
    except (OSError, ValueError):
        return None
    size = (spec.get("report") or {}).get("page_size")
    return size if size in PAGE_SIZES else None
