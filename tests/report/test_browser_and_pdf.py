"""The demo report in headless Chromium (Playwright) and printed to PDF.

The browser checks what a person signing the release sees: the verdict box on the first
screen, no raw JSON in the visible text, the release's own point on the R-U map and the map's
threshold equal to the gate's threshold (read from the drawn chart, not from our inputs).
"""

import json
import re
import unicodedata

import pytest

from tests.report.demo_release import BROWSER_ARGS, chromium_or_skip, write_demo_release


def _drawn_risk(label: str) -> float:
    """The risk (x) of a point of the R-U map from its ARIA label: the axis title, then the
    value as a percentage."""
    return float(re.search(r"% of records\): ([0-9.e-]+)%", label).group(1)) / 100


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("browser")
    return write_demo_release(out)


@pytest.fixture(scope="module")
def page(demo):
    chromium = chromium_or_skip()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=BROWSER_ARGS)
        pg = browser.new_page(viewport={"width": 1280, "height": 900})
        errors = []
        pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.goto(demo[1]["report"].as_uri())
        pg.wait_for_function("window.sdckitViews && window.sdckitViews['ru-map']", timeout=30_000)
        yield pg, errors
        browser.close()


def test_verdict_box_is_on_the_first_screen(page):
    pg, errors = page
    box = pg.locator("#verdict").bounding_box()
    assert box is not None and box["y"] + min(box["height"], 120) <= 900
    assert box["y"] < 900
    assert "Passed" in pg.locator("#verdict").inner_text()
    assert not errors, errors


def test_no_raw_json_in_the_visible_text(page):
    pg, _ = page
    text = pg.evaluate("document.body.innerText")
    assert '{"' not in text
    assert len(text) > 2000  # the report did render


def test_release_point_and_gate_threshold_on_the_ru_map(page, demo):
    pg, _ = page
    run = demo[0]
    gate = next(o for o in run.gate if o.name == "max_global_risk")
    labels = pg.eval_on_selector_all("#ru-map svg [aria-label]", "els => els.map(e => e.getAttribute('aria-label'))")
    release = [lab for lab in labels if "what: this release" in lab]
    assert release, labels[:20]
    # the drawn point's risk is the gate's measured global risk, on the x axis as a percentage
    # (Vega's label prints 7 significant digits)
    risk = _drawn_risk(release[0])
    assert risk == pytest.approx(gate.value["global_risk"], rel=1e-6)
    rule = [lab for lab in labels if "threshold: " in lab and "this release" not in lab]
    assert len(rule) == 1
    drawn = float(re.search(r"threshold: ([0-9.e-]+)%", rule[0]).group(1)) / 100
    assert drawn == pytest.approx(gate.threshold, rel=1e-9)
    # and the verdict box states the same threshold for the same gate
    cell = pg.locator("#verdict tr[data-gate='max_global_risk']").get_attribute("data-threshold")
    assert float(cell) == drawn
    # the release sits on the safe side of the line it is judged by
    assert risk <= drawn


def test_pdf_is_a4_with_page_numbers_title_page_and_contents(demo, tmp_path):
    chromium_or_skip()
    from pypdf import PdfReader

    from sdckit.report.export import report_to_pdf

    pdf = report_to_pdf(demo[1]["report"], tmp_path / "report.pdf")
    reader = PdfReader(pdf)
    n = len(reader.pages)
    assert n >= 4
    for p in reader.pages:  # A4 = 210 x 297 mm = 595.3 x 841.9 pt
        assert float(p.mediabox.width) == pytest.approx(595.3, abs=1.0)
        assert float(p.mediabox.height) == pytest.approx(841.9, abs=1.0)
    first = unicodedata.normalize("NFKC", reader.pages[0].extract_text())  # PDF text has ligatures
    assert "sdckit demonstration" in first and "Census sample, public-use file" in first
    assert "Page" not in first  # the title page has no number
    assert "Contents" in reader.pages[1].extract_text()
    for i in range(1, n):
        assert f"Page {i + 1} of {n}" in reader.pages[i].extract_text()


def test_pdf_letter_option(demo, tmp_path):
    chromium_or_skip()
    from pypdf import PdfReader

    from sdckit.report.export import report_to_pdf

    reader = PdfReader(report_to_pdf(demo[1]["report"], tmp_path / "letter.pdf", page_size="Letter"))
    box = reader.pages[0].mediabox  # US Letter = 8.5 x 11 in = 612 x 792 pt
    assert float(box.width) == pytest.approx(612, abs=1.0) and float(box.height) == pytest.approx(792, abs=1.0)


def test_certificate_sits_beside_the_report(demo):
    _, paths, _ = demo
    cert = json.loads((paths["report"].parent / "certificate.json").read_text())
    assert cert["kind"] == "public" and any(f["name"] == "report.html" for f in cert["files"])


@pytest.mark.slow
def test_sdckit_demo_report_in_the_browser_and_verified(tmp_path):
    """The full ``sdckit demo`` (its long sweep included): the same browser checks on its
    report, the threshold and measured value read from its certificate, and ``sdckit verify``."""
    import subprocess
    import sys

    chromium = chromium_or_skip()
    r = subprocess.run([sys.executable, "-m", "sdckit", "demo", "--json"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=1200)
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout)
    cert = json.loads(open(out["certificate"]).read())
    gate = next(g for g in cert["gate"] if g["name"] == "max_global_risk")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=BROWSER_ARGS)
        pg = browser.new_page(viewport={"width": 1280, "height": 900})
        pg.goto(f"file://{out['report']}")
        pg.wait_for_function("window.sdckitViews && window.sdckitViews['ru-map']", timeout=30_000)
        assert pg.locator("#verdict").bounding_box()["y"] < 900
        assert '{"' not in pg.evaluate("document.body.innerText")
        labels = pg.eval_on_selector_all("#ru-map svg [aria-label]", "els => els.map(e => e.getAttribute('aria-label'))")
        browser.close()
    release = next(lab for lab in labels if "what: this release" in lab)
    assert _drawn_risk(release) == pytest.approx(gate["measured"], rel=1e-6)
    rule = next(lab for lab in labels if "threshold: " in lab and "this release" not in lab)
    drawn = float(re.search(r"threshold: ([0-9.e-]+)%", rule).group(1)) / 100
    assert drawn == pytest.approx(gate["threshold"], rel=1e-9)
    v = subprocess.run([sys.executable, "-m", "sdckit", "verify", str(tmp_path / "sdckit-demo"), "--json"],
                       capture_output=True, text=True, timeout=300)
    assert v.returncode == 0 and json.loads(v.stdout)["ok"] is True
