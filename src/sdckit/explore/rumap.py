"""The R-U confidentiality map: disclosure risk (y) against data utility (x).

One curve per method through its parameter values, the threshold as a horizontal line, the
original data (utility 1, its risk) and "no data" (0, 0) as the end points, the Pareto front
highlighted, and the release itself when it is known. Two renderings: an interactive
Vega-Lite chart (Altair; the Vega JavaScript is inlined, so the page works offline) whose points
show the method and parameters on hover, and a static PNG (matplotlib).

References
----------
Duncan, G. T., Keller-McNulty, S. A. and Stokes, S. L. (2001). Disclosure risk vs. data
utility: the R-U confidentiality map. NISS technical report 121; seed 002's R-U map slides.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..report.plots import figure_to_html, figure_png, new_figure
from .sweep import pareto_front

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
        ax.errorbar(g["utility"], g["risk"], xerr=g["utility_sd"], yerr=g["risk_sd"], fmt="-o", ms=4,
                    color=color, label=method, capsize=2, lw=1)
    front = s[s["pareto"]].sort_values("utility")
    if len(front):
        ax.plot(front["utility"], front["risk"], "s", mfc="none", mec="black", ms=10, label="Pareto front")
    ax.plot([1.0], [original_risk], "k*", ms=12, label="original data")
    ax.plot([0.0], [0.0], "kx", ms=10, label="no data")
    if threshold is not None:
        ax.axhline(threshold, color="#c53030", ls="--", lw=1, label=f"threshold {threshold:g}")
    if chosen is not None:
        ax.plot([chosen[0]], [chosen[1]], "o", ms=14, mfc="none", mec="#c53030", mew=2, label="proposed release")
    if failures is not None and len(failures):
        for _, row in failures.iterrows():
            ax.plot([], [], " ", label=f"failed: {row['method']} {row['params']}")
    ax.set_xlabel(f"utility ({utility_name}; 1 = original)")
    ax.set_ylabel(f"disclosure risk ({risk_name})")
    ax.set_xlim(-0.03, 1.05)
    ax.set_ylim(bottom=-0.002)
    ax.legend(fontsize=7, loc="upper left")
    ax.set_title("R-U confidentiality map")
    return fig


def ru_map_png(summary: pd.DataFrame, **kw) -> bytes:
    return figure_png(ru_map_figure(summary, **kw))


def ru_map_chart(summary: pd.DataFrame, *, threshold: float | None, original_risk: float,
                 risk_name: str = "risk", utility_name: str = "utility", chosen: tuple | None = None,
                 release: tuple | None = None, threshold_label: str | None = None,
                 width: int = 640, height: int = 400):
    """The R-U map as an Altair (Vega-Lite) chart.

    Layers: one line per method through its settings (named ``method-curve``), the points
    (hover: method, parameters, risk and utility with their sd over seeds; Pareto front
    outlined), the original data (utility 1) and "no data" (0, 0), the threshold as a dashed
    rule (named ``threshold``), the proposed setting of the sweep and ``release`` — the
    release itself, measured with the same risk measure — as a red diamond (named
    ``this-release``).
    """
    import altair as alt

    s = _points(summary)
    pts = pd.DataFrame({"method": s["method"].astype(str), "parameters": s["label"].astype(str),
                        "risk": s["risk"].astype(float), "risk_sd": s["risk_sd"].astype(float),
                        "utility": s["utility"].astype(float), "utility_sd": s["utility_sd"].astype(float),
                        "pareto": s["pareto"].astype(bool)})
    pts["front"] = np.where(pts["pareto"], "on the Pareto front", "dominated")
    x = alt.X("utility:Q", title=f"utility ({utility_name}; 1 = original)", scale=alt.Scale(domain=[-0.02, 1.04]))
    y = alt.Y("risk:Q", title=f"disclosure risk ({risk_name})")
    tip = ["method:N", "parameters:N", alt.Tooltip("risk:Q", format=".4g"), alt.Tooltip("risk_sd:Q", format=".2g"),
           alt.Tooltip("utility:Q", format=".4g"), alt.Tooltip("utility_sd:Q", format=".2g"), "front:N"]
    color = alt.Color("method:N", title="method", scale=alt.Scale(range=PALETTE))
    base = alt.Chart(pts)
    layers = [
        base.mark_line(strokeWidth=1.5).encode(x, y, color=color, order="utility:Q", detail="method:N")
        .properties(name="method-curve"),
        base.mark_point(filled=True, size=60).encode(
            x, y, color=color, tooltip=tip,
            stroke=alt.condition("datum.pareto", alt.value("black"), alt.value(None)),
            strokeWidth=alt.condition("datum.pareto", alt.value(2), alt.value(0))).properties(name="points"),
    ]
    ends = pd.DataFrame({"utility": [1.0, 0.0], "risk": [float(original_risk), 0.0],
                         "what": ["original data", "no data"]})
    layers.append(alt.Chart(ends).mark_point(shape="cross", size=120, color="black", filled=True).encode(
        x, y, tooltip=["what:N", alt.Tooltip("risk:Q", format=".4g"), "utility:Q"]).properties(name="end-points"))
    if threshold is not None:
        rule = pd.DataFrame({"threshold": [float(threshold)],
                             "what": [threshold_label or f"risk threshold {threshold:g}"]})
        layers.append(alt.Chart(rule).mark_rule(color="#c53030", strokeDash=[6, 4], strokeWidth=1.5).encode(
            y=alt.Y("threshold:Q"), tooltip=["what:N", alt.Tooltip("threshold:Q", format=".6g")])
            .properties(name="threshold"))
    if chosen is not None:
        ch = pd.DataFrame({"utility": [float(chosen[0])], "risk": [float(chosen[1])], "what": ["best setting of the sweep"]})
        layers.append(alt.Chart(ch).mark_point(size=320, color="#c53030", strokeWidth=2).encode(
            x, y, tooltip=["what:N", alt.Tooltip("risk:Q", format=".4g"), alt.Tooltip("utility:Q", format=".4g")])
            .properties(name="proposed"))
    if release is not None:
        rel = pd.DataFrame({"utility": [float(release[0])], "risk": [float(release[1])], "what": ["this release"]})
        layers.append(alt.Chart(rel).mark_point(shape="diamond", size=260, color="#c53030", filled=True,
                                                stroke="black", strokeWidth=1).encode(
            x, y, tooltip=["what:N", alt.Tooltip("risk:Q", format=".6g"), alt.Tooltip("utility:Q", format=".4g")])
            .properties(name="this-release"))
        layers.append(alt.Chart(rel).mark_text(align="left", dx=10, dy=-10, fontWeight="bold", color="#c53030")
                      .encode(x, y, text="what:N").properties(name="this-release-label"))
    return alt.layer(*layers).properties(title="R-U confidentiality map", width=width, height=height)


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
        fig.axes[0].plot([release[0]], [release[1]], "D", ms=10, color="#c53030", mec="black", label="this release")
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
    from ..explore.sweep import intruder_view

    view = intruder_view(run.original, run.steps)
    release_risk = float(get_measure("risk", risk_name)(run.original, run.released, view))
    release_utility = float(get_measure("utility", utility_name)(run.original, run.released, view))
    gate_name = GATE_FOR_RISK.get(risk_name)
    gate = next((o for o in run.gate if o.name == gate_name), None)
    if gate is not None:
        threshold, source = float(gate.threshold), f"gate {gate.name}"
        label = f"gate threshold {gate.name} = {threshold:g}"
        note = (f"The risk axis is the gate's own measure ({risk_name}); the dashed line is the gate's "
                f"threshold {gate.name} = {threshold:g}.")
    else:
        source = "sweep"
        label = None if threshold is None else f"sweep threshold {threshold:g}"
        note = ("The gate of this release does not check the map's risk measure "
                f"({risk_name}); the dashed line is the sweep's threshold"
                + ("" if threshold is None else f" {threshold:g}") + ".")
    html_ = (f"<p>Each point is one method and setting of the sweep (mean over seeds; hover for details). "
             f"The red diamond is this release: risk {release_risk:.4g}, utility {release_utility:.4g}. "
             f"{note} {chosen_text} The open red circle marks that best setting; the crosses are the "
             "original data (utility 1) and no data at all (0, 0).</p>"
             + ru_map_html(summary, threshold=threshold, original_risk=original_risk, risk_name=risk_name,
                           utility_name=utility_name, chosen=chosen, release=(release_utility, release_risk),
                           threshold_label=label, include_script=False))
    return html_, {"threshold": threshold, "threshold_source": source, "release_risk": release_risk,
                   "release_utility": release_utility}
