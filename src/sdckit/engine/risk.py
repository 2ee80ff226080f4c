"""Key frequencies and re-identification risk of partitioned microdata.

f_k and F_k by a distributed group-by: each partition turns its key codes into one int64
combination code (mixed radix, :func:`sdckit.risk.frequencies.combination_codes`), counts
the records and sums the weights of each code it holds (counts added exactly, weights as
double-double pairs, :mod:`sdckit.engine.sums`, so F_k does not depend on the partitioning).

:func:`frequency_table` (what a release runs, once per measured dataset) keeps the table on
the workers: each partition's table is split into hash buckets of the combination code
(:func:`bucket_of`), the pieces of a bucket are merged as a tree of tasks (each combination
lands in exactly one bucket, so a merged bucket holds the final f_k and F_k of its
combinations), and each bucket computes its individual risk (which depends on (f_k, F_k)
only, :func:`sdckit.risk.individual.individual_risk`) and its part of the summary. The
mu-Argus risk threshold needs the distribution of the risk over all combinations: each
bucket's (risk, records) pairs are split into ranges of risk value (edges from quantiles of
a sample of every bucket's risks), each range is sorted and merged on a worker, and each
range finds its largest value below the crossing of eq. 17 from the totals of the ranges
below it. The client receives figures and an f_k histogram, never a table of the data's
size, and nothing is computed twice. The figures equal those of the whole table
(:func:`combination_table`, :func:`risk_from_table`; ``tests/engine/test_risk_table.py``);
the expected re-identifications are summed bucket by bucket (the same sum whatever the
partitioning, equal to the whole table's up to summation order).

Missing key values follow the wildcard rule of :mod:`sdckit.risk.missing` (a missing value
matches every category, alpha = 1), as the in-memory risk and gate do: the rule relates
combinations across buckets, so when a bucket finds a missing key value the merged table
(:func:`combination_table`, one row per combination, missing as its own value) is built and
:func:`wildcard_counts` runs the in-memory function on its rows, each weighted by its record
count. :func:`combination_table` also serves per-record risk (:meth:`PartitionedRisk.records`).

References
----------
Benedetti, R. and Franconi, L. (1998); Franconi, L. and Polettini, S. (2004): see
:mod:`sdckit.risk.individual`. mu-Argus manual 4.1, sec. 2.3.4.1, eq. 17 (the threshold).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._sums import dd_bincount
from .._validation import check_choice, check_float, check_int
from ..errors import InputError
from ..risk.frequencies import combination_codes
from ..risk.individual import METHODS, global_risk_threshold, individual_risk
from .frame import PartitionedMicrodata, partition_codes

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


def _table_inputs(pmd: PartitionedMicrodata, keys: Sequence[str] | None, use_weights: bool):
    """Keys, weight column, categories and the per-partition Delayed partial tables."""
    import dask

    keys = tuple(pmd.key_vars if keys is None else keys)
    if not keys:
        raise InputError("frequencies need key variables: give the key_vars role.")
    weight = pmd.weight if use_weights else None
    cats = {k: pmd.categories[k] for k in keys}
    cols = list(keys) + ([weight] if weight else [])
    parts = [dask.delayed(_partial_table)(p, keys, cats, weight, i)
             for i, p in enumerate(pmd.frame[cols].to_delayed())]
    return keys, weight, tuple(len(cats[k]) for k in keys), parts


def combination_table(pmd: PartitionedMicrodata, keys: Sequence[str] | None = None,
                      use_weights: bool = True):
    """A Delayed :class:`CombinationTable` of ``pmd``: the whole merged table, one row per
    combination (computing it brings the table to the client; per-record risk and the
    wildcard rule of missing key values need it)."""
    import dask

    keys, weight, ncat, parts = _table_inputs(pmd, keys, use_weights)
    merged = tree_reduce(parts, _merge)

    def finish(t):
        return CombinationTable(keys, ncat, t[0], t[1], t[2], t[3], weight is not None)

    return dask.delayed(finish)(merged)


# --------------------------------------------------------------------------- the table kept on the workers
#: most hash buckets (and risk ranges) of :func:`frequency_table`; one per partition below it
MAX_BUCKETS = 32
#: Fibonacci hashing (Knuth, TAOCP vol. 3, sec. 6.4): 2^64 / golden ratio, odd
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
#: Delayed full tables of recent frequency_table calls, for data with missing key values
#: (token -> Delayed CombinationTable; a few at most, the oldest dropped first)
_FULL_TABLES: dict[str, object] = {}
_FULL_TABLES_KEPT = 8


def bucket_of(code: np.ndarray, n_buckets: int) -> np.ndarray:
    """Hash bucket (0..n_buckets-1) of each combination code: the high 32 bits of
    ``code * golden`` modulo the bucket count (neighbouring codes spread over the buckets)."""
    h = (np.asarray(code).astype(np.uint64) * _GOLDEN) >> np.uint64(32)
    return (h % np.uint64(n_buckets)).astype(np.intp)


def _split(table: tuple, n_buckets: int) -> tuple:
    """A partial table (codes sorted) as ``n_buckets`` pieces, codes sorted in each."""
    b = bucket_of(table[0], n_buckets).astype(np.uint16)  # small keys: a stable sort is a radix sort
    order = np.argsort(b, kind="stable")           # stable: codes stay sorted within a bucket
    edges = np.searchsorted(b[order], np.arange(n_buckets + 1))
    return tuple(tuple(a[order[edges[i]:edges[i + 1]]] for a in table) for i in range(n_buckets))


def _has_missing(codes: np.ndarray, n_categories: Sequence[int]) -> bool:
    """Whether a code holds a missing value in some key (a mixed-radix digit of 0)."""
    rest = codes.copy()
    for m in reversed(n_categories):
        if np.any(rest % (int(m) + 1) == 0):
            return True
        rest //= int(m) + 1
    return False


def _bucket_stats(merged: tuple, n_categories: tuple, weighted: bool, risk_method: str) -> dict:
    """One merged bucket: its risk per combination and its part of the summary.

    ``f``: the bucket's f_k histogram (distinct f_k, records holding it); ``risk``,
    ``counts``: the risk of each combination and its records (unsorted: each risk range sorts
    its own values once, :func:`_merge_range`); ``er``: sum of the records' risks.
    """
    codes, counts, hi, _ = merged
    if codes.size and _has_missing(codes, n_categories):
        return {"missing": True}
    g_risk = individual_risk(counts, hi if weighted else None, method=risk_method, weighted=weighted)
    frec = np.bincount(counts, weights=counts)             # records per f_k (f_k are small integers)
    fv = np.flatnonzero(frec)
    step = max(1, g_risk.size // 64)
    return {"missing": False, "n": int(counts.sum()), "n_combinations": int(codes.size),
            "f": (fv, frec[fv].astype(np.int64)), "er": float(np.dot(counts.astype(np.float64), g_risk)),
            "max_risk": float(g_risk.max()) if g_risk.size else 0.0,
            "above_zero": int(counts[g_risk > 0.0].sum()),
            "sample": np.sort(g_risk[::step]), "risk": g_risk, "counts": counts}


def _small(st: dict) -> dict:
    """A bucket's figures without its per-combination arrays (what crosses to other tasks)."""
    return {k: v for k, v in st.items() if k not in ("risk", "counts")}


