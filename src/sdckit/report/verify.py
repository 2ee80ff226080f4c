"""Verify a written release from its files alone: ``sdckit verify RELEASE_DIR``.

An analyst or an auditor who holds only the published folder (the released data, the
published matrices, the report and ``certificate.json``) can check that

0. the certificate is the steward's (``--key steward.pub``: its Ed25519 signature over the
   canonical certificate bytes, :mod:`sdckit.report.signing`). Without a key, verify checks
   the folder's *integrity* against the certificate only, not its *authenticity*: whoever
   edits a file can rewrite the certificate's hashes too; verify says so in its text and in
   ``--json`` (``authenticity.checked``);
1. the certificate has every required field, of the right type (:func:`certificate_problems`);
2. the folder holds exactly the files the certificate lists: every listed file is present and
   has the SHA-256 and size the certificate states, no other file is there, and no name leaves
   the folder (an absolute path, ``..``, a symbolic link);
3. the public folder and the internal folder come from the same run (the run id of the
   certificate, of each folder's release mark and of ``internal_certificate.json``); the
   internal folder is ``--internal DIR`` or, by default, the sibling ``<name>-internal`` when
   it is there. An interrupted switch of the pair is finished first
   (:func:`sdckit.io.atomic.recover_release`);
4. every gate threshold that needs only the released data still holds on the file as
   published, with the measured value the certificate states: k-anonymity (f_k on the key
   variables, missing values as wildcards), global and largest individual risk, l-diversity;
5. every published PRAM matrix is a transition matrix (entries >= 0, rows summing to 1), its
   smallest diagonal entry meets the step's promise and the ``min_diagonal`` gate, an
   invariant matrix keeps the stated frequencies (``p P = p``), and every released value of
   the PRAMmed variable is a category of the matrix.

Thresholds that need the original data (distance-based linkage, interval disclosure,
PRAM's recognition ratio) are listed as not re-checkable. The checks reuse the gate's own
check functions on the released data read back from disk. Every failure is one line naming
the file and the rule; the command exits 5 when any check fails.

References
----------
Prasser, F. and Kohlmayer, F. (2015). Putting statistical disclosure control into practice:
the ARX data anonymization tool (certificates of the output).
"""

from __future__ import annotations

import json
import math
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError, SDCError
from .certificate_schema import certificate_problems, name_problem


class VerifyError(SDCError):
    """A release folder does not match its certificate (exit code 5)."""

    exit_code = 5


__all__ = ["VerifyResult", "verify_release", "certificate_problems", "RECHECKABLE"]

#: gate thresholds whose check needs only the released data
RECHECKABLE = ("k_anonymity", "max_global_risk", "max_individual_risk", "l_diversity")
#: tolerance of p P = p when the matrix is read back from its published CSV (relative frequencies)
INVARIANCE_TOLERANCE = 1e-8
ROW_TOLERANCE = 1e-9
#: the largest certificate verify reads (a certificate of sdckit is a few hundred kB at most)
MAX_CERTIFICATE_BYTES = 64 * 2**20
NO_KEY_NOTE = ("integrity only: the files were checked against certificate.json, but not who wrote it "
               "(authenticity not checked: give the steward's public key with --key)")


@dataclass
class VerifyResult:
    """``ok`` when nothing failed; ``problems`` one line each, naming the file or threshold;
    ``checks`` every check made, with its outcome; ``authenticity`` whether the certificate's
    signature was checked against the steward's key."""

    folder: Path
    problems: list[str] = field(default_factory=list)
    checks: list[dict] = field(default_factory=list)
    authenticity: dict = field(default_factory=lambda: {"checked": False, "note": NO_KEY_NOTE})

    @property
    def ok(self) -> bool:
        return not self.problems

    def check(self, what: str, ok: bool, problem: str | None = None, *, skipped: bool = False) -> None:
        self.checks.append({"check": what, "ok": bool(ok), "skipped": skipped})
        if not ok and not skipped:
            self.problems.append(" ".join(str(problem or what).split()))  # one line

    def to_dict(self) -> dict:
        return {"ok": self.ok, "problems": list(self.problems), "checks": list(self.checks),
                "authenticity": dict(self.authenticity)}

    def describe(self) -> str:
        lines = [f"{self.folder}: " + ("verified — every check passed" if self.ok else
                                        f"NOT verified — {len(self.problems)} problem(s)")]
        a = self.authenticity
        if a.get("checked"):
            lines.append(f"  authenticity: signed by the steward's key {a.get('key_fingerprint')}"
                         if a.get("ok") else "  authenticity: NOT established (see the problems)")
        else:
            lines.append(f"  {a.get('note', NO_KEY_NOTE)}")
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


