"""Category labels that could end a script: every chart of the report still renders.

The chart specifications are JSON inside ``<script>`` elements. A label such as
``<!--<script>`` (which makes the HTML parser treat the next ``</script>`` as text), ``</script>``,
``]]>`` or U+2028 must not end the script or comment it out: :func:`sdckit.report.charts.script_json`
writes ``<``, ``>``, ``&``, U+2028 and U+2029 as ``\\uXXXX`` escapes. The browser test renders a
real release report with such labels in Debian's headless Chromium and counts the drawn charts.

Screenshots go to a temporary folder, or to ``SDCKIT_REPORT_SCREENSHOTS`` when it is set.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.report.charts import script_json

#: a numeric column whose name could end a script too (it labels the correlation chart)
HOURS = "hours</script>\u2028<!--"
NASTY = ["<!--<script>", "</script>", "]]>", "line\u2028break", "para\u2029graph", "<!--", "a & b",
         "\"quoted\" 'single'", "<img src=x onerror=alert(1)>"]


def test_script_json_escapes_what_could_end_a_script():
    text = script_json({"labels": NASTY})
    for bad in ("<", ">", "&", "\u2028", "\u2029"):
        assert bad not in text
    assert json.loads(text) == {"labels": NASTY}
    # the escapes are the JSON ones (checked against the characters' code points by hand)
    assert "\\u003c!--\\u003cscript\\u003e" in text and "\\u2028" in text and "a \\u0026 b" in text


@settings(max_examples=200, deadline=None)
@given(st.recursive(st.one_of(st.text(), st.integers(), st.booleans(), st.none()),
                    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=6), kids, max_size=4),
                    max_leaves=12))
def test_script_json_round_trips_and_never_holds_an_unsafe_character(obj):
    text = script_json(obj)
    assert not any(ch in text for ch in "<>&\u2028\u2029")
    assert json.loads(text) == obj


def test_embed_refuses_an_unsafe_chart_id():
    import altair as alt

    from sdckit.report.charts import embed

    chart = alt.Chart(pd.DataFrame({"a": ["x"]})).mark_bar().encode(x="a:N")
    with pytest.raises(ValueError, match="chart id"):
        embed(chart, "x');alert(1);//")


def test_figure_alt_text_is_escaped():
    from sdckit.report.plots import figure_to_html, new_figure

    fig, _ = new_figure(1, 1)
    tag = figure_to_html(fig, 'heat map "</script><b>')
    assert tag.startswith('<img alt="heat map &quot;&lt;/script&gt;&lt;b&gt;" src=')


def _nasty_release(out_dir: Path):
    """A release whose key variable 'region' has the nasty labels; numeric columns for the
    correlation chart; PRAM on region (its matrix is published and drawn)."""
    from sdckit.microdata import Microdata
    from sdckit.registry import build_step
    from sdckit.release import Release

    rng = np.random.default_rng(3)
    n = 900
    df = pd.DataFrame({"region": np.array(NASTY)[rng.integers(0, len(NASTY), n)],
                       "sex": rng.choice(["m", "f"], n), "age": rng.integers(1, 6, n),
                       "income": rng.gamma(3.0, 900.0, n).round(), HOURS: rng.integers(10, 60, n)})
    md = Microdata(df, key_vars=["region", "sex", "age"], numeric_vars=["income", HOURS])
    steps = [build_step("pram", {"variables": ["region"], "min_diagonal": 0.85}),
             build_step("noise", {"variables": ["income", HOURS], "level": 0.1})]
    run = Release(md, steps, gate={"max_global_risk": 0.5}, rng=8).run()
    return run.write(out_dir)


def test_every_chart_renders_with_nasty_labels_in_chromium(tmp_path):
    from tests.report.demo_release import BROWSER_ARGS, chromium_or_skip

    chromium = chromium_or_skip()
    from playwright.sync_api import sync_playwright

    paths = _nasty_release(tmp_path / "nasty")
    html = paths["report"].read_text("utf-8")
    n_charts = html.count('class="vega-chart"')
    assert n_charts >= 8  # f_k, individual risk, uniqueness, frequencies of 3 keys, correlation, ...
    shots = Path(os.environ.get("SDCKIT_REPORT_SCREENSHOTS") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=BROWSER_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(paths["report"].as_uri())
        try:
            page.wait_for_function(f"window.sdckitViews && Object.keys(window.sdckitViews).length >= {n_charts}",
                                   timeout=60_000)
        except Exception:
            pass  # counted below, with the names of the charts that did not render
        drawn = page.evaluate("Object.keys(window.sdckitViews || {})")
        ids = page.evaluate("[...document.querySelectorAll('.vega-chart')].map(e => e.id)")
        svgs = page.evaluate("[...document.querySelectorAll('.vega-chart')].filter(e => e.querySelector('svg')).length")
        texts = page.evaluate("[...document.querySelectorAll('.vega-chart svg text')].map(t => t.textContent)")
        domains = {cid: page.evaluate(f"window.sdckitViews['{cid}'] ? window.sdckitViews['{cid}'].scale('x').domain() : null")
                   for cid in ("chart-freq-region", "chart-corr-change")}
        page.screenshot(path=str(shots / "report_nasty_labels.png"), full_page=True)
        for cid in ("chart-freq-region", "chart-corr-change"):
            if page.locator(f"#{cid} svg").count():
                page.locator(f"#{cid}").screenshot(path=str(shots / f"report_nasty_labels_{cid}.png"))
        browser.close()
    assert sorted(drawn) == sorted(ids), sorted(set(ids) - set(drawn))
    assert svgs == len(ids) == n_charts
    assert not errors, errors
    # the labels reach the drawn axes as they are (not cut, not HTML-decoded twice)
    for label in ("</script>", "<!--<script>", "]]>", "a & b"):
        assert label in texts, label
    # a custom order that holds U+2028 is drawn in that order (the order the spec asks for)
    for cid, domain in domains.items():
        wanted = _sort_order(html, cid)
        assert wanted is not None and domain == [v for v in wanted if v in domain], (cid, domain, wanted)
    assert HOURS in domains["chart-corr-change"]


def _sort_order(html: str, chart_id: str) -> list | None:
    """The x order asked for by the chart's embedded spec (read back with json, as the browser does)."""
    start = html.index(f"vegaEmbed('#{chart_id}', ") + len(f"vegaEmbed('#{chart_id}', ")
    spec, _ = json.JSONDecoder().raw_decode(html, start)

    def find(node):
        if isinstance(node, dict):
            x = (node.get("encoding") or {}).get("x") or {}
            sort = x.get("sort")
            if isinstance(sort, list):
                return sort
            if isinstance(sort, dict):  # given as data: the lookup table's values in position order
                for t in node.get("transform", []):
                    if t.get("as") == [sort["field"]]:
                        rows = sorted(t["from"]["data"]["values"], key=lambda r: r["position"])
                        return [r["value"] for r in rows]
            for v in node.values():
                got = find(v)
                if got is not None:
                    return got
        elif isinstance(node, list):
            for v in node:
                got = find(v)
                if got is not None:
                    return got
        return None

    return find(spec)
