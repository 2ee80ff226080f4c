"""The figures of the workbench pages, as JSON the browser draws with Vega-Lite.

Every number comes from the library's own measures (:func:`sdckit.risk.report.measure_risk`,
SUDA2, the step results' guarantees and evidence); this module only bins and arranges them.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pandas as pd

from ..microdata import Microdata
from ..pram.loss import hellinger, total_variation
from ..report import fragments as _fragments
from ..result import jsonable

#: f_k classes of the f_k distribution chart (records per class)
FK_BINS = [(1, 1, "1"), (2, 2, "2"), (3, 4, "3-4"), (5, 9, "5-9"), (10, 19, "10-19"),
           (20, 49, "20-49"), (50, math.inf, "50+")]
#: individual-risk bands: the reports' own (one set of bins on every screen and page)
RISK_EDGES = list(_fragments.RISK_EDGES)
RISK_LABELS = list(_fragments.RISK_LABELS)
#: largest data for which the live panel runs SUDA2 by default
SUDA_LIVE_MAX = 200_000


def _hist(values: np.ndarray) -> list[dict]:
    """Records per individual-risk band, binned by the reports' own function."""
    return _fragments.risk_histogram(values).to_dict("records")


def risk_panel(md: Microdata, *, suda: bool = True, original: Microdata | None = None,
               results=(), linkage: bool = True) -> dict:
    """Risk at a glance: f_k distribution, uniques, k violations, risk histograms, SUDA2."""
    from ..risk.report import measure_risk

    run_suda = bool(suda and md.n_records <= SUDA_LIVE_MAX)
    rep = measure_risk(md, suda=run_suda)
    s = rep.summary
    fk = rep.records["fk"].to_numpy()
    fk_dist = [{"class": lab, "order": i, "records": int(((fk >= lo) & (fk <= hi)).sum())}
               for i, (lo, hi, lab) in enumerate(FK_BINS)]
    out: dict[str, Any] = {
        "keys": list(md.key_vars),
        "n_records": s["n_records"], "n_combinations": s["n_combinations"],
        "n_sample_uniques": s["n_sample_uniques"], "k_violations": s["k_violations"],
        "k_reached": s["k_reached"], "global_risk": s["global_risk"],
        "expected_reidentifications": s["expected_reidentifications"],
        "max_individual_risk": s["max_individual_risk"], "weighted": s["weighted"],
        "fk_distribution": fk_dist, "risk_histogram": _hist(rep.records["risk"].to_numpy()),
    }
    if "hh_risk" in rep.records:
        out["household_risk"] = s["household_risk"]
        out["household_histogram"] = _hist(rep.records["hh_risk"].to_numpy())
    if run_suda and "suda" in s:
        d = s["suda"]
        out["suda"] = {"n_scored": d["n_scored"], "n_msu": d["n_msu"], "sum_dis": d["sum_dis"],
                       "max_score": d["max_score"],
                       "contributions": [{"variable": k, "percent": float(v)}
                                         for k, v in sorted(d["attribute_contributions"].items(),
                                                            key=lambda x: -x[1])]}
    else:
        out["suda_note"] = (f"SUDA2 runs live up to {SUDA_LIVE_MAX:,} records; this file has "
                            f"{md.n_records:,}." if suda else "SUDA2 is off.")
    if linkage:
        out["linkage"] = all_columns_linkage(original if original is not None else md, md, results)
    return jsonable(out)


def all_columns_linkage(original: Microdata, released: Microdata, results=()) -> dict | None:
    """The all-columns linkage figure: an intruder who knows every released column of a person
    links by exact matching (:func:`sdckit.risk.identifiers.linkage_all_columns`), after
    applying the published global recodings of ``results`` to what they know (the measure of
    the ``max_linkage_all_columns`` gate). None where a result neither carries its published
    recoding nor can be rebuilt from its public settings (a SafePub release, whose settings do
    not name its hierarchy files): no figure rather than one measured without the recoding."""
    from ..errors import SDCError
    from ..registry import published_recodes
    from ..risk.identifiers import linkage_all_columns

    try:
        recodes = published_recodes(results)
    except SDCError:
        return None
    d = linkage_all_columns(original, released, recodes=recodes)
    return {"columns": len(d["columns"]), "sample_uniques": d["sample_uniques"],
            "sample_unique_share": d["sample_unique_share"],
            "expected_correct_links": d["expected_correct_links"],
            "correct_link_share": d["correct_link_share"]}


