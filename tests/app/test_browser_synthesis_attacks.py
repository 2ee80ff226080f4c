"""The synthesis and attack panels in headless Chromium (Debian's, driven by Playwright), on
the first 2,000 records of the bundled census sample, with the page scan of
``test_browser_flows.py`` on every screen.

The walk: open, roles (keys and a sensitive variable), a synthesise step from its generated
form (the per-variable method table, a rule holding commas typed in its own row, a formula
row), the step's synthesis panel (sentences, tables with "%", the one-way utility chart), the
form opened again for editing (the rule still whole), then the attack panel run as a job (its
progress, then each attack's figure with its 95% interval and its sentence).

Screenshots go to ``SDCKIT_APP_SCREENSHOTS`` (``docs/img/app`` for the documentation), else to a
temporary folder.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

from tests.app._server import running_app
from tests.app.test_browser_flows import ARGS, CHROMIUM, DEMO, scan

TOKEN = "e2e-panels-token-41d7b2"
KEYS = ["Region", "Sex", "Age", "Marital Status"]
RULE = "Age in [1, 2] -> `Marital Status` == 1"
SYNTHESISED = ["Region", "Sex", "Age", "Marital Status", "Health", "Occupation"]

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine (Debian: apt-get install chromium); "
                                                         "the browser test needs a real browser")


@pytest.fixture
def panels_server(tmp_path):
    pd.read_csv(DEMO).head(2000).to_csv(tmp_path / "census2000.csv", index=False)
    with running_app(tmp_path, TOKEN) as base:
        yield base


def test_synthesis_and_attack_panels_in_words(panels_server, tmp_path):
    playwright = pytest.importorskip("playwright.sync_api")
    shots = Path(os.environ.get("SDCKIT_APP_SCREENSHOTS") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    server = panels_server
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1360, "height": 900})
        page.set_default_timeout(180000)
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{server}/?token={TOKEN}")
        page.click("button.pick[data-name='census2000.csv']")
        page.wait_for_selector("#vartable")

        # roles: four keys, Health sensitive
        page.click("#tabs a[data-page='roles']")
        page.wait_for_selector("select[data-col]")
        for sel in page.locator("select[data-col]").all():
            col = sel.get_attribute("data-col")
            sel.select_option("key_vars" if col in KEYS else ("sensitive" if col == "Health" else ""))
        page.click("#saveroles")
        page.wait_for_selector("#rolerisk .risk-uniques")

        # the synthesise form: a per-variable method table, one rule per row, formula rows
        page.click("#tabs a[data-page='steps']")
        page.wait_for_selector("#methodsel")
        page.select_option("#methodsel", "synthesise")
        form = page.locator("#stepform .form")
        form.locator("[name='variables']").select_option(SYNTHESISED)
        methods = form.locator(".field[data-param='methods'] table.maptable")
        assert methods.locator("tr[data-col]").count() >= len(SYNTHESISED)  # one row per variable
        assert "Health" in methods.locator("label").all_inner_texts()
        methods.locator("tr[data-col='Health'] select").select_option("sample")
        options = methods.locator("tr[data-col='Health'] option").all_inner_texts()
        assert "cart" in options and "normrank" in options  # the declared choices
        rules = form.locator(".field[data-param='rules']")
        rules.locator(".listrow input").first.fill(RULE)
        rules.locator("button.rowadd").click()
        assert rules.locator(".listrow").count() == 2
        rules.locator(".listrow").nth(1).locator("button.rowdel").click()
        assert rules.locator(".listrow").count() == 1
        assert form.locator(".field[data-param='passive'] .maprow select").count() == 1
        assert form.locator(".field[data-param='missing_codes'] .maprow input").count() == 1
        scan(page, "steps: synthesise form")
        page.locator("#addcard").screenshot(path=str(shots / "app_synthesis_form.png"))
        page.click("#addstep")
        page.wait_for_selector(".stepcard .synthpanel .synthchart svg")
        panel = page.locator(".stepcard .synthpanel")
        text = panel.inner_text()
        assert "S_pMSE" in text and "replicated uniques" in text and "DiSCO" in text
        row = panel.locator("table.synthdisclosure tr", has_text="Health").inner_text()
        assert row.count("%") == 5  # every share with its percent sign
        assert "{" not in text
        scan(page, "steps: synthesis panel")
        page.locator(".stepcard").first.screenshot(path=str(shots / "app_synthesis.png"))

        # opened again for editing: the rule with commas is one row, the method kept
        page.locator(".stepcard").first.locator("button[data-a='edit']").click()
        rows = page.locator("#stepform .field[data-param='rules'] .listrow input")
        assert rows.count() == 1 and rows.first.input_value() == RULE
        assert page.locator("#stepform tr[data-col='Health'] select").input_value() == "sample"

        # the attack panel: a job with progress, then every figure with its interval
        page.click("#tabs a[data-page='attacks']")
        page.wait_for_selector("#runatk")
        page.fill("#atk-n", "150")
        # the tie rule, in words, wired to the job
        ties = page.locator("#atk-tie option").all_inner_texts()
        assert len(ties) == 3 and any("Anonymeter" in t for t in ties)
        page.select_option("#atk-tie", "first")
        scan(page, "attacks (form)")
        page.click("#runatk")
        page.wait_for_selector("#atkprog .progress")
        page.wait_for_selector("#atkout table.attacktable", timeout=300000)
        page.wait_for_selector("#atkout .atkchart svg")
        measured = page.locator("#atkout table.attacktable td.measured").all_inner_texts()
        assert len(measured) == 5 and all("95% interval" in m for m in measured)
        sentences = page.locator("#atkout ul.attacks li").all_inner_texts()
        assert sentences[0].startswith("Singling out:") and sentences[2].startswith("Inference: guessing Health")
        assert "comes first in the release" in page.locator("#atkout").inner_text()
        scan(page, "attacks")
        page.screenshot(path=str(shots / "app_attacks.png"), full_page=True)
        # after a reload the run is still shown
        page.reload()
        page.click("#tabs a[data-page='attacks']")
        page.wait_for_selector("#atkout table.attacktable")
        assert errors == [], errors
        browser.close()
