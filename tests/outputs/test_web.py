"""The checker's queue in the workbench: the routes behind the app's token middleware (API test) and
a walk in Debian's headless Chromium (approve, reject, exception request, release) with screenshots.

The routes are mounted the way the workbench mounts them: ``OUTPUT_ROUTES`` in a Starlette app
wrapped in :class:`sdckit.app.security.TokenMiddleware`, with ``app.state.output_queue``.
Screenshots go to a temporary folder, or to ``SDCKIT_APP_SCREENSHOTS`` (``docs/img/outputs`` for
the guide): ``SDCKIT_APP_SCREENSHOTS=docs/img/outputs .venv/bin/python -m pytest tests/outputs/test_web.py``.
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route
from starlette.testclient import TestClient

from sdckit.app.security import TokenMiddleware
from sdckit.outputs import Session
from sdckit.outputs.web import OUTPUT_ROUTES, OutputQueue
from sdckit.report.outputs_release import release_outputs
from sdckit.report.signing import generate_keypair
from sdckit.report.verify import verify_release

TOKEN = "outputs-token-7c1e"
CSRF = "outputs-csrf-90b2"
CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _results(folder: Path) -> Path:
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"grade": rng.choice(["a", "b", "c"], 240), "sex": rng.choice(["f", "m"], 240),
                       "age": rng.integers(18, 80, 240).astype(float)})
    df.loc[df.index[:3], "grade"] = "d"
    df["income"] = 1000 + 20 * df.age + rng.normal(0, 100, 240)
    s = Session()
    s.crosstab(df.grade, df.sex, margins=True)              # output_0: fails; the margins give row d back
    s.ols(df.income, sm.add_constant(df[["age"]]))         # output_1: passes
    s.pivot_table(df, index="grade", values="income", aggfunc="mean")  # output_2: fails (row d)
    return s.finalise(folder)


def _static(request):
    name = request.path_params["name"]
    base = resources.files("sdckit.app").joinpath("static")
    path = base.joinpath("js", name) if request.url.path.startswith("/static/js/") else base.joinpath(name)
    kind = "text/javascript" if name.endswith(".js") else "text/css"
    return Response(path.read_text("utf-8"), media_type=kind)


def make_app(tmp_path: Path, key=None):
    results = _results(tmp_path / "session")
    app = Starlette(routes=list(OUTPUT_ROUTES) + [Route("/static/js/{name}", _static), Route("/static/{name}", _static)])
    app.add_middleware(TokenMiddleware, token=TOKEN, csrf=CSRF, allowed_hosts=None)
    app.state.csrf = CSRF
    app.state.output_queue = OutputQueue(results=results, release_root=tmp_path / "releases",
                                         release=release_outputs, signing_key=key)
    (tmp_path / "releases").mkdir()
    return app, results


def test_routes_need_the_token_and_csrf(tmp_path):
    app, _ = make_app(tmp_path)
    client = TestClient(app, base_url="http://127.0.0.1")
    assert client.get("/api/outputs").status_code == 401
    assert client.get("/api/outputs", headers={"X-Sdckit-Token": "wrong"}).status_code == 401
    h = {"X-Sdckit-Token": TOKEN}
    q = client.get("/api/outputs", headers=h).json()
    assert [o["id"] for o in q["outputs"]] == ["output_0", "output_1", "output_2"]
    assert any("recovered exactly" in w for w in q["outputs"][0]["words"])
    # a browser session: cookie only, a POST without the CSRF header is refused
    client.get(f"/outputs?token={TOKEN}")
    r = client.post("/api/outputs/output_1/approve", json={"reason": "ok", "checker": "C"})
    assert r.status_code == 403
    r = client.post("/api/outputs/output_1/approve", json={"reason": "ok", "checker": "C"},
                    headers={"X-CSRF-Token": CSRF})
    assert r.status_code == 200 and r.json()["decision"]["verdict"] == "approved"
    r = client.post("/api/outputs/output_0/approve", json={"reason": "ok", "checker": "C"},
                    headers={"X-CSRF-Token": CSRF})
    assert r.status_code == 400 and "asked for no exception" in r.json()["error"]
    r = client.post("/api/outputs/release", json={"name": "../escape"}, headers={"X-CSRF-Token": CSRF})
    assert r.status_code == 400 and "plain folder name" in r.json()["error"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine (Debian: apt-get install chromium)")
def test_checker_walks_the_queue_in_chromium(tmp_path):
    playwright = pytest.importorskip("playwright.sync_api")
    uvicorn = pytest.importorskip("uvicorn")
    key, pub = generate_keypair(tmp_path / "keys", "checker")
    app, results = make_app(tmp_path, key=key)
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.time() + 20
    while not server.started and time.time() < deadline:
        time.sleep(0.05)
    shots = Path(os.environ.get("SDCKIT_APP_SCREENSHOTS") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    base = f"http://127.0.0.1:{port}"
    try:
        with playwright.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.set_default_timeout(120_000)  # a loaded machine: waits are for events, not timings
            page.goto(f"{base}/outputs?token={TOKEN}")
            page.wait_for_selector(".out[data-id='output_2']")
            page.fill("#checker", "C. Hecker")
            page.screenshot(path=str(shots / "outputs_queue.png"), full_page=True)
            box = lambda uid: page.locator(f".out[data-id='{uid}']")  # noqa: E731
            # approving a failing output without the researcher's exception request is refused
            box("output_0").locator(".reason").fill("looks fine")
            box("output_0").locator("button.approve").click()
            page.wait_for_selector("#error:not([hidden])")
            assert "asked for no exception" in page.inner_text("#error")
            page.screenshot(path=str(shots / "outputs_refused.png"))
            # the researcher's exception request, then the approval
            box("output_0").locator(".reason").fill("row d is a published category (4 schools)")
            box("output_0").locator("button.exception").click()
            # the recorded request (a div), not the button that records it (which also has the class)
            page.wait_for_selector(".out[data-id='output_0'] div.exception")
            box("output_0").locator(".reason").fill("accepted: the row is public knowledge")
            box("output_0").locator("button.approve").click()
            page.wait_for_selector(".out[data-id='output_0'] .decision.approved")
            box("output_1").locator(".reason").fill("238 residual degrees of freedom")
            box("output_1").locator("button.approve").click()
            page.wait_for_selector(".out[data-id='output_1'] .decision.approved")
            box("output_2").locator(".reason").fill("the mean of row d rests on 3 records")
            box("output_2").locator("button.reject").click()
            page.wait_for_selector(".out[data-id='output_2'] .decision.rejected")
            page.screenshot(path=str(shots / "outputs_decided.png"), full_page=True)
            page.fill("#relname", "release-1")
            page.click("#release")
            page.wait_for_selector("#releaseout .ok")
            page.locator("#releasecard").screenshot(path=str(shots / "outputs_released.png"))
            assert "2 outputs approved" in page.inner_text("#releaseout")
            browser.close()
    finally:
        server.should_exit = True
        thread.join(timeout=10)
    folder = tmp_path / "releases" / "release-1"
    res = verify_release(folder, key=pub)
    assert res.ok, res.problems
    assert not (folder / "output_2_0.csv").exists()


def test_the_workbench_opens_the_queue_with_a_results_folder(tmp_path):
    # the real workbench (sdckit app --outputs DIR): the page and the queue behind its token
    from sdckit.app.cli import build

    results = _results(tmp_path / "session")
    app, token, _ = build(None, host="127.0.0.1", port=0, token="w" * 24, workdir=tmp_path / "work",
                          outputs=results)
    client = TestClient(app, base_url="http://127.0.0.1")
    assert client.get("/api/outputs").status_code == 401
    q = client.get("/api/outputs", headers={"X-Sdckit-Token": token}).json()
    assert [o["id"] for o in q["outputs"]] == ["output_0", "output_1", "output_2"]
    page = client.get(f"/outputs?token={token}")
    assert page.status_code == 200 and "outputs.js" in page.text
    assert client.get(f"/static/js/outputs.js?token={token}").status_code == 200


def test_the_workbench_without_a_results_folder_says_how_to_open_the_queue(tmp_path):
    from sdckit.app.cli import build

    app, token, _ = build(None, host="127.0.0.1", port=0, token="w" * 24, workdir=tmp_path / "work")
    r = TestClient(app, base_url="http://127.0.0.1").get("/api/outputs", headers={"X-Sdckit-Token": token})
    assert r.status_code == 400 and "results folder" in r.json()["error"]
