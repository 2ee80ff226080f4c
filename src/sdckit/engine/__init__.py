"""Dask back end: the same release spec on data that outgrow one machine.

Reading partitioned Parquet / CSV with categories agreed across partitions
(:func:`read_partitioned`), key frequencies and risk by distributed bincounts
(:func:`measure_risk_partitioned`), PRAM and noise per partition with draws that do not
depend on the partitioning (:func:`fit_pram`, :func:`fit_noise`, :func:`transform`,
:func:`run_in_memory`), block methods (rank swapping, microaggregation, in-memory steps
within areas), row-wise steps (``remove``, ``recode``: :func:`fit_rowwise`) and the whole run
(:func:`protect_with_dask`). See docs/engine.md.
"""

from .blockwise import (BlockMicroaggregation, BlockRankSwap, GroupedStep, fit_microaggregation,
                        fit_rank_swap, grouped_partitioned, microaggregate_partitioned,
                        rank_swap_partitioned)
from .frame import PartitionedMicrodata, from_pandas, read_partitioned, same_values, write_partitioned
from .masking import (NoiseSettings, PramSettings, fit_noise, fit_pram, run_in_memory, transform)
from .risk import CombinationTable, PartitionedRisk, frequency_table, measure_risk_partitioned
from .rowwise import RowwiseStep, fit_rowwise, rowwise_partitioned
from .run import DaskRelease, EngineError, dask_steps, protect_with_dask, start_client

__all__ = [
    "BlockMicroaggregation", "BlockRankSwap", "CombinationTable", "DaskRelease", "EngineError",
    "GroupedStep", "NoiseSettings", "PartitionedMicrodata", "PartitionedRisk", "PramSettings",
    "RowwiseStep", "dask_steps", "fit_microaggregation", "fit_rowwise", "fit_noise", "fit_pram", "fit_rank_swap", "frequency_table", "from_pandas",
    "grouped_partitioned", "measure_risk_partitioned", "microaggregate_partitioned", "protect_with_dask",
    "rank_swap_partitioned", "read_partitioned", "rowwise_partitioned", "run_in_memory", "same_values", "start_client",
    "transform", "write_partitioned",
]
