"""HTML fragments and chart data shared by the release reports and the workbench.

One function per figure or table a steward reads, so the workbench's screens and the public
and internal reports show the same measures, the same units, the same bins and the same
words. Every fragment is escaped HTML (no JSON); every measured value is shown through a
declared label (the parameter's label, unit and symbol, :mod:`sdckit.params`) and a sentence.
Categories are shown by their value labels (SPSS/Stata labels, a labels file or a recode) and
ordered categories in their order (``"<25"`` before ``"65+"``).

Chart functions return a Vega-Lite specification (a plain ``dict``) built by one *data*
function, so a test can compare the data the workbench draws with the data the report draws.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "RISK_EDGES", "RISK_LABELS", "below_k_records_html", "compare_branches_html", "frequency_chart",
    "frequency_table", "frequency_table_html", "gate_table_html", "ldiversity_html", "measured_sentence",
    "percent", "riskiest_records_html", "risk_histogram", "risk_histogram_chart", "rumap_chart",
    "rumap_data", "utility_panel_html", "frequency_data", "kind_words", "param_words", "threshold_words",
    "value_with_unit", "settings_html", "risk_comparison_html", "utility_figures", "branch_figures", "risk_axis_title", "utility_axis_title",
    "risk_rise_html",
]

#: the individual-risk bands of every risk histogram (workbench and reports): lower edges
#: inclusive, the last band closed at 1
RISK_EDGES = (0.0, 0.001, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0)
RISK_LABELS = ("under 0.1%", "0.1% to 1%", "1% to 5%", "5% to 10%", "10% to 20%", "20% to 50%", "50% or more")


def percent(share: float, digits: int = 2) -> str:
    """A share (0..1) as a percentage ("8.18%"): how global risk and every share is shown."""
    try:
        x = float(share)
    except (TypeError, ValueError):
        return "—"
    return "—" if math.isnan(x) else f"{x:.{digits}%}"


def _esc(x: Any) -> str:
    return html.escape(str(x))


def _check_class(check: Any) -> type | None:
    from ..errors import SDCError
    from ..registry import GateCheck, gate_check_class

    if isinstance(check, type) and issubclass(check, GateCheck):
        return check
    if isinstance(check, GateCheck):
        return type(check)
    try:
        return gate_check_class(str(check))
    except SDCError:
        return None


def measured_sentence(check: Any, measured: Any) -> str:
    """The measured value of a gate check as a sentence ("k reached: 3; records below k: 0").

    ``check`` is a gate check's name, class or instance; the sentence comes from the class's
    ``measured_sentence`` (declared labels and units), never JSON.
    """
    from ..registry import measured_words

    cls = _check_class(check)
    if cls is None:
        return measured_words(measured)
    return cls.measured_sentence(_per_target_in_unit(cls, measured))


def _per_target_in_unit(cls: type, measured: Any) -> Any:
    """A per-target table of a check measured in percent (DiSCO, TCAP: ``by_target``) with each
    figure in words with its "%", as the headline figure reads."""
    labels = getattr(cls, "measured_labels", {}) or {}
    if not isinstance(measured, Mapping) or not isinstance(measured.get("by_target"), Mapping):
        return measured
    unit = next((u for k, (_, u) in labels.items() if k in measured and u), None)
    if unit != "percent":
        return measured
    table = {t: (f"{float(v):.4g}%" if isinstance(v, (int, float, np.number)) and not isinstance(v, bool)
                 and not math.isnan(float(v)) else v) for t, v in measured["by_target"].items()}
    return {**measured, "by_target": table}


def value_with_unit(value: Any, unit: str | None) -> str:
    """A declared parameter's value with its unit: a share as a percentage ("1.00% of
    records"), a percent as "5% of records", a count as "3 records"."""
    if isinstance(value, Mapping):   # a grouping or a table of settings: "label = codes; ..."
        return "; ".join(f"{k} = {value_with_unit(v, None)}" for k, v in value.items()) if value else "none"
    if isinstance(value, (list, tuple)):
        return ", ".join(value_with_unit(v, None) for v in value) if value else "none"
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, (bool, np.bool_)):
        return "—" if value is None else ("yes" if value else "no")
    if not isinstance(value, (int, float, np.integer, np.floating)):
        return _plain(value)
    unit = unit or ""
    if unit.startswith("share"):
        rest = unit[len("share"):].strip()
        return percent(value) + (f" {rest}" if rest else "")
    if unit.startswith("percent"):
        rest = unit[len("percent"):].strip()
        return f"{float(value):g}%" + (f" {rest}" if rest else "")
    text = f"{int(value):,}" if isinstance(value, (int, np.integer)) else f"{float(value):g}"
    return f"{text} {unit}" if unit and unit not in ("probability", "ratio") else text


def param_words(p: Any, value: Any) -> tuple[str, str]:
    """A declared parameter as (label, value with unit): the label with the paper's symbol in
    brackets when the label does not already hold it (never "k k")."""
    label = p.display_label
    sym = (p.symbol or "").strip()
    if sym and sym.lower() not in label.lower() and sym.replace("_", "").lower() not in label.lower():
        label = f"{label} ({sym})"
    return label, value_with_unit(value, p.unit)


