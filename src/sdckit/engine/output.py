"""What a Dask release writes: the public folder (data parts, PRAM matrices, public report,
certificate) and its internal sibling (internal report with the seeds, internal certificate,
row order), staged and switched in together as the in-memory engine does
(:func:`sdckit.release.release_folders`, :func:`sdckit.io.atomic.staged_release`), both named by
the run's random id, the certificates signed by the steward's key when one is given
(:mod:`sdckit.report.signing`).
"""

from __future__ import annotations

import datetime as _dt
import html
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from ..io.atomic import atomic_write_text, staged_release
from ..release import ROW_ORDER_KEY, refuse_inputs_inside, release_folders, signing_key_for
from ..report.certificate import (CERTIFICATE, FORMAT, INTERNAL_CERTIFICATE, dependency_versions,
                                  file_entry, mark_entry, public_spec, seal, sha256_file)
from ..report.narrative import gate_headline
from ..result import jsonable
from .frame import PartitionedMicrodata, write_partitioned
from .masking import PramPlan

#: a :class:`sdckit.engine.run.DaskRelease`; not imported: run.py imports this module
DaskRelease = Any

__all__ = ["write_release", "dask_certificate", "public_html", "partition_order", "ROW_ORDER_KEY"]


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
    names = [data_name, spec.output.report, CERTIFICATE, *artifacts]
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
        atomic_write_text(pub / spec.output.report, public_html(run, sorted(artifacts)))
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
            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
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


#: the risk figures the public report shows, in plain words (key of the risk summary -> label)
_RISK_ROWS = (("n_records", "records"), ("n_combinations", "key combinations"),
              ("n_sample_uniques", "records unique on the keys (f_k = 1)"),
              ("k_reached", "smallest class size k reached"),
              ("global_risk", "global risk (expected share of re-identifications)"),
              ("expected_reidentifications", "expected re-identifications"),
              ("max_individual_risk", "largest individual risk"),
              ("n_above_threshold", "records above the individual-risk threshold"),
              ("n_records_with_missing_keys", "records with a missing key"))

_CSS = """body { font-family: system-ui, -apple-system, "Segoe UI", "Liberation Sans", sans-serif; max-width: 1000px;
 margin: 1.2em auto; padding: 0 1em; color: #1d2430; line-height: 1.45; }
h1 { border-bottom: 3px solid #2b6cb0; padding-bottom: .2em; font-size: 1.7em; }
h2 { margin-top: 1.6em; color: #2b6cb0; border-bottom: 1px solid #cbd2d9; }
table { border-collapse: collapse; margin: .5em 0 1em; }
th, td { border: 1px solid #cbd2d9; padding: .25em .6em; text-align: left; vertical-align: top;
 font-variant-numeric: tabular-nums; }
th { background: #f0f4f8; } td.num { text-align: right; }
.verdict { border: 3px solid #276749; border-radius: 6px; padding: .6em 1.1em; background: #f0fff4; }
.verdict.failed { border-color: #c53030; background: #fff5f5; }
.ok { color: #276749; font-weight: 600; } .fail { color: #c53030; font-weight: bold; }
.step { border-left: 4px solid #90cdf4; padding-left: 1em; margin: 1em 0; }
.scope { color: #4a5568; font-size: .95em; }"""


