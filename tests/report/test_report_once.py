"""The report figures are computed once per run for both reports, the template is compiled
once, and the chart bundle is kept in the user's cache folder between runs."""

import numpy as np
import pandas as pd

from sdckit import Microdata
from sdckit.masking.recode import Recode
from sdckit.masking.remove import RemoveVariables
from sdckit.release import Release
from sdckit.report import charts
from sdckit.report import release as report


def small_run():
    rng = np.random.default_rng(4)
    n = 400
    df = pd.DataFrame({"pid": np.arange(n), "region": rng.integers(1, 4, n), "age": rng.integers(0, 90, n),
                       "sex": rng.integers(1, 3, n), "income": np.round(rng.lognormal(8, 1, n))})
    md = Microdata(df, key_vars=["region", "age", "sex"], numeric_vars=["income"])
    steps = [RemoveVariables(["pid"]), Recode("age", breaks=[-1, 30, 60, 120], closed="right")]
    return Release(md, steps, gate={"max_global_risk": 0.99, "allow_identifiers": ["income"]}, rng=3).run()


def test_both_reports_share_one_computation_of_each_section(monkeypatch):
    run = small_run()
    calls = {"risk": 0, "utility": 0}
    risk, utility = report.risk_section_html, report.utility_section_html

    def count(name, fn):
        def wrapped(r):
            calls[name] += 1
            return fn(r)
        return wrapped

    monkeypatch.setattr(report, "risk_section_html", count("risk", risk))
    monkeypatch.setattr(report, "utility_section_html", count("utility", utility))
    public = report.public_report_html(run, data_file="x.csv")
    internal = report.internal_report_html(run, data_file="x.csv")
    assert calls == {"risk": 1, "utility": 1}
    section = risk(run)
    assert section in public and section in internal            # the same figures in both
    assert report._template() is report._template()


def test_chart_bundle_is_built_once_and_read_from_the_cache(tmp_path, monkeypatch):
    import vl_convert

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    built = []

    def bundle():
        built.append(1)
        return "var vega = 1; // </script> inside"

    monkeypatch.setattr(vl_convert, "javascript_bundle", bundle)
    charts._bundle.cache_clear()
    try:
        first = charts._bundle()
        charts._bundle.cache_clear()
        second = charts._bundle()
    finally:
        charts._bundle.cache_clear()
    assert first == second and "<\\/script>" in first and built == [1]
    cached = list((tmp_path / "sdckit").glob("vega-bundle-*.js"))
    assert len(cached) == 1 and cached[0].read_text("utf-8") == first
