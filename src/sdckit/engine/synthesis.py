"""Sequential synthesis (the ``synthesise`` step) on partitioned microdata.

The step fits once and draws partition by partition (Nowok, Raab & Dibben 2016, section 2:
a record's synthetic values depend on the fitted models and on its own earlier variables only):

1. fit, on the client: the records fitted (every record, or the step's seeded sample of
   ``fit_sample`` records, :func:`sdckit.synth.steps.fit_records`) are collected from the
   partitions and the in-memory fit runs on them, so the models are those of the in-memory
   engine. Every record is the default, as in memory; a sample bounds the client's memory
   and the fit's time on data larger than one machine (10,000,000 records x 20 variables
   hold 1.6 GB as floats, and the trees grow in about 50 s per million records);
2. draw, on the workers: the file's rows are cut into blocks of ``draw_block`` records and
   block ``b`` draws from child ``b`` of the step's stream
   (:meth:`sdckit.synth.synthesis.FittedSynthesis.draw_rows`), exactly as in memory. A
   partition draws every block it overlaps, reading the neighbouring partitions' records of
   a block that crosses its border (their kept columns and strata condition the draw), and
   keeps its own rows. The released values are therefore the in-memory engine's for the same
   seed, whatever the partitioning.

3. disclosure, on the workers (:func:`disclosure_partitioned`): repU, DiSCO and TCAP
   (synthpop 1.9's ``disclosure()``) are functions of the (keys, target) count tables of the
   two files. Each partition of the original and of the synthetic file counts its distinct
   (keys, target) rows; the pieces are brought to common levels, cut into hash buckets of the
   key combination, merged bucket by bucket as a tree of tasks, and each complete bucket gives
   integer counts and exact sums (:mod:`sdckit.synth.disclosure_tables`), added as a tree. The
   figures equal the in-memory ones bit for bit for any partitioning. The client receives the
   figures only; a worker holds one bucket's cells at a time (at most the distinct (keys,
   target) rows of the data), and the last task the target's level counts. The synthetic
   partitions are drawn once for the figures (all targets in one pass) and once more when the
   release is written (the same values: the draw is a function of the seed and the rows).

A file of another size (the step's ``n_records``, synthpop's ``k``) has as many partitions as
the input, each of whole blocks, drawn from the blocks' streams as in memory
(:meth:`~sdckit.synth.synthesis.FittedSynthesis.draw_resized_rows`): the same file.

4. utility, on the client (:func:`propensity_partitioned`): the records of the two files the
   in-memory engine reads (every record, or the step's seeded ``utility_sample`` sample of
   bounded size) are collected and the same propensity model is fitted with the same stream:
   the same pMSE and S_pMSE, marked ``sampled`` with the sample's sizes when sampled.

The figures compare the step's input and output. The gate thresholds ``max_repU``,
``max_disco`` and ``max_tcap`` read them (:func:`synthesis_disclosure`), which is the release's
own comparison only when ``synthesise`` is the release's only step: with other steps the
thresholds are refused on this engine. The table measures (``utility.tab``) are not computed
on this engine, and the summary says so.

References
----------
Nowok, B., Raab, G. M. and Dibben, C. (2016). synthpop: Bespoke creation of synthetic data in
R. Journal of Statistical Software 74(11), sections 2-3.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..errors import SpecError
from ..microdata import Microdata
from ..synth.disclosure import (
    DisclosureMeasures,
    check_disclosure_args,
    default_keys_targets,
    disclosure_options,
    measures_of,
)
from ..synth.disclosure_tables import (
    DisclosureOptions,
    DisclosureStats,
    cell_stats,
    column_forms,
    combine_stats,
    level_cells,
    merge_cells,
    raw_cells,
    split_cells,
)
from .frame import PartitionedMicrodata
from .risk import BUCKETS_FROM_WORKERS, MAX_BUCKETS, tree_reduce


@dataclass(frozen=True)
class SynthesisSettings:
    """The step and the roles of the data."""

    step: Any
    roles: Mapping[str, Any]


@dataclass(frozen=True)
class SynthesisPlan:
    """The fitted synthesis (the part the draw needs), its settings and its public summary."""

    settings: SynthesisSettings
    fitted: Any
    n_records: int
    n_fitted: int
    summary: dict
    #: the step's input and stream (the gate's disclosure figures redraw from them) and the
    #: figures measured so far, by (keys, target)
    source: Any = None
    stream: Any = None
    measured: dict = field(default_factory=dict)


def _microdata_roles(roles: Mapping[str, Any]) -> dict:
    return {k: v for k, v in roles.items() if v}


def _take(pdf: pd.DataFrame, rows: np.ndarray) -> pd.DataFrame:
    return pdf.iloc[rows]


def fit_synthesis(pmd: PartitionedMicrodata, s: SynthesisSettings, stats: Any,
                  stream: np.random.SeedSequence) -> SynthesisPlan:
    """Collect the records fitted and fit the step's models on the client (see the module notes)."""
    import dask

    from ..synth.steps import fit_records

    step = s.step
    n = pmd.n_records
    rows = fit_records(n, step.fit_sample, stream)
    if rows is None:
        frame = pmd.frame.compute()
    else:
        parts = []
        for p, part in enumerate(pmd.frame.to_delayed()):
            lo, hi = int(pmd.offsets[p]), int(pmd.offsets[p + 1])
            mine = rows[(rows >= lo) & (rows < hi)] - lo
            if mine.size:
                parts.append(dask.delayed(_take)(part, mine))
        frame = pd.concat(dask.compute(*parts), ignore_index=False)
    frame = frame.reset_index(drop=True)
    roles = _microdata_roles(pmd.roles)
    md = Microdata(frame, **roles)
    synth = step.synthesiser(md)
    fitted = synth.fit(md)
    plan = fitted.plan
    k = int(step.n_records) or n
    if k != n:
        fitted.check_resizable(k)
    n_fit = int(frame.shape[0])
    how = (f"every record ({n_fit:,})" if rows is None else
           f"a seeded sample of {n_fit:,} of the {n:,} records (fit_sample)")
    summary = {"method": "synthesise", "records": k, "records_original": n, "records_fitted": n_fit,
               "synthesised_variables": len(plan.sequence), "visit_sequence": list(plan.sequence),
               "methods": {v: plan.methods[v] for v in plan.sequence}, "kept_variables": list(plan.kept),
               "rules": len(plan.rules), "draw_block": int(step.draw_block),
               "scope": (f"fitted on {how} on the client; drawn partition by partition in blocks of "
                         f"{int(step.draw_block):,} records, each from its own child stream of the step's "
                         "seed: the same file as the in-memory engine. The disclosure figures come from "
                         "count tables merged on the workers (equal to the in-memory figures); the propensity "
                         "figures (pMSE) from the records of the two files collected on the client (every "
                         "record, or the utility_sample sample), equal to the in-memory figures; the table "
                         "figures are not computed on the Dask engine."),
               "notes": list(fitted.notes)}
    out = SynthesisPlan(s, fitted.for_drawing(), k, n_fit, summary, source=pmd, stream=stream)
    keys, targets = default_keys_targets(pmd.key_vars, _as_list(pmd.roles.get("sensitive")), plan.sequence,
                                         step.disclosure_keys, step.disclosure_targets)
    if keys and targets:
        figures = measured_figures(out, keys, targets)
        summary["disclosure"] = [d.to_dict() for d in figures]
        summary["repU_percent"] = max(d.identity["repU"] for d in figures)
        top = max(figures, key=lambda d: d.attribute["DiSCO"])
        summary["DiSCO_percent"] = {"target": top.target, "DiSCO": top.attribute["DiSCO"]}
    if step.utility != "none":
        summary["utility"] = propensity_partitioned(out, md)
        summary["pMSE"], summary["S_pMSE"] = summary["utility"]["pMSE"], summary["utility"]["S_pMSE"]
    return out


