"""Words for the reports: every step, gate threshold and figure as sentences and tables.

The public report shows no raw JSON: values of any shape (numbers, lists, nested tables of
figures) are rendered by :func:`value_html` as text, lists and nested tables, and each known
step gets a one-sentence description of what it did (:func:`step_sentence`), e.g. "PRAM of
Marital Status: each category kept with probability at least 0.90; 683 records changed
(6.8%)".
"""

from __future__ import annotations

import html
import math
from typing import Any

import numpy as np

__all__ = ["fmt", "value_html", "step_sentence", "gate_measured", "kv_table", "GATE_WORDS",
           "verdict_words"]

#: plain-language names of the gate thresholds
GATE_WORDS = {
    "k_anonymity": "k-anonymity (smallest f_k)",
    "min_diagonal": "PRAM: smallest probability of keeping a category",
    "max_global_risk": "global re-identification risk (ER / n)",
    "max_individual_risk": "largest individual re-identification risk",
    "l_diversity": "distinct l-diversity of the sensitive variables",
    "max_dld": "distance-based record linkage (% re-identified)",
    "max_id": "interval disclosure (%)",
    "max_recognition_ratio": "PRAM spontaneous-recognition ratio",
    "allow_identifiers": "no direct identifiers released (columns accepted)",
    "max_linkage_all_columns": "share re-identified by exact matching on all columns",
    "max_singling_out": "singling-out attack: risk beyond control records (upper 95% bound)",
    "max_linkability": "linkability attack: risk beyond control records (upper 95% bound)",
    "max_inference": "inference attack: risk beyond control records (upper 95% bound)",
    "max_mia_auc": "membership inference: AUC (upper 95% bound)",
    "max_repU": "synthetic file: replicated uniques on the keys (repU, % of records)",
    "max_disco": "synthetic file: attribute disclosure (DiSCO, % of records)",
    "max_tcap": "synthetic file: targeted correct attribution probability (TCAP, %)",
}

#: the direction of each threshold: True when the measured value must be at most the threshold
GATE_UPPER = {"max_global_risk": True, "max_individual_risk": True, "max_dld": True, "max_id": True,
              "max_recognition_ratio": True, "max_linkage_all_columns": True,
              "max_singling_out": True, "max_linkability": True, "max_inference": True, "max_mia_auc": True,
              "max_repU": True, "max_disco": True, "max_tcap": True, "k_anonymity": False, "min_diagonal": False, "l_diversity": False}


def fmt(v: Any) -> str:
    """A scalar as text: integers with thousands separators, floats to 4 significant digits."""
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, (int, np.integer)):
        return f"{int(v):,}"
    if isinstance(v, (float, np.floating)):
        v = float(v)
        if math.isnan(v):
            return "—"
        if v != 0 and (abs(v) < 1e-3 or abs(v) >= 1e6):
            return f"{v:.3g}"
        return f"{v:.4g}"
    if v is None:
        return "—"
    if isinstance(v, (list, tuple)):
        return ", ".join(fmt(x) for x in v) if v else "none"
    if isinstance(v, dict):
        return "; ".join(f"{_words(k)} {fmt(x)}" for k, x in v.items())
    return str(v)


def _words(key: str) -> str:
    return str(key).replace("_", " ")


def value_html(v: Any, depth: int = 0) -> str:
    """Any value as HTML without JSON: dicts as nested tables, lists as comma lists."""
    if isinstance(v, np.ndarray):
        v = v.tolist()
    if isinstance(v, dict):
        if not v:
            return "—"
        if depth >= 3:
            return html.escape("; ".join(f"{_words(k)} {fmt(x) if not isinstance(x, (dict, list)) else '…'}"
                                         for k, x in v.items()))
        rows = "".join(f"<tr><th>{html.escape(_words(k))}</th><td>{_cell(k, x, depth + 1)}</td></tr>"
                       for k, x in v.items())
        return f"<table class='kv nested'>{rows}</table>"
    if isinstance(v, (list, tuple)):
        if not v:
            return "none"
        if all(not isinstance(x, (dict, list, tuple)) for x in v):
            return html.escape(", ".join(fmt(x) for x in v))
        return "<ul>" + "".join(f"<li>{value_html(x, depth + 1)}</li>" for x in v) + "</ul>"
    return html.escape(fmt(v))


def _cell(key: Any, v: Any, depth: int) -> str:
    """A figure in a table: a share (a key ending in "share") as a percentage, as every share
    of the reports is shown."""
    if (str(key).endswith("share") and isinstance(v, (float, np.floating))
            and not isinstance(v, bool) and not math.isnan(float(v))):
        return html.escape(f"{float(v):.2%}")
    return value_html(v, depth)


