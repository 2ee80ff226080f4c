"""Translate an sdcMicro script (R) into sdckit release specs, saying line by line what it
could not translate.

A small reader of R's call syntax (assignments, nested calls, named arguments, ``c(...)``,
``list(...)``, strings, numbers, ``TRUE``/``FALSE``/``NULL``, ``a:b``, formulas, ``function``,
``if``/``else``, ``for``, braces, ``x[...]``, ``x$y``, ``pkg::f``) turns the script into a tree;
constant assignments (``kv <- c("a", "b")``) are remembered, reads (``read.csv("f.csv")``,
``fread``, ``readRDS``, ``data(name)``) name the input, and every call of an sdcMicro function
becomes a ``[roles]`` entry, a ``[[steps]]`` table, a ``[gate]`` threshold or an ``[output]``
key. Calls on one data source are chained in one spec, in the script's order; a script that
reads several files gives one spec per file.

Nothing is evaluated: a value that depends on a condition or a computation the reader cannot
follow is reported on its line (an ``if`` expression gives its first branch, and says so).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from ..errors import InputError
from .reader import Node, parse_r

# ------------------------------------------------------------------------------------ evaluation


class _Unknown:
    def __init__(self, why: str) -> None:
        self.why = why

    def __repr__(self) -> str:
        return f"<unknown: {self.why}>"


def _func_name(node: Node) -> str:
    if node.kind == "call" and isinstance(node.value, Node) and node.value.kind == "name":
        return node.value.value.split("::")[-1]
    return ""


def _show(node: Node | None) -> str:
    """A short R-like text of a node (for messages)."""
    if node is None:
        return ""
    k = node.kind
    if k == "str":
        return repr(node.value).replace("'", '"')
    if k in ("num", "name"):
        return str(node.value)
    if k == "bool":
        return "TRUE" if node.value else "FALSE"
    if k == "null":
        return "" if node.value == "empty" else "NULL"
    if k == "call":
        inner = ", ".join((f"{n} = " if n else "") + _show(a) for n, a in node.args)
        return f"{_show(node.value)}({inner})"
    if k == "index":
        return f"{_show(node.value)}[{', '.join(_show(a) for _, a in node.args)}]"
    if k == "dollar":
        return f"{_show(node.args[0])}${node.value}"
    if k in ("binary", "formula"):
        return f"{_show(node.args[0])} {node.value} {_show(node.args[1])}".strip()
    if k == "unary":
        return f"{node.value}{_show(node.args[0])}"
    return k


class _Env:
    """Constant values of the script's names (a flat scope: R's function scopes are merged)."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.guesses: list[tuple[int, str]] = []

    def eval(self, node: Node | None) -> Any:
        if node is None:
            return None
        k = node.kind
        if k in ("str", "num", "bool"):
            return node.value
        if k == "null":
            return None
        if k == "name":
            if node.value in self.values:
                return self.values[node.value]
            return _Unknown(f"`{node.value}` has no constant value")
        if k == "unary" and node.value == "-":
            v = self.eval(node.args[0])
            return -v if isinstance(v, (int, float)) else [-x for x in v] if isinstance(v, list) else v
        if k == "binary" and node.value == ":":
            a, b = self.eval(node.args[0]), self.eval(node.args[1])
            if isinstance(a, (int, float)) and isinstance(b, (int, float)):
                step = 1 if b >= a else -1
                return [int(a) + i * step for i in range(int(abs(b - a)) + 1)]
            return _Unknown(f"`{_show(node)}`")
        if k == "binary" and node.value in ("*", "/", "+", "-"):
            a, b = self.eval(node.args[0]), self.eval(node.args[1])
            if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
                return {"*": a * b, "/": a / b if b else float("nan"), "+": a + b, "-": a - b}[node.value]
            return _Unknown(f"`{_show(node)}`")
        if k == "if":
            cond = self.eval(node.args[0])
            if isinstance(cond, bool):
                return self.eval(node.args[1] if cond else node.args[2])
            self.guesses.append((node.line, f"`{_show(node.args[0])}` is not known before the script runs: "
                                             "its first branch is taken"))
            return self.eval(node.args[1])
        if k == "block":
            return self.eval(node.args[-1]) if node.args else None
        if k == "call":
            name = _func_name(node)
            if name in ("c", "list"):
                out: list = []
                for _, a in node.args:
                    v = self.eval(a)
                    if isinstance(v, _Unknown):
                        return v
                    if isinstance(v, list) and name == "c":
                        out.extend(v)
                    elif v is not None:
                        out.append(v)
                return out
            if name == "make.names" and node.args:
                # R renames a file's columns on reading (read.csv's check.names); sdckit reads
                # them as the file writes them: the names before make.names are the columns
                v = self.eval(node.args[0][1])
                if isinstance(v, (str, list)) and all(isinstance(x, str) for x in _as_list(v)):
                    self.guesses.append((node.line, "make.names(): the file's own column names are kept "
                                                    "(sdckit does not rename columns on reading)"))
                    return v
            if name in ("as.integer", "as.numeric", "as.character", "unique", "I"):
                return self.eval(node.args[0][1]) if node.args else None
            return _Unknown(f"`{_show(node)}` is computed when the script runs")
        return _Unknown(f"`{_show(node)}`")