def _gather(frame: Any, offsets: Sequence[int], rows: np.ndarray | None) -> pd.DataFrame:
    """Rows ``rows`` (global positions, sorted; None: every row) of a partitioned frame, in order."""
    import dask

    if rows is None:
        return frame.compute().reset_index(drop=True)
    parts = []
    for p, part in enumerate(frame.to_delayed()):
        lo, hi = int(offsets[p]), int(offsets[p + 1])
        mine = rows[(rows >= lo) & (rows < hi)] - lo
        if mine.size:
            parts.append(dask.delayed(_take)(part, mine))
    return pd.concat(dask.compute(*parts)).reset_index(drop=True)


def propensity_partitioned(plan: SynthesisPlan, fitted_md: Microdata) -> dict:
    """The step's propensity figures (pMSE, S_pMSE) on the Dask engine: the records of the
    two files the in-memory engine reads (every record, or the seeded ``utility_sample``
    sample, :func:`sdckit.synth.sized.utility_rows`) collected on the client, and the same
    computation with the same stream, so the figures equal the in-memory ones for the same
    seed; ``sampled`` with the sample's sizes when a sample was read."""
    from ..synth.sized import step_utility, utility_rows
    from ..synth.steps import categorical_columns
    from ..synth.synthesis import child_stream

    step, pmd, stream = plan.settings.step, plan.source, plan.stream
    n, k = pmd.n_records, plan.n_records
    rows_o, rows_s = utility_rows(n, k, step.utility_sample, stream)
    synthetic = synthesis_partitioned(pmd, plan, stream)
    fp = plan.fitted.plan
    original = _gather(pmd.frame, pmd.offsets, rows_o)
    released = _gather(synthetic.frame, synthetic.offsets, rows_s)
    return step_utility(original, released, method=step.utility, variables=list(fp.columns),
                        cont_na=dict(fp.missing_codes), categorical=categorical_columns(fitted_md, fp),
                        n_permutations=step.utility_permutations, rng=child_stream(stream, 1),
                        n_original=n, n_synthetic=k, sampled=rows_o is not None)


