"""The catalogue files of a microdata release, written into its public folder before the
certificate (which lists them with their SHA-256, so ``sdckit verify`` covers them):

* ``codebook.xml``: DDI-Codebook 2.5 (:mod:`sdckit.catalogue.ddi`): the released variables,
  labels, value labels that still fit, missing codes, roles, what was done to each variable in
  plain words, the published PRAM matrices as related materials, the risk statement;
* ``datapackage.json``: Frictionless data package (:mod:`sdckit.catalogue.frictionless`);
* ``satre_record.json``: the SATRE disclosure-control record (:mod:`sdckit.catalogue.satre`).

``[output] catalogue`` chooses which (default all three); ``[output] licence`` and
``[output] description`` feed the data package. No file holds a seed or a path.

A Dask release (:mod:`sdckit.engine`) writes the same three files
(:func:`write_dask_catalogue`): its data are a folder of parts, so the data package lists one
resource per part (each with the schema and its SHA-256) and the codebook the parts' folder;
the engine reads no DDI, so the codebook holds the names, types, roles, treatments, matrices
and the risk statement, without labels.

A table release (:mod:`sdckit.report.table_release`) writes its own set with the same key
(:func:`write_table_catalogue`): ``sdmx`` (``sdmx_data.csv``, SDMX-CSV 2.0 with ``OBS_STATUS``
and ``CONF_STATUS`` per cell, and ``sdmx_structure.xml``, its SDMX-ML 2.1 data structure
definition), ``frictionless`` (``datapackage.json`` describing the table CSV and the SDMX-CSV)
and ``satre``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..catalogue.names import (
    CATALOGUE_FILES,
    CATALOGUE_FORMATS,
    TABLE_CATALOGUE_FILES,
    TABLE_CATALOGUE_FORMATS,
)

__all__ = ["CATALOGUE_FILES", "CATALOGUE_FORMATS", "TABLE_CATALOGUE_FILES", "TABLE_CATALOGUE_FORMATS",
           "CatalogueSource", "write_catalogue", "write_catalogue_files", "write_dask_catalogue",
           "write_table_catalogue", "check_table_catalogue", "variable_treatment", "risk_statement"]

_VARIABLE_PARAMS = ("variable", "variables", "column", "columns", "hierarchy")


def _treatment(steps: list[tuple[str, dict, dict]], released: set[str], key_vars: list[str],
               n_records: int) -> dict[str, list[str]]:
    from .narrative import step_sentence

    out: dict[str, list[str]] = {}
    for method, params, summary in steps:
        sentence = step_sentence(method, params or {}, summary or {}, n_records)
        named: list[str] = []
        for key in _VARIABLE_PARAMS:
            v = (params or {}).get(key, (summary or {}).get(key))
            if isinstance(v, str):
                named.append(v)
            elif isinstance(v, (list, tuple)):
                named += [str(x) for x in v]
        for col in named or key_vars:
            if col in released:
                out.setdefault(col, []).append(sentence)
    return out


def variable_treatment(run: Any) -> dict[str, list[str]]:
    """Released column -> the plain-words sentence of every step that touched it. A step that
    names no column (e.g. local suppression on the key variables) applies to the key variables."""
    return _treatment([(r.method, r.params or {}, r.summary or {}) for r in run.results],
                      set(map(str, run.released.columns)), list(run.released.key_vars), run.released.n_records)


def _gate_field(o: Any, name: str) -> Any:
    return o.get(name) if isinstance(o, dict) else getattr(o, name)


def risk_statement(run: Any) -> str:
    """The release's verdict and every gate threshold with its measured value, in words (the
    gate's outcomes as objects, in memory, or as dicts, from the Dask engine)."""
    from .narrative import gate_measured

    lines = [run.verdict_text + "."]
    for o in run.gate:
        name = _gate_field(o, "name")
        lines.append(f"{name} = {_gate_field(o, 'threshold')}: {gate_measured(name, _gate_field(o, 'value'))} "
                     f"({'met' if _gate_field(o, 'passed') else 'NOT met'}).")
    return " ".join(lines)


