"""The checker's side: a results folder's outputs, the checker's decisions, the researcher's
exception requests, and a batch re-check of a results file against the environment's rules.

Decisions live in each record's ``sdckit.decision`` field of ``results.json``
(``{"verdict": "approved" | "rejected", "reason", "checker", "time"}``); ACRO's own fields are
left as ACRO defines them, so ACRO's loader and SACRO-Viewer still read the file. The signed
release of the approved outputs is :func:`sdckit.report.outputs_release.release_outputs`.

The batch re-check (:func:`check_results`) works from the published files alone, as an intruder
would: a frequency table's cells are re-checked against the threshold and zero rules, and a
table with margins is audited by linear programming (a blank or failing cell that its row or
column gives back is reported with the intruder's interval); a model's residual degrees of
freedom are re-checked against the rules. Anything else keeps the status its session recorded,
said so.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from .audit import audit_published
from .rules import OutputRules
from .session import RESULTS_FILE

__all__ = ["Review", "check_results", "read_results", "DECISIONS"]

DECISIONS = ("approved", "rejected")
MAX_RESULTS_BYTES = 64 << 20


def read_results(folder: str | os.PathLike) -> tuple[Path, dict]:
    """``(path, document)`` of a results folder's ``results.json`` (or the file itself), checked
    for ACRO's layout (``version`` and a ``results`` object of records)."""
    p = Path(folder)
    path = p / RESULTS_FILE if p.is_dir() else p
    if not path.is_file():
        raise InputError(f"{path.name}: no results file here; give the folder written by Session.finalise "
                         "(or ACRO's finalise) or its results.json")
    if path.stat().st_size > MAX_RESULTS_BYTES:
        raise InputError(f"{path.name}: {path.stat().st_size:,} bytes, more than a results file holds")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"{path.name}: not a JSON results file ({' '.join(str(exc).split())[:120]})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), dict):
        raise InputError(f"{path.name}: has no 'results' object; it is not a results file in ACRO's layout")
    for uid, rec in doc["results"].items():
        if not isinstance(rec, dict) or not isinstance(rec.get("files", []), list):
            raise InputError(f"{path.name}: output {uid!r} is not a record with a list of files")
        for f in rec.get("files", []):
            name = f.get("name") if isinstance(f, dict) else None
            if not isinstance(name, str) or Path(name).name != name or name in ("", ".", ".."):
                raise InputError(f"{path.name}: output {uid!r} names the file {name!r}, not a plain file name "
                                 "inside the results folder")
    return path, doc


