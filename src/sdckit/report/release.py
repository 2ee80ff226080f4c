"""The public and internal HTML reports of a release (self-contained, no network needed).

The public report is written for the person who signs the release off. It opens with the
verdict (did the release pass its gate, each threshold with its measured value, what was
released and when), then draws risk before and after (f_k distribution, individual-risk
histogram, per-variable contribution to uniqueness, identifier and linkage checks when the
run made them), utility (frequencies of each key variable before and after with Hellinger
and total variation distance; numeric means, sds, quantiles and the change of the
correlation matrix; the analyses named in the spec's ``[report]`` section), and each step in
sentences and tables with its guarantees and the checker's verdict, then its plots. It holds
no raw JSON and never a seed.

The internal report adds the seeds, the input and every step's parameters.

Charts are Vega-Lite (Altair) with the Vega JavaScript inlined once per page (see
:mod:`sdckit.report.charts`).
"""

from __future__ import annotations

import datetime as _dt
import functools
import html
from importlib import resources
from typing import Any

import jinja2
import numpy as np
import pandas as pd

from ..pram.loss import hellinger, total_variation  # noqa: F401  (one definition; tests import them here)
from ..result import StepResult, public_params
from . import charts, fragments
from .narrative import GATE_WORDS, fmt, gate_measured, kv_table, step_sentence, value_html, verdict_words

#: a :class:`sdckit.release.ReleaseRun`; not imported: release.py imports this module
ReleaseRun = Any

_env = jinja2.Environment(autoescape=jinja2.select_autoescape(["html"]), undefined=jinja2.StrictUndefined)

FK_CLASSES = [(1, 1, "1"), (2, 2, "2"), (3, 3, "3"), (4, 5, "4-5"), (6, 10, "6-10"), (11, 20, "11-20"),
              (21, None, "21+")]
RISK_BINS = np.asarray(fragments.RISK_EDGES)  # one set of risk bands: the workbench draws the same


@functools.lru_cache(maxsize=1)
def _template() -> jinja2.Template:
    """The report template, compiled once per process (both reports and the PDF use it)."""
    text = resources.files("sdckit.report").joinpath("templates/release.html").read_text("utf-8")
    return _env.from_string(text)


def _once(run: ReleaseRun, key: Any, make):
    """A section of the run's reports, computed once per run: the public and the internal
    report (and a PDF) show the same risk, utility and step figures."""
    store = getattr(run, "__dict__", None)
    if store is None:
        return make()
    cache = store.setdefault("_report_sections", {})
    if key not in cache:
        cache[key] = make()
    return cache[key]


def report_settings(run: ReleaseRun) -> dict:
    """The spec's ``[report]`` section (organisation, dataset, release, analyses), or {}."""
    if run.spec is None:
        return {}
    return dict(run.spec.raw.get("report", {}) or {})


# ---------------------------------------------------------------- risk


def _fk_table(before, after) -> pd.DataFrame:
    """Records per f_k class before and after, from each report's combinations (f_k and the
    records of each combination)."""
    rows = []
    for lo, hi, label in FK_CLASSES:
        def count(freq, lo=lo, hi=hi):
            f = freq.counts
            inside = (f >= lo) & (f <= (hi if hi is not None else np.inf))
            return int(freq.group_sizes[inside].sum())
        rows.append({"f_k": label, "original": count(before), "released": count(after)})
    return pd.DataFrame(rows)


def _plain_codes(codes: list[np.ndarray], radices: list[int]) -> np.ndarray:
    """sum_k c_k prod_{j>k} r_j (int64) of codes none of which is missing."""
    out = np.asarray(codes[0]).astype(np.int64)
    for c, r in zip(codes[1:], radices[1:]):
        out *= r
        out += c
    return out


def _uniques_due(codes: list[np.ndarray], n_categories: list[int]) -> list[int]:
    """For each key, the records unique on all keys that are not unique on the others, from the
    table of combinations: each combination's key codes are the digits of its mixed-radix code,
    so the counts without one key are sums over combinations, not passes over the records."""
    from ..risk.frequencies import DENSE_LIMIT, combination_codes

    n = codes[0].shape[0]
    code, product = combination_codes(codes, n_categories)
    radices = [int(m) + 1 for m in n_categories]
    if product <= max(DENSE_LIMIT, 4 * n) and all(c.size == 0 or c.min() >= 0 for c in codes):
        # nothing missing: digits without the missing slot (radix = categories), a smaller table
        radices = [max(int(m), 1) for m in n_categories]
        code = _plain_codes(codes, radices)
        product = int(np.prod(radices, dtype=object))
    if product <= max(DENSE_LIMIT, 4 * n):
        full = np.bincount(code, minlength=product)
        gcode = np.flatnonzero(full)
        cnt = full[gcode]
    else:
        gcode, cnt = np.unique(code, return_counts=True)
    digits, rem = [], gcode
    for r in reversed(radices):                       # the digit of key j is its code + 1
        digits.append(rem % r)
        rem = rem // r
    digits.reverse()
    unique = cnt == 1
    out = []
    for v in range(len(codes)):
        rest = [j for j in range(len(codes)) if j != v]
        if not rest:
            out.append(int(unique.sum()) if n > 1 else 0)
            continue
        rc = np.zeros(gcode.shape[0], dtype=np.int64)
        rest_product = 1
        for j in rest:
            rc = rc * radices[j] + digits[j]
            rest_product *= radices[j]
        if rest_product <= max(DENSE_LIMIT, 4 * gcode.shape[0]):
            rest_count = np.bincount(rc, weights=cnt, minlength=rest_product)[rc]
        else:
            _, inv = np.unique(rc, return_inverse=True)
            rest_count = np.bincount(inv.reshape(-1), weights=cnt)[inv.reshape(-1)]
        out.append(int((unique & (rest_count > 1)).sum()))
    return out


