"""The public and internal HTML reports of a release (self-contained, no network needed).

The public report never holds a seed. The internal report adds the seeds, the input path
and every step's parameters.
"""

from __future__ import annotations

import datetime as _dt
import html
import json
from importlib import resources
from typing import TYPE_CHECKING

import jinja2

from ..result import jsonable

if TYPE_CHECKING:  # pragma: no cover
    from ..release import ReleaseRun

_env = jinja2.Environment(autoescape=jinja2.select_autoescape(["html"]),
                          undefined=jinja2.StrictUndefined)


def _template() -> jinja2.Template:
    text = resources.files("sdckit.report").joinpath("templates/release.html").read_text("utf-8")
    return _env.from_string(text)


def risk_comparison_html(run: "ReleaseRun") -> str:
    """Table of key-variable risk figures of the original and the released data."""
    from ..risk.report import compare_risk, measure_risk

    if not run.original.key_vars:
        return "<p>No key variables were named, so no key-based risk was measured.</p>"
    cmp = compare_risk(measure_risk(run.original), measure_risk(run.released))
    return (f"<p>Key variables: {html.escape(', '.join(run.original.key_vars))}.</p>"
            + cmp.report_html())


def utility_html(run: "ReleaseRun") -> str:
    """Utility of the release: per key variable the information kept (1 - H(X|Y)/H(X)) and the
    share of records whose value changed; per numeric variable mean and sd before and after."""
    from ..explore.measures import _label, entropy_utility
    from ..explore.sweep import intruder_view

    rows = []
    orig, rel = run.original.frame, run.released.frame
    # a value counts as changed when it differs from the original recoded by the release's
    # published global recodings (a recoded label alone is not a change of the record)
    view = intruder_view(run.original, run.steps) if run.original.key_vars else orig
    for v in run.original.key_vars:
        if v not in rel:
            continue
        kept = entropy_utility(run.original, run.released, [v])
        a = view[v].map(_label, na_action="ignore").fillna("\0missing").to_numpy(dtype=object)
        b = rel[v].map(_label, na_action="ignore").fillna("\0missing").to_numpy(dtype=object)
        changed = float((a != b).mean())
        rows.append(f"<tr><td>{html.escape(v)}</td><td>{kept:.4f}</td><td>{changed:.2%}</td></tr>")
    out = ""
    if rows:
        total = entropy_utility(run.original, run.released)
        out += ("<p>Information kept in the key variables (1 = all; non-uniform entropy): "
                f"<b>{total:.4f}</b>.</p><table><tr><th>key variable</th><th>information kept</th>"
                f"<th>records changed or suppressed (beyond global recoding)</th></tr>{''.join(rows)}</table>")
    num = [v for v in run.original.numeric_vars if v in rel]
    if num:
        body = "".join(
            f"<tr><td>{html.escape(v)}</td><td>{orig[v].mean():.6g}</td><td>{rel[v].mean():.6g}</td>"
            f"<td>{orig[v].std():.6g}</td><td>{rel[v].std():.6g}</td></tr>" for v in num)
        out += ("<table><tr><th>numeric variable</th><th>mean before</th><th>mean after</th><th>sd before</th>"
                f"<th>sd after</th></tr>{body}</table>")
    return out or "<p>No key or numeric variables were named.</p>"


def _num(v) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, int):
        return f"{v:,}"
    return html.escape(str(v))


def _context(run: "ReleaseRun", *, internal: bool, data_file: str, artifacts: list[str],
             extra_sections: list[tuple[str, str]] | None = None) -> dict:
    from .. import __version__

    roles = [(k, ", ".join(v) if isinstance(v, (tuple, list)) else v)
             for k, v in run.released.roles.items() if v]
    return {
        "title": ("Internal report" if internal else "Release report")
                 + (f": {run.spec.source}" if internal and run.spec and run.spec.source else ""),
        "internal": internal, "version": __version__,
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "n_records": f"{run.released.n_records:,}", "n_columns": len(run.released.columns),
        "roles": roles, "data_file": data_file,
        "risk_html": risk_comparison_html(run),
        "utility_html": utility_html(run),
        "steps": [{"method": r.method, "html": r.report_html() + (r.internal_report_html() if internal else "")}
                  for r in run.results],
        "gate": [o.to_dict() for o in run.gate],
        "artifacts": artifacts,
        "extra_sections": [{"title": t, "html": h} for t, h in (extra_sections or [])],
        "internal_json": json.dumps(jsonable(run.internal_dict()), indent=2) if internal else "",
    }


def public_report_html(run: "ReleaseRun", *, data_file: str = "released.csv",
                       artifacts: list[str] | None = None,
                       extra_sections: list[tuple[str, str]] | None = None) -> str:
    """The public report: data, risk before/after, steps with guarantees, gate. No seeds."""
    return _template().render(**_context(run, internal=False, data_file=data_file,
                                         artifacts=artifacts or [], extra_sections=extra_sections))


def internal_report_html(run: "ReleaseRun", *, data_file: str = "released.csv") -> str:
    """The internal report: the public content plus seeds, input and every parameter."""
    return _template().render(**_context(run, internal=True, data_file=data_file, artifacts=[]))