# --------------------------------------------------------------------------- the folder

def _walk(folder: Path, res: VerifyResult) -> dict[str, str]:
    """Every entry of the folder, by relative POSIX name: "file", "dir" or what else it is."""
    found: dict[str, str] = {}
    for top, dirs, files in os.walk(folder, followlinks=False, onerror=lambda e: res.check(
            f"{folder.name} readable", False, f"{e.filename}: cannot be read ({e.strerror})")):
        rel_top = Path(top).relative_to(folder)
        for name in sorted(dirs) + sorted(files):
            rel = (rel_top / name).as_posix()
            try:
                st = os.lstat(Path(top) / name)
            except OSError:
                continue
            found[rel] = ("link" if stat.S_ISLNK(st.st_mode) else "dir" if stat.S_ISDIR(st.st_mode)
                          else "file" if stat.S_ISREG(st.st_mode) else "special")
    return found


def _check_listing(res: VerifyResult, folder: Path, cert: dict) -> set[str]:
    """Listed files present, unchanged, inside the folder; nothing else there. Returns the
    names whose hash matched."""
    from .certificate import CERTIFICATE, sha256_file

    found = _walk(folder, res)
    listed = {f["name"]: f for f in cert["files"]}
    intact: set[str] = set()
    for name, kind in sorted(found.items()):
        if kind == "link":
            res.check(f"{name}: no symbolic link", False, f"{name}: is a symbolic link; a release folder holds "
                      "plain files only (a link can point outside the folder)")
        elif kind == "special":
            res.check(f"{name}: a plain file", False, f"{name}: is not a plain file (a device, pipe or socket)")
        elif kind == "dir":
            if not any(n.startswith(name + "/") for n in listed):
                res.check(f"{name}/: listed", False, f"{name}/: a folder holding no file that {CERTIFICATE} "
                          "lists; a release folder holds only the files its certificate lists")
        elif name != CERTIFICATE and name not in listed:
            hint = (" (a PDF export of the report belongs outside the release folder)"
                    if name.lower().endswith(".pdf") else "")
            res.check(f"{name}: listed", False, f"{name}: not listed in {CERTIFICATE}; a release folder holds only "
                      f"the files its certificate lists{hint}")
    res.check(f"no file but those {CERTIFICATE} lists", not any(
        (k == "file" and n != CERTIFICATE and n not in listed) or k in ("link", "special") for n, k in found.items()))
    for name, f in listed.items():
        parts = name.split("/")
        prefix_kinds = [found.get("/".join(parts[:i])) for i in range(1, len(parts))]
        if any(k not in ("dir", None) for k in prefix_kinds):
            res.check(f"{name}: inside the folder", False, f"{name}: leaves the release folder through a symbolic "
                      "link, or a part of its path is not a folder")
            continue
        if found.get(name) not in ("file", None):
            res.check(f"{name}: a plain file", False, f"{name}: is not a plain file (a {found[name]})")
            continue
        if None in prefix_kinds or found.get(name) is None:
            res.check(f"{name} present", False, f"{name}: missing (listed in {CERTIFICATE})")
            continue
        path = folder / name
        digest = sha256_file(path)
        size = path.stat().st_size
        ok = digest == f["sha256"] and size == f["bytes"]
        res.check(f"{name} SHA-256", ok,
                  f"{name}: changed since release (SHA-256 {digest[:16]}… and {size} bytes; the "
                  f"certificate's {f['sha256'][:16]}… and {f['bytes']} bytes)")
        if ok:
            intact.add(name)
    return intact


def _internal_names(cert: dict) -> set[str]:
    """Names of the files only an internal folder holds (seeds, row order, the input's path)."""
    names = {"internal_certificate.json", "row_order.csv", "row_order.parquet", "internal_report.html",
             "internal_report.json"}
    out = (cert.get("spec") or {}).get("output") if isinstance(cert.get("spec"), dict) else None
    report = out.get("internal_report") if isinstance(out, dict) else None
    if isinstance(report, str) and report:
        names |= {report, Path(report).stem + ".json"}
    return names


