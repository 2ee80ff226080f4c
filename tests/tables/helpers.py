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
    # depth-first over the suppressed cells in order, a row's and a column's running sums never
    # above their remainders, and a row's (column's) last cell taking what is left: the same set
    # of completions as the full grid, without building it
    last_in_row = {i: max(k for k, c in enumerate(idx) if c[0] == i) for i in {c[0] for c in idx}}
    last_in_col = {j: max(k for k, c in enumerate(idx) if c[1] == j) for j in {c[1] for c in idx}}
    lo = [None] * len(idx)
    hi = [None] * len(idx)
    row_sum = dict.fromkeys(last_in_row, 0)
    col_sum = dict.fromkeys(last_in_col, 0)
    vals = [0] * len(idx)

    def visit(k: int) -> None:
        if k == len(idx):
            for m, v in enumerate(vals):
                lo[m] = v if lo[m] is None else min(lo[m], v)
                hi[m] = v if hi[m] is None else max(hi[m], v)
            return
        i, j = idx[k]
        room = min(row_rem[i] - row_sum[i], col_rem[j] - col_sum[j])
        if last_in_row[i] == k or last_in_col[j] == k:
            need = row_rem[i] - row_sum[i] if last_in_row[i] == k else col_rem[j] - col_sum[j]
            if last_in_col[j] == k and col_rem[j] - col_sum[j] != need:
                return
            choices = [need] if 0 <= need <= room else []
        else:
            choices = range(int(room) + 1)
        for v in choices:
            vals[k] = int(v)
            row_sum[i] += v
            col_sum[j] += v
            visit(k + 1)
            row_sum[i] -= v
            col_sum[j] -= v

    visit(0)
    return {c: (int(lo[k]), int(hi[k])) for k, c in enumerate(idx)}
