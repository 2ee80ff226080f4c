"""``method = "ckm"`` in a TOML table spec: perturb the table with the cell key method.

Spec keys (``[protection]``)::

    method = "ckm"
    ptable = "ptab_freq.txt"          # or a table of parameters: ptable = {D = 5, V = 3, js = 2}
    key = "Key"                       # record key column; absent -> keys drawn with `seed` (internal)
    seed = 12345                      # only used to draw missing record keys; never written out
    flex = [0.03, 0.30, 1000, 3]      # magnitude tables: sigma0, sigma1, x*, q
    epsilon = [1, 0.5, 0.2]           # magnitude tables: weights of the top contributors
    include_zeros = false             # magnitude tables: zero contributions count in the cell key
    small_ptable = "ptab_small.txt"   # magnitude tables: small-cell p-table (separation)

The published CSV (``output.table``) holds the codes, the perturbed value and the status; the
public page (``output.public_report``, ``<stem>_public.html`` beside the report) and the public CSV
(``output.public_table``, ``<stem>_public.csv``) are written by :mod:`sdckit.tables.public` as
for the other protection methods, with the public status ``perturbed`` (marked ``p`` on the page)
for every cell that went through the p-table and ``safe`` for empty cells, which the method
publishes as 0 (a cell whose noise happened to be 0 is still marked ``perturbed``: marking it
unchanged would publish its true value). The JSON summary has ``n_cells``, ``n_perturbed``, ``max_abs_perturbation``, ``ptable`` and the lost
additivity (margins are perturbed as cells, so totals no longer equal the sum of their parts).
"""

from __future__ import annotations

import html
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ...errors import ParameterError, SpecError
from ...io.atomic import atomic_write_text
from ...result import ResultDisplay, jsonable
from ..public import DEFAULT_CODE, check_code, public_frame, public_page
from ..table import Table
from .cellkey import CKMResult, add_record_keys, ckm_frequency
from .magnitude import FlexParams, ckm_magnitude

__all__ = ["CKMRun", "run_ckm", "ckm_published_frame", "ckm_public_cells", "ckm_public_page", "PROTECTION_KEYS"]

#: the [protection] keys :func:`run_ckm` reads (besides method and seed; the spec reader also takes the
#: registered "ckm" method's declared D, V, js and ptable_file in place of ptable)
PROTECTION_KEYS = ("ptable", "key", "flex", "epsilon", "include_zeros", "small_ptable")


@dataclass(frozen=True)
class CKMRun(ResultDisplay):
    spec_path: str
    table: Table
    result: CKMResult
    seconds: float
    outputs: dict = field(default_factory=dict)
    method: str = "ckm"
    #: per dimension with missing values: the choice made and the counts
    missing: dict = field(default_factory=dict)
    #: whether the record keys were drawn from the spec's seed (the seed stays internal)
    keys_drawn: bool = False

    def to_dict(self) -> dict:
        r = self.result
        return jsonable({"n_cells": r.n_cells, "n_perturbed": r.n_perturbed,
                         "max_abs_perturbation": r.max_abs_perturbation, "ptable": r.ptable.source,
                         "kind": r.kind, "additivity": r.additivity(), "seconds": round(self.seconds, 4),
                         "method": "ckm", "status": "perturbed", "outputs": dict(self.outputs)})

    def describe(self) -> str:
        return f"{self.table.describe()}\n{self.result.describe()}"


def ckm_public_cells(result: CKMResult) -> tuple[np.ndarray, np.ndarray]:
    """Published value and public status (:data:`sdckit.tables.public.STATUSES`) of every cell.

    ``perturbed`` for every non-empty cell (it went through the p-table, whatever its draw),
    ``safe`` for empty cells (the method keeps them 0, so nothing is hidden by marking them).
    """
    t = result.table
    val = np.asarray(result.perturbed, dtype=float)
    val = np.rint(val) if result.kind == "frequency" else np.round(val, 6)
    status = np.where(np.asarray(t.freq) > 0, "perturbed", "safe").astype(object)
    return val, status


def ckm_published_frame(result: CKMResult) -> pd.DataFrame:
    """Codes, the perturbed value and the status of every cell (totals included)."""
    t = result.table
    df = t.to_frame()[list(t.dims)]
    val, status = ckm_public_cells(result)
    df["value"] = val.astype(np.int64) if result.kind == "frequency" else val
    df["status"] = status
    return df


def ckm_public_page(run: CKMRun, *, code: str = DEFAULT_CODE) -> str:
    """The page to publish with a CKM table (:func:`sdckit.tables.public.public_page`): every
    perturbed cell marked ``p``, with the lost additivity stated."""
    r = run.result
    a = r.additivity()
    values, status = ckm_public_cells(r)
    bound = (f"at most {r.ptable.max_abs_v:g} in absolute value" if r.kind == "frequency"
             else "scaled to the cell's largest contributions")
    note = ("<p>Every non-empty cell, totals included, carries noise from the cell key method "
            f"({bound}); totals are perturbed as cells, so "
            f"{a['n_broken']:,} of {a['n_relations']:,} total = sum-of-parts relations do not hold in the "
            f"published table (largest discrepancy {a['max_abs_discrepancy']:g}). The same cell gets the same "
            "noise in every table from these microdata.</p>")
    return public_page(r.table, values, status, code=code, title="Published table (cell key method)", note=note)