@dataclass(frozen=True)
class CatalogueSource:
    """What the catalogue files describe, whichever engine wrote the release.

    ``frame`` has the released columns and their types (the data, or an empty frame with the
    dtypes of a partitioned release); ``data_files`` the data's files inside the public
    folder (one, or every part); ``roles`` column roles as :class:`sdckit.Microdata` holds them;
    ``meta`` a :class:`sdckit.io.labels.DatasetMeta` (labels, missing codes) or ``None``;
    ``categorical`` the columns whose released values are listed as categories (needs the
    data in ``frame``); ``certificate`` a callable returning the certificate's fields as the
    folder stands (for the SATRE record).
    """

    title: str
    data_file: str
    data_files: tuple
    frame: Any
    n_records: int
    roles: dict
    certificate: Any
    meta: Any = None
    value_labels: Any = None
    treatment: dict = field(default_factory=dict)
    artifacts: tuple = ()
    matrix_titles: dict = field(default_factory=dict)
    risk_statement: str | None = None
    description: str | None = None
    licence: str | None = None
    categorical: tuple = ()


class _Described:
    """The duck-typed microdata :func:`sdckit.catalogue.ddi.codebook_from_microdata` reads."""

    def __init__(self, src: CatalogueSource) -> None:
        from ..io.labels import DatasetMeta

        self.frame, self.roles, self.n_records = src.frame, src.roles, src.n_records
        self.meta = src.meta if src.meta is not None else DatasetMeta()


def write_catalogue(run: Any, folder: str | Path, *, data_file: str, artifacts: list[str],
                    formats: tuple[str, ...] = CATALOGUE_FORMATS, report_file: str | None = None,
                    run_id: str | None = None) -> list[str]:
    """Write the chosen catalogue files of an in-memory release into the (staging) public
    ``folder`` after the data, the published files and the report are there; returns the names
    written."""
    from ..io.labels import delivery_meta
    from .certificate import certificate_dict

    folder = Path(folder)
    spec = run.spec
    raw_out = (spec.raw.get("output") or {}) if spec is not None else {}
    raw_rep = (spec.raw.get("report") or {}) if spec is not None else {}
    meta = delivery_meta(run.original, run.released, run.results)
    titles = {}  # published matrix file -> its variables (and stratum), as the PRAM step names them
    for r in run.results:
        info = r.summary.get("matrices") if isinstance(r.summary, dict) else None
        for title, m in (info or {}).items():
            if isinstance(m, dict) and m.get("file"):
                titles[m["file"]] = title
    src = CatalogueSource(
        title=str(raw_rep.get("dataset") or Path(data_file).stem), data_file=data_file, data_files=(data_file,),
        frame=run.released.frame, n_records=run.released.n_records, roles=run.released.roles, meta=meta,
        value_labels=meta.value_labels, treatment=variable_treatment(run), artifacts=tuple(sorted(artifacts)),
        matrix_titles=titles, risk_statement=risk_statement(run), description=raw_out.get("description"),
        licence=raw_out.get("licence"), categorical=tuple(run.released.key_vars),
        certificate=lambda: certificate_dict(run, folder, data_file=data_file, report_file=report_file,
                                             run_id=run_id))
    return write_catalogue_files(src, folder, formats=formats)


def write_dask_catalogue(run: Any, folder: str | Path, *, columns: Any, artifacts: list[str], certificate: Any,
                         formats: tuple[str, ...] | None = None) -> list[str]:
    """Write the catalogue files of a Dask release (:class:`sdckit.engine.DaskRelease`) into
    its (staging) public ``folder`` after the data parts, the matrices and the report are there.

    ``columns`` is an empty frame with the released columns' dtypes (the partitioned frame's
    ``_meta``); ``certificate`` a callable returning the certificate's fields as the folder
    stands (:func:`sdckit.engine.output.dask_certificate`). ``formats`` defaults to the spec's
    ``[output] catalogue``.
    """
    folder = Path(folder)
    spec = run.spec
    raw_out = (spec.raw.get("output") or {}) if spec.raw else {}
    raw_rep = (spec.raw.get("report") or {}) if spec.raw else {}
    data_file = spec.output.data
    parts = tuple(sorted(p.relative_to(folder).as_posix() for p in (folder / data_file).rglob("*") if p.is_file()))
    released = set(map(str, columns.columns))
    roles = {k: v for k, v in (spec.roles or {}).items() if v}
    key_vars = [str(c) for c in roles.get("key_vars", ()) or ()]
    params = (list(spec.step_params) if len(spec.step_params) == len(run.summaries) else
              [{"variables": list(d.get("variables", []) or [])} for d in run.summaries])
    steps = [(d.get("method"), dict(p), dict(d)) for d, p in zip(run.summaries, params)]
    src = CatalogueSource(
        title=str(raw_rep.get("dataset") or Path(data_file).stem), data_file=data_file, data_files=parts,
        frame=columns, n_records=run.n_records, roles=roles,
        treatment=_treatment(steps, released, key_vars, run.n_records), artifacts=tuple(sorted(artifacts)),
        risk_statement=risk_statement(run), description=raw_out.get("description"), licence=raw_out.get("licence"),
        certificate=certificate)
    return write_catalogue_files(src, folder, formats=tuple(getattr(spec.output, "catalogue", CATALOGUE_FORMATS))
                                 if formats is None else formats)


