"""The public and internal release reports: verdict first, steps in words, no raw JSON."""

from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.report.narrative import step_sentence, value_html
from sdckit.report.release import hellinger, total_variation, uniqueness_contributions
from tests.report.demo_release import write_demo_release


class _Visible(HTMLParser):
    """The text a reader sees: everything outside <script>, <style> and <head>."""

    def __init__(self):
        super().__init__()
        self.skip = 0
        self.parts = []

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style", "title"):
            self.skip += 1

    def handle_endtag(self, tag):
        if tag in ("script", "style", "title"):
            self.skip -= 1

    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)


def visible_text(page: str) -> str:
    p = _Visible()
    p.feed(page)
    return " ".join(p.parts)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo")
    run, paths, figures = write_demo_release(out)
    return run, paths, figures


def test_verdict_box_comes_first_and_lists_every_threshold(demo):
    run, paths, _ = demo
    page = paths["report"].read_text("utf-8")
    body = page[page.index("<body>"):]
    assert body.index('id="verdict"') < body.index('id="risk"') < body.index('id="steps"')
    verdict = body[body.index('id="verdict"'):body.index("</section>", body.index('id="verdict"'))]
    assert "Passed" in verdict and "census_released.csv" in verdict
    for o in run.gate:
        assert f'data-gate="{o.name}"' in verdict
    # the measured global risk appears as the gate measured it (ER / n), as a percentage, and
    # its threshold in the same unit
    g = next(o for o in run.gate if o.name == "max_global_risk")
    assert f"global risk: {g.value['global_risk']:.2%}" in verdict
    assert f"{g.threshold:.2%} of records" in verdict


def test_public_report_has_no_json_and_no_seed(demo):
    run, paths, _ = demo
    page = paths["report"].read_text("utf-8")
    text = visible_text(page)
    assert '{"' not in text and "{'" not in text
    seed = str(run.seeds.root.entropy) if hasattr(run.seeds, "root") else None
    internal = paths["internal_json"].read_text("utf-8")
    import json
    entropy = str(json.loads(internal)["seeds"]["root"]["entropy"])
    assert entropy not in page
    assert seed is None or seed not in page


def test_pram_step_sentence_counts_changed_records_independently(demo):
    run, paths, _ = demo
    # independent count: the recoded original marital status against the released column
    orig = run.original.frame["Marital Status"].map({1: "single", 2: "married", 3: "previously married",
                                                      4: "previously married", 5: "previously married"})
    rel = run.released.frame["Marital Status"]
    changed = int((orig.astype(str) != rel.astype(str)).sum())
    text = visible_text(paths["report"].read_text("utf-8"))
    assert (f"PRAM of Marital Status: each category kept with probability at least 0.90; "
            f"{changed:,} records changed ({changed / 10_000:.1%})") in text


def test_internal_report_names_the_written_data_file(demo):
    _, paths, _ = demo
    internal = paths["internal_report"].read_text("utf-8")
    assert "<code>census_released.csv</code>" in internal
    assert "released.csv</code>" not in internal.replace("census_released.csv</code>", "")


def test_report_draws_risk_and_utility_charts(demo):
    _, paths, _ = demo
    page = paths["report"].read_text("utf-8")
    for chart in ("chart-risk-fk", "chart-risk-individual", "chart-risk-uniqueness", "chart-freq-marital-status",
                  "ru-map"):
        assert f'id="{chart}"' in page
    assert page.count("window.vegaEmbed=") == 1  # the Vega bundle is inlined once


def test_ru_map_uses_the_gate_measure_and_threshold(demo):
    run, _, figures = demo
    gate = next(o for o in run.gate if o.name == "max_global_risk")
    assert figures["threshold"] == gate.threshold and figures["threshold_source"] == "gate max_global_risk"
    assert figures["release_risk"] == pytest.approx(gate.value["global_risk"], rel=1e-12)


def test_hellinger_and_tvd_by_hand():
    p, q = np.array([0.5, 0.5, 0.0]), np.array([0.25, 0.25, 0.5])
    # hand: TVD = 1/2 (0.25 + 0.25 + 0.5) = 0.5; H^2 = 1/2 [2 (sqrt .5 - .5)^2 + .5]
    assert total_variation(p, q) == pytest.approx(0.5)
    assert hellinger(p, q) == pytest.approx(np.sqrt(0.5 * (2 * (np.sqrt(0.5) - 0.5) ** 2 + 0.5)))
    assert hellinger(p, p) == 0 and total_variation(p, p) == 0