def _range_edges(stats: list, n_ranges: int) -> np.ndarray:
    """Risk values splitting the combinations into ``n_ranges`` ranges of about equal size
    (quantiles of an evenly spaced sample of every bucket's risks)."""
    samples = [st["sample"] for st in stats if not st["missing"] and st["sample"].size]
    if not samples or n_ranges <= 1:
        return np.zeros(0)
    pool = np.unique(np.concatenate(samples))
    return np.unique(pool[np.linspace(0, pool.size - 1, n_ranges + 1).astype(np.intp)[1:-1]])


def _range_pieces(st: dict, edges: np.ndarray, n_ranges: int) -> tuple:
    """The bucket's (risk, records) split by risk range: range ``r`` holds
    ``edges[r-1] < v <= edges[r]`` (ranges past the edges found are empty)."""
    empty = (np.zeros(0), np.zeros(0, np.int64))
    if st["missing"]:
        return (empty,) * n_ranges
    if n_ranges == 1:
        return ((st["risk"], st["counts"]),)
    r = np.searchsorted(edges, st["risk"], side="left").astype(np.uint16)  # v <= edges[r]
    order = np.argsort(r, kind="stable")
    bounds = np.searchsorted(r[order], np.arange(n_ranges + 1))
    return tuple((st["risk"][order[bounds[i]:bounds[i + 1]]], st["counts"][order[bounds[i]:bounds[i + 1]]])
                 for i in range(n_ranges))


