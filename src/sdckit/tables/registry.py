"""One registry of table protection methods and sensitivity rules.

A table method is a frozen dataclass deriving from :class:`TableMethod` whose settings are
declared with :func:`sdckit.params.param` (label, help, unit, symbol, range), validated on
construction with the one parameter-error template, and registered by name with
:func:`register_table_method`. It has one entry point::

    apply(table, primary=None, *, rng=None, microdata=None) -> TableResult

``primary`` is the :class:`~sdckit.tables.rules.Primary` of the sensitivity rules (required by
the suppression methods, ignored by the perturbative ones); ``microdata`` is the frame the
table was tabulated from, which the cell key method needs for its record keys (the other
methods ignore it). Every method returns a :class:`TableResult`: the published value and the
public status of every cell, the audit's verdict (``exact``, ``sampled`` or ``failed``, with a
sentence), the guarantees, and the method's own result as evidence.

A sensitivity rule is a frozen dataclass deriving from :class:`TableRule`, registered with
:func:`register_table_rule`; ``build()`` gives the rule object of :mod:`sdckit.tables.rules`.

The spec reader (:mod:`sdckit.tables.spec`), the tau-Argus batch runner
(:mod:`sdckit.tables.argus.batch`) and the workbench (:mod:`sdckit.app.tables`) find methods
and rules here only. Modules named ``table_methods`` in any subpackage of sdckit register
themselves (found on disk by :func:`discover`, as :func:`sdckit.registry.discover` finds
steps), so a new method needs no edit outside its own package.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import importlib
import importlib.util
import pkgutil
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from .._validation import close_names
from ..errors import ParameterError, SpecError
from ..params import check_params, is_declared, step_params
from ..result import ResultDisplay

__all__ = ["TableMethod", "TableRule", "TableResult", "AuditVerdict", "register_table_method",
           "register_table_rule", "table_method_class", "table_rule_class", "known_table_methods",
           "known_table_rules", "build_table_method", "build_table_rule", "declarations", "discover",
           "STATUS_WORDS", "kernel_defaults", "kernel_constant", "kernel_settings"]

_METHODS: dict[str, type] = {}
_RULES: dict[str, type] = {}
_discovered = False

#: the public status of a cell, in words (pages, the workbench, the report)
STATUS_WORDS = {"safe": "published as computed", "suppressed": "suppressed (not published)",
                "rounded": "rounded", "perturbed": "perturbed (noise added)"}
#: what an audit proved, in words
AUDIT_STATUSES = ("exact", "sampled", "failed")


@dataclass(frozen=True)
class AuditVerdict:
    """What a table's audit proved.

    ``status`` is ``"exact"`` (every sensitive cell, or every cell, checked and the promise
    holds), ``"sampled"`` (some checked: ``n_audited`` of ``n_audited + n_not_audited``, by
    ``rule``) or ``"failed"`` (a checked promise does not hold). ``sentence`` says it in words.
    A sampled audit is never reported as passed.
    """

    status: str
    sentence: str
    n_audited: int = 0
    n_not_audited: int = 0
    rule: str = ""

    def __post_init__(self) -> None:
        if self.status not in AUDIT_STATUSES:
            raise ValueError(f"audit status {self.status!r} is not one of {AUDIT_STATUSES}")

    @property
    def ok(self) -> bool:
        """True only for an exact audit that passes."""
        return self.status == "exact"

    def to_dict(self) -> dict:
        return {"status": self.status, "sentence": self.sentence, "ok": self.ok,
                "n_audited": int(self.n_audited), "n_not_audited": int(self.n_not_audited), "rule": self.rule}


@dataclass(frozen=True)
class TableResult(ResultDisplay):
    """The outcome of a table method: what is published, with its evidence.

    Attributes
    ----------
    method : str
        The registered name of the method.
    table : Table
        The table as protected (the cell key method may tabulate its own from the microdata).
    values : ndarray of float
        The published value of every cell (a suppressed cell keeps its true value here; its
        status says it is withheld).
    status : ndarray of str
        The public status of every cell (:data:`sdckit.tables.public.STATUSES`).
    audit : AuditVerdict
        What the method's audit proved.
    guarantees : list of Guarantee
        The method's promises with the checker's verdict.
    detail : object
        The method's own result (SuppressionResult, RoundingResult, CKMResult, DPTableResult).
    params : dict
        The settings as declared (public: no seed).
    extra : dict
        Further public columns per cell (the DP intervals ``lower`` and ``upper``).
    seed : object
        The :class:`~sdckit._random.SeedRecord` of a random method (internal only), or None.
    """

    method: str
    table: Any
    values: np.ndarray
    status: np.ndarray
    audit: AuditVerdict
    guarantees: list
    detail: Any
    params: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)
    seed: Any = None

    @property
    def n_suppressed(self) -> int:
        return int(np.sum(self.status == "suppressed"))

    def status_words(self) -> list[str]:
        """Every cell's status in words (:data:`STATUS_WORDS`)."""
        return [STATUS_WORDS.get(str(s), str(s)) for s in self.status]

    def to_dict(self) -> dict:
        from ..result import jsonable

        counts = {s: int(np.sum(self.status == s)) for s in STATUS_WORDS if np.any(self.status == s)}
        return jsonable({"method": self.method, "n_cells": int(self.table.n_cells), "statuses": counts,
                         "audit": self.audit.to_dict(), "params": self.params,
                         "guarantees": [g.to_dict() for g in self.guarantees]})

    def describe(self) -> str:
        counts = ", ".join(f"{n:,} {STATUS_WORDS[s]}" for s, n in self.to_dict()["statuses"].items())
        return f"{self.method}: {self.table.n_cells:,} cells ({counts}). Audit {self.audit.status}: {self.audit.sentence}."