def threshold_words(name: str, threshold: Any) -> tuple[str, str]:
    """A gate threshold as (label, value with unit), from the check's declaration."""
    from ..params import step_params

    cls = _check_class(name)
    if cls is None:
        return str(name).replace("_", " "), _plain(threshold)
    p = step_params(cls)[0]
    if isinstance(threshold, Mapping):
        threshold = threshold.get(p.name, threshold)
    return param_words(p, threshold)


def _plain(v: Any) -> str:
    from ..registry import measured_words

    return measured_words(v)


def _outcome_fields(o: Any) -> tuple[str, Any, Any, bool]:
    if isinstance(o, Mapping):
        return (str(o.get("name")), o.get("threshold"), o.get("value", o.get("measured")), bool(o.get("passed")))
    return o.name, o.threshold, o.value, bool(o.passed)


def gate_table_html(gate_outcomes: Sequence[Any]) -> str:
    """The gate as a table: each threshold's label, its value with unit, the measured value as
    a sentence and the verdict in words (``GateOutcome`` objects or their dicts).

    Each row carries ``data-gate`` (the check's name) and ``data-threshold`` (its value) for
    scripts; what a person reads is words."""
    rows = []
    for o in gate_outcomes:
        name, threshold, value, passed = _outcome_fields(o)
        label, limit = threshold_words(name, threshold)
        cls = _check_class(name)
        what = cls.description if cls is not None else name.replace("_", " ")
        raw = threshold if not isinstance(threshold, (list, tuple, Mapping)) else _plain(threshold)
        rows.append(f'<tr data-gate="{_esc(name)}" data-threshold="{_esc(raw)}"><td><b>{_esc(label)}</b>'
                    f"<br><small>{_esc(what)}</small></td><td>{_esc(limit)}</td>"
                    f"<td>{_esc(measured_sentence(name, value))}</td>"
                    f"<td class='{'ok' if passed else 'fail'}'>{'met' if passed else 'NOT MET'}</td></tr>")
    if not rows:
        rows.append("<tr><td colspan='4'>No gate thresholds were set.</td></tr>")
    return ("<table class='gate'><tr><th>threshold</th><th>limit</th><th>measured on the release</th>"
            f"<th>verdict</th></tr>{''.join(rows)}</table>")


# ---------------------------------------------------------------- frequencies


def frequency_table(microdata: Any, column: str) -> pd.DataFrame:
    """Counts and shares of ``column`` with value labels (a DataFrame: ``category``, ``records``,
    ``share``), missing values counted as their own last row ``(missing)``, ordered
    categories in their order (:func:`sdckit.utility.categorical.labelled_counts`)."""
    from ..utility.categorical import MISSING, labelled_counts

    labels, counts, missing = labelled_counts(microdata, column)
    n = int(counts.sum()) + missing
    if missing:
        labels, counts = [*labels, MISSING], np.append(counts, missing)
    return pd.DataFrame({"category": labels, "records": counts.astype(np.int64),
                         "share": counts / n if n else np.zeros(len(counts))})


def frequency_table_html(microdata: Any, column: str) -> str:
    """:func:`frequency_table` as an HTML table (labels, records, share as a percentage)."""
    t = frequency_table(microdata, column)
    rows = "".join(f"<tr><td>{_esc(r.category)}</td><td>{int(r.records):,}</td><td>{percent(r.share)}</td></tr>"
                   for r in t.itertuples())
    return (f"<table class='frequencies' data-column='{_esc(column)}'><tr><th>{_esc(column)}</th>"
            f"<th>records</th><th>share</th></tr>{rows}<tr><th>all</th><th>{int(t['records'].sum()):,}</th>"
            "<th>100%</th></tr></table>")


def frequency_data(microdata: Any, column: str, protected: Any = None) -> pd.DataFrame:
    """The data of :func:`frequency_chart`: ``category``, ``data`` ("original"/"released"),
    ``share`` and ``order`` (the category order), one row per category and data set."""
    a = frequency_table(microdata, column)
    frames = [a.assign(data="original")]
    if protected is not None:
        frames.append(frequency_table(protected, column).assign(data="released"))
    cats = list(dict.fromkeys(c for f in frames for c in f["category"]))
    out = []
    for f in frames:
        got = dict(zip(f["category"], f["share"]))
        out += [{"category": str(c), "data": f["data"].iloc[0] if len(f) else "original",
                 "share": float(got.get(c, 0.0)), "order": i} for i, c in enumerate(cats)]
    return pd.DataFrame(out, columns=["category", "data", "share", "order"])


def frequency_chart(microdata: Any, column: str, *, protected: Any = None, title: str | None = None) -> dict:
    """A bar chart (Vega-Lite spec) of ``column``'s shares, by label in category order; with
    ``protected`` the original and protected shares side by side."""
    import altair as alt

    from .charts import BEFORE_AFTER

    df = frequency_data(microdata, column, protected)
    cats = list(dict.fromkeys(df["category"]))
    enc = {"x": alt.X("category:N", title=None, sort=cats),
           "y": alt.Y("share:Q", title="share of records", axis=alt.Axis(format="%")),
           "tooltip": ["category:N", "data:N", alt.Tooltip("share:Q", format=".2%")]}
    if protected is not None:
        enc["xOffset"] = alt.XOffset("data:N")
        enc["color"] = alt.Color("data:N", scale=BEFORE_AFTER, title=None, legend=alt.Legend(orient="top"))
    ch = alt.Chart(df).mark_bar(color=None if protected is not None else "#4c78a8").encode(**enc)
    return ch.properties(title=title or column, width=max(160, min(26 * len(cats), 420)),
                         height=160).to_dict(validate=False)


