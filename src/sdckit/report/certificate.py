"""The release certificate: ``certificate.json`` beside the report, in the manner of ARX's
certificates for its outputs.

The public certificate holds

* the SHA-256 of the released data file, of every published file (PRAM matrices), of the
  public report and of the catalogue files (``codebook.xml``, ``datapackage.json``,
  ``satre_record.json``: :mod:`sdckit.report.catalogue_files`);
* sdckit's version and the versions of its dependencies as installed (the locked versions:
  read with :mod:`importlib.metadata` for every requirement of the sdckit distribution);
* the release spec without its seed (the input path reduced to its file name);
* every gate threshold with its measured value and verdict, and the release's verdict in
  words ("Passed: ...", or "NOT CHECKED: <reason>" for a release without a risk threshold,
  whose ``passed`` is then false);
* every step's guarantees with the checker's verdict;
* what :mod:`sdckit.verify` re-checks from the released files alone (key variables and
  thresholds, and for each published PRAM matrix its promised minimum diagonal and, for an
  invariant matrix, the frequencies ``p`` with ``p P = p``).

The internal certificate (``internal_certificate.json``) adds the input file's SHA-256 and
path. Neither holds a seed.

Both name the run they belong to (``run_id``: a random id, the one in each folder's release
mark, never derived from the seed), list the public folder's release mark among the files, and
carry the steward's Ed25519 signature when the release is written with a signing key
(``signature``; ``null`` otherwise; see :mod:`sdckit.report.signing`).

References
----------
Prasser, F. and Kohlmayer, F. (2015). Putting statistical disclosure control into practice:
the ARX data anonymization tool. In *Medical Data Privacy Handbook*, Springer, 111-148.
"""

from __future__ import annotations

import copy
import datetime as _dt
import functools
import hashlib
import json
import os
import re
from importlib import metadata
from pathlib import Path
from typing import Any

from ..io.atomic import atomic_write_text
from ..result import jsonable, public_params
from .narrative import gate_headline, verdict_words

#: a :class:`sdckit.release.ReleaseRun`; not imported: release.py imports this module
ReleaseRun = Any

__all__ = ["sha256_file", "file_entry", "dependency_versions", "public_spec", "certificate_dict", "write_certificate",
           "seal", "mark_entry", "CERTIFICATE", "INTERNAL_CERTIFICATE", "FORMAT"]

CERTIFICATE = "certificate.json"
INTERNAL_CERTIFICATE = "internal_certificate.json"
#: version 2: run id, the release mark among the files, and the signature field
FORMAT = "sdckit-certificate/2"


