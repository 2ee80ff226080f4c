"""The synthesis panel of a ``synthesise`` step card: its utility and disclosure figures as
sentences, small tables and a chart of the one-way utility per variable.

The figures are those the step measured on its synthetic file with :mod:`sdckit.synth`'s public
functions (:func:`~sdckit.synth.propensity_utility` for pMSE and S_pMSE,
:func:`~sdckit.synth.table_utility` for each table, :func:`~sdckit.synth.disclosure_measures` for
repU, DiSCO and TCAP per target); the panel adds the remaining ``utility.tab`` measures of each
table (VW, FT, JSD, SPECKS) with :func:`~sdckit.synth.table_utility` on the same pair of files.
Every share is a percentage with its "%"; no figure is shown as JSON.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from ..microdata import Microdata

#: synthpop's words for the propensity models
_MODEL = {"cart": "a classification tree", "logit": "a logistic regression"}


def _num(v: Any) -> float | None:
    """A finite float, or None."""
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(x) or math.isinf(x) else x


def _pct(v: Any) -> str:
    x = _num(v)
    return "—" if x is None else f"{x:.2f}%"


def _words(items) -> str:
    items = [str(x) for x in items]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _categorical(before: Microdata, params: dict, variables) -> list[str]:
    """Numeric columns the step treated as categories: the key variables and those listed."""
    listed = set(params.get("categorical") or ()) | set(before.key_vars)
    return [c for c in variables if c in listed and pd.api.types.is_numeric_dtype(before.frame[c])]


def utility_rows(result: Any, before: Microdata, after: Microdata) -> list[dict]:
    """One row per compared table: its variables, S_pMSE as the step measured it and the other
    ``utility.tab`` measures of the same table (:func:`sdckit.synth.table_utility`)."""
    from ..synth import table_utility

    params = dict(getattr(result, "params", {}) or {})
    cont_na = {k: list(v) for k, v in (params.get("missing_codes") or {}).items()}
    rows = []
    for t in getattr(result, "tables", ()):
        variables = list(t["variables"])
        row = {"table": " × ".join(variables), "variables": variables, "one_way": len(variables) == 1,
               "S_pMSE": _num(t["S_pMSE"]), "df": int(t["df"])}
        try:
            tu = table_utility(before.frame, after.frame, variables, cont_na=cont_na,
                               categorical=_categorical(before, params, variables))
            row.update({k: _num(tu.measures.get(k)) for k in ("VW", "FT", "JSD", "SPECKS")})
        except Exception:  # a table the measures cannot be formed for: the step's figure alone
            pass
        rows.append(row)
    return rows


def synthesis_panel(result: Any, before: Microdata, after: Microdata) -> dict | None:
    """The panel of a synthesis step's result (None for any other step).

    Returns
    -------
    dict
        ``sentences`` (utility, tables, disclosure, the caveat), ``tables`` (rows of
        :func:`utility_rows`), ``chart`` (one-way S_pMSE per variable), ``disclosure`` (one row
        per target, shares as text with "%"), ``keys``.
    """
    if getattr(result, "method", None) != "synthesise" or not hasattr(result, "disclosure"):
        return None
    seq = list(getattr(result, "methods", {}) or {})
    summary = dict(getattr(result, "summary", {}) or {})
    identical = summary.get("share_identical_to_an_original_record")
    sentences = [
        f"The {len(seq)} synthesised variable{'s' if len(seq) != 1 else ''} ({_words(seq) if seq else 'none'}) "
        f"were drawn one at a time from models fitted on the original records; the file has "
        f"{after.n_records:,} records and none of them is a respondent's record, although by chance "
        f"{'some' if identical else 'none'} may equal one"
        + (f" ({100 * float(identical):.2f}% here)." if identical is not None else ".")]
    u = dict(getattr(result, "utility", {}) or {})
    if u:
        sentences.append(
            f"Utility: {_MODEL.get(u.get('method'), 'a propensity model')} told the synthetic records from the "
            f"original ones with a mean squared propensity error pMSE of {u['pMSE']:.3g}; standardised by its "
            f"expected value for two samples of one population, S_pMSE is {u['S_pMSE']:.3g} (about 1: hard to "
            "tell apart; much larger: easy).")
    else:
        sentences.append("Utility: no propensity model was fitted (the step's utility model is set to none).")
    rows = utility_rows(result, before, after)
    one_way = [r for r in rows if r["one_way"] and r["S_pMSE"] is not None]
    if one_way:
        worst = max(one_way, key=lambda r: r["S_pMSE"])
        sentences.append(
            f"Tables: the one-way table of each variable compares its counts in the two files (S_pMSE about 1 "
            f"for a good match); the largest is {worst['table']} at {worst['S_pMSE']:.3g}.")
    disclosure = []
    for d in getattr(result, "disclosure", ()):
        i, a, c = d["identity"], d["attribute"], d["cap"]
        disclosure.append({"target": d["target"], "unique_in_original": _pct(i.get("UiO")),
                           "replicated_uniques": _pct(i.get("repU")), "certain_in_original": _pct(a.get("Dorig")),
                           "disclosed_correctly": _pct(a.get("DiSCO")), "tcap": _pct(c.get("TCAP"))})
    keys = list(getattr(result, "disclosure", ())[0]["keys"]) if disclosure else []
    if disclosure:
        top = max(getattr(result, "disclosure", ()), key=lambda d: d["attribute"]["DiSCO"])
        sentences.append(
            f"Disclosure: an intruder who knows {_words(keys)} of a person looks them up in the synthetic file. "
            f"{_pct(top['identity']['repU'])} of the original records are unique on these keys in both files "
            f"(replicated uniques, repU); the file discloses {top['target']} correctly for "
            f"{_pct(top['attribute']['DiSCO'])} of the records (DiSCO) and for {_pct(top['cap']['TCAP'])} of those "
            "whose keys occur in it (TCAP).")
    else:
        sentences.append("Disclosure: not measured (set key variables on the Roles page, and a target other "
                         "than the keys).")
    chart = [{"variable": r["table"], "S_pMSE": r["S_pMSE"]} for r in one_way]
    return {"sentences": sentences, "tables": rows, "chart": chart, "disclosure": disclosure, "keys": keys,
            "caveat": "The synthetic file is not the original: analyses of it reproduce only the "
                      "relationships the models captured."}


__all__ = ["synthesis_panel", "utility_rows"]