def kv_table(d: dict, css: str = "kv") -> str:
    """A two-column table of a dict (keys in words, values by :func:`value_html`)."""
    if not d:
        return ""
    rows = "".join(f"<tr><th>{html.escape(_words(k))}</th><td>{_cell(k, v, 0)}</td></tr>" for k, v in d.items())
    return f"<table class='{css}'>{rows}</table>"


def _pct(part: float, whole: float) -> str:
    return f"{part / whole:.1%}" if whole else "—"


def step_sentence(method: str, params: dict, summary: dict, n_records: int) -> str:
    """One sentence saying what a step did, in the steward's words (plain text)."""
    p, s = params, summary
    if method == "remove":
        return f"Removed the direct identifiers {', '.join(map(str, s.get('removed', p.get('variables', []))))}."
    if method == "recode":
        v = s.get("variable", p.get("variable"))
        groups = p.get("mapping")
        text = (f"Global recoding of {v}: {s.get('distinct_before', '?')} categories grouped into "
                f"{s.get('distinct_after', '?')}")
        if isinstance(groups, dict) and groups:
            text += " (" + "; ".join(f"{k} = {', '.join(map(str, g)) if isinstance(g, (list, tuple)) else g}"
                                     for k, g in groups.items()) + ")"
        return text + "; the grouping is published, so it hides detail without adding noise."
    if method == "pram":
        changed = s.get("changed", {}) or {}
        parts = []
        for v in p.get("variables", []):
            c = changed.get(v)
            m = (s.get("matrices") or {}).get(v, {})
            md = m.get("min_diagonal", p.get("min_diagonal"))
            kept = f"each category kept with probability at least {md:.2f}" if isinstance(md, (int, float)) else \
                "categories kept as the published matrix says"
            inv = "; expected frequencies kept (invariant matrix)" if m.get("invariant") else ""
            rec = f"; {c:,} records changed ({_pct(c, n_records)})" if isinstance(c, (int, np.integer)) else ""
            parts.append(f"PRAM of {v}: {kept}{rec}{inv}")
        return ". ".join(parts) + "." if parts else "PRAM."
    if method == "local_suppression":
        n_sup = s.get("suppressions", 0)
        per = s.get("suppressions_per_variable", {}) or {}
        where = ", ".join(f"{v} {c:,}" for v, c in per.items() if c)
        return (f"Local suppression to {s.get('k', p.get('k'))}-anonymity: {n_sup:,} key values set to missing in "
                f"{s.get('records_with_suppression', n_sup):,} records ({_pct(s.get('records_with_suppression', n_sup), n_records)})"
                + (f" — {where}" if where else "") + "; a missing value matches any value.")
    if method == "microaggregation":
        return (f"Microaggregation ({str(s.get('algorithm', p.get('algorithm', 'mdav'))).upper()}) of "
                f"{', '.join(map(str, s.get('variables', [])))}: {fmt(s.get('groups'))} groups of "
                f"{fmt(s.get('min_group'))} to {fmt(s.get('max_group'))} records, each value replaced by its "
                f"group's {p.get('aggregate', 'mean')}; information loss SSE/SST = {fmt(s.get('sse_sst'))}.")
    if method == "noise":
        return (f"{str(s.get('kind', p.get('kind', ''))).capitalize()} noise on "
                f"{', '.join(map(str, s.get('variables', [])))}: noise variance {fmt(s.get('level', p.get('level')))} "
                f"of each variable's variance; {_pct(s.get('values_changed_share', 0) * 100, 100)} of the values "
                "changed.")
    if method == "rank_swap":
        return (f"Rank swapping of {', '.join(map(str, s.get('variables', [])))}: values exchanged between records "
                f"at most {fmt(s.get('p_percent', p.get('p')))}% of the ranks apart; every marginal distribution "
                "is kept exactly.")
    if method == "record_swap":
        return (f"Record swapping of {', '.join(map(str, p.get('hierarchy', [])))}: "
                f"{fmt(s.get('households_swapped', s.get('swapped_households')))} households exchanged their "
                f"geography with similar households (target rate {fmt(p.get('swap_rate'))}).")
    if method == "neighbours":
        return (f"Neighbour resampling of {', '.join(map(str, s.get('variables', [])))}: "
                f"{fmt(s.get('records_resampled'))} records took values from a neighbour, "
                f"{fmt(s.get('records_suppressed'))} with no neighbour were suppressed.")
    name = method.replace("_", " ")
    figures = [f"{_words(k)} {fmt(v)}" for k, v in s.items() if isinstance(v, (int, float, np.integer, np.floating))
               and not isinstance(v, bool)][:4]
    settings = [f"{_words(k)} {fmt(v)}" for k, v in p.items() if isinstance(v, (int, float, str)) and not isinstance(v, bool)][:4]
    return (f"{name[0].upper() + name[1:]}" + (f" with {', '.join(settings)}" if settings else "")
            + (f": {', '.join(figures)}" if figures else "") + ".")