def _merge_range(pieces: list) -> tuple:
    """One risk range over all buckets: distinct values ascending, the records holding each
    and the sum of their risks (what eq. 17 needs)."""
    v = np.concatenate([p[0] for p in pieces])
    c = np.concatenate([p[1] for p in pieces]).astype(np.float64)
    values, pos = np.unique(v, return_inverse=True)
    pos = pos.reshape(-1)
    records = np.bincount(pos, weights=c, minlength=values.size)
    sums = np.bincount(pos, weights=v * c, minlength=values.size)
    return values, records.astype(np.int64), sums


def _range_totals(rng: tuple) -> tuple[int, float]:
    return int(rng[1].sum()), float(rng[2].sum())


def _range_candidate(rng: tuple, below_records: int, below_sum: float, n: int, target: float):
    """The largest value ``tau`` of the range with ER(tau) < target (eq. 17), and the records
    at or below it; None when no value of the range qualifies."""
    values, records, sums = rng
    if values.size == 0:
        return None
    er = below_sum + np.cumsum(sums) + values * (n - below_records - np.cumsum(records))
    ok = np.flatnonzero(er < target)
    if ok.size == 0:
        return None
    j = int(ok[-1])
    return float(values[j]), int(below_records + records[:j + 1].sum())


@dataclass(frozen=True)
class RiskTable:
    """The merged summary of :func:`frequency_table`: the combination table stayed on the workers.

    ``fk`` (distinct f_k ascending) and ``counts`` (records holding each) are the f_k histogram:
    ``counts[fk < k].sum()`` is the records in classes smaller than ``k``, as with a full
    table. ``missing``: a key value is missing somewhere, so the wildcard rule needs the full
    table (:func:`risk_from_table` builds it).
    """

    keys: tuple[str, ...]
    n_categories: tuple[int, ...]
    has_weights: bool
    risk_method: str
    max_global_risk: float
    missing: bool
    fk: np.ndarray
    counts: np.ndarray
    n_combinations: int
    expected_reidentifications: float
    max_individual_risk: float
    risk_threshold: float | None
    n_above_threshold: int
    token: str = ""

    @property
    def n_records(self) -> int:
        return int(self.counts.sum())


def _finish_risk_table(stats: list, candidates: list, keys: tuple, ncat: tuple, weighted: bool,
                       risk_method: str, max_global_risk: float, token: str) -> RiskTable:
    if any(st["missing"] for st in stats):
        empty = np.zeros(0, np.int64)
        return RiskTable(keys, ncat, weighted, risk_method, max_global_risk, True, empty, empty, 0, 0.0, 0.0,
                         None, 0, token)
    n = sum(st["n"] for st in stats)
    er = 0.0
    for st in stats:  # bucket order: the same sum whatever the partitioning
        er += st["er"]
    fv, fpos = np.unique(np.concatenate([st["f"][0] for st in stats]), return_inverse=True)
    frec = np.bincount(fpos.reshape(-1), weights=np.concatenate([st["f"][1] for st in stats]),
                       minlength=fv.size).astype(np.int64)
    threshold, above = None, 0
    if er >= max_global_risk * n:  # else the global risk is already below the target (sdcMicro: NA)
        found = [c for c in candidates if c is not None]
        if found:
            tau, at_or_below = max(found)
            threshold, above = tau, n - at_or_below
        else:
            threshold, above = 0.0, sum(st["above_zero"] for st in stats)
    return RiskTable(keys, ncat, weighted, risk_method, max_global_risk, False, fv, frec,
                     sum(st["n_combinations"] for st in stats), er,
                     max((st["max_risk"] for st in stats), default=0.0), threshold, above, token)