@functools.cache
def _module_source(module: str) -> str:
    """The source of ``module`` (found on disk, not imported)."""
    spec = importlib.util.find_spec(module)
    source = None if spec is None or spec.loader is None else spec.loader.get_source(module)  # type: ignore[attr-defined]
    if source is None:
        raise TypeError(f"kernel module {module!r} has no Python source to read its declarations from")
    return source


def _top_level(module: str, name: str) -> list[ast.stmt]:
    """The top-level statement(s) of ``module`` defining ``name``: its own lines are parsed (a
    tenth of the time of the whole module), the whole module where they do not parse alone."""
    lines = _module_source(module).splitlines()
    head = re.compile(rf"(class|def|async def) {re.escape(name)}\b|{re.escape(name)}\s*[:=]")
    for i, line in enumerate(lines):
        if head.match(line):
            j = i + 1
            while j < len(lines) and not re.match(r"[A-Za-z_@]", lines[j]):
                j += 1
            try:
                return ast.parse("\n".join(lines[i:j])).body
            except SyntaxError:
                break
    return ast.parse(_module_source(module)).body


def _literal(node: ast.expr, where: str) -> Any:
    if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "field":  # field(default=...)
        kw = {k.arg: k.value for k in node.keywords}
        if "default" in kw:
            return _literal(kw["default"], where)
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise TypeError(f"{where}: the default is not a literal ({ast.unparse(node)}); a table method "
                        "cannot read it without importing the kernel") from None


@functools.cache
def kernel_defaults(module: str, name: str) -> Mapping[str, Any]:
    """The defaults a kernel declares, read from its source without importing it.

    ``name`` is a dataclass of ``module`` (its fields with a default) or a function (its
    parameters with a default). The registered table methods take their defaults from here,
    so each default is declared once, in the kernel, and registering the methods loads no
    solver or compiled kernel (the hypercube's numba code is imported only when it runs).

    Parameters
    ----------
    module : str
        The kernel's module (``"sdckit.tables.hypercube"``).
    name : str
        The dataclass or function in it (``"HypercubeSuppression"``).

    Returns
    -------
    mapping
        Parameter name -> default (literals only; a computed default is refused).
    """
    for node in _top_level(module, name):
        if isinstance(node, ast.ClassDef) and node.name == name:
            return {st.target.id: _literal(st.value, f"{module}.{name}.{st.target.id}") for st in node.body
                    if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and st.value is not None
                    and "ClassVar" not in ast.unparse(st.annotation)}
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            a = node.args
            pos = a.posonlyargs + a.args
            out = {arg.arg: _literal(d, f"{module}.{name}.{arg.arg}")
                   for arg, d in zip(pos[len(pos) - len(a.defaults):], a.defaults)}
            out.update({arg.arg: _literal(d, f"{module}.{name}.{arg.arg}")
                        for arg, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None})
            return out
    raise TypeError(f"kernel {module}.{name} is not a top-level class or function")


@functools.cache
def kernel_constant(module: str, name: str) -> Any:
    """A module-level literal of a kernel (``COSTS``, ``ORDERS``), read without importing it."""
    for node in _top_level(module, name):
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return _literal(value, f"{module}.{name}")
    raise TypeError(f"kernel constant {module}.{name} is not a top-level assignment")