def uniqueness_contributions(frame, keys: list[str]) -> pd.DataFrame:
    """Per key variable: the sample uniques on all keys that are no longer unique without it.

    A record unique on all key variables (f_k = 1) "depends" on variable v when it is not
    unique on the other keys; the count of such records is v's contribution to uniqueness
    (a missing value is taken as one more category here). ``frame`` is a DataFrame, or a
    :class:`~sdckit.Microdata` whose key codes are used as they are.
    """
    from ..microdata import Microdata

    if isinstance(frame, Microdata) and all(v in frame.key_vars for v in keys):
        codes = [frame.codes(v) for v in keys]
        ncat = [frame.n_categories(v) for v in keys]
    else:
        data = frame.frame if isinstance(frame, Microdata) else frame
        pairs = [pd.factorize(data[v], use_na_sentinel=False) for v in keys]
        codes = [c for c, _ in pairs]
        ncat = [len(u) for _, u in pairs]
    due = _uniques_due(codes, ncat) if keys else []
    return pd.DataFrame({"variable": list(keys), "uniques_due": due})


def _combination_risks(md, report) -> tuple[np.ndarray, np.ndarray]:
    """The individual risk of each key combination of a :func:`measure_risk` report (with its
    default settings, as the report ran) and the records of each: a histogram of these,
    weighted, counts the records by risk."""
    from ..risk.individual import individual_risk

    freq = report.frequencies
    g_risk = individual_risk(freq.counts, freq.weighted_counts, weighted=md.weight is not None)
    return g_risk, freq.group_sizes


def risk_section_html(run: ReleaseRun) -> str:
    """Risk before and after: the comparison table and its charts."""
    from ..risk.report import compare_risk, measure_risk

    keys = list(run.original.key_vars)
    if not keys:
        return "<p>No key variables were named, so no key-based risk was measured.</p>"
    before, after = measure_risk(run.original), measure_risk(run.released)
    cmp = compare_risk(before, after)
    parts = [f"<p>Key variables (what an intruder is assumed to know): {html.escape(', '.join(keys))}. "
             f"The original had {fmt(before.summary['n_sample_uniques'])} sample uniques and a global risk of "
             f"{fragments.percent(before.summary['global_risk'])}; the release has "
             f"{fmt(after.summary['n_sample_uniques'])} and {fragments.percent(after.summary['global_risk'])}.</p>",
             risk_rise_html(run, before.summary, after.summary), fragments.risk_comparison_html(cmp)]
    fk = _fk_table(before.frequencies, after.frequencies)
    long = fk.melt(id_vars="f_k", var_name="data", value_name="records")
    import altair as alt

    fk_chart = alt.Chart(long).mark_bar().encode(
        x=alt.X("f_k:N", title="size of the record's key class (f_k)", sort=[c[2] for c in FK_CLASSES]),
        xOffset="data:N", y=alt.Y("records:Q", title="records"),
        color=alt.Color("data:N", scale=charts.BEFORE_AFTER, title=None, legend=alt.Legend(orient="top")),
        tooltip=["f_k:N", "data:N", "records:Q"]).properties(title="f_k distribution", width=380, height=200)
    # one risk per key combination, counted with the records of the combination
    (r_b, w_b), (r_a, w_a) = _combination_risks(run.original, before), _combination_risks(run.released, after)
    # the workbench's risk page draws the same bands (fragments.RISK_EDGES)
    risk_chart = fragments.risk_histogram_chart(r_b, r_a, weights_before=w_b, weights_after=w_a)
    contrib = pd.concat([uniqueness_contributions(run.original, keys).assign(data="original"),
                         uniqueness_contributions(run.released, keys).assign(data="released")])
    contrib_chart = alt.Chart(contrib).mark_bar().encode(
        y=alt.Y("variable:N", title=None, sort=keys), yOffset="data:N",
        x=alt.X("uniques_due:Q", title="sample uniques that need this variable"),
        color=alt.Color("data:N", scale=charts.BEFORE_AFTER, title=None, legend=alt.Legend(orient="top")),
        tooltip=["variable:N", "data:N", "uniques_due:Q"]).properties(
        title="Contribution of each key variable to uniqueness", width=340, height=24 * len(keys) + 20)
    parts.append("<div class='charts'>"
                 + charts.embed(fk_chart, "chart-risk-fk", caption="Records by the size of their key class: "
                                "f_k = 1 is a sample unique; the gate's k-anonymity needs every f_k >= k.")
                 + charts.embed(risk_chart, "chart-risk-individual",
                                caption="Records by individual risk (symmetric log scale).")
                 + charts.embed(contrib_chart, "chart-risk-uniqueness",
                                caption="For each key variable, the records unique on all keys that would not "
                                        "be unique without it: the variables that drive the risk.")
                 + "</div>")
    fk_rows = "".join(f"<tr><td>{r.f_k}</td><td>{r.original:,}</td><td>{r.released:,}</td></tr>" for r in fk.itertuples())
    parts.append(f"<details><summary>f_k distribution as a table</summary><table><tr><th>f_k</th><th>original</th>"
                 f"<th>released</th></tr>{fk_rows}</table></details>")
    parts.append(linkage_html(run))
    return "".join(parts)