def _known(v: Any) -> bool:
    return not isinstance(v, _Unknown)


def _as_list(v: Any) -> list:
    return v if isinstance(v, list) else [v]


# ----------------------------------------------------------------------------------- translation

#: sdcMicro functions that read or write data, print or time: the line is not a masking step
_READERS = {"read.csv", "read.csv2", "read.table", "read.delim", "fread", "readRDS", "read_sav", "read_dta",
            "read_sas", "read.dta", "read_csv", "read_parquet", "createDat", "load", "read.spss"}
_HOUSEKEEPING = {"library", "require", "suppressMessages", "suppressPackageStartupMessages",
                 "requireNamespace", "options", "Sys.setenv", "setwd", "print", "cat", "message", "head",
                 "summary", "str", "invisible", "system.time", "tryCatch"}
#: risk and utility measures: sdckit's report measures them; a [gate] threshold checks them
_MEASURES = {
    "measure_risk": "sdckit's report measures the risk (f_k, individual and global risk); set a [gate] "
                    "threshold such as max_global_risk",
    "freqCalc": "sdckit's report computes the key frequencies (f_k, F_k)",
    "indivRisk": "sdckit's report computes the individual risk (gate max_individual_risk)",
    "suda2": "SUDA2 is `sdckit risk --suda`; the release report does not run it",
    "ldiversity": "l-diversity is the [gate] l_diversity threshold (sensitive variables in [roles] sensitive)",
    "dRisk": "interval disclosure is sdckit.risk interval_disclosure_sd(max_outside = 0); the report shows "
             "record linkage on the numeric variables",
    "dRiskRMD": "the report shows record linkage on the numeric variables",
    "dUtility": "the report's utility section (IL1, eigenvalue loss)",
    "modRisk": "log-linear risk is sdckit.risk (loglinear_risk)",
    "kAnon_violations": "the report counts records below k",
    "calcRisks": "sdckit's report measures the risk after every release",
    "infoLoss": "the report's utility section",
    "IL_correl": "the report's utility section (correlations before and after)",
    "IL_variables": "the report's utility section",
    "report": "sdckit protect writes the public and internal reports",
    "extractManipData": "the released data is [output] data",
    "undolast": "a spec is declarative: edit the step instead of undoing it",
    "show": "sdckit's report",
}


@dataclass
class LineNote:
    """What became of one line: ``status`` is "translated", "covered" (sdckit does it without a
    step: reports, encoding) or "not translated"; ``what`` says what."""

    line: int
    status: str
    text: str
    what: str

    def to_dict(self) -> dict:
        return {"line": self.line, "status": self.status, "code": self.text, "what": self.what}


@dataclass
class Translation:
    """One release spec (as the dict a TOML file holds) and the notes of every line read."""

    source: str
    spec: dict
    notes: list[LineNote]

    def toml(self) -> str:
        import tomli_w

        head = ["# Translated from an sdcMicro script by `sdckit from-sdcmicro`.",
                "# Lines it could not translate are listed at the end of this file."]
        body = tomli_w.dumps(self.spec)
        tail = [f"# line {n.line}: {n.status}: {n.what}" for n in self.notes if n.status == "not translated"]
        return "\n".join(head) + "\n\n" + body + ("\n" + "\n".join(tail) + "\n" if tail else "")


class _Chain:
    def __init__(self, source: str) -> None:
        self.source = source
        self.roles: dict[str, Any] = {}
        self.steps: list[dict] = []
        self.gate: dict[str, Any] = {}
        self.output: dict[str, Any] = {}
        self.seed: int | None = None
        self.notes: list[LineNote] = []


