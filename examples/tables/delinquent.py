"""The seed's delinquent-children table: base-3 controlled rounding, threshold-rule
suppression with its audit intervals, and the margins-only release.

Run from the project root: ``python examples/tables/delinquent.py``. Prints the tables and
ends with one JSON line (n_cells, n_primary, n_secondary, cost, audit_ok, seconds, ...).
"""

from __future__ import annotations

import json
import time

import numpy as np
import pandas as pd

from sdckit.tables.audit import audit
from sdckit.tables.margins import release_margins
from sdckit.tables.rounding import ControlledRounding
from sdckit.tables.rules import ThresholdRule, primary_cells
from sdckit.tables.suppression import OptimalSuppression
from sdckit.tables.table import Hierarchy, Table

ROWS = ["Alpha", "Beta", "Gamma", "Delta"]
COLS = ["Low", "Medium", "High", "VeryHigh"]
# OMB Statistical Policy Working Paper 22, as shown in the seed
INNER = np.array([[15, 1, 3, 1], [20, 10, 10, 15], [3, 10, 10, 2], [12, 14, 7, 2]])
# the seed's secondaries (marked s): Alpha/High, Gamma/High, Delta/Medium
SEED_SECONDARY = [("Alpha", "High"), ("Gamma", "High"), ("Delta", "Medium")]


def grid(t: Table, values) -> str:
    v = np.asarray(values, dtype=object).reshape(t.shape)
    h0, h1 = t.hierarchies
    lines = ["| county | " + " | ".join(h1.codes) + " |", "|---" * (len(h1) + 1) + "|"]
    lines += [f"| {r} | " + " | ".join(str(x) for x in v[i]) + " |" for i, r in enumerate(h0.codes)]
    return "\n".join(lines)


def main() -> None:
    t0 = time.perf_counter()
    df = pd.DataFrame([(r, c, INNER[i, j]) for i, r in enumerate(ROWS) for j, c in enumerate(COLS)],
                      columns=["county", "education", "n"])
    t = Table.from_cells(df, ["county", "education"], "n",
                         hierarchies={"county": Hierarchy.flat(ROWS), "education": Hierarchy.flat(COLS)})
    print("original\n" + grid(t, t.value.astype(int)))

    rnd = ControlledRounding(base=3).apply(t)
    print("\nbase-3 controlled rounding (" + rnd.status + ")\n" + grid(t, rnd.rounded.astype(int)))
    print("sum |R - a| =", int(np.abs(rnd.rounded - t.value).sum()), "; checks:", rnd.checks)

    p = primary_cells(t, ThresholdRule(3))
    res = OptimalSuppression().apply(t, p)
    marks = np.where(p.sensitive, "p", np.where(res.secondary, "s", t.value.astype(int).astype(str)))
    print("\nthreshold rule n = 3, optimal suppression (cost = value)\n" + grid(t, marks))
    print(res.audit.describe())

    seed_sup = p.sensitive.copy()
    for c in SEED_SECONDARY:
        seed_sup[t.cell_index(*c)] = True
    seed_audit = audit(t, seed_sup, primary=p)
    print("\nthe seed's pattern (cost", int(t.value[seed_sup & ~p.sensitive].sum()), ")\n" + seed_audit.describe())

    mar = release_margins(t, primary=p)
    print("\nmargins only\n" + mar.audit.describe())

    print(json.dumps({"n_cells": t.n_cells, "n_primary": p.n_primary, "n_secondary": res.n_secondary,
                      "cost": res.cost, "audit_ok": bool(res.audit.ok and seed_audit.ok), "seconds":
                      round(time.perf_counter() - t0, 3), "seed_pattern_cost": float(t.value[seed_sup & ~p.sensitive].sum()),
                      "rounding_sum_abs_deviation": float(np.abs(rnd.rounded - t.value).sum()),
                      "proven_optimal": res.proven_optimal}))


if __name__ == "__main__":
    main()
