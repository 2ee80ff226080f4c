"""The catalogue files of a microdata release, written into its public folder before the
certificate (which lists them with their SHA-256, so ``sdckit verify`` covers them):

* ``codebook.xml``: DDI-Codebook 2.5 (:mod:`sdckit.catalogue.ddi`): the released variables,
  labels, value labels that still fit, missing codes, roles, what was done to each variable in
  plain words, the published PRAM matrices as related materials, the risk statement;
* ``datapackage.json``: Frictionless data package (:mod:`sdckit.catalogue.frictionless`);
* ``satre_record.json``: the SATRE disclosure-control record (:mod:`sdckit.catalogue.satre`).

``[output] catalogue`` chooses which (default all three); ``[output] licence`` and
``[output] description`` feed the data package. No file holds a seed or a path.

A table release (:mod:`sdckit.report.table_release`) writes its own set with the same key
(:func:`write_table_catalogue`): ``sdmx`` (``sdmx_data.csv``, SDMX-CSV 2.0 with ``OBS_STATUS``
and ``CONF_STATUS`` per cell, and ``sdmx_structure.xml``, its SDMX-ML 2.1 data structure
definition), ``frictionless`` (``datapackage.json`` describing the table CSV and the SDMX-CSV)
and ``satre``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..catalogue.names import CATALOGUE_FILES, CATALOGUE_FORMATS, TABLE_CATALOGUE_FILES, TABLE_CATALOGUE_FORMATS

__all__ = ["CATALOGUE_FILES", "CATALOGUE_FORMATS", "TABLE_CATALOGUE_FILES", "TABLE_CATALOGUE_FORMATS",
           "write_catalogue", "write_table_catalogue", "check_table_catalogue", "variable_treatment",
           "risk_statement"]

_VARIABLE_PARAMS = ("variable", "variables", "column", "columns", "hierarchy")


def variable_treatment(run: Any) -> dict[str, list[str]]:
    """Released column -> the plain-words sentence of every step that touched it. A step that
    names no column (e.g. local suppression on the key variables) applies to the key variables."""
    from .narrative import step_sentence

    released = set(map(str, run.released.columns))
    out: dict[str, list[str]] = {}
    for r in run.results:
        sentence = step_sentence(r.method, r.params or {}, r.summary or {}, run.released.n_records)
        named: list[str] = []
        for key in _VARIABLE_PARAMS:
            v = (r.params or {}).get(key)
            if isinstance(v, str):
                named.append(v)
            elif isinstance(v, (list, tuple)):
                named += [str(x) for x in v]
        if not named:
            named = list(run.released.key_vars)
        for col in named:
            if col in released:
                out.setdefault(col, []).append(sentence)
    return out


def risk_statement(run: Any) -> str:
    """The release's verdict and every gate threshold with its measured value, in words."""
    from .narrative import gate_measured

    lines = [run.verdict_text + "."]
    for o in run.gate:
        lines.append(f"{o.name} = {o.threshold}: {gate_measured(o.name, o.value)} "
                     f"({'met' if o.passed else 'NOT met'}).")
    return " ".join(lines)


def write_catalogue(run: Any, folder: str | Path, *, data_file: str, artifacts: list[str],
                    formats: tuple[str, ...] = CATALOGUE_FORMATS, report_file: str | None = None,
                    run_id: str | None = None) -> list[str]:
    """Write the chosen catalogue files into the (staging) public ``folder`` after the data,
    the published files and the report are there; returns the names written."""
    from ..catalogue.ddi import DdiMaterial, codebook_from_microdata, write_ddi
    from ..catalogue.frictionless import datapackage_dict
    from ..catalogue.satre import satre_record
    from ..io.atomic import atomic_write_text
    from ..io.labels import delivery_meta
    from .certificate import certificate_dict, sha256_file

    folder = Path(folder)
    spec = run.spec
    raw_out = (spec.raw.get("output") or {}) if spec is not None else {}
    raw_rep = (spec.raw.get("report") or {}) if spec is not None else {}
    title = raw_rep.get("dataset") or Path(data_file).stem
    meta = delivery_meta(run.original, run.released, run.results)
    written: list[str] = []
    if "ddi" in formats:
        materials = []
        titles = {}  # published matrix file -> its variables (and stratum), as the PRAM step names them
        for r in run.results:
            info = r.summary.get("matrices") if isinstance(r.summary, dict) else None
            for title, m in (info or {}).items():
                if isinstance(m, dict) and m.get("file"):
                    titles[m["file"]] = title
        for name in sorted(artifacts):
            if name.startswith("pram_") and name.endswith(".csv"):
                var = titles.get(name, name[len("pram_"):-len(".csv")])
                materials.append(DdiMaterial(uri=name, title=f"PRAM transition matrix of {var}",
                                             description=(f"Published transition matrix P of the PRAM applied to "
                                                          f"{var}: P[i, j] is the probability that category i "
                                                          "was released as j."),
                                             kind="PRAM transition matrix"))
        cb = codebook_from_microdata(run.released, title=str(title), data_file=data_file,
                                     treatment=variable_treatment(run), materials=materials,
                                     risk_statement=risk_statement(run), value_labels=meta.value_labels,
                                     abstract=raw_out.get("description"))
        write_ddi(cb, folder / CATALOGUE_FILES["ddi"])
        written.append(CATALOGUE_FILES["ddi"])
    if "frictionless" in formats:
        data_path = folder / data_file
        pkg = datapackage_dict(run.released.frame, data_file, title=str(title),
                               description=raw_out.get("description"), licence=raw_out.get("licence"),
                               column_labels=meta.column_labels, value_labels=meta.value_labels,
                               missing_codes={c: [r["lo"] for r in rs if r.get("lo") == r.get("hi")]
                                              for c, rs in meta.missing_ranges.items()},
                               categorical=tuple(run.released.key_vars),
                               sha256=sha256_file(data_path) if data_path.is_file() else None,
                               n_bytes=data_path.stat().st_size if data_path.is_file() else None)
        atomic_write_text(folder / CATALOGUE_FILES["frictionless"], json.dumps(pkg, indent=2) + "\n")
        written.append(CATALOGUE_FILES["frictionless"])
    if "satre" in formats:
        # the certificate's fields as they stand now (data, published files, report, the
        # catalogue files written above); the certificate itself then lists this record too
        cert = certificate_dict(run, folder, data_file=data_file, report_file=report_file, run_id=run_id)
        atomic_write_text(folder / CATALOGUE_FILES["satre"], json.dumps(satre_record(cert), indent=2) + "\n")
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
