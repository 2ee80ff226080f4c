"""Key frequencies and re-identification risk of partitioned microdata.

f_k and F_k by a distributed group-by: each partition turns its key codes into one int64
combination code (mixed radix, :func:`sdckit.risk.frequencies.combination_codes`), counts
the records and sums the weights of each code it holds; the partial tables are merged in a
tree (counts added exactly, weights as double-double pairs, :mod:`sdckit.engine.sums`).
The merged table has one row per combination present. Individual risk depends on
(f_k, F_k) only, so it is computed once per combination on the client with the in-memory
function (:func:`sdckit.risk.individual.individual_risk`) and mapped back to the records of
each partition by a sorted lookup.

Missing key values follow the wildcard rule of :mod:`sdckit.risk.missing` (a missing value
matches every category, alpha = 1), as the in-memory risk and gate do: the rule needs only
the merged table (one row per combination, missing as its own value), so
:func:`wildcard_counts` runs the in-memory function on the table's rows, each weighted by
its record count.

References
----------
Benedetti, R. and Franconi, L. (1998); Franconi, L. and Polettini, S. (2004): see
:mod:`sdckit.risk.individual`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._validation import check_choice, check_float, check_int
from ..errors import InputError
from ..risk.frequencies import combination_codes
from ..risk.individual import METHODS, global_risk_threshold, individual_risk
from .frame import PartitionedMicrodata, partition_codes
from .._sums import dd_bincount

#: partial tables merged per task in the tree reduction
FAN_IN = 8


@dataclass(frozen=True)
class CombinationTable:
    """One row per key combination present: its code, f_k and F_k.

    ``codes`` are sorted ascending (a record's row is ``searchsorted(codes, code)``).
    ``weighted`` is F_k (the sum of weights, equal to ``counts`` without weights), ``weighted_lo``
    the low part of its double-double sum.
    """

    keys: tuple[str, ...]
    n_categories: tuple[int, ...]
    codes: np.ndarray
    counts: np.ndarray
    weighted: np.ndarray
    weighted_lo: np.ndarray
    has_weights: bool

    @property
    def n_records(self) -> int:
        return int(self.counts.sum())

    @property
    def n_combinations(self) -> int:
        return int(self.codes.shape[0])

    def lookup(self, code: np.ndarray) -> np.ndarray:
        """Row of each record's combination (every code must be present)."""
        row = np.searchsorted(self.codes, code)
        if row.size and (row.max() >= self.codes.size or np.any(self.codes[np.minimum(row, self.codes.size - 1)] != code)):
            raise InputError("a record's key combination is not in the frequency table: the data "
                             "changed between the frequency pass and the lookup.")
        return row


def _partial_table(pdf: pd.DataFrame, keys: tuple[str, ...], categories: dict, weight: str | None,
                   partition: int | None = None) -> tuple:
    """(codes, counts, hi, lo) of one partition, codes sorted."""
    codes = partition_codes(pdf, keys, categories, partition)
    code, _ = combination_codes(codes, [len(categories[k]) for k in keys], names=list(keys))
    uniq, group = np.unique(code, return_inverse=True)
    group = group.reshape(-1)
    counts = np.bincount(group, minlength=uniq.size).astype(np.int64)
    if weight is None:
        hi, lo = counts.astype(np.float64), np.zeros(uniq.size)
    else:
        w = pdf[weight].to_numpy(dtype=np.float64)
        hi, lo = dd_bincount(group, w, uniq.size)
    return uniq, counts, hi, lo


def _merge(parts: Sequence[tuple]) -> tuple:
    """Merge partial tables: counts added, weights added as double-double pairs."""
    parts = [p for p in parts if p[0].size]
    if len(parts) == 1:
        return parts[0]
    if not parts:
        return (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), np.zeros(0))
    code = np.concatenate([p[0] for p in parts])
    uniq, group = np.unique(code, return_inverse=True)
    group = group.reshape(-1)
    # counts added as float64: exact below 2^53 records
    counts = np.bincount(group, weights=np.concatenate([p[1] for p in parts]).astype(np.float64),
                         minlength=uniq.size).astype(np.int64)
    hi, lo = dd_bincount(group, np.concatenate([p[2] for p in parts]), uniq.size,
                         np.concatenate([p[3] for p in parts]))
    return uniq, counts, hi, lo


