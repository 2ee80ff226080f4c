"""The public form of a protected table: an HTML page and a CSV with a status column.

Every cell has a public status:

* ``safe`` — published as computed;
* ``suppressed`` — withheld; shown as the suppression code (``x`` by default, as tau-Argus
  writes suppressed cells; set ``output.suppression_code`` in the table spec), primary and
  secondary alike (telling them apart would show which cells are sensitive);
* ``rounded`` — published rounded to the base (controlled rounding);
* ``perturbed`` — published with the cell key method's noise added.

In the CSV the ``value`` column holds the published number or the code, and ``status`` the
status word, so a reader never mistakes a code for a count. On the page suppressed cells show
the code and rounded or perturbed cells carry a superscript mark (``r`` or ``p``) explained
in the legend.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..errors import SpecError
from .table import Table, grid_html

__all__ = ["STATUSES", "MARKS", "check_code", "public_frame", "public_page"]

STATUSES = ("safe", "suppressed", "rounded", "perturbed")
#: superscript marks of the page (the CSV has the status column instead)
MARKS = {"rounded": "r", "perturbed": "p"}
DEFAULT_CODE = "x"


def check_code(code: object, where: str = "output.suppression_code") -> str:
    """A suppression code: a short text that cannot be read as a number."""
    if not isinstance(code, str) or not 1 <= len(code) <= 8:
        raise SpecError(f"{where}: must be a text of 1 to 8 characters such as \"x\" or \".\", got {code!r}")
    try:
        float(code)
    except ValueError:
        return code
    raise SpecError(f"{where}: {code!r} reads as a number; use a code such as \"x\" that no count can be")


def _text(v: float) -> str:
    return f"{v:g}" if not float(v).is_integer() else f"{int(v)}"


def public_frame(table: Table, values: np.ndarray, status: Sequence[str], *, code: str = DEFAULT_CODE) -> pd.DataFrame:
    """The public CSV: the cell's codes per dimension, ``value`` (number or the suppression
    code) and ``status``."""
    status = np.asarray(status, dtype=object)
    bad = set(status) - set(STATUSES)
    if bad:
        raise ValueError(f"unknown cell status {sorted(bad)}; known: {STATUSES}")
    df = table.to_frame()[list(table.dims)].copy()
    df["value"] = [code if s == "suppressed" else _text(v) for v, s in zip(np.asarray(values, float), status)]
    df["status"] = status
    return df


def public_page(table: Table, values: np.ndarray, status: Sequence[str], *, code: str = DEFAULT_CODE,
                title: str = "Published table", intervals: pd.DataFrame | None = None,
                note: str = "") -> str:
    """The public HTML page of a table (2-D grid when it has two dimensions)."""
    status = np.asarray(status, dtype=object)
    values = np.asarray(values, dtype=float)
    c = html.escape(code)

    def cell(i: int) -> str:
        s = status[i]
        if s == "suppressed":
            return f"<td class='suppressed' title='suppressed'>{c}</td>"
        mark = MARKS.get(s)
        sup = f"<sup>{mark}</sup>" if mark else ""
        return f"<td class='{s}'>{_text(values[i])}{sup}</td>"

    grid = grid_html(table, cell, max_rows=5000)
    present = [s for s in STATUSES if (status == s).any()]
    legend_words = {"safe": "published as computed",
                    "suppressed": f"<b>{c}</b> = suppressed cell (withheld)",
                    "rounded": "<sup>r</sup> = rounded to the base",
                    "perturbed": "<sup>p</sup> = perturbed by the cell key method"}
    counts = ", ".join(f"{int((status == s).sum()):,} {s}" for s in present)
    legend = "<ul class='legend'>" + "".join(f"<li>{legend_words[s]}</li>" for s in present) + "</ul>"
    iv = ""
    if intervals is not None and len(intervals):
        rows = "".join(f"<tr><td>{html.escape(', '.join(map(str, r.codes)) if isinstance(r.codes, (tuple, list)) else str(r.codes))}"
                       f"</td><td>{r.lower:g}</td><td>{r.upper:g}</td></tr>" for r in intervals.itertuples(index=False))
        iv = ("<h2>What can be derived for each suppressed cell</h2><p>The smallest and largest value consistent "
              "with the published cells and the table's totals.</p>"
              f"<table><tr><th>suppressed cell</th><th>min</th><th>max</th></tr>{rows}</table>")
    return ("<!doctype html><html lang='en'><head><meta charset='utf-8'><title>" + html.escape(title) + "</title>"
            "<style>body{font-family:system-ui,'Liberation Sans',sans-serif;max-width:1040px;margin:1.5em auto;"
            "padding:0 1em;color:#1d2430}table{border-collapse:collapse;margin:1em 0}"
            "td,th{border:1px solid #cbd2d9;padding:3px 8px;text-align:right;font-variant-numeric:tabular-nums}"
            "th{background:#f0f4f8}td.suppressed{background:#edf2f7;color:#4a5568;text-align:center;font-weight:600}"
            "td.rounded sup,td.perturbed sup{color:#2b6cb0;font-size:.7em;margin-left:1px}"
            "h1{border-bottom:3px solid #2b6cb0}ul.legend{line-height:1.6}</style></head><body>"
            f"<h1>{html.escape(title)}</h1><p>{html.escape(table.describe())}</p><p>Cells: {counts}.</p>"
            f"{legend}{note}{grid}{iv}</body></html>")
