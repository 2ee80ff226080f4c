"""A scan of every report page a person reads: the public report, the internal report and the
PDF's text. It fails on raw JSON, on a bare parameter or gate name used as a label, and on a
category shown by its code when a value label exists. The figures drawn in the report come
from the same functions the workbench calls (:mod:`sdckit.report.fragments`), and this is
checked on the drawn data itself.
"""

import json
import re
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from sdckit.microdata import DatasetMeta, Microdata
from sdckit.params import step_params
from sdckit.registry import build_step, gate_check_class, known_gate_checks, known_steps, step_class
from sdckit.report import fragments as F
from tests.report.demo_release import write_demo_release

JSON_RE = re.compile(r'\{\s*"|"\s*:\s*[\[{"\d]|\[\s*\{')
LABEL_TAGS = ("th", "b", "summary", "caption", "h2", "h3", "h4", "label", "figcaption")


def _names() -> set[str]:
    """Bare names a person must never read as a label: gate names and the declared parameter
    names of every step and gate check that are not plain words."""
    names = set(known_gate_checks())
    for cls in [step_class(s) for s in known_steps()] + [gate_check_class(g) for g in known_gate_checks()]:
        names |= {p.name for p in step_params(cls) if "_" in p.name}
    return names


class _Scan(HTMLParser):
    """Visible text (outside script, style, title and code) and the text of each label element."""

    def __init__(self):
        super().__init__()
        self.skip, self.stack, self.text, self.labels = 0, [], [], []

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style", "title", "code"):
            self.skip += 1
        if tag in LABEL_TAGS:
            self.stack.append([])

    def handle_endtag(self, tag):
        if tag in ("script", "style", "title", "code"):
            self.skip -= 1
        if tag in LABEL_TAGS and self.stack:
            self.labels.append(" ".join(self.stack.pop()).strip())

    def handle_data(self, data):
        if self.skip:
            return
        self.text.append(data)
        for s in self.stack:
            s.append(data.strip())


def scan(page: str) -> tuple[str, list[str]]:
    p = _Scan()
    p.feed(page)
    return " ".join(p.text), p.labels


def chart_data(page: str, chart_id: str) -> list[dict]:
    """The rows the report draws in one chart (the datasets of its Vega-Lite spec)."""
    m = re.search(r"vegaEmbed\('#" + re.escape(chart_id) + r"', (\{.*?\}), \{actions", page, re.S)
    assert m, chart_id
    spec = json.loads(m.group(1))
    return [row for rows in spec.get("datasets", {}).values() for row in rows]


def assert_readable(page: str, where: str) -> None:
    text, labels = scan(page)
    assert not JSON_RE.search(text), (where, JSON_RE.search(text).group(0),
                                      text[max(0, JSON_RE.search(text).start() - 80):][:200])
    names = _names()
    bare = [lab for lab in labels if lab in names]
    assert not bare, (where, bare)
    # a gate name is never read as a word in the text (the spec's keys are shown as <code>)
    for g in known_gate_checks():
        assert not re.search(rf"(?<![\w-]){re.escape(g)}(?![\w-])", text), (where, g)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return write_demo_release(tmp_path_factory.mktemp("scan"))


def _labelled_run(steps):
    from sdckit.release import Release

    rng = np.random.default_rng(7)
    n = 600
    df = pd.DataFrame({"sex": rng.integers(1, 3, n), "marital": rng.choice([1, 2, 3], n, p=[.5, .3, .2]),
                       "age": rng.choice(["<25", "25-44", "45-64", "65+"], n), "region": rng.integers(1, 7, n),
                       "income": rng.normal(100, 20, n)})
    meta = DatasetMeta(value_labels={"sex": {1: "Male", 2: "Female"},
                                     "marital": {1: "Single", 2: "Married", 3: "Widowed"}})
    md = Microdata(df, key_vars=["sex", "marital", "age", "region"], numeric_vars=["income"], meta=meta)
    return Release(md, steps, gate={"k_anonymity": 2, "max_global_risk": 0.5}, rng=3).run()


@pytest.fixture(scope="module")
def labelled():
    return _labelled_run([build_step("local_suppression", {"k": 2})])


def test_public_and_internal_demo_reports_read_as_words(demo):
    _, paths, _ = demo
    for key in ("report", "internal_report"):
        assert_readable(paths[key].read_text("utf-8"), key)


def test_internal_report_has_the_seed_as_a_table_and_the_json_as_a_file(demo):
    run, paths, _ = demo
    page = paths["internal_report"].read_text("utf-8")
    text, _ = scan(page)
    assert "<pre>{" not in page and '"seeds"' not in text    # no JSON dump in the page
    assert f"<code>{run.seeds.to_dict()['root']['entropy']}</code>" in page
    name = paths["internal_json"].name
    assert f"href='{name}'" in page and paths["internal_json"].exists()
    assert "integer" not in text and "float64" not in text and "whole number" in text