def risk_rise_html(run: ReleaseRun, before: dict, after: dict) -> str:
    """A sentence when a step raised a displayed risk figure (:func:`fragments.risk_rise_html`,
    the workbench's step card says the same): with PRAM, the matching intruder-side figure is
    the expected share of correct re-identifications by an intruder who knows the original keys
    (:func:`sdckit.explore.measures.linkage_risk`). Empty when nothing rose."""
    pram = "pram" in [r.method for r in run.results]
    b = a = None
    if pram and fragments.risk_rise_html(before, after, pram=False):
        from ..errors import SDCError
        from ..risk.intruder import intruder_microdata, linkage_risk

        def certainty(released, steps):
            try:   # the view as Microdata: its key codes are used as they are
                return linkage_risk(released, intruder_microdata(run.original, steps))
            except SDCError:  # e.g. keys the release dropped: the sentence then gives the counts alone
                return None

        b, a = certainty(run.original, []), certainty(run.released, run.steps)
    return fragments.risk_rise_html(before, after, pram=pram, intruder_before=b, intruder_after=a)


def linkage_html(run: ReleaseRun) -> str:
    """Identifiers and linkage on all columns: the run's identifier check, exact-match linkage
    by an intruder who knows every released column (before and after), and the non-key columns
    that add most uniques to the keys (:meth:`ReleaseRun.disclosure`, when the run has it)."""
    import altair as alt

    out = ["<h3>Identifiers and linkage on all columns</h3>"]
    d = run.disclosure() if hasattr(run, "disclosure") else None
    gates = {o.name: o for o in run.gate}
    if d is None:
        return out[0] + "<p>This run made no identifier or all-columns linkage check.</p>"
    ident = d.get("identifiers") or []
    g = gates.get("allow_identifiers")
    if ident:
        rows = "".join(f"<tr><td>{html.escape(str(f.get('column')))}</td><td>{html.escape(str(f.get('reason', '')))}</td>"
                       f"<td>{'masked' if f.get('masked') else ('accepted' if f.get('allowed') else 'RELEASED')}</td></tr>"
                       for f in ident)
        out.append("<p>Columns of the release that look like direct identifiers:</p><table><tr><th>column</th>"
                   f"<th>why</th><th>status</th></tr>{rows}</table>")
    else:
        out.append("<p>No released column looks like a direct identifier (nearly unique per record, or named "
                   "like an id, name, address, phone, e-mail, postcode or date of birth).</p>")
    if g is not None:
        label = fragments.threshold_words(g.name, g.threshold)[0]
        out.append(f"<p>Gate threshold <b>{html.escape(label)}</b>: <span class='{'ok' if g.passed else 'fail'}'>"
                   f"{'met' if g.passed else 'NOT MET'}</span>: "
                   f"{html.escape(fragments.measured_sentence(g.name, g.value))}.</p>")
    lk = d.get("linkage_all_columns") or {}
    b, a = lk.get("before") or {}, lk.get("after") or {}
    if b and a:
        out.append(f"<p>An intruder who knows a person's values on all {len(a.get('columns', []))} released columns "
                   f"and looks for exact matches re-identifies {a['correct_link_share']:.2%} of records in the "
                   f"release ({fmt(a['expected_correct_links'])} expected correct links), against "
                   f"{b['correct_link_share']:.2%} in the original; {fmt(a['sample_uniques'])} released records are "
                   f"unique on all columns (original {fmt(b['sample_uniques'])}).</p>")
        out.append(linkage_comment(run, a))
        g2 = gates.get("max_linkage_all_columns")
        if g2 is not None:
            words, limit = fragments.threshold_words(g2.name, g2.threshold)
            out.append(f"<p>Gate threshold <b>{html.escape(words)}</b> ({html.escape(limit)}): "
                       f"<span class='{'ok' if g2.passed else 'fail'}'>{'met' if g2.passed else 'NOT MET'}</span>.</p>")
        df = pd.DataFrame({"measure": ["re-identified by exact match", "unique on all columns"] * 2,
                           "data": ["original"] * 2 + ["released"] * 2,
                           "share": [b["correct_link_share"], b["sample_unique_share"],
                                     a["correct_link_share"], a["sample_unique_share"]]})
        ch = alt.Chart(df).mark_bar().encode(
            y=alt.Y("measure:N", title=None), yOffset="data:N",
            x=alt.X("share:Q", title="share of records", axis=alt.Axis(format="%")),
            color=alt.Color("data:N", scale=charts.BEFORE_AFTER, title=None, legend=alt.Legend(orient="top")),
            tooltip=["measure:N", "data:N", alt.Tooltip("share:Q", format=".2%")]).properties(
            title="Linkage on all released columns", width=360, height=110)
        parts = [charts.embed(ch, "chart-linkage-all-columns",
                              caption="An intruder who knows every released column of a person, matching exactly.")]
        scan = [r for r in (d.get("undeclared_scan") or []) if r.get("added_uniques", 0) > 0]
        if scan:
            sf = pd.DataFrame({"column": [str(r["column"]) for r in scan],
                               "added": [int(r["added_uniques"]) for r in scan]})
            ch2 = alt.Chart(sf).mark_bar(color="#4c78a8").encode(
                y=alt.Y("column:N", sort="-x", title=None), x=alt.X("added:Q", title="sample uniques added to the keys"),
                tooltip=["column:N", "added:Q"]).properties(
                title="Non-key columns that add most uniques", width=340, height=22 * len(sf) + 20)
            parts.append(charts.embed(ch2, "chart-undeclared-scan",
                                      caption="Each non-key column added to the key variables: how many more records "
                                              "become unique. Large values: consider declaring it a key."))
        out.append("<div class='charts'>" + "".join(parts) + "</div>")
    return "".join(out)