class _Translator:
    def __init__(self, src: str) -> None:
        self.lines = src.splitlines()
        self.env = _Env()
        self.data_of: dict[str, str] = {}          # R name -> data source
        self.chains: dict[str, _Chain] = {}
        self.notes: list[LineNote] = []            # lines of no chain
        self.seed: int | None = None
        self.last_source: str | None = None

    # -------------------------------------------------------------- helpers
    def text(self, node: Node) -> str:
        first = node.line
        last = max(node.end_line or first, first)
        seg = " ".join(s.strip() for s in self.lines[first - 1:last])
        return seg if len(seg) <= 160 else seg[:157] + "..."

    def note(self, node: Node, status: str, what: str, chain: _Chain | None = None) -> None:
        (chain.notes if chain is not None else self.notes).append(LineNote(node.line, status, self.text(node), what))

    def chain(self, source: str) -> _Chain:
        if source not in self.chains:
            self.chains[source] = _Chain(source)
        self.last_source = source
        return self.chains[source]

    def root(self, node: Node | None) -> str | None:
        """The R name a data argument comes from (x in x[, v], x$age, as.data.frame(x))."""
        while node is not None:
            if node.kind == "name":
                return node.value
            if node.kind in ("index", "call") and isinstance(node.value, Node):
                node = node.value if node.kind == "index" else (node.args[0][1] if node.args else None)
            elif node.kind == "dollar":
                node = node.args[0]
            else:
                return None
        return None

    def source_of(self, node: Node | None) -> str:
        name = self.root(node)
        if name is not None and name in self.data_of:
            return self.data_of[name]
        if name is not None:
            return self.data_of.setdefault(name, name)
        return self.last_source or "data"

    def read_source(self, node: Node) -> str | None:
        """The file or data-set name a read call names (its innermost string literal)."""
        name = _func_name(node)
        if name == "data":
            return _show(node.args[0][1]).strip('"') if node.args else None
        if name == "createDat":
            return "createDat"
        for n in self.walk(node):
            if n.kind == "str":
                return n.value
        for _, a in node.args:
            v = self.env.eval(a)
            if isinstance(v, str):
                return v
        return None

    def sdc_calls(self, node: Node | None) -> list[Node]:
        """The sdcMicro calls of an expression outside function literals; the body of each
        function literal met (``best(function() microaggregation(x, ...))``) is translated as
        statements, in place."""
        found: list[Node] = []

        def visit(n: Node | None) -> None:
            if n is None:
                return
            if n.kind == "function":
                self.statement(n.args[0])
                return
            if n.kind == "call" and self.is_sdcmicro(n):
                found.append(n)
                return
            if isinstance(n.value, Node):
                visit(n.value)
            for a in n.args:
                visit(a[1] if isinstance(a, tuple) else a)

        visit(node)
        return found

    def has_function(self, node: Node | None) -> bool:
        return any(n.kind == "function" for n in self.walk(node))

    def walk(self, node: Node | None) -> Iterator[Node]:
        if node is None:
            return
        yield node
        if isinstance(node.value, Node):
            yield from self.walk(node.value)
        for a in node.args:
            yield from self.walk(a[1] if isinstance(a, tuple) else a)

    # -------------------------------------------------------------- statements
    def run(self, statements: list[Node]) -> None:
        for st in statements:
            self.statement(st)

    def statement(self, st: Node) -> None:
        k = st.kind
        if k == "block":
            self.run(st.args)
            return
        if k == "if":
            self.note(st, "covered", f"condition `{_show(st.args[0])}` is not evaluated: every branch is "
                                     "translated in order")
            for branch in st.args[1:]:
                if branch is not None:
                    self.statement(branch)
            return
        if k in ("for", "while"):
            self.note(st, "covered", "loop: its body is translated once")
            self.statement(st.args[-1])
            return
        if k == "function":
            self.function_def(st, None)
            return
        if k == "assign":
            self.assignment(st)
            return
        if k == "call":
            self.call_statement(st)
            return
        if k == "name" and st.value in self.data_of:
            self.note(st, "covered", "printing an object: sdckit's report shows it")
            return
        self.note(st, "not translated", "not an sdcMicro call")

    def function_def(self, st: Node, name: str | None) -> None:
        body = st.args[0]
        calls = [n for n in self.walk(body) if n.kind == "call" and self.is_sdcmicro(n)]
        if not calls:
            self.note(st, "not translated", f"function {name or ''} defines R code without sdcMicro calls "
                                            f"(lines {st.line}-{st.end_line}): nothing to translate".replace("  ", " "))
            return
        self.statement(body)

    def is_sdcmicro(self, node: Node) -> bool:
        name = _func_name(node)
        return name in _STEP_RULES or name in _MEASURES or name == "createSdcObj"

    def assignment(self, st: Node) -> None:
        target, value = st.args
        tname = self.root(target)
        if value.kind == "function":
            self.function_def(value, tname)
            return
        if value.kind == "call" and _func_name(value) in _READERS or _func_name(value) == "data":
            src = self.read_source(value)
            if src is None:
                self.note(st, "not translated", f"reads data from a source the translator cannot name: "
                                                f"`{_show(value)}`; set [input] path by hand")
                return
            if tname is not None:
                self.data_of[tname] = src
            ch = self.chain(src)
            what = ("createDat() generates sdcMicro's synthetic test data: write it to a file and give it "
                    "with --input" if src == "createDat" else f"[input] path = {src!r}")
            self.note(st, "translated", what, ch)
            return
        if target.kind in ("index", "dollar") and tname in self.data_of:
            calls = [n for n in self.walk(value) if n.kind == "call"]
            if calls and all(_func_name(n) in ("factor", "as.factor", "as.character", "as.numeric", "as.integer")
                             for n in calls):
                self.note(st, "covered", "type conversion: sdckit encodes [roles] key_vars as categories itself",
                          self.chains.get(self.data_of[tname]))
                return
        if self.has_function(value) or any(n.kind == "call" and self.is_sdcmicro(n) for n in self.walk(value)):
            calls = self.sdc_calls(value)
            for c in calls:
                self.sdc_call(c, st, tname)
            if not calls:
                self.note(st, "covered", f"`{tname}` holds what the R code above computes")
            return
        v = self.env.eval(value)
        if _known(v) and tname is not None and target.kind == "name":
            self.env.values[tname] = v
            self.note(st, "covered", f"constant `{tname}` (used by the calls below)")
            return
        src_name = self.root(value)
        view = value.kind in ("name", "index") or _func_name(value) in (
            "as.data.frame", "copy", "data.table", "as.data.table", "subset", "na.omit")
        if tname is not None and view and src_name in self.data_of and target.kind == "name":
            self.data_of[tname] = self.data_of[src_name]          # y <- x[, vars]: the same data
            self.note(st, "covered", f"`{tname}` is a view of the data read from {self.data_of[src_name]!r}",
                      self.chains.get(self.data_of[src_name]))
            return
        if target.kind == "name" and tname is not None:
            self.env.values.pop(tname, None)
        self.note(st, "not translated", f"R computation, not an sdcMicro call: `{_show(value)[:80]}`")

    def call_statement(self, st: Node) -> None:
        name = _func_name(st)
        if name == "set.seed":
            v = self.env.eval(st.args[0][1]) if st.args else None
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                self.seed = int(v)
                self.note(st, "translated", f"[run] seed = {int(v)} (sdckit draws its own streams: the same "
                                            "seed does not give sdcMicro's output)")
                return
        if name in ("write.csv", "write.table", "fwrite", "saveRDS", "write_sav", "write_dta"):
            self.output_call(st)
            return
        if name == "data":
            src = self.read_source(st)
            if src:
                self.chain(src)
                self.data_of[src] = src
                self.note(st, "translated", f"[input] path = {src!r} (sdcMicro's bundled data set {src!r}: "
                                            "write it to a file and give its path with --input)", self.chains[src])
                return
        if self.is_sdcmicro(st) or any(n.kind == "call" and self.is_sdcmicro(n) for n in self.walk(st)):
            for c in self.sdc_calls(st):
                self.sdc_call(c, st, None)
            return
        if name in _HOUSEKEEPING:
            self.note(st, "covered", f"{name}(): nothing to translate (R session, printing or timing)")
            return
        self.note(st, "not translated", f"`{name or _show(st)[:40]}` is not an sdcMicro function")

    def output_call(self, st: Node) -> None:
        target = st.args[0][1] if st.args else None
        file_arg = next((a for n, a in st.args if n in ("file",)), st.args[1][1] if len(st.args) > 1 else None)
        fname = self.env.eval(file_arg) if file_arg is not None else None
        if not isinstance(fname, str):
            strs = [n.value for n in self.walk(file_arg) if n.kind == "str"] if file_arg is not None else []
            fname = strs[-1] if strs else None
        inner = [n for n in self.walk(target) if n.kind == "call" and _func_name(n) == "extractManipData"]
        src = self.source_of(inner[0].args[0][1] if inner and inner[0].args else target)
        if inner and isinstance(fname, str):
            ch = self.chain(src)
            ch.output["data"] = PurePath(fname).name
            self.note(st, "translated", f"[output] data = {PurePath(fname).name!r}", ch)
        else:
            self.note(st, "not translated", "writes an intermediate R object: sdckit writes only the release "
                                            "([output] data) and its reports")

    # -------------------------------------------------------------- sdcMicro calls
    def sdc_call(self, call: Node, st: Node, target: str | None) -> None:
        name = _func_name(call)
        args = _Args(call, self.env)
        if name == "createSdcObj":
            self.create_sdc_obj(call, st, target, args)
            return
        data_node = args.get_node("obj", "data", "dat", "x", pos=0)
        src = self.source_of(data_node)
        ch = self.chain(src)
        if target is not None and target not in self.data_of:
            self.data_of[target] = src
        elif target is not None and self.root(data_node) not in (None, target) and name not in _MEASURES:
            self.data_of[target] = src
        if name in _MEASURES:
            kv, w = args.get("keyVars"), args.get("w", "weightVar")
            if kv is not None and all(isinstance(x, str) for x in _as_list(kv)):
                self.add_role(ch, "key_vars", _as_list(kv), st)
            if isinstance(w, str):
                self.add_role(ch, "weight", w, st)
            self.note(st, "covered", f"{name}(): {_MEASURES[name]}", ch)
            return
        rule = _STEP_RULES[name]
        try:
            step, roles, gate, what = rule(args, data_node)
        except _NotTranslated as exc:
            self.note(st, "not translated", f"{name}(): {exc}", ch)
            return
        for role, names in roles.items():
            self.add_role(ch, role, names, st)
        if step is not None:
            ch.steps.append(step)
        ch.gate.update(gate)
        for line, why in self.env.guesses:
            self.note(st, "translated", f"line {line}: {why}", ch)
        self.env.guesses.clear()
        for why in args.unknown:
            self.note(st, "not translated", f"{name}(): {why}", ch)
        self.note(st, "translated", what, ch)

    def add_role(self, ch: _Chain, role: str, names: list[str] | str, st: Node) -> None:
        if role in ("weight", "household"):
            ch.roles.setdefault(role, names)
            return
        held = {v: r for r, vs in ch.roles.items() for v in _as_list(vs)}
        for v in _as_list(names):
            if v in held and held[v] != role:
                if {held[v], role} == {"key_vars", "pram_vars"}:
                    continue                     # a key may be PRAMmed as it is
                self.note(st, "not translated", f"column {v!r} would hold two roles ({held[v]} and {role}): "
                                                f"kept {held[v]}", ch)
                continue
            lst = ch.roles.setdefault(role, [])
            if v not in lst:
                lst.append(v)

    def create_sdc_obj(self, call: Node, st: Node, target: str | None, args: _Args) -> None:
        data_node = args.get_node("dat", pos=0)
        src = self.source_of(data_node)
        ch = self.chain(src)
        if target is not None:
            self.data_of[target] = src
        mapping = {"keyVars": "key_vars", "numVars": "numeric_vars", "weightVar": "weight", "hhId": "household",
                   "strataVar": "strata", "sensibleVar": "sensitive", "pramVars": "pram_vars"}
        done = []
        for r_name, role in mapping.items():
            v = args.get(r_name)
            if v is None:
                continue
            if not all(isinstance(x, str) for x in _as_list(v)):
                self.note(st, "not translated", f"createSdcObj({r_name}): columns given by position "
                                                f"({v}); name them in [roles] {role}", ch)
                continue
            self.add_role(ch, role, v if role in ("weight", "household") else _as_list(v), st)
            done.append(f"{r_name} -> [roles] {role}")
        excl = args.get("excludeVars")
        if excl:
            ch.steps.append({"method": "remove", "variables": _as_list(excl)})
            done.append("excludeVars -> a remove step")
        seed = args.get("seed")
        if isinstance(seed, (int, float)) and not isinstance(seed, bool):
            ch.seed = int(seed)
        for r_name in ("ghostVars", "options", "randomizeRecords"):
            if args.get(r_name) not in (None, False):
                self.note(st, "not translated", f"createSdcObj({r_name}): no sdckit equivalent", ch)
        if args.get("alpha") not in (None, 1, 1.0):
            self.note(st, "not translated", "createSdcObj(alpha): sdckit counts a missing key value as "
                                            "matching anything (alpha = 1)", ch)
        for why in args.unknown:
            self.note(st, "not translated", f"createSdcObj(): {why}", ch)
        self.note(st, "translated", "; ".join(done) or "createSdcObj", ch)

    # -------------------------------------------------------------- result
    def result(self) -> list[Translation]:
        out = []
        for ch in self.chains.values():
            if not ch.steps and not ch.roles:
                self.notes.extend(ch.notes)             # a file with nothing to release: its lines still told
        for src, ch in self.chains.items():
            if not ch.steps and not ch.roles:
                continue
            spec: dict[str, Any] = {"input": {"path": src}}
            roles = {k: v for k, v in ch.roles.items() if v}
            if roles:
                spec["roles"] = roles
            seed = ch.seed if ch.seed is not None else self.seed
            if seed is not None:
                spec["run"] = {"seed": seed}
            spec["steps"] = ch.steps
            spec["gate"] = dict(ch.gate) or {"none": "translated from an sdcMicro script, which sets no risk "
                                                     "threshold: set one (e.g. k_anonymity or max_global_risk)"}
            spec["output"] = {"directory": "sdcmicro-release", "data": ch.output.get("data", "released.csv")}
            notes = sorted(self.notes + ch.notes, key=lambda n: n.line)
            out.append(Translation(src, spec, notes))
        if not out:
            raise InputError("the script has no sdcMicro call that becomes a release step or role "
                             "(createSdcObj, microaggregation, pram, localSuppression, ...)")
        return out


