"""The public report's content for a release outcome that holds no in-memory data.

The one public-report template (``templates/release.html``, rendered by
:func:`sdckit.report.release.outcome_report_html`) writes the report of every release
outcome (:class:`sdckit.runner.ReleaseOutcome`). An in-memory run fills it from its data
and step results; an outcome of partitioned data (the Dask engine's run) fills it here from
what its :meth:`public_dict` says: the verdict and the gate, the risk before and after in
plain words, one section a step (a sentence, its settings, its guarantee, its scope at
scale), and the published files. No seed, no path of the machine.
"""

from __future__ import annotations

import datetime as _dt
import html
from collections.abc import Sequence
from typing import Any

from ..registry import GateOutcome
from . import fragments

__all__ = ["partitioned_context", "partitioned_risk_html", "partitioned_step_sentence"]

#: the risk figures the public report shows, in plain words (key of the risk summary -> label)
RISK_ROWS = (("n_records", "records"), ("n_combinations", "key combinations"),
             ("n_sample_uniques", "records unique on the keys (f_k = 1)"),
             ("k_reached", "smallest class size k reached"),
             ("global_risk", "global risk (expected share of re-identifications)"),
             ("expected_reidentifications", "expected re-identifications"),
             ("max_individual_risk", "largest individual risk"),
             ("n_above_threshold", "records above the individual-risk threshold"),
             ("n_records_with_missing_keys", "records with a missing key"))


def figure_text(v: Any) -> str:
    """One figure as text: counts with separators, large numbers rounded, lists as lists."""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        return f"{v:,.0f}" if abs(v) >= 1e5 else f"{v:.4g}"
    if isinstance(v, (list, tuple)):
        return ", ".join(map(str, v)) if v else "none"
    return str(v)


def partitioned_step_sentence(d: dict) -> str:
    """What a step did, in one sentence, from its public summary."""
    m = d["method"]
    if m == "pram":
        lows = ", ".join(f"{v} {x['min_diagonal']:.3g}" for v, x in d.get("matrices", {}).items())
        strata = f", within strata of {', '.join(d['strata'])}" if d.get("strata") else ""
        return (f"PRAM changed the categories of {', '.join(d['variables'])} at random by published "
                f"transition matrices{strata}; each keeps every category with probability at least "
                f"(smallest diagonal): {lows}.")
    if m == "noise":
        return (f"{str(d.get('kind', '')).capitalize()} noise at level {d.get('level')} was added to "
                f"{', '.join(d['variables'])}.")
    if m == "rank_swap":
        w = d.get("window_ranks")
        w = ", ".join(f"{x} for {v}" for v, x in w.items()) if isinstance(w, dict) else w
        return (f"Rank swapping exchanged values of {', '.join(d['variables'])} that are at most "
                f"{w} ranks apart (p = {d.get('p')}).")
    if m == "microaggregation":
        return (f"MDAV replaced {', '.join(d['variables'])} by group means over groups of "
                f"{d.get('k')} to {2 * int(d.get('k', 1)) - 1} records.")
    return f"{m} ran" + (f" on {', '.join(map(str, d['columns']))}" if d.get("columns") else "") + "."


def partitioned_risk_html(before: dict, after: dict | None) -> str:
    """The risk on the key variables before masking and in the release, in plain words."""
    esc = html.escape
    head = "<tr><th>figure</th><th>before masking</th>" + ("<th>released</th>" if after else "") + "</tr>"
    rows = "".join(f"<tr><td>{esc(label)}</td><td class='num'>{esc(figure_text(before.get(key)))}</td>"
                   + (f"<td class='num'>{esc(figure_text(after.get(key)))}</td>" if after else "") + "</tr>"
                   for key, label in RISK_ROWS if key in before)
    out = (f"<p>Individual risk by the {esc(str(before.get('risk_method', '')))} estimate"
           f"{' with sampling weights' if before.get('weighted') else ''}. "
           + ("" if after else "The released data's risk was not measured: the gate has no risk threshold.")
           + f"</p><table>{head}{rows}</table>")
    kv = before.get("k_violations") or {}
    if kv:
        krows = "".join(f"<tr><td>k = {esc(str(k))}</td><td class='num'>{figure_text(v)}</td>"
                        + (f"<td class='num'>{figure_text((after.get('k_violations') or {}).get(k))}</td>"
                           if after else "") + "</tr>" for k, v in kv.items())
        out += f"<p>Records in key classes smaller than k:</p><table>{head.replace('figure', 'k')}{krows}</table>"
    return out


