"""Gate checks for direct identifiers and linkage on every released column.

* ``allow_identifiers`` (a list of column names, default empty) — runs on EVERY release: a
  released column that is nearly unique per record, or whose name says it is an identifier,
  fails the gate unless it was removed, masked, or is listed here.
* ``max_linkage_all_columns`` (a share in [0, 1]) — the expected share of records an intruder
  who knows every released column re-identifies by exact matching must not exceed it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..microdata import Microdata
from ..params import param
from ..registry import GateCheck, GateOutcome, register_gate_check
from ..result import StepResult
from .identifiers import identifier_check, linkage_all_columns


@register_gate_check("allow_identifiers", risk=False, description=(
    "runs on every release: no released column may be a direct identifier (nearly unique per "
    "record, or named like one: id, name, address, phone, email, postcode, date of birth) "
    "unless removed, masked or listed here"))
@dataclass(frozen=True)
class AllowIdentifiers(GateCheck):
    """No released column is a direct identifier unless removed, masked or listed here.

    Not a risk threshold: it stops direct identifiers, but says nothing of the risk of the
    key variables, so a release still needs a risk threshold (or ``[gate] none``).
    """

    columns: tuple[str, ...] = param((), kind="columns", label="identifier-like columns accepted",
                                     help="released columns the steward accepts although they "
                                          "look like identifiers")

    measured_labels = {"failing": ("identifier-like columns released", None),
                       "flagged": ("identifier-like columns found", None)}

    def check(self, original: Microdata, released: Microdata,
              results: Sequence[StepResult]) -> GateOutcome:
        return check_identifiers(original, released, results, self.columns)


def check_identifiers(original: Microdata, released: Microdata, results: Sequence[StepResult],
                      threshold: tuple[str, ...]) -> GateOutcome:
    """Direct identifiers in the release (see :func:`sdckit.risk.identifiers.identifier_check`)."""
    flagged = identifier_check(original, released, allow=threshold)
    # a declared household id or weight is expected to look like an identifier (nearly unique
    # per record, or named like one): accepted, and its release stated (sdcMicro's hhId and
    # weightVar are released unless removed)
    household = original.household or released.household
    declared = {c: role for role, c in (("household", household), ("weight", original.weight or released.weight))
                if c is not None}
    for f in flagged:
        if f["column"] in declared:
            f["allowed"], f["role"] = True, declared[f["column"]]
    failing = [f for f in flagged if not f["allowed"] and not f["masked"]]
    if failing:
        first = failing[0]
        more = f" (and {len(failing) - 1} more: {', '.join(f['column'] for f in failing[1:])})" if len(failing) > 1 else ""
        detail = (f"column {first['column']!r} looks like a direct identifier: {first['reason']}{more}; "
                  "remove it (a remove step), mask it, or list it in [gate] allow_identifiers")
    else:
        accepted = [f["column"] for f in flagged]
        detail = ("no released column looks like a direct identifier" if not accepted else
                  f"identifier-like columns accepted (allowed or masked): {', '.join(accepted)}")
    for c, role in declared.items():
        if c in released.columns and any(f["column"] == c for f in flagged):
            what = "household id" if role == "household" else "weight"
            detail += (f"; the {what} {c!r} is released (declared {role} role; remove it with a remove "
                       "step to keep it back)")
    if household is not None and household in released.columns and household not in {f["column"] for f in flagged}:
        detail += f"; the household id {household!r} is released (declared household role)"
    return GateOutcome("allow_identifiers", list(threshold),
                       {"flagged": flagged, "failing": [f["column"] for f in failing]},
                       not failing, detail)


@register_gate_check("max_linkage_all_columns", description=(
    "expected share of records re-identified by exact matching on every released column at "
    "most the threshold"))
@dataclass(frozen=True)
class MaxLinkageAllColumns(GateCheck):
    """Exact-match linkage on every released column (an intruder who knows them all)."""

    share: float = param(kind="float", low=0.0, high=1.0, unit="share of records",
                         label="largest share re-identified on all columns",
                         help="expected share of records an intruder who knows every released "
                              "column re-identifies by exact matching")

    measured_labels = {"correct_link_share": ("share re-identified by exact matching", "share"),
                       "expected_correct_links": ("expected correct links", "records"),
                       "sample_unique_share": ("share unique on all columns", "share"),
                       "sample_uniques": ("records unique on all columns", "records"),
                       "n_records": ("records", "records"), "columns": ("columns known to the intruder", None)}

    def check(self, original: Microdata, released: Microdata,
              results: Sequence[StepResult]) -> GateOutcome:
        return check_linkage_all_columns(original, released, results, self.share)


def check_linkage_all_columns(original: Microdata, released: Microdata,
                              results: Sequence[StepResult], threshold: float) -> GateOutcome:
    """Exact-match linkage on every released column (an intruder who knows them all)."""
    from ..registry import published_recodes

    lk = linkage_all_columns(original, released, recodes=published_recodes(results))
    share = lk["correct_link_share"]
    ok = share <= threshold
    detail = (f"an intruder knowing all {len(lk['columns'])} released columns re-identifies "
              f"{share:.2%} of records by exact matching ({lk['expected_correct_links']:.1f} of "
              f"{lk['n_records']}) {'<=' if ok else '>'} {threshold:.2%}")
    if not ok:
        detail += "; remove or coarsen the columns that add most to uniqueness (see the report's scan)"
    return GateOutcome("max_linkage_all_columns", threshold, lk, ok, detail)