#: workers from which the table is split into hash buckets; below, one worker merges and
#: measures the whole table (on 1 and 2 workers of a loaded 2-core machine the buckets' split
#: and exchange cost more than they save: bench_dask.py --frequencies; larger clusters were not
#: measured)
BUCKETS_FROM_WORKERS = 4


def _n_workers() -> int:
    """Workers of the current distributed client (1 without one)."""
    try:
        from distributed import get_client

        return max(1, len(get_client().scheduler_info().get("workers", {})))
    except (ImportError, ValueError):
        return 1


def frequency_table(pmd: PartitionedMicrodata, keys: Sequence[str] | None = None,
                    use_weights: bool = True, *, risk_method: str = "approx", max_global_risk: float = 0.01,
                    n_buckets: int | None = None):
    """A Delayed :class:`RiskTable` of ``pmd``: the combination table built once, merged and
    measured on the workers (see the module notes); compute it alone or with other passes and
    give it to :func:`risk_from_table` (with the same ``risk_method`` and ``max_global_risk``).

    ``n_buckets``: hash buckets of the table (default: one per worker of the current client,
    at most one per partition and :data:`MAX_BUCKETS`, and a single one below
    :data:`BUCKETS_FROM_WORKERS` workers)."""
    import uuid

    import dask

    check_choice("measure_risk", "risk_method", risk_method, METHODS)
    max_global_risk = check_float("measure_risk", "max_global_risk", max_global_risk, low=0,
                                  high=1, low_open=True, high_open=True)
    keys, weight, ncat, parts = _table_inputs(pmd, keys, use_weights)
    token = uuid.uuid4().hex
    _FULL_TABLES[token] = combination_table(pmd, keys, use_weights)  # a graph only: built if needed
    while len(_FULL_TABLES) > _FULL_TABLES_KEPT:
        _FULL_TABLES.pop(next(iter(_FULL_TABLES)))
    if n_buckets is None:
        workers = _n_workers()
        n_buckets = 1 if workers < BUCKETS_FROM_WORKERS else workers
    n_buckets = max(1, min(int(n_buckets), len(parts), MAX_BUCKETS))
    if n_buckets == 1:
        split = [[p] for p in parts]
    else:
        split = [dask.delayed(_split, nout=n_buckets)(p, n_buckets) for p in parts]
    stats = [dask.delayed(_bucket_stats)(tree_reduce([sp[b] for sp in split], _merge), ncat, weight is not None,
                                         risk_method) for b in range(n_buckets)]
    small = [dask.delayed(_small)(st) for st in stats]   # the per-combination arrays stay in `stats`
    n_ranges = n_buckets
    edges = dask.delayed(_range_edges)(small, n_ranges)
    pieces = [dask.delayed(_range_pieces, nout=n_ranges)(st, edges, n_ranges) for st in stats]
    ranges = [dask.delayed(_merge_range)([p[r] for p in pieces]) for r in range(n_ranges)]
    totals = dask.delayed(lambda ts: np.array(ts, dtype=object))([dask.delayed(_range_totals)(g) for g in ranges])
    n = dask.delayed(lambda sts: sum(st.get("n", 0) for st in sts))(small)
    target = dask.delayed(lambda m: max_global_risk * m)(n)
    below_rec = dask.delayed(lambda t: np.concatenate([[0], np.cumsum([int(x[0]) for x in t])]))(totals)
    below_sum = dask.delayed(_prefix_sums)(totals)
    candidates = [dask.delayed(_range_candidate)(g, below_rec[r], below_sum[r], n, target)
                  for r, g in enumerate(ranges)]
    return dask.delayed(_finish_risk_table)(small, candidates, keys, ncat, weight is not None, risk_method,
                                            max_global_risk, token)