def _as_list(v: Any) -> list:
    if v is None:
        return []
    return [v] if isinstance(v, str) else list(v)


# --------------------------------------------------------------------------- disclosure
def _n_buckets(n_parts: int, n_buckets: int | None) -> int:
    """Hash buckets of the cell tables: one per worker of the current client from
    :data:`~sdckit.engine.risk.BUCKETS_FROM_WORKERS` workers (one below), at most one per
    partition and :data:`~sdckit.engine.risk.MAX_BUCKETS` (the frequency table's rule)."""
    if n_buckets is None:
        try:
            from distributed import get_client

            workers = len(get_client().scheduler_info().get("workers", {}))
        except (ImportError, ValueError):
            workers = 1
        n_buckets = 1 if workers < BUCKETS_FROM_WORKERS else workers
    return max(1, min(int(n_buckets), max(1, n_parts), MAX_BUCKETS))


def _level_split(raw: tuple, forms: dict, keys: list, target: str, synthetic: bool, n_buckets: int) -> tuple:
    """A partition's cells at the common levels, cut into hash buckets of the key combination."""
    return split_cells(level_cells(raw[0], forms, keys, target, synthetic), keys, n_buckets)


def _raw(pdf: pd.DataFrame, keys: list, target: str) -> tuple:
    return raw_cells(pdf, keys, target)


def _measures(stats: DisclosureStats, keys: list, target: str, opts: DisclosureOptions) -> DisclosureMeasures:
    c = stats.counts
    return measures_of(stats, keys, target, opts, c.get("n_original", 0), c.get("n_synthetic", 0))


def disclosure_partitioned(original: Any, synthetic: Any, keys: Sequence[str], targets: Sequence[str], *,
                           n_buckets: int | None = None, not_targetlev: Sequence[Any] = (),
                           usetargetNA: bool = True, usekeysNA: bool | Sequence[bool] = True,
                           exclude_ov_denom_lim: bool = False, denom_lim: int = 5) -> list:
    """Delayed :class:`~sdckit.synth.disclosure.DisclosureMeasures`, one per target, of two
    partitioned files (see the module notes): equal to
    :func:`sdckit.synth.disclosure.disclosure_measures` on the same files.

    Parameters
    ----------
    original, synthetic : PartitionedMicrodata or dask.dataframe.DataFrame
    keys : list of str
    targets : list of str
        One figure set per target; compute them together so each partition is read (and a
        lazily drawn synthetic partition drawn) once.
    n_buckets : int, optional
        Hash buckets of the cell tables (default: the frequency table's rule).
    not_targetlev, usetargetNA, usekeysNA, exclude_ov_denom_lim, denom_lim
        As :func:`~sdckit.synth.disclosure.disclosure_measures`.

    Returns
    -------
    list of dask.delayed.Delayed
    """
    import dask

    d = original.frame if isinstance(original, PartitionedMicrodata) else original
    s = synthetic.frame if isinstance(synthetic, PartitionedMicrodata) else synthetic
    cols_d, cols_s = [str(c) for c in d.columns], [str(c) for c in s.columns]
    checked = [check_disclosure_args(cols_d, cols_s, keys, t, usekeysNA) for t in targets]
    needed = list(dict.fromkeys(c for (k, _), t in zip(checked, targets) for c in [*k, t]))
    parts_d = d[needed].to_delayed()
    parts_s = s[needed].to_delayed()
    nb = _n_buckets(len(parts_d) + len(parts_s), n_buckets)
    out = []
    for (ks, use_key_na), target in zip(checked, targets):
        opts = disclosure_options(use_key_na, not_targetlev=not_targetlev, usetargetNA=usetargetNA,
                                  exclude_ov_denom_lim=exclude_ov_denom_lim, denom_lim=denom_lim)
        cols = [*ks, target]
        raw_d = [dask.delayed(_raw, nout=2)(p, ks, target) for p in parts_d]
        raw_s = [dask.delayed(_raw, nout=2)(p, ks, target) for p in parts_s]
        forms = dask.delayed(column_forms)([r[1] for r in raw_d + raw_s], cols)
        pieces = ([dask.delayed(_level_split, nout=nb)(r, forms, ks, target, False, nb) for r in raw_d]
                  + [dask.delayed(_level_split, nout=nb)(r, forms, ks, target, True, nb) for r in raw_s])
        merge = functools.partial(merge_cells, cols=cols)
        stats = [dask.delayed(cell_stats)(tree_reduce([p[b] for p in pieces], merge), ks, target, opts)
                 for b in range(nb)]
        out.append(dask.delayed(_measures)(tree_reduce(stats, combine_stats), ks, target, opts))
    return out


