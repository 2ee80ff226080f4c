"""Run a tau-Argus batch file (``.arb``) with sdckit's tables, rules, suppression, rounding and CKM.

Supported commands (tau-Argus manual 4.1, section 5.5; ``batch.java``):

``<OPENMICRODATA> "f"``, ``<OPENTABLEDATA> "f"``, ``<OPENMETADATA> "f.rda"``,
``<SPECIFYTABLE> "a""b"|"resp"|"shadow"|"cost"``, ``<SAFETYRULE> P(p,n)|NK(n,k)|FREQ(n,r)|ZERO(r)|MAN(m)``,
``<READMICRODATA>``, ``<READTABLE>``, ``<SUPPRESS> OPT(t,..)|MOD(t,..)|GH(t,..)|RND(t,base,..)|CKM(t) ["ptable"]``,
``<ROUNDING> (t, base)`` (same as ``RND``), ``<WRITETABLE> (t, type, options, "file")``, ``<CLEAR>``;
``<SOLVER>``, ``<LOGBOOK>``, ``<SILENT>``, ``<VERSIONINFO>`` and ``<GOINTERACTIVE>`` are accepted and
do nothing (sdckit always solves with HiGHS and has no interactive mode). Table number 0 in
``<SUPPRESS>`` means the linked tables (all tables specified), protected jointly.

Mapping of methods: ``OPT`` -> :class:`~sdckit.tables.suppression.OptimalSuppression`; ``MOD`` ->
:class:`~sdckit.tables.modular.ModularSuppression` (joint optimal model for linked tables);
``GH`` (tau-Argus's hypercube) -> :class:`~sdckit.tables.hypercube.HypercubeSuppression` (the
hypercube method with a certificate per primary; linked tables: the LP heuristic); ``RND`` -> controlled rounding; ``CKM`` -> the cell
key method with the p-table of the metadata (``<PFILE>``, ``<PFILE_CONT>``) or the one given.
``CTA`` -> controlled tabular adjustment (:mod:`sdckit.tables.cta`, the MILP with HiGHS);
``NET`` (tau-Argus's network-flow heuristic for 2-D tables): sdckit has no network method, so a
2-D table is protected with the optimal method and the batch log says so (other tables are
refused); ``HYP`` is read as ``GH`` (the hypercube) and the log says so.

The other commands (tau-Argus manual 4.1, section 5.5, the batch commands):

``<RECODE> t, var, L`` (a digit 1-9) truncates a hierarchical variable at level L (codes below
it merge into their ancestor at level L); ``<RECODE> t, var, "file"``: a file whose first line
is ``<TREERECODE>`` closes the parent codes it lists (their sub-trees merge into them); any other
file is a global recode (a ``.grc`` file, as in the manual's interactive recode): ``new: old,
a-b, -b, a-`` per line (``<CODELIST>`` lines are accepted, ``<MISSING>`` is refused), for a
non-hierarchical variable. The table is tabulated again from the microdata (a table file cannot
be recoded: refused).

``<APRIORY> "file", t, "sep"[, ignore_error[, expand_bogus]]`` (the a-priori file: ``code1 sep
code2 ... sep CMD [sep v1 [sep v2]]`` per line): ``S`` (safe: not a primary), ``U`` (unsafe: a
primary with the ``MAN`` level), ``PL lpl upl`` (a primary's protection levels) and ``C`` /
``W cost`` (a cell's cost for OPT, MOD and GH) are applied; ``P``, ``M``, ``ML`` and ``AB`` are
refused with the file's line. With ``expand_bogus = 1`` a code stands for its whole single-child
chain. ``ignore_error = 1`` (the default) skips lines with unknown codes (counted in the log).

``<COVER>``: sdckit protects linked tables jointly (``<SUPPRESS> METHOD(0)``: one model over
all tables), so no cover table is built; the command is accepted and the log says so.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...errors import InputError, SDCError
from ...result import jsonable
from ..registry import build_table_method, build_table_rule
from ..rules import Primary, primary_cells
from ..suppression import cell_costs
from ..table import Hierarchy, Table
from .meta import ArgusMetadata, read_argus_data, read_rda
from .write import parse_write_options, table_status, top_n_needed, write_argus_table

__all__ = ["run_arb", "parse_arb", "SUPPORTED"]

SUPPORTED = ("OPENMICRODATA", "OPENTABLEDATA", "OPENMETADATA", "SPECIFYTABLE", "SAFETYRULE", "READMICRODATA",
             "READTABLE", "SUPPRESS", "ROUNDING", "WRITETABLE", "CLEAR", "SOLVER", "LOGBOOK", "SILENT",
             "VERSIONINFO", "GOINTERACTIVE", "COMMENT", "RECODE", "APRIORY", "APRIORI", "COVER")
_NOOP = {"SOLVER", "LOGBOOK", "SILENT", "VERSIONINFO", "GOINTERACTIVE", "COMMENT"}


def parse_arb(path: str | Path) -> list:
    """(line number, COMMAND, argument text) for every command line; comments dropped; an
    unsupported command raises with its name and line."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"batch file {str(p)!r} does not exist; give the path of a tau-Argus .arb file")
    out = []
    for lineno, raw in enumerate(p.read_text(encoding="latin-1").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("//") or line.startswith("\\\\"):
            continue
        m = re.match(r"<([A-Za-z_]+)>\s*(.*)$", line)
        if not m:
            raise InputError(f"{p}: line {lineno}: {line[:40]!r} is not a batch command (<COMMAND> arguments)")
        cmd = m.group(1).upper()
        if cmd not in SUPPORTED:
            raise InputError(f"{p}: line {lineno}: <{cmd}> is not supported by sdckit; supported commands are "
                             f"{', '.join('<' + c + '>' for c in SUPPORTED if c != 'COMMENT')}; remove it or do that "
                             "step before the run")
        out.append((lineno, cmd, m.group(2).strip()))
    return out


def _quoted(text: str) -> list:
    return re.findall(r'"([^"]*)"', text)


def _unquote(text: str) -> str:
    q = _quoted(text)
    return q[0] if q else text.strip()


@dataclass
class _TableJob:
    line: int
    dims: list
    response: str | None
    shadow: str | None
    cost: str | None
    rules: list = field(default_factory=list)
    zero_unsafe: bool = False
    manual_level: float = 0.0
    use_status: bool = False
    table: Table | None = None
    frame: object = None
    manual: np.ndarray | None = None
    outcome: dict = field(default_factory=dict)
    notes: str = ""
    recode: dict = field(default_factory=dict)  # variable -> (old code -> new code, Hierarchy or None)
    apriori: list = field(default_factory=list)  # (cell, command, numbers) from <APRIORY> files


def _parse_rules(text: str, where: str) -> tuple:
    rules, zero, man, seen = [], False, 0.0, {}
    for part in [p.strip() for p in text.split("|") if p.strip()]:
        m = re.match(r"([A-Za-z]+)\s*\(([^)]*)\)$", part)
        if not m:
            raise InputError(f"{where}: safety rule {part!r} is not NAME(arguments)")
        name, args = m.group(1).upper(), [a.strip() for a in m.group(2).split(",") if a.strip()]
        nums = [float(a) for a in args]
        seen[name] = seen.get(name, 0) + 1
        holding = seen[name] > (1 if name in ("P", "NK", "FREQ") else 99)
        if name in ("P", "NK", "FREQ") and nums and nums[0] == 0:
            continue  # P(0,..), NK(0,0), FREQ(0,..): rule switched off
        if holding:
            raise InputError(f"{where}: holding-level rule {part!r} is not supported by sdckit (it needs <HOLDING> "
                             "microdata); switch it off with zeros")
        if name == "P":
            if len(nums) > 1 and nums[1] > 1:
                raise InputError(f"{where}: {part!r}: the p% rule with coalitions of n > 1 is not supported; use P(p,1)")
            rules.append(_rule({"type": "p%", "p": nums[0]}, part, where))
        elif name == "NK":
            rules.append(_rule({"type": "nk", "n": int(nums[0]), "k": nums[1]}, part, where))
        elif name == "FREQ":
            rules.append(_rule({"type": "threshold", "n": int(nums[0]),
                                "range_percent": nums[1] if len(nums) > 1 else 10.0}, part, where))
        elif name == "ZERO":
            zero = True
        elif name == "MAN":
            man = nums[0] if nums else 0.0
        elif name in ("WGT", "MIS"):
            if nums and nums[0] != 0 and name == "WGT":
                raise InputError(f"{where}: {part!r}: weighted safety rules are not supported; use WGT(0)")
        else:
            raise InputError(f"{where}: safety rule {name}(...) is not supported by sdckit; "
                             "supported: P, NK, FREQ, ZERO, MAN, WGT(0), MIS")
    return rules, zero, man


def _rule(spec: dict, part: str, where: str):
    """A safety rule built through the table-method registry (declared thresholds)."""
    try:
        return build_table_rule(spec, where="rule").build()
    except SDCError as exc:
        raise InputError(f"{where}: {part!r}: {str(exc).removeprefix('rule.')}") from None


#: tau-Argus's <SUPPRESS> methods -> the registered table methods that run them
ARGUS_METHODS = {"OPT": "optimal", "MOD": "modular", "GH": "hypercube", "RND": "rounding", "CKM": "ckm",
                 "CTA": "cta", "NET": "optimal", "HYP": "hypercube"}


def _args(text: str) -> list:
    t = text.strip()
    if t.startswith("("):
        t = t[1:]
    t = t.split(")")[0] if ")" in t and '"' not in t.split(")")[0] else t.rstrip(")")
    return [a.strip() for a in t.split(",")]


def run_arb(path: str | Path) -> dict:
    """Run the batch file; return ``{"batch", "jobs": [...], "files": [...], "notes": [...]}``."""
    p = Path(path).resolve()
    base = p.parent
    cmds = parse_arb(p)
    meta: ArgusMetadata | None = None
    micro = tab = None
    data = None
    jobs: list[_TableJob] = []
    log, files, notes = [], [], []

    def where(line: int) -> str:
        return f"{p.name}: line {line}"

    def job(line: int, n: int) -> _TableJob:
        if not 1 <= n <= len(jobs):
            raise InputError(f"{where(line)}: table {n} is not specified; {len(jobs)} table(s) so far")
        j = jobs[n - 1]
        if j.table is None:
            raise InputError(f"{where(line)}: table {n} has not been read; add <READMICRODATA> or <READTABLE> first")
        return j

    def file_of(name: str) -> Path:
        f = Path(name.replace("\\", "/"))
        return f if f.is_absolute() else base / f

    for line, cmd, arg in cmds:
        t0 = time.perf_counter()
        try:
            if cmd in _NOOP:
                if cmd == "GOINTERACTIVE":
                    notes.append(f"line {line}: <GOINTERACTIVE> ignored (no interactive mode)")
                continue
            if cmd == "OPENMICRODATA":
                micro, tab = file_of(_unquote(arg)), None
            elif cmd == "OPENTABLEDATA":
                tab, micro = file_of(_unquote(arg)), None
            elif cmd == "OPENMETADATA":
                meta = read_rda(file_of(_unquote(arg)))
            elif cmd == "CLEAR":
                jobs.clear()
            elif cmd == "SPECIFYTABLE":
                parts = arg.split("|")
                dims = _quoted(parts[0])
                if not dims:
                    raise InputError(f"{where(line)}: <SPECIFYTABLE> needs the explanatory variables in quotes")
                resp = [(_quoted(x) or [""])[0] for x in parts[1:]] + [""] * 3
                r = resp[0] if resp[0] and resp[0].upper() != "<FREQ>" else None
                jobs.append(_TableJob(line, dims, r, resp[1] or None, resp[2] or None))
            elif cmd == "SAFETYRULE":
                if not jobs:
                    raise InputError(f"{where(line)}: <SAFETYRULE> before any <SPECIFYTABLE>")
                j = jobs[-1]
                j.rules, j.zero_unsafe, j.manual_level = _parse_rules(arg, where(line))
                j.use_status = not j.rules
            elif cmd in ("READMICRODATA", "READTABLE"):
                if meta is None:
                    raise InputError(f"{where(line)}: <{cmd}> needs <OPENMETADATA> first")
                src = micro if cmd == "READMICRODATA" else tab
                if src is None:
                    need = "OPENMICRODATA" if cmd == "READMICRODATA" else "OPENTABLEDATA"
                    raise InputError(f"{where(line)}: <{cmd}> needs <{need}> first")
                data = read_argus_data(src, meta)
                for j in jobs:
                    _build(j, data, meta, tabular=cmd == "READTABLE", where=where(line))
                log.append({"line": line, "command": f"<{cmd}>", "file": str(src),
                            "tables": [{"table": k + 1, "dims": j.dims, "n_cells": j.table.n_cells}
                                       for k, j in enumerate(jobs)]})
                notes += [f"line {line}: table {k + 1}: {j.notes}" for k, j in enumerate(jobs) if j.notes]
            elif cmd == "RECODE":
                a = [x.strip() for x in arg.split(",", 2)]
                if len(a) < 3:
                    raise InputError(f"{where(line)}: <RECODE> needs (table, variable, level or \"file\")")
                j = job(line, int(a[0]))
                if j.frame is None:
                    raise InputError(f"{where(line)}: <RECODE> needs a table read from microdata; a table file "
                                     "cannot be recoded: recode it before the run")
                var, what = _unquote(a[1]), _unquote(a[2])
                j.recode[var] = _recode(meta, j, var, what, file_of, where(line))
                _build(j, j.frame, meta, tabular=False, where=where(line))
                log.append({"line": line, "command": "<RECODE>", "table": int(a[0]), "variable": var,
                            "recode": what if what.isdigit() else Path(what).name, "n_cells": j.table.n_cells})
            elif cmd in ("APRIORY", "APRIORI"):
                log.append(_apriory(arg, line, job, meta, file_of, where(line)))
            elif cmd == "COVER":
                notes.append(f"line {line}: <COVER> accepted: sdckit protects linked tables jointly "
                             "(<SUPPRESS> METHOD(0): one model over all tables), no cover table is built")
                log.append({"line": line, "command": "<COVER>", "note": "linked tables are protected jointly"})
            elif cmd in ("SUPPRESS", "ROUNDING"):
                log.append(_protect(cmd, arg, line, jobs, job, meta, data, where(line), file_of))
                if log[-1].get("note"):
                    notes.append(f"line {line}: {log[-1]['note']}")
            elif cmd == "WRITETABLE":
                a = _args(arg)
                if len(a) < 4:
                    raise InputError(f"{where(line)}: <WRITETABLE> needs (table, type, options, \"file\")")
                j = job(line, int(a[0]))
                opts = parse_write_options(a[2], where(line))
                target = file_of(_unquote(",".join(a[3:])))
                o = j.outcome
                if not o:
                    raise InputError(f"{where(line)}: table {a[0]} has not been protected; add <SUPPRESS> first")
                out_type = int(a[1])
                if out_type == 7 and o.get("kind") != "ckm":
                    raise InputError(f"{where(line)}: output type 7 (CKM) needs a table protected with CKM")
                resp_var = meta[j.response] if (meta is not None and j.response) else None
                w = write_argus_table(target, j.table, o["values"], o["status"], out_type, opts, where=where(line),
                                      extra=o.get("extra"), response=j.response,
                                      decimals=int(resp_var.arg("DECIMALS", 0)) if resp_var is not None else 0)
                files.append(str(w))
                log.append({"line": line, "command": "<WRITETABLE>", "table": int(a[0]), "type": out_type,
                            "file": str(w)})
                if out_type in (5, 7):
                    log[-1]["note"] = ("the .rda metadata tau-Argus writes beside output types 5 and 7 is not "
                                       "written (it names the code list and hierarchy files by path)")
                    notes.append(f"line {line}: {log[-1]['note']}")
        except SDCError as e:
            msg = str(e)
            if p.name not in msg:
                msg = f"{where(line)}: <{cmd}>: {msg}"
            raise type(e)(msg) if type(e) is not InputError else InputError(msg) from None
        if log and "seconds" not in log[-1] and log[-1]["line"] == line:
            log[-1]["seconds"] = round(time.perf_counter() - t0, 4)
    return jsonable({"batch": str(p), "jobs": log, "files": files, "notes": notes})


def _build(j: _TableJob, data, meta: ArgusMetadata, *, tabular: bool, where: str) -> None:
    for d in j.dims:
        meta[d]
        if d not in data.columns:
            raise InputError(f"{where}: variable {d!r} is not in the data file")
    if j.recode:  # <RECODE>: the codes mapped, the recoded hierarchy (or a flat one) used
        data = data.copy()
        for d, (mapping, _) in j.recode.items():
            codes = data[d].astype(str).str.strip()
            data[d] = codes.map(lambda c, m=mapping: m.get(c, c))
    hier = {}
    for d in j.dims:
        if d in j.recode:
            h = j.recode[d][1]
        else:
            h = meta.hierarchy(d, codes=data[d].astype(str).str.strip().unique())
        if h is not None:
            hier[d] = h
    total = {str(meta[d].arg("TOTCODE", "Total")) for d in j.dims}
    total = total.pop() if len(total) == 1 else "Total"
    if not tabular:
        resp = j.response
        n_top = 3
        if resp is not None:
            v = meta[resp]
            if v.arg("CKM", "N").upper().startswith("T("):
                n_top = max(n_top, int(re.findall(r"\d+", v.arg("CKM"))[0]))
        j.table = Table.from_microdata(data, j.dims, response=resp, hierarchies=hier, total=total, n_top=n_top)
        j.frame = data
        return
    if j.response is None:
        raise InputError(f"{where}: a tabular input needs a response variable in <SPECIFYTABLE>")
    fr = [v.name for v in meta.by_role("frequency")]
    tops = [v.name for v in meta.by_role("top")]
    df = data.copy()
    for d in j.dims:  # cells of a declared missing code (the fields after the name in free format) are left out
        miss = {str(x).strip() for x in meta[d].fields}
        if miss:
            df = df[~df[d].astype(str).str.strip().isin(miss)]
    for c in [j.response] + fr + tops:
        df[c] = df[c].astype(float)
    try:
        j.table = Table.from_cells(df, j.dims, j.response, freq=fr[0] if fr else None, top=tuple(tops),
                                   hierarchies=hier, total=total, kind="magnitude")
    except InputError as e:
        if "not additive" not in str(e):
            raise
        # as tau-Argus's <READTABLE> 1 (compute totals): keep the inner cells, recompute the totals;
        # the largest contributions of totals cannot be derived, so rules that need them are refused
        leaf = np.ones(len(df), bool)
        for d in j.dims:
            h = hier.get(d)
            leaf &= (df[d].astype(str).str.strip() != total) if h is None else \
                df[d].astype(str).str.strip().map(lambda c, h=h: bool(h.is_leaf[h.index[c]]) if c in h.index else False)
        j.table = Table.from_cells(df[leaf], j.dims, j.response, freq=fr[0] if fr else None,
                                   hierarchies=hier, total=total, kind="magnitude")
        j.notes = f"the table file is not additive; totals recomputed from its {int(leaf.sum())} inner cells"
        if any(r.name != "threshold" for r in j.rules):
            raise InputError(f"{where}: the table file is not additive and its totals' top contributions cannot be "
                             "recomputed; use FREQ rules or status only, or correct the file") from None
        df = df[leaf]
    st = meta.by_role("status")
    if st:
        codes = df[st[0].name].astype(str).str.strip().to_numpy()
        idx = [j.table.hierarchies[k].index for k in range(len(j.dims))]
        flat = np.ravel_multi_index([np.array([ix[str(c).strip()] for c in df[d]]) for ix, d in zip(idx, j.dims)],
                                    j.table.shape)
        man = np.zeros(j.table.n_cells, bool)
        man[flat] = codes == meta.status_codes.get("UNSAFE", "U")
        j.manual = man


def _cut(h: Hierarchy, closed: np.ndarray) -> tuple[dict, Hierarchy]:
    """The hierarchy with the sub-trees below the ``closed`` nodes removed, and the code map
    (every removed node -> its closed ancestor)."""
    top = np.arange(len(h))  # the highest closed strict ancestor of each node (itself if none)
    for i in range(1, len(h)):
        anc = [a for a in h.ancestors(i)[1:] if closed[a]]
        top[i] = anc[-1] if anc else i
    keep = np.flatnonzero(top == np.arange(len(h)))
    new = np.full(len(h), -1)
    new[keep] = np.arange(keep.size)
    cut = Hierarchy([h.codes[i] for i in keep], [-1] + [int(new[h.parent[i]]) for i in keep[1:]])
    return {h.codes[i]: h.codes[top[i]] for i in range(len(h)) if top[i] != i}, cut


def _recode(meta: ArgusMetadata, j: _TableJob, var: str, what: str, file_of, where: str) -> tuple:
    """(code map, hierarchy or None) of a <RECODE> (module docstring)."""
    if var not in j.dims:
        raise InputError(f"{where}: <RECODE>: {var!r} is not a variable of table {j.dims}; give one of them")
    h = j.recode[var][1] if var in j.recode else meta.hierarchy(var, codes=j.frame[var].astype(str).str.strip().unique())
    if len(what) == 1 and what.isdigit() and what != "0":
        if h is None:
            raise InputError(f"{where}: <RECODE> {var}, {what}: truncation needs a hierarchical variable; "
                             "give a recode file instead")
        return _cut(h, (h.depth == int(what)) & ~h.is_leaf)
    f = file_of(what)
    if not f.is_file():
        raise InputError(f"{where}: <RECODE>: recode file {what!r} does not exist; give a level 1-9 or a file")
    lines = [x.strip() for x in f.read_text(encoding="latin-1").splitlines() if x.strip()]
    if lines and lines[0].upper() == "<TREERECODE>":
        if h is None:
            raise InputError(f"{where}: <RECODE>: a <TREERECODE> file needs a hierarchical variable")
        closed = np.zeros(len(h), bool)
        for code in lines[1:]:
            if code not in h.index:
                raise InputError(f"{where}: <RECODE>: {f.name}: code {code!r} is not in the hierarchy of {var}")
            closed[h.index[code]] = True
        return _cut(h, closed)
    if h is not None and h.n_levels > 1:
        raise InputError(f"{where}: <RECODE>: {f.name}: a global recode of the hierarchical variable {var} is not "
                         "supported; truncate it (a level 1-9) or use a <TREERECODE> file")
    codes = sorted(j.frame[var].astype(str).str.strip().unique())
    mapping: dict = {}
    for k, ln in enumerate(lines, start=1):
        if ln.upper().startswith("<CODELIST>"):
            continue
        if ln.startswith("<"):
            raise InputError(f"{where}: <RECODE>: {f.name} line {k}: {ln.split()[0]} is not supported; "
                             "remove it (recode missing values before the run)")
        if ":" not in ln:
            raise InputError(f"{where}: <RECODE>: {f.name} line {k}: {ln!r} is not 'new: old, a-b, ...'")
        dest, src = (x.strip() for x in ln.split(":", 1))
        for item in [x.strip() for x in src.split(",") if x.strip()]:
            lo, dash, hi = item.partition("-")
            for c in codes:
                if (not dash and c == item) or (dash and _in_range(c, lo.strip(), hi.strip())):
                    mapping[c] = dest
    return mapping, None


def _in_range(code: str, lo: str, hi: str) -> bool:
    """``lo-hi``, ``-hi``, ``lo-``: numeric comparison when all are numbers, else text."""
    def key(x: str):
        return (0, float(x), "") if re.fullmatch(r"[-+]?\d+(\.\d*)?", x) else (1, 0.0, x)
    c = key(code)
    return (not lo or key(lo) <= c) and (not hi or c <= key(hi))


_APRIORY_STATUS = {"S", "U", "PL", "C", "W"}


def _apriory(arg: str, line: int, job, meta: ArgusMetadata, file_of, where: str) -> dict:
    """Read an <APRIORY> file into the table's list of a-priori changes (module docstring)."""
    q = _quoted(arg)
    rest = re.sub(r'"[^"]*"', "\x00", arg).split(",")
    if len(q) < 2 or len(rest) < 3:
        raise InputError(f"{where}: <APRIORY> needs \"file\", table, \"separator\"[, ignore_error[, expand_bogus]]")
    f = file_of(q[0])
    n = int(rest[1].strip())
    sep = q[1]
    flags = [x.strip() for x in rest[3:]]
    ignore = flags[0] != "0" if flags and flags[0] else True
    expand = len(flags) > 1 and flags[1] == "1"
    j = job(line, n)
    t = j.table
    if not f.is_file():
        raise InputError(f"{where}: <APRIORY>: file {q[0]!r} does not exist")
    totals = {str(meta[d].arg("TOTCODE", "Total")) for d in j.dims}
    counts = {"lines": 0, "skipped": 0, "status": 0, "cost": 0, "protection_levels": 0}
    for k, raw in enumerate(f.read_text(encoding="latin-1").splitlines(), start=1):
        if not raw.strip():
            continue
        parts = [x.strip() for x in raw.split(sep)]
        nd = len(j.dims)
        if len(parts) < nd + 1:
            raise InputError(f"{where}: <APRIORY>: {f.name} line {k}: {len(parts) - 1} codes for a table of {nd} "
                             f"variables; check the separator {sep!r}")
        counts["lines"] += 1
        cmd = parts[nd].upper()
        nums = [float(x) for x in parts[nd + 1:] if x]
        if cmd not in _APRIORY_STATUS:
            raise InputError(f"{where}: <APRIORY>: {f.name} line {k}: {cmd!r} is not supported by sdckit "
                             "(supported: S, U, PL, C, W); remove the line")
        nodes, ok = [], True
        for h, code in zip(t.hierarchies, parts[:nd]):
            c = h.codes[0] if (code == "" or code in totals) else code
            if c not in h.index:
                ok = False
                break
            i = h.index[c]
            group = {i}
            if expand:  # the whole single-child chain of the code
                up = i
                while h.parent[up] >= 0 and len(h.children[h.parent[up]]) == 1:
                    up = int(h.parent[up])
                group = {up}
                while len(h.children[up]) == 1:
                    up = h.children[up][0]
                    group.add(up)
            nodes.append(sorted(group))
        if not ok:
            if not ignore:
                raise InputError(f"{where}: <APRIORY>: {f.name} line {k}: a code is not in table {n}; "
                                 "correct it or set ignore_error = 1")
            counts["skipped"] += 1
            continue
        if cmd in ("C", "W") and not nums or cmd == "PL" and len(nums) < 2:
            raise InputError(f"{where}: <APRIORY>: {f.name} line {k}: {cmd} needs "
                             f"{'a cost' if cmd != 'PL' else 'two protection levels'}")
        for combo in np.array(np.meshgrid(*nodes, indexing="ij")).reshape(nd, -1).T:
            j.apriori.append((int(np.ravel_multi_index(tuple(combo), t.shape)), cmd, nums))
        counts["status" if cmd in ("S", "U") else "cost" if cmd in ("C", "W") else "protection_levels"] += 1
    return {"line": line, "command": "<APRIORY>", "table": n, "file": f.name, **counts}


def _write_extra(j: _TableJob, prim, aud=None) -> dict:
    """What output types 5 and 6 write besides the values: the primary cells' protection levels,
    the number of largest contributions the rules use and the audit's intervals (a published
    cell's interval is its value)."""
    extra = {"lower_protection": prim.lower, "upper_protection": prim.upper, "n_top": top_n_needed(j.rules)}
    if aud is not None and hasattr(aud, "cells") and hasattr(aud, "lower") and hasattr(aud, "upper"):
        lo = np.asarray(j.table.value, float).copy()
        up = lo.copy()
        lo[aud.cells], up[aud.cells] = aud.lower, aud.upper
        extra["realized_lower"], extra["realized_upper"] = lo, up
    return extra


def _primary(j: _TableJob):
    manual = j.manual if (j.use_status or j.manual is not None) else None
    unsafe = [c for c, cmd, _ in j.apriori if cmd == "U"]
    if unsafe:
        manual = np.zeros(j.table.n_cells, bool) if manual is None else manual.copy()
        manual[unsafe] = True
    prim = primary_cells(j.table, j.rules, zero_unsafe=j.zero_unsafe, manual=manual, manual_level=j.manual_level)
    if not any(cmd in ("S", "PL") for _, cmd, _ in j.apriori):
        return prim
    sens, up, lo, sl = prim.sensitive.copy(), prim.upper.copy(), prim.lower.copy(), prim.sliding.copy()
    for c, cmd, nums in j.apriori:  # in file order: a later line wins
        if cmd == "S":
            sens[c], up[c], lo[c], sl[c] = False, 0.0, 0.0, 0.0
        elif cmd == "PL" and sens[c]:  # tau-Argus: protection levels of primary cells only
            lo[c], up[c] = nums[0], nums[1]
    return Primary(sens, up, lo, sl, np.where(sens, prim.reason, "").astype(object))


def _apriori_costs(j: _TableJob, base: np.ndarray) -> np.ndarray | None:
    """The cell costs with the <APRIORY> ``C`` / ``W`` lines applied, or None without any."""
    costs = [(c, nums[0]) for c, cmd, nums in j.apriori if cmd in ("C", "W")]
    if not costs:
        return None
    w = np.asarray(base, float).copy()
    for c, v in costs:
        w[c] = v
    return w


def _protect(cmd, arg, line, jobs, job, meta, data, where, file_of) -> dict:
    m = re.match(r"([A-Za-z]*)\s*(\(.*)$", arg)
    if cmd == "ROUNDING":
        kind, rest = "RND", arg
    elif m:
        kind, rest = m.group(1).upper(), m.group(2)
    else:
        raise InputError(f"{where}: <SUPPRESS> needs METHOD(table, ...), e.g. MOD(1,5,1,0,0)")
    if kind not in ARGUS_METHODS:
        raise InputError(f"{where}: <SUPPRESS> {kind} is not supported by sdckit; supported: OPT, MOD, GH (and HYP, "
                         "sdckit's hypercube), NET (run as OPT on 2-D tables), CTA, RND, CKM")
    inner = rest[rest.index("(") + 1:rest.index(")")] if "(" in rest and ")" in rest else rest
    a = [x.strip() for x in inner.split(",") if x.strip()]
    n = int(a[0])
    if n == 0:
        if kind == "HYP":
            kind = "GH"
        if kind not in ("MOD", "GH", "OPT"):
            raise InputError(f"{where}: linked tables (table 0) can be protected with MOD, GH or OPT, not {kind}")
        from ..linked import protect_linked
        for k in range(len(jobs)):
            job(line, k + 1)
        res = protect_linked([j.table for j in jobs], [], method="heuristic" if kind == "GH" else "optimal",
                             primaries=[_primary(j) for j in jobs],
                             **({"time_limit": float(a[1])} if len(a) > 1 and kind == "OPT" else {}))
        for j, s in zip(jobs, res.suppressed):
            prim = _primary(j)
            j.outcome = {"kind": "suppression", "values": np.where(s, np.nan, j.table.value),
                         "status": table_status(j.table, primary=prim.sensitive, suppressed=s),
                         "extra": _write_extra(j, prim)}
        d = res.to_dict()
        return {"line": line, "command": "<SUPPRESS>", "method": kind, "table": 0, "linked": True, **d}
    j = job(line, n)
    t = j.table
    if kind == "CKM":
        from ..ckm import FlexParams, ckm_frequency, ckm_magnitude
        keyvar = meta.by_role("record_key")
        if not keyvar or j.frame is None:
            raise InputError(f"{where}: CKM needs microdata with a <RECORDKEY> variable")
        kv = keyvar[0]
        given = _quoted(rest.split(")", 1)[1] if ")" in rest else "")
        if t.kind == "frequency":
            pfile = given[0] if given else kv.arg("PFILE")
            if not pfile:
                raise InputError(f"{where}: no p-table: give CKM(n) \"ptable.txt\" or <PFILE> in the metadata")
            res = ckm_frequency(j.frame, j.dims, key=kv.name, ptable=meta.file(pfile) if not given else file_of(pfile),
                                table=t)
        else:
            v = meta[j.response]
            pfile = given[0] if given else kv.arg("PFILE_CONT")
            if not pfile:
                raise InputError(f"{where}: no p-table: give CKM(n) \"ptable.txt\" or <PFILE_CONT> in the metadata")
            sc = v.arg("SCALING", "")
            nums = [float(x) for x in re.findall(r"[-+0-9.eE]+", sc)] if sc.upper().startswith("F") else []
            k_top = int(re.findall(r"\d+", v.arg("CKM", "T(1)"))[0]) if v.arg("CKM", "N").upper().startswith("T") else 1
            eps = (1.0,) + tuple(nums[4:4 + k_top - 1]) if len(nums) >= 4 else (1.0,)
            flex = FlexParams(*nums[:4], epsilon=eps) if len(nums) >= 4 else FlexParams(epsilon=eps)
            small, j_note = None, ""
            if v.tags.get("SEPARATION", ["N"])[0].upper() == "Y":
                sep = given[1] if len(given) > 1 else kv.arg("PFILE_SEP")
                if not sep:
                    raise InputError(f"{where}: <SEPARATION> Y needs a small-cell p-table (<PFILE_SEP>)")
                small = meta.file(sep) if len(given) < 2 else file_of(sep)
            if v.tags.get("PARITY", ["N"])[0].upper() == "Y":
                j_note = "<PARITY> Y: the p-table's even/odd rows are used when it has them"
            res = ckm_magnitude(j.frame, j.dims, j.response, key=kv.name,
                                ptable=meta.file(pfile) if not given else file_of(pfile), flex=flex, table=t,
                                include_zeros=v.tags.get("INCLUDEZEROS", ["N"])[0].upper() == "Y",
                                small_ptable=small)
        j.outcome = {"kind": "ckm", "values": res.perturbed, "status": table_status(t, kind="ckm"),
                     "extra": {"original": t.value, "difference": res.perturbation, "cell_key": res.cell_key,
                               "cell_key_decimals": int(kv.arg("DECIMALS", 8))}}
        out = {"line": line, "command": "<SUPPRESS>", "method": "CKM", "table": n, **res.to_dict()}
        if t.kind != "frequency" and j_note:
            out["note"] = j_note
        return out
    if kind == "RND":
        if len(a) < 2:
            raise InputError(f"{where}: RND needs (table, base, ...)")
        res = build_table_method("rounding", {"base": int(a[1])}, where=where).apply(t).detail
        j.outcome = {"kind": "rounding", "values": np.asarray(res.rounded, float),
                     "status": table_status(t, kind="rounding")}
        return {"line": line, "command": "<SUPPRESS>" if cmd == "SUPPRESS" else "<ROUNDING>", "method": "RND",
                "table": n, "base": int(a[1]), "status": res.status, "n_cells": t.n_cells}
    prim = _primary(j)
    if kind == "CTA":
        if len(a) > 1:
            raise InputError(f"{where}: <SUPPRESS> CTA({inner}): sdckit reads CTA(table) only; remove the other "
                             "arguments (sdckit solves the MILP with HiGHS)")
        tres = build_table_method("cta", {}, where=where).apply(t, prim)
        res = tres.detail
        j.outcome = {"kind": "cta", "values": np.asarray(res.adjusted, float), "status": table_status(t),
                     "extra": _write_extra(j, prim)}
        return {"line": line, "command": "<SUPPRESS>", "method": "CTA", "sdckit_method": "cta", "table": n,
                "n_cells": t.n_cells, "n_primary": prim.n_primary, "objective": res.objective,
                "proven_optimal": res.proven_optimal, "audit_ok": bool(res.audit.ok), "audit": res.audit.statement(),
                "status": res.status}
    note = None
    if kind == "NET":
        if len(t.dims) != 2:
            raise InputError(f"{where}: <SUPPRESS> NET is tau-Argus's network heuristic for 2-dimensional tables; "
                             f"table {n} has {len(t.dims)} dimensions: use OPT, MOD or GH")
        note = "NET: sdckit has no network-flow heuristic; the table was protected with the optimal method (OPT)"
    elif kind == "HYP":
        note = "HYP: read as GH, tau-Argus's hypercube (sdckit's hypercube method)"
    opts = {}
    if kind in ("OPT", "NET") and len(a) > 1:
        opts["time_limit"] = float(a[1])
    if kind not in ("GH", "HYP"):  # tau-Argus's own cost scaling (the hypercube keeps its default)
        opts["cost"] = "tauargus"
    m = build_table_method(ARGUS_METHODS[kind], opts, where=where)
    w = _apriori_costs(j, cell_costs(t, getattr(m, "cost", "value")))
    if w is None:
        res = m.apply(t, prim).detail
    else:  # <APRIORY> costs: the method's own class, with the cell costs given
        res = _with_costs(m, t, prim, w)
    j.outcome = {"kind": "suppression", "values": np.where(res.suppressed, np.nan, t.value),
                 "status": table_status(t, primary=prim.sensitive, suppressed=res.secondary),
                 "extra": _write_extra(j, prim, getattr(res, "audit", None))}
    out = {"line": line, "command": "<SUPPRESS>", "method": kind, "sdckit_method": res.method, "table": n,
           "n_cells": t.n_cells, "n_primary": prim.n_primary, "n_secondary": int(res.n_secondary),
           "audit_ok": bool(res.audit.ok), "status": res.status}
    if w is not None:
        out["apriori_costs"] = True
    if note:
        out["note"] = note
    return out


def _with_costs(m, t: Table, prim, w: np.ndarray):
    """Run a registered suppression method's own class with given cell costs."""
    from ..hypercube import HypercubeSuppression
    from ..modular import ModularSuppression
    from ..suppression import OptimalSuppression

    params = m.public_params()
    cls = {"optimal": OptimalSuppression, "modular": ModularSuppression, "hypercube": HypercubeSuppression}[m.method_name]
    fields = set(cls.__dataclass_fields__)
    return cls(**{k: v for k, v in params.items() if k in fields}).apply(t, prim, weights=w)