def _check_no_internal_files(res: VerifyResult, folder: Path, cert: dict, internal: Path | None) -> None:
    """No file of the internal side (by name, or a copy of a file of the internal folder) in the
    public folder: those hold the seeds, which undo PRAM and swapping."""
    from .certificate import sha256_file

    inside = {n for n, k in _walk(folder, VerifyResult(folder)).items() if k == "file"}
    names = _internal_names(cert)
    by_size: dict[int, list[Path]] = {}  # the internal folder's files (a copy may have another name)
    if internal is not None and internal.is_dir() and not internal.is_symlink():
        for n, k in _walk(internal, VerifyResult(internal)).items():
            if k == "file" and n != ".sdckit-release":
                by_size.setdefault((internal / n).stat().st_size, []).append(internal / n)
    found = []
    for n in sorted(inside):
        p = folder / n
        same_size = by_size.get(p.stat().st_size, [])
        if p.name in names or (same_size and sha256_file(p) in {sha256_file(q) for q in same_size}):
            found.append(n)
    for n in found:
        res.check(f"{n}: not an internal file", False, f"{n}: a file of the internal folder (seeds, row order or "
                  "the input's path) is in the public folder; remove it and release again")
    if not found:
        res.check("no internal file in the public folder", True)


def _check_required_entries(res: VerifyResult, cert: dict) -> None:
    from ..io.atomic import RELEASE_MARK
    from .certificate import CERTIFICATE

    listed = {f["name"]: f for f in cert["files"]}
    data = cert["data"]
    name = data["file"]
    if data.get("partitioned"):
        ok = any(n.startswith(name + "/") for n in listed)
    else:
        ok = name in listed
    res.check(f"{name}: listed as the released data", ok,
              f"{name}: the released data file is not listed in {CERTIFICATE}'s files (it cannot be checked)")
    res.check(f"{RELEASE_MARK}: listed", RELEASE_MARK in listed,
              f"{RELEASE_MARK}: the release mark (which names the run) is not listed in {CERTIFICATE}")
    for m in cert["checks"]["matrices"]:
        for key in ("file", "json"):
            fname = m.get(key)
            if isinstance(fname, str) and name_problem(fname) is None:
                res.check(f"{fname}: listed", fname in listed,
                          f"{fname}: the published PRAM matrix is not listed in {CERTIFICATE}'s files")


def _check_run_ids(res: VerifyResult, folder: Path, cert: dict, internal: Path | None, public_key: Any) -> None:
    """The public folder's mark, and the internal folder's mark and certificate, name the
    certificate's run."""
    from ..io.atomic import RELEASE_MARK, read_mark
    from .certificate import CERTIFICATE, INTERNAL_CERTIFICATE

    run_id = cert["run_id"]
    mark = read_mark(folder)
    got = None if mark is None else mark.get("run_id")
    res.check(f"{RELEASE_MARK}: names the certificate's run", got == run_id,
              f"{RELEASE_MARK}: names the run {got}, {CERTIFICATE} the run {run_id}: the folder mixes two runs")
    if internal is None:
        res.check("internal folder: not given and no sibling <name>-internal here; run ids not compared",
                  True, skipped=True)
        return
    where = internal.name
    if not internal.is_dir() or internal.is_symlink():
        res.check(f"{where}: internal folder present", False,
                  f"{internal}: the internal folder is missing or not a folder (--internal)")
        return
    imark = read_mark(internal)
    igot = None if imark is None else imark.get("run_id")
    res.check(f"{where}/{RELEASE_MARK}: the same run as the public folder", igot == run_id,
              f"{where}/{RELEASE_MARK}: the internal folder belongs to the run {igot}, the public folder to the "
              f"run {run_id}: the pair mixes two runs (its seeds and row order are another release's)")
    path = internal / INTERNAL_CERTIFICATE
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_CERTIFICATE_BYTES:
            raise ValueError("missing or not a plain file")
        icert = json.loads(path.read_bytes())
        if not isinstance(icert, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError, RecursionError) as exc:
        res.check(f"{where}/{INTERNAL_CERTIFICATE} readable", False,
                  f"{where}/{INTERNAL_CERTIFICATE}: cannot be read as a certificate ({str(exc)[:120]})")
        return
    res.check(f"{where}/{INTERNAL_CERTIFICATE}: the same run", icert.get("run_id") == run_id,
              f"{where}/{INTERNAL_CERTIFICATE}: names the run {str(icert.get('run_id'))[:40]}, the public "
              f"certificate the run {run_id}: the pair mixes two runs")
    if public_key is not None:
        from .signing import SignatureError, verify_signature

        try:
            verify_signature(icert, public_key)
            res.check(f"{where}/{INTERNAL_CERTIFICATE}: signed by the steward's key", True)
        except SignatureError as exc:
            res.check(f"{where}/{INTERNAL_CERTIFICATE}: signed by the steward's key", False,
                      f"{where}/{str(exc)}".replace(f"{where}/certificate.json", f"{where}/{INTERNAL_CERTIFICATE}"))


