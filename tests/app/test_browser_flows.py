"""A steward's microdata release in headless Chromium (Debian's, driven by Playwright), on a
labelled SPSS copy of the bundled census sample, with a page scan of every screen.

The SPSS file is written here from the bundled CSV with the value labels of the sample's code
list (``src/sdckit/data/ATTRIBUTION.md``) and ``-9`` ("no code required") declared user-missing
in Health and Country of Birth. The walk: open, roles (a weight that is no sampling weight is
warned about), risk, recode, PRAM, local suppression, undo and redo, a branch, compare, gate
(global risk typed as a percentage), release. Every screen is scanned: no raw JSON, every form
control labelled with words (never a bare parameter name), no measured value with a ``{``, and
categories shown with their labels.

Screenshots go to ``SDCKIT_APP_SCREENSHOTS`` (``docs/img/app`` for the documentation), else to a
temporary folder.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from tests.app._server import running_app

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
TOKEN = "e2e-flows-token-7c1d0a"
DEMO = Path(__file__).resolve().parents[2] / "src" / "sdckit" / "data" / "uk_census2011_teaching_10k.csv"
# SPSS names hold no spaces: the columns are named with underscores, labelled with the CSV's names
KEYS = ["Region", "Sex", "Age", "Marital_Status", "Country_of_Birth"]
# the code list of ATTRIBUTION.md (Office for National Statistics), abridged as there
LABELS = {
    "Sex": {1: "male", 2: "female"},
    "Age": {1: "0-15", 2: "16-24", 3: "25-34", 4: "35-44", 5: "45-54", 6: "55-64", 7: "65-74", 8: "75 and over"},
    "Marital_Status": {1: "single", 2: "married or civil partnership", 3: "separated", 4: "divorced", 5: "widowed"},
    "Country_of_Birth": {1: "UK", 2: "non-UK", -9: "no code required"},
    "Health": {-9: "no code required", 1: "very good", 2: "good", 3: "fair", 4: "bad", 5: "very bad"},
}
JSON_LIKE = re.compile(r'\{\s*"|"\s*:\s*[\[{"\d]|\[\s*\{')

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine (Debian: apt-get install chromium); "
                                                         "the browser test needs a real browser")


@pytest.fixture
def labelled_server(tmp_path):
    pyreadstat = pytest.importorskip("pyreadstat")
    df = pd.read_csv(DEMO)
    names = {c: c.replace(" ", "_") for c in df.columns}
    df = df.rename(columns=names)
    pyreadstat.write_sav(df, str(tmp_path / "census_labelled.sav"), variable_value_labels=LABELS,
                         column_labels=list(names), missing_ranges={"Health": [-9], "Country_of_Birth": [-9]})
    with running_app(tmp_path, TOKEN) as base:
        yield base


SCAN = """() => {
  const out = {unlabelled: [], bare: [], json: [], braces: []};
  const visible = (e) => e.checkVisibility();
  for (const el of document.querySelectorAll('main input, main select, main textarea, header select')) {
    if (el.type === 'hidden' || !visible(el)) continue;
    const labels = Array.from(el.labels || []).map((l) => l.textContent.trim()).filter((t) => t);
    const aria = el.getAttribute('aria-label');
    if (!labels.length && !aria) { out.unlabelled.push(el.outerHTML.slice(0, 120)); continue; }
    const name = el.getAttribute('name');
    for (const t of labels) {
      const words = t.replace(/\\*|\\(.*?\\)/g, '').trim();
      if (name && (words === name || words === name.replace(/_/g, ' '))) out.bare.push(name);
    }
  }
  const text = document.querySelector('main').innerText;
  out.text = text;
  for (const el of document.querySelectorAll('.measured, .sentence, .params, .kv td')) {
    if (el.innerText.includes('{')) out.braces.push(el.innerText.slice(0, 120));
  }
  return out;
}"""


def scan(page, where: str) -> str:
    """Fail on an unlabelled control, a bare parameter name as a label, raw JSON, or a measured
    value with a brace; return the page's visible text."""
    r = page.evaluate(SCAN)
    assert r["unlabelled"] == [], (where, r["unlabelled"])
    assert r["bare"] == [], (where, r["bare"])
    assert r["braces"] == [], (where, r["braces"])
    m = JSON_LIKE.search(r["text"])
    assert m is None, (where, r["text"][max(0, m.start() - 80):m.end() + 80])
    return r["text"]