def gate_measured(name: str, value: Any) -> str:
    """The measured figure of a gate outcome, in words (plain text)."""
    if value is None:
        return "not applicable"
    from ..errors import SDCError
    from ..registry import gate_check_class

    try:   # the check's own declared words (registry.GateCheck.measured_sentence)
        return gate_check_class(str(name)).measured_sentence(value)
    except SDCError:
        pass
    if name == "k_anonymity" and isinstance(value, dict):
        return f"smallest f_k = {fmt(value.get('k_reached'))} ({fmt(value.get('violations'))} records below)"
    if name == "min_diagonal" and isinstance(value, dict):
        return f"smallest diagonal {value.get('smallest', float('nan')):.4f} ({value.get('matrix')})"
    if name == "max_global_risk" and isinstance(value, dict):
        return (f"global risk {fmt(value.get('global_risk'))} "
                f"({fmt(value.get('expected_reidentifications'))} expected re-identifications)")
    if name == "allow_identifiers" and isinstance(value, dict):
        failing = value.get("failing") or []
        flagged = value.get("flagged") or []
        if failing:
            return f"identifier-like columns released: {', '.join(map(str, failing))}"
        return ("no identifier-like column" if not flagged else
                f"{len(flagged)} identifier-like column(s), each removed, masked or accepted")
    if name == "max_linkage_all_columns" and isinstance(value, dict):
        return (f"{value.get('correct_link_share', float('nan')):.2%} re-identified "
                f"({fmt(value.get('expected_correct_links'))} of {fmt(value.get('n_records'))}) knowing all "
                f"{len(value.get('columns', []))} columns")
    if name == "max_individual_risk" and isinstance(value, dict):
        return f"largest individual risk {fmt(value.get('max_individual_risk'))}"
    if isinstance(value, dict):
        return "; ".join(f"{_words(k)} {gate_measured(k, v) if isinstance(v, dict) else fmt(v)}"
                         for k, v in value.items())
    return fmt(value)


def verdict_words(run: Any) -> tuple[str, str]:
    """The verdict of a release run: its kind (``"passed"``, ``"failed"`` or ``"not checked"``)
    and its words. A release without a risk threshold on purpose is "NOT CHECKED: <the
    steward's reason>", never "Passed"; one whose gate has no risk threshold and no reason
    (an older run object) is "NOT CHECKED" too."""
    gate = list(getattr(run, "gate", ()) or ())
    if not all(bool(getattr(o, "passed", o.get("passed") if isinstance(o, dict) else False)) for o in gate):
        return "failed", "FAILED: the release did not meet its gate"
    reason = getattr(run, "not_checked", None)
    if reason is not None:
        return "not checked", f"NOT CHECKED: {reason}"
    names = [getattr(o, "name", o.get("name") if isinstance(o, dict) else None) for o in gate]
    if not any(_is_risk_threshold(n) for n in names):
        return "not checked", "NOT CHECKED: no risk threshold was set"
    return "passed", "Passed: the release met every gate threshold"


def _is_risk_threshold(name: Any) -> bool:
    from ..errors import SDCError
    from ..registry import gate_check_class

    try:
        return bool(gate_check_class(str(name)).counts_as_risk)
    except SDCError:
        return False


def gate_headline(name: str, value: Any) -> float | None:
    """The single number a threshold is compared with (for charts and the certificate)."""
    keys = {"k_anonymity": "k_reached", "min_diagonal": "smallest", "max_global_risk": "global_risk",
            "max_individual_risk": "max_individual_risk", "max_dld": "dld", "max_id": "id",
            "max_linkage_all_columns": "correct_link_share",
            # attacks: the upper end of the interval is what the threshold is compared with
            "max_singling_out": "ci_high", "max_linkability": "ci_high", "max_inference": "ci_high",
            "max_mia_auc": "auc_ci_high", "max_repU": "repU", "max_disco": "DiSCO", "max_tcap": "TCAP"}
    if isinstance(value, dict) and keys.get(name) in value:
        v = value[keys[name]]
        return float(v) if isinstance(v, (int, float)) else None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None
