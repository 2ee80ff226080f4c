"""A reader of R's call syntax for sdcMicro scripts: assignments, nested calls, named arguments,
``c(...)``, ``list(...)``, strings, numbers, ``TRUE``/``FALSE``/``NULL``, ``a:b``, formulas,
``function``, ``if``/``else``, ``for``, braces, ``x[...]``, ``x$y``, ``pkg::f``, read into a tree of
:class:`Node` (:func:`parse_r`). Nothing is evaluated; :mod:`sdckit.sdcmicro.translate` walks
the tree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError


@dataclass
class Node:
    """One node of the tree: ``kind`` is one of str, num, bool, null, name, call, index,
    dollar, ns, unary, binary, assign, formula, function, if, for, while, block."""

    kind: str
    value: Any = None
    args: list = field(default_factory=list)    # call: [(name or None, Node)]; others: [Node]
    line: int = 0
    end_line: int = 0


_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r\f]+|\\\n)
  | (?P<comment>\#[^\n]*)
  | (?P<nl>\n)
  | (?P<num>(?:0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)[Li]?)
  | (?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
  | (?P<bq>`[^`]*`)
  | (?P<name>(?:[A-Za-z]|\.(?![0-9]))[A-Za-z0-9._]*|\.)
  | (?P<op>%[^%\n]*%|<<-|->>|<-|->|:::|::|==|!=|<=|>=|&&|\|\||\|>|[-+*/^~!<>=:$@&|?(){}\[\],;])
""", re.VERBOSE)

_KEYWORDS = {"function", "if", "else", "for", "while", "repeat", "in", "TRUE", "FALSE", "NULL", "NA",
             "Inf", "NaN", "T", "F", "break", "next", "NA_integer_", "NA_real_", "NA_character_"}


@dataclass
class _Tok:
    kind: str
    text: str
    line: int


def _tokens(src: str) -> list[_Tok]:
    out, pos, line = [], 0, 1
    while pos < len(src):
        m = _TOKEN.match(src, pos)
        if m is None:
            raise InputError(f"line {line}: cannot read {src[pos:pos + 20]!r} (not R syntax this reader knows)")
        kind, text = m.lastgroup, m.group()
        if kind == "nl":
            out.append(_Tok("nl", "\n", line))
        elif kind == "bq":
            out.append(_Tok("name", text[1:-1], line))
        elif kind not in ("ws", "comment"):
            out.append(_Tok("kw" if kind == "name" and text in _KEYWORDS else kind, text, line))
        line += text.count("\n")
        pos = m.end()
    out.append(_Tok("eof", "", line))
    return out


_BINARY = {"~": 2, "||": 3, "|": 3, "&&": 4, "&": 4, "==": 6, "!=": 6, "<": 6, ">": 6, "<=": 6, ">=": 6,
           "+": 7, "-": 7, "*": 8, "/": 8, "|>": 9, ":": 10, "^": 12}


def _unescape(text: str) -> str:
    body = text[1:-1]
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), body)


