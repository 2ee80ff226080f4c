"""The hierarchy editor and the report download in headless Chromium (Debian's, driven by
Playwright), on the labelled SPSS census sample of ``test_browser_flows``: a grouping
hierarchy of Age built, its levels shown, saved and attached to a recode step; then a release
with a title, organisation and release, and its public report (HTML, PDF) and certificate
downloaded. Both screens are scanned as the flows' screens are. Screenshots as there
(``SDCKIT_APP_SCREENSHOTS``: ``app_hierarchy.png``, ``app_report_download.png``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.app.test_browser_flows import ARGS, CHROMIUM, TOKEN, labelled_server, scan  # noqa: F401 - fixture

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine (Debian: apt-get install chromium)")

API = """async ([path, body]) => {
  const csrf = document.querySelector('meta[name="csrf"]').content;
  const r = await fetch(path, {method: "POST", headers: {"Content-Type": "application/json", "X-CSRF-Token": csrf},
                               body: JSON.stringify(body), credentials: "same-origin"});
  if (!r.ok) throw new Error(await r.text());
  return true;
}"""
DOWNLOAD = """async (path) => {
  const r = await fetch(path, {credentials: "same-origin"});
  const b = new Uint8Array(await r.arrayBuffer());
  return {status: r.status, disposition: r.headers.get("content-disposition"), type: r.headers.get("content-type"),
          head: String.fromCharCode(...b.slice(0, 5)), text: new TextDecoder().decode(b)};
}"""


def test_hierarchy_editor_and_report_download(labelled_server, tmp_path):  # noqa: F811
    playwright = pytest.importorskip("playwright.sync_api")
    shots = Path(os.environ.get("SDCKIT_APP_SCREENSHOTS") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1360, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{labelled_server}/?token={TOKEN}")
        page.wait_for_selector("button.pick[data-name='census_labelled.sav']")
        page.click("button.pick[data-name='census_labelled.sav']")
        page.wait_for_selector("#vartable")
        page.evaluate(API, ["/api/roles", {"roles": {"key_vars": ["Region", "Sex", "Age", "Marital_Status"]}}])
        page.evaluate(API, ["/api/steps", {"action": "add", "step": {"method": "remove", "variables": ["Person_ID"]}}])
        page.goto(f"{labelled_server}/#hierarchy")
        page.reload()

        # the hierarchy editor: Age's eight codes grouped by 2, then 4
        page.wait_for_selector("#hcol")
        page.select_option("#hcol", "Age")
        page.select_option("#hkind", "grouping")
        page.fill("#hs_sizes", "2, 4")
        page.click("#hshow")
        page.wait_for_selector("#hlevels")
        text = page.locator("#hout").inner_text()
        assert "value: 8 labels" in text and "level 1: 4 labels" in text and "level 2: 2 labels" in text
        assert page.locator("#hlevels tr").nth(1).inner_text().split("\t")[:3] == ["1", "[1..2]", "[1..4]"]
        page.click("#hsave")
        page.wait_for_selector("#hrecode")
        assert "Saved: Age.csv" in page.locator("#hsaved").inner_text()
        scan(page, "hierarchy editor")
        page.screenshot(path=str(shots / "app_hierarchy.png"), full_page=True)
        page.select_option("#hlevel", "1")
        page.click("#hrecode")
        page.wait_for_function("document.querySelectorAll('.stepcard').length === 2")
        page.wait_for_selector(".stepcard:nth-of-type(2) .body >> text=[1..2]")

        # the release with the report's fields, then its downloads
        page.click("#tabs a[data-page='release']")
        page.wait_for_selector("#reptitle")
        page.evaluate(API, ["/api/steps", {"action": "add", "step": {"method": "local_suppression", "k": 2}}])
        page.evaluate(API, ["/api/gate", {"gate": {"k_anonymity": 2}}])
        page.reload()   # the page derives its forms from the session's state (set above through the API)
        page.wait_for_selector("#reptitle")
        page.wait_for_selector("#gateverdict table")
        page.fill("#outdir", "browser_release")
        page.fill("#reptitle", "Census teaching file, grouped ages")
        page.fill("#reporg", "Office of Examples")
        page.fill("#reprel", "R2 (test)")
        page.click("#dorelease")
        page.wait_for_selector("#downloads", timeout=180_000)
        scan(page, "release with downloads")
        page.screenshot(path=str(shots / "app_report_download.png"), full_page=True)
        html = page.evaluate(DOWNLOAD, page.get_attribute("#dlhtml", "href"))
        assert html["status"] == 200 and "attachment" in html["disposition"]
        assert "Census teaching file, grouped ages" in html["text"] and "Office of Examples" in html["text"]
        cert = page.evaluate(DOWNLOAD, page.get_attribute("#dlcert", "href"))
        assert cert["status"] == 200 and cert["type"].startswith("application/json")
        pdf = page.evaluate(DOWNLOAD, page.get_attribute("#dlpdf", "href"))
        assert pdf["status"] == 200 and pdf["head"] == "%PDF-"
        assert errors == []
        browser.close()
