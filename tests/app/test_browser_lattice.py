"""The lattice view of a ``generalise`` step in headless Chromium (Debian's, driven by Playwright),
on the labelled SPSS census sample of ``test_browser_flows``: hierarchies for Region, Sex, Age and
Marital Status written as ARX files, a generalise step added from the step menu, and its card's
solution space checked: the picture is drawn, the chosen node is named in words, a neighbour's
figures are shown, a click on a node names its levels, and the page scan of the other browser
tests finds no raw JSON or bare parameter name. Screenshot ``app_lattice.png`` (to
``SDCKIT_APP_SCREENSHOTS``, as there)."""

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
# ARX hierarchy files (raw value; level 1; ...), the sample's codes grouped as its code list reads
HIERARCHIES = {
    "Region": [[f"E1200000{i}", "England", "*"] for i in range(1, 10)] + [["W92000004", "Wales", "*"]],
    "Sex": [["1", "*"], ["2", "*"]],
    "Age": [["1", "0-24", "0-44", "*"], ["2", "0-24", "0-44", "*"], ["3", "25-44", "0-44", "*"],
            ["4", "25-44", "0-44", "*"], ["5", "45-64", "45 and over", "*"], ["6", "45-64", "45 and over", "*"],
            ["7", "65 and over", "45 and over", "*"], ["8", "65 and over", "45 and over", "*"]],
    "Marital_Status": [["1", "not married", "*"], ["2", "married", "*"], ["3", "not married", "*"],
                       ["4", "not married", "*"], ["5", "not married", "*"]],
}


def test_a_generalise_step_shows_its_lattice(labelled_server, tmp_path):  # noqa: F811
    playwright = pytest.importorskip("playwright.sync_api")
    shots = Path(os.environ.get("SDCKIT_APP_SCREENSHOTS") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    hier = tmp_path / "wb" / "hierarchies_census"   # in the work folder: the form names it relative to it
    hier.mkdir(parents=True)
    for qi, rows in HIERARCHIES.items():
        (hier / f"census_{qi}.csv").write_text("".join(";".join(r) + "\n" for r in rows), encoding="utf-8")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1360, "height": 1000})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{labelled_server}/?token={TOKEN}")
        page.wait_for_selector("button.pick[data-name='census_labelled.sav']")
        page.click("button.pick[data-name='census_labelled.sav']")
        page.wait_for_selector("#vartable")
        page.evaluate(API, ["/api/roles", {"roles": {"key_vars": list(HIERARCHIES)}}])
        page.evaluate(API, ["/api/steps", {"action": "add", "step": {"method": "remove", "variables": ["Person_ID"]}}])
        page.goto(f"{labelled_server}/#steps")
        page.reload()

        # the step menu: generalise with the hierarchies' folder, k = 5, at most 2% suppressed
        page.wait_for_selector("#methodsel")
        page.select_option("#methodsel", "generalise")
        form = page.locator("#stepform .form")
        form.locator("[name='hierarchy_dir']").fill(hier.name)
        form.locator("[name='k']").fill("5")
        form.locator("[name='suppression']").fill("2")   # the form reads a share as a percentage
        scan(page, "steps: generalise form")
        page.click("#addstep")
        page.wait_for_function("document.querySelectorAll('.stepcard').length === 2")
        card = page.locator(".stepcard").nth(1)
        card.locator(".lattice .latchart svg").wait_for(timeout=60_000)

        # the counts in a sentence, the chosen node in words, the neighbours with their figures
        lattice = card.locator(".lattice")
        sentence = lattice.locator("p.sentence").inner_text()
        assert "The lattice has 72 nodes" in sentence and "The search checked" in sentence
        chosen = lattice.locator(".latchosen").inner_text()
        for qi in HIERARCHIES:
            assert f"{qi}: level " in chosen
        assert "records" in chosen and "classes" in chosen
        rows = lattice.locator("table.latnb tr")
        assert rows.count() >= 2
        first = rows.nth(1).inner_text()
        assert "one level" in first and ("satisfies the models" in first or "fails" in first)
        assert any(ch.isdigit() for ch in rows.nth(1).locator("td").nth(2).inner_text())
        assert lattice.locator(".latlegend").inner_text().count("satisfies") >= 2

        # a click on the chosen node (the last layer's mark) names its levels in the panel below
        lattice.locator(".latchart g.mark-symbol").last.locator("path").first.click(force=True)
        page.wait_for_function("document.querySelector('.latpick').innerText.includes('chosen node')")
        picked = lattice.locator(".latpick").inner_text()
        assert "Age: level" in picked and "records suppressed" in picked

        scan(page, "steps: generalise card with its lattice")
        page.mouse.move(0, 0)   # no tooltip in the picture
        page.wait_for_timeout(300)
        lattice.scroll_into_view_if_needed()
        lattice.screenshot(path=str(shots / "app_lattice.png"))
        assert errors == []
        browser.close()