def linkage_comment(run: ReleaseRun, after: dict) -> str:
    """A comment when many records are re-identified on all columns but the gate has no
    threshold for it: a Passed verdict covers the key variables only, not an intruder who knows
    every released column."""
    share = float(after.get("correct_link_share", 0.0) or 0.0)
    if share < 0.05 or any(o.name == "max_linkage_all_columns" for o in run.gate):
        return ""
    verdict = "Passed" if run.verdict == "passed" else "the verdict"
    return (f"<p class='explain' id='linkage-comment'><b>What {verdict} does not cover:</b> "
            f"{fragments.percent(share)} of records are re-identified by an intruder who knows every released "
            "column. The gate judges the key variables, the columns an intruder is assumed to know; this "
            "figure matters only if an intruder can know the other columns too (for example from a register or "
            "an earlier release). If so, declare those columns as keys or add the threshold "
            "<code>max_linkage_all_columns</code> to the gate.</p>")


def _per_column(value: Any) -> pd.DataFrame | None:
    """A per-column figure inside a check's value ({column: number}), if there is one."""
    if not isinstance(value, dict):
        return None
    for v in value.values():
        if isinstance(v, dict) and v and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v.values()):
            return pd.DataFrame({"column": list(map(str, v)), "value": [float(x) for x in v.values()]})
    return None


# ---------------------------------------------------------------- utility




def _intruder_view(run: ReleaseRun):
    """The original data recoded by the release's published global recodings (what an
    intruder who knows the recodings compares the release with), as a Microdata."""
    view = run.original
    for step in run.steps:
        if getattr(step, "global_recode", False):
            view = step.apply(view).microdata
    return view