# ---------------------------------------------------------------- risk


def risk_histogram(values: Any, weights: Any = None) -> pd.DataFrame:
    """Records per individual-risk band (:data:`RISK_EDGES`): a DataFrame ``band``, ``order``,
    ``records``. ``weights`` count each value that many times (one risk per key combination
    with its records gives the records' histogram)."""
    v = np.clip(np.asarray(values, dtype=np.float64), 0.0, 1.0)
    counts, _ = np.histogram(v, bins=np.asarray(RISK_EDGES), weights=weights)
    return pd.DataFrame({"band": list(RISK_LABELS), "order": np.arange(len(RISK_LABELS)),
                         "records": np.rint(counts).astype(np.int64)})


def risk_histogram_chart(before: Any, after: Any = None, *, weights_before: Any = None,
                         weights_after: Any = None, title: str = "Individual re-identification risk") -> dict:
    """The risk histogram (Vega-Lite spec) of one or two data sets on :data:`RISK_EDGES`,
    records on a symmetric-log scale."""
    import altair as alt

    from .charts import BEFORE_AFTER

    frames = [risk_histogram(before, weights_before).assign(data="original")]
    if after is not None:
        frames.append(risk_histogram(after, weights_after).assign(data="released"))
    df = pd.concat(frames, ignore_index=True)
    enc = {"x": alt.X("band:N", title="individual risk", sort=list(RISK_LABELS)),
           "y": alt.Y("records:Q", title="records", scale=alt.Scale(type="symlog")),
           "tooltip": ["band:N", "data:N", "records:Q"]}
    if after is not None:
        enc["xOffset"] = alt.XOffset("data:N")
        enc["color"] = alt.Color("data:N", scale=BEFORE_AFTER, title=None, legend=alt.Legend(orient="top"))
    return alt.Chart(df).mark_bar().encode(**enc).properties(title=title, width=380, height=180).to_dict(
        validate=False)


def risk_comparison_html(comparison: Any) -> str:
    """The risk measures of the original and the release side by side
    (:func:`sdckit.risk.report.compare_risk`), every share as a percentage: global risk is
    shown the way the gate's threshold is written and shown."""
    body = []
    for label, before, after in comparison.rows:
        share = str(label).startswith("global risk") or "share" in str(label)
        shown = [percent(x) if share and x is not None else _num(x) if isinstance(x, float) else
                 (f"{int(x):,}" if isinstance(x, (int, np.integer)) else ("—" if x is None else str(x)))
                 for x in (before, after)]
        text = "global risk (expected re-identifications / records)" if str(label).startswith("global risk") \
            else str(label)
        body.append(f"<tr><th>{_esc(text)}</th><td>{_esc(shown[0])}</td><td>{_esc(shown[1])}</td></tr>")
    return ("<table class='risk-comparison'><tr><th>measure</th><th>original</th><th>released</th></tr>"
            f"{''.join(body)}</table>")


def _label_cells(microdata: Any, rows: np.ndarray, columns: Sequence[str]) -> list[list[str]]:
    """The values of ``columns`` at ``rows`` shown by their value labels (missing: "(missing)")."""
    from ..utility.categorical import MISSING, canonical_label, value_labels_of

    out = []
    frame = microdata.frame
    for v in columns:
        look = value_labels_of(microdata, v)
        vals = frame[v].iloc[np.asarray(rows, dtype=np.int64)].to_numpy(dtype=object)   # the page only
        out.append([MISSING if pd.isna(x) else look.get(canonical_label(x), canonical_label(x)) for x in vals])
    return [list(r) for r in zip(*out)] if out else [[] for _ in rows]


