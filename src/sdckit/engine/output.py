"""What a Dask release writes: the public folder (data parts, PRAM matrices, public report,
certificate) and its internal sibling (internal report with the seeds, internal certificate,
row order), staged and switched in together as the in-memory engine does
(:func:`sdckit.release.release_folders`, :func:`sdckit.io.atomic.staged_release`), both named by
the run's random id, the certificates signed by the steward's key when one is given
(:mod:`sdckit.report.signing`).
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from ..io.atomic import atomic_write_text, staged_release
from ..release import ROW_ORDER_KEY, refuse_inputs_inside, release_folders, signing_key_for
from ..report.certificate import (
    CERTIFICATE,
    FORMAT,
    INTERNAL_CERTIFICATE,
    dependency_versions,
    file_entry,
    mark_entry,
    public_spec,
    seal,
    sha256_file,
)
from ..report.narrative import gate_headline
from ..report.release import outcome_report_html
from ..result import jsonable
from .frame import PartitionedMicrodata, write_partitioned
from .masking import PramPlan

#: a :class:`sdckit.engine.run.DaskRelease`; not imported: run.py imports this module
DaskRelease = Any

__all__ = ["write_release", "dask_certificate", "partition_order", "ROW_ORDER_KEY"]


def partition_order(entropy: Any, part: int, n: int) -> np.ndarray:
    """The permutation of partition ``part`` (``n`` rows): released row j of the partition is
    its input row ``perm[j]``."""
    ss = np.random.SeedSequence(entropy, spawn_key=(ROW_ORDER_KEY, int(part)))
    return np.random.default_rng(ss).permutation(int(n))


def _shuffle_partition(pdf, entropy, partition_info=None):
    part = 0 if partition_info is None else partition_info["number"]
    return pdf.iloc[partition_order(entropy, part, len(pdf))].reset_index(drop=True)


def _order_part(part: int, *, entropy: Any, offsets: np.ndarray):
    start, n = int(offsets[part]), int(offsets[part + 1] - offsets[part])
    return pd.DataFrame({"released_row": start + np.arange(n, dtype=np.int64),
                         "input_row": start + partition_order(entropy, part, n).astype(np.int64)})


def write_release(run: DaskRelease, current: PartitionedMicrodata, runner: Callable, *,
                  overwrite: bool, entropy: Any, signing_key: Any = None) -> dict[str, Path]:
    """Write the public folder (data parts, PRAM matrices, public report, certificate) and the
    internal folder (internal report with the seeds, internal certificate, row order), both
    staged beside their targets and switched in together under one journal
    (:func:`sdckit.io.atomic.staged_release`). The seeds never enter the public folder. The
    certificates are signed with ``signing_key`` (default: the spec's ``[output]
    signing_key``), as :meth:`sdckit.release.ReleaseRun.write` signs them.

    Rows are shuffled within each partition (from the run's row-order stream) unless
    ``[output] keep_order``; ``row_order.parquet`` in the internal folder maps each released
    row to its input row (0-based global row numbers), as ``row_order.csv`` does in memory.
    """
    import dask.dataframe as dd

    spec = run.spec
    out_dir, int_dir = release_folders(spec.output)
    refuse_inputs_inside((spec.input_path,), out_dir, int_dir)
    key = signing_key_for(spec.output, signing_key, out_dir, int_dir)
    data_name = spec.output.data
    fmt = "csv" if Path(data_name).suffix.lower() == ".csv" else "parquet"
    stem = Path(spec.output.internal_report).stem
    artifacts: dict[str, str] = {}
    for plan in run.plans:
        if isinstance(plan, PramPlan):
            for v in plan.variables:
                for si, m in enumerate(plan.matrices[v]):
                    name = f"pram_{v}" + (f"_stratum{si}" if len(plan.matrices[v]) > 1 else "") + ".csv"
                    artifacts[name] = m.to_csv()
    from ..catalogue.names import CATALOGUE_FILES

    names = [data_name, spec.output.report, CERTIFICATE, *artifacts,
             *(CATALOGUE_FILES[f] for f in getattr(spec.output, "catalogue", ()))]
    if len(set(names)) != len(names):
        raise InputError(f"output: the file names {sorted(names)} collide; rename the data or report file.")
    with staged_release(out_dir, int_dir, overwrite=overwrite) as stage:
        pub, intl = stage.public, stage.internal
        keep_order = bool(spec.output.keep_order)
        frame = current.frame if keep_order else \
            current.frame.map_partitions(_shuffle_partition, entropy, meta=current.frame._meta,
                                         align_dataframes=False)
        # worker failures come back from ``runner`` as one EngineError naming the pass
        if not keep_order:
            order = dd.from_map(_order_part, list(range(current.npartitions)), entropy=entropy,
                                offsets=current.offsets, enforce_metadata=False,
                                meta=pd.DataFrame({"released_row": np.array([], np.int64),
                                                   "input_row": np.array([], np.int64)}))
            write_partitioned(order, intl / "row_order.parquet", file_format="parquet",
                              n_records=run.n_records, runner=lambda lazy: runner(lazy, "the row order"))
        write_partitioned(frame, pub / data_name, file_format=fmt, inputs=(spec.input_path,),
                          n_records=run.n_records,
                          runner=lambda lazy: runner(lazy, "masking and writing the release"))
        for name, text in artifacts.items():
            atomic_write_text(pub / name, text)
        # the one public-report template, as the in-memory engine writes it
        atomic_write_text(pub / spec.output.report,
                          outcome_report_html(run, data_file=data_name, artifacts=sorted(artifacts)))
        from ..report.catalogue_files import write_dask_catalogue  # DDI, data package, SATRE record

        write_dask_catalogue(run, pub, columns=current.frame._meta, artifacts=sorted(artifacts),
                             certificate=lambda: dask_certificate(run, pub, artifacts=sorted(artifacts), data_format=fmt,
                                                                  columns=[str(c) for c in current.frame.columns],
                                                                  run_id=stage.run_id))
        cert = dask_certificate(run, pub, artifacts=sorted(artifacts), data_format=fmt,
                                columns=[str(c) for c in current.frame.columns], run_id=stage.run_id)
        atomic_write_text(pub / CERTIFICATE, json.dumps(seal(cert, key), indent=2) + "\n")
        internal_cert = dict(cert, kind="internal",
                             input={"path": str(spec.input_path),
                                    "sha256": sha256_file(spec.input_path) if Path(spec.input_path).is_file() else None})
        atomic_write_text(intl / INTERNAL_CERTIFICATE,
                          json.dumps(seal(jsonable(internal_cert), key), indent=2) + "\n")
        internal = run.internal_dict()
        internal["run_id"] = stage.run_id
        internal["output"] = {"public_folder": out_dir.name, "internal_folder": int_dir.name,
                              "data": data_name}
        internal["row_order"] = ({"shuffled": False, "rule": "kept: released row i is input row i"}
                                 if keep_order else
                                 {"shuffled": True, "file": "row_order.parquet",
                                  "rule": "released row i is input row input_row[i] (0-based); rows move "
                                          "within their partition only"})
        atomic_write_text(intl / f"{stem}.json", json.dumps(internal, indent=2))
    paths = {"data": out_dir / data_name, "report": out_dir / spec.output.report,
             "certificate": out_dir / CERTIFICATE, "internal_json": int_dir / f"{stem}.json",
             "internal_certificate": int_dir / INTERNAL_CERTIFICATE, "internal_directory": int_dir}
    if not spec.output.keep_order:
        paths["row_order"] = int_dir / "row_order.parquet"
    for name in artifacts:
        paths[f"artifact:{name}"] = out_dir / name
    return paths


def dask_certificate(run: DaskRelease, folder: Path, *, artifacts: Sequence[str], data_format: str,
                     columns: Sequence[str], run_id: str | None = None) -> dict:
    """The public certificate of a Dask release (format of :mod:`sdckit.report.certificate`):
    the SHA-256 of every data part, published matrix and the public report, the versions, the
    spec without its seed, the gate with its measured values, and each step's summary."""
    from .. import __version__

    spec = run.spec
    data_name = spec.output.data

    def entry(name: str, role: str) -> dict:
        return file_entry(folder, name, role)

    parts = sorted(p.relative_to(folder).as_posix() for p in (folder / data_name).rglob("*") if p.is_file())
    files = [entry(n, "data_part") for n in parts]
    files += [entry(a, "pram_matrix") for a in artifacts]
    files.append(entry(spec.output.report, "public_report"))
    from ..catalogue.names import CATALOGUE_FILES  # DDI codebook, data package, SATRE record

    files += [entry(name, "catalogue") for name in CATALOGUE_FILES.values()
              if name not in artifacts and (folder / name).is_file()]
    files += mark_entry(folder)
    gate = [{"name": g["name"], "threshold": g["threshold"], "measured": gate_headline(g["name"], g["value"]),
             "value": g["value"], "passed": bool(g["passed"]), "detail": g["detail"]} for g in run.gate]
    matrices = []
    for plan in run.plans:
        if isinstance(plan, PramPlan):
            for v in plan.variables:
                ms = plan.matrices[v]
                for si, m in enumerate(ms):
                    name = f"pram_{v}" + (f"_stratum{si}" if len(ms) > 1 else "") + ".csv"
                    entry_m = {"file": name, "json": None, "variables": [v],
                               "stratum": "all" if len(ms) == 1 else f"stratum {si}",
                               "min_diagonal": float(m.min_diagonal), "invariant": False}
                    freq = np.asarray(plan.counts[v], dtype=float).reshape(len(ms), -1)[si]
                    if freq.sum() > 0:  # p P = p holds for an invariant matrix: certify it when it does
                        pf = freq / freq.sum()
                        if float(np.abs(pf @ np.asarray(m.to_dense(), dtype=float) - pf).max()) <= 1e-10:
                            entry_m.update(invariant=True, frequencies=[float(x) for x in freq])
                    matrices.append(entry_m)
    cert = {"format": FORMAT, "kind": "public", "engine": "dask", "run_id": run_id,
            "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "sdckit_version": __version__, "dependencies": dependency_versions(),
            "optional_dependencies": dependency_versions(extras=True),
            "passed": run.verdict == "passed", "verdict": run.public_dict()["verdict_text"],
            "data": {"file": data_name, "partitioned": True, "format": data_format,
                     "n_records": run.n_records, "n_parts": len(parts),
                     "columns": list(columns),
                     "roles": {k: v for k, v in spec.roles.items()},
                     "na_values": list(spec.na_values)},
            "files": files, "gate": gate,
            "steps": run.public_dict()["steps"],
            "guarantees_hold": None,
            "checks": {"matrices": matrices},
            "spec": public_spec(run)}
    return jsonable(cert)