def _fmt(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        return f"{v:,.0f}" if abs(v) >= 1e5 else f"{v:.4g}"
    if isinstance(v, (list, tuple)):
        return ", ".join(map(str, v)) if v else "none"
    return str(v)


def _step_sentence(d: dict) -> str:
    m = d["method"]
    if m == "pram":
        lows = ", ".join(f"{v} {x['min_diagonal']:.3g}" for v, x in d.get("matrices", {}).items())
        strata = f", within strata of {', '.join(d['strata'])}" if d.get("strata") else ""
        return (f"PRAM changed the categories of {', '.join(d['variables'])} at random by published "
                f"transition matrices{strata}; each keeps every category with probability at least "
                f"(smallest diagonal): {lows}.")
    if m == "noise":
        return (f"{str(d.get('kind', '')).capitalize()} noise at level {d.get('level')} was added to "
                f"{', '.join(d['variables'])}.")
    if m == "rank_swap":
        return (f"Rank swapping exchanged values of {', '.join(d['variables'])} that are at most "
                f"{d.get('window_ranks')} ranks apart (p = {d.get('p')}).")
    if m == "microaggregation":
        return (f"MDAV replaced {', '.join(d['variables'])} by group means over groups of "
                f"{d.get('k')} to {2 * int(d.get('k', 1)) - 1} records.")
    return f"{m} ran" + (f" on {', '.join(map(str, d['columns']))}" if d.get("columns") else "") + "."


def public_html(run: DaskRelease, artifacts: Sequence[str] = ()) -> str:
    """The public report of a Dask release: the verdict, the risk before and after in plain
    words, one section a step (a sentence, its settings, its scope at scale), the gate, and
    the published files. No seed, no path of the machine."""
    d = run.public_dict()
    esc = html.escape
    passed = d["passed"]
    parts = [f"<h1>Release report: {d['n_records']:,} records (Dask engine)</h1>"]
    gate_rows = "".join(
        f"<tr><td>{esc(g['name'])}</td><td class='num'>{esc(_fmt(g['threshold']))}</td>"
        f"<td>{esc(g['detail'])}</td><td class='{'ok' if g['passed'] else 'fail'}'>"
        f"{'passed' if g['passed'] else 'FAILED'}</td></tr>" for g in d["gate"])
    verdict = d["verdict_text"]  # "Passed: ...", "FAILED: ..." or "NOT CHECKED: <reason>"
    passed = d["verdict"] == "passed"
    parts.append(f"<div class='verdict{'' if passed else ' failed'}'><h2>{esc(verdict)}</h2>"
                 f"<p>{d['n_records']:,} records were read in {d['n_partitions']} partitions and "
                 f"masked by {len(d['steps'])} step(s): "
                 f"{esc(', '.join(s['method'] for s in d['steps']) or 'none')}.</p>"
                 + (f"<table><tr><th>threshold</th><th>limit</th><th>measured on the release</th>"
                    f"<th>verdict</th></tr>{gate_rows}</table>" if d["gate"] else "") + "</div>")
    before, after = d["risk_before"], d["risk_after"]
    head = "<tr><th>figure</th><th>before masking</th>" + ("<th>released</th>" if after else "") + "</tr>"
    rows = "".join(f"<tr><td>{esc(label)}</td><td class='num'>{esc(_fmt(before.get(key)))}</td>"
                   + (f"<td class='num'>{esc(_fmt(after.get(key)))}</td>" if after else "") + "</tr>"
                   for key, label in _RISK_ROWS if key in before)
    parts += ["<h2>Re-identification risk on the key variables</h2>",
              f"<p>Individual risk by the {esc(str(before.get('risk_method', '')))} estimate"
              f"{' with sampling weights' if before.get('weighted') else ''}. "
              + ("" if after else "The released data's risk was not measured: the gate has no risk threshold.")
              + "</p>", f"<table>{head}{rows}</table>"]
    kv = before.get("k_violations") or {}
    if kv:
        krows = "".join(f"<tr><td>k = {esc(str(k))}</td><td class='num'>{_fmt(v)}</td>"
                        + (f"<td class='num'>{_fmt((after.get('k_violations') or {}).get(k))}</td>" if after else "")
                        + "</tr>" for k, v in kv.items())
        parts.append("<p>Records in key classes smaller than k:</p>"
                     f"<table>{head.replace('figure', 'k')}{krows}</table>")
    parts.append("<h2>What was done</h2>")
    for i, st in enumerate(d["steps"], 1):
        settings = {k: v for k, v in st.items() if k not in ("method", "matrices", "scope", "guarantee")
                    and not isinstance(v, dict)}
        srows = "".join(f"<tr><th>{esc(k)}</th><td>{esc(_fmt(v))}</td></tr>" for k, v in settings.items())
        parts.append(f"<div class='step'><h3>Step {i}: {esc(st['method'])}</h3>"
                     f"<p>{esc(_step_sentence(st))}</p>"
                     + (f"<p>Guarantee: {esc(st['guarantee'])}.</p>" if st.get("guarantee") else "")
                     + (f"<p class='scope'>At scale: {esc(st['scope'])}.</p>" if st.get("scope") else "")
                     + (f"<table>{srows}</table>" if srows else "") + "</div>")
    files = [run.spec.output.data + "/ (data parts)"] + [f"{a} (PRAM transition matrix)" for a in sorted(artifacts)]
    parts += ["<h2>Published files</h2>", "<ul>" + "".join(f"<li>{esc(f)}</li>" for f in files)
              + f"<li>{esc(run.spec.output.report)} (this report)</li><li>certificate.json (SHA-256 of "
              "every file; check with <code>sdckit verify</code>)</li></ul>"]
    return ("<!doctype html><html lang='en'><head><meta charset='utf-8'><title>Release report</title>"
            f"<style>{_CSS}</style></head><body>" + "".join(parts) + "</body></html>")