def kernel_settings(method: Any, renames: Mapping[str, str] | None = None) -> dict:
    """A table method's declared settings as the keyword arguments of its kernel (``renames``:
    the method's name -> the kernel's, where a spec key must differ, e.g. ``solver`` -> ``method``)."""
    renames = renames or {}
    return {renames.get(p.name, p.name): getattr(method, p.name) for p in step_params(type(method))}


def _declared_defaults(cls: type) -> None:
    if not dataclasses.is_dataclass(cls) or not cls.__dataclass_params__.frozen:
        raise TypeError(f"{cls.__name__} must be a frozen dataclass")
    if not is_declared(cls):
        raise TypeError(f"declare every parameter of {cls.__name__} with param()")


class TableMethod:
    """Base of the table protection methods (see the module docstring).

    Class attributes set by :func:`register_table_method`: ``method_name``, ``label`` (a human
    name), ``help`` (one line), ``needs_rules`` (suppression: the sensitivity rules choose the
    cells to protect), ``needs_microdata`` (the cell key method's record keys) and ``kinds``
    (the table kinds it protects: ``"frequency"``, ``"magnitude"``).
    """

    method_name: ClassVar[str] = ""
    label: ClassVar[str] = ""
    help: ClassVar[str] = ""
    needs_rules: ClassVar[bool] = False
    needs_microdata: ClassVar[bool] = False
    kinds: ClassVar[tuple[str, ...]] = ("frequency", "magnitude")

    def __post_init__(self) -> None:
        check_params(self)

    def apply(self, table: Any, primary: Any = None, *, rng: Any = None,
              microdata: Any = None) -> TableResult:  # pragma: no cover - every method overrides it
        raise NotImplementedError

    def public_params(self) -> dict:
        """The declared settings as a JSON-ready dict (what the certificate and the spec hold)."""
        from ..result import jsonable

        return jsonable({p.name: getattr(self, p.name) for p in step_params(type(self))})


class TableRule:
    """Base of the sensitivity rules: a frozen dataclass of declared thresholds whose
    ``build()`` returns the rule object that :func:`sdckit.tables.rules.primary_cells` applies.

    ``rule_name``, ``label`` and ``help`` are set by :func:`register_table_rule`.
    """

    rule_name: ClassVar[str] = ""
    label: ClassVar[str] = ""
    help: ClassVar[str] = ""

    def __post_init__(self) -> None:
        check_params(self)

    def build(self) -> Any:  # pragma: no cover - every rule overrides it
        raise NotImplementedError

    def thresholds(self) -> dict:
        """The declared thresholds by name (for the certificate and the report)."""
        return {p.name: getattr(self, p.name) for p in step_params(type(self))}

    def describe(self) -> str:
        """One line: the rule and its thresholds in words."""
        parts = ", ".join(f"{p.display_label} {getattr(self, p.name):g}" + (f" {p.unit}" if p.unit else "")
                          for p in step_params(type(self)))
        return f"{self.label}: {parts}"


def register_table_method(name: str, *, label: str, help: str, needs_rules: bool = False,
                          needs_microdata: bool = False,
                          kinds: tuple[str, ...] = ("frequency", "magnitude")) -> Callable[[type], type]:
    """Class decorator: register a table method under ``name`` (see :class:`TableMethod`)."""

    def deco(cls: type) -> type:
        _declared_defaults(cls)
        if not issubclass(cls, TableMethod):
            raise TypeError(f"table method {name!r}: {cls.__name__} must derive from TableMethod")
        if name in _METHODS and _METHODS[name] is not cls:
            raise TypeError(f"table method {name!r} registered twice ({_METHODS[name].__name__}, {cls.__name__})")
        cls.method_name, cls.label, cls.help = name, label, help
        cls.needs_rules, cls.needs_microdata, cls.kinds = bool(needs_rules), bool(needs_microdata), tuple(kinds)
        _METHODS[name] = cls
        return cls

    return deco


def register_table_rule(name: str, *, label: str, help: str) -> Callable[[type], type]:
    """Class decorator: register a sensitivity rule under ``name`` (see :class:`TableRule`)."""

    def deco(cls: type) -> type:
        _declared_defaults(cls)
        if not issubclass(cls, TableRule):
            raise TypeError(f"table rule {name!r}: {cls.__name__} must derive from TableRule")
        if name in _RULES and _RULES[name] is not cls:
            raise TypeError(f"table rule {name!r} registered twice ({_RULES[name].__name__}, {cls.__name__})")
        cls.rule_name, cls.label, cls.help = name, label, help
        _RULES[name] = cls
        return cls

    return deco


