"""Small tables shared by the table tests."""

import numpy as np
import pandas as pd

from sdckit.tables.table import Hierarchy, Table

# Delinquent children by county and education (OMB Statistical Policy Working Paper 22, in seed 002)
SEED_ROWS = ["Alpha", "Beta", "Gamma", "Delta"]
SEED_COLS = ["Low", "Medium", "High", "VeryHigh"]
SEED_INNER = np.array([[15, 1, 3, 1], [20, 10, 10, 15], [3, 10, 10, 2], [12, 14, 7, 2]])


def table_2d(inner, rows=None, cols=None) -> Table:
    inner = np.asarray(inner)
    rows = rows or [f"r{i}" for i in range(inner.shape[0])]
    cols = cols or [f"c{j}" for j in range(inner.shape[1])]
    df = pd.DataFrame([(r, c, inner[i, j]) for i, r in enumerate(rows) for j, c in enumerate(cols)],
                      columns=["row", "col", "n"])
    return Table.from_cells(df, ["row", "col"], "n",
                            hierarchies={"row": Hierarchy.flat(rows), "col": Hierarchy.flat(cols)})


def seed_table() -> Table:
    return table_2d(SEED_INNER, SEED_ROWS, SEED_COLS)


def enumerate_intervals(inner, mask):
    """Brute force: integer interval of every suppressed inner cell of a 2-D table with margins.

    Enumerates every non-negative integer completion of the suppressed inner cells (each cell
    ranges up to the smaller of its row's and column's unpublished remainder) and keeps those
    that reproduce every row and column total. Independent of any LP. Returns {(i, j): (lo, hi)}.
    """
    inner = np.asarray(inner, dtype=np.int64)
    mask = np.asarray(mask, bool)
    idx = list(zip(*np.nonzero(mask)))
    row_rem = (inner * mask).sum(1)
    col_rem = (inner * mask).sum(0)
    ranges = [np.arange(min(row_rem[i], col_rem[j]) + 1) for i, j in idx]
    grids = np.meshgrid(*ranges, indexing="ij")
    vals = np.stack([g.reshape(-1) for g in grids], axis=1)  # every candidate completion
    ok = np.ones(len(vals), bool)
    for i in np.unique([c[0] for c in idx]):
        cols = [k for k, c in enumerate(idx) if c[0] == i]
        ok &= vals[:, cols].sum(1) == row_rem[i]
    for j in np.unique([c[1] for c in idx]):
        cols = [k for k, c in enumerate(idx) if c[1] == j]
        ok &= vals[:, cols].sum(1) == col_rem[j]
    feas = vals[ok]
    return {c: (int(feas[:, k].min()), int(feas[:, k].max())) for k, c in enumerate(idx)}
