"""The R-U confidentiality map: data utility (y) against disclosure risk (x), as Duncan et al. draw it.

One curve per method through its parameter values, the threshold as a vertical line, the
original data (utility 1, its risk) and "no data" (0, 0) as the end points, the Pareto front
highlighted, and the release itself when it is known. Two renderings: an interactive
Vega-Lite chart (Altair; the Vega JavaScript is inlined, so the page works offline) whose points
show the method and parameters on hover, and a static PNG (matplotlib).

References
----------
Duncan, G. T., Keller-McNulty, S. A. and Stokes, S. L. (2001). Disclosure risk vs. data
utility: the R-U confidentiality map. NISS technical report 121, section 2 (risk R on the
horizontal axis, utility U on the vertical).

The interactive chart and its data come from :func:`sdckit.report.fragments.rumap_data` and
:func:`sdckit.report.fragments.rumap_chart`, which the workbench draws too: one map, one risk
measure and one unit (risk as a share of records, shown as a percentage).
"""

from __future__ import annotations

import pandas as pd

from ..report.plots import figure_png, figure_to_html, new_figure
from ..utility.frontier import pareto_front

PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"]


def _points(summary: pd.DataFrame) -> pd.DataFrame:
    s = summary.copy()
    s["pareto"] = pareto_front(s["risk"].to_numpy(), s["utility"].to_numpy()) if len(s) else []
    return s


def ru_map_figure(summary: pd.DataFrame, *, threshold: float | None, original_risk: float,
                  risk_name: str = "risk", utility_name: str = "utility", chosen: tuple | None = None,
                  failures: pd.DataFrame | None = None):
    """The R-U map as a matplotlib figure."""
    s = _points(summary)
    fig, ax = new_figure(7.5, 5.0)
    for i, (method, g) in enumerate(s.groupby("method", sort=False)):
        g = g.sort_values("utility")
        color = PALETTE[i % len(PALETTE)]
        g = g.sort_values("risk")
        ax.errorbar(g["risk"], g["utility"], xerr=g["risk_sd"], yerr=g["utility_sd"], fmt="-o", ms=4,
                    color=color, label=method, capsize=2, lw=1)
    front = s[s["pareto"]].sort_values("risk")
    if len(front):
        ax.plot(front["risk"], front["utility"], "s", mfc="none", mec="black", ms=10, label="Pareto front")
    ax.plot([original_risk], [1.0], "k*", ms=12, label="original data")
    ax.plot([0.0], [0.0], "kx", ms=10, label="no data")
    if threshold is not None:
        ax.axvline(threshold, color="#c53030", ls="--", lw=1, label=f"threshold {threshold:.2%}")
    if chosen is not None:
        ax.plot([chosen[1]], [chosen[0]], "o", ms=14, mfc="none", mec="#c53030", mew=2, label="proposed release")
    if failures is not None and len(failures):
        for _, row in failures.iterrows():
            ax.plot([], [], " ", label=f"failed: {row['method']} {row['params']}")
    from matplotlib.ticker import PercentFormatter

    from ..report.fragments import risk_axis_title, utility_axis_title

    ax.set_xlabel(risk_axis_title(risk_name))
    ax.set_ylabel(utility_axis_title(utility_name))
    ax.xaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_ylim(-0.03, 1.05)
    ax.set_xlim(left=-0.002)
    ax.legend(fontsize=7, loc="upper left")
    ax.set_title("R-U confidentiality map")
    return fig


def ru_map_png(summary: pd.DataFrame, **kw) -> bytes:
    return figure_png(ru_map_figure(summary, **kw))


