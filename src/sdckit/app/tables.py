"""The tables page: build a table from the open microdata (or a loaded cell list), apply the
sensitivity rules, protect it by suppression or rounding, and lay out the pattern and the
audit intervals as a grid. Everything is done by :mod:`sdckit.tables`; this module only
arranges the result for the browser."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from ..result import jsonable

METHODS = ("optimal", "modular", "heuristic", "rounding")


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


def protect_table(table, rules: list[dict], method: str, options: dict, *, seed: int | None = None) -> dict:
    """Apply the rules and the protection method; return the grid, the summary and the audit."""
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


def _audit_rows(table, aud) -> list[dict]:
    out = []
    for k, cell in enumerate(aud.cells):
        out.append({"cell": int(cell), "codes": " / ".join(table.cell_codes(int(cell))),
                    "lower": float(aud.lower[k]), "upper": float(aud.upper[k]),
                    "protected": bool(aud.protected[k])})
    return out


def _grid(table, shown: np.ndarray, status: np.ndarray) -> dict:
    """Rows x columns of cells (a 1-D table is one column)."""
    hs = table.hierarchies
    if len(hs) == 1:
        rows = list(hs[0].codes)
        cols = [table.response or "value"]
        idx = np.arange(len(rows)).reshape(-1, 1)
    else:
        rows, cols = list(hs[0].codes), list(hs[1].codes)
        idx = np.arange(table.n_cells).reshape(len(rows), len(cols))
    cells = [[{"cell": int(i), "value": float(shown[i]), "freq": int(table.freq[i]),
               "status": str(status[i])} for i in r] for r in idx]
    return {"rows": [str(r) for r in rows], "cols": [str(c) for c in cols], "cells": cells}
