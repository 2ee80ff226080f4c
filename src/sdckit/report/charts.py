"""Interactive charts for the reports: Vega-Lite specifications built with Altair, rendered in
the page by vega-embed, whose JavaScript is inlined once per page (from vl-convert's bundle),
so a report opens offline.

Each chart is a ``<div class="vega-chart">`` plus a small script; the rendered view is kept in
``window.sdckitViews[id]`` so a browser test can read its data. A ``<noscript>`` note says the
charts need JavaScript; the tables next to each chart hold the same figures.

References
----------
Satyanarayan, A., Moritz, D., Wongsuphasawat, K. and Heer, J. (2017). Vega-Lite: a grammar
of interactive graphics. *IEEE Transactions on Visualization and Computer Graphics* 23(1).
"""

from __future__ import annotations

import functools
import hashlib
import html
import json
import os
import re
from pathlib import Path

import altair as alt
import numpy as np
import pandas as pd

__all__ = ["vega_script", "embed", "script_json", "frequency_bars", "histogram", "heatmap", "bars"]

alt.data_transformers.disable_max_rows()

BEFORE_AFTER = alt.Scale(domain=["original", "released"], range=["#8da0cb", "#e78a3c"])


def _bundle_cache_file(version: str) -> Path:
    """Where the bundle of this vl-convert version is kept between runs (the user's cache
    folder: ``$XDG_CACHE_HOME/sdckit``, by default ``~/.cache/sdckit``)."""
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(root) / "sdckit" / f"vega-bundle-{version}.js"


@functools.lru_cache(maxsize=1)
def _bundle() -> str:
    """vega, vega-lite and vega-embed as one script. vl-convert builds it in about a second;
    it is built once per vl-convert version and then read from the user's cache folder (a
    folder that cannot be written only means it is built each time)."""
    import vl_convert as vlc

    version = getattr(vlc, "__version__", None)
    cached = _bundle_cache_file(str(version)) if version else None
    if cached is not None:
        try:
            return cached.read_text("utf-8")
        except (OSError, UnicodeDecodeError):
            pass
    # "</script" inside the bundle would end the inline script early
    text = vlc.javascript_bundle().replace("</script", "<\\/script")
    if cached is not None:
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            tmp = cached.with_name(f".{cached.name}.{os.getpid()}.tmp")
            tmp.write_text(text, "utf-8")
            os.replace(tmp, cached)          # whole or absent: another process may read it
        except OSError:
            pass
    return text


def vega_script() -> str:
    """The ``<script>`` holding vega, vega-lite and vega-embed (about 0.9 MB), once per page."""
    return ("<script>/* vega, vega-lite and vega-embed, inlined for offline use */\n" + _bundle()
            + "\nwindow.sdckitViews = window.sdckitViews || {};</script>")


#: characters that could end a <script> element or open an HTML comment or CDATA section
#: inside it, or end a JavaScript string (U+2028, U+2029 in older engines); JSON lets each be
#: written as a \uXXXX escape, which means the same value
_SCRIPT_UNSAFE = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_SCRIPT_UNSAFE_RE = re.compile("[<>&\u2028\u2029]")


def script_json(obj) -> str:
    """``obj`` as JSON that is safe inside an HTML ``<script>`` element.

    Every ``<``, ``>``, ``&``, U+2028 and U+2029 is written as its ``\\uXXXX`` escape, so no
    value (a category label ``</script>``, ``<!--<script>`` or ``]]>``) can end the script,
    open a comment that swallows its end, or break the JavaScript; ``JSON.parse`` and the
    JavaScript parser read the same value back. (The rule of Django's ``json_script`` and
    Jinja's ``tojson``.)
    """
    text = json.dumps(obj, separators=(",", ":"))
    return _SCRIPT_UNSAFE_RE.sub(lambda m: _SCRIPT_UNSAFE[m.group()], text)


_LINE_SEPARATORS = ("\u2028", "\u2029")


