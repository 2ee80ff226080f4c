"""Constant evaluation of an R script's tree (:func:`sdckit.sdcmicro.parse_r`): the values of
names assigned constants, ``c(...)``, ``list(...)``, ``a:b`` and simple arithmetic; anything the
script computes when it runs is an :class:`Unknown` with the reason, which the translator
reports on its line. Nothing is run.
"""

from __future__ import annotations

from typing import Any

from .reader import Node


class Unknown:
    """A value the script computes when it runs (not a constant the reader can follow), with why."""

    def __init__(self, why: str) -> None:
        self.why = why

    def __repr__(self) -> str:
        return f"<unknown: {self.why}>"


def func_name(node: Node) -> str:
    """The called function's name of a call node, without its package (``pkg::f`` -> ``f``); "" otherwise."""
    if node.kind == "call" and isinstance(node.value, Node) and node.value.kind == "name":
        return node.value.value.split("::")[-1]
    return ""


def show(node: Node | None) -> str:
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
        inner = ", ".join((f"{n} = " if n else "") + show(a) for n, a in node.args)
        return f"{show(node.value)}({inner})"
    if k == "index":
        return f"{show(node.value)}[{', '.join(show(a) for _, a in node.args)}]"
    if k == "dollar":
        return f"{show(node.args[0])}${node.value}"
    if k in ("binary", "formula"):
        return f"{show(node.args[0])} {node.value} {show(node.args[1])}".strip()
    if k == "unary":
        return f"{node.value}{show(node.args[0])}"
    return k


class Env:
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
            return Unknown(f"`{node.value}` has no constant value")
        if k == "unary" and node.value == "-":
            v = self.eval(node.args[0])
            return -v if isinstance(v, (int, float)) else [-x for x in v] if isinstance(v, list) else v
        if k == "binary" and node.value == ":":
            a, b = self.eval(node.args[0]), self.eval(node.args[1])
            if isinstance(a, (int, float)) and isinstance(b, (int, float)):
                step = 1 if b >= a else -1
                return [int(a) + i * step for i in range(int(abs(b - a)) + 1)]
            return Unknown(f"`{show(node)}`")
        if k == "binary" and node.value in ("*", "/", "+", "-"):
            a, b = self.eval(node.args[0]), self.eval(node.args[1])
            if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
                return {"*": a * b, "/": a / b if b else float("nan"), "+": a + b, "-": a - b}[node.value]
            return Unknown(f"`{show(node)}`")
        if k == "if":
            cond = self.eval(node.args[0])
            if isinstance(cond, bool):
                return self.eval(node.args[1] if cond else node.args[2])
            self.guesses.append((node.line, f"`{show(node.args[0])}` is not known before the script runs: "
                                             "its first branch is taken"))
            return self.eval(node.args[1])
        if k == "block":
            return self.eval(node.args[-1]) if node.args else None
        if k == "call":
            name = func_name(node)
            if name in ("c", "list"):
                out: list = []
                for _, a in node.args:
                    v = self.eval(a)
                    if isinstance(v, Unknown):
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
                if isinstance(v, (str, list)) and all(isinstance(x, str) for x in as_list(v)):
                    self.guesses.append((node.line, "make.names(): the file's own column names are kept "
                                                    "(sdckit does not rename columns on reading)"))
                    return v
            if name in ("as.integer", "as.numeric", "as.character", "unique", "I"):
                return self.eval(node.args[0][1]) if node.args else None
            return Unknown(f"`{show(node)}` is computed when the script runs")
        return Unknown(f"`{show(node)}`")


def known(v: Any) -> bool:
    """Whether ``v`` is a constant (not an :class:`Unknown`)."""
    return not isinstance(v, Unknown)


def as_list(v: Any) -> list:
    """``v`` as a list (a scalar becomes a list of one)."""
    return v if isinstance(v, list) else [v]