def test_labelled_release_shows_categories_by_label(labelled):
    from sdckit.report.release import internal_report_html, public_report_html

    for where, page in (("public", public_report_html(labelled)), ("internal", internal_report_html(labelled))):
        assert_readable(page, where)
        text, labels = scan(page)
        assert "Male" in text and "Married" in text
        cats = {r["category"] for r in chart_data(page, "chart-freq-sex")}
        assert cats <= {"Male", "Female", "(missing)"} and {"Male", "Female"} <= cats, cats
        cats = {r["category"] for r in chart_data(page, "chart-freq-marital")}
        assert {"Single", "Married", "Widowed"} <= cats and not cats & {"1", "2", "3"}, cats
        assert "1.0=" not in text and "=Male" not in text


def test_report_and_workbench_draw_the_same_risk_histogram(labelled):
    """The report's risk chart holds exactly the rows of fragments.risk_histogram (the
    workbench's function) for the same run: same bands, same counts."""
    from sdckit.report.release import _combination_risks, public_report_html
    from sdckit.risk.report import measure_risk

    page = public_report_html(labelled)
    drawn = chart_data(page, "chart-risk-individual")
    rep = measure_risk(labelled.released)
    risks, records = _combination_risks(labelled.released, rep)
    wb = F.risk_histogram(risks, records)
    got = [(r["band"], r["records"]) for r in drawn if r["data"] == "released"]
    assert got == list(zip(wb["band"], wb["records"].astype(int)))
    # and by hand from the records' own risks (one value per record)
    by_record = F.risk_histogram(rep.records["risk"].to_numpy())
    assert list(by_record["records"]) == [n for _, n in got]


def test_report_and_workbench_draw_the_same_ru_map(demo):
    """The report's R-U map draws rumap_data's rows for the same sweep, risk on x."""
    run, paths, figures = demo
    page = paths["report"].read_text("utf-8")
    drawn = chart_data(page, "ru-map")
    rel = [r for r in drawn if r.get("what") == "this release"]
    assert rel and rel[0]["risk"] == pytest.approx(figures["release_risk"], rel=1e-12)
    assert rel[0]["utility"] == pytest.approx(figures["release_utility"], rel=1e-12)
    m = re.search(r"vegaEmbed\('#ru-map', (\{.*?\}), \{actions", page, re.S)
    spec = json.loads(m.group(1))
    pts = next(layer for layer in spec["layer"] if layer.get("name") == "points")
    assert pts["encoding"]["x"]["field"] == "risk" and pts["encoding"]["y"]["field"] == "utility"
    assert pts["encoding"]["x"]["title"] == F.risk_axis_title("global_risk")


def test_pram_raising_sample_uniques_is_explained():
    run = _labelled_run([build_step("pram", {"variables": ["marital"], "min_diagonal": 0.6})])
    from sdckit.report.release import public_report_html
    from sdckit.risk.report import measure_risk

    before = measure_risk(run.original).summary["n_sample_uniques"]
    after = measure_risk(run.released).summary["n_sample_uniques"]
    assert after > before                                   # the case the sentence is for
    text, _ = scan(public_report_html(run))
    assert "because PRAM moves records into rarer key combinations" in text
    assert "re-identifies" in text and "correctly" in text  # the intruder-side figure


def test_pdf_text_reads_as_words(demo, tmp_path):
    from tests.report.demo_release import chromium_or_skip

    chromium_or_skip()
    from pypdf import PdfReader

    from sdckit.report.export import report_to_pdf

    reader = PdfReader(report_to_pdf(demo[1]["report"], tmp_path / "report.pdf"))
    text = " ".join(page.extract_text() for page in reader.pages)
    assert not JSON_RE.search(text), JSON_RE.search(text).group(0)
    assert "global risk: " in text and "%" in text


def test_report_title_organisation_and_release_fields(labelled, tmp_path):
    """[report] title, organisation and release are declared spec keys shown on the report
    (and on the PDF's title page, which prints the same page); a title that is not text is
    refused at its key path."""
    import dataclasses

    from sdckit.cli import demo_spec_dict
    from sdckit.errors import SpecError
    from sdckit.report.release import public_report_html
    from sdckit.spec import spec_from_dict

    raw, data_dir = demo_spec_dict(tmp_path / "out")
    raw["report"] = {"title": "Census teaching file 2011", "organisation": "Office for Tests",
                     "release": "Public-use file", "choice_reason": "kept the age bands the users asked for"}
    spec = spec_from_dict(raw, base_dir=data_dir, source="test")
    page = public_report_html(dataclasses.replace(labelled, spec=spec))
    text, _ = scan(page)
    assert "<h1>Census teaching file 2011</h1>" in page
    assert "Office for Tests" in text and "Public-use file" in text
    raw["report"] = {"title": 3}
    with pytest.raises(SpecError, match="report.title"):
        spec_from_dict(raw, base_dir=data_dir, source="test")