def utility_section_html(run: ReleaseRun) -> str:
    """Utility: key variables (frequency bars, Hellinger, TVD), numeric variables, analyses.

    Every key-variable figure comes from the key codes and the counts of each category
    (:mod:`sdckit.utility.categorical`): no pass over the records in Python."""
    from ..utility.categorical import changed_share, entropy_terms, label_codes, shares, value_labels_of

    orig, rel = run.original.frame, run.released.frame
    out = []
    keys = [v for v in run.original.key_vars if v in rel]
    if keys:
        view = _intruder_view(run) if run.steps else run.original
        seen: dict = {}

        def labelled(md, v):
            # a key the steps left alone has the same codes in each data set: labelled once
            key = (id(md.codes(v)), id(md.categories(v))) if v in md.key_vars else (id(md), v)
            if key not in seen:
                seen[key] = (label_codes(md, v), md)
            return seen[key][0]

        labels = {v: (labelled(run.original, v), labelled(run.released, v), labelled(view, v)) for v in keys}
        # H(X) and H(X | Y) of each key once: each key's figure and the total (summed in key order)
        # a synthetic file of another size has no record-for-record figures (entropy, changes)
        aligned = run.original.n_records == run.released.n_records
        terms = {v: entropy_terms(a, b) if aligned else (0.0, float("nan")) for v, (a, b, _) in labels.items()}
        h_x = h_xy = 0.0
        for hx, hxy in terms.values():
            h_x += hx
            h_xy += hxy
        total = 1.0 if h_x == 0 and aligned else float(1.0 - h_xy / h_x) if aligned else float("nan")
        out.append("<p>Each key variable's frequencies in the original data (recoded by the release's "
                   "published global recodings, so the bars compare like with like) and in the release. "
                   "Hellinger distance and total variation distance (TVD) are 0 for identical frequencies, "
                   "1 for disjoint ones.</p>"
                   f"<p>Information kept in the key variables (1 = all; non-uniform entropy): <b>{'—' if total != total else f'{total:.4f}'}</b>.</p>")
        rows, figs = [], []
        for v in keys:
            a_orig, b_rel, a_view = labels[v]
            pa, pb = shares(a_view, b_rel)
            look = value_labels_of(run.original, v)
            if look:  # categories by their value labels
                pa.index = [look.get(t, t) for t in pa.index]
                pb.index = [look.get(t, t) for t in pb.index]
            h, t = hellinger(pa.to_numpy(), pb.to_numpy()), total_variation(pa.to_numpy(), pb.to_numpy())
            hx, hxy = terms[v]
            kept = float("nan") if not aligned else 1.0 if hx == 0 else float(1.0 - hxy / hx)   # this key alone
            # a record counts as changed when its value differs from the original recoded by the
            # published global recodings (a recoded label alone is not a change of the record)
            changed = f"{changed_share(a_view, b_rel):.2%}" if aligned else "—"
            rows.append(f"<tr><td>{html.escape(v)}</td><td>{len(pa)}</td><td>{h:.4f}</td><td>{t:.4f}</td>"
                        f"<td>{'—' if kept != kept else f'{kept:.4f}'}</td><td>{changed}</td></tr>")
            figs.append(charts.embed(charts.frequency_bars(pa, pb, variable=f"{v} (Hellinger {h:.4f}, TVD {t:.4f})",
                                                           width=max(160, min(26 * len(pa), 420))),
                                     charts.chart_id("freq", v)))
        out.append("<table><tr><th>key variable</th><th>categories</th><th>Hellinger</th><th>TVD</th>"
                   "<th>information kept</th><th>records changed or suppressed (beyond global recoding)</th>"
                   f"</tr>{''.join(rows)}</table>")
        out.append("<div class='charts'>" + "".join(figs) + "</div>")
    num = [v for v in run.original.numeric_vars if v in rel]
    if num:
        q = [0.05, 0.25, 0.5, 0.75, 0.95]
        body = []
        for v in num:
            a, b = pd.to_numeric(orig[v], errors="coerce"), pd.to_numeric(rel[v], errors="coerce")
            qa, qb = a.quantile(q), b.quantile(q)
            body.append(f"<tr><td rowspan='2'>{html.escape(v)}</td><td>original</td><td>{fmt(a.mean())}</td>"
                        f"<td>{fmt(a.std())}</td>" + "".join(f"<td>{fmt(x)}</td>" for x in qa) + "</tr>"
                        f"<tr><td>released</td><td>{fmt(b.mean())}</td><td>{fmt(b.std())}</td>"
                        + "".join(f"<td>{fmt(x)}</td>" for x in qb) + "</tr>")
        out.append("<h3>Numeric variables</h3><table><tr><th>variable</th><th>data</th><th>mean</th><th>sd</th>"
                   + "".join(f"<th>{int(p * 100)}%</th>" for p in q) + f"</tr>{''.join(body)}</table>")
        if len(num) >= 2:
            ca = orig[num].apply(pd.to_numeric, errors="coerce").corr().to_numpy()
            cb = rel[num].apply(pd.to_numeric, errors="coerce").corr().to_numpy()
            d = cb - ca
            out.append(f"<p>Largest change of a correlation: {np.nanmax(np.abs(d)):.4f}.</p>")
            out.append(charts.embed(charts.heatmap(d, num, title="Change of the correlation matrix (released - original)",
                                                   value_title="change"), "chart-corr-change"))
    if (keys or num) and run.original.n_records != run.released.n_records:
        out.append(f"<p>The release has {run.released.n_records:,} records and the original "
                   f"{run.original.n_records:,}: no released record stands for an original one, so the "
                   "record-for-record figures (information kept, records changed) do not apply.</p>")
    elif keys or num:
        out.append("<details><summary>Original against released: statistics, two-way tabulations and "
                   "information loss per variable</summary>"
                   + fragments.utility_panel_html(_intruder_view(run) if run.steps else run.original, run.released)
                   + "</details>")
    analyses = report_settings(run).get("analyses")
    if analyses:
        from ..utility.analyses import compare_analyses

        cmp = compare_analyses(orig, rel, analyses, raise_errors=False)
        out.append("<h3>Analyses named in the spec</h3><p>Each analysis run on the original and on the "
                   "released data; regression coefficients are compared in units of the original standard "
                   "error.</p>" + cmp.report_html())
    return "".join(out) or "<p>No key or numeric variables were named.</p>"


