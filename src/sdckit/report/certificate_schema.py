"""The structure of a release certificate: which fields ``certificate.json`` must hold, of which type.

:func:`certificate_problems` reads a parsed certificate and names, one line each, every field
that is missing or of the wrong type (the common fields, the listed files, the gate thresholds
and the published matrices, and the fields of a table release or a release of research
outputs); :func:`name_problem` is the rule for a file name the certificate lists (a plain
relative path that stays inside the release folder).

These rules need nothing but the parsed JSON, so they sit apart from ``sdckit verify``
(:mod:`sdckit.report.verify`), which checks them first, then the folder and the released
files against them; :mod:`sdckit.report.verify` re-exports :func:`certificate_problems`.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["certificate_problems", "name_problem"]

_HEX64 = re.compile(r"[0-9a-f]{64}")
_RUN_ID = re.compile(r"[0-9a-f]{32}")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v: Any) -> bool:
    return (isinstance(v, (int, float)) and not isinstance(v, bool))


def name_problem(name: Any) -> str | None:
    """Why a file name of the certificate is not a plain relative path inside the folder; None if it is.

    Parameters
    ----------
    name : Any
        A file name as the certificate lists it (POSIX separators, relative to the release folder).

    Returns
    -------
    str or None
        The rule the name breaks, as words to follow the name in a message; None for a plain
        relative path inside the folder.
    """
    if not isinstance(name, str) or not name:
        return "is not a file name"
    if "\0" in name or "\\" in name or any(ord(ch) < 32 for ch in name):
        return "holds a control character or a backslash"
    if name.startswith("/") or re.match(r"[A-Za-z]:", name):
        return "is an absolute path (a listed file must be inside the release folder)"
    parts = name.split("/")
    if any(p in ("", ".", "..") for p in parts):
        return "leaves the release folder or is not a plain relative path ('..', '.', or an empty part)"
    return None


def certificate_problems(cert: Any) -> list[str]:
    """The ways a parsed ``certificate.json`` breaks the certificate's structure (one line
    each, naming the field and the rule); empty when every required field is there and of the
    right type."""
    from .certificate import CERTIFICATE, FORMAT

    out: list[str] = []

    def bad(where: str, rule: str) -> None:
        out.append(f"{CERTIFICATE}: field {where} {rule}")

    if not isinstance(cert, dict):
        return [f"{CERTIFICATE}: holds a JSON {type(cert).__name__}, not a certificate object"]
    if cert.get("format") != FORMAT:
        got = cert.get("format")
        return [f"{CERTIFICATE}: field format is {got!r:.80}, expected {FORMAT!r} (not a certificate this "
                "version of sdckit writes)"]
    for key, test, rule in (
            ("kind", lambda v: v == "public", "must be \"public\" (this is not the public certificate)"),
            ("run_id", lambda v: isinstance(v, str) and _RUN_ID.fullmatch(v) is not None,
             "must be the run id (32 hex digits)"),
            ("created", lambda v: isinstance(v, str), "must be a date-time text"),
            ("sdckit_version", lambda v: isinstance(v, str), "must be a version text"),
            ("passed", lambda v: isinstance(v, bool), "must be true or false"),
            ("data", lambda v: isinstance(v, dict), "must be an object (the released data)"),
            ("files", lambda v: isinstance(v, list) and len(v) > 0, "must be a non-empty list of files"),
            ("gate", lambda v: isinstance(v, list), "must be a list of thresholds"),
            ("steps", lambda v: isinstance(v, list) and all(isinstance(s, dict) for s in v),
             "must be a list of step objects"),
            ("checks", lambda v: isinstance(v, dict) and isinstance(v.get("matrices"), list),
             "must be an object with a list 'matrices'"),
            ("signature", lambda v: v is None or isinstance(v, dict), "must be null or a signature object")):
        if key not in cert:
            bad(key, "is missing (a required field)")
        elif not test(cert[key]):
            bad(key, rule)
    if out:
        return out
    data = cert["data"]
    if name_problem(data.get("file")) is not None:
        bad("data.file", f"must be the released data's name inside the folder ({name_problem(data.get('file'))})")
    if not _is_int(data.get("n_records")) or data["n_records"] < 0:
        bad("data.n_records", "must be an int >= 0")
    if not (isinstance(data.get("columns"), list) and all(isinstance(c, str) for c in data["columns"])):
        bad("data.columns", "must be a list of column names")
    roles = data.get("roles")
    if not (isinstance(roles, dict) and all(isinstance(k, str) and (v is None or isinstance(v, str) or (
            isinstance(v, list) and all(isinstance(x, str) for x in v))) for k, v in roles.items())):
        bad("data.roles", "must be an object of role -> column name(s)")
    if "na_values" in data and not (isinstance(data["na_values"], list)
                                    and all(v is None or isinstance(v, (str, int, float)) for v in data["na_values"])):
        bad("data.na_values", "must be a list of values")
    if "partitioned" in data and not isinstance(data["partitioned"], bool):
        bad("data.partitioned", "must be true or false")
    if "format" in data and data["format"] not in ("csv", "parquet"):
        bad("data.format", "must be \"csv\" or \"parquet\"")
    seen: set[str] = set()
    for i, f in enumerate(cert["files"]):
        where = f"files[{i}]"
        if not isinstance(f, dict):
            bad(where, "must be an object with name, role, sha256 and bytes")
            continue
        why = name_problem(f.get("name"))
        if why is not None:
            bad(f"{where}.name", f"{f.get('name')!r:.120} {why}")
            continue
        if f["name"] in seen:
            bad(f"{where}.name", f"{f['name']!r} is listed twice")
        seen.add(f["name"])
        if not isinstance(f.get("role"), str):
            bad(f"{where}.role", f"of {f['name']} must be a text")
        if not (isinstance(f.get("sha256"), str) and _HEX64.fullmatch(f["sha256"])):
            bad(f"{where}.sha256", f"of {f['name']} must be a SHA-256 (64 hex digits)"
                + (" and is missing" if "sha256" not in f else ""))
        if not _is_int(f.get("bytes")) or f["bytes"] < 0:
            bad(f"{where}.bytes", f"of {f['name']} must be the file's size in bytes (an int >= 0)")
    for i, g in enumerate(cert["gate"]):
        where = f"gate[{i}]"
        if not isinstance(g, dict) or not isinstance(g.get("name"), str) or "threshold" not in g:
            bad(where, "must be an object with a name and a threshold")
            continue
        if not isinstance(g.get("passed"), bool):
            bad(f"{where}.passed", f"of {g['name']} must be true or false")
        if g.get("measured") is not None and not _is_num(g["measured"]):
            bad(f"{where}.measured", f"of {g['name']} must be a number or null")
    for i, m in enumerate(cert["checks"]["matrices"]):
        where = f"checks.matrices[{i}]"
        if not isinstance(m, dict):
            bad(where, "must be an object")
            continue
        if m.get("file") is not None and name_problem(m["file"]) is not None:
            bad(f"{where}.file", f"must be a file name inside the folder ({name_problem(m['file'])})")
        if not (isinstance(m.get("variables"), list) and all(isinstance(v, str) for v in m["variables"])):
            bad(f"{where}.variables", "must be a list of variable names")
        if m.get("min_diagonal") is not None and not _is_num(m["min_diagonal"]):
            bad(f"{where}.min_diagonal", "must be a number or null")
        if not isinstance(m.get("invariant", False), bool):
            bad(f"{where}.invariant", "must be true or false")
        if m.get("frequencies") is not None and not (isinstance(m["frequencies"], list)
                                                      and all(_is_num(x) for x in m["frequencies"])):
            bad(f"{where}.frequencies", "must be a list of numbers")
    if not all(g.get("name") != "min_diagonal" or _is_num(g.get("threshold"))
               for g in cert["gate"] if isinstance(g, dict)):
        bad("gate", "min_diagonal's threshold must be a number")
    if data.get("kind") == "table":  # a table release (sdckit.report.table_release)
        tables = cert.get("tables")
        if not isinstance(tables, list) or not tables:
            bad("tables", "must be a non-empty list of released tables (data.kind is \"table\")")
            return out
        for i, t in enumerate(tables):
            where = f"tables[{i}]"
            if not isinstance(t, dict) or name_problem(t.get("file")) is not None:
                bad(f"{where}.file", "must be the released table's name inside the folder")
            elif not isinstance(t.get("audit"), dict) or t["audit"].get("status") not in ("exact", "sampled", "failed"):
                bad(f"{where}.audit.status", "must be \"exact\", \"sampled\" or \"failed\"")
            elif not (isinstance(t.get("statuses"), dict) and all(_is_int(v) for v in t["statuses"].values())):
                bad(f"{where}.statuses", "must be an object of status -> number of cells")
    if data.get("kind") == "outputs":  # a checker's release of research outputs (sdckit.report.outputs_release)
        outs = cert.get("outputs")
        if not isinstance(outs, list) or not outs:
            bad("outputs", "must be a non-empty list of released outputs (data.kind is \"outputs\")")
            return out
        for i, o in enumerate(outs):
            where = f"outputs[{i}]"
            if not isinstance(o, dict) or not isinstance(o.get("id"), str):
                bad(where, "must be an object with the output's id")
            elif not (isinstance(o.get("files"), list) and all(name_problem(f) is None for f in o["files"])):
                bad(f"{where}.files", "must be a list of file names inside the folder")
            elif o.get("verdict") != "approved" or not isinstance(o.get("checker"), str) or not o["checker"]:
                bad(f"{where}.verdict", "must be \"approved\" with the checker's name (only approved outputs are "
                    "released)")
    return out