# ---------------------------------------------------------------------- role suggestions
_NAME_HINTS = {
    "weight": re.compile(r"(weight|wgt|^w$|^wt$|gewicht|poids)", re.I),
    "household": re.compile(r"(household|^hh|hh_?id|hhid|family id)", re.I),
    "key": re.compile(r"(region|area|sex|gender|age|marital|country|birth|ethnic|religion|occupation|"
                      r"nationality|citizen|district|municip|education|residence|language|job|employ)", re.I),
}


def suggest_roles(frame: pd.DataFrame) -> dict:
    """Role suggestions from the identifier and quasi-identifier scan.

    Direct identifiers come from :func:`sdckit.risk.identifiers.identifier_check` (nearly
    unique columns and identifier names). Key variables: categorical columns (2 to 100
    categories) named like the classic quasi-identifiers (region, sex, age, marital status,
    country of birth, ...); every other categorical column is ranked by
    :func:`sdckit.risk.identifiers.undeclared_scan` (the sample uniques it would add to those
    keys), so the steward sees which undeclared column is the next risk. Weight and household
    columns are found by name and type; float columns with many values are numeric.
    """
    from ..risk.identifiers import identifier_check, undeclared_scan

    md0 = Microdata(frame)
    flagged = identifier_check(md0, md0)
    out: dict[str, Any] = {"identifiers": [f["column"] for f in flagged], "key_vars": [],
                           "numeric_vars": [], "weight": None, "household": None,
                           "reasons": {f["column"]: f"direct identifier: {f['reason']}" for f in flagged},
                           "source": "identifier and quasi-identifier scan (sdckit.risk.identifiers)"}
    categorical = []
    for c in frame.columns:
        name = str(c)
        if name in out["identifiers"]:
            continue
        s = frame[c]
        nun = int(s.nunique(dropna=True))
        numeric = pd.api.types.is_numeric_dtype(s)
        if _NAME_HINTS["household"].search(name) and out["household"] is None and nun > 1:
            out["household"], out["reasons"][name] = name, "named like a household id (household risk)"
        elif numeric and _NAME_HINTS["weight"].search(name) and out["weight"] is None and bool((s > 0).all()):
            out["weight"], out["reasons"][name] = name, "positive numbers named like a weight"
        elif pd.api.types.is_float_dtype(s) and nun > 100:
            out["numeric_vars"].append(name)
            out["reasons"][name] = f"continuous ({nun:,} distinct values)"
        elif 2 <= nun <= 100:
            categorical.append(name)
            if _NAME_HINTS["key"].search(name):
                out["key_vars"].append(name)
                out["reasons"][name] = f"{nun} categories; named like a classic quasi-identifier"
    others = [c for c in categorical if c not in out["key_vars"]]
    if others:
        keyed = Microdata(frame, key_vars=out["key_vars"]) if out["key_vars"] else md0
        out["scan"] = undeclared_scan(keyed, columns=others)
        for row in out["scan"]:
            out["reasons"][row["column"]] = (f"not a suggested key; adding it would make "
                                             f"{row['added_uniques']:,} more records unique")
    return jsonable(out)


# ---------------------------------------------------------------------- step results
def _value_text(value: Any, labels: dict | None) -> str:
    """A category as the steward reads it: its label with the code ("married (2)"), a whole
    float code as an int ("2", not "2.0"), missing as "(missing)"."""
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return "(missing)"
    v = value.item() if hasattr(value, "item") else value
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    label = None
    if labels:
        label = labels.get(v, labels.get(value))
        if label is None and isinstance(v, int):
            label = labels.get(float(v))
    return f"{label} ({v})" if label is not None else str(v)


def _order_key(value: Any) -> tuple:
    """Codes in their own order: numbers by value, then text; missing last."""
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return (2, 0, "")
    try:
        return (0, float(value), "")
    except (TypeError, ValueError):
        return (1, 0, str(value))


def _counts(s: pd.Series, labels: dict | None = None, rank: dict | None = None) -> dict[str, tuple[int, tuple]]:
    """Records per value keyed by the value as shown, with its sort key (the code's order, or
    ``rank[value]`` for a new category); counted on the raw values first."""
    out: dict[str, tuple[int, tuple]] = {}
    for value, n in s.value_counts(dropna=False).items():
        key = _value_text(value, labels)
        order = rank.get(value, (2, len(rank))) if rank else _order_key(value)
        prev = out.get(key)
        out[key] = (int(n) + (prev[0] if prev else 0), min(order, prev[1]) if prev else order)
    return out