# ---------------------------------------------------------------- data: spreadsheet formulas


_GUARD_WORDS = {
    "warn": ("were written as they are: a spreadsheet that opens the CSV file may run them as "
             "formulas. Set <code>[output] csv_formula_guard = \"quote\"</code> to write them with a "
             "leading <code>'</code>, or <code>\"refuse\"</code> to refuse such a release."),
    "quote": ("were written with a leading <code>'</code> (OWASP's rule, "
              "<code>csv_formula_guard = \"quote\"</code>): a spreadsheet shows them as text. The "
              "published matrices carry the same prefix, so their labels match the data."),
    "refuse": ("are refused by <code>csv_formula_guard = \"refuse\"</code>: such a release is not "
               "written."),
}


def formula_section_html(run: ReleaseRun, *, data_file: str, mode: str = "warn") -> str:
    """The data section's paragraph on cells a spreadsheet would run as formulas ("CSV
    injection", :mod:`sdckit.io.formulas`): found in the released data and the published CSV
    files (column, count, an example), and what ``[output] csv_formula_guard`` did with them."""
    from ..io.formulas import csv_text_findings, formula_cells

    csv_data = str(data_file).lower().endswith(".csv")
    rows = []
    for f in formula_cells(run.released.frame):
        where = f"column name {f['column']!r}" if f.get("header") else f"column {f['column']}"
        rows.append((data_file, where, f["count"], f["example"]))
    for r in run.results:
        for name, text in sorted(r.artifacts.items()):
            if name.endswith(".csv"):
                found = csv_text_findings(text)
                if found:
                    rows.append((name, "category labels", found["count"], found["example"]))
    if not rows:
        return ("<p id='formula-cells' data-formula-cells='0'><b>Spreadsheet formulas:</b> no released cell "
                "begins like a formula (<code>=</code>, <code>+</code>, <code>-</code>, <code>@</code>, tab or "
                "carriage return, other than a plain number).</p>")
    n = sum(r[2] for r in rows)
    esc = html.escape
    table = "".join(f"<tr><td><code>{esc(f)}</code></td><td>{esc(w)}</td><td>{c:,}</td>"
                    f"<td><code>{esc(e)}</code></td></tr>" for f, w, c, e in rows)
    note = ("" if csv_data else f" The data file <code>{esc(str(data_file))}</code> is not CSV: its cells "
            "are not read as formulas and are written as they are; the guard applies to the CSV files.")
    headers = any("column name" in r[1] for r in rows)
    head_note = " Column names are never changed (the certificate lists them)." if headers else ""
    return (f"<div id='formula-cells' data-formula-cells='{n}'><p class='fail'><b>Spreadsheet formulas:</b> "
            f"{n:,} released cell{'s' if n != 1 else ''} begin{'' if n != 1 else 's'} like a formula and "
            f"{_GUARD_WORDS.get(mode, _GUARD_WORDS['warn'])}{note}{head_note}</p>"
            "<table class='formulas'><tr><th>file</th><th>where</th><th>cells</th><th>example</th></tr>"
            f"{table}</table></div>")


# ---------------------------------------------------------------- steps and verdict


def _step_plots(r: StepResult) -> str:
    """The step's own report fragment without its generic settings/figures part (shown above
    in words), i.e. its plots and tables."""
    full = r.report_html()
    base = StepResult.report_html(r)
    return full[len(base):] if full.startswith(base) else ""


def steps_context(run: ReleaseRun, *, internal: bool) -> list[dict]:
    out = []
    n = run.released.n_records
    for i, r in enumerate(run.results):
        g = [{"statement": x.statement, "measured": value_html(x.value), "holds": bool(x.holds)} for x in r.guarantees]
        out.append({"index": i + 1, "method": r.method.replace("_", " "),
                    "sentence": step_sentence(r.method, public_params(r.params), r.summary, n),
                    "settings": fragments.settings_html(r.method, public_params(r.params)),
                    "figures": kv_table(r.summary),
                    "guarantees": g, "plots": _once(run, ("plots", i), lambda r=r: _step_plots(r)),
                    "internal": r.internal_report_html() if internal else "",
                    "seconds": fmt(run.timings[i]) if i < len(run.timings) else None})
    return out


def verdict_context(run: ReleaseRun) -> list[dict]:
    from .narrative import gate_headline

    rows = []
    for o in run.gate:
        rows.append({"name": o.name, "what": GATE_WORDS.get(o.name, o.name.replace("_", " ")),
                     "threshold": fmt(o.threshold), "threshold_raw": o.threshold,
                     "measured": gate_measured(o.name, o.value), "headline": gate_headline(o.name, o.value),
                     "passed": bool(o.passed), "detail": o.detail})
    return rows