def _step_context(i: int, st: dict) -> dict:
    esc = html.escape
    settings = {k: v for k, v in st.items() if k not in ("method", "matrices", "scope", "guarantee")
                and not isinstance(v, dict)}
    srows = "".join(f"<tr><th>{esc(k)}</th><td>{esc(figure_text(v))}</td></tr>" for k, v in settings.items())
    notes = ((f"<p>Guarantee: {esc(st['guarantee'])}.</p>" if st.get("guarantee") else "")
             + (f"<p class='scope'>At scale: {esc(st['scope'])}.</p>" if st.get("scope") else ""))
    return {"index": i, "method": st["method"].replace("_", " "), "sentence": partitioned_step_sentence(st),
            "settings": f"<table>{srows}</table>" if srows else "", "figures": "", "guarantees": [],
            "plots": notes, "internal": "", "seconds": None}


def partitioned_context(outcome: Any, *, data_file: str | None = None,
                        artifacts: Sequence[str] = ()) -> dict:
    """The template's context for a partitioned outcome (it has ``public_dict()``, ``gate``,
    ``spec`` and ``columns``)."""
    from .. import __version__

    d = outcome.public_dict()
    spec = getattr(outcome, "spec", None)
    settings = dict(spec.raw.get("report", {}) or {}) if spec is not None and hasattr(spec, "raw") else {}
    if data_file is None:
        data_file = spec.output.data if spec is not None else "released"
    roles = [(k, ", ".join(v) if isinstance(v, (tuple, list)) else v)
             for k, v in (dict(spec.roles) if spec is not None else {}).items() if v]
    gate = [o if isinstance(o, GateOutcome) else GateOutcome(o["name"], o["threshold"], o["value"],
                                                             o["passed"], o["detail"]) for o in outcome.gate]
    kind, text = d["verdict"], d["verdict_text"]
    steps = d.get("steps", [])
    done = ", ".join(s["method"] for s in steps) or "none"
    scale = (f"<p>{d['n_records']:,} records were read in {d['n_partitions']} partitions and masked on "
             f"{d['n_workers']} workers of the Dask engine by {len(steps)} step(s): {html.escape(done)}. "
             "The data are published as a folder of parts.</p>")
    sections = [("verdict", "Verdict"), ("data", "Data released"), ("risk", "Disclosure risk before and after"),
                ("utility", "Utility"), ("steps", "Steps")]
    if artifacts:
        sections.append(("files", "Files published with the data"))
    now = _dt.datetime.now(_dt.UTC)
    return {
        "title": "Release report" + (f": {settings['release']}" if settings.get("release") else ""),
        "internal": False, "version": __version__,
        "organisation": settings.get("organisation", ""), "dataset": settings.get("dataset", ""),
        "release_name": settings.get("release", ""), "date": now.strftime("%Y-%m-%d %H:%M UTC"),
        "passed": kind == "passed",
        # the steps' guarantees were not re-checked on the release: each section says its scope
        "guarantees_ok": None,
        "verdict_kind": kind, "verdict_text": text, "verdict_detail": text.split(": ", 1)[-1],
        "n_records": f"{d['n_records']:,}", "n_columns": len(getattr(outcome, "columns", ()) or ()),
        "roles": roles, "data_file": f"{data_file}/", "input": None, "spec_source": None,
        "vega_script": "", "verdict": [], "gate_html": fragments.gate_table_html(gate), "columns_html": "",
        "risk_html": partitioned_risk_html(d["risk_before"], d["risk_after"]),
        "formula_html": scale,
        "utility_html": "<p>Utility was not measured on the Dask engine; measure it on a sample in memory "
                        "(<code>sdckit protect</code> without <code>--engine dask</code>).</p>",
        "steps": [_step_context(i, st) for i, st in enumerate(steps, 1)],
        "artifacts": list(artifacts), "extra_sections": [], "toc": sections, "internal_html": "",
    }