def frequency_compare(before: pd.Series, after: pd.Series, limit: int = 25, labels: dict | None = None) -> dict:
    """Frequencies before and after (bars, in the order of the codes, with their labels),
    Hellinger distance and total variation distance.

    A category the step made (a recode's "16-34") sorts where the smallest original code it
    holds sorted, so age bands keep the order of ages instead of the order of their text.
    """
    # each value's position in the order of the codes; a new category (a recode's "16-34")
    # takes the smallest position among its records' original values
    uniq = sorted(pd.unique(before), key=_order_key)
    pos = {u: i for i, u in enumerate(uniq) if not (isinstance(u, float) and u != u)}
    a = _counts(before, labels, rank={u: (0, p) for u, p in pos.items()})
    rank = None
    if len(before) == len(after) and before.index.equals(after.index):
        first = before.map(pos).groupby(after.astype(object), dropna=True).min()  # vectorised
        rank = {k: (1, int(v)) for k, v in first.items() if k not in pos and v == v}
    b = _counts(after, labels, rank={**{u: (0, p) for u, p in pos.items()}, **(rank or {})})
    order = {c: v[1] for c, v in b.items()} | {c: v[1] for c, v in a.items()}
    cats = sorted(order, key=lambda c: (c == "(missing)", order[c]))
    pa = np.array([a[c][0] if c in a else 0 for c in cats], dtype=float)
    pb = np.array([b[c][0] if c in b else 0 for c in cats], dtype=float)
    hell = tvd = None
    if pa.sum() > 0 and pb.sum() > 0:
        hell, tvd = hellinger(pa, pb), total_variation(pa, pb)  # both normalise the counts
    if set(b) - set(a) - {"(missing)"}:
        # new categories (a recode): the distributions live on different supports, so the
        # distances would only say "relabelled"; the bars still show the merge
        hell = tvd = None
    shown = cats[:limit] if len(cats) <= limit else [cats[i] for i in sorted(np.argsort(-(pa + pb), kind="stable")[:limit])]
    bars = []
    for i, c in enumerate(shown):
        bars.append({"category": c, "order": i, "when": "before", "records": int(a[c][0]) if c in a else 0})
        bars.append({"category": c, "order": i, "when": "after", "records": int(b[c][0]) if c in b else 0})
    return {"bars": bars, "hellinger": hell, "tvd": tvd, "n_categories": len(cats),
            "shown": len(shown)}


def numeric_compare(before: pd.DataFrame, after: pd.DataFrame, cols: list[str]) -> dict:
    """Means, sds and quartiles before/after, and the change of the correlation matrix."""
    rows = []
    for c in cols:
        x = pd.to_numeric(before[c], errors="coerce")
        y = pd.to_numeric(after[c], errors="coerce")
        for stat, fa, fb in [("mean", x.mean(), y.mean()), ("sd", x.std(), y.std()),
                             ("q25", x.quantile(.25), y.quantile(.25)), ("median", x.median(), y.median()),
                             ("q75", x.quantile(.75), y.quantile(.75))]:
            rows.append({"variable": c, "statistic": stat, "before": float(fa), "after": float(fb)})
    corr = []
    if len(cols) >= 2:
        ca = before[cols].apply(pd.to_numeric, errors="coerce").corr().to_numpy()
        cb = after[cols].apply(pd.to_numeric, errors="coerce").corr().to_numpy()
        for i, a in enumerate(cols):
            for j, b in enumerate(cols):
                corr.append({"row": a, "col": b, "before": float(ca[i, j]), "after": float(cb[i, j]),
                             "change": float(cb[i, j] - ca[i, j])})
    return jsonable({"moments": rows, "correlations": corr})