def gate_sections(run: ReleaseRun) -> list[tuple[str, str]]:
    """Report sections that gate checks contribute (a check class's ``report_section(outcomes)``
    returns a title and an HTML fragment, e.g. the privacy attacks): one section per function,
    with every outcome it covers."""
    from ..errors import SDCError
    from ..registry import gate_check_class

    grouped: dict = {}
    for o in run.gate:
        try:
            fn = getattr(gate_check_class(o.name), "report_section", None)
        except SDCError:
            continue
        if fn is not None:
            grouped.setdefault(fn, []).append(o)
    return [(title, body) for fn, outs in grouped.items() for title, body in [fn(outs)] if body]


def _context(run: ReleaseRun, *, internal: bool, data_file: str | None, artifacts: list[str],
             extra_sections: list[tuple[str, str]] | None = None, formula_guard: str | None = None) -> dict:
    from .. import __version__

    if data_file is None:
        data_file = run.spec.output.data if run.spec is not None else "released.csv"
    if not artifacts:  # the files the steps publish beside the data
        artifacts = sorted({name for r in run.results for name in r.artifacts})
    settings = report_settings(run)
    roles = [(k, ", ".join(v) if isinstance(v, (tuple, list)) else v) for k, v in run.released.roles.items() if v]
    now = _dt.datetime.now(_dt.UTC)
    guarantees_ok = all(g.holds for r in run.results for g in r.guarantees)
    sections = [("verdict", "Verdict"), ("data", "Data released"), ("risk", "Disclosure risk before and after"),
                ("utility", "Utility"), ("steps", "Steps")]
    extra_sections = [*_once(run, "gate_sections", lambda: gate_sections(run)), *(extra_sections or [])]
    extra = [{"id": f"extra-{i}", "title": t, "html": h} for i, (t, h) in enumerate(extra_sections)]
    sections += [(e["id"], e["title"]) for e in extra]
    if artifacts:
        sections.append(("files", "Files published with the data"))
    if internal:
        sections.append(("internal", "Seeds and parameters (internal)"))
    return {
        "title": ("Internal report: " if internal and settings.get("title") else "") + settings["title"]
                 if settings.get("title") else (("Internal report" if internal else "Release report")
                                                + (f": {settings['release']}" if settings.get("release") else "")),
        "internal": internal, "version": __version__,
        "organisation": settings.get("organisation", ""), "dataset": settings.get("dataset", ""),
        "release_name": settings.get("release", ""),
        "date": now.strftime("%Y-%m-%d %H:%M UTC"),
        "passed": run.passed, "guarantees_ok": guarantees_ok,
        "verdict_kind": verdict_words(run)[0], "verdict_text": verdict_words(run)[1],
        "verdict_detail": verdict_words(run)[1].split(": ", 1)[-1],
        "n_records": f"{run.released.n_records:,}", "n_columns": len(run.released.columns),
        "roles": roles, "data_file": data_file, "input": run.original.meta.source if internal else None,
        "spec_source": run.spec.source if internal and run.spec is not None else None,
        "vega_script": charts.vega_script(),
        "verdict": verdict_context(run), "gate_html": gate_html(run),
        "columns_html": _once(run, "columns", lambda: columns_html(run)),
        "risk_html": _once(run, "risk", lambda: risk_section_html(run)),
        "formula_html": formula_section_html(run, data_file=data_file, mode=formula_guard or (
            run.spec.output.csv_formula_guard if run.spec is not None else "warn")),
        "utility_html": _once(run, "utility", lambda: utility_section_html(run)),
        "steps": steps_context(run, internal=internal),
        "artifacts": artifacts, "extra_sections": extra, "toc": sections,
        "internal_html": internal_section_html(run) if internal else "",
    }


def gate_html(run: ReleaseRun) -> str:
    """The verdict's table of thresholds (:func:`sdckit.report.fragments.gate_table_html`) and,
    under a Passed verdict, the comments on what it does not cover."""
    out = fragments.gate_table_html(run.gate)
    d = run.disclosure() if hasattr(run, "disclosure") else None
    after = ((d or {}).get("linkage_all_columns") or {}).get("after") or {}
    if after:
        out += linkage_comment(run, after)
    return out


def columns_html(run: ReleaseRun) -> str:
    """The released columns with their types in words ("whole number", "decimal",
    "category"), roles and, for categories, the number of categories."""
    md = run.released
    roles: dict[str, list[str]] = {}
    for role, cols in md.roles.items():
        for c in ([cols] if isinstance(cols, str) else list(cols or ())):
            roles.setdefault(c, []).append(role.replace("_", " "))
    rows = []
    for c in md.columns:
        col = md.frame[c]
        kind = fragments.kind_words(col)
        labels = getattr(md.meta, "column_labels", {}) or {}
        rows.append(f"<tr><td>{html.escape(str(c))}</td><td>{html.escape(str(labels.get(c, '')))}</td>"
                    f"<td>{kind}</td><td>{html.escape(', '.join(roles.get(c, [])) or '—')}</td></tr>")
    return ("<details><summary>Columns and their types</summary><table class='columns'><tr><th>column</th>"
            f"<th>label</th><th>type</th><th>role</th></tr>{''.join(rows)}</table></details>")