def _sorts_as_data(spec):
    """``spec`` with every custom sort order that holds U+2028 or U+2029 given as data.

    Vega-Lite compiles a sort array into a Vega expression (``indexof([...], datum.x)``) and
    Vega's expression parser refuses those two characters inside a string: the chart would not
    render. Such a sort becomes a ``lookup`` of each value's position in an inline table and a
    sort by that position, which no label can break. Other specs are returned unchanged.
    """
    def visit(node):
        if isinstance(node, list):
            for item in node:
                visit(item)
            return
        if not isinstance(node, dict):
            return
        enc = node.get("encoding")
        if isinstance(enc, dict):
            for e in enc.values():
                order = e.get("sort") if isinstance(e, dict) else None
                if (isinstance(order, list) and isinstance(e.get("field"), str)
                        and any(isinstance(v, str) and any(c in v for c in _LINE_SEPARATORS) for v in order)):
                    # one name per field and order: layers that share an axis share its sort
                    digest = hashlib.sha256(json.dumps([e["field"], order]).encode()).hexdigest()[:12]
                    name = f"sdckit_order_{digest}"
                    node.setdefault("transform", []).append({
                        "lookup": e["field"], "as": [name],
                        "from": {"data": {"values": [{"value": v, "position": i} for i, v in enumerate(order)]},
                                 "key": "value", "fields": ["position"]}})
                    e["sort"] = {"field": name, "op": "min"}
        for key, value in node.items():
            if key in ("layer", "concat", "hconcat", "vconcat", "spec"):
                visit(value)

    visit(spec)
    return spec


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "chart"


def embed(chart: alt.TopLevelMixin | dict, chart_id: str, *, caption: str = "", attrs: dict | None = None) -> str:
    """HTML for one chart: a ``div`` (id ``chart_id``), its script, and an optional caption."""
    # a chart or its Vega-Lite spec (the fragments shared with the workbench return specs)
    spec = _sorts_as_data(chart if isinstance(chart, dict) else chart.to_dict(validate=False))
    text = script_json(spec)
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", chart_id):
        raise ValueError(f"chart id {chart_id!r}: use letters, digits, '-' and '_' (see chart_id())")
    extra = "".join(f' data-{k}="{html.escape(str(v))}"' for k, v in (attrs or {}).items())
    cap = f"<figcaption>{html.escape(caption)}</figcaption>" if caption else ""
    return (f'<figure class="chart"><div id="{chart_id}" class="vega-chart"{extra}></div>{cap}'
            f"<noscript>(this chart needs JavaScript; the table beside it holds the same figures)</noscript>"
            f"<script>vegaEmbed('#{chart_id}', {text}, {{actions: false, renderer: 'svg'}})"
            f".then(function (r) {{ window.sdckitViews['{chart_id}'] = r.view; }})"
            f".catch(function (e) {{ console.error(e); }});</script></figure>")


def bars(frame: pd.DataFrame, *, x: str, y: str, title: str, x_title: str | None = None,
         y_title: str | None = None, color: str | None = None, width: int = 360, height: int = 180,
         horizontal: bool = False) -> alt.Chart:
    """A bar chart of ``frame`` (one bar per row)."""
    enc_x = alt.X(f"{x}:N", title=x_title or x, sort=None)
    enc_y = alt.Y(f"{y}:Q", title=y_title or y)
    if horizontal:
        enc_x, enc_y = alt.X(f"{y}:Q", title=y_title or y), alt.Y(f"{x}:N", title=x_title or x, sort="-x")
    ch = alt.Chart(frame).mark_bar(color=color or "#4c78a8").encode(
        enc_x, enc_y, tooltip=[alt.Tooltip(f"{x}:N"), alt.Tooltip(f"{y}:Q", format=".4g")])
    return ch.properties(title=title, width=width, height=height)


