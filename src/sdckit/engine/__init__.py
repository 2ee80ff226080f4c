"""Dask back end: the same release spec on data that outgrow one machine.

Reading partitioned Parquet / CSV with categories agreed across partitions
(:func:`read_partitioned`), key frequencies and risk by distributed bincounts
(:func:`measure_risk_partitioned`), PRAM and noise per partition with draws that do not
depend on the partitioning (:func:`fit_pram`, :func:`fit_noise`, :func:`transform`,
:func:`run_in_memory`), block methods (rank swapping, microaggregation, in-memory steps
within areas), row-wise steps (``remove``, ``recode``: :func:`fit_rowwise`) and the whole run
(:func:`protect_with_dask`). See docs/engine.md.
"""

# The names load on first use (PEP 562): importing one module of this package does not import
# the others (a command pays only for what it uses).
from .._lazy import attach

_EXPORTS = {
    "BlockMicroaggregation": "blockwise", "BlockRankSwap": "blockwise", "GroupedStep": "blockwise",
    "fit_microaggregation": "blockwise", "fit_rank_swap": "blockwise",
    "grouped_partitioned": "blockwise", "microaggregate_partitioned": "blockwise",
    "rank_swap_partitioned": "blockwise", "PartitionedMicrodata": "frame", "from_pandas": "frame",
    "read_partitioned": "frame", "same_values": "frame", "write_partitioned": "frame",
    "NoiseSettings": "masking", "PramSettings": "masking", "fit_noise": "masking",
    "fit_pram": "masking", "run_in_memory": "masking", "transform": "masking",
    "CombinationTable": "risk", "PartitionedRisk": "risk", "frequency_table": "risk",
    "measure_risk_partitioned": "risk", "RowwiseStep": "rowwise", "fit_rowwise": "rowwise",
    "rowwise_partitioned": "rowwise", "DaskRelease": "run", "EngineError": "run",
    "dask_steps": "run", "protect_with_dask": "run", "start_client": "run",
}

__all__ = [
    "BlockMicroaggregation", "BlockRankSwap", "CombinationTable", "DaskRelease", "EngineError",
    "GroupedStep", "NoiseSettings", "PartitionedMicrodata", "PartitionedRisk", "PramSettings",
    "RowwiseStep", "dask_steps", "fit_microaggregation", "fit_rowwise", "fit_noise", "fit_pram",
    "fit_rank_swap", "frequency_table", "from_pandas", "grouped_partitioned",
    "measure_risk_partitioned", "microaggregate_partitioned", "protect_with_dask",
    "rank_swap_partitioned", "read_partitioned", "rowwise_partitioned", "run_in_memory",
    "same_values", "start_client", "transform", "write_partitioned",
]


__getattr__, __dir__ = attach(__name__, _EXPORTS, __all__, globals())