def measured_figures(plan: SynthesisPlan, keys: Sequence[str], targets: Sequence[str]) -> list[DisclosureMeasures]:
    """The disclosure figures of the step's input against its output for ``keys`` and each
    target, computed on the cluster (the targets not measured yet, in one pass) and kept on the
    plan."""
    import dask

    keys = list(keys)
    todo = [t for t in dict.fromkeys(targets) if (tuple(keys), t) not in plan.measured]
    if todo:
        synthetic = synthesis_partitioned(plan.source, plan, plan.stream)
        done = dask.compute(*disclosure_partitioned(plan.source, synthetic, keys, todo))
        for t, m in zip(todo, done):
            plan.measured[(tuple(keys), t)] = m
    return [plan.measured[(tuple(keys), t)] for t in targets]


class PartitionedDisclosure:
    """The :class:`~sdckit.synth.disclosure.DisclosureSource` of the Dask engine: the
    ``synthesise`` step's input and output (see the module notes), read by the gate's
    ``max_repU``, ``max_disco`` and ``max_tcap`` (their ``finish``)."""

    def __init__(self, plan: SynthesisPlan) -> None:
        pmd = plan.source
        self.plan = plan
        self.key_vars = tuple(pmd.key_vars)
        self.sensitive = tuple(_as_list(pmd.roles.get("sensitive")))
        self.original_columns = [str(c) for c in pmd.frame.columns]
        self.released_columns = list(self.original_columns)
        self.scope = ("measured on the Dask engine from count tables merged on the workers "
                      "(the same figures as in memory)")

    def measures(self, keys: Sequence[str], targets: Sequence[str]) -> list[DisclosureMeasures]:
        """One figure set per target (kept on the plan: a second threshold reuses them)."""
        return measured_figures(self.plan, keys, targets)

    def measured_target(self, keys: Sequence[str]) -> str | None:
        """A target already measured with these keys (its identity figures serve repU)."""
        return next((t for (k, t) in self.plan.measured if list(k) == list(keys)), None)


def synthesis_disclosure(risk: Any, plans: Sequence[Any]) -> PartitionedDisclosure:
    """The gate's ``synthesis_disclosure`` summary: the figures of the release's one
    ``synthesise`` step, refused (one line) when the release has other steps, whose changes
    the step's comparison of its own input and output would not see."""
    synth = [p for p in plans if isinstance(p, SynthesisPlan)]
    if len(synth) != 1 or len(plans) != 1:
        raise SpecError("gate: max_repU, max_disco and max_tcap run on the Dask engine when synthesise is the "
                        f"release's only step (this release has {len(plans)} steps, {len(synth)} synthesise); "
                        "run it with the in-memory engine or split the release.")
    return PartitionedDisclosure(synth[0])


