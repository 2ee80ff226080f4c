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
The constant evaluation is in :mod:`sdckit.sdcmicro.evaluate`, the rule of each sdcMicro
function in :mod:`sdckit.sdcmicro.rules`; this module walks the script and writes the specs.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from ..errors import InputError
from .evaluate import Env as _Env
from .evaluate import as_list as _as_list
from .evaluate import func_name as _func_name
from .evaluate import known as _known
from .evaluate import show as _show
from .reader import Node, parse_r
from .rules import STEP_RULES as _STEP_RULES
from .rules import Args as _Args
from .rules import NotTranslated as _NotTranslated

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