def frequency_bars(before: pd.Series, after: pd.Series, *, variable: str, width: int = 300,
                   height: int = 160) -> alt.Chart:
    """Grouped bars: the share of each category in the original and the released data."""
    cats = list(dict.fromkeys([*before.index, *after.index]))
    rows = []
    for c in cats:
        rows.append({"category": str(c), "data": "original", "share": float(before.get(c, 0.0))})
        rows.append({"category": str(c), "data": "released", "share": float(after.get(c, 0.0))})
    df = pd.DataFrame(rows)
    return alt.Chart(df).mark_bar().encode(
        x=alt.X("category:N", title=None, sort=[str(c) for c in cats]),
        xOffset=alt.XOffset("data:N"),
        y=alt.Y("share:Q", title="share of records", axis=alt.Axis(format="%")),
        color=alt.Color("data:N", scale=BEFORE_AFTER, title=None, legend=alt.Legend(orient="top")),
        tooltip=["category:N", "data:N", alt.Tooltip("share:Q", format=".2%")],
    ).properties(title=variable, width=width, height=height)


def histogram(before: np.ndarray, after: np.ndarray, *, title: str, x_title: str, bins: np.ndarray,
              width: int = 380, height: int = 180, log_y: bool = False,
              weights_before: np.ndarray | None = None, weights_after: np.ndarray | None = None) -> alt.Chart:
    """Before/after histograms on common bins, as grouped bars of record counts.

    ``weights_before`` / ``weights_after`` (whole numbers) count each value that many times:
    one value per key combination with its records gives the records' histogram from the
    combinations."""
    cb, _ = np.histogram(before, bins=bins, weights=weights_before)
    ca, _ = np.histogram(after, bins=bins, weights=weights_after)
    labels = [f"{lo:.3g}-{hi:.3g}" for lo, hi in zip(bins[:-1], bins[1:])]
    df = pd.DataFrame({"bin": labels * 2, "data": ["original"] * len(labels) + ["released"] * len(labels),
                       "records": np.concatenate([cb, ca]).astype(int)})
    y = alt.Y("records:Q", title="records", scale=alt.Scale(type="symlog") if log_y else alt.Undefined)
    return alt.Chart(df).mark_bar().encode(
        x=alt.X("bin:N", title=x_title, sort=labels), xOffset="data:N", y=y,
        color=alt.Color("data:N", scale=BEFORE_AFTER, title=None, legend=alt.Legend(orient="top")),
        tooltip=["bin:N", "data:N", "records:Q"],
    ).properties(title=title, width=width, height=height)


def heatmap(matrix: np.ndarray, labels: list[str], *, title: str, value_title: str, width: int = 260,
            height: int = 260, domain: tuple[float, float] | None = None) -> alt.Chart:
    """A square heat map (e.g. a change of correlation matrix), values shown on hover and in cells."""
    n = len(labels)
    df = pd.DataFrame({"row": np.repeat(labels, n), "column": np.tile(labels, n),
                       "value": np.asarray(matrix, dtype=float).ravel()})
    lim = domain or (-max(1e-9, float(np.nanmax(np.abs(df["value"])))), max(1e-9, float(np.nanmax(np.abs(df["value"])))))
    base = alt.Chart(df).encode(x=alt.X("column:N", title=None, sort=labels),
                                y=alt.Y("row:N", title=None, sort=labels))
    cells = base.mark_rect().encode(
        color=alt.Color("value:Q", title=value_title, scale=alt.Scale(scheme="redblue", domain=list(lim), reverse=True)),
        tooltip=["row:N", "column:N", alt.Tooltip("value:Q", format=".4f")])
    text = base.mark_text(fontSize=10).encode(text=alt.Text("value:Q", format=".3f"))
    return (cells + text).properties(title=title, width=width, height=height)


def chart_id(*parts: str) -> str:
    """A page-unique element id from readable parts."""
    return "chart-" + "-".join(_slug(p) for p in parts)