def tree_reduce(items: list, combine) -> object:
    """Delayed tree reduction of delayed items with ``combine(list) -> item``."""
    import dask

    level = list(items)
    while len(level) > 1:
        level = [dask.delayed(combine)(level[i:i + FAN_IN]) for i in range(0, len(level), FAN_IN)]
    return level[0] if len(level) == 1 else dask.delayed(combine)(level)


def frequency_table(pmd: PartitionedMicrodata, keys: Sequence[str] | None = None,
                    use_weights: bool = True):
    """A Delayed :class:`CombinationTable` of ``pmd`` (compute it alone or with other passes)."""
    import dask

    keys = tuple(pmd.key_vars if keys is None else keys)
    if not keys:
        raise InputError("frequencies need key variables: give the key_vars role.")
    weight = pmd.weight if use_weights else None
    cats = {k: pmd.categories[k] for k in keys}
    cols = list(keys) + ([weight] if weight else [])
    parts = [dask.delayed(_partial_table)(p, keys, cats, weight, i)
             for i, p in enumerate(pmd.frame[cols].to_delayed())]
    merged = tree_reduce(parts, _merge)
    ncat = tuple(len(cats[k]) for k in keys)

    def finish(t):
        return CombinationTable(keys, ncat, t[0], t[1], t[2], t[3], weight is not None)

    return dask.delayed(finish)(merged)


def table_key_codes(table: CombinationTable) -> list[np.ndarray]:
    """Each key's code (-1 missing) of every table row: the mixed radix of
    :func:`~sdckit.risk.frequencies.combination_codes` undone."""
    out = []
    rest = table.codes.copy()
    for m in reversed(table.n_categories):
        r = int(m) + 1
        out.append(rest % r - 1)
        rest //= r
    return out[::-1]


def wildcard_counts(table: CombinationTable) -> tuple[np.ndarray, np.ndarray]:
    """f_k and F_k of every combination with missing values as wildcards (alpha = 1).

    The in-memory :func:`~sdckit.risk.missing.wildcard_frequencies` on the table's rows, each
    row weighted by its record count (its weighted f is then the wildcard f_k of the records),
    and again by its weight sum (F_k). Without missing values: the table's own counts.
    """
    from ..risk.missing import wildcard_frequencies

    codes = table_key_codes(table)
    if not any((c < 0).any() for c in codes):
        return table.counts, table.weighted
    f = wildcard_frequencies(codes, table.n_categories, table.counts.astype(np.float64), names=list(table.keys)).Fk
    F = (wildcard_frequencies(codes, table.n_categories, table.weighted, names=list(table.keys)).Fk
         if table.has_weights else f)
    return np.rint(f).astype(np.int64), F


@dataclass(frozen=True)
class PartitionedRisk:
    """Risk of partitioned microdata: the combination table, risk per combination, summary.

    Per-record columns (``fk``, ``Fk``, ``risk``, ``violates_k{k}``, ``above_threshold``) come
    from :meth:`records` as a Dask DataFrame, computed partition by partition.
    """

    table: CombinationTable
    combination_risk: np.ndarray
    summary: dict = field(default_factory=dict)
    k_values: tuple[int, ...] = (2, 3, 5)
    fk: np.ndarray | None = None
    Fk: np.ndarray | None = None

    def records(self, pmd: PartitionedMicrodata):
        """Dask DataFrame of the per-record risk columns (one partition per input partition)."""
        import dask

        table = dask.delayed(self.table, traverse=False)
        crisk = dask.delayed(np.stack([self.fk, self.Fk, self.combination_risk], axis=1), traverse=False)
        threshold = self.summary.get("risk_threshold")
        meta = pd.DataFrame({"fk": pd.Series(dtype="int64"), "Fk": pd.Series(dtype="float64"),
                             "risk": pd.Series(dtype="float64"),
                             **{f"violates_k{k}": pd.Series(dtype=bool) for k in self.k_values},
                             "above_threshold": pd.Series(dtype=bool)})
        cols = list(self.table.keys)
        return pmd.frame[cols].map_partitions(
            _records_partition, table, crisk, dict(pmd.categories), self.k_values, threshold,
            meta=meta, align_dataframes=False)