class _NotTranslated(Exception):
    pass


class _Args:
    """The arguments of one call, matched by name or position, evaluated as constants."""

    def __init__(self, call: Node, env: _Env) -> None:
        self.call, self.env = call, env
        self.named = {n: a for n, a in call.args if n}
        self.positional = [a for n, a in call.args if not n]
        self.unknown: list[str] = []

    def get_node(self, *names: str, pos: int | None = None) -> Node | None:
        for n in names:
            if n in self.named:
                return self.named[n]
        if pos is not None and pos < len(self.positional):
            return self.positional[pos]
        return None

    def get(self, *names: str, pos: int | None = None, default: Any = None, decisive: bool = False) -> Any:
        """The constant value of an argument; ``default`` when absent. An argument given but
        not known before the script runs is noted; a ``decisive`` one (it chooses the method)
        stops the translation of the call."""
        node = self.get_node(*names, pos=pos)
        if node is None:
            return default
        v = self.env.eval(node)
        if not _known(v):
            if decisive:
                raise _NotTranslated(f"{names[0]}: {v.why}")
            self.unknown.append(f"{names[0]}: {v.why}")
            return default
        return v

    def has(self, name: str) -> bool:
        return name in self.named


def _column_of(node: Node | None) -> str | None:
    """x$age -> "age"; x[["age"]] -> "age"."""
    if node is None:
        return None
    if node.kind == "dollar":
        return node.value
    if node.kind == "index" and node.args and node.args[-1][1].kind == "str":
        return node.args[-1][1].value
    return None