def _prefix_sums(totals) -> list[float]:
    """Risk sums of the ranges below each range (in range order)."""
    out, acc = [0.0], 0.0
    for _, s in totals:
        acc += float(s)
        out.append(acc)
    return out


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

    From a :class:`RiskTable` (the table stayed on the workers), ``table`` is that summary,
    ``fk`` its distinct f_k and ``table.counts`` the records holding each (so
    ``counts[fk < k].sum()`` counts the records below k either way), ``Fk`` is None and
    :meth:`records` builds the combination table first (:func:`combination_table`).
    """

    table: CombinationTable | RiskTable
    combination_risk: np.ndarray
    summary: dict = field(default_factory=dict)
    k_values: tuple[int, ...] = (2, 3, 5)
    fk: np.ndarray | None = None
    Fk: np.ndarray | None = None

    def records(self, pmd: PartitionedMicrodata):
        """Dask DataFrame of the per-record risk columns (one partition per input partition)."""
        import dask

        if isinstance(self.table, RiskTable):  # the per-combination figures were not kept: build them
            full = risk_from_table(combination_table(pmd, self.table.keys, self.table.has_weights).compute(),
                                   k_values=self.k_values, risk_method=self.table.risk_method,
                                   max_global_risk=self.table.max_global_risk)
            return full.records(pmd)
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


def risk_from_table(table: CombinationTable | RiskTable, *, k_values: Sequence[int] = (2, 3, 5),
                    risk_method: str = "approx", max_global_risk: float = 0.01) -> PartitionedRisk:
    """Individual risk per combination and the summary of :func:`sdckit.risk.measure_risk`
    (same keys, same definitions), from a merged combination table or from the
    :class:`RiskTable` of :func:`frequency_table` (its figures; the full table is built only
    for data with missing key values, or when ``risk_method`` / ``max_global_risk`` differ
    from those the table was measured with)."""
    ks = tuple(check_int("measure_risk", "k_values", k, min_value=1) for k in k_values)
    check_choice("measure_risk", "risk_method", risk_method, METHODS)
    max_global_risk = check_float("measure_risk", "max_global_risk", max_global_risk, low=0,
                                  high=1, low_open=True, high_open=True)
    if isinstance(table, RiskTable):
        if (table.missing or table.risk_method != risk_method or table.max_global_risk != max_global_risk):
            full = _FULL_TABLES.get(table.token)
            if full is None:
                raise InputError("the combination table of this frequency_table result is no longer at hand: "
                                 "call frequency_table again with this risk_method and max_global_risk.")
            table = full.compute()
        else:
            return _risk_from_risk_table(table, ks)
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


def _risk_from_risk_table(t: RiskTable, ks: tuple[int, ...]) -> PartitionedRisk:
    """:func:`risk_from_table`'s result from the figures merged on the workers."""
    n = t.n_records
    fk, counts = t.fk, t.counts
    summary = {
        "n_records": n,
        "n_combinations": t.n_combinations,
        "n_sample_uniques": int(counts[fk == 1].sum()),
        "k_violations": {str(k): int(counts[fk < k].sum()) for k in ks},
        "k_reached": int(fk.min()),
        "global_risk": t.expected_reidentifications / n,
        "expected_reidentifications": t.expected_reidentifications,
        "max_individual_risk": t.max_individual_risk,
        "risk_threshold": t.risk_threshold,
        "max_global_risk": t.max_global_risk,
        "n_above_threshold": t.n_above_threshold,
        "risk_method": t.risk_method,
        "weighted": t.has_weights,
        "missing_alpha": 1.0,
        "n_records_with_missing_keys": 0,
    }
    return PartitionedRisk(t, np.zeros(0), summary, ks, fk, None)


def measure_risk_partitioned(pmd: PartitionedMicrodata, *, k_values: Sequence[int] = (2, 3, 5),
                             risk_method: str = "approx", max_global_risk: float = 0.01) -> PartitionedRisk:
    """f_k, F_k, individual and global risk, k-anonymity of partitioned microdata.

    The figures equal :func:`sdckit.risk.measure_risk`'s on the same data (missing key values
    as wildcards, alpha = 1): f_k, k-anonymity counts and the per-record risk exactly (F_k is
    the correctly rounded sum of the weights, see :mod:`sdckit.engine.sums`; bincount's
    running sum can differ from it in the last bit), the expected re-identifications up to
    summation order.
    """
    table = frequency_table(pmd, risk_method=risk_method, max_global_risk=max_global_risk).compute()
    return risk_from_table(table, k_values=k_values, risk_method=risk_method,
                           max_global_risk=max_global_risk)
