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

The utility (pMSE) and disclosure figures (repU, DiSCO, TCAP) compare the whole original and
synthetic files; the engine does not compute them, and the gate thresholds on them run in
memory only (the summary says so).

References
----------
Nowok, B., Raab, G. M. and Dibben, C. (2016). synthpop: Bespoke creation of synthetic data in
R. Journal of Statistical Software 74(11), sections 2-3.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..microdata import Microdata
from .frame import PartitionedMicrodata


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
    n_fit = int(frame.shape[0])
    how = (f"every record ({n_fit:,})" if rows is None else
           f"a seeded sample of {n_fit:,} of the {n:,} records (fit_sample)")
    summary = {"method": "synthesise", "records": n, "records_fitted": n_fit,
               "synthesised_variables": len(plan.sequence), "visit_sequence": list(plan.sequence),
               "methods": {v: plan.methods[v] for v in plan.sequence}, "kept_variables": list(plan.kept),
               "rules": len(plan.rules), "draw_block": int(step.draw_block),
               "scope": (f"fitted on {how} on the client; drawn partition by partition in blocks of "
                         f"{int(step.draw_block):,} records, each from its own child stream of the step's "
                         "seed: the same file as the in-memory engine. The utility and disclosure figures "
                         "are not computed on the Dask engine."),
               "notes": list(fitted.notes)}
    return SynthesisPlan(s, fitted.for_drawing(), n, n_fit, summary)


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


def synthesis_summary(plan: SynthesisPlan) -> dict:
    return dict(plan.summary)


__all__ = ["SynthesisSettings", "SynthesisPlan", "fit_synthesis", "draw_partition", "synthesis_partitioned",
           "synthesis_summary"]