def _names(v: Any, what: str) -> list[str]:
    vals = _as_list(v)
    if not vals or not all(isinstance(x, str) for x in vals):
        raise _NotTranslated(f"{what} must be column names (got {v!r}): name the columns")
    return vals


def _num(v: Any, what: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise _NotTranslated(f"{what} is not a number the translator can read ({v!r})")
    return float(v)


def _rule_remove(a: _Args, _data):
    v = _names(a.get("var", pos=1), "var")
    return {"method": "remove", "variables": v}, {}, {}, f"remove step: variables {v}"


def _rule_global_recode(a: _Args, data):
    column = a.get("column") or _column_of(data)
    if column is None:
        raise _NotTranslated("the column to recode is not named (give column = or x$name)")
    breaks = a.get("breaks")
    if not isinstance(breaks, list):
        raise _NotTranslated("breaks is a number of intervals (computed from the data); give the break "
                             "points as a list in a recode step (breaks = [...])")
    step = {"method": "recode", "variable": column, "breaks": [float(b) for b in breaks], "closed": "right"}
    labels = a.get("labels")
    if labels is not None:
        step["labels"] = [str(x) for x in _as_list(labels)]
    return step, {}, {}, f"recode step on {column!r}: intervals (a, b] (sdcMicro's cut)"


def _rule_group_and_rename(a: _Args, _data):
    var = a.get("var", pos=1)
    before = _as_list(a.get("before", pos=2))
    after = _as_list(a.get("after", pos=3))
    if not isinstance(var, str) or len(after) != 1:
        raise _NotTranslated("needs one variable and one new category")
    step = {"method": "recode", "variable": var, "mapping": {str(after[0]): [str(b) for b in before]},
            "others": "keep"}                                # the other categories stay as they are
    return step, {"key_vars": [var]}, {}, f"recode step on {var!r}: {before} -> {after[0]!r}"


def _rule_top_bot(a: _Args, data):
    column = a.get("column") or _column_of(data)
    if column is None:
        raise _NotTranslated("the column is not named (give column = or x$name)")
    kind = a.get("kind", pos=3, default="top", decisive=True)
    value = _num(a.get("value", pos=1), "value")
    repl = _num(a.get("replacement", pos=2), "replacement")
    side = "top" if kind == "top" else "bottom"
    step = {"method": "recode", "variable": column, side: value, f"{side}_value": repl}
    return step, {}, {}, f"recode step on {column!r}: {side} coding at {value:g}"


def _rule_local_suppression(a: _Args, _data):
    k = int(_num(a.get("k", pos=1, default=2), "k"))
    step: dict[str, Any] = {"method": "local_suppression", "k": k}
    imp = a.get("importance")
    if imp is not None:
        step["importance"] = [int(x) for x in _as_list(imp)]
    roles = {}
    kv = a.get("keyVars")
    if kv is not None:
        roles["key_vars"] = _names(kv, "keyVars")
    if a.get("combs") is not None:
        raise _NotTranslated("combs (k-anonymity on subsets of the keys) has no sdckit equivalent")
    return step, roles, {"k_anonymity": k}, f"local_suppression step (k = {k}) and [gate] k_anonymity = {k}"


def _rule_pram(a: _Args, _data):
    variables = a.get("variables", pos=1)
    if variables is None:
        raise _NotTranslated("variables: sdcMicro PRAMs the pramVars; name them")
    variables = _names(variables, "variables")
    alpha = a.get("alpha", default=0.5)
    pd = a.get("pd", default=0.8)
    step: dict[str, Any] = {"method": "pram", "variables": variables,
                            "matrix": {"type": "invariant", "base": "uniform", "alpha": float(alpha)}}
    strata = a.get("strata_variables")
    if strata is not None:
        step["strata"] = _names(strata, "strata_variables")
    what = (f"pram step on {variables}: invariant matrix, uniform base, alpha = {alpha:g}; sdcMicro's "
            f"pd = {pd} bounds the base matrix's random diagonal (P_ii ~ U(pd, 1)), not the released "
            "matrix's: min_diagonal (the released matrix's smallest diagonal) keeps its default")
    return step, {"pram_vars": variables}, {}, what


_MA_METHODS = {"mdav": "mdav", "simple": "simple", "single": "single", "onedims": "onedims", "pca": "pca",
               "rmd": "rmd", "clustpca": "clustpca", "clustpppca": "clustpppca", "clustmcdpca": "clustmcdpca",
               "influence": "influence", "pppca": "pppca", "mcdpca": "mcdpca"}
_MA_CLUSTERED = ("clustpca", "clustpppca", "clustmcdpca", "influence")


def _rule_microaggregation(a: _Args, _data):
    method = a.get("method", default="mdav", decisive=True)
    if method not in _MA_METHODS:
        raise _NotTranslated(f"method {method!r} is not a method of sdcMicro 5.8.1's microaggregation; "
                             f"sdckit has {', '.join(sorted(_MA_METHODS))}")
    k = int(_num(a.get("aggr", default=3), "aggr"))
    algorithm: dict[str, Any] = {"type": _MA_METHODS[method]}
    if method in _MA_CLUSTERED:
        clustermethod = a.get("clustermethod", default="clara")
        if clustermethod != "clara":
            raise _NotTranslated(f"clustermethod {clustermethod!r}: sdckit clusters with CLARA (sdcMicro's "
                                 "default, clustermethod = \"clara\") only")
        nc = int(_num(a.get("nc", default=8), "nc"))
        if nc != 8:
            algorithm["n_clusters"] = nc
    step: dict[str, Any] = {"method": "microaggregation", "k": k, "algorithm": algorithm}
    variables = a.get("variables")
    roles = {}
    if variables is not None:
        step["variables"] = _names(variables, "variables")
        roles["numeric_vars"] = step["variables"]
    measure = a.get("measure", default="mean")
    if measure not in ("mean", "median"):
        raise _NotTranslated(f"measure {measure!r}: sdckit aggregates by mean or median")
    if measure != "mean":
        step["aggregate"] = measure
    if a.get("varsort") not in (None, 1, 1.0):
        raise _NotTranslated("varsort: list the sort variable first in variables instead")
    what = f"microaggregation step: algorithm {method!r}, k = {k} (aggr)"
    if method in _MA_CLUSTERED:
        what += f", n_clusters = {algorithm.get('n_clusters', 8)} (nc), CLARA on the untransformed values"
        if a.has("transf"):
            what += " (sdcMicro 5.8.1 computes transf but clusters the untransformed values: no effect)"
    return step, roles, {}, what


def _rule_add_noise(a: _Args, _data):
    method = a.get("method", default="additive", decisive=True)
    noise = _num(a.get("noise", default=150), "noise")
    if method == "additive":
        level, what = (noise / 100) ** 2, f"level = (noise / 100)^2 = {(noise / 100) ** 2:g} (sd = noise/100 s)"
    elif method == "correlated":
        level, what = noise / 100, f"level = noise / 100 = {noise / 100:g} (covariance = noise/100 Sigma)"
    elif method == "correlated2":
        delta = _num(a.get("delta", default=0.1), "delta")
        level, what = delta ** 2, f"level = delta^2 = {delta ** 2:g}"
    else:
        raise _NotTranslated(f"method {method!r} has no sdckit equivalent (additive, correlated, correlated2 do)")
    step: dict[str, Any] = {"method": "noise", "kind": method, "level": level}
    roles = {}
    variables = a.get("variables")
    if variables is not None:
        step["variables"] = _names(variables, "variables")
        roles["numeric_vars"] = step["variables"]
    return step, roles, {}, f"noise step: kind {method!r}, {what}"


def _rule_rank_swap(a: _Args, _data):
    step: dict[str, Any] = {"method": "rank_swap"}
    P = a.get("P")
    if a.get("R0") is not None or a.get("K0") is not None:
        raise _NotTranslated("R0 / K0 have no sdckit equivalent; give P")
    if P is not None:
        step["p"] = 100.0 * _num(P, "P")                  # P is a fraction of n in sdcMicro 5.8.1
    step["top_percent"] = _num(a.get("TopPercent", default=5), "TopPercent")
    step["bottom_percent"] = _num(a.get("BottomPercent", default=5), "BottomPercent")
    roles = {}
    variables = a.get("variables")
    if variables is not None:
        step["variables"] = _names(variables, "variables")
        roles["numeric_vars"] = step["variables"]
    return step, roles, {}, "rank_swap step: p = 100 P (percent of n), top/bottom percent as given"


def _rule_shuffle(a: _Args, _data):
    form = a.get_node("form", pos=1)
    if form is None or form.kind != "formula":
        raise _NotTranslated("form must be a formula: confidential ~ non-confidential")

    def terms(node: Node) -> list[str]:
        if node.kind == "binary" and node.value == "+":
            return terms(node.args[0]) + terms(node.args[1])
        if node.kind == "name":
            return [node.value]
        raise _NotTranslated(f"formula term `{_show(node)}` is not a column name")

    variables, predictors = terms(form.args[0]), terms(form.args[1])
    method = a.get("method", default="ds", decisive=True)
    if method != "ds":
        raise _NotTranslated(f"method {method!r}: sdckit's shuffle is Muralidhar & Sarathy's (method \"ds\")")
    step = {"method": "shuffle", "variables": variables, "predictors": predictors}
    return step, {"numeric_vars": variables}, {}, f"shuffle step: {variables} given {predictors}"


def _rule_record_swap(a: _Args, _data):
    hierarchy = _names(a.get("hierarchy"), "hierarchy")
    step: dict[str, Any] = {"method": "record_swap", "hierarchy": hierarchy,
                            "allow_across_top": True, "donors": "anywhere"}
    similar = a.get("similar")
    if similar is not None:
        sim = [_names(s, "similar") for s in similar] if isinstance(similar, list) and similar and \
            isinstance(similar[0], list) else _names(similar, "similar")
        step["similar"] = sim
    rv = a.get("risk_variables")
    if rv is not None:
        step["risk_variables"] = _names(rv, "risk_variables")
    step["swap_rate"] = _num(a.get("swaprate", default=0.05), "swaprate")
    step["k_anonymity"] = int(_num(a.get("k_anonymity", default=3), "k_anonymity"))
    hid = a.get("hid")
    if hid is not None:
        step["household"] = _names(hid, "hid")[0]
    ca = a.get("carry_along")
    if ca is not None:
        step["carry_along"] = _names(ca, "carry_along")
    if a.get("risk") is not None or a.get("risk_threshold") not in (None, 0):
        raise _NotTranslated("risk / risk_threshold (a given risk per record) have no sdckit equivalent; "
                             "k_anonymity sets the risk")
    roles = {"household": step["household"]} if "household" in step else {}
    return step, roles, {}, ("record_swap step: donors anywhere outside the receiver's area, across the top "
                          "level (sdcMicro's rule)")


_STEP_RULES = {
    "removeDirectID": _rule_remove, "globalRecode": _rule_global_recode,
    "groupAndRename": _rule_group_and_rename, "topBotCoding": _rule_top_bot,
    "localSuppression": _rule_local_suppression, "kAnon": _rule_local_suppression, "pram": _rule_pram,
    "microaggregation": _rule_microaggregation, "addNoise": _rule_add_noise, "rankSwap": _rule_rank_swap,
    "shuffle": _rule_shuffle, "recordSwap": _rule_record_swap,
}


def translate(script: str) -> list[Translation]:
    """Translate an sdcMicro script into release specs, one per data source it reads.

    Parameters
    ----------
    script : str
        The R script's text.

    Returns
    -------
    list of Translation
        Each with its spec (a dict for a TOML file; ``[input] path`` is the file the script
        reads, relative to the script) and a note for every line read: translated, covered
        (sdckit does it without a step) or not translated, with why.
    """
    tr = _Translator(script)
    tr.run(parse_r(script))
    return tr.result()