def ru_map_chart(summary: pd.DataFrame, *, threshold: float | None, original_risk: float,
                 risk_name: str = "risk", utility_name: str = "utility", chosen: tuple | None = None,
                 release: tuple | None = None, threshold_label: str | None = None,
                 width: int = 640, height: int = 400):
    """The R-U map as an Altair (Vega-Lite) chart: risk on x, utility on y.

    Layers: one line per method through its settings (named ``method-curve``), the points
    (hover: method, parameters, risk and utility with their sd over seeds; Pareto front
    outlined), the original data (utility 1) and "no data" (0, 0), the threshold as a dashed
    vertical rule (named ``threshold``), the proposed setting of the sweep and ``release`` — the
    release itself, measured with the same risk measure — as a red diamond (named
    ``this-release``). ``chosen`` and ``release`` are (utility, risk) pairs. Built by
    :func:`sdckit.report.fragments.rumap_chart` from :func:`~sdckit.report.fragments.rumap_data`.
    """
    from ..report.fragments import rumap_chart, rumap_data

    data = rumap_data(summary, original_risk=original_risk, release=release, chosen=chosen)
    return rumap_chart(data, risk_name=risk_name, utility_name=utility_name, threshold=threshold,
                       threshold_label=threshold_label, width=width, height=height)


def ru_map_html(summary: pd.DataFrame, *, threshold: float | None, original_risk: float,
                risk_name: str = "risk", utility_name: str = "utility", chosen: tuple | None = None,
                release: tuple | None = None, threshold_label: str | None = None,
                include_script: bool = True) -> str:
    """Report fragment: the interactive map (Vega-Lite, id ``ru-map``) and a static PNG below it.

    ``include_script=False`` leaves out the inlined Vega JavaScript (the page already has it).
    The ``div`` carries ``data-threshold`` and, when given, ``data-release-risk`` and
    ``data-release-utility``: the figures drawn.
    """
    from ..report.charts import embed, vega_script

    chart = ru_map_chart(summary, threshold=threshold, original_risk=original_risk, risk_name=risk_name,
                         utility_name=utility_name, chosen=chosen, release=release, threshold_label=threshold_label)
    attrs = {"risk-measure": risk_name}
    if threshold is not None:
        attrs["threshold"] = repr(float(threshold))
    if release is not None:
        attrs["release-utility"], attrs["release-risk"] = repr(float(release[0])), repr(float(release[1]))
    fig = ru_map_figure(summary, threshold=threshold, original_risk=original_risk, risk_name=risk_name,
                        utility_name=utility_name, chosen=chosen)
    if release is not None:
        fig.axes[0].plot([release[1]], [release[0]], "D", ms=10, color="#c53030", mec="black", label="this release")
        fig.axes[0].legend(fontsize=7, loc="upper left")
    return ((vega_script() if include_script else "") + embed(chart, "ru-map", attrs=attrs)
            + "<details><summary>static image</summary>" + figure_to_html(fig, "R-U map") + "</details>")