def test_uniqueness_contributions_against_brute_force():
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"a": rng.integers(0, 3, 60), "b": rng.integers(0, 4, 60), "c": rng.integers(0, 2, 60)})
    got = uniqueness_contributions(df, ["a", "b", "c"]).set_index("variable")["uniques_due"]
    rows = [tuple(r) for r in df.itertuples(index=False)]
    for j, v in enumerate("abc"):
        # brute force: count records unique on all keys and not unique without v
        n = 0
        for r in rows:
            if sum(s == r for s in rows) == 1:
                rest = [k for k in range(3) if k != j]
                if sum(all(s[k] == r[k] for k in rest) for s in rows) > 1:
                    n += 1
        assert got[v] == n


words = st.text(alphabet="abc xyz_", max_size=5)  # leaves without braces or quotes of their own
nested = st.recursive(st.one_of(st.integers(), st.floats(allow_nan=False), words, st.booleans(), st.none()),
                      lambda children: st.lists(children, max_size=3)
                      | st.dictionaries(st.text(alphabet="abc_", min_size=1, max_size=5), children, max_size=3),
                      max_leaves=12)


@settings(max_examples=60, deadline=None)
@given(nested)
def test_value_html_never_writes_json(v):
    out = visible_text(value_html(v))
    assert "{" not in out and '"' not in out and "[" not in out


def test_step_sentences_of_known_steps():
    s = step_sentence("local_suppression", {"k": 3}, {"k": 3, "suppressions": 5, "records_with_suppression": 4,
                                                      "suppressions_per_variable": {"a": 5}}, 100)
    assert s.startswith("Local suppression to 3-anonymity: 5 key values set to missing in 4 records (4.0%)")
    s = step_sentence("microaggregation", {"k": 3}, {"variables": ["x", "y"], "algorithm": "mdav", "groups": 100,
                                                     "min_group": 3, "max_group": 5, "sse_sst": 0.02}, 300)
    assert s.startswith("Microaggregation (MDAV) of x, y: 100 groups of 3 to 5 records")
    s = step_sentence("some_new_step", {"scale": 0.1}, {"sse": 2.5}, 10)
    assert "{" not in s and s.startswith("Some new step with scale 0.1: sse 2.5")


def test_numeric_utility_and_spec_analyses(tmp_path):
    """Numeric variables: means, sds and the correlation change; the [report] analyses run on
    both data sets. Reference figures: pandas on the original and released frames."""
    from sdckit.release import Release
    from sdckit.spec import spec_from_dict

    rng = np.random.default_rng(5)
    n = 400
    x = rng.normal(50, 10, n)
    df = pd.DataFrame({"region": rng.integers(1, 4, n), "x": x, "y": 2 * x + rng.normal(0, 5, n)})
    df.to_csv(tmp_path / "d.csv", index=False)
    raw = {"input": {"path": "d.csv"}, "roles": {"key_vars": ["region"], "numeric_vars": ["x", "y"]},
           "run": {"seed": 1}, "steps": [{"method": "noise", "level": 0.1, "kind": "additive"}],
           "gate": {"none": "a test of the utility section"}, "output": {"directory": "out"},
           "report": {"organisation": "Test office",
                      "analyses": [{"kind": "linear", "outcome": "y", "regressors": ["x"]}]}}
    spec = spec_from_dict(raw, base_dir=tmp_path)
    run = Release.from_spec(spec).run()
    from sdckit.report.release import utility_section_html

    page = utility_section_html(run)
    rel = run.released.frame
    assert f"{rel['x'].mean():.4g}" in page and f"{df['x'].std():.4g}" in page
    change = rel[["x", "y"]].corr().to_numpy() - df[["x", "y"]].corr().to_numpy()
    assert f"Largest change of a correlation: {np.abs(change).max():.4f}" in page
    assert 'id="chart-corr-change"' in page and "Analyses named in the spec" in page
    assert "<td>linear" in page or "linear" in visible_text(page)
    bad = dict(raw, report={"page_size": "A5"})
    from sdckit.errors import SpecError

    with pytest.raises(SpecError, match="report.page_size"):
        spec_from_dict(bad, base_dir=tmp_path)