def write_catalogue_files(src: CatalogueSource, folder: str | Path, *,
                          formats: tuple[str, ...] = CATALOGUE_FORMATS) -> list[str]:
    """Write the chosen catalogue files of ``src`` into ``folder``; returns the names written."""
    from ..catalogue.ddi import DdiMaterial, codebook_from_microdata, write_ddi
    from ..catalogue.frictionless import datapackage_dict, package_name
    from ..catalogue.satre import satre_record
    from ..io.atomic import atomic_write_text
    from .certificate import sha256_file

    folder = Path(folder)
    written: list[str] = []
    meta = src.meta
    if "ddi" in formats:
        materials = []
        for name in src.artifacts:
            if name.startswith("pram_") and name.endswith(".csv"):
                var = src.matrix_titles.get(name, name[len("pram_"):-len(".csv")])
                materials.append(DdiMaterial(uri=name, title=f"PRAM transition matrix of {var}",
                                             description=(f"Published transition matrix P of the PRAM applied to "
                                                          f"{var}: P[i, j] is the probability that category i "
                                                          "was released as j."),
                                             kind="PRAM transition matrix"))
        cb = codebook_from_microdata(_Described(src), title=src.title, data_file=src.data_file,
                                     treatment=src.treatment, materials=materials,
                                     risk_statement=src.risk_statement, value_labels=src.value_labels,
                                     abstract=src.description)
        write_ddi(cb, folder / CATALOGUE_FILES["ddi"])
        written.append(CATALOGUE_FILES["ddi"])
    if "frictionless" in formats:
        resources = []
        for k, name in enumerate(src.data_files):
            path = folder / name
            pkg = datapackage_dict(src.frame, name, title=src.title, description=src.description,
                                   licence=src.licence,
                                   column_labels=meta.column_labels if meta is not None else None,
                                   value_labels=meta.value_labels if meta is not None else None,
                                   missing_codes={c: [r["lo"] for r in rs if r.get("lo") == r.get("hi")]
                                                  for c, rs in meta.missing_ranges.items()} if meta is not None
                                   else None,
                                   categorical=src.categorical,
                                   sha256=sha256_file(path) if path.is_file() else None,
                                   n_bytes=path.stat().st_size if path.is_file() else None)
            res = pkg["resources"][0]
            if len(src.data_files) > 1:  # one resource per part of a partitioned release
                res["name"] = package_name(f"{Path(src.data_file).stem}-part-{k}")
            resources.append(res)
        pkg["resources"] = resources
        atomic_write_text(folder / CATALOGUE_FILES["frictionless"], json.dumps(pkg, indent=2) + "\n")
        written.append(CATALOGUE_FILES["frictionless"])
    if "satre" in formats:
        # the certificate's fields as they stand now (data, published files, report, the
        # catalogue files written above); the certificate itself then lists this record too
        atomic_write_text(folder / CATALOGUE_FILES["satre"], json.dumps(satre_record(src.certificate()), indent=2)
                          + "\n")
        written.append(CATALOGUE_FILES["satre"])
    return written


def check_table_catalogue(value: Any, where: str = "output.catalogue") -> tuple[str, ...]:
    """A table spec's ``[output] catalogue`` (a format or a list of them) as a tuple; ``None``
    means every format."""
    from ..errors import SpecError

    if value is None:
        return TABLE_CATALOGUE_FORMATS
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)):
        raise SpecError(f"{where}: must be a list of {', '.join(TABLE_CATALOGUE_FORMATS)}, got {value!r}")
    for i, v in enumerate(items):
        if v not in TABLE_CATALOGUE_FORMATS:
            raise SpecError(f"{where}[{i}]: must be one of {', '.join(TABLE_CATALOGUE_FORMATS)} for a table release, "
                            f"got {v!r}")
    return tuple(dict.fromkeys(items))


