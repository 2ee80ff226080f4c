"""Matplotlib figures embedded in self-contained HTML (base64 PNG, no network needed)."""

from __future__ import annotations

import base64
import html
import io
import sys

import matplotlib

matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402


def new_figure(width: float = 6.0, height: float = 4.0):
    """A figure and axes on the non-interactive back end (a plain :class:`~matplotlib.figure.Figure`:
    no pyplot, whose import and figure manager a report does not need)."""
    fig = Figure(figsize=(width, height), dpi=100)
    return fig, fig.subplots()


def figure_png(fig) -> bytes:
    """PNG bytes of a figure; the figure is closed."""
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png")
    if "matplotlib.pyplot" in sys.modules:   # a figure a caller made with pyplot is released
        sys.modules["matplotlib.pyplot"].close(fig)
    return buf.getvalue()


def figure_to_html(fig, alt: str) -> str:
    """An ``<img>`` tag holding the figure as base64 PNG; the figure is closed."""
    data = base64.b64encode(figure_png(fig)).decode("ascii")
    # the alt text may hold a category label: escaped, so no label can leave the attribute
    return f'<img alt="{html.escape(alt, quote=True)}" src="data:image/png;base64,{data}"/>'