def test_a_labelled_microdata_release_with_a_scan_of_every_screen(labelled_server, tmp_path):
    playwright = pytest.importorskip("playwright.sync_api")
    shots = Path(os.environ.get("SDCKIT_APP_SCREENSHOTS") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    server = labelled_server
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1360, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("dialog", lambda d: d.accept("alternative"))
        page.goto(f"{server}/?token={TOKEN}")

        # 1. data: the SPSS file, its declared missing codes read as missing, labels shown
        page.wait_for_selector("button.pick[data-name='census_labelled.sav']")
        scan(page, "data (empty)")
        page.click("button.pick[data-name='census_labelled.sav']")
        page.wait_for_selector("#vartable")
        assert "declares the missing codes -9" in page.locator("#warnings").inner_text()
        row = page.locator("#vartable tr", has_text="Marital_Status").inner_text()
        assert "married or civil partnership" in row and "1.0" not in row
        page.click(".freqlink[data-col='Marital_Status']")
        page.wait_for_selector("#freqtable")
        labels = page.locator("#freqtable tr td:nth-child(2)").all_inner_texts()
        assert labels == [LABELS["Marital_Status"][c] for c in range(1, 6)]  # in the order of the codes
        page.click(".freqlink[data-col='Health']")
        page.wait_for_selector("#freqtable >> text=missing")
        page.wait_for_selector(".freqchart svg")
        health = page.locator("#freqtable").inner_text()
        assert "no code required" not in health and "very good" in health  # -9 is missing, not a category
        scan(page, "data")
        page.screenshot(path=str(shots / "app_data.png"), full_page=True)

        # 2. roles: a weight of 1-3 is warned about with its reason; then the five keys
        page.click("#tabs a[data-page='roles']")
        page.wait_for_selector("select[data-col]")

        def set_roles(weight: str | None) -> None:
            for sel in page.locator("select[data-col]").all():
                col = sel.get_attribute("data-col")
                sel.select_option("key_vars" if col in KEYS else ("weight" if col == weight else ""))
            page.click("#saveroles")
            page.wait_for_selector("#rolerisk .risk-uniques")

        set_roles("Population_Base")
        page.wait_for_selector("#warnings >> text=does not look like a sampling weight")
        assert "category code" in page.locator("#warnings").inner_text()
        set_roles(None)
        page.wait_for_function("!document.querySelector('#warnings').innerText.includes('sampling weight')")
        page.locator("button.addremove[data-col='Person_ID']").click()
        page.wait_for_selector("#removedcols button.addremove[data-col='Person_ID']:disabled")
        assert page.locator("select[data-col='Person_ID']").count() == 0  # a removed column holds no role
        scan(page, "roles")
        page.screenshot(path=str(shots / "app_roles.png"), full_page=True)

        # 3. risk: global risk as a percentage
        page.click("#tabs a[data-page='risk']")
        page.wait_for_selector("#risk-orig svg")
        assert re.fullmatch(r"\d+\.\d\d%", page.locator("#risk-orig .risk-global").inner_text())
        page.wait_for_selector("#riskrecords .riskiest")
        page.wait_for_selector("#utilitypanel h3")
        assert "widowed" in page.locator("#riskrecords").inner_text()  # key values by their labels
        scan(page, "risk")
        page.screenshot(path=str(shots / "app_risk.png"), full_page=True)

        # 4. steps: recode with the helper (labels beside the codes), PRAM, local suppression
        page.click("#tabs a[data-page='steps']")
        page.wait_for_selector("#methodsel")
        assert page.locator("#methodsel option[value='remove']").count() == 1
        page.select_option("#methodsel", "recode")
        page.select_option("#stepform [name='variable']", "Age")
        page.click("#stepform .grouper")
        page.wait_for_selector("#stepform .groups input[data-i]")
        helper = page.locator("#stepform .groups").inner_text()
        assert "75 and over" in helper and "35-44" in helper
        boxes = page.locator("#stepform .groups input[data-i]")
        for i, label in enumerate(["0-15", "16-34", "16-34", "35-54", "35-54", "55+", "55+", "55+"]):
            boxes.nth(i).fill(label)
        scan(page, "steps: recode form")
        page.locator("#addcard").screenshot(path=str(shots / "app_recode.png"))

        def add(method: str, fill) -> None:
            n = page.locator(".stepcard").count()
            if page.locator("#methodsel").input_value() != method:
                page.select_option("#methodsel", method)
            fill(page.locator("#stepform .form"))
            scan(page, f"steps: {method} form")
            page.click("#addstep")
            page.wait_for_function(f"document.querySelectorAll('.stepcard').length === {n + 1}")
            page.wait_for_selector(f".stepcard:nth-of-type({n + 1}) .body")

        add("recode", lambda f: None)

        def pram(f):
            f.locator("[name='variables']").select_option("Marital_Status")
            f.locator("[name='min_diagonal']").fill("0.9")
            chooser = f.locator("select.variant-chooser")
            assert chooser.count() == 1
            # only the chosen builder's own settings are shown
            shown = [d.get_attribute("data-variant") for d in f.locator(".variant").all() if d.is_visible()]
            assert shown == [chooser.input_value()]

        add("pram", pram)
        add("local_suppression", lambda f: f.locator("[name='k']").fill("3"))
        page.wait_for_selector(".stepcard >> text=PRAM matrix")
        sentences = page.locator(".stepcard .sentence").all_inner_texts()
        assert sentences[1].startswith("Global recoding of Age") and sentences[2].startswith("PRAM of Marital_Status")
        assert page.locator(".stepcard .guarantees li.fail").count() == 0
        scan(page, "steps")
        page.screenshot(path=str(shots / "app_steps.png"), full_page=True)

        # a second remove step is refused with a sentence; undo and redo
        page.evaluate("""() => fetch('/api/steps', {method: 'POST', credentials: 'same-origin',
            headers: {'Content-Type': 'application/json', 'X-CSRF-Token': document.querySelector('meta[name=csrf]').content},
            body: JSON.stringify({action: 'add', step: {method: 'remove', variables: ['Person_ID']}})})
            .then((r) => r.json()).then((j) => { window.__refusal = j.error; })""")
        page.wait_for_function("window.__refusal !== undefined")
        assert "already removed" in page.evaluate("window.__refusal")
        page.click("#undo")
        page.wait_for_function("document.querySelectorAll('.stepcard').length === 3")
        page.click("#redo")
        page.wait_for_function("document.querySelectorAll('.stepcard').length === 4")

        # after a reload, the state is the same: four steps, Person ID offered nowhere
        page.reload()
        page.click("#tabs a[data-page='steps']")
        page.wait_for_function("document.querySelectorAll('.stepcard').length === 4")
        page.select_option("#methodsel", "pram")
        assert page.locator("#stepform [name='variables'] option[value='Person_ID']").count() == 0
        page.select_option("#methodsel", "")

        # 5. a branch with k = 5, then compare: the differing setting is marked
        page.click("#newbranch")
        page.wait_for_function("document.querySelector('#branch').value === 'alternative'")
        page.locator(".stepcard").nth(3).locator("button[data-a='edit']").click()
        page.locator("#stepform [name='k']").fill("5")
        page.click("#savestep")
        page.wait_for_selector(".stepcard:nth-of-type(4) .params >> text=k = 5")
        page.click("#tabs a[data-page='compare']")
        page.select_option("#ca", "main")
        page.select_option("#cb", "alternative")
        page.click("#docompare")
        page.wait_for_selector("#cmpout .cmptable li.differs")
        text = scan(page, "compare")
        assert "global risk" in text and "%" in text
        page.screenshot(path=str(shots / "app_compare.png"), full_page=True)
        page.select_option("#branch", "main")
        page.wait_for_function("document.querySelector('#branch').value === 'main'")

        # 6. explore: a small sweep; its result stays after a reload
        page.click("#tabs a[data-page='explore']")
        page.wait_for_selector(".cand")
        page.locator(".cand").nth(1).locator("button").click()
        page.locator(".cand .cv").fill("3, 20")
        page.fill("#xseeds", "1")
        page.click("#runx")
        page.wait_for_selector("#rumap svg", timeout=60000)
        scan(page, "explore")
        page.screenshot(path=str(shots / "app_explore.png"), full_page=True)
        page.reload()
        page.click("#tabs a[data-page='explore']")
        page.wait_for_selector("#xhistory >> text=sweep 1")
        page.wait_for_selector("#rumap svg")

        # 7. gate (global risk typed as a percentage) and release
        page.click("#tabs a[data-page='release']")
        k_box = ".gatecheck[data-gate='k_anonymity'] input[name='k']"
        risk_box = ".gatecheck[data-gate='max_global_risk'] input[name='risk']"
        page.wait_for_selector(k_box)
        assert "(%)" in page.locator(".gatecheck[data-gate='max_global_risk'] label").first.inner_text()
        page.fill(k_box, "3")
        page.fill(risk_box, "5")
        page.click("#savegate")
        page.wait_for_selector("#gateverdict .gateresult")
        gate_text = page.locator("#gateverdict").inner_text()
        assert "k-anonymity" in gate_text and "5.00%" in gate_text and "k reached:" in gate_text
        assert all("{" not in m for m in page.locator("#gateverdict .measured").all_inner_texts())
        page.fill("#outdir", str((tmp_path / "wb" / "release").resolve()))
        page.fill("#outdata", "census_released.csv")
        page.click("#dorelease")
        page.wait_for_selector("#released", timeout=120000)
        public = page.locator("#publicfiles").inner_text()
        internal = page.locator("#internalfiles").inner_text()
        assert "census_released.csv" in public and "internal" not in public and internal.strip()
        page.wait_for_timeout(500)
        scan(page, "release")
        page.screenshot(path=str(shots / "app_release.png"), full_page=True)
        # the public report of the release, as the steward opens it from the page: no raw JSON,
        # the gate's measured values in words, categories by their labels
        page.goto(f"{server}/release/0/report")
        report_text = page.locator("body").inner_text()
        m = JSON_LIKE.search(report_text)
        assert m is None, report_text[max(0, m.start() - 80):m.end() + 80]
        assert "k reached: 3" in report_text
        page.goto(f"{server}/#release")
        page.wait_for_selector("#released")  # the page lists the release again after the reload
        spec = tomllib_loads(page.request.get(f"{server}/api/export?seed=1").text())
        assert spec["input"]["na_values"] == {"Country_of_Birth": [-9], "Health": [-9]}  # per column
        assert spec["gate"] == {"k_anonymity": 3, "max_global_risk": 0.05}

        # 8. the tables page: scanned too (its form is the page's own until the tables API exists)
        page.click("#tabs a[data-page='tables']")
        page.wait_for_selector("#td1")
        scan(page, "tables")
        assert errors == [], errors
        browser.close()


def tomllib_loads(text: str) -> dict:
    import tomllib

    return tomllib.loads(text)