def discover() -> None:
    """Import every ``sdckit.<subpackage>.table_methods`` module (they register themselves)."""
    global _discovered
    if _discovered:
        return
    root = __name__.split(".")[0]
    top = Path(__file__).resolve().parents[1]
    for pkg in pkgutil.iter_modules([str(top)]):
        if pkg.ispkg and (top / pkg.name / "table_methods.py").is_file():
            importlib.import_module(f"{root}.{pkg.name}.table_methods")
    _discovered = True


def _load(name: str, registry: dict) -> None:
    """Find ``name`` with as few imports as can be: this package's own ``table_methods`` first
    (the suppression, rounding and CKM methods and the rules need no numba), then every
    provider (:func:`discover`)."""
    if name in registry or _discovered:
        return
    own = f"{__name__.rpartition('.')[0]}.table_methods"
    importlib.import_module(own)
    if name not in registry:
        discover()


def known_table_methods() -> list[str]:
    discover()
    return sorted(_METHODS)


def known_table_rules() -> list[str]:
    discover()
    return sorted(_RULES)


def _lookup(registry: dict[str, type], name: Any, what: str, where: str) -> type:
    """The class registered as ``name``; an unknown name is a one-line SpecError with the closest."""
    if isinstance(name, str):
        _load(name, registry)
    else:
        discover()
    if not isinstance(name, str) or name not in registry:
        raise SpecError(f"{where}: unknown {what} {name!r} ({close_names(str(name), registry)}); "
                        f"the known ones are {', '.join(sorted(registry))}")
    return registry[name]


def table_method_class(name: str, *, where: str = "protection.method") -> type:
    """The registered method ``name``; an unknown name is a one-line SpecError with the closest."""
    return _lookup(_METHODS, name, "table method", where)


def table_rule_class(name: str, *, where: str = "rules.type") -> type:
    """The registered sensitivity rule ``name``; an unknown name is a one-line SpecError with the closest."""
    return _lookup(_RULES, name, "sensitivity rule", where)


def _build(cls: type, kind: str, name: str, params: Mapping[str, Any], where: str) -> Any:
    declared = {p.name: p for p in step_params(cls)}
    for key in params:
        if key not in declared:
            raise SpecError(f"{where}.{key}: unknown parameter of the {kind} {name!r}; the valid ones are "
                            f"{', '.join(declared) or 'none'} ({close_names(str(key), list(declared))})")
    for p in declared.values():
        if p.required and p.name not in params:
            raise SpecError(f"{where}.{p.name}: the {kind} {name!r} needs this parameter ({p.help}); "
                            f"it must be {p.rule()}")
    try:
        return cls(**params)
    except ParameterError as exc:
        if exc.param is not None:
            raise SpecError(f"{where}.{exc.param}: must be {exc.rule}, got {exc.value!r}") from None
        raise SpecError(f"{where}: {exc}") from None


def build_table_method(name: str, params: Mapping[str, Any] | None = None, *,
                       where: str = "protection") -> TableMethod:
    """Method ``name`` built from its parameters, errors restated at the spec's key path
    (``protection.base: must be an int >= 2, got 1``)."""
    cls = table_method_class(name, where=f"{where}.method")
    return _build(cls, "table method", name, dict(params or {}), where)


def build_table_rule(spec: Mapping[str, Any], *, where: str = "rules[0]") -> TableRule:
    """A rule from its spec table (``{type = "threshold", n = 3}``)."""
    spec = dict(spec)
    name = spec.pop("type", None)
    cls = table_rule_class(name, where=f"{where}.type")
    return _build(cls, "sensitivity rule", name, spec, where)


def _param_dict(p: Any) -> dict:
    d = p.to_dict()
    return {"name": d["name"], "label": d["label"], "help": d["help"], "unit": d.get("unit"),
            "symbol": d.get("symbol"), "kind": d["kind"], "default": d["default"], "required": d["required"],
            "choices": d.get("choices"), "low": d.get("low"), "high": d.get("high"),
            "nullable": d["nullable"], "advanced": d["advanced"], "rule": d["rule"]}


def declarations() -> dict:
    """Every registered method and rule with its declared parameters (JSON-ready): what the
    workbench's forms are generated from."""
    discover()
    methods = [{"name": n, "label": c.label, "help": c.help, "needs_rules": c.needs_rules,
                "needs_microdata": c.needs_microdata, "kinds": list(c.kinds),
                "params": [_param_dict(p) for p in step_params(c)]} for n, c in sorted(_METHODS.items())]
    rules = [{"name": n, "label": c.label, "help": c.help, "params": [_param_dict(p) for p in step_params(c)]}
             for n, c in sorted(_RULES.items())]
    return {"methods": methods, "rules": rules}