class _Parser:
    def __init__(self, src: str) -> None:
        self.toks = _tokens(src)
        self.i = 0
        self.depth = 0              # inside ( or [: newlines are spaces

    def peek(self, skip_nl: bool = False) -> _Tok:
        j = self.i
        while (skip_nl or self.depth) and self.toks[j].kind == "nl":
            j += 1
        return self.toks[j]

    def next(self, skip_nl: bool = False) -> _Tok:
        while (skip_nl or self.depth) and self.toks[self.i].kind == "nl":
            self.i += 1
        t = self.toks[self.i]
        self.i += 1
        return t

    def expect(self, text: str) -> _Tok:
        t = self.next(skip_nl=text in (")", "]", "}"))
        if t.text != text:
            raise InputError(f"line {t.line}: expected {text!r}, found {t.text or 'the end'!r}")
        return t

    def program(self) -> list[Node]:
        return self.statements(until="eof")

    def statements(self, until: str) -> list[Node]:
        out = []
        while True:
            t = self.peek(skip_nl=True)
            if t.kind == "eof" or t.text == until or (until == "eof" and t.kind == "eof"):
                return out
            self.skip_separators()
            if self.peek(skip_nl=True).text == until or self.peek(skip_nl=True).kind == "eof":
                return out
            out.append(self.statement())
            self.skip_separators()

    def skip_separators(self) -> None:
        while self.toks[self.i].kind == "nl" or self.toks[self.i].text == ";":
            self.i += 1

    def statement(self) -> Node:
        start = self.peek(skip_nl=True).line
        node = self.expr(0)
        t = self.peek()
        if t.text in ("<-", "<<-", "="):
            self.next()
            self.skip_newlines()
            value = self.statement()
            node = Node("assign", t.text, [node, value], start)
        elif t.text in ("->", "->>"):
            self.next()
            target = self.expr(0)
            node = Node("assign", "<-", [target, node], start)
        node.line = start
        node.end_line = self.toks[self.i - 1].line
        return node

    def skip_newlines(self) -> None:
        while self.toks[self.i].kind == "nl":
            self.i += 1

    def expr(self, min_prec: int) -> Node:
        left = self.unary()
        while True:
            t = self.peek()
            prec = _BINARY.get(t.text) if t.kind == "op" else None
            if t.kind == "op" and t.text.startswith("%") and len(t.text) > 1:
                prec = 9
            if prec is None or prec < min_prec:
                return left
            self.next()
            self.skip_newlines()
            right = self.expr(prec + (0 if t.text == "^" else 1))
            kind = "formula" if t.text == "~" else "binary"
            left = Node(kind, t.text, [left, right], left.line)

    def unary(self) -> Node:
        t = self.peek()
        if t.text in ("-", "+", "!"):
            self.next()
            return Node("unary", t.text, [self.expr(11 if t.text != "!" else 5)], t.line)
        if t.text == "~":
            self.next()
            return Node("formula", "~", [Node("null", None, [], t.line), self.expr(3)], t.line)
        return self.postfix(self.atom())

    def atom(self) -> Node:
        t = self.next()
        if t.kind == "num":
            text = t.text.rstrip("Li")
            if text.lower().startswith("0x"):
                return Node("num", int(text, 16), [], t.line)
            value = float(text)
            whole = t.text.endswith("L") or re.fullmatch(r"\d+", text) is not None
            return Node("num", int(value) if whole else value, [], t.line)
        if t.kind == "str":
            return Node("str", _unescape(t.text), [], t.line)
        if t.kind == "name":
            return Node("name", t.text, [], t.line)
        if t.kind == "kw":
            if t.text in ("TRUE", "T"):
                return Node("bool", True, [], t.line)
            if t.text in ("FALSE", "F"):
                return Node("bool", False, [], t.line)
            if t.text == "NULL":
                return Node("null", None, [], t.line)
            if t.text.startswith("NA") or t.text in ("Inf", "NaN"):
                return Node("num", {"Inf": float("inf")}.get(t.text, float("nan")), [], t.line)
            if t.text == "function":
                return self.function(t)
            if t.text == "if":
                return self.if_(t)
            if t.text in ("for", "while"):
                return self.loop(t)
            if t.text == "repeat":
                return Node("while", None, [Node("bool", True), self.body()], t.line)
            if t.text in ("break", "next"):
                return Node("name", t.text, [], t.line)
        if t.text == "(":
            self.depth += 1
            inner = self.expr(0)
            if self.peek().text in ("<-", "="):       # (x <- value)
                op = self.next().text
                inner = Node("assign", op, [inner, self.expr(0)], inner.line)
            self.expect(")")
            self.depth -= 1
            return inner
        if t.text == "{":
            saved, self.depth = self.depth, 0
            body = self.statements(until="}")
            self.expect("}")
            self.depth = saved
            return Node("block", None, body, t.line, self.toks[self.i - 1].line)
        if t.text == "\\":                            # \(x) lambda
            return self.function(t)
        raise InputError(f"line {t.line}: unexpected {t.text or 'end of file'!r}")

    def body(self) -> Node:
        saved, self.depth = self.depth, 0
        self.skip_newlines()
        node = self.statement()
        self.depth = saved
        return node

    def function(self, t: _Tok) -> Node:
        self.expect("(")
        self.depth += 1
        params = []
        while self.peek().text != ")":
            name = self.next().text
            default = None
            if self.peek().text == "=":
                self.next()
                default = self.expr(0)
            params.append((name, default))
            if self.peek().text == ",":
                self.next()
        self.expect(")")
        self.depth -= 1
        body = self.body()
        return Node("function", params, [body], t.line, body.end_line or body.line)

    def if_(self, t: _Tok) -> Node:
        self.expect("(")
        self.depth += 1
        cond = self.expr(0)
        self.expect(")")
        self.depth -= 1
        then = self.body()
        other = None
        j = self.i
        while self.toks[j].kind == "nl":
            j += 1
        if self.toks[j].text == "else":
            self.i = j + 1
            other = self.body()
        return Node("if", None, [cond, then, other], t.line)

    def loop(self, t: _Tok) -> Node:
        self.expect("(")
        self.depth += 1
        if t.text == "for":
            var = self.next().text
            self.expect("in")
            seq = self.expr(0)
            head = [Node("name", var, [], t.line), seq]
        else:
            head = [self.expr(0)]
        self.expect(")")
        self.depth -= 1
        return Node(t.text, None, [*head, self.body()], t.line)

    def postfix(self, node: Node) -> Node:
        while True:
            t = self.toks[self.i]
            if t.text == "(":
                self.next()
                self.depth += 1
                args = self.call_args(")")
                self.depth -= 1
                node = Node("call", node, args, node.line)
            elif t.text == "[":
                self.next()
                double = self.toks[self.i].text == "["
                if double:
                    self.next()
                self.depth += 1
                args = self.call_args("]")
                if double:
                    self.expect("]")
                self.depth -= 1
                node = Node("index", node, args, node.line)
            elif t.text in ("$", "@"):
                self.next()
                name = self.next()
                node = Node("dollar", name.text if name.kind != "str" else _unescape(name.text), [node], node.line)
            elif t.text in ("::", ":::"):
                self.next()
                name = self.next()
                node = Node("name", f"{node.value}::{name.text}", [], node.line)
            else:
                return node

    def call_args(self, close: str) -> list:
        args: list = []
        while True:
            t = self.peek()
            if t.text == close:
                self.next()
                return args
            if t.text == ",":                          # an empty argument: x[, vars]
                self.next()
                args.append((None, Node("null", "empty", [], t.line)))
                continue
            name = None
            j = self.i
            while self.toks[j].kind == "nl":
                j += 1
            t2 = self.toks[self._after(j)]
            if t.kind in ("name", "str", "kw") and t2.text == "=" and t.text not in ("function", "if"):
                self.next()
                self.next()
                name = _unescape(t.text) if t.kind == "str" else t.text
                if self.peek().text in (",", close):
                    args.append((name, Node("null", "empty", [], t.line)))
                    if self.peek().text == ",":
                        self.next()
                    continue
            args.append((name, self.arg_expr()))
            t = self.peek()
            if t.text == ",":
                self.next()
                if self.peek().text == close:
                    args.append((None, Node("null", "empty", [], t.line)))
            elif t.text != close:
                raise InputError(f"line {t.line}: expected ',' or {close!r}, found {t.text!r}")

    def arg_expr(self) -> Node:
        """An expression that may be an assignment (``system.time(out <- f())``)."""
        node = self.expr(0)
        if self.peek().text in ("<-", "<<-"):
            op = self.next().text
            node = Node("assign", op, [node, self.arg_expr()], node.line)
        return node

    def _after(self, j: int) -> int:
        j += 1
        while self.toks[j].kind == "nl":
            j += 1
        return j


def parse_r(src: str) -> list[Node]:
    """The statements of an R script as trees (see :class:`Node`)."""
    return _Parser(src).program()