def write_table_catalogue(content: Any, folder: str | Path, *, data_file: str, certificate: Any,
                          formats: tuple[str, ...] = TABLE_CATALOGUE_FORMATS, code: str = "x",
                          title: str | None = None, description: str | None = None,
                          licence: str | None = None) -> list[str]:
    """Write a table release's catalogue files into the (staging) public ``folder`` after the
    table CSV and the report; returns the names written.

    ``content`` is a :class:`sdckit.report.table_release.TableContent` (the published values and
    the public statuses ``safe``, ``suppressed``, ``rounded``, ``perturbed``); ``certificate``
    is a callable returning the certificate's fields as the folder stands (for the SATRE
    record). The SDMX-CSV codes every suppressed cell ``CONF_STATUS = C`` (primary and
    secondary are not told apart in public) with no value, every rounded or perturbed cell
    ``OBS_STATUS = E``.
    """
    import numpy as np
    import pandas as pd

    from ..catalogue.frictionless import datapackage_dict, table_schema
    from ..catalogue.satre import satre_record
    from ..catalogue.sdmx import sdmx_identifier, write_sdmx_csv
    from ..io.atomic import atomic_write_text
    from .certificate import sha256_file

    folder = Path(folder)
    stem = Path(data_file).stem
    title = title or stem
    written: list[str] = []
    status = np.asarray(content.status, dtype=object)
    values = np.asarray(content.values, dtype=float)
    if "sdmx" in formats:
        data_name, structure_name = TABLE_CATALOGUE_FILES["sdmx"]
        write_sdmx_csv(content.table, status, folder / data_name, values=values,
                       structure_id=f"SDCKIT:{sdmx_identifier(stem)}(1.0.0)", structure_path=folder / structure_name)
        written += [data_name, structure_name]
    if "frictionless" in formats:
        frame = content.frame(code)
        suppressed = status == "suppressed"
        frame["value"] = np.where(suppressed, np.nan, values)  # typed as a number; the code is a missing value
        labels = {"value": f"Published value ({code} where suppressed)",
                  "status": "Cell status: safe, suppressed, rounded or perturbed",
                  "lower": "Lower end of the cell's confidence interval",
                  "upper": "Upper end of the cell's confidence interval"}
        dims = tuple(map(str, content.table.dims))
        pkg = datapackage_dict(frame, data_file, title=str(title), description=description, licence=licence,
                               column_labels=labels, missing_codes={"value": [code]}, categorical=(*dims, "status"),
                               sha256=sha256_file(folder / data_file), n_bytes=(folder / data_file).stat().st_size)
        if "sdmx" in formats:  # the SDMX-CSV as a second resource of the package
            name = TABLE_CATALOGUE_FILES["sdmx"][0]
            sdmx = pd.read_csv(folder / name, dtype=str, keep_default_na=False)
            sdmx["OBS_VALUE"] = pd.to_numeric(sdmx["OBS_VALUE"].where(sdmx["OBS_VALUE"] != ""))
            schema = table_schema(sdmx, categorical=("STRUCTURE", "STRUCTURE_ID", "ACTION", *dims, "OBS_STATUS",
                                                     "CONF_STATUS"),
                                  column_labels={"OBS_VALUE": "Published value (empty where suppressed)",
                                                 "OBS_STATUS": "SDMX observation status (CL_OBS_STATUS)",
                                                 "CONF_STATUS": "SDMX confidentiality status (CL_CONF_STATUS)"})
            pkg["resources"].append({"name": "sdmx-data", "path": name, "profile": "tabular-data-resource",
                                     "format": "csv", "mediatype": "application/vnd.sdmx.data+csv; version=2.0.0",
                                     "encoding": "utf-8", "hash": f"sha256:{sha256_file(folder / name)}",
                                     "bytes": (folder / name).stat().st_size, "schema": schema})
        atomic_write_text(folder / TABLE_CATALOGUE_FILES["frictionless"][0], json.dumps(pkg, indent=2) + "\n")
        written.append(TABLE_CATALOGUE_FILES["frictionless"][0])
    if "satre" in formats:
        name = TABLE_CATALOGUE_FILES["satre"][0]
        atomic_write_text(folder / name, json.dumps(satre_record(certificate()), indent=2) + "\n")
        written.append(name)
    return written