def step_view(i: int, result, before: Microdata, after: Microdata, *, risk: dict | None) -> dict:
    """Everything the step card shows: summary, guarantees, utility, PRAM matrices, risk after."""
    fb, fa = before.frame, after.frame
    changed = [c for c in fa.columns if c not in fb.columns or not fb[c].equals(fa[c])]
    removed = [c for c in fb.columns if c not in fa.columns]
    cat_cols = [c for c in changed if c in fb.columns and c not in after.numeric_vars][:6]
    num_cols = [c for c in (after.numeric_vars or ()) if c in fb.columns and c in fa.columns]
    view: dict[str, Any] = {
        "index": i, "method": result.method, "params": jsonable(result.params),
        "summary": jsonable(result.summary),
        "guarantees": [g.to_dict() for g in result.guarantees],
        "artifacts": sorted(result.artifacts),
        "changed_columns": changed, "removed_columns": removed,
        "frequencies": {c: frequency_compare(fb[c], fa[c], labels=_labels(before, c)) for c in cat_cols},
        "numeric": numeric_compare(fb, fa, num_cols) if any(c in changed for c in num_cols) else None,
        "matrices": [], "risk_after": risk,
    }
    space = getattr(result, "solution_space", None)
    if space is not None:   # a generalise step: the lattice view (ARX's solution space)
        view["lattice"] = lattice_view(space)
    for key, m in (getattr(result, "matrices", None) or {}).items():
        if m.n_categories > 40:
            view["matrices"].append({"title": str(key), "note": f"{m.n_categories} categories: too many to draw"})
            continue
        P = m.to_dense()
        var = key if isinstance(key, str) else (
            key[0][0] if isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], tuple) and len(key[0]) == 1
            else None)
        labs = [_value_text(c, _labels(before, var) if var else None) for c in m.categories]
        cells = [{"from": labs[r], "to": labs[c], "p": float(P[r, c])}
                 for r in range(len(labs)) for c in range(len(labs))]
        view["matrices"].append({"title": _matrix_title(key), "cells": cells,
                                 "min_diagonal": float(np.min(np.diag(P)))})
    return jsonable(view)


def _labels(md: Microdata, column: str) -> dict | None:
    """The value labels of ``column`` (from the file or a labels file), or None."""
    meta = getattr(md, "meta", None)
    return (getattr(meta, "value_labels", None) or {}).get(column) or None


def _matrix_title(key: Any) -> str:
    if isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], tuple):
        return ", ".join(map(str, key[0])) + ("" if key[1] == "all" else f" (stratum {key[1]})")
    return str(key)


# ---------------------------------------------------------------------- the lattice view
def lattice_view(space) -> dict:
    """The lattice view of a ``generalise`` step's card, in words: the counts as a sentence, the
    drawn nodes (checked nodes, capped, and the chosen node's neighbours) placed by height with
    their levels named per quasi-identifier and their figures, the chosen node and a row per
    neighbour with what changes (:class:`sdckit.lattice.solution_space.SolutionSpace`)."""
    from ..lattice.space_report import STATUS_COLOURS, counts_sentence, neighbour_rows

    metric = space.metric.replace("_", " ")
    xs = space.positions()
    n_nb = len(space.neighbours)
    points = []
    for i, (x, n) in enumerate(zip(xs, space.nodes)):
        fig = (f"{n.n_suppressed:,} records suppressed, {n.n_classes:,} classes"
               + (f", {metric} {n.metric:,.6g}" if n.satisfied and n.metric is not None else ""))
        points.append({"x": x, "height": n.height, "status": n.status,
                       "role": "chosen node" if i == 0 else ("neighbour" if i <= n_nb else "checked node"),
                       "levels": space.level_text(n.levels), "figures": fig,
                       "verdict": "satisfies the models" if n.satisfied else "fails: " + (n.why_fails or "the models"),
                       "checked": "checked by the search" if n.checked else "checked for this view"})
    edges = [{"x": xs[0], "height": space.nodes[0].height, "x2": xs[i], "height2": space.nodes[i].height}
             for i in range(1, n_nb + 1)]
    c = space.counts
    shown = len(space.nodes)
    cap = (f"Showing {space.n_shown_checked:,} of the {c['checked']:,} nodes the search checked (the {space.limit:,} "
           "nearest the chosen node) and the chosen node's neighbours: a lattice this size is not drawn whole."
           if space.capped else f"Showing all {c['checked']:,} nodes the search checked and the chosen node's "
           f"neighbours ({shown:,} nodes) of the lattice's {c['nodes']:,}.")
    ch = space.chosen
    legend = [{"status": s, "colour": STATUS_COLOURS[s],
               "count": {"chosen": 1, "satisfies": c["checked_satisfying"], "fails": c["checked_failing"],
                         "satisfies (inferred)": c.get("inferred_satisfying"),
                         "fails (inferred)": c.get("inferred_failing"), "pruned": c.get("pruned"),
                         "not reached": c.get("not_reached")}[s]} for s in STATUS_COLOURS]
    return jsonable({
        "sentence": counts_sentence(space), "capped": space.capped, "cap_note": cap, "metric": metric,
        "max_height": int(sum(space.heights)), "points": points, "edges": edges, "legend": legend,
        "chosen": {"levels": space.level_text(ch.levels), "n_suppressed": ch.n_suppressed, "n_classes": ch.n_classes,
                   "metric": ch.metric},
        "neighbours": neighbour_rows(space), "notes": list(space.notes),
    })
