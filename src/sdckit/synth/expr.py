"""A small, safe expression language over columns: synthesis rules and passive variables.

An expression is read with Python's own parser (:func:`ast.parse` in ``eval`` mode) and then
walked node by node against a whitelist; nothing is ever passed to ``eval``, no attribute is
read, and only the functions listed in :data:`FUNCTIONS` can be called. Column names are plain
names (``age``) or, when they are not identifiers, written in backquotes (```Marital Status```)
or as ``col("Marital Status")``.

What it holds
-------------
numbers, strings, ``true``/``false`` (also ``True``/``False``), lists of constants; arithmetic
``+ - * / // % **``; comparisons ``== != < <= > >=`` (chained too), ``in`` and ``not in`` a
list; ``and``, ``or``, ``not``; ``a if cond else b``; and the functions ``log``, ``log10``,
``exp``, ``sqrt``, ``abs``, ``round(x, digits)``, ``floor``, ``ceil``, ``min(a, b)``,
``max(a, b)``, ``where(cond, a, b)``, ``isna(x)``, ``notna(x)`` and
``cut(x, [b0, b1, ...], ["label1", ...])`` (intervals ``[b_i, b_{i+1})``, the last one closed).

A comparison with a missing value is false (as in SQL), so ``age < 16`` does not hold for a
record whose age is missing. A rule reads ``condition -> consequent``: whenever the condition
holds, the consequent must hold too (``age < 16 -> marital == "SINGLE"``).
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InputError

#: the functions an expression may call, with their number of arguments (min, max)
FUNCTIONS = {"log": (1, 1), "log10": (1, 1), "exp": (1, 1), "sqrt": (1, 1), "abs": (1, 1),
             "round": (1, 2), "floor": (1, 1), "ceil": (1, 1), "min": (2, 2), "max": (2, 2),
             "where": (3, 3), "isna": (1, 1), "notna": (1, 1), "cut": (3, 3), "col": (1, 1)}

_CONSTANTS = {"true": True, "false": False, "True": True, "False": False}

_BINOPS = {ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply, ast.Div: np.true_divide,
           ast.FloorDiv: np.floor_divide, ast.Mod: np.mod, ast.Pow: np.power}
_CMPOPS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn)
_BACKQUOTED = re.compile(r"`([^`]+)`")


def _backquotes(text: str) -> str:
    """```Marital Status``` -> ``col("Marital Status")`` (outside string literals is enough:
    a backquote inside a string literal is not valid in a column name anyway)."""
    return _BACKQUOTED.sub(lambda m: "col(" + repr(m.group(1)) + ")", text)


@dataclass(frozen=True)
class Expression:
    """A parsed expression: its text, the columns it reads, and :meth:`evaluate`.

    Build it with :func:`parse_expression`; it refuses anything outside the language with a
    one-line :class:`~sdckit.errors.InputError` naming the expression and the construct.
    """

    source: str
    columns: tuple[str, ...]
    _tree: ast.AST = field(repr=False, compare=False)

    def evaluate(self, data: Mapping[str, Any], n: int | None = None) -> np.ndarray:
        """The expression's value for every record.

        Parameters
        ----------
        data : mapping column -> array-like
            The columns the expression reads (values, not codes; missing as NaN or None).
        n : int, optional
            The number of records (needed when the expression reads no column).
        """
        for c in self.columns:
            if c not in data:
                raise InputError(f"expression {self.source!r}: column {c!r} is not available here.")
        if n is None:
            n = len(data[self.columns[0]]) if self.columns else 1
        out = _Evaluator(self.source, data, n).visit(self._tree.body)
        arr = np.asarray(out)
        if arr.ndim == 0:
            arr = np.full(n, arr.item())
        return arr


def parse_expression(text: str, *, known: Any = None, where: str = "expression") -> Expression:
    """Parse ``text`` into an :class:`Expression`, refusing what the language does not hold.

    ``known`` (a collection of column names), when given, must contain every column the
    expression reads; an unknown name is refused with the closest names.
    """
    from .._validation import close_names

    if not isinstance(text, str) or not text.strip():
        raise InputError(f"{where}: an expression must be a non-empty string; got {text!r}.")
    try:
        tree = ast.parse(_backquotes(text.strip()), mode="eval")
    except SyntaxError as exc:
        raise InputError(f"{where}: {text!r} is not a valid expression ({exc.msg}); write e.g. "
                         "'age < 16' or 'weight / (height / 100) ** 2'.") from None
    cols: list[str] = []
    _check(tree.body, text, where, cols)
    if known is not None:
        known = list(known)
        for c in cols:
            if c not in known:
                raise InputError(f"{where}: {text!r} reads column {c!r}, which does not exist; "
                                 f"{close_names(c, known)}")
    return Expression(text, tuple(dict.fromkeys(cols)), tree)


def _refuse(text: str, where: str, what: str) -> InputError:
    return InputError(f"{where}: {text!r} uses {what}, which expressions do not allow; they hold "
                      "columns, numbers, strings, arithmetic, comparisons, and/or/not, "
                      "'a if c else b' and the functions " + ", ".join(sorted(FUNCTIONS)) + ".")


def _check(node: ast.AST, text: str, where: str, cols: list[str]) -> None:
    """Whitelist walk: every node must be one the language holds."""
    if isinstance(node, ast.Constant):
        if not isinstance(node.value, (int, float, str, bool)) or node.value is None:
            raise _refuse(text, where, f"the constant {node.value!r}")
        return
    if isinstance(node, ast.Name):
        if node.id not in _CONSTANTS:
            cols.append(node.id)
        return
    if isinstance(node, (ast.List, ast.Tuple)):
        for e in node.elts:
            if not (isinstance(e, ast.Constant) or (isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub)
                                                    and isinstance(e.operand, ast.Constant))):
                raise _refuse(text, where, "a list holding something other than constants")
            _check(e, text, where, cols)
        return
    if isinstance(node, ast.BinOp):
        if type(node.op) not in _BINOPS:
            raise _refuse(text, where, f"the operator {type(node.op).__name__}")
        _check(node.left, text, where, cols)
        _check(node.right, text, where, cols)
        return
    if isinstance(node, ast.UnaryOp):
        if not isinstance(node.op, (ast.Not, ast.USub, ast.UAdd)):
            raise _refuse(text, where, f"the operator {type(node.op).__name__}")
        _check(node.operand, text, where, cols)
        return
    if isinstance(node, ast.BoolOp):
        for v in node.values:
            _check(v, text, where, cols)
        return
    if isinstance(node, ast.Compare):
        if not all(isinstance(op, _CMPOPS) for op in node.ops):
            raise _refuse(text, where, "the comparison 'is'")
        _check(node.left, text, where, cols)
        for op, c in zip(node.ops, node.comparators):
            if isinstance(op, (ast.In, ast.NotIn)) and not isinstance(c, (ast.List, ast.Tuple)):
                raise _refuse(text, where, "'in' without a list of constants")
            _check(c, text, where, cols)
        return
    if isinstance(node, ast.IfExp):
        for v in (node.test, node.body, node.orelse):
            _check(v, text, where, cols)
        return
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            name = node.func.id if isinstance(node.func, ast.Name) else ast.unparse(node.func)
            raise _refuse(text, where, f"the function {name!r}")
        if node.keywords:
            raise _refuse(text, where, "keyword arguments")
        lo, hi = FUNCTIONS[node.func.id]
        if not lo <= len(node.args) <= hi:
            raise InputError(f"{where}: {text!r}: {node.func.id}() takes "
                             f"{lo if lo == hi else f'{lo} to {hi}'} arguments; got {len(node.args)}.")
        if node.func.id == "col":
            a = node.args[0]
            if not (isinstance(a, ast.Constant) and isinstance(a.value, str)):
                raise InputError(f"{where}: {text!r}: col() takes a column name in quotes.")
            cols.append(a.value)
            return
        if node.func.id == "cut":
            lists = (ast.List, ast.Tuple)
            if not isinstance(node.args[1], lists) or not isinstance(node.args[2], lists):
                raise InputError(f"{where}: {text!r}: cut(x, [breaks], [labels]) takes two lists.")
            if len(node.args[2].elts) != len(node.args[1].elts) - 1:
                raise InputError(f"{where}: {text!r}: cut() needs one label fewer than breaks.")
        for a in node.args:
            _check(a, text, where, cols)
        return
    raise _refuse(text, where, f"a {type(node).__name__}")


def _isnull(a: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "f":
        return np.isnan(a)
    if a.dtype.kind == "O":
        return np.array([v is None or (isinstance(v, float) and math.isnan(v)) for v in a.ravel()],
                        dtype=bool).reshape(a.shape)
    return np.zeros(a.shape, dtype=bool)


def _numeric(a: np.ndarray, text: str) -> np.ndarray:
    if a.dtype.kind in "biuf":
        return a.astype(np.float64, copy=False)
    if a.dtype.kind == "O":
        try:
            return np.array([np.nan if v is None else float(v) for v in a.ravel()]).reshape(a.shape)
        except (TypeError, ValueError):
            pass
    raise InputError(f"expression {text!r}: arithmetic on a column of text values.")


class _Evaluator:
    """Evaluates a checked tree on arrays of ``n`` records."""

    def __init__(self, text: str, data: Mapping[str, Any], n: int) -> None:
        self.text, self.data, self.n = text, data, n

    def column(self, name: str) -> np.ndarray:
        v = self.data[name]
        arr = np.asarray(v)
        if arr.dtype.kind in "US":
            arr = arr.astype(object)
        return arr

    def visit(self, node: ast.AST) -> Any:
        t = self.text
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return _CONSTANTS[node.id] if node.id in _CONSTANTS else self.column(node.id)
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self.visit(e) for e in node.elts]
        if isinstance(node, ast.UnaryOp):
            v = self.visit(node.operand)
            if isinstance(node.op, ast.Not):
                return ~np.asarray(v, dtype=bool)
            v = _numeric(np.asarray(v), t) if isinstance(v, np.ndarray) else v
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp):
            a, b = self.visit(node.left), self.visit(node.right)
            if isinstance(node.op, ast.Add) and (isinstance(a, str) or isinstance(b, str)):
                raise InputError(f"expression {t!r}: '+' on text values.")
            a = _numeric(a, t) if isinstance(a, np.ndarray) else a
            b = _numeric(b, t) if isinstance(b, np.ndarray) else b
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                return _BINOPS[type(node.op)](a, b)
        if isinstance(node, ast.BoolOp):
            vals = [np.asarray(self.visit(v), dtype=bool) for v in node.values]
            out = vals[0]
            for v in vals[1:]:
                out = (out & v) if isinstance(node.op, ast.And) else (out | v)
            return out
        if isinstance(node, ast.Compare):
            left = self.visit(node.left)
            out = None
            for op, comp in zip(node.ops, node.comparators):
                right = self.visit(comp)
                res = self.compare(op, left, right)
                out = res if out is None else (out & res)
                left = right
            return out
        if isinstance(node, ast.IfExp):
            cond = np.asarray(self.visit(node.test), dtype=bool)
            return self.where(cond, self.visit(node.body), self.visit(node.orelse))
        if isinstance(node, ast.Call):
            return self.call(node.func.id, node.args)
        raise _refuse(t, "expression", type(node).__name__)  # pragma: no cover (checked before)

    def where(self, cond: np.ndarray, a: Any, b: Any) -> np.ndarray:
        a = np.broadcast_to(np.asarray(a, dtype=object if isinstance(a, str) else None), (self.n,))
        b = np.broadcast_to(np.asarray(b, dtype=object if isinstance(b, str) else None), (self.n,))
        if a.dtype.kind == "O" or b.dtype.kind == "O":
            return np.where(cond, a.astype(object), b.astype(object))
        return np.where(cond, a, b)

    def compare(self, op: ast.cmpop, a: Any, b: Any) -> np.ndarray:
        if isinstance(op, (ast.In, ast.NotIn)):
            arr = np.broadcast_to(np.asarray(a, dtype=object if isinstance(a, str) else None), (self.n,))
            values = list(b)
            if arr.dtype.kind in "biuf":
                nums = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
                res = np.isin(arr, np.asarray(nums, dtype=float)) if nums else np.zeros(self.n, bool)
            else:
                s = set(values)
                res = np.array([v in s for v in arr], dtype=bool)
            return ~res if isinstance(op, ast.NotIn) else res
        a_arr = np.asarray(a, dtype=object if isinstance(a, str) else None)
        b_arr = np.asarray(b, dtype=object if isinstance(b, str) else None)
        null = np.zeros(np.broadcast_shapes(a_arr.shape, b_arr.shape), dtype=bool)
        if a_arr.ndim:
            null = null | _isnull(a_arr)
        if b_arr.ndim:
            null = null | _isnull(b_arr)
        fn = {ast.Eq: np.equal, ast.NotEq: np.not_equal, ast.Lt: np.less, ast.LtE: np.less_equal,
              ast.Gt: np.greater, ast.GtE: np.greater_equal}[type(op)]
        try:
            with np.errstate(invalid="ignore"):
                if a_arr.dtype.kind == "O" or b_arr.dtype.kind == "O":
                    res = np.asarray(fn(a_arr.astype(object), b_arr.astype(object)), dtype=bool) \
                        if not null.any() else self._object_compare(fn, a_arr, b_arr, null)
                else:
                    res = np.asarray(fn(a_arr, b_arr), dtype=bool)
        except TypeError:
            raise InputError(f"expression {self.text!r}: compares text with a number; quote "
                             "category labels (marital == \"SINGLE\") or compare numbers.") from None
        res = np.broadcast_to(res, (self.n,)).copy() if res.ndim == 0 or res.shape != (self.n,) else res
        return res & ~np.broadcast_to(null, res.shape)

    @staticmethod
    def _object_compare(fn, a: np.ndarray, b: np.ndarray, null: np.ndarray) -> np.ndarray:
        a_b, b_b = np.broadcast_arrays(a.astype(object), b.astype(object))
        out = np.zeros(a_b.shape, dtype=bool)
        ok = ~null
        if ok.any():
            out[ok] = np.asarray(fn(a_b[ok], b_b[ok]), dtype=bool)
        return out

    def call(self, name: str, args: list) -> Any:
        t = self.text
        if name == "col":
            return self.column(args[0].value)
        if name == "cut":
            x = _numeric(np.asarray(self.visit(args[0]), dtype=None), t)
            breaks = np.asarray([float(v) for v in self.visit(args[1])])
            labels = self.visit(args[2])
            if np.any(np.diff(breaks) <= 0):
                raise InputError(f"expression {t!r}: cut() breaks must increase.")
            idx = np.searchsorted(breaks, x, side="right") - 1
            idx = np.where(x == breaks[-1], len(breaks) - 2, idx)  # the last interval is closed
            ok = (idx >= 0) & (idx < len(labels)) & ~np.isnan(x)
            out = np.empty(x.shape, dtype=object)
            out[:] = None
            lab = np.asarray(labels, dtype=object)
            out[ok] = lab[idx[ok]]
            return out
        vals = [self.visit(a) for a in args]
        if name in ("isna", "notna"):
            arr = np.broadcast_to(np.asarray(vals[0], dtype=object if isinstance(vals[0], str) else None), (self.n,))
            res = _isnull(arr)
            return res if name == "isna" else ~res
        if name == "where":
            return self.where(np.asarray(vals[0], dtype=bool), vals[1], vals[2])
        nums = [_numeric(np.asarray(v), t) if isinstance(v, np.ndarray) else v for v in vals]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if name == "round":
                digits = int(nums[1]) if len(nums) > 1 else 0
                return np.round(np.asarray(nums[0], dtype=float), digits)
            if name in ("min", "max"):
                return (np.fmin if name == "min" else np.fmax)(nums[0], nums[1])
            fn = {"log": np.log, "log10": np.log10, "exp": np.exp, "sqrt": np.sqrt, "abs": np.abs,
                  "floor": np.floor, "ceil": np.ceil}[name]
            return fn(np.asarray(nums[0], dtype=float))


@dataclass(frozen=True)
class Rule:
    """``condition -> consequent``: wherever the condition holds, the consequent must hold.

    ``target`` is the variable the consequent constrains (the one synthesised last among the
    consequent's columns); when the consequent is ``target == value`` the rule is an
    assignment (synthpop's ``rules``/``rvalues``) and ``value`` holds it.
    """

    source: str
    condition: Expression
    consequent: Expression
    target: str
    value: Any = None
    assigns: bool = False

    def holds(self, data: Mapping[str, Any], n: int) -> np.ndarray:
        """True for every record where the rule holds (the condition is false, or the
        consequent is true)."""
        cond = np.asarray(self.condition.evaluate(data, n), dtype=bool)
        cons = np.asarray(self.consequent.evaluate(data, n), dtype=bool)
        return ~cond | cons


def parse_rule(text: str, *, known: Any = None, where: str = "rules") -> Rule:
    """Parse ``"condition -> consequent"``; the target is the consequent's column (when the
    consequent reads several columns, the caller picks the one synthesised last)."""
    if not isinstance(text, str) or text.count("->") != 1:
        raise InputError(f"{where}: {text!r} must read 'condition -> consequent', e.g. "
                         "'age < 16 -> marital == \"SINGLE\"'.")
    left, right = (s.strip() for s in text.split("->"))
    cond = parse_expression(left, known=known, where=where)
    cons = parse_expression(right, known=known, where=where)
    if not cons.columns:
        raise InputError(f"{where}: {text!r}: the consequent reads no column.")
    body = cons._tree.body
    value, assigns = None, False
    if (isinstance(body, ast.Compare) and len(body.ops) == 1 and isinstance(body.ops[0], ast.Eq)
            and len(cons.columns) == 1):
        lhs, rhs = body.left, body.comparators[0]
        const = rhs if _is_constant(rhs) else lhs if _is_constant(lhs) else None
        if const is not None:
            value, assigns = _constant(const), True
    return Rule(text, cond, cons, cons.columns[-1], value, assigns)


def _is_constant(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) or (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
                                              and isinstance(node.operand, ast.Constant))


def _constant(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    return -node.operand.value  # type: ignore[attr-defined]


__all__ = ["Expression", "Rule", "parse_expression", "parse_rule", "FUNCTIONS"]
