"""Screenshots of the release report pages for docs/report.md (run from the project root):

    .venv/bin/python docs/tools/report_screenshots.py

Runs ``sdckit demo`` and the delinquent-children table example in a temporary folder, opens
the pages in Debian's headless Chromium (Playwright) and writes docs/img/report_*.png.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
IMG = ROOT / "docs" / "img"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def main() -> None:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        subprocess.run([sys.executable, "-m", "sdckit", "demo", "--json"], cwd=tmp, check=True,
                       capture_output=True)
        for f in (ROOT / "examples" / "tables").glob("delinquent*"):
            shutil.copy(f, tmp / f.name)
        subprocess.run([sys.executable, "-m", "sdckit", "table", "delinquent.toml", "--json"], cwd=tmp,
                       check=True, capture_output=True)
        demo = tmp / "sdckit-demo"
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 900})

            def load(path: Path, wait_map: bool = False) -> None:
                page.goto(path.as_uri())
                if wait_map:
                    page.wait_for_function("window.sdckitViews && window.sdckitViews['ru-map']")
                page.wait_for_timeout(800)

            load(demo / "report.html", wait_map=True)
            page.screenshot(path=IMG / "report_public.png")
            page.locator("#risk").scroll_into_view_if_needed()
            page.screenshot(path=IMG / "report_risk.png", clip=_section(page, "#risk", 1150), full_page=True)
            page.screenshot(path=IMG / "report_utility.png", clip=_section(page, "#utility", 1100), full_page=True)
            page.screenshot(path=IMG / "report_steps.png", clip=_section(page, "#step-4", 1100), full_page=True)
            page.locator("#ru-map").scroll_into_view_if_needed()
            page.screenshot(path=IMG / "report_rumap.png", clip=_section(page, "#extra-0", 720), full_page=True)
            load(demo.with_name("sdckit-demo-internal") / "internal_report.html")
            page.screenshot(path=IMG / "report_internal.png")
            load(tmp / "out" / "delinquent_public.html")
            page.screenshot(path=IMG / "report_table.png")
            page.emulate_media(media="print")
            load(demo / "report.html", wait_map=True)
            page.screenshot(path=IMG / "report_print_title.png")
            browser.close()
    for f in sorted(IMG.glob("report_*.png")):
        print(f.relative_to(ROOT))


def _section(page, selector: str, height: int) -> dict:
    box = page.locator(selector).bounding_box()
    scroll = page.evaluate("window.scrollY")
    return {"x": 0, "y": box["y"] + scroll - 10, "width": 1280, "height": height}


if __name__ == "__main__":
    main()
