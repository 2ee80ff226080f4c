"""The one place the workbench turns declarations and results into words.

A parameter declared without a ``label`` gets one derived from its one-line help (the text up to
its first clause break, first letter capitalised): :func:`param_label` is the only place this
happens. Gate outcomes become sentences here (:func:`measured_sentence`), from the report's own
wording (:func:`sdckit.report.narrative.gate_measured`) with every share shown as a percentage.
"""

from __future__ import annotations

import re
from typing import Any

from ..params import Param

#: units whose values are shares of 1: shown and typed as percentages
SHARE_UNITS = ("share", "share of records", "share of n", "proportion")
_BREAK = re.compile(r"\s*(?:;|: | \(|\s-\s|, default|, e\.g\.)")


def param_label(p: Param) -> str:
    """The label a form shows for ``p``: its declared ``label``, else its help up to the first
    clause break, else its name in words (never the bare name when a help exists). A declared
    label that only repeats the name ("time limit" for ``time_limit``) counts as missing."""
    bare = {p.name.lower(), p.name.replace("_", " ").lower()}
    if p.label and (p.label.lower() not in bare or not p.help):
        return p.label
    help_text = p.help or ""
    head, sep, tail = help_text.partition(": ")
    if sep and head.split()[0].lower() in ("with", "for", "in", "when", "if") and tail:
        # "with breaks: intervals ..." -> "intervals ..."
        help_text = tail
    text = _BREAK.split(help_text, maxsplit=1)[0].strip().rstrip(".,")
    text = re.sub(r"\s+(or|and|of|to|the|a|with)$", "", text)
    if len(text) > 60:
        text = text[:60].rsplit(" ", 1)[0]
    if not text:
        return p.display_label
    return text[0].upper() + text[1:]


def shown_symbol(label: str, symbol: str | None) -> str | None:
    """The paper's symbol to show beside ``label``, or None where it would repeat the label
    ("k" beside "k-anonymity" would read "kk")."""
    if not symbol:
        return None
    words = [w.replace("_", "") for w in re.split(r"[^A-Za-z0-9_]+", label.lower())]
    bare = symbol.lower().replace("_", "").replace("^", "")
    if bare in words or symbol.lower() == label.lower():
        return None
    return symbol


def is_share(unit: str | None) -> bool:
    return bool(unit) and unit.strip().lower() in SHARE_UNITS


def form_fields(params: list[Param]) -> dict[str, dict]:
    """Per parameter: the label, the symbol to show (or None) and whether it is typed as a %."""
    out = {}
    for p in params:
        label = param_label(p)
        out[p.name] = {"label": label, "symbol": shown_symbol(label, p.symbol),
                       "percent": is_share(p.unit) and p.kind == "float",
                       "unit": "%" if is_share(p.unit) and p.kind == "float" else p.unit}
    return out


def number(v: Any) -> str:
    """A number in words: whole numbers with separators, others to 4 significant digits."""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        if v != v:
            return "—"
        if v.is_integer() and abs(v) < 1e15:
            return f"{int(v):,}"
        return f"{v:.4g}"
    return str(v)


def percent(v: float) -> str:
    return f"{100 * float(v):.2f}%"


def threshold_text(p: Param | None, value: Any) -> str:
    """A threshold with its unit ("3 records", "1.00%")."""
    if p is not None and is_share(p.unit) and isinstance(value, (int, float)) and not isinstance(value, bool):
        return percent(value)
    if isinstance(value, dict):
        return "; ".join(f"{k.replace('_', ' ')} {threshold_text(None, v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value)) or "none"
    text = number(value) if isinstance(value, (int, float)) else str(value)
    unit = p.unit if p is not None else None
    return f"{text} {unit}" if unit and unit not in ("ratio", "probability", "AUC") else text


def measured_sentence(name: str, value: Any) -> str:
    """A gate outcome's measured value as a sentence (never JSON), shares as percentages: the
    sentence the reports use (:func:`sdckit.report.fragments.measured_sentence`)."""
    from ..report.fragments import measured_sentence as report_sentence

    if value is None:
        return "not applicable"
    return report_sentence(name, value).replace("{", "(").replace("}", ")")