def run_ckm(spec: dict, spec_path: str | Path, table: Table, frame_reader, *, write: bool = True) -> CKMRun:
    """Run the CKM part of a table spec on ``table`` (built by the spec reader from microdata);
    with ``write=False`` nothing is written (a release writes the outputs)."""
    t0 = time.perf_counter()
    inp = spec.get("input", {})
    prot = spec.get("protection", {})
    tab = spec.get("table", {})
    base = Path(spec_path).resolve().parent
    if "microdata" not in inp:
        raise SpecError("protection.method: 'ckm' needs microdata (input.microdata = 'file.csv') with record keys")
    if "ptable" not in prot:
        raise SpecError("protection.ptable: missing; give a p-table file or parameters {D = 5, V = 3, js = 2}")
    pt = prot["ptable"]
    if isinstance(pt, str):
        pt = base / pt
        if not pt.is_file():
            raise SpecError(f"protection.ptable: file {str(pt)!r} does not exist")
    frame = frame_reader(base / inp["microdata"])
    key = prot.get("key", "Key")
    drawn = False
    if not isinstance(key, str):
        raise SpecError(f"protection.key: must be a column name, got {key!r}")
    if key not in frame.columns:
        if "seed" not in prot:
            raise SpecError(f"protection.key: column {key!r} is not in the microdata; give the record key column "
                            "or a seed (protection.seed) to draw record keys")
        frame = add_record_keys(frame, key, rng=prot["seed"])
        drawn = True
    hier = {d: h for d, h in zip(table.dims, table.hierarchies)}
    total = tab.get("total", "Total")
    try:
        if table.kind == "frequency":
            res = ckm_frequency(frame, list(table.dims), key=key, ptable=pt, table=table, total=total)
        else:
            flex_args = prot.get("flex", [0.03, 0.30, 1000.0, 3.0])
            if not isinstance(flex_args, list) or len(flex_args) != 4:
                raise SpecError("protection.flex: give [sigma0, sigma1, xstar, q], e.g. [0.03, 0.30, 1000, 3]")
            flex = FlexParams(*[float(x) for x in flex_args], epsilon=tuple(prot.get("epsilon", [1.0])))
            t = table if table.top is not None and table.top.shape[1] >= flex.top_k else None
            small = prot.get("small_ptable")
            if isinstance(small, str):
                small = base / small
                if not small.is_file():
                    raise SpecError(f"protection.small_ptable: file {str(small)!r} does not exist")
            res = ckm_magnitude(frame, list(table.dims), table.response, key=key, ptable=pt, flex=flex,
                                hierarchies=hier, total=total, include_zeros=bool(prot.get("include_zeros", False)),
                                table=t, small_ptable=small)
    except ParameterError as e:
        raise SpecError(f"protection.{e.param or 'ptable'}: {e}") from None
    if not write:
        return CKMRun(str(spec_path), res.table, res, time.perf_counter() - t0, {}, keys_drawn=drawn)
    out = spec.get("output", {})
    stem = Path(spec_path).stem
    code = check_code(out.get("suppression_code", DEFAULT_CODE))
    outputs = {"table": str(atomic_write_text(base / out.get("table", f"{stem}_published.csv"),
                                              ckm_published_frame(res).to_csv(index=False)))}
    run = CKMRun(str(spec_path), res.table, res, time.perf_counter() - t0, outputs)
    page = ("<!doctype html><html><head><meta charset='utf-8'><title>sdckit cell key method</title></head><body>"
            f"<h1>Cell key method</h1><p>{html.escape(run.describe())}</p>"
            "<p>Every cell, totals included, is perturbed from its own cell key; totals are not the sums of "
            "their perturbed parts. The p-table's maximum deviation bounds every change.</p>"
            + ("<p><strong>Internal</strong>: the record keys were drawn from the spec's seed "
               f"(protection.seed, column {html.escape(key)!s}); keep the seed and the keys secret: they undo "
               "the noise.</p>" if drawn else "") + "</body></html>")
    report = out.get("report", f"{stem}_report.html")
    outputs["report"] = str(atomic_write_text(base / report, page))
    # the public page and CSV, as for the other protection methods (sdckit.tables.public)
    rep = Path(report)
    stem_public = rep.stem.removesuffix("_report")
    values, status = ckm_public_cells(res)
    outputs["public_report"] = str(atomic_write_text(
        base / out.get("public_report", str(rep.with_name(f"{stem_public}_public.html"))),
        ckm_public_page(run, code=code)))
    outputs["public_table"] = str(atomic_write_text(
        base / out.get("public_table", str(rep.with_name(f"{stem_public}_public.csv"))),
        public_frame(res.table, values, status, code=code).to_csv(index=False)))
    return CKMRun(str(spec_path), res.table, res, time.perf_counter() - t0, outputs)
