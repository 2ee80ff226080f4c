"""Verify a written release from its files alone: ``sdckit verify RELEASE_DIR``.

An analyst or an auditor who holds only the published folder (the released data, the
published matrices, the report and ``certificate.json``) can check that

1. every file listed in the certificate is present and has the SHA-256 the certificate
   states (a changed cell changes the data file's hash; a removed matrix is missing);
2. every gate threshold that needs only the released data still holds on the file as
   published, with the measured value the certificate states: k-anonymity (f_k on the key
   variables, missing values as wildcards), global and largest individual risk, l-diversity;
3. every published PRAM matrix is a transition matrix (entries >= 0, rows summing to 1), its
   smallest diagonal entry meets the step's promise and the ``min_diagonal`` gate, an
   invariant matrix keeps the stated frequencies (``p P = p``), and every released value of
   the PRAMmed variable is a category of the matrix.

Thresholds that need the original data (distance-based linkage, interval disclosure,
PRAM's recognition ratio) are listed as not re-checkable. The checks reuse the gate's own
check functions on the released data read back from disk.

References
----------
Prasser, F. and Kohlmayer, F. (2015). Putting statistical disclosure control into practice:
the ARX data anonymization tool (certificates of the output).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import InputError, SDCError


class VerifyError(SDCError):
    """A release folder does not match its certificate (exit code 5)."""

    exit_code = 5

__all__ = ["VerifyResult", "verify_release", "RECHECKABLE"]

#: gate thresholds whose check needs only the released data
RECHECKABLE = ("k_anonymity", "max_global_risk", "max_individual_risk", "l_diversity")
#: tolerance of p P = p when the matrix is read back from its published CSV (relative frequencies)
INVARIANCE_TOLERANCE = 1e-8
ROW_TOLERANCE = 1e-9


@dataclass
class VerifyResult:
    """``ok`` when nothing failed; ``problems`` one line each, naming the file or threshold;
    ``checks`` every check made, with its outcome."""

    folder: Path
    problems: list[str] = field(default_factory=list)
    checks: list[dict] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def check(self, what: str, ok: bool, problem: str | None = None, *, skipped: bool = False) -> None:
        self.checks.append({"check": what, "ok": bool(ok), "skipped": skipped})
        if not ok and not skipped:
            self.problems.append(problem or what)

    def to_dict(self) -> dict:
        return {"ok": self.ok, "problems": list(self.problems), "checks": list(self.checks)}

    def describe(self) -> str:
        lines = [f"{self.folder}: " + ("verified — every check passed" if self.ok else
                                        f"NOT verified — {len(self.problems)} problem(s)")]
        for c in self.checks:
            mark = "skip" if c["skipped"] else ("ok" if c["ok"] else "FAIL")
            lines.append(f"  [{mark:>4}] {c['check']}")
        for p in self.problems:
            lines.append(f"problem: {p}")
        return "\n".join(lines)


def _close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)


def verify_release(folder: str | os.PathLike) -> VerifyResult:
    """Re-check a release folder against its ``certificate.json`` (see the module docstring)."""
    from .certificate import CERTIFICATE, FORMAT, sha256_file

    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"{folder}: no such release folder; give the folder written by sdckit protect.")
    res = VerifyResult(folder)
    cert_path = folder / CERTIFICATE
    if not cert_path.is_file():
        res.check(f"{CERTIFICATE} present", False, f"{cert_path}: missing; a release written by sdckit "
                  "has a certificate.json beside its report")
        return res
    try:
        cert = json.loads(cert_path.read_text("utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        res.check(f"{CERTIFICATE} readable", False, f"{cert_path}: is not a readable JSON certificate ({exc})")
        return res
    if not isinstance(cert, dict):
        res.check(f"{CERTIFICATE} readable", False, f"{cert_path}: holds a JSON {type(cert).__name__}, "
                  "not a certificate object")
        return res
    if cert.get("format") != FORMAT:
        res.check("certificate format", False, f"{cert_path}: format {cert.get('format')!r}, expected {FORMAT!r}")
        return res

    # 1. hashes
    intact: set[str] = set()
    for f in cert.get("files", []):
        p = folder / f["name"]
        if not p.is_file():
            res.check(f"{f['name']} present", False, f"{f['name']}: missing (listed in {CERTIFICATE})")
            continue
        digest = sha256_file(p)
        ok = digest == f["sha256"]
        res.check(f"{f['name']} SHA-256", ok,
                  f"{f['name']}: changed since release (SHA-256 {digest[:16]}… differs from the "
                  f"certificate's {f['sha256'][:16]}…)")
        if ok:
            intact.add(f["name"])

    # 2. gate thresholds on the released data as it is now
    data = cert.get("data", {})
    data_name = data.get("file")
    md = None
    if data_name and ((folder / data_name).is_file() or (data.get("partitioned") and (folder / data_name).is_dir())):
        md = _read_released(folder / data_name, data, res)
    for g in cert.get("gate", []):
        name, thr = g["name"], g["threshold"]
        if name == "min_diagonal":
            continue  # checked on the matrices below
        if name not in RECHECKABLE:
            res.check(f"gate {name} = {thr}: needs the original data", True, skipped=True)
            continue
        if md is None:
            res.check(f"gate {name} = {thr}", False, f"gate {name} = {thr}: cannot be checked, the data file "
                      f"{data_name} is missing or unreadable")
            continue
        _recheck_gate(res, md, g, data_name)

    # 3. published matrices
    diag_gate = next((g for g in cert.get("gate", []) if g["name"] == "min_diagonal"), None)
    smallest = []
    for m in cert.get("checks", {}).get("matrices", []):
        low = _check_matrix(res, folder, m, md)
        if low is not None:
            smallest.append((m["file"], low))
    if diag_gate is not None:
        thr = float(diag_gate["threshold"])
        if smallest:
            f, low = min(smallest, key=lambda t: t[1])
            res.check(f"gate min_diagonal = {thr:g}", low >= thr,
                      f"gate min_diagonal = {thr:g}: fails, {f} keeps a category with probability {low:.6g}")
        elif cert.get("checks", {}).get("matrices"):
            res.check(f"gate min_diagonal = {thr:g}", False,
                      f"gate min_diagonal = {thr:g}: cannot be checked, no published matrix could be read")
    return res


def _read_released(path: Path, data: dict, res: VerifyResult):
    from ..io.files import read_data
    from ..microdata import Microdata

    roles = {k: v for k, v in (data.get("roles") or {}).items() if v}
    try:
        if data.get("partitioned"):  # a Dask release: a folder of parts, read in part order
            frame, meta = _read_parts(path, data)
        else:
            frame, meta = read_data(path, na_values=list(data.get("na_values") or []) or None)
        names = path.parent / "column_names.csv"
        if names.is_file():  # SPSS/Stata delivery renamed columns: back to the certified names
            import pandas as pd

            mapping = pd.read_csv(names, dtype=str, keep_default_na=False)
            frame = frame.rename(columns=dict(zip(mapping["delivered_name"], mapping["original_name"])))
        md = Microdata(frame, meta=meta, **roles)
    except Exception as exc:  # an edited file may no longer parse; name it
        res.check(f"{path.name} readable", False, f"{path.name}: cannot be read as the released data ({exc})")
        return None
    ok = md.n_records == data.get("n_records") and list(map(str, md.columns)) == list(data.get("columns", []))
    res.check(f"{path.name}: {data.get('n_records')} records and the certified columns", ok,
              f"{path.name}: has {md.n_records} records and columns {list(md.columns)}, the certificate says "
              f"{data.get('n_records')} records and {data.get('columns')}")
    return md


def _read_parts(path: Path, data: dict):
    """The parts of a partitioned release (Parquet or CSV files in one folder), in name order."""
    import pandas as pd

    from ..microdata import DatasetMeta

    na = list(data.get("na_values") or []) or None
    if data.get("format") == "csv":
        parts = sorted(path.glob("*.csv"))
        frame = pd.concat([pd.read_csv(p, na_values=na) for p in parts], ignore_index=True)
    else:
        parts = sorted(path.glob("*.parquet"))
        frame = pd.concat([pd.read_parquet(p) for p in parts], ignore_index=True)
    if not parts:
        raise InputError(f"{path.name}: holds no data parts")
    return frame, DatasetMeta(source=str(path))


def _recheck_gate(res: VerifyResult, md, g: dict, data_name: str) -> None:
    from ..registry import gate_check
    from .narrative import gate_headline

    name, thr = g["name"], g["threshold"]
    try:
        out = gate_check(name).check(md, md, (), thr)
    except Exception as exc:
        res.check(f"gate {name} = {thr}", False, f"gate {name} = {thr}: could not be re-checked on {data_name} ({exc})")
        return
    res.check(f"gate {name} = {thr} on {data_name}", out.passed,
              f"gate {name} = {thr}: fails on {data_name} as published: {out.detail}")
    measured = gate_headline(name, out.value)
    if g.get("measured") is not None:
        res.check(f"gate {name}: measured value as certified ({g['measured']:.6g})", _close(measured, g["measured"]),
                  f"gate {name}: {data_name} gives {measured}, the certificate says {g['measured']}")


def _check_matrix(res: VerifyResult, folder: Path, m: dict, md) -> float | None:
    from ..pram.matrix import TransitionMatrix

    fname = m.get("file")
    if not fname:
        return None
    path = folder / fname
    if not path.is_file():
        res.check(f"{fname} present", False, f"{fname}: missing (the published PRAM matrix of "
                  f"{' x '.join(m.get('variables', []))})")
        return None
    try:
        tm = TransitionMatrix.read(path, variables=m.get("variables", ()))
    except Exception as exc:
        res.check(f"{fname} readable", False, f"{fname}: is not a readable transition matrix ({exc})")
        return None
    P = np.asarray(tm.to_dense(), dtype=float)
    row_err = float(np.abs(P.sum(axis=1) - 1.0).max())
    res.check(f"{fname}: entries >= 0 and rows sum to 1", bool((P >= 0).all()) and row_err <= ROW_TOLERANCE,
              f"{fname}: is not a transition matrix (largest |row sum - 1| = {row_err:.3g}, "
              f"smallest entry {P.min():.3g})")
    low = float(P.diagonal().min())
    promised = m.get("min_diagonal")
    if promised is not None:
        res.check(f"{fname}: smallest diagonal {low:.6g} >= promised {promised:g}", low >= float(promised) - 1e-12,
                  f"{fname}: smallest diagonal entry {low:.6g} is below the promised {promised:g}")
    if m.get("invariant") and m.get("frequencies") is not None:
        p = np.asarray(m["frequencies"], dtype=float)
        if p.size == P.shape[0] and p.sum() > 0:
            p = p / p.sum()
            err = float(np.abs(p @ P - p).max())
            res.check(f"{fname}: invariance p P = p (largest error {err:.2g})", err <= INVARIANCE_TOLERANCE,
                      f"{fname}: is not invariant for the certified frequencies (largest |p P - p| = {err:.3g})")
        else:
            res.check(f"{fname}: invariance", False, f"{fname}: has {P.shape[0]} categories, the certificate "
                      f"states {p.size} frequencies")
    if md is not None and len(m.get("variables", [])) == 1 and m["variables"][0] in md.columns:
        from ..explore.measures import _label

        v = m["variables"][0]
        cats = {_label(c) for c in tm.categories}
        seen = {_label(x) for x in md.frame[v].dropna().unique()}
        extra = sorted(seen - cats)
        res.check(f"{v}: every released value is a category of {fname}", not extra,
                  f"{v}: released values {extra[:5]} are not categories of {fname}")
    return low


def verify_command(
    release_dir: "Path",
    as_json: bool = False,
) -> None:
    """Check a release folder against its certificate: hashes, gate thresholds, published
    matrices. Exits 0 when everything matches, 5 when something does not (the problems are in
    the output; the first is repeated on standard error)."""
    import typer

    from ..result import jsonable

    res = verify_release(release_dir)
    if as_json:
        d = res.to_dict()
        typer.echo(json.dumps(jsonable({"ok": d["ok"], "problems": d["problems"], "checks": d["checks"]})))
    else:
        typer.echo(res.describe())
    if not res.ok:
        more = f" (and {len(res.problems) - 1} more)" if len(res.problems) > 1 else ""
        message = f"{release_dir}: does not match its certificate: {res.problems[0]}{more}"
        if as_json:  # the document above is the one JSON output; the exit code says it failed
            typer.echo(f"error: {' '.join(message.split())}", err=True)
            raise typer.Exit(VerifyError.exit_code)
        raise VerifyError(message)


def _typer_signature() -> None:
    """Give :func:`verify_command` its command-line options (typer reads the annotations)."""
    from typing import Annotated

    import typer

    verify_command.__annotations__.update(
        release_dir=Annotated[Path, typer.Argument(help="A release folder (with certificate.json).")],
        as_json=Annotated[bool, typer.Option("--json", help="Print one JSON object: ok, problems, checks.")],
    )


_typer_signature()
