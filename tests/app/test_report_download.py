"""The release page's report fields and downloads: the title, organisation and release typed on
the page go into the exported spec's ``[report]`` and onto the public report; the public report
(HTML), its PDF and the certificate download as attachments."""

from __future__ import annotations

import hashlib
import json
import shutil
import tomllib

import pytest

from tests.app.test_api import KEYS, _wait, client, small  # noqa: F401 - fixtures


def _release(client):  # noqa: F811 - the fixture
    client.post("/api/roles", json={"roles": {"key_vars": KEYS}}).raise_for_status()
    for step in ({"method": "remove", "variables": ["Person ID"]}, {"method": "local_suppression", "k": 2}):
        client.post("/api/steps", json={"action": "add", "step": step}).raise_for_status()
    client.post("/api/gate", json={"gate": {"k_anonymity": 2}}).raise_for_status()
    r = client.post("/api/report", json={"title": "Census teaching file 2011", "organisation": "Office of Examples",
                                         "release": "R1 (2026)"})
    assert r.status_code == 200, r.text
    client.post("/api/output", json={"directory": "rel", "data": "out.csv"}).raise_for_status()
    j = _wait(client, client.post("/api/release", json={}).json())
    assert j["status"] == "done", j.get("error")
    return j["result"]


def test_report_fields_reach_the_spec_and_the_report(client, tmp_path):  # noqa: F811
    rel = _release(client)
    raw = tomllib.loads(client.get("/api/export").text)
    assert raw["report"] == {"title": "Census teaching file 2011", "organisation": "Office of Examples",
                             "release": "R1 (2026)"}
    html = client.get(f"/release/{rel['index']}/download/html")
    assert html.status_code == 200
    assert html.headers["content-disposition"] == 'attachment; filename="rel-report.html"'
    text = html.text
    assert "Census teaching file 2011" in text and "Office of Examples" in text and "R1 (2026)" in text
    cert = client.get(f"/release/{rel['index']}/download/certificate")
    assert cert.status_code == 200 and "certificate" in cert.headers["content-disposition"]
    data = (tmp_path / "wb" / "rel" / "out.csv").read_bytes()
    assert hashlib.sha256(data).hexdigest() in json.dumps(json.loads(cert.content))
    assert client.get(f"/release/{rel['index']}/download/other").status_code == 404
    assert client.get("/release/9/download/html").status_code == 404
    # clearing the fields takes [report] out of the spec
    client.post("/api/report", json={"title": "", "organisation": "", "release": ""}).raise_for_status()
    assert "report" not in tomllib.loads(client.get("/api/export").text)
    bad = client.post("/api/report", json={"title": ["x"]})
    assert bad.status_code == 400 and "report title" in bad.json()["error"]


@pytest.mark.skipif(shutil.which("chromium") is None, reason="no chromium (Debian: apt-get install chromium)")
def test_report_downloads_as_pdf(client):  # noqa: F811
    rel = _release(client)
    pdf = client.get(f"/release/{rel['index']}/download/pdf")
    assert pdf.status_code == 200, pdf.text[:300]
    assert pdf.headers["content-type"] == "application/pdf" and pdf.content.startswith(b"%PDF")