def sha256_file(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    """Hex SHA-256 of a file, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(chunk), b""):
            h.update(block)
    return h.hexdigest()


def file_entry(folder: str | os.PathLike, name: str, role: str) -> dict:
    """A certificate's line for one published file: its name (relative to the folder), role,
    SHA-256 and size."""
    p = Path(folder) / name
    return {"name": name, "role": role, "sha256": sha256_file(p), "bytes": p.stat().st_size}


def mark_entry(folder: str | os.PathLike) -> list[dict]:
    """The certificate's line for the folder's release mark (which names the run), if there is one."""
    from ..io.atomic import RELEASE_MARK

    return [file_entry(folder, RELEASE_MARK, "release_mark")] if (Path(folder) / RELEASE_MARK).is_file() else []


def seal(cert: dict, signing_key: Any = None) -> dict:
    """The certificate as written: signed by the steward's private key (an Ed25519 key object
    or a key file), or with ``"signature": null`` when there is no key."""
    if signing_key is None:
        return dict(cert, signature=None)
    from .signing import load_private_key, sign_certificate

    if isinstance(signing_key, (str, os.PathLike)):
        signing_key = load_private_key(signing_key)
    return sign_certificate(dict(cert), signing_key)


def dependency_versions(*, extras: bool = False) -> dict[str, str]:
    """Installed version of every requirement of sdckit, by distribution name: the runtime
    requirements, or with ``extras=True`` those of the optional extras (test, dask) that are
    installed (read from the installed metadata once per process)."""
    return dict(_dependency_versions(extras))


@functools.lru_cache(maxsize=2)
def _dependency_versions(extras: bool) -> tuple[tuple[str, str], ...]:
    try:
        reqs = metadata.requires("sdckit") or []
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        reqs = []
    out: dict[str, str] = {}
    for req in reqs:
        if ("extra ==" in req) != extras:
            continue
        name = re.split(r"[\s;\[<>=!~]", req, maxsplit=1)[0]
        if not name or name in out:
            continue
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue  # an optional extra that is not installed
    return tuple(sorted(out.items(), key=lambda kv: kv[0].lower()))


def public_spec(run: ReleaseRun) -> dict | None:
    if run.spec is None:
        return None
    raw = copy.deepcopy(run.spec.raw)
    run_sec = raw.get("run")
    if isinstance(run_sec, dict):
        run_sec.pop("seed", None)  # a seed is a secret
        if not run_sec:
            raw.pop("run")
    inp = raw.get("input")
    if isinstance(inp, dict):
        for key in ("path", "ddi"):  # file names only, never paths
            if key in inp:
                inp[key] = Path(str(inp[key])).name
    out = raw.get("output")
    if isinstance(out, dict):  # folder names only: no paths of the steward's machine
        for key in ("directory", "internal_directory"):
            if key in out:
                out[key] = Path(str(out[key])).name
        out.pop("signing_key", None)  # a path; the signature names the key by its fingerprint
    gate_tables = [v for v in (raw.get("gate") or {}).values() if isinstance(v, dict)]
    for table in [*(raw.get("steps", []) or []), *gate_tables]:  # file names only, never paths
        for key in list(table):
            if (key == "file" or key.endswith("_file")) and isinstance(table[key], str):
                table[key] = Path(table[key]).name
    return jsonable(raw)


def _matrix_checks(run: ReleaseRun) -> list[dict]:
    """Per published PRAM matrix: its file, variables, promised minimum diagonal, and the
    frequencies p of an invariant matrix (p P = p)."""
    out = []
    for r in run.results:
        matrices = getattr(r, "matrices", None)
        if not matrices:
            continue
        info = (r.summary.get("matrices") or {}) if isinstance(r.summary, dict) else {}
        for group, stratum in matrices:
            title = " x ".join(group) + ("" if stratum == "all" else f" | {stratum}")
            meta = info.get(title) or info.get(" x ".join(group)) or {}
            fname = meta.get("file")
            entry = {"file": fname, "json": (fname[:-4] + ".json") if fname and fname.endswith(".csv") else None,
                     "variables": list(group), "stratum": stratum,
                     "min_diagonal": meta.get("min_diagonal", r.params.get("min_diagonal")),
                     "invariant": bool(meta.get("invariant", False))}
            before = getattr(r, "before", {}).get((group, stratum)) if hasattr(r, "before") else None
            if entry["invariant"] and before is not None:
                entry["frequencies"] = [float(x) for x in before]
            out.append(entry)
    return out


def certificate_dict(run: ReleaseRun, folder: str | os.PathLike, *, public: bool = True,
                     data_file: str | None = None, report_file: str | None = None,
                     run_id: str | None = None) -> dict:
    """The certificate of a written release folder (see the module docstring)."""
    from .. import __version__

    folder = Path(folder)
    spec = run.spec
    data_name = data_file or (spec.output.data if spec is not None else "released.csv")
    report_name = report_file or (spec.output.report if spec is not None else "report.html")
    artifacts = sorted({name for r in run.results for name in r.artifacts})

    def entry(name: str, role: str) -> dict:
        return file_entry(folder, name, role)

    files = [entry(data_name, "data")]
    files += [entry(a, "pram_matrix" if a.startswith("pram_") else "published") for a in artifacts
              if (folder / a).exists()]
    if (folder / "column_names.csv").exists():  # SPSS/Stata names: original -> delivered
        files.append(entry("column_names.csv", "column_names"))
    if (folder / report_name).exists():
        files.append(entry(report_name, "public_report"))
    from ..catalogue.names import CATALOGUE_FILES  # DDI codebook, data package, SATRE record

    files += [entry(name, "catalogue") for name in CATALOGUE_FILES.values()
              if name not in artifacts and (folder / name).is_file()]
    files += mark_entry(folder)
    gate = [{"name": o.name, "threshold": o.threshold, "measured": gate_headline(o.name, o.value),
             "value": o.value, "passed": bool(o.passed), "detail": o.detail} for o in run.gate]
    steps = [{"method": r.method, "params": public_params(r.params),
              "guarantees": [g.to_dict() for g in r.guarantees]} for r in run.results]
    cert: dict[str, Any] = {
        "format": FORMAT, "kind": "public" if public else "internal", "run_id": run_id,
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "sdckit_version": __version__, "dependencies": dependency_versions(),
        "optional_dependencies": dependency_versions(extras=True),
        # "passed" only when a risk threshold was checked and met; a release without one on
        # purpose says "NOT CHECKED: <reason>" in its verdict (and "not_checked" holds why)
        "passed": verdict_words(run)[0] == "passed",
        "verdict": verdict_words(run)[1],
        "not_checked": getattr(run, "not_checked", None),
        "data": {"file": data_name, "n_records": run.released.n_records,
                 "columns": list(map(str, run.released.columns)),
                 "roles": run.released.to_dict()["roles"],
                 "na_values": list(spec.na_values) if spec is not None else []},
        "files": files, "gate": gate, "steps": steps,
        "guarantees_hold": all(g.holds for r in run.results for g in r.guarantees),
        "checks": {"matrices": _matrix_checks(run)},
        "spec": public_spec(run),
    }
    if not public:
        src = run.original.meta.source
        cert["input"] = {"path": str(src) if src else None,
                         "sha256": sha256_file(src) if src and Path(src).is_file() else None}
    return jsonable(cert)


def write_certificate(run: ReleaseRun, folder: str | os.PathLike, *, public: bool = True,
                      data_file: str | None = None, report_file: str | None = None,
                      run_id: str | None = None, signing_key: Any = None) -> Path:
    """Write ``certificate.json`` (public) or ``internal_certificate.json`` into ``folder``
    (atomically) after the data, the published files and the report are in place; signed when
    ``signing_key`` (an Ed25519 private key or its file) is given."""
    folder = Path(folder)
    cert = seal(certificate_dict(run, folder, public=public, data_file=data_file, report_file=report_file,
                                 run_id=run_id), signing_key)
    return atomic_write_text(folder / (CERTIFICATE if public else INTERNAL_CERTIFICATE),
                             json.dumps(cert, indent=2) + "\n")


def write_certificates(run: ReleaseRun, folder: str | os.PathLike, *, data_file: str | None = None,
                       report_file: str | None = None, run_id: str | None = None,
                       signing_key: Any = None) -> dict[str, Path]:
    """Write the public and the internal certificate into ``folder``; returns
    ``{"certificate": path, "internal_certificate": path}``."""
    kw = dict(data_file=data_file, report_file=report_file, run_id=run_id, signing_key=signing_key)
    return {"certificate": write_certificate(run, folder, public=True, **kw),
            "internal_certificate": write_certificate(run, folder, public=False, **kw)}