def _read_certificate(res: VerifyResult, folder: Path) -> dict | None:
    from .certificate import CERTIFICATE

    cert_path = folder / CERTIFICATE
    if cert_path.is_symlink() or (cert_path.exists() and not cert_path.is_file()):
        res.check(f"{CERTIFICATE} a plain file", False, f"{CERTIFICATE}: is a symbolic link or not a plain file")
        return None
    if not cert_path.is_file():
        res.check(f"{CERTIFICATE} present", False, f"{cert_path}: missing; a release written by sdckit "
                  "has a certificate.json beside its report")
        return None
    try:
        if cert_path.stat().st_size > MAX_CERTIFICATE_BYTES:
            raise ValueError(f"{cert_path.stat().st_size:,} bytes, more than a certificate holds")
        cert = json.loads(cert_path.read_bytes().decode("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError, RecursionError) as exc:
        res.check(f"{CERTIFICATE} readable", False,
                  f"{cert_path}: is not a readable JSON certificate ({' '.join(str(exc).split())[:160]})")
        return None
    return cert


def verify_release(folder: str | os.PathLike, *, key: Any = None, internal: str | os.PathLike | None = None,
                   recover: bool = True) -> VerifyResult:
    """Re-check a release folder against its ``certificate.json`` (see the module docstring).

    Parameters
    ----------
    folder : path-like
        The public release folder.
    key : path-like or Ed25519 public key, optional
        The steward's public key (``NAME.pub`` of ``sdckit keygen``): the certificate's
        signature is checked. Without it, only integrity against the certificate is checked.
    internal : path-like, optional
        The internal folder of the same release (default: the sibling ``<name>-internal``
        when it is there): its run id must be the public folder's.
    recover : bool
        Finish an interrupted switch of the pair first (by sdckit's journal; default True).
    """
    folder = Path(folder)
    res = VerifyResult(folder)
    if recover:  # first: a switch killed before the folder appeared may be rolled forward
        _recover(res, folder)
    if not folder.is_dir():
        raise InputError(f"{folder}: no such release folder; give the folder written by sdckit protect.")
    public_key = None
    if key is not None:
        from .signing import load_public_key

        public_key = load_public_key(key) if isinstance(key, (str, os.PathLike)) else key
    explicit = internal is not None
    internal_dir = Path(internal) if internal is not None else folder.absolute().with_name(
        folder.absolute().name + "-internal")
    if not explicit and not internal_dir.exists():
        internal_dir = None
    cert = _read_certificate(res, folder)
    if cert is None:
        return res
    _check_signature(res, cert, public_key)  # first: with a key, any edit of the certificate fails here
    structure = certificate_problems(cert)
    res.check("certificate.json: every required field, of the right type", not structure,
              structure[0] if structure else None)
    res.problems.extend(structure[1:])
    if structure:
        return res
    intact = _check_listing(res, folder, cert)
    _check_required_entries(res, cert)
    _check_run_ids(res, folder, cert, internal_dir, public_key)
    _check_no_internal_files(res, folder, cert, internal_dir)
    try:
        _check_content(res, folder, cert, intact)
    except Exception as exc:  # a hostile certificate that the content checks cannot use: name it
        res.check("certificate.json: content checks", False,
                  f"certificate.json: its checks could not be run on the released files "
                  f"({type(exc).__name__}: {' '.join(str(exc).split())[:160]})")
    return res


def _recover(res: VerifyResult, folder: Path) -> None:
    from ..io.atomic import recover_release

    try:
        done = recover_release(folder)
    except (InputError, OSError) as exc:
        res.check("no interrupted release switch", False,
                  f"{folder.name}: an interrupted release switch could not be finished ({' '.join(str(exc).split())})")
        return
    for pid in done["running"]:
        res.check("no release switch running", False,
                  f"{folder.name}: a sdckit run (pid {pid}) is switching this release now; verify again when it ends")
    if done["recovered"]:
        res.check(f"an interrupted release switch was finished by sdckit's journal ({done['recovered']})", True)


def _check_signature(res: VerifyResult, cert: dict, public_key: Any) -> None:
    from .certificate import CERTIFICATE

    sig = cert.get("signature") if isinstance(cert, dict) else None
    if public_key is None:
        signed = isinstance(sig, dict) and isinstance(sig.get("key_fingerprint"), str)
        note = NO_KEY_NOTE + (f"; the certificate says it is signed by {sig['key_fingerprint'][:80]}"
                              if signed else "; the certificate is not signed")
        res.authenticity = {"checked": False, "note": note}
        res.check("authenticity: not checked (no --key)", True, skipped=True)
        return
    from .signing import SignatureError, fingerprint, verify_signature

    try:
        fp = verify_signature(cert, public_key)
        res.authenticity = {"checked": True, "ok": True, "key_fingerprint": fp}
        res.check(f"{CERTIFICATE}: signed by the steward's key {fp}", True)
    except SignatureError as exc:
        res.authenticity = {"checked": True, "ok": False, "key_fingerprint": fingerprint(public_key)}
        res.check(f"{CERTIFICATE}: signed by the steward's key", False, str(exc))


def _check_tables(res: VerifyResult, folder: Path, cert: dict, intact: set[str]) -> None:
    """A table release: each table file listed and unchanged (its SHA-256, checked with the
    listing), its cells' statuses as the certificate counts them, no suppressed cell holding a
    number, and the audit's status stated (a sampled or failed audit is reported, not passed)."""
    import pandas as pd

    listed = {f["name"] for f in cert["files"]}
    for t in cert["tables"]:
        name = t["file"]
        res.check(f"{name}: listed", name in listed, f"{name}: the released table is not listed in certificate.json")
        if name not in intact:
            continue  # changed or missing: named by the listing check
        try:
            df = pd.read_csv(folder / name, dtype=str, keep_default_na=False)
        except (OSError, ValueError, pd.errors.ParserError) as exc:
            res.check(f"{name}: readable", False, f"{name}: cannot be read as CSV ({str(exc)[:120]})")
            continue
        if "status" not in df.columns or "value" not in df.columns:
            res.check(f"{name}: value and status columns", False, f"{name}: has no value or status column")
            continue
        got = df["status"].value_counts().to_dict()
        res.check(f"{name}: cell statuses as certified", got == t["statuses"],
                  f"{name}: the cells' statuses {got} differ from the certificate's {t['statuses']}")
        sup = df.loc[df["status"] == "suppressed", "value"]
        leaked = int(pd.to_numeric(sup, errors="coerce").notna().sum())
        res.check(f"{name}: no suppressed cell shows a number", leaked == 0,
                  f"{name}: {leaked} suppressed cells show a number")
        st = t["audit"]["status"]
        if st == "exact":
            res.check(f"{name}: audit exact (as certified)", True)
        else:  # stated, never passed: the certificate's verdict says NOT passed
            res.check(f"{name}: audit {st}: not proven safe (the certificate says so)", True, skipped=True)


def _check_outputs(res: VerifyResult, folder: Path, cert: dict, intact: set[str]) -> None:
    """A release of research outputs: every output's files listed (their SHA-256 checked with the
    listing), and the released results file holding exactly the certified outputs, each with the
    checker's approval."""
    listed = {f["name"] for f in cert["files"]}
    ids = [o["id"] for o in cert["outputs"]]
    for o in cert["outputs"]:
        missing = [f for f in o["files"] if f not in listed]
        res.check(f"{o['id']}: its files listed", not missing,
                  f"{o['id']}: {', '.join(missing[:3])} not listed in certificate.json")
    name = cert["data"]["file"]
    if name not in intact:
        return  # changed or missing: named by the listing check
    try:
        doc = json.loads((folder / name).read_text(encoding="utf-8"))
        results = doc["results"]
        if not isinstance(results, dict):
            raise ValueError("'results' is not an object")
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        res.check(f"{name}: readable", False, f"{name}: cannot be read as a results file ({str(exc)[:120]})")
        return
    res.check(f"{name}: exactly the certified outputs", sorted(results) == sorted(ids),
              f"{name}: lists the outputs {sorted(results)[:6]}, the certificate {sorted(ids)[:6]}")
    unapproved = [k for k, r in results.items()
                  if ((r.get("sdckit") or {}).get("decision") or {}).get("verdict") != "approved"]
    res.check(f"{name}: every output approved by a checker", not unapproved,
              f"{name}: {', '.join(unapproved[:5])} carry no checker's approval")


def _check_content(res: VerifyResult, folder: Path, cert: dict, intact: set[str]) -> None:
    """The gate thresholds on the released data as it is now, and the published matrices."""
    data = cert["data"]
    if data.get("kind") == "table":
        _check_tables(res, folder, cert, intact)
        return
    if data.get("kind") == "outputs":
        _check_outputs(res, folder, cert, intact)
        return
    data_name = data["file"]
    listed = {f["name"] for f in cert["files"]}
    md = None
    data_path = folder / data_name
    if data.get("partitioned"):
        readable = data_path.is_dir() and not data_path.is_symlink() and any(n.startswith(data_name + "/")
                                                                              for n in listed)
    else:
        readable = data_name in listed and data_path.is_file() and not data_path.is_symlink()
    if readable:
        md = _read_released(data_path, data, res)
    for g in cert["gate"]:
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

    diag_gate = next((g for g in cert["gate"] if g["name"] == "min_diagonal"), None)
    smallest = []
    for m in cert["checks"]["matrices"]:
        fname = m.get("file")
        if fname is not None and fname not in listed:
            continue  # named as not listed above; never read a file the certificate does not list
        low = _check_matrix(res, folder, m, md)
        if low is not None:
            smallest.append((m["file"], low))
    if diag_gate is not None:
        thr = float(diag_gate["threshold"])
        if smallest:
            f, low = min(smallest, key=lambda t: t[1])
            res.check(f"gate min_diagonal = {thr:g}", low >= thr,
                      f"gate min_diagonal = {thr:g}: fails, {f} keeps a category with probability {low:.6g}")
        elif cert["checks"]["matrices"]:
            res.check(f"gate min_diagonal = {thr:g}", False,
                      f"gate min_diagonal = {thr:g}: cannot be checked, no published matrix could be read")
        else:
            res.check(f"gate min_diagonal = {thr:g}", False,
                      f"gate min_diagonal = {thr:g}: cannot be checked, the certificate lists no published matrix")


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
    import numpy as np  # here, not at the top: `sdckit --help` imports this module

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
        from ..utility.categorical import canonical_label as _label

        v = m["variables"][0]
        cats = {_label(c) for c in tm.categories}
        seen = {_label(x) for x in md.frame[v].dropna().unique()}
        extra = sorted(seen - cats)
        res.check(f"{v}: every released value is a category of {fname}", not extra,
                  f"{v}: released values {extra[:5]} are not categories of {fname}")
    return low


def verify_command(
    release_dir: Path,
    key: Path | None = None,
    internal: Path | None = None,
    as_json: bool = False,
) -> None:
    """Check a release folder against its certificate: the steward's signature (--key), the
    listed files and nothing else, the run of the internal folder, the gate thresholds and the
    published matrices. Exits 0 when everything matches, 5 when something does not (the
    problems are in the output; the first is repeated on standard error)."""
    import typer

    from ..result import jsonable

    res = verify_release(release_dir, key=key, internal=internal)
    if as_json:
        d = res.to_dict()
        typer.echo(json.dumps(jsonable({"ok": d["ok"], "problems": d["problems"], "checks": d["checks"],
                                        "authenticity": d["authenticity"]})))
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
        key=Annotated[Path | None, typer.Option(
            "--key", help="The steward's public key (NAME.pub of 'sdckit keygen'): check the certificate's "
                          "signature. Without it, verify checks integrity against the certificate only.")],
        internal=Annotated[Path | None, typer.Option(
            "--internal", help="The internal folder of the release (default: the sibling NAME-internal when "
                               "present): it must come from the same run.")],
        as_json=Annotated[bool, typer.Option("--json", help="Print one JSON object: ok, problems, checks, "
                                                            "authenticity.")],
    )


_typer_signature()