def _records_partition(pdf, table: CombinationTable, crisk: np.ndarray, categories: dict,
                       k_values: tuple[int, ...], threshold, partition_info=None) -> pd.DataFrame:
    part = None if partition_info is None else partition_info["number"]
    codes = partition_codes(pdf, table.keys, categories, part)
    code, _ = combination_codes(codes, table.n_categories, names=list(table.keys))
    row = table.lookup(code)
    fk = crisk[row, 0].astype(np.int64)                 # columns: wildcard f_k, F_k, risk
    out = pd.DataFrame({"fk": fk, "Fk": crisk[row, 1], "risk": crisk[row, 2]}, index=pdf.index)
    for k in k_values:
        out[f"violates_k{k}"] = fk < k
    out["above_threshold"] = (out["risk"] > threshold) if threshold is not None else False
    return out


def risk_from_table(table: CombinationTable, *, k_values: Sequence[int] = (2, 3, 5),
                    risk_method: str = "approx", max_global_risk: float = 0.01) -> PartitionedRisk:
    """Individual risk per combination and the summary of :func:`sdckit.risk.measure_risk`
    (same keys, same definitions), from a merged combination table."""
    ks = tuple(check_int("measure_risk", "k_values", k, min_value=1) for k in k_values)
    check_choice("measure_risk", "risk_method", risk_method, METHODS)
    max_global_risk = check_float("measure_risk", "max_global_risk", max_global_risk, low=0,
                                  high=1, low_open=True, high_open=True)
    counts = table.counts                      # records holding each combination
    fk, Fk = wildcard_counts(table)            # f_k, F_k with missing values as wildcards
    g_risk = individual_risk(fk, Fk if table.has_weights else None,
                             method=risk_method, weighted=table.has_weights)
    n = table.n_records
    er = float(np.dot(counts.astype(np.float64), g_risk))  # ER = sum_i r_i
    threshold = global_risk_threshold(g_risk, max_global_risk, counts=counts)
    above = int(counts[g_risk > threshold].sum()) if threshold is not None else 0
    summary = {
        "n_records": n,
        "n_combinations": table.n_combinations,
        "n_sample_uniques": int(counts[fk == 1].sum()),
        "k_violations": {str(k): int(counts[fk < k].sum()) for k in ks},
        "k_reached": int(fk.min()),
        "global_risk": er / n,
        "expected_reidentifications": er,
        "max_individual_risk": float(g_risk.max()),
        "risk_threshold": threshold,
        "max_global_risk": max_global_risk,
        "n_above_threshold": above,
        "risk_method": risk_method,
        "weighted": table.has_weights,
    }
    summary["missing_alpha"] = 1.0
    summary["n_records_with_missing_keys"] = int(counts[np.any(np.stack(table_key_codes(table)) < 0, axis=0)].sum())
    return PartitionedRisk(table, g_risk, summary, ks, fk, Fk)


def measure_risk_partitioned(pmd: PartitionedMicrodata, *, k_values: Sequence[int] = (2, 3, 5),
                             risk_method: str = "approx", max_global_risk: float = 0.01) -> PartitionedRisk:
    """f_k, F_k, individual and global risk, k-anonymity of partitioned microdata.

    The figures equal :func:`sdckit.risk.measure_risk`'s on the same data (missing key values
    as wildcards, alpha = 1): f_k, k-anonymity counts and the per-record risk exactly (F_k is
    the correctly rounded sum of the weights, see :mod:`sdckit.engine.sums`; bincount's
    running sum can differ from it in the last bit), the expected re-identifications up to
    summation order.
    """
    table = frequency_table(pmd).compute()
    return risk_from_table(table, k_values=k_values, risk_method=risk_method,
                           max_global_risk=max_global_risk)