def release_ru_map_section(run, summary: pd.DataFrame, *, original_risk: float, risk_name: str,
                           utility_name: str, threshold: float | None = None, chosen: tuple | None = None,
                           chosen_text: str = "") -> tuple[str, dict]:
    """The R-U map of a sweep with the release itself on it, for the release report.

    The release is measured with the sweep's own risk and utility measures. When the release
    gate checks the same risk measure (:data:`sdckit.explore.measures.GATE_FOR_RISK`), the
    map's threshold is the gate's threshold and the release's risk is the gate's measured
    value; otherwise the sweep's threshold is drawn and the text says the gate measures
    something else.

    Returns
    -------
    (html, figures) : the report fragment, and the figures drawn (``threshold``,
        ``threshold_source``, ``release_risk``, ``release_utility``).
    """
    from ..explore.measures import GATE_FOR_RISK, get_measure
    from ..risk.intruder import intruder_view

    view = intruder_view(run.original, run.steps)
    release_risk = float(get_measure("risk", risk_name)(run.original, run.released, view))
    release_utility = float(get_measure("utility", utility_name)(run.original, run.released, view))
    from ..report.fragments import percent, threshold_words

    gate_name = GATE_FOR_RISK.get(risk_name)
    gate = next((o for o in run.gate if o.name == gate_name), None)
    if gate is not None:
        threshold, source = float(gate.threshold), f"gate {gate.name}"
        words, limit = threshold_words(gate.name, gate.threshold)
        label = f"gate threshold: {words} {limit}"
        note = (f"The risk axis is the gate's own measure; the dashed line is the gate's threshold "
                f"({words}: {limit}).")
    else:
        source = "sweep"
        label = None if threshold is None else f"sweep threshold {percent(threshold)}"
        note = ("The gate of this release does not check the map's risk measure; the dashed line is the "
                "sweep's threshold" + ("" if threshold is None else f" ({percent(threshold)})") + ".")
    why = dominating_html(run, summary, release_risk, release_utility, threshold)
    html_ = (f"<p>Each point is one method and setting of the sweep (mean over seeds; hover for details). "
             f"The red diamond is this release: risk {percent(release_risk)}, utility {release_utility:.4g}. "
             f"{note} {chosen_text} The open red circle marks that best setting; the crosses are the "
             "original data (utility 1) and no data at all (0, 0).</p>" + why
             + ru_map_html(summary, threshold=threshold, original_risk=original_risk, risk_name=risk_name,
                           utility_name=utility_name, chosen=chosen, release=(release_utility, release_risk),
                           threshold_label=label, include_script=False))
    return html_, {"threshold": threshold, "threshold_source": source, "release_risk": release_risk,
                   "release_utility": release_utility}


def dominating(summary: pd.DataFrame, release_risk: float, release_utility: float) -> pd.DataFrame:
    """The settings of a sweep that dominate the release: risk no higher and utility no lower,
    one of them strictly (compared at the sweep's means), best utility first."""
    if not len(summary):
        return summary
    r, u = summary["risk"].astype(float), summary["utility"].astype(float)
    tol = 1e-12
    mask = (r <= release_risk + tol) & (u >= release_utility - tol) & ((r < release_risk - tol) | (u > release_utility + tol))
    return summary[mask].sort_values(["utility", "risk"], ascending=[False, True])


def dominating_html(run, summary: pd.DataFrame, release_risk: float, release_utility: float,
                    threshold: float | None) -> str:
    """Why the release was chosen when the map shows a setting that dominates it: the steward's
    reason (``[report] choice_reason``), else what the map cannot show (the setting's risk above
    the threshold, or the gate's other thresholds not checked for the sweep's settings). Empty
    when nothing dominates the release."""
    import html

    from ..report.fragments import percent

    better = dominating(summary, release_risk, release_utility)
    if not len(better):
        return ""
    top = better.iloc[0]
    what = (f"{html.escape(str(top['method']).replace('_', ' '))} with {html.escape(str(top['label']))} "
            f"(risk {percent(float(top['risk']))}, utility {float(top['utility']):.4g})")
    reason = ""
    if run.spec is not None:
        reason = str((run.spec.raw.get("report") or {}).get("choice_reason") or "")
    if threshold is not None and float(top["risk"]) > float(threshold):
        because = f"it fails the risk threshold ({percent(float(top['risk']))} > {percent(float(threshold))})"
    elif reason:
        because = f"the steward chose otherwise: {html.escape(reason)}"
    else:
        others = [o.name for o in run.gate if o.name not in ("max_global_risk", "max_linkage_risk")]
        because = ("the map measures risk and utility only"
                   + (f"; the gate's other thresholds ({html.escape(', '.join(others))}) were not checked "
                      "for the sweep's settings" if others else "")
                   + ", and the spec gives no reason (write one as <code>[report] choice_reason</code>)")
    return (f"<p class='explain' id='ru-dominating'><b>A setting on the map does better than this release:</b> "
            f"{what}; {len(better)} setting{'s' if len(better) != 1 else ''} in all have no more risk and "
            f"no less utility. It was not chosen because {because}.</p>")