class Review:
    """A checker's review of one results folder.

    Examples
    --------
    >>> review = Review("outputs")                                        # doctest: +SKIP
    >>> review.approve("output_0", "counts of 10 or more", checker="A. Checker")   # doctest: +SKIP
    >>> review.save()                                                     # doctest: +SKIP
    """

    def __init__(self, folder: str | os.PathLike) -> None:
        self.path, self.doc = read_results(folder)
        self.folder = self.path.parent

    @property
    def results(self) -> dict:
        return self.doc["results"]

    def _rec(self, output_id: str) -> dict:
        if output_id not in self.results:
            raise InputError(f"{output_id!r}: no such output in {self.path.name}; the outputs are "
                             f"{', '.join(list(self.results)[:20])}")
        return self.results[output_id]

    @staticmethod
    def _text(value: Any, what: str, output_id: str) -> str:
        if not isinstance(value, str) or not value.strip():
            raise InputError(f"{output_id}: the {what} is missing; a decision names the checker and gives a reason")
        return " ".join(value.split())

    def decision(self, output_id: str) -> dict | None:
        return (self._rec(output_id).get("sdckit") or {}).get("decision")

    def _decide(self, output_id: str, verdict: str, reason: str, checker: str) -> dict:
        rec = self._rec(output_id)
        reason = self._text(reason, "reason", output_id)
        checker = self._text(checker, "checker's name", output_id)
        if verdict == "approved" and rec.get("status") == "fail" and not str(rec.get("exception", "")).strip():
            raise InputError(f"{output_id}: fails its checks and the researcher asked for no exception; reject it, "
                             "or ask the researcher for an exception request first")
        dec = {"verdict": verdict, "reason": reason, "checker": checker,
               "time": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")}
        rec.setdefault("sdckit", {})["decision"] = dec
        return dec

    def approve(self, output_id: str, reason: str, checker: str) -> dict:
        """Approve an output for release (a failing one only with the researcher's exception request)."""
        return self._decide(output_id, "approved", reason, checker)

    def reject(self, output_id: str, reason: str, checker: str) -> dict:
        """Reject an output, with the reason the researcher will read."""
        return self._decide(output_id, "rejected", reason, checker)

    def request_exception(self, output_id: str, reason: str) -> None:
        """The researcher's exception request (ACRO's ``exception`` field); clears an earlier rejection."""
        rec = self._rec(output_id)
        rec["exception"] = self._text(reason, "reason", output_id)
        sd = rec.setdefault("sdckit", {})
        if (sd.get("decision") or {}).get("verdict") == "rejected":
            sd["decision"] = None

    def undecided(self) -> list[str]:
        return [k for k in self.results if not self.decision(k)]

    def approved(self) -> list[str]:
        return [k for k in self.results if (self.decision(k) or {}).get("verdict") == "approved"]

    def save(self) -> Path:
        """Write ``results.json`` back (atomically)."""
        from ..io.atomic import atomic_write_text

        atomic_write_text(self.path, json.dumps(self.doc) + "\n")
        return self.path

    def queue(self) -> list[dict]:
        """The outputs for the checker's page: id, type, status, checks in words, exception, decision."""
        out = []
        for uid, rec in self.results.items():
            sd = rec.get("sdckit") or {}
            words = sd.get("words") or [line for line in str(rec.get("summary", "")).splitlines() if line.strip()]
            out.append({"id": uid, "type": rec.get("type"), "method": (rec.get("properties") or {}).get("method"),
                        "status": rec.get("status"), "words": words, "command": rec.get("command", ""),
                        "exception": rec.get("exception", ""), "decision": sd.get("decision"),
                        "files": [f["name"] for f in rec.get("files", [])]})
        return out


# --------------------------------------------------------------------------- batch re-check

def _frequency_grid(frame: pd.DataFrame, margins_name: str | None) -> tuple[np.ndarray, bool]:
    if all(pd.api.types.is_numeric_dtype(t) for t in frame.dtypes):  # as read_csv gives numbers: no per-column pass
        values = frame.to_numpy(dtype=float, na_value=np.nan)
    else:
        values = frame.apply(pd.to_numeric, errors="coerce").to_numpy(float)
    margins = (margins_name is not None and len(frame.index) > 1 and len(frame.columns) > 1
               and str(frame.index[-1]) == margins_name and str(frame.columns[-1]) == margins_name)
    return values, margins


def _recheck_table(folder: Path, uid: str, rec: dict, rules: OutputRules) -> dict:
    files = [f["name"] for f in rec.get("files", []) if str(f.get("name", "")).endswith(".csv")]
    fair = rec.get("fair") or {}
    frequency = fair.get("statbarn") == "Frequencies" and (rec.get("properties") or {}).get("method") in (
        "crosstab", "pivot_table")
    if not files or not frequency:
        return {"rechecked": False, "why": "not a frequency table: its checks need the microdata (status kept)"}
    frame = pd.read_csv(folder / files[0], index_col=0)
    values, margins = _frequency_grid(frame, "All")
    blank = np.isnan(values)
    small = (values < rules.threshold) & ~blank
    if not rules.zeros_are_disclosive:
        small &= values > 0
    zero = (values == 0) if rules.zeros_are_disclosive else np.zeros_like(small)
    checks = [{"name": "MinimumThresholdCheck", "status": "fail" if small.any() else "pass",
               "n_cells": int(small.sum())},
              {"name": "PresenceOfZeroCheck", "status": "fail" if zero.any() else "pass", "n_cells": int(zero.sum())}]
    recovered: list[dict] = []
    if margins and rules.audit:
        # the intruder's view: every blank or failing cell is unknown, the other published cells are equations
        suppressed = blank | small | zero
        intervals = audit_published(values, suppressed)
        exact = [(i, j, lo, hi) for i, j, lo, hi in intervals
                 if np.isfinite(lo) and np.isfinite(hi) and hi - lo < 1 - 1e-9]  # a count known exactly
        blank_exact = [(i, j, lo) for i, j, lo, _ in exact if blank[i, j]]
        if blank_exact and len(blank_exact) == int(blank.sum()) and all(lo == 0 for *_, lo in blank_exact):
            # every blank cell comes out as 0: the margins add up the published cells alone (recomputed
            # after suppression, as ACRO does) or every blank is a true zero; the file cannot tell which
            checks.append({"name": "MarginAuditCheck", "status": "review", "n_cells": len(blank_exact),
                           "note": "the margins equal the sums of the published cells: either they were recomputed "
                                   "after suppression (then they hide the blank cells) or every blank cell is a "
                                   "zero; a checker must confirm which"})
            exact = [e for e in exact if not blank[e[0], e[1]]]
        for i, j, lo, _hi in exact:
            cell = f"[{frame.index[i]}, {frame.columns[j]}]"
            recovered.append({"what": "suppressed cell", "cell": cell, "position": [uid, i, j],
                              "interval": [lo, lo], "exact": True,
                              "sentence": f"suppressed cell {cell} is recovered exactly ({lo:g}) from the "
                                          "published cells and margins"})
        if not any(c["name"] == "MarginAuditCheck" for c in checks) or recovered:
            checks = [c for c in checks if c["name"] != "MarginAuditCheck"] if recovered else checks
            checks.append({"name": "MarginAuditCheck", "status": "fail" if recovered else "pass",
                           "n_cells": len(recovered)})
    status = "fail" if any(c["status"] == "fail" for c in checks) else (
        "review" if any(c["status"] == "review" for c in checks) else "pass")
    return {"rechecked": True, "status": status, "checks": checks, "recovered": recovered}


def check_results(folder: str | os.PathLike, rules: OutputRules | None = None) -> dict:
    """Re-check a results file (sdckit's or ACRO's) against the environment's rules, from the
    published files alone (see the module docstring). Returns one JSON-ready document."""
    rules = rules or OutputRules()
    path, doc = read_results(folder)
    out = []
    for uid, rec in doc["results"].items():
        recorded = rec.get("status")
        item: dict[str, Any] = {"id": uid, "type": rec.get("type"), "recorded_status": recorded}
        if rec.get("type") == "table":
            try:
                item.update(_recheck_table(path.parent, uid, rec, rules))
            except (OSError, ValueError, pd.errors.ParserError) as exc:
                item.update({"rechecked": False, "why": f"its file cannot be read ({str(exc)[:100]})"})
        elif rec.get("type") == "regression":
            dof = (rec.get("properties") or {}).get("dof")
            if isinstance(dof, (int, float)):
                ok = dof >= rules.dof_threshold
                item.update({"rechecked": True, "status": "pass" if ok else "fail",
                             "checks": [{"name": "MinimumDoFCheck", "status": "pass" if ok else "fail", "value": dof}]})
            else:
                item.update({"rechecked": False, "why": "no degrees of freedom recorded"})
        else:
            item.update({"rechecked": False, "why": f"a {rec.get('type')} output needs a checker's review"})
        if not item.get("rechecked"):
            item["status"] = recorded if recorded in ("pass", "fail", "review") else "review"
        item["exception"] = rec.get("exception", "")
        item["decision"] = (rec.get("sdckit") or {}).get("decision")
        out.append(item)
    counts = {s: sum(1 for o in out if o["status"] == s) for s in ("pass", "review", "fail")}
    disagree = [o["id"] for o in out if o.get("rechecked") and o["status"] != o["recorded_status"]]
    return {"results": path.name, "tool": doc.get("tool"), "format_version": doc.get("version"),
            "rules": rules.to_dict(), "n_outputs": len(out), "counts": counts,
            "status_differs_from_recorded": disagree, "outputs": out}
