"""Uniqueness by combination of key variables: which combinations drive the risk.

For every combination of up to ``max_size`` key variables, the share of records that are
sample unique on it (f = 1) and the share with f < k. Sorted by the unique share, largest
first, the table shows the steward where the risk comes from (birth date alone may make 12%
of the records unique, birth date + sex + ZIP 69%). Missing values count as their own
value here (as in sdcMicro's and ARX's frequency tables).

References
----------
Sweeney, L. (2000). Simple demographics often identify people uniquely. Carnegie Mellon
University, Data Privacy Working Paper 3.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import pandas as pd

from .._validation import check_int, check_names
from ..errors import ParameterError
from .frequencies import frequencies_from_codes


def uniqueness_by_combination(microdata, *, max_size: int = 3, k: int = 3,
                              keys: Sequence[str] | None = None) -> pd.DataFrame:
    """Share of unique records (and of records with f < k) for each key combination.

    Parameters
    ----------
    microdata : Microdata
    max_size : int
        Largest number of key variables combined (default 3).
    k : int >= 2
        The threshold of the second share (records with f < k).
    keys : list of str, optional
        Default: the key role.

    Returns
    -------
    pandas.DataFrame
        Columns ``variables`` (names joined by " + "), ``size``, ``n_combinations``,
        ``n_unique``, ``share_unique``, ``n_below_k``, ``share_below_k``; sorted by
        ``share_unique`` then ``share_below_k`` descending, then by size.
    """
    keys = tuple(microdata.key_vars if keys is None else check_names("uniqueness_by_combination",
                                                                     "keys", keys))
    size = check_int("uniqueness_by_combination", "max_size", max_size, min_value=1)
    if size > len(keys):
        raise ParameterError(
            f"The 'max_size' parameter of uniqueness_by_combination must be an int <= "
            f"{len(keys)} (the number of key variables). Got {size}.", param="max_size",
            rule=f"an int in [1, {len(keys)}]", value=size)
    k = check_int("uniqueness_by_combination", "k", k, min_value=2)
    codes = {v: microdata.codes(v) for v in keys}
    ncat = {v: microdata.n_categories(v) for v in keys}
    n = microdata.n_records
    rows = []
    for s in range(1, size + 1):
        for combo in itertools.combinations(keys, s):
            f = frequencies_from_codes([codes[v] for v in combo], [ncat[v] for v in combo],
                                       names=list(combo))
            n_unique = int((f.fk == 1).sum())
            n_below = int((f.fk < k).sum())
            rows.append({"variables": " + ".join(combo), "size": s,
                         "n_combinations": f.n_combinations, "n_unique": n_unique,
                         "share_unique": n_unique / n, "n_below_k": n_below,
                         "share_below_k": n_below / n})
    table = pd.DataFrame(rows)
    table = table.sort_values(["share_unique", "share_below_k", "size"],
                              ascending=[False, False, True], kind="stable")
    return table.reset_index(drop=True).rename_axis(None)


def drivers_text(table: pd.DataFrame, top: int = 5) -> str:
    """The first rows of the table as readable lines."""
    lines = []
    for row in table.head(top).itertuples(index=False):
        lines.append(f"{row.variables:40s} {100 * row.share_unique:6.2f}% unique, "
                     f"{100 * row.share_below_k:6.2f}% below k")
    return "\n".join(lines)
