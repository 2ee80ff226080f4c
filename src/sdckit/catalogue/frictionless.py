"""Frictionless Data Package (``datapackage.json``) for a released file.

The package names one tabular data resource, the released data file, with its table schema:
every column's type (``integer``, ``number``, ``boolean``, ``string``), its title (the
variable label), its categories (``constraints.enum`` with the values, and ``categories``
with the value labels, Data Package v2), and the missing values (the empty cell and every
declared missing code). Licence, title and description come from the release spec.

References
----------
Frictionless Data (2024). *Data Package* v2 specification: Data Package (``name``,
``title``, ``description``, ``licenses``, ``resources``), Data Resource (``path``,
``format``, ``mediatype``, ``encoding``, ``hash``), Table Schema (``fields``, ``type``,
``title``, ``constraints.enum``, ``categories``, ``missingValues``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["datapackage_dict", "table_schema", "package_name"]

_MEDIA = {"csv": "text/csv", "parquet": "application/vnd.apache.parquet",
          "sav": "application/x-spss-sav", "dta": "application/x-stata-dta"}
#: SPDX identifiers whose names the package writes out in full
_LICENCES = {"CC-BY-4.0": ("Creative Commons Attribution 4.0", "https://creativecommons.org/licenses/by/4.0/"),
             "CC0-1.0": ("Creative Commons Zero v1.0 Universal", "https://creativecommons.org/publicdomain/zero/1.0/"),
             "ODC-BY-1.0": ("Open Data Commons Attribution License v1.0", "https://opendatacommons.org/licenses/by/1-0/"),
             "OGL-UK-3.0": ("Open Government Licence v3.0",
                            "https://www.nationalarchives.gov.uk/doc/open-government-licence/version/3/")}


def package_name(text: str) -> str:
    """A package or resource name as the specification wants it: lower case, ``a-z0-9._-``."""
    name = re.sub(r"[^a-z0-9._-]+", "-", str(text).lower()).strip("-._")
    return name or "release"


def _field_type(s: Any) -> str:
    import pandas as pd

    if pd.api.types.is_bool_dtype(s):
        return "boolean"
    if pd.api.types.is_integer_dtype(s):
        return "integer"
    if pd.api.types.is_float_dtype(s):
        # integers with missing values are floats in pandas and written as 1.0: a number
        return "number"
    return "string"


def _typed(value: Any, ftype: str) -> Any:
    if ftype == "integer":
        return int(value)
    if ftype == "number":
        return float(value)
    if ftype == "boolean":
        return bool(value)
    return str(value)


def table_schema(frame: Any, *, column_labels: Mapping[str, str] | None = None,
                 value_labels: Mapping[str, Mapping[Any, str]] | None = None,
                 missing_codes: Mapping[str, list] | None = None, categorical: tuple[str, ...] = (),
                 max_categories: int = 200) -> dict:
    """The Table Schema of a frame as written to CSV.

    ``categorical`` columns (e.g. the key variables) and columns with value labels get their
    distinct released values as ``constraints.enum`` (at most ``max_categories``) and, where
    labelled, ``categories`` ``[{"value": v, "label": l}]``. ``missing_codes`` (column ->
    codes) join the empty cell in ``missingValues``.
    """
    column_labels = column_labels or {}
    value_labels = value_labels or {}
    missing = [""]
    for codes in (missing_codes or {}).values():
        for c in codes:
            text = str(int(c)) if isinstance(c, float) and c.is_integer() else str(c)
            if text not in missing:
                missing.append(text)
    fields = []
    for col in frame.columns:
        s = frame[col]
        ftype = _field_type(s)
        field: dict[str, Any] = {"name": str(col), "type": ftype}
        if column_labels.get(col):
            field["title"] = str(column_labels[col])
        labels = value_labels.get(col) or {}
        if col in categorical or labels:
            values = [v for v in s.dropna().unique()]
            missing_here = {str(m) for m in (missing_codes or {}).get(col, [])}
            values = [v for v in values if str(v) not in missing_here]
            if 0 < len(values) <= max_categories:
                try:
                    typed = sorted({_typed(v, ftype) for v in values})
                except (TypeError, ValueError):
                    typed = []
                if typed:
                    field["constraints"] = {"enum": typed}
                    if labels:
                        lab = {str(k): str(v) for k, v in labels.items()}
                        cats = []
                        for v in typed:
                            key = str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)
                            cats.append({"value": v, "label": lab[key]} if key in lab else {"value": v})
                        if ftype in ("integer", "string"):
                            field["categories"] = cats
        fields.append(field)
    return {"fields": fields, "missingValues": missing}


def datapackage_dict(frame: Any, data_file: str, *, title: str, description: str | None = None,
                     licence: str | None = None, column_labels: Mapping[str, str] | None = None,
                     value_labels: Mapping[str, Mapping[Any, str]] | None = None,
                     missing_codes: Mapping[str, list] | None = None, categorical: tuple[str, ...] = (),
                     sha256: str | None = None, n_bytes: int | None = None) -> dict:
    """The ``datapackage.json`` of one released data file (see the module docstring).

    ``licence`` is an SPDX identifier or a licence's name (the common open-data ones are
    written with their title and address); ``sha256`` and ``n_bytes`` of the data file let a
    reader check it (``hash`` and ``bytes`` of the resource).
    """
    fmt = Path(data_file).suffix.lstrip(".").lower() or "csv"
    resource: dict[str, Any] = {"name": package_name(Path(data_file).stem), "path": data_file,
                                "profile": "tabular-data-resource", "format": fmt,
                                "mediatype": _MEDIA.get(fmt, "application/octet-stream")}
    if fmt == "csv":
        resource["encoding"] = "utf-8"
    if sha256:
        resource["hash"] = f"sha256:{sha256}"
    if n_bytes is not None:
        resource["bytes"] = int(n_bytes)
    resource["schema"] = table_schema(frame, column_labels=column_labels, value_labels=value_labels,
                                      missing_codes=missing_codes, categorical=categorical)
    pkg: dict[str, Any] = {"profile": "tabular-data-package", "name": package_name(title), "title": title}
    if description:
        pkg["description"] = description
    if licence:
        name, path = _LICENCES.get(licence, (licence, None))
        entry = {"name": licence, "title": name}
        if path:
            entry["path"] = path
        pkg["licenses"] = [entry]
    pkg["resources"] = [resource]
    return pkg