def _pager(total: int, page: int, per_page: int) -> tuple[int, int, int, str]:
    per_page = max(1, int(per_page))
    pages = max(1, -(-total // per_page))
    page = min(max(1, int(page)), pages)
    lo = (page - 1) * per_page
    hi = min(total, lo + per_page)
    words = (f"Records {lo + 1:,} to {hi:,} of {total:,} (page {page} of {pages})" if total
             else "No records")
    return lo, hi, page, words


def _risk_records(microdata: Any, risk_result: Any) -> pd.DataFrame:
    if risk_result is None:
        from ..risk.report import measure_risk

        risk_result = measure_risk(microdata)
    return risk_result.records


def _record_table(microdata: Any, rows: np.ndarray, extra: dict[str, list[str]], words: str, css: str) -> str:
    keys = list(microdata.key_vars)
    cells = _label_cells(microdata, rows, keys)
    head = "".join(f"<th>{_esc(k)}</th>" for k in ["record", *keys, *extra])
    body = []
    for j, r in enumerate(rows):
        tds = [f"<td>{int(r) + 1:,}</td>", *(f"<td>{_esc(c)}</td>" for c in cells[j]),
               *(f"<td>{_esc(vals[j])}</td>" for vals in extra.values())]
        body.append("<tr>" + "".join(tds) + "</tr>")
    return f"<p class='pager'>{_esc(words)}</p><table class='{css}'><tr>{head}</tr>{''.join(body)}</table>"


def riskiest_records_html(microdata: Any, risk_result: Any = None, page: int = 1, per_page: int = 20) -> str:
    """A paged table of the records of highest individual risk with their key values by label,
    their key class size f_k, its weighted size F_k and the risk."""
    rec = _risk_records(microdata, risk_result)
    risk = rec["risk"].to_numpy(dtype=np.float64)
    order = np.argsort(-risk, kind="stable")
    lo, hi, page, words = _pager(len(order), page, per_page)
    rows = order[lo:hi]
    extra = {"records sharing the keys (f_k)": [f"{int(x):,}" for x in rec["fk"].to_numpy()[rows]],
             "individual risk": [f"{x:.4g}" for x in risk[rows]]}
    return _record_table(microdata, rows, extra, words, "riskiest")


def below_k_records_html(microdata: Any, k: int = 3, risk_result: Any = None, page: int = 1,
                         per_page: int = 20) -> str:
    """A paged table of the records whose key combination occurs fewer than ``k`` times
    (f_k < k), the smallest classes first, with their key values by label."""
    rec = _risk_records(microdata, risk_result)
    fk = rec["fk"].to_numpy()
    rows_all = np.flatnonzero(fk < k)
    rows_all = rows_all[np.argsort(fk[rows_all], kind="stable")]
    lo, hi, page, words = _pager(len(rows_all), page, per_page)
    rows = rows_all[lo:hi]
    extra = {"records sharing the keys (f_k)": [f"{int(x):,}" for x in fk[rows]]}
    lead = (f"<p>{len(rows_all):,} records have a key combination shared by fewer than {int(k)} records "
            f"(they violate {int(k)}-anonymity).</p>")
    return lead + _record_table(microdata, rows, extra, words, "below-k")


def ldiversity_html(microdata: Any, l: int = 2, max_classes: int = 10) -> str:  # noqa: E741
    """Distinct l-diversity of each sensitive variable: smallest l reached, records in classes
    with fewer than ``l`` distinct values, and the classes with the fewest distinct values
    (their keys by label). Machanavajjhala et al. (2007), section 4 (distinct l-diversity)."""
    from ..risk.ldiversity import l_diversity

    if not microdata.sensitive:
        return "<p>No sensitive variable was declared, so l-diversity was not measured.</p>"
    res = l_diversity(microdata)
    keys = list(microdata.key_vars)
    out = []
    for v in res.sensitive:
        col = res.records[f"{v}_distinct"].to_numpy()
        below = int((col < l).sum())
        out.append(f"<h4>{_esc(v)}</h4><p>Smallest number of distinct values of {_esc(v)} in a key class: "
                   f"<b>{int(col.min()):,}</b>; {below:,} records ({percent(below / len(col) if len(col) else 0)}) "
                   f"are in classes with fewer than {int(l)} distinct values.</p>")
        low = np.argsort(col, kind="stable")
        seen: dict = {}
        cells = _label_cells(microdata, low[: max(200, max_classes * 20)], keys)
        for j, r in enumerate(low[: max(200, max_classes * 20)]):
            t = tuple(cells[j])
            if t not in seen:
                seen[t] = int(col[r])
            if len(seen) >= max_classes:
                break
        rows = "".join("<tr>" + "".join(f"<td>{_esc(c)}</td>" for c in t) + f"<td>{d:,}</td></tr>"
                       for t, d in seen.items())
        out.append(f"<table class='ldiversity'><tr>{''.join(f'<th>{_esc(k)}</th>' for k in keys)}"
                   f"<th>distinct values of {_esc(v)}</th></tr>{rows}</table>")
    return "".join(out)


# ---------------------------------------------------------------- utility


def kind_words(series: pd.Series) -> str:
    """A column's type in words: "whole number", "decimal", "category", "text", "date", "yes/no"."""
    dt = series.dtype
    if isinstance(dt, pd.CategoricalDtype):
        return "ordered category" if dt.ordered else "category"
    if pd.api.types.is_bool_dtype(dt):
        return "yes/no"
    if pd.api.types.is_integer_dtype(dt):
        return "whole number"
    if pd.api.types.is_float_dtype(dt):
        x = series.dropna().to_numpy()
        return "whole number" if x.size and np.all(np.mod(x, 1) == 0) else "decimal"
    if pd.api.types.is_datetime64_any_dtype(dt):
        return "date"
    return "text"


def utility_figures(original: Any, protected: Any) -> pd.DataFrame:
    """Per variable (keys, then numeric variables): Hellinger distance and total variation
    distance of the label shares (categorical), IL1 and the change of mean and sd (numeric)."""
    from ..pram.loss import hellinger, total_variation
    from ..utility.categorical import label_codes, shares
    from ..utility.numeric import il1

    rows = []
    for v in [c for c in original.key_vars if c in protected.columns]:
        pa, pb = shares(label_codes(original, v), label_codes(protected, v))
        rows.append({"variable": v, "kind": "category", "hellinger": float(hellinger(pa.to_numpy(), pb.to_numpy())),
                     "tvd": float(total_variation(pa.to_numpy(), pb.to_numpy())), "il1": np.nan})
    for v in [c for c in original.numeric_vars if c in protected.columns]:
        a = pd.to_numeric(original.frame[v], errors="coerce").to_numpy(dtype=np.float64)
        b = pd.to_numeric(protected.frame[v], errors="coerce").to_numpy(dtype=np.float64)
        ok = ~(np.isnan(a) | np.isnan(b))
        try:
            loss = float(il1(a[ok, None], b[ok, None])) if ok.any() else np.nan
        except Exception:  # noqa: BLE001 - a constant column has no IL1; shown as "—"
            loss = np.nan
        rows.append({"variable": v, "kind": "number", "hellinger": np.nan, "tvd": np.nan, "il1": loss})
    return pd.DataFrame(rows, columns=["variable", "kind", "hellinger", "tvd", "il1"])


def _num(x: Any) -> str:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return "—"
    if math.isnan(v):
        return "—"
    return f"{v:.3g}" if v != 0 and (abs(v) < 1e-3 or abs(v) >= 1e6) else f"{v:.4g}"


def _crosstab_html(original: Any, protected: Any, a: str, b: str, max_cells: int = 12) -> str:
    from ..utility.categorical import canonical_label, value_labels_of

    def labelled(md, v):   # one label per distinct value: the records' label ids and the label texts
        look = value_labels_of(md, v)
        if v in md.key_vars:   # a key's codes and categories: no pass over the values
            codes, uniq = md.codes(v), md.categories(v).to_numpy(dtype=object)
        else:
            codes, uniq = pd.factorize(md.frame[v], use_na_sentinel=True)
        texts = [look.get(canonical_label(x), canonical_label(x)) for x in uniq.tolist()] + ["(missing)"]
        ids, labels = pd.factorize(pd.Index(texts, dtype=object), sort=False)
        return ids[codes], list(labels)   # code -1 (missing) takes the last text

    def crosstab(md):
        # records per (label of a, label of b): one bincount of the label-id pairs; the labels
        # that occur (with their counts), as pd.crosstab of the labelled columns tabulates them
        (ia, la), (ib, lb) = labelled(md, a), labelled(md, b)
        counts = np.bincount(ia.astype(np.int64) * len(lb) + ib, minlength=len(la) * len(lb)).reshape(len(la), -1)
        r, c = np.flatnonzero(counts.sum(axis=1)), np.flatnonzero(counts.sum(axis=0))
        return pd.DataFrame(counts[np.ix_(r, c)], index=[la[i] for i in r], columns=[lb[j] for j in c])

    ta, tb = crosstab(original), crosstab(protected)
    from ..utility.categorical import order_key

    rows = sorted(set(ta.index) | set(tb.index), key=order_key)
    cols = sorted(set(ta.columns) | set(tb.columns), key=order_key)
    if len(rows) > max_cells or len(cols) > max_cells:
        return (f"<p>{_esc(a)} by {_esc(b)}: {len(rows)} by {len(cols)} categories, too many to show as a "
                "table.</p>")
    ta, tb = ta.reindex(index=rows, columns=cols, fill_value=0), tb.reindex(index=rows, columns=cols, fill_value=0)
    head = "".join(f"<th>{_esc(c)}</th>" for c in cols)
    body = "".join(f"<tr><th>{_esc(r)}</th>" + "".join(
        f"<td class='{'differs' if ta.at[r, c] != tb.at[r, c] else ''}'>{int(ta.at[r, c]):,} / {int(tb.at[r, c]):,}</td>"
        for c in cols) + "</tr>" for r in rows)
    return (f"<table class='crosstab'><caption>{_esc(a)} (rows) by {_esc(b)} (columns): records in the original / "
            f"in the release</caption><tr><th></th>{head}</tr>{body}</table>")


def utility_panel_html(original: Any, protected: Any, analyses: Sequence[Any] | None = None) -> str:
    """Original against protected: statistics of each variable, two-way tabulations of the first
    key pairs, IL1 / Hellinger / TVD per variable, and the spec's analyses when given.

    Hellinger distance and TVD are 0 for identical label shares and 1 for disjoint ones; IL1 is
    the mean absolute difference scaled by the original's sd (Domingo-Ferrer & Torra 2001,
    section 4.1)."""
    figs = utility_figures(original, protected)
    stats = []
    for v in figs["variable"]:
        if v in original.numeric_vars:
            a = pd.to_numeric(original.frame[v], errors="coerce")
            b = pd.to_numeric(protected.frame[v], errors="coerce")
            stats.append(f"<tr><td>{_esc(v)}</td><td>{_esc(kind_words(original.frame[v]))}</td>"
                         f"<td>mean {_num(a.mean())}, sd {_num(a.std())}, missing {int(a.isna().sum()):,}</td>"
                         f"<td>mean {_num(b.mean())}, sd {_num(b.std())}, missing {int(b.isna().sum()):,}</td></tr>")
        else:
            fa, fb = frequency_table(original, v), frequency_table(protected, v)
            stats.append(f"<tr><td>{_esc(v)}</td><td>{_esc(kind_words(original.frame[v]))}</td>"
                         f"<td>{len(fa):,} categories; largest {_esc(fa.loc[fa['records'].idxmax(), 'category'])}</td>"
                         f"<td>{len(fb):,} categories; largest {_esc(fb.loc[fb['records'].idxmax(), 'category'])}"
                         "</td></tr>")
    out = ["<h4>Statistics</h4><table class='utility-stats'><tr><th>variable</th><th>type</th><th>original</th>"
           f"<th>released</th></tr>{''.join(stats)}</table>"]
    rows = "".join(f"<tr><td>{_esc(r.variable)}</td><td>{_num(r.hellinger)}</td><td>{_num(r.tvd)}</td>"
                   f"<td>{_num(r.il1)}</td></tr>" for r in figs.itertuples())
    out.append("<h4>Information loss per variable</h4><p>Hellinger distance and total variation distance (TVD) "
               "of the category shares: 0 = identical, 1 = disjoint. IL1: mean absolute change of a number in "
               "units of the original's standard deviation.</p><table class='utility-measures'><tr><th>variable"
               f"</th><th>Hellinger</th><th>TVD</th><th>IL1</th></tr>{rows}</table>")
    keys = [v for v in original.key_vars if v in protected.columns]
    pairs = list(zip(keys, keys[1:]))[:2]
    if pairs:
        out.append("<h4>Two-way tabulations</h4>" + "".join(_crosstab_html(original, protected, a, b)
                                                             for a, b in pairs))
    if analyses:
        from ..utility.analyses import compare_analyses

        cmp = compare_analyses(original.frame, protected.frame, analyses, raise_errors=False)
        out.append("<h4>Analyses</h4>" + cmp.report_html())
    return "".join(out)


# ---------------------------------------------------------------- branches


def _step_cells(step: Any) -> tuple[str, list[tuple[str, str]]]:
    """A step (object or {method, params}) as its name in words and (label, value) pairs of
    its parameters, from the step's declaration."""
    from ..errors import SDCError
    from ..params import step_params
    from ..registry import step_class

    if isinstance(step, Mapping):
        method, params = str(step.get("method")), dict(step.get("params") or {})
        try:
            cls = step_class(method)
        except SDCError:
            cls = None
    else:
        cls, method = type(step), getattr(step, "step_name", type(step).__name__)
        params = {p.name: getattr(step, p.name) for p in step_params(cls)} if cls is not None else {}
    return method.replace("_", " "), _param_pairs(cls, params)


def _param_pairs(cls: type | None, params: Mapping[str, Any], *, all_values: bool = False) -> list[tuple[str, str]]:
    """(label, value with unit) of a step's parameters from its declaration; a parameter at its
    default is left out (unless ``all_values``) except the first declared one."""
    from ..params import step_params

    declared = step_params(cls) if cls is not None else []
    by_name = {p.name: p for p in declared}
    first = declared[0].name if declared else None
    pairs = []
    for k, v in params.items():
        p = by_name.get(k)
        if p is None:
            pairs.append((str(k).replace("_", " "), _plain(v)))
            continue
        if v is None or (not all_values and k != first and not p.required and _same(v, p.default)):
            continue
        pairs.append(param_words(p, v))
    return pairs


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b) or (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and list(a) == list(b))
    except (TypeError, ValueError):
        return False


def settings_html(method: str, params: Mapping[str, Any]) -> str:
    """A step's settings as a two-column table of declared labels and values with units."""
    from ..errors import SDCError
    from ..registry import step_class

    try:
        cls = step_class(method)
    except SDCError:
        cls = None
    rows = "".join(f"<tr><th>{_esc(a)}</th><td>{_esc(b)}</td></tr>"
                   for a, b in _param_pairs(cls, params, all_values=True))
    return f"<table class='kv'>{rows}</table>" if rows else ""


def branch_figures(original: Any, released: Any, k: int = 3) -> dict:
    """The per-branch figures of :func:`compare_branches_html`: global risk (share), sample
    uniques, records below k, information kept in the keys (1 - H(X|Y)/H(X))."""
    from ..risk.report import measure_risk
    from ..utility.categorical import entropy_kept, label_codes

    s = measure_risk(released).summary
    keys = [v for v in original.key_vars if v in released.columns]
    kept = entropy_kept([(label_codes(original, v), label_codes(released, v)) for v in keys]) if keys else np.nan
    below = int((measure_risk(released).records["fk"].to_numpy() < k).sum())
    return {"global_risk": float(s["global_risk"]), "sample_uniques": int(s["n_sample_uniques"]),
            "below_k": below, "information_kept": float(kept)}


_BRANCH_ROWS = (("global_risk", "global risk", "share", "low"), ("sample_uniques", "sample uniques", "records", "low"),
                ("below_k", "records below k = 3", "records", "low"),
                ("information_kept", "information kept in the key variables", None, "high"))


def compare_branches_html(branches: Sequence[Mapping[str, Any]]) -> str:
    """Branches side by side: each step with its parameters in words (cells that differ from
    the first branch highlighted, class ``differs``), then per-branch risk and utility in one
    table (the best figure of each row in bold).

    Each branch is a mapping: ``name``; ``steps`` (step objects, or mappings with ``method``
    and ``params``); optionally ``original`` and ``released`` (Microdata) from which global
    risk, sample uniques, records below k and information kept are measured, or ``figures``
    (a dict with those keys) given.
    """
    if not branches:
        return "<p>No branches to compare.</p>"
    names = [str(b.get("name", f"branch {i + 1}")) for i, b in enumerate(branches)]
    cells = [[_step_cells(s) for s in (b.get("steps") or [])] for b in branches]
    depth = max(len(c) for c in cells)

    def text(cell):
        if cell is None:
            return "—"
        method, pairs = cell
        return method + (" (" + "; ".join(f"{a}: {b}" for a, b in pairs) + ")" if pairs else "")

    rows = []
    for i in range(depth):
        shown = [text(c[i] if i < len(c) else None) for c in cells]
        tds = "".join(f"<td class='{'differs' if t != shown[0] else ''}'>{_esc(t)}</td>" for t in shown)
        rows.append(f"<tr><th>step {i + 1}</th>{tds}</tr>")
    head = "".join(f"<th>{_esc(n)}</th>" for n in names)
    out = [f"<table class='compare-steps'><tr><th></th>{head}</tr>{''.join(rows)}</table>"]
    figs = []
    for b in branches:
        f = b.get("figures")
        if f is None and b.get("original") is not None and b.get("released") is not None:
            f = branch_figures(b["original"], b["released"])
        figs.append(dict(f or {}))
    if any(figs):
        body = []
        for key, label, unit, better in _BRANCH_ROWS:
            vals = [f.get(key) for f in figs]
            nums = [float(v) for v in vals if v is not None and not math.isnan(float(v))]
            best = (min(nums) if better == "low" else max(nums)) if nums else None
            tds = []
            for v in vals:
                shown = "—" if v is None else (percent(v) if unit == "share" else
                                               f"{int(v):,}" if unit == "records" else _num(v))
                bold = v is not None and best is not None and float(v) == best and len(nums) > 1
                tds.append(f"<td>{'<b>' if bold else ''}{_esc(shown)}{'</b>' if bold else ''}</td>")
            body.append(f"<tr><th>{_esc(label)}</th>{''.join(tds)}</tr>")
        out.append(f"<table class='compare-figures'><tr><th></th>{head}</tr>{''.join(body)}</table>")
    return "".join(out)


# ---------------------------------------------------------------- R-U map

#: the axis title of each risk measure of the R-U map (both are shares of records)
RISK_AXIS = {"global_risk": "global risk (expected re-identifications, % of records)",
             "linkage": "linkage risk (expected correct re-identifications, % of records)"}
#: the axis title of each utility measure
UTILITY_AXIS = {"entropy": "utility (information kept in the keys; 1 = original)"}


def risk_axis_title(risk_name: str) -> str:
    """The R-U map's risk axis title for a risk measure (the same in the workbench and the report)."""
    return RISK_AXIS.get(risk_name, f"disclosure risk ({str(risk_name).replace('_', ' ')})")


def utility_axis_title(utility_name: str) -> str:
    return UTILITY_AXIS.get(utility_name, f"utility ({str(utility_name).replace('_', ' ')}; 1 = original)")


def rumap_data(summary: Any, *, original_risk: float, release: tuple[float, float] | None = None,
               chosen: tuple[float, float] | None = None) -> pd.DataFrame:
    """The points of the R-U map: one row per setting of the sweep (``what`` = "setting") plus
    the original data (utility 1), no data (0, 0), the sweep's best setting and the release,
    with ``risk`` (x, a share) and ``utility`` (y). ``release`` and ``chosen`` are
    (utility, risk) pairs, as :func:`sdckit.explore.rumap.release_ru_map_section` measures them."""
    from ..utility.frontier import pareto_front

    s = summary
    n = len(s)
    pts = pd.DataFrame({
        "what": ["setting"] * n, "method": s["method"].astype(str).to_numpy() if n else [],
        "parameters": s["label"].astype(str).to_numpy() if n else [],
        "risk": s["risk"].astype(float).to_numpy() if n else [],
        "risk_sd": s["risk_sd"].astype(float).to_numpy() if n else [],
        "utility": s["utility"].astype(float).to_numpy() if n else [],
        "utility_sd": s["utility_sd"].astype(float).to_numpy() if n else []})
    pts["pareto"] = pareto_front(pts["risk"].to_numpy(), pts["utility"].to_numpy()) if n else []
    extra = [("original data", float(original_risk), 1.0), ("no data", 0.0, 0.0)]
    if chosen is not None:
        extra.append(("best setting of the sweep", float(chosen[1]), float(chosen[0])))
    if release is not None:
        extra.append(("this release", float(release[1]), float(release[0])))
    ends = pd.DataFrame({"what": [e[0] for e in extra], "method": "", "parameters": "",
                         "risk": [e[1] for e in extra], "risk_sd": 0.0, "utility": [e[2] for e in extra],
                         "utility_sd": 0.0, "pareto": False})
    return pd.concat([pts, ends], ignore_index=True)


def rumap_chart(data: pd.DataFrame, *, risk_name: str = "global_risk", utility_name: str = "entropy",
                threshold: float | None = None, threshold_label: str | None = None,
                width: int = 640, height: int = 400) -> Any:
    """The R-U map (an Altair chart): risk on x as a percentage, utility on y, as Duncan et al.
    (2001) draw it. Layers, by name: ``method-curve`` (a line per method through its settings),
    ``points`` (Pareto front outlined), ``end-points`` (original data, no data), ``threshold``
    (the risk threshold as a dashed vertical rule), ``proposed`` (the sweep's best setting),
    ``this-release`` (the release, a red diamond) and its label. ``.to_dict()`` gives the
    Vega-Lite spec the workbench draws."""
    import altair as alt

    palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"]
    rt, ut = risk_axis_title(risk_name), utility_axis_title(utility_name)
    x = alt.X("risk:Q", title=rt, axis=alt.Axis(format="%"))
    y = alt.Y("utility:Q", title=ut, scale=alt.Scale(domain=[-0.02, 1.04]))
    pts = data[data["what"] == "setting"].copy()
    pts["front"] = np.where(pts["pareto"].astype(bool), "on the Pareto front", "dominated")
    tip = ["method:N", "parameters:N", alt.Tooltip("risk:Q", title=rt, format=".3%"),
           alt.Tooltip("risk_sd:Q", title="risk sd over seeds", format=".2%"),
           alt.Tooltip("utility:Q", title=ut, format=".4g"),
           alt.Tooltip("utility_sd:Q", title="utility sd over seeds", format=".2g"), "front:N"]
    color = alt.Color("method:N", title="method", scale=alt.Scale(range=palette))
    base = alt.Chart(pts)
    layers = [
        base.mark_line(strokeWidth=1.5).encode(x, y, color=color, order="risk:Q", detail="method:N")
        .properties(name="method-curve"),
        base.mark_point(filled=True, size=60).encode(
            x, y, color=color, tooltip=tip,
            stroke=alt.condition("datum.pareto", alt.value("black"), alt.value(None)),
            strokeWidth=alt.condition("datum.pareto", alt.value(2), alt.value(0))).properties(name="points"),
    ]
    point_tip = ["what:N", alt.Tooltip("risk:Q", title=rt, format=".3%"), alt.Tooltip("utility:Q", title=ut,
                                                                                     format=".4g")]
    ends = data[data["what"].isin(["original data", "no data"])]
    layers.append(alt.Chart(ends).mark_point(shape="cross", size=120, color="black", filled=True).encode(
        x, y, tooltip=point_tip).properties(name="end-points"))
    if threshold is not None:
        rule = pd.DataFrame({"threshold": [float(threshold)],
                             "what": [threshold_label or f"risk threshold {percent(threshold)}"]})
        layers.append(alt.Chart(rule).mark_rule(color="#c53030", strokeDash=[6, 4], strokeWidth=1.5).encode(
            x=alt.X("threshold:Q", title=rt), tooltip=["what:N", alt.Tooltip("threshold:Q", format=".3%")])
            .properties(name="threshold"))
    best = data[data["what"] == "best setting of the sweep"]
    if len(best):
        layers.append(alt.Chart(best).mark_point(size=320, color="#c53030", strokeWidth=2).encode(
            x, y, tooltip=point_tip).properties(name="proposed"))
    rel = data[data["what"] == "this release"]
    if len(rel):
        layers.append(alt.Chart(rel).mark_point(shape="diamond", size=260, color="#c53030", filled=True,
                                                stroke="black", strokeWidth=1).encode(
            x, y, tooltip=point_tip).properties(name="this-release"))
        layers.append(alt.Chart(rel).mark_text(align="left", dx=10, dy=-10, fontWeight="bold", color="#c53030")
                      .encode(x, y, text="what:N").properties(name="this-release-label"))
    return alt.layer(*layers).properties(title="R-U confidentiality map", width=width, height=height)


def risk_rise_html(before: Mapping[str, Any], after: Mapping[str, Any], *, pram: bool,
                   intruder_before: float | None = None, intruder_after: float | None = None,
                   subject: str = "release", baseline: str = "the original") -> str:
    """One sentence when a displayed risk figure rose, for the release report and the
    workbench's step card alike; empty when nothing rose.

    ``before`` and ``after`` hold ``n_sample_uniques`` and ``global_risk`` (a share). With PRAM
    (``pram``) the sentence says why: PRAM moves records into rarer key combinations, so sample
    uniques and the global risk computed from them rise while a released unique is no longer
    certainly a real person's combination; ``intruder_before``/``intruder_after`` (the share of
    records an intruder who knows the original keys re-identifies correctly,
    :func:`sdckit.risk.intruder.linkage_risk`) give the matching intruder-side figure, which
    fell (Gouweleeuw et al. 1998, sec. 4: PRAM's protection is the intruder's uncertainty about
    the released value, not rarity of the combination). ``subject`` names what was released
    ("release", "data after this step"), ``baseline`` what it is compared with."""
    rose = [w for w, key in (("sample uniques", "n_sample_uniques"), ("global risk", "global_risk"))
            if float(after.get(key, 0) or 0) > float(before.get(key, 0) or 0)]
    if not rose:
        return ""
    if not pram:
        return (f"<p class='explain'>The {' and '.join(rose)} of the {_esc(subject)} are higher than in "
                f"{_esc(baseline)}: a step changed key values so that some records fell into rarer combinations.</p>")
    figure = ""
    if intruder_before is not None and intruder_after is not None:
        moved = "fell" if intruder_after < intruder_before else "did not fall"
        figure = (f" An intruder who knows a person's original key values and looks them up in the {_esc(subject)} "
                  f"re-identifies {percent(intruder_after)} of records correctly, against {percent(intruder_before)} "
                  f"in {_esc(baseline)}: that is the intruder-side figure, and it {moved}.")
    n_b, n_a = int(before.get("n_sample_uniques", 0) or 0), int(after.get("n_sample_uniques", 0) or 0)
    return (f"<p class='explain'>The {' and '.join(rose)} rose from {n_b:,} to {n_a:,} sample uniques "
            f"({percent(before.get('global_risk'))} to {percent(after.get('global_risk'))} global risk) because PRAM "
            "moves records into rarer key combinations; a released unique is no longer certainly a real person's "
            f"combination, so the intruder's certainty falls while these counts rise.{figure}</p>")
