"""Methods that need records side by side: applied within blocks that hold whole groups.

Rank swapping and microaggregation need neighbours in sorted order; local suppression and
targeted record swapping need the records of an area together. None of these fits a map
over the input's partitions, whose records are in file order. Here every record gets a
block id that depends on the data only (never on the partitioning); the records are
shuffled so that each block sits whole in one task; the in-memory method runs on the block
(rows in global row order, its random stream keyed by the block id); and the new values go
back to the input's partitions by global row number.

* **Rank swapping** (Moore 1996) within blocks of ranks: the blocks are value ranges cut at
  quantiles of a sample taken by global row number (every s-th row), so the blocks are
  contiguous runs of the global ranks. Within a block, a value swaps with a partner at most
  P = floor(p / 100 * m) ranks away, m the number of values in the WHOLE data, exactly the
  in-memory guarantee; no pair crosses a block border, so a value within P ranks of a border
  draws its partner from its own side only (fewer candidates there, never a longer move).
  Each block keeps its multiset of values, hence the whole variable keeps it exactly.
* **Microaggregation** by the scalable MDAV variant (:func:`sdckit.masking.microaggregation.mdav_partitioned`)
  within blocks cut along the first principal axis of the standardised data: every group
  has k..2k-1 records (blocks hold at least 2k); groups never straddle blocks.
* **Grouped steps** (local suppression, record swapping): any in-memory step applied within
  the groups of a geography column, each group with its own child stream. With the
  geography among the keys, k-anonymity within every area is k-anonymity of the whole data.

References
----------
Moore, R. A. (1996). Controlled data-swapping techniques for masking public use microdata
sets. U.S. Census Bureau, Statistical Research Division Report RR96/04.

Domingo-Ferrer, J. and Mateo-Sanz, J. M. (2002). Practical data-oriented microaggregation
for statistical disclosure control. IEEE TKDE 14(1), 189-201.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._sums import mean_sd
from .._validation import check_float, check_int, param_error
from ..errors import InputError
from .frame import PartitionedMicrodata
from .masking import child_stream

ROW = "__sdckit_row__"
BLOCK = "__sdckit_block__"
#: rows of the sample that cuts blocks, per block
SAMPLE_PER_BLOCK = 2000
#: up to this many records the shuffles are task-based, above peer-to-peer
SMALL_SHUFFLE = 1_000_000


def _with_rows(pdf: pd.DataFrame, offsets: np.ndarray, block_of: Callable, partition_info=None) -> pd.DataFrame:
    part = 0 if partition_info is None else partition_info["number"]
    start = int(offsets[part])
    out = pdf.copy(deep=False)
    out[ROW] = np.arange(start, start + pdf.shape[0], dtype=np.int64)
    out[BLOCK] = block_of(pdf, partition=part).astype(np.int64)
    return out


def _apply_blocks(pdf: pd.DataFrame, fn: Callable, columns: list[str], dtypes: dict | None = None) -> pd.DataFrame:
    """Run ``fn(block_frame, block_id)`` on every block of a shuffled partition; the new
    columns are cast to ``dtypes`` so every partition has the same schema."""
    pdf = pdf.sort_values([BLOCK, ROW], kind="stable")
    outs = []
    for b, block in pdf.groupby(BLOCK, sort=True):
        block = block.reset_index(drop=True)
        new = fn(block, int(b)) if b >= 0 else block[columns]
        new = pd.DataFrame({c: np.asarray(new[c]) for c in columns})
        if dtypes:
            new = new.astype({c: dtypes[c] for c in columns})
        new[ROW] = block[ROW].to_numpy()
        outs.append(new)
    if not outs:
        return pd.DataFrame({**{c: pd.Series(dtype=(dtypes or {}).get(c, pdf[c].dtype)) for c in columns},
                             ROW: pd.Series(dtype="int64")})
    return pd.concat(outs, ignore_index=True)


def _replace(pdf: pd.DataFrame, new: pd.DataFrame, columns: list[str], partition_info=None) -> pd.DataFrame:
    new = new.sort_index()
    if new.shape[0] != pdf.shape[0]:
        part = None if partition_info is None else partition_info["number"]
        raise InputError(f"partition {part}: {new.shape[0]} masked rows came back for {pdf.shape[0]} records.")
    out = pdf.copy(deep=False)
    for c in columns:
        out[c] = new[c].to_numpy()
    return out


def apply_by_blocks(pmd: PartitionedMicrodata, columns: Sequence[str], read: Sequence[str],
                    block_of: Callable, fn: Callable, meta: dict) -> PartitionedMicrodata:
    """Give each record ``block_of(partition frame) -> block ids`` (-1: left as is), bring
    every block whole into one task, replace ``columns`` by ``fn(block frame, block id)``
    (the block frame holds ``read`` in global row order), and put the rows back.

    ``meta`` maps each replaced column to its dtype after ``fn``.
    """
    columns, read = list(columns), list(dict.fromkeys(list(read) + list(columns)))
    if np.any(np.diff(pmd.offsets) == 0):
        raise InputError("an input partition is empty; repartition the data (empty parts are not supported "
                         "by the block methods).")
    tagged = pmd.frame[read].map_partitions(
        _with_rows, pmd.offsets, block_of,
        meta={**{c: pmd.frame._meta[c].dtype for c in read}, ROW: "int64", BLOCK: "int64"},
        align_dataframes=False)
    # small data: the task-based shuffle (little fixed cost); large: peer-to-peer (bounded memory)
    method = "tasks" if pmd.n_records <= SMALL_SHUFFLE else "p2p"
    shuffled = tagged.shuffle(on=BLOCK, npartitions=pmd.npartitions, shuffle_method=method)
    out_meta = pd.DataFrame({**{c: pd.Series(dtype=meta[c]) for c in columns}, ROW: pd.Series(dtype="int64")})
    masked = shuffled.map_partitions(_apply_blocks, fn, columns, dict(meta), meta=out_meta,
                                     align_dataframes=False)
    divisions = [int(x) for x in pmd.offsets[:-1]] + [int(pmd.offsets[-1]) - 1]
    back = masked.set_index(ROW, divisions=divisions, shuffle_method=method)
    frame_meta = pmd.frame._meta.copy()
    for c in columns:
        frame_meta[c] = frame_meta[c].astype(meta[c])
    frame = pmd.frame.map_partitions(_replace, back, columns, meta=frame_meta, align_dataframes=False)
    return pmd.with_frame(frame)


def run_blocks_in_memory(df: pd.DataFrame, columns: Sequence[str], block_of: Callable, fn: Callable,
                         dtypes: dict | None = None) -> pd.DataFrame:
    """The in-memory reference: the same blocks and the same ``fn`` on a whole frame."""
    df = df.reset_index(drop=True)
    tagged = _with_rows(df, np.array([0, df.shape[0]]), block_of)
    new = _apply_blocks(tagged, fn, list(columns), dtypes).set_index(ROW).sort_index()
    out = df.copy()
    for c in columns:
        out[c] = new[c].to_numpy()
    return out


# --------------------------------------------------------------------------- cutting blocks
def sample_by_row(pmd: PartitionedMicrodata, columns: Sequence[str], n_sample: int) -> pd.DataFrame:
    """Every s-th record by global row number (s = n // n_sample): the same sample for any
    partitioning."""
    step = max(1, pmd.n_records // max(1, n_sample))

    def pick(pdf, partition_info=None):
        part = 0 if partition_info is None else partition_info["number"]
        start = int(pmd.offsets[part])
        first = (-start) % step
        return pdf.iloc[first::step]

    return pmd.frame[list(columns)].map_partitions(pick, meta=pmd.frame._meta[list(columns)],
                                                   align_dataframes=False).compute()


def block_edges(values: np.ndarray, n_blocks: int) -> np.ndarray:
    """Interior cut points: quantiles of the sample (distinct), so blocks are value ranges."""
    values = values[np.isfinite(values)]
    if n_blocks <= 1 or values.size == 0:
        return np.zeros(0)
    qs = np.quantile(values, np.arange(1, n_blocks) / n_blocks, method="inverted_cdf")
    return np.unique(qs)


# --------------------------------------------------------------------------- rank swapping
@dataclass(frozen=True)
class BlockRankSwap:
    """Rank swapping (Moore 1996) within blocks of ranks, for data of any size.

    ``p`` is the largest rank distance of a swap in percent of the values present in the
    whole variable; ``block_rows`` the target rows per block (blocks are at least 10 P rows
    so the border share stays small).
    """

    variables: tuple[str, ...]
    p: float = 5.0
    block_rows: int = 2_000_000

    def __post_init__(self) -> None:
        if isinstance(self.variables, str):
            object.__setattr__(self, "variables", (self.variables,))
        if not self.variables:
            raise param_error("BlockRankSwap", "variables", "a non-empty list of numeric variables", self.variables)
        check_float("BlockRankSwap", "p", self.p, low=0.0, high=100.0, low_open=True)
        check_int("BlockRankSwap", "block_rows", self.block_rows, min_value=2)


@dataclass(frozen=True)
class RankSwapPlan:
    settings: BlockRankSwap
    n_values: dict
    window: dict
    edges: dict
    evidence: dict = field(default_factory=dict)


def fit_rank_swap(pmd: PartitionedMicrodata, settings: BlockRankSwap, *, moments: dict | None = None) -> RankSwapPlan:
    """Count the values of each variable and cut its blocks from a sample by row number."""
    from ..masking.rank_swap import swap_window
    from .masking import noise_moments

    if moments is None:
        moments = noise_moments(pmd, settings.variables).compute()
    n_values, window, edges = {}, {}, {}
    for v in settings.variables:
        m = int(moments[v][0])
        P = int(swap_window(m, settings.p))     # P = floor(p / 100 * m), the global window
        per_block = max(settings.block_rows, 10 * P, 2)
        n_blocks = max(1, m // per_block)
        sample = sample_by_row(pmd, [v], n_blocks * SAMPLE_PER_BLOCK)[v].to_numpy(dtype=np.float64)
        n_values[v], window[v], edges[v] = m, P, block_edges(sample, n_blocks)
    return RankSwapPlan(settings, n_values, window, edges)


def rank_swap_partitioned(pmd: PartitionedMicrodata, plan: RankSwapPlan, ss: np.random.SeedSequence) -> PartitionedMicrodata:
    """Rank-swap each variable within its blocks (lazy); variable j uses child j of ``ss``,
    block b child b of that."""
    for j, v in enumerate(plan.settings.variables):
        block_of, fn = _rank_swap_parts(plan, v, child_stream(ss, j))
        pmd = apply_by_blocks(pmd, [v], [v], block_of, fn, {v: "float64"})
    return pmd


def _rank_swap_parts(plan: RankSwapPlan, v: str, vss: np.random.SeedSequence):
    from ..masking.rank_swap import rank_swap_array

    edges, P = plan.edges[v], plan.window[v]

    def block_of(pdf, partition=None):
        x = pdf[v].to_numpy(dtype=np.float64, na_value=np.nan)
        b = np.searchsorted(edges, x, side="right").astype(np.int64)
        b[np.isnan(x)] = -1  # missing values stay in place
        return b

    def fn(block: pd.DataFrame, b: int) -> pd.DataFrame:
        x = block[v].to_numpy(dtype=np.float64)
        m = x.size
        if m < 2 or P < 1:
            return pd.DataFrame({v: x})
        # the block's own percentage giving the global window P: floor(p_b / 100 * m) = P
        p_b = min(100.0, 100.0 * P / m)
        return pd.DataFrame({v: rank_swap_array(x, p_b, child_stream(vss, b))})

    return block_of, fn


# --------------------------------------------------------------------------- microaggregation
@dataclass(frozen=True)
class BlockMicroaggregation:
    """Microaggregation (means of groups of k..2k-1 records) by the scalable MDAV variant
    within blocks along the first principal axis of the standardised variables."""

    variables: tuple[str, ...]
    k: int = 3
    block_rows: int = 1_000_000
    cell: int = 10_000

    def __post_init__(self) -> None:
        if isinstance(self.variables, str):
            object.__setattr__(self, "variables", (self.variables,))
        if not self.variables:
            raise param_error("BlockMicroaggregation", "variables", "a non-empty list of numeric variables",
                              self.variables)
        check_int("BlockMicroaggregation", "k", self.k, min_value=2)
        check_int("BlockMicroaggregation", "block_rows", self.block_rows, min_value=4 * self.k)
        check_int("BlockMicroaggregation", "cell", self.cell, min_value=2 * self.k)


@dataclass(frozen=True)
class MicroaggregationPlan:
    settings: BlockMicroaggregation
    mean: np.ndarray
    sd: np.ndarray
    axis: np.ndarray
    edges: np.ndarray
    n_records: int


def fit_microaggregation(pmd: PartitionedMicrodata, settings: BlockMicroaggregation, *,
                         moments: dict | None = None) -> MicroaggregationPlan:
    """Global means and sds (exact), the principal axis of a sample by row number, blocks cut
    at quantiles of the sample's projections."""
    from ..masking.mdav_kernels import principal_axis as _principal_axis
    from .masking import noise_moments

    vs = list(settings.variables)
    if moments is None:
        moments = noise_moments(pmd, vs).compute()
    n = pmd.n_records
    for v in vs:
        if moments[v][0] != n:
            raise InputError(f"microaggregation on the Dask engine needs complete values: {v!r} is missing in "
                             f"{n - moments[v][0]} records; impute or drop them first.")
    ms = [mean_sd(moments[v]) for v in vs]
    mean = np.array([m for m, _ in ms])
    sd = np.array([s for _, s in ms])
    if np.any(~(sd > 0)):
        bad = [v for v, s in zip(vs, sd) if not s > 0]
        raise InputError(f"microaggregation: {bad} constant; standardisation is impossible: drop them.")
    n_blocks = max(1, n // settings.block_rows)
    sample = sample_by_row(pmd, vs, max(n_blocks, 1) * SAMPLE_PER_BLOCK).to_numpy(dtype=np.float64)
    Z = (sample - mean) / sd
    axis = _principal_axis(Z) if len(vs) > 1 else np.ones(1)
    axis = axis * (1.0 if axis[np.argmax(np.abs(axis))] > 0 else -1.0)  # a fixed sign
    return MicroaggregationPlan(settings, mean, sd, axis, block_edges(Z @ axis, n_blocks), n)


def microaggregate_partitioned(pmd: PartitionedMicrodata, plan: MicroaggregationPlan) -> PartitionedMicrodata:
    """Microaggregate within blocks (lazy). Deterministic: no random stream."""
    block_of, fn = _microaggregation_parts(plan)
    vs = list(plan.settings.variables)
    return apply_by_blocks(pmd, vs, vs, block_of, fn, {v: "float64" for v in vs})


def _microaggregation_parts(plan: MicroaggregationPlan):
    from ..masking.mdav_kernels import aggregate_groups, mdav_partitioned

    vs = list(plan.settings.variables)
    k, cell = plan.settings.k, plan.settings.cell

    def block_of(pdf, partition=None):
        X = pdf[vs].to_numpy(dtype=np.float64, na_value=np.nan)
        if np.isnan(X).any():
            raise InputError(f"microaggregation: missing values in {vs} (partition {partition}); "
                             "impute or drop them first.")
        return np.searchsorted(plan.edges, ((X - plan.mean) / plan.sd) @ plan.axis, side="right")

    def fn(block: pd.DataFrame, b: int) -> pd.DataFrame:
        X = block[vs].to_numpy(dtype=np.float64)
        if X.shape[0] < k:
            raise InputError(f"microaggregation: block {b} holds {X.shape[0]} records, fewer than k = {k}; "
                             "raise block_rows.")
        labels = mdav_partitioned((X - plan.mean) / plan.sd, k, max(cell, 2 * k))
        return pd.DataFrame(aggregate_groups(X, labels, "mean"), columns=vs)

    return block_of, fn


# --------------------------------------------------------------------------- grouped in-memory steps
@dataclass(frozen=True)
class GroupedStep:
    """An in-memory step (``apply(microdata, *, rng)``) applied within each group of
    ``group_by`` (e.g. the top level of the geography), with the roles of the data."""

    step: Any
    group_by: str
    columns: tuple[str, ...]
    roles: dict


def grouped_partitioned(pmd: PartitionedMicrodata, gs: GroupedStep, ss: np.random.SeedSequence,
                        meta: dict | None = None) -> PartitionedMicrodata:
    """Apply ``gs.step`` within the groups of ``gs.group_by`` (lazy); group with code c (its
    index in the column's agreed categories) draws from child c of ``ss``. ``meta`` gives the
    dtype of each replaced column (default: numbers as float64, so a suppressed value can be
    missing; other columns keep their dtype)."""
    block_of, fn, read = _grouped_parts(pmd, gs, ss)
    if meta is None:
        meta = {c: "float64" if pd.api.types.is_numeric_dtype(pmd.frame._meta[c]) else pmd.frame._meta[c].dtype
                for c in gs.columns}
    return apply_by_blocks(pmd, gs.columns, read, block_of, fn, meta)


def _grouped_parts(pmd: PartitionedMicrodata, gs: GroupedStep, ss: np.random.SeedSequence):
    from ..microdata import Microdata
    from .frame import encode

    if gs.group_by not in pmd.categories:
        raise InputError(f"{gs.group_by!r} has no agreed categories: give it the key or strata role.")
    cats = pmd.categories[gs.group_by]
    roles = {k: v for k, v in gs.roles.items() if v}
    read = list(pmd.frame.columns)  # the step may read any column (similarity keys, households, ...)

    def block_of(pdf, partition=None):
        code = encode(pdf[gs.group_by], cats, var=gs.group_by, partition=partition).astype(np.int64)
        return np.where(code < 0, len(cats), code)  # missing area: a group of its own

    def fn(block: pd.DataFrame, b: int) -> pd.DataFrame:
        frame = block.drop(columns=[ROW, BLOCK])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # one area: its geography key has one category
            md = Microdata(frame, **roles)
            result = gs.step.apply(md, rng=child_stream(ss, b))
        return result.microdata.frame[list(gs.columns)]

    return block_of, fn, read