def internal_section_html(run: ReleaseRun) -> str:
    """The internal report's seeds and parameters as readable tables; the whole record is the
    JSON file beside the report (a download, not dumped in the page)."""
    from pathlib import PurePath

    seeds = run.seeds.to_dict()
    root = seeds.get("root", seeds) if isinstance(seeds, dict) else {}
    per_step = seeds.get("steps", []) if isinstance(seeds, dict) else []
    name = "internal_report.json"
    if run.spec is not None:
        name = PurePath(run.spec.output.internal_report).stem + ".json"
    origin = {"user": "given by the steward (the spec's run.seed or rng=)", "os": "drawn from the operating system",
              "entropy": "drawn from the operating system"}
    rows = [("seed", root.get("entropy") or "—"),
            ("where it came from", origin.get(str(root.get("source")), str(root.get("source") or "—")))]
    seed_rows = "".join(f"<tr><th>{html.escape(a)}</th><td><code>{html.escape(str(b))}</code></td></tr>"
                        for a, b in rows)
    steps = []
    for i, r in enumerate(run.results):
        sec = f"{fmt(run.timings[i])} s" if i < len(run.timings) else "—"
        stream = per_step[i].get("spawn_key") if i < len(per_step) and isinstance(per_step[i], dict) else None
        stream_words = "—" if stream is None else ("the root stream" if not stream else
                                                   "child stream " + ".".join(map(str, stream)))
        steps.append(f"<tr><td>{i + 1}</td><td>{html.escape(r.method.replace('_', ' '))}</td>"
                     f"<td>{fragments.settings_html(r.method, r.params) or '—'}</td>"
                     f"<td>{html.escape(stream_words)}</td><td>{sec}</td></tr>")
    source = run.original.meta.source
    return (f"<table class='kv seeds'>{seed_rows}<tr><th>input file</th><td><code>{html.escape(str(source))}</code>"
            "</td></tr></table><h3>Each step's parameters</h3><table class='internal-steps'><tr><th>step</th>"
            "<th>method</th><th>parameters</th><th>random stream (from the seed)</th><th>time</th></tr>"
            f"{''.join(steps)}</table>"
            f"<p>The whole record (seeds, parameters, gate and figures) as data: "
            f"<a href='{html.escape(name)}' download><code>{html.escape(name)}</code></a>, beside this report.</p>")


def public_report_html(run: ReleaseRun, *, data_file: str | None = None, artifacts: list[str] | None = None,
                       extra_sections: list[tuple[str, str]] | None = None,
                       formula_guard: str | None = None) -> str:
    """The public report: verdict, risk and utility drawn, steps in words. No seeds, no JSON.

    ``formula_guard`` is what the CSV outputs did with formula-like cells (default: the
    spec's ``[output] csv_formula_guard``); the data section says it.
    """
    return _template().render(**_context(run, internal=False, data_file=data_file,
                                         artifacts=artifacts or [], extra_sections=extra_sections,
                                         formula_guard=formula_guard))


def internal_report_html(run: ReleaseRun, *, data_file: str | None = None,
                         artifacts: list[str] | None = None,
                         extra_sections: list[tuple[str, str]] | None = None) -> str:
    """The internal report: the public content plus seeds, input and every parameter.

    ``data_file`` defaults to the spec's ``output.data`` (the file actually written).
    """
    return _template().render(**_context(run, internal=True, data_file=data_file,
                                         artifacts=artifacts or [], extra_sections=extra_sections))


def outcome_report_html(outcome: Any, *, data_file: str | None = None, artifacts: list[str] | None = None,
                        extra_sections: list[tuple[str, str]] | None = None,
                        formula_guard: str | None = None) -> str:
    """The public report of any release outcome (:class:`sdckit.runner.ReleaseOutcome`) from the
    one template: an in-memory run (its step ``results``) as :func:`public_report_html`, an
    outcome of partitioned data (the Dask engine's run) from its public data
    (:func:`sdckit.report.outcome.partitioned_context`); a part of the template such an outcome
    has no content for stays empty."""
    if hasattr(outcome, "results"):
        return public_report_html(outcome, data_file=data_file, artifacts=artifacts,
                                  extra_sections=extra_sections, formula_guard=formula_guard)
    import jinja2.meta

    from .outcome import partitioned_context

    context = partitioned_context(outcome, data_file=data_file, artifacts=artifacts or [])
    source = resources.files("sdckit.report").joinpath("templates/release.html").read_text("utf-8")
    for name in jinja2.meta.find_undeclared_variables(_env.parse(source)) - set(context):
        context[name] = ""
    return _template().render(**context)


# kept for callers of the earlier names
def risk_comparison_html(run: ReleaseRun) -> str:
    return risk_section_html(run)


def utility_html(run: ReleaseRun) -> str:
    return utility_section_html(run)