def draw_partition(fitted: Any, stream: np.random.SeedSequence, block_rows: int, n_total: int,
                   first_row: int, lo: int, hi: int, offsets: list[int], *parts: pd.DataFrame) -> pd.DataFrame:
    """Rows ``lo .. hi`` of the synthetic file: the blocks they overlap (global rows from
    ``first_row``, a block border) drawn from the partitions ``parts`` (starting at global rows
    ``offsets``) that hold them, cut to the partition's own rows with its index."""
    pieces = []
    end = min(n_total, first_row + -(-(hi - first_row) // block_rows) * block_rows)
    own = None
    for start, pdf in zip(offsets, parts):
        a, b = max(first_row, start), min(end, start + len(pdf))
        if start == lo:
            own = pdf
        if b > a:
            pieces.append(pdf.iloc[a - start:b - start])
    block = pd.concat(pieces).reset_index(drop=True) if len(pieces) > 1 else pieces[0].reset_index(drop=True)
    drawn_parts, _ = fitted.draw_rows(block, stream, first_row=first_row, n_total=n_total, block_rows=block_rows)
    from ..synth.synthesis import SynthesisDraw

    draw = SynthesisDraw(fitted, len(block), drawn_parts, [], None, aligned=True)
    synthetic = draw.frame(block)
    out = own.copy()
    cut = synthetic.iloc[lo - first_row:hi - first_row]
    for c in fitted.plan.sequence:
        values = cut[c].to_numpy()
        try:
            out[c] = pd.Series(values, index=out.index).astype(own[c].dtype)
        except (TypeError, ValueError):
            out[c] = pd.Series(values, index=out.index)
    return out


def synthesis_partitioned(pmd: PartitionedMicrodata, plan: SynthesisPlan,
                          stream: np.random.SeedSequence) -> PartitionedMicrodata:
    """Every partition's synthetic records (lazy; see the module notes)."""
    import dask
    import dask.dataframe as dd

    from ..synth.synthesis import child_stream

    draw_stream = child_stream(stream, 0)  # the step draws its file from child 0, as in memory
    block_rows = int(plan.settings.step.draw_block)
    n = pmd.n_records
    if plan.n_records != n:
        return _resized_partitioned(pmd, plan, draw_stream, block_rows)
    offsets = [int(x) for x in pmd.offsets]
    parts = pmd.frame.to_delayed()
    fitted = dask.delayed(plan.fitted, pure=True)
    out = []
    for p in range(pmd.npartitions):
        lo, hi = offsets[p], offsets[p + 1]
        if hi == lo:
            out.append(parts[p])
            continue
        first = (lo // block_rows) * block_rows
        end = min(n, -(-hi // block_rows) * block_rows)
        need = [q for q in range(pmd.npartitions)
                if q == p or (offsets[q] < end and offsets[q + 1] > first and offsets[q + 1] > offsets[q])]
        out.append(dask.delayed(draw_partition)(fitted, draw_stream, block_rows, n, first, lo, hi,
                                                [offsets[q] for q in need], *[parts[q] for q in need]))
    frame = dd.from_delayed(out, meta=pmd.frame._meta, divisions=pmd.frame.divisions, verify_meta=False)
    return pmd.with_frame(frame)


def draw_resized_partition(fitted: Any, stream: np.random.SeedSequence, block_rows: int, k: int, lo: int, hi: int,
                           meta: pd.DataFrame) -> pd.DataFrame:
    """Rows ``lo .. hi`` (whole blocks) of a synthetic file of ``k`` records of another size than
    the original (:meth:`~sdckit.synth.synthesis.FittedSynthesis.draw_resized_rows`, as in
    memory), with ``meta``'s columns and dtypes."""
    from ..synth.synthesis import SynthesisDraw

    parts, _ = fitted.draw_resized_rows(stream, k, lo, hi, block_rows=block_rows)
    frame = SynthesisDraw(fitted, hi - lo, parts, [], None).frame(meta)
    frame.index = pd.RangeIndex(lo, hi)
    return frame[list(meta.columns)]


def _resized_partitioned(pmd: PartitionedMicrodata, plan: SynthesisPlan, stream: np.random.SeedSequence,
                         block_rows: int) -> PartitionedMicrodata:
    """A synthetic file of ``plan.n_records`` records, another size than the input's: as many
    partitions as the input, each of whole blocks (the last one the rest), each drawn on its
    own worker from the blocks' streams, so the file equals the in-memory one."""
    import dask
    import dask.dataframe as dd

    k = int(plan.n_records)
    n_blocks = -(-k // block_rows)
    per = -(-n_blocks // max(1, pmd.npartitions)) * block_rows
    bounds = list(range(0, k, per)) + [k]
    meta = pmd.frame._meta
    fitted = dask.delayed(plan.fitted, pure=True)
    parts = [dask.delayed(draw_resized_partition)(fitted, stream, block_rows, k, lo, hi, meta)
             for lo, hi in zip(bounds[:-1], bounds[1:])]
    frame = dd.from_delayed(parts, meta=meta, divisions=tuple(bounds[:-1]) + (k - 1,), verify_meta=False)
    return PartitionedMicrodata(frame, pmd.roles, pmd.categories, np.asarray(bounds, dtype=np.int64),
                                pmd.source, pmd.file_format, pmd.meta)


def synthesis_summary(plan: SynthesisPlan) -> dict:
    return dict(plan.summary)


__all__ = ["SynthesisSettings", "SynthesisPlan", "fit_synthesis", "draw_partition", "synthesis_partitioned",
           "synthesis_summary", "disclosure_partitioned", "measured_figures", "PartitionedDisclosure",
           "synthesis_disclosure"]
