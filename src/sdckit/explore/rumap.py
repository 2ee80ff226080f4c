"""The R-U confidentiality map: disclosure risk (y) against data utility (x).

One curve per method through its parameter values, the threshold as a horizontal line, the
original data (utility 1, its risk) and "no data" (0, 0) as the end points, the Pareto front
highlighted. Two renderings: a PNG (matplotlib) and an inline SVG whose points show the method
and parameters on hover (``<title>`` elements: no script, no network).

References
----------
Duncan, G. T., Keller-McNulty, S. A. and Stokes, S. L. (2001). Disclosure risk vs. data
utility: the R-U confidentiality map. NISS technical report 121; seed 002's R-U map slides.
"""

from __future__ import annotations

import html

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


def ru_map_svg(summary: pd.DataFrame, *, threshold: float | None, original_risk: float,
               risk_name: str = "risk", utility_name: str = "utility", chosen: tuple | None = None,
               width: int = 720, height: int = 460) -> str:
    """An inline SVG R-U map; hovering a point shows its method, parameters, risk and utility."""
    s = _points(summary)
    pad_l, pad_r, pad_t, pad_b = 70, 20, 30, 50
    r_max = max([original_risk, threshold or 0.0, *(s["risk"] + s["risk_sd"]).tolist(), 1e-9]) * 1.08

    def x(u: float) -> float:
        return pad_l + (u + 0.03) / 1.08 * (width - pad_l - pad_r)

    def y(r: float) -> float:
        return height - pad_b - r / r_max * (height - pad_t - pad_b)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" id="ru-map" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
           f'<rect x="0" y="0" width="{width}" height="{height}" fill="white"/>',
           f'<line x1="{pad_l}" y1="{height - pad_b}" x2="{width - pad_r}" y2="{height - pad_b}" stroke="#333"/>',
           f'<line x1="{pad_l}" y1="{pad_t}" x2="{pad_l}" y2="{height - pad_b}" stroke="#333"/>']
    for t in np.linspace(0, 1, 6):
        out.append(f'<text x="{x(t):.1f}" y="{height - pad_b + 16}" text-anchor="middle">{t:.1f}</text>')
    for t in np.linspace(0, r_max / 1.08, 5):
        out.append(f'<text x="{pad_l - 6}" y="{y(t) + 4:.1f}" text-anchor="end">{t:.3g}</text>')
    out.append(f'<text x="{(width + pad_l) / 2}" y="{height - 12}" text-anchor="middle">utility '
               f'({html.escape(utility_name)}; 1 = original)</text>')
    out.append(f'<text x="16" y="{(height - pad_b + pad_t) / 2}" text-anchor="middle" '
               f'transform="rotate(-90 16 {(height - pad_b + pad_t) / 2})">disclosure risk ({html.escape(risk_name)})</text>')
    if threshold is not None:
        out.append(f'<line class="threshold" x1="{pad_l}" y1="{y(threshold):.1f}" x2="{width - pad_r}" '
                   f'y2="{y(threshold):.1f}" stroke="#c53030" stroke-dasharray="6 4"><title>threshold {threshold:g}'
                   f'</title></line>')
    legend_y = pad_t
    for i, (method, g) in enumerate(s.groupby("method", sort=False)):
        color = PALETTE[i % len(PALETTE)]
        g = g.sort_values("utility")
        pts = " ".join(f"{x(u):.1f},{y(r):.1f}" for u, r in zip(g["utility"], g["risk"]))
        out.append(f'<polyline class="method-curve" data-method="{html.escape(method)}" points="{pts}" '
                   f'fill="none" stroke="{color}" stroke-width="1.5"/>')
        for _, row in g.iterrows():
            tip = (f"{method}({row['label']}): risk {row['risk']:.4g} ± {row['risk_sd']:.2g}, "
                   f"utility {row['utility']:.4g} ± {row['utility_sd']:.2g}"
                   + (" — Pareto front" if row["pareto"] else ""))
            stroke = ' stroke="black" stroke-width="2"' if row["pareto"] else ""
            out.append(f'<circle class="point{" pareto" if row["pareto"] else ""}" cx="{x(row["utility"]):.1f}" '
                       f'cy="{y(row["risk"]):.1f}" r="5" fill="{color}"{stroke}><title>{html.escape(tip)}</title></circle>')
        out.append(f'<rect x="{pad_l + 12}" y="{legend_y - 9}" width="10" height="10" fill="{color}"/>'
                   f'<text x="{pad_l + 27}" y="{legend_y}">{html.escape(method)}</text>')
        legend_y += 16
    out.append(f'<text x="{x(1.0):.1f}" y="{y(original_risk) + 5:.1f}" text-anchor="middle" font-size="16">★'
               f'<title>original data: risk {original_risk:.4g}, utility 1</title></text>')
    out.append(f'<text x="{x(0.0):.1f}" y="{y(0.0) + 5:.1f}" text-anchor="middle" font-size="14">×'
               f'<title>no data: risk 0, utility 0</title></text>')
    if chosen is not None:
        out.append(f'<circle class="chosen" cx="{x(chosen[0]):.1f}" cy="{y(chosen[1]):.1f}" r="10" fill="none" '
                   f'stroke="#c53030" stroke-width="2"><title>proposed release</title></circle>')
    out.append(f'<text x="{pad_l + 12}" y="{legend_y}">bold outline = Pareto front; ★ original; × no data</text>')
    out.append("</svg>")
    return "".join(out)


def ru_map_html(summary: pd.DataFrame, **kw) -> str:
    """Report fragment: the interactive SVG and the static PNG below it."""
    return ru_map_svg(summary, **kw) + "<details><summary>static image</summary>" + \
        figure_to_html(ru_map_figure(summary, **kw), "R-U map") + "</details>"
