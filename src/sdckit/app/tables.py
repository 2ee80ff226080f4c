"""The tables page: build a table from the open microdata (or a loaded cell list), apply the
sensitivity rules, protect it by suppression, rounding or the cell key method, and lay out the
pattern, the audit intervals or the perturbation as a grid. Everything is done by :mod:`sdckit.tables`; this module only
arranges the result for the browser."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from ..result import jsonable

METHODS = ("optimal", "modular", "heuristic", "rounding", "ckm")


def build_table(frame: pd.DataFrame, dims: list[str], *, response: str | None = None,
                cells: bool = False, value: str | None = None):
    from ..tables.table import Table

    if not dims or len(dims) > 2:
        raise InputError("a table on this page has 1 or 2 dimensions; pick them in the form.")
    if cells:
        if not value:
            raise InputError("a loaded cell list needs the name of its value column")
        f = frame.copy()
        for d in dims:
            f[d] = f[d].astype(str)
        return Table.from_cells(f, dims, value)
    return Table.from_microdata(frame, dims, response=response or None)


def check_table_request(rules: list[dict], method: str) -> None:
    """The checks :func:`protect_table` makes before any solving, for an answer at once (the
    solving itself runs as a job in the workbench)."""
    from ..tables.rules import rule_from_dict

    if method == "ckm":
        return
    if method not in METHODS:
        raise InputError(f"protection method must be one of {', '.join(METHODS)}; got {method!r}")
    parsed = [rule_from_dict(r) for r in rules]
    if method != "rounding" and not parsed:
        raise InputError("suppression needs at least one sensitivity rule (e.g. threshold n = 3)")


def protect_table(table, rules: list[dict], method: str, options: dict, *, seed: int | None = None,
                  frame: pd.DataFrame | None = None, ptable_file: str | None = None) -> dict:
    """Apply the rules and the protection method; return the grid, the summary and the audit.

    ``method="ckm"`` (the cell key method) needs the microdata ``frame`` the table was built
    from, and a p-table: ``ptable_file`` (tau-Argus format) or ``options`` ``D``, ``V``, ``js``.
    """
    if method == "ckm":
        return protect_ckm(table, frame, options, seed=seed, ptable_file=ptable_file)
    from ..tables.modular import ModularSuppression
    from ..tables.rounding import ControlledRounding
    from ..tables.rules import primary_cells, rule_from_dict
    from ..tables.suppression import HeuristicSuppression, OptimalSuppression

    if method not in METHODS:
        raise InputError(f"protection method must be one of {', '.join(METHODS)}; got {method!r}")
    time_limit = float(options.get("time_limit", 30))
    primary = None
    parsed = [rule_from_dict(r) for r in rules]
    if parsed:
        primary = primary_cells(table, parsed)
    status = np.array([""] * table.n_cells, dtype=object)
    shown = np.asarray(table.value, dtype=float).copy()
    audit_rows: list[dict] = []
    summary: dict[str, Any] = {"method": method, "n_cells": table.n_cells}
    guarantees: list[dict] = []
    if method == "rounding":
        res = ControlledRounding(base=int(options.get("base", 3)), method=options.get("rounding", "optimal"),
                                 time_limit=time_limit).apply(table, rng=seed)
        shown = np.asarray(res.rounded, dtype=float)
        status[:] = "rounded"
        if res.intervals is not None:
            aud = res.intervals
            audit_rows = _audit_rows(table, aud)
        summary.update({"base": res.base, "status": res.status})
        guarantees = [g.to_dict() for g in res.guarantees]
    else:
        if primary is None:
            raise InputError("suppression needs at least one sensitivity rule (e.g. threshold n = 3)")
        cls = {"optimal": OptimalSuppression, "modular": ModularSuppression,
               "heuristic": HeuristicSuppression}[method]
        res = cls(cost=options.get("cost", "value"), time_limit=time_limit).apply(table, primary)
        status[res.secondary] = "secondary"
        status[primary.sensitive] = "primary"
        audit_rows = _audit_rows(table, res.audit)
        summary.update({"n_primary": res.n_primary, "n_secondary": res.n_secondary,
                        "cost": res.cost, "status": res.status, "proven_optimal": res.proven_optimal,
                        "audit_ok": res.audit.ok})
        guarantees = [g.to_dict() for g in res.guarantees]
    if primary is not None:
        summary["n_sensitive"] = primary.n_primary
    return jsonable({"grid": _grid(table, shown, status), "summary": summary, "audit": audit_rows,
                     "guarantees": guarantees, "dims": list(table.dims), "kind": table.kind})


def protect_ckm(table, frame: pd.DataFrame | None, options: dict, *, seed: int | None = None,
                ptable_file: str | None = None) -> dict:
    """The cell key method on ``table`` (see :mod:`sdckit.tables.ckm`).

    Record keys come from ``options["key"]`` (default ``Key``) when the microdata have that
    column, otherwise they are drawn from ``seed`` (the session's run seed, kept internal).
    Every cell, totals included, is perturbed from its own cell key; the grid marks the cells
    whose value changed (this page is the steward's: the public table marks every non-empty
    cell, see :func:`sdckit.tables.ckm.run.ckm_public_cells`).
    """
    from ..tables.ckm import FlexParams, add_record_keys, ckm_frequency, ckm_magnitude

    if frame is None:
        raise InputError("the cell key method needs microdata with record keys: build the table from the open "
                         "microdata, not from a cell list")
    key = str(options.get("key") or "Key")
    drawn = key not in frame.columns
    if drawn:
        if seed is None:
            raise InputError(f"the microdata have no record key column {key!r} and the session has no seed to draw "
                             "keys from; name the key column")
        frame = add_record_keys(frame, key, rng=seed)
    if ptable_file:
        pt: Any = ptable_file
    else:
        try:
            pt = {"D": int(options.get("D", 5)), "V": float(options.get("V", 3.0))}
            if table.kind == "frequency":
                pt["js"] = int(options.get("js", 0))
        except (TypeError, ValueError):
            raise InputError("p-table parameters D, V and js must be numbers (e.g. D = 5, V = 3, js = 2)") from None
    dims = list(table.dims)
    if table.kind == "frequency":
        res = ckm_frequency(frame, dims, key=key, ptable=pt, table=table)
    else:
        res = ckm_magnitude(frame, dims, table.response, key=key, ptable=pt, flex=FlexParams())
    t = res.table
    changed = np.abs(res.perturbation) > 1e-9
    status = np.where(changed, "perturbed", "").astype(object)
    shown = np.rint(res.perturbed) if res.kind == "frequency" else np.round(res.perturbed, 6)
    a = res.additivity()
    summary: dict[str, Any] = {"method": "ckm", "n_cells": res.n_cells, "n_perturbed": res.n_perturbed,
                               "max_abs_perturbation": res.max_abs_perturbation,
                               "ptable": res.ptable.describe(),
                               "additivity_relations": a["n_relations"], "additivity_broken": a["n_broken"],
                               "additivity_max_discrepancy": a["max_abs_discrepancy"],
                               "record_keys": f"drawn from the session seed (column {key} absent)" if drawn
                               else f"column {key}"}
    return jsonable({"grid": _grid(t, shown, status, original=np.asarray(t.value, dtype=float)),
                     "summary": summary, "audit": [], "guarantees": [], "dims": dims, "kind": t.kind,
                     "additivity": a, "describe": res.describe()})


def _audit_rows(table, aud) -> list[dict]:
    out = []
    for k, cell in enumerate(aud.cells):
        out.append({"cell": int(cell), "codes": " / ".join(table.cell_codes(int(cell))),
                    "lower": float(aud.lower[k]), "upper": float(aud.upper[k]),
                    "protected": bool(aud.protected[k])})
    return out


def _grid(table, shown: np.ndarray, status: np.ndarray, original: np.ndarray | None = None) -> dict:
    """Rows x columns of cells (a 1-D table is one column); ``original`` values when shown ones differ."""
    hs = table.hierarchies
    if len(hs) == 1:
        rows = list(hs[0].codes)
        cols = [table.response or "value"]
        idx = np.arange(len(rows)).reshape(-1, 1)
    else:
        rows, cols = list(hs[0].codes), list(hs[1].codes)
        idx = np.arange(table.n_cells).reshape(len(rows), len(cols))
    cells = [[{"cell": int(i), "value": float(shown[i]), "freq": int(table.freq[i]),
               "status": str(status[i])} | ({} if original is None else {"original": float(original[i])})
              for i in r] for r in idx]
    return {"rows": [str(r) for r in rows], "cols": [str(c) for c in cols], "cells": cells}
