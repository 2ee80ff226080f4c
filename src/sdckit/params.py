"""One declaration per step parameter: validation, spec, docs, CLI help and forms come from it.

A step is a frozen dataclass registered with :func:`sdckit.registry.register_step`. Each of its
settings is a dataclass field declared with :func:`param`::

    @register_step("local_suppression")
    @dataclass(frozen=True)
    class LocalSuppression:
        k: int = param(3, kind="int", low=2, help="every record's f_k must reach k", symbol="k")

        def __post_init__(self) -> None:
            check_params(self)          # every declared rule, with the one message template
            ...                         # cross-parameter rules, if any

Everything else reads the declaration with :func:`step_params`: the release-spec reader, the
generated ``docs/release_spec.md``, ``sdckit protect --help``, explore's grids and the
workbench's forms. A field declared without :func:`param` still gets a schema inferred from
its annotation and default (kind ``"any"`` when it cannot be inferred), so every registered
step has one.

Kinds
-----
``int``, ``float``, ``bool``, ``str`` (free text), ``choice`` (one of ``choices``; a callable
is read at each check, for registries other packages extend), ``column`` (a column name),
``columns`` (one or more distinct column names; an empty list only with ``allow_empty`` or an
empty default), ``int_list``, ``float_list`` (``inf`` allowed, NaN not), ``str_list``,
``mapping`` (a table: label -> list of codes, or code -> value; with ``value_kind``, a table
column -> value of that kind, which forms show as rows), ``path`` (a file, relative to
the spec), ``variant`` (one of a set of declared types, each a frozen dataclass with its own
:func:`param` fields and a ``variant_name``: an alternative is a type, not a string plus
fields that apply to one choice only; in a spec an inline table
``matrix = { type = "invariant", alpha = 0.5 }``), ``any`` (JSON-like value checked by the step).

A parameter must not be called ``method``: that key names the step in a spec's ``[[steps]]``
table (a step's own choice of algorithm is ``algorithm``, ``kind`` or ``matrix``).
"""

from __future__ import annotations

import dataclasses
import json
import math
import numbers
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, cast

from ._validation import check_bool, check_choice, check_float, check_int, check_names, param_error
from .errors import ParameterError

KINDS = ("int", "float", "bool", "str", "choice", "column", "columns", "int_list", "float_list",
         "str_list", "mapping", "path", "variant", "any")

#: kinds the values of a ``mapping`` may declare (``value_kind``): column -> value of this kind
VALUE_KINDS = ("choice", "str", "int", "float", "int_list", "float_list")

#: roles a ``column``/``columns`` parameter may require of the columns it names: the role
#: name, the Microdata attribute that holds it, and the words of the refusal
ROLES = {"key": ("key_vars", "a key variable", "add it to [roles] key_vars"),
         "numeric": ("numeric_vars", "a numeric variable", "add it to [roles] numeric_vars"),
         "weight": ("weight", "the weight", "set [roles] weight to it"),
         "household": ("household", "the household column", "set [roles] household to it"),
         "strata": ("strata", "a strata column", "add it to [roles] strata"),
         "sensitive": ("sensitive", "a sensitive variable", "add it to [roles] sensitive"),
         # PRAM takes a key variable or a categorical variable declared for PRAM only
         "pram": ("pram_vars", "a key or PRAM variable", "add it to [roles] key_vars or [roles] pram_vars")}

_KEY = "sdckit_param"


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


#: default of a parameter the spec must set
REQUIRED = _Required()


class VariantType(Protocol):
    """A variant type of a ``variant`` parameter: a frozen dataclass whose fields are declared with
    :func:`param`, and its spec name (``type = "..."`` in a spec), set by its declaration."""

    variant_name: ClassVar[str]


@dataclass(frozen=True)
class Param:
    """The declaration of one step parameter.

    Attributes
    ----------
    name : str
        The field name, which is also the spec key.
    kind : str
        One of :data:`KINDS`.
    default : object
        The default value, or :data:`REQUIRED`.
    help : str
        One line for docs, CLI help and form tooltips.
    low, high : float, optional
        Range for ``int`` and ``float`` (and each item of ``int_list``/``float_list``).
    low_open, high_open : bool
        Open interval ends (floats only).
    choices : tuple of str or callable, optional
        Allowed values for ``choice``; a zero-argument callable is read each time (a registry
        that other packages extend, e.g. PRAM's matrix methods). Read them with :meth:`options`.
    unit : str, optional
        Unit of a number ("records", "share of n", "seconds").
    symbol : str, optional
        The paper's symbol ("k", "alpha", "p_d", "eps").
    nullable : bool
        ``None`` is allowed (meaning "not set": the step decides).
    grid : tuple, optional
        Values explore sweeps by default.
    advanced : bool
        Hidden behind "more options" in forms.
    allow_empty : bool, optional
        ``columns`` only: an empty list is accepted (default: when the default is empty).
    label : str, optional
        A human name for forms, reports and the generated docs ("k-anonymity", "smallest
        keep probability"); :attr:`display_label` falls back to the name in words.
    role : str, optional
        ``column``/``columns`` only: the role every named column must hold in the data
        (one of :data:`ROLES`: ``"key"``, ``"numeric"``, ``"weight"``, ``"household"``,
        ``"strata"``, ``"sensitive"``); :func:`check_columns` checks it before a release runs.
    variant_source : tuple of type or callable, optional
        ``variant`` only: the allowed types, or a zero-argument callable returning them (a
        registry other modules extend). Read them with :attr:`variants`.
    value_kind : str, optional
        ``mapping`` only: the table is column -> value, and each value is of this kind (one of
        :data:`VALUE_KINDS`: ``"choice"``, ``"str"``, ``"int"``, ``"float"``, ``"int_list"``,
        ``"float_list"``; a list kind also takes one number). Forms then show one row per
        column with the value's own widget, and :func:`check_value` checks every value.
    value_choices : tuple of str or callable, optional
        ``value_kind="choice"`` only: the values allowed (a callable is read each time).
    """

    name: str
    kind: str
    default: Any = REQUIRED
    help: str = ""
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple | Callable[[], Sequence[str]] | None = None
    unit: str | None = None
    symbol: str | None = None
    nullable: bool = False
    grid: tuple | None = None
    advanced: bool = False
    allow_empty: bool | None = None
    label: str | None = None
    role: str | None = None
    variant_source: tuple | Callable[[], Sequence[type]] | None = None
    value_kind: str | None = None
    value_choices: tuple | Callable[[], Sequence[str]] | None = None

    def value_param(self) -> Param | None:
        """``mapping`` with a ``value_kind``: the declaration one value of the table obeys
        (named after the table), else None."""
        if self.value_kind is None:
            return None
        return Param(name=self.name, kind=self.value_kind, choices=self.value_choices)

    @property
    def variants(self) -> tuple[type[VariantType], ...]:
        """``variant`` only: the allowed types (each declares its own parameters, read with
        :func:`step_params`); empty for other kinds."""
        c = self.variant_source
        if c is None:
            return ()
        return cast("tuple[type[VariantType], ...]", tuple(c()) if callable(c) else tuple(c))

    def variant_type(self, name: str) -> type[VariantType] | None:
        """The allowed type whose ``variant_name`` is ``name`` (None when there is none)."""
        return next((t for t in self.variants if t.variant_name == name), None)

    @property
    def display_label(self) -> str:
        """The declared label, else the parameter's name in words."""
        return self.label or self.name.replace("_", " ")

    def empty_allowed(self) -> bool:
        """``columns`` only: whether an empty list is accepted (declared, or an empty default)."""
        if self.allow_empty is not None:
            return self.allow_empty
        return isinstance(self.default, (tuple, list)) and len(self.default) == 0

    def options(self) -> tuple:
        """The allowed values of a ``choice`` (empty for other kinds)."""
        c = self.choices
        if c is None:
            return ()
        return tuple(c()) if callable(c) else tuple(c)

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def rule(self) -> str:
        """The rule as text, in the words of the one error template."""
        if self.kind == "int":
            if self.low is not None and self.high is not None:
                r = f"an int in [{self.low:g}, {self.high:g}]"
            elif self.low is not None:
                r = f"an int >= {self.low:g}"
            elif self.high is not None:
                r = f"an int <= {self.high:g}"
            else:
                r = "an int"
        elif self.kind == "float":
            lo = "" if self.low is None else ("(" if self.low_open else "[") + f"{self.low:g}"
            hi = "" if self.high is None else f"{self.high:g}" + (")" if self.high_open else "]")
            if self.low is not None and self.high is not None:
                r = f"a number in {lo}, {hi}"
            elif self.low is not None:
                r = f"a number {'>' if self.low_open else '>='} {self.low:g}"
            elif self.high is not None:
                r = f"a number {'<' if self.high_open else '<='} {self.high:g}"
            else:
                r = "a finite number"
        elif self.kind == "choice":
            r = "one of " + ", ".join(repr(c) for c in self.options())
        elif self.kind == "variant":
            r = ("one of " + ", ".join(f"{t.__name__}(...)" for t in self.variants)
                 + " (in a spec: a table { type = " + " | ".join(json.dumps(t.variant_name) for t in self.variants)
                 + ", ... })")
        else:
            r = {"bool": "true or false", "str": "a string", "column": "a column name",
                 "columns": ("a column name or a list of distinct column names"
                             if self.empty_allowed() else
                             "a column name or a non-empty list of distinct column names"),
                 "int_list": "a list of ints", "float_list": "a list of numbers (inf allowed)",
                 "str_list": "a list of strings",
                 "mapping": "a table (mapping)" if self.value_kind is None else
                 f"a table of column -> {_value_rule(cast('Param', self.value_param()))}",
                 "path": "a file path", "any": "a value"}[self.kind]
            if self.kind in ("int_list", "float_list") and (self.low is not None or self.high is not None):
                bounds = [f">= {self.low:g}" if self.low is not None else "",
                          f"<= {self.high:g}" if self.high is not None else ""]
                r += " each " + " and ".join(b for b in bounds if b)
        if self.nullable:
            r += " (or unset)"
        return r

    def to_dict(self) -> dict:
        """JSON-ready declaration (for the workbench's forms and the docs)."""
        d = {"name": self.name, "label": self.display_label, "kind": self.kind,
             "required": self.required,
             "default": None if self.required else _jsonable(variant_value(self.default)
                                                              if self.kind == "variant" else self.default),
             "help": self.help,
             "rule": self.rule(), "nullable": self.nullable, "advanced": self.advanced}
        for key in ("low", "high", "unit", "symbol", "role"):
            if getattr(self, key) is not None:
                d[key] = getattr(self, key)
        if self.kind == "float" and self.low is not None:
            d["low_open"] = self.low_open
        if self.kind == "float" and self.high is not None:
            d["high_open"] = self.high_open
        if self.choices is not None:
            d["choices"] = list(self.options())
        if self.grid is not None:
            d["grid"] = list(self.grid)
        if self.kind == "columns":
            d["allow_empty"] = self.empty_allowed()
        if self.kind == "variant":
            d["variants"] = [variant_schema(t) for t in self.variants]
        if self.value_kind is not None:
            d["value_kind"] = self.value_kind
            vp = cast("Param", self.value_param())
            if vp.choices is not None:
                d["value_choices"] = list(vp.options())
        return d


def variant_schema(cls: type[VariantType]) -> dict:
    """JSON-ready declaration of one variant type: its spec name, class, one-line summary and
    its own parameters (a form shows only the chosen type's)."""
    return {"type": cls.variant_name, "class": cls.__name__, "summary": variant_summary(cls),
            "params": [p.to_dict() for p in step_params(cls)]}


def variant_summary(cls: type) -> str:
    """The first paragraph of a variant type's docstring, on one line."""
    text = (cls.__doc__ or "").strip().split("\n\n")[0]
    return " ".join(text.split())


def variant_value(obj: Any) -> Any:
    """The spec form of a variant instance: ``{"type": name, **its parameters}`` (lists for
    tuples); anything else as it is."""
    if not (dataclasses.is_dataclass(obj) and hasattr(type(obj), "variant_name")):
        return obj

    def plain(v: Any) -> Any:
        if isinstance(v, (tuple, list)):
            return [plain(x) for x in v]
        return variant_value(v)

    cls = cast("type[VariantType]", type(obj))
    return {"type": cls.variant_name, **{p.name: plain(getattr(obj, p.name)) for p in step_params(cls)}}


def build_variant(owner: str, p: Param, value: Any) -> Any:
    """A variant parameter's value from an instance of one of its types or a table
    ``{"type": name, **parameters}``. A bad value raises the one template for ``p``; a bad
    parameter of the chosen type raises that type's template, with ``param`` set to the
    dotted path (``"matrix.alpha"``) so a spec restates it at ``steps[0].matrix.alpha``."""
    types = p.variants
    if isinstance(value, types):
        return value
    if not isinstance(value, Mapping) or not isinstance(value.get("type"), str):
        raise param_error(owner, p.name, p.rule(), value)
    cls = p.variant_type(value["type"])
    if cls is None:
        raise param_error(owner, p.name, p.rule(), value)
    settings = {k: v for k, v in value.items() if k != "type"}
    names = [q.name for q in step_params(cls)]
    unknown = [k for k in settings if k not in names]
    missing = [q.name for q in step_params(cls) if q.required and q.name not in settings]
    if unknown or missing:
        rule = (f"a table of {cls.__name__}'s parameters ({', '.join(names) or 'none'}"
                + (f"; {', '.join(missing)} required" if missing else "") + ")")
        raise param_error(owner, p.name, rule, value)
    try:
        return cls(**settings)
    except ParameterError as exc:
        if exc.param is not None and not exc.param.startswith(f"{p.name}."):
            exc.param = f"{p.name}.{exc.param}"
        raise


def flat_form_problem(params: Mapping[str, Any], name: str, flat_keys: Sequence[str], default: str,
                      what: str | None = None) -> str | None:
    """Why a step's spec table gives a ``variant`` parameter in the flat form of earlier specs,
    with the inline table to write instead.

    Earlier specs chose an alternative by a string in ``params[name]`` and put its settings
    beside the step's own (``flat_keys``); now the choice and its settings are one inline table
    ``name = { type = "...", ... }``. A step's ``spec_form_problem`` classmethod returns this
    line and the spec reader refuses the table with it.

    Parameters
    ----------
    params : mapping
        The step's table as the spec gives it.
    name : str
        The variant parameter (``"matrix"``, ``"algorithm"``).
    flat_keys : sequence of str
        The keys that moved into the variant types.
    default : str
        The type a table without ``name`` means.
    what : str, optional
        The parameter in words for the message (default: ``name``).

    Returns
    -------
    str or None
        One line showing the table to write, or None when the table is in the current form.
    """
    flat = {k: params[k] for k in flat_keys if k in params}
    given = params.get(name)
    if not flat and not isinstance(given, str):
        return None
    base = dict(given) if isinstance(given, Mapping) else {"type": given if isinstance(given, str) else default}
    table = {**base, **flat}
    shown = ", ".join(f"{k} = {json.dumps(v)}" for k, v in table.items())
    return (f"the {what or name} and its settings are one inline table now: write {name} = {{ {shown} }}"
            + (f" instead of {', '.join([name, *flat])}" if flat else ""))


def _value_rule(vp: Param) -> str:
    """The rule of one value of a mapping with a ``value_kind`` (a list kind takes one number)."""
    r = vp.rule()
    return r + " (or one number)" if vp.kind in ("int_list", "float_list") else r


def _value_ok(vp: Param, v: Any) -> bool:
    """Whether ``v`` obeys the value declaration ``vp`` (a list kind also takes one number)."""
    if vp.kind in ("int_list", "float_list") and isinstance(v, numbers.Real) and not isinstance(v, (bool, str)):
        v = [v]
    try:
        check_value("", vp, v)
    except ParameterError:
        return False
    return True


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value


def param(default: Any = REQUIRED, *, kind: str, help: str, low: float | None = None,
          high: float | None = None, low_open: bool = False, high_open: bool = False,
          choices: Sequence[str] | Callable[[], Sequence[str]] | None = None, unit: str | None = None, symbol: str | None = None,
          nullable: bool = False, grid: Sequence | None = None, advanced: bool = False,
          allow_empty: bool | None = None, label: str | None = None,
          role: str | None = None,
          variants: Sequence[type] | Callable[[], Sequence[type]] | None = None,
          value_kind: str | None = None,
          value_choices: Sequence[str] | Callable[[], Sequence[str]] | None = None) -> Any:
    """Declare a step (or gate check) parameter: a dataclass field carrying its :class:`Param`.

    List and dict defaults are copied per instance (``default_factory``); a required
    parameter (no default) must come before the defaulted ones, as dataclasses demand.
    ``kind="variant"`` takes ``variants``: the allowed types, or a callable returning them.
    ``kind="mapping"`` may take ``value_kind`` (and ``value_choices`` for ``"choice"``): a
    table of column -> value of that kind.
    """
    if kind not in KINDS:
        raise ValueError(f"param kind {kind!r} is not one of {KINDS}")
    if (kind == "variant") != (variants is not None):
        raise ValueError("a variant parameter, and only one, needs variants")
    if kind == "choice" and not choices:
        raise ValueError("a choice parameter needs choices")
    if value_kind is not None and (kind != "mapping" or value_kind not in VALUE_KINDS):
        raise ValueError(f"param value_kind {value_kind!r}: a mapping parameter may declare one of {VALUE_KINDS}")
    if (value_kind == "choice") != (value_choices is not None):
        raise ValueError("value_choices goes with value_kind='choice', and it needs them")
    if role is not None and (role not in ROLES or kind not in ("column", "columns")):
        raise ValueError(f"param role {role!r}: a column or columns parameter may require one of "
                         f"{tuple(ROLES)}")
    decl = dict(kind=kind, default=default, help=help, low=low, high=high, low_open=low_open,
                high_open=high_open,
                choices=choices if choices is None or callable(choices) else tuple(choices),
                unit=unit, symbol=symbol, nullable=nullable,
                grid=tuple(grid) if grid is not None else None, advanced=advanced,
                allow_empty=allow_empty, label=label, role=role,
                variant_source=variants if variants is None or callable(variants) else tuple(variants),
                value_kind=value_kind,
                value_choices=value_choices if value_choices is None or callable(value_choices) else tuple(value_choices))
    meta = {_KEY: decl}
    if default is REQUIRED:
        return dataclasses.field(metadata=meta)
    if isinstance(default, (list, dict, set)):
        return dataclasses.field(default_factory=lambda: type(default)(default), metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def _infer(field: dataclasses.Field, hints: dict) -> Param:
    """A schema for a field declared without :func:`param` (from its annotation and default)."""
    if field.default is not dataclasses.MISSING:
        default = field.default
    elif field.default_factory is not dataclasses.MISSING:
        default = field.default_factory()
    else:
        default = REQUIRED
    hint = hints.get(field.name, Any)
    args = typing.get_args(hint)
    nullable = type(None) in args
    base = [a for a in args if a is not type(None)] if args else [hint]
    kind = "any"
    if len(base) == 1:
        b = base[0]
        kind = {bool: "bool", int: "int", float: "float", str: "str"}.get(b, "any")
    return Param(name=field.name, kind=kind, default=default, nullable=nullable or default is None)


def step_params(cls: type) -> list[Param]:
    """The declared parameters of a step class, in field order."""
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # annotations that cannot be resolved: infer from defaults only
        hints = {}
    out = []
    for f in dataclasses.fields(cls):
        if not f.init or f.name.startswith("_"):
            continue
        decl = f.metadata.get(_KEY)
        if decl is None:
            out.append(_infer(f, hints))
            continue
        default = decl["default"]
        if default is not REQUIRED and f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        out.append(Param(name=f.name, **{**decl, "default": default}))
    return out


def is_declared(cls: type) -> bool:
    """True when every init field of ``cls`` is declared with :func:`param`."""
    return all(_KEY in f.metadata for f in dataclasses.fields(cls) if f.init and not f.name.startswith("_"))


def check_value(owner: str, p: Param, value: Any) -> Any:
    """Check one value against its declaration; return it normalised (lists become tuples)."""
    if value is None:
        if p.nullable or p.default is None:
            return None
        raise param_error(owner, p.name, p.rule(), value)
    k = p.kind
    if k == "int":
        return check_int(owner, p.name, value, min_value=None if p.low is None else math.ceil(p.low),
                         max_value=None if p.high is None else math.floor(p.high))
    if k == "float":
        return check_float(owner, p.name, value, low=p.low, high=p.high, low_open=p.low_open,
                           high_open=p.high_open)
    if k == "bool":
        return check_bool(owner, p.name, value)
    if k == "choice":
        return check_choice(owner, p.name, value, p.options())
    if k in ("str", "path", "column"):
        if not isinstance(value, str) or not value:
            raise param_error(owner, p.name, p.rule(), value)
        return value
    if k == "columns":
        # an empty list is accepted when the declared default is empty ("every column")
        allow_empty = p.empty_allowed()
        if isinstance(value, str):
            value = (value,)
        if not isinstance(value, Sequence) or not all(isinstance(v, str) and v for v in value):
            raise param_error(owner, p.name, p.rule(), value)
        try:
            return check_names(owner, p.name, value, allow_empty=allow_empty)
        except ParameterError:  # empty or repeated: the one rule of the declaration
            raise param_error(owner, p.name, p.rule(), value) from None
    if k in ("int_list", "float_list", "str_list"):
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
            raise param_error(owner, p.name, p.rule(), value)
        items = list(value)
        for v in items:
            ok = (isinstance(v, str) if k == "str_list" else
                  isinstance(v, numbers.Integral) and not isinstance(v, bool) if k == "int_list" else
                  isinstance(v, numbers.Real) and not isinstance(v, bool) and not math.isnan(v))
            if ok and k != "str_list":
                ok = (p.low is None or v >= p.low) and (p.high is None or v <= p.high)
            if not ok:
                raise param_error(owner, p.name, p.rule(), value)
        return tuple(items)
    if k == "mapping":
        if not isinstance(value, Mapping):
            raise param_error(owner, p.name, p.rule(), value)
        vp = p.value_param()
        if vp is not None:  # column -> value of the declared kind; the table is kept as given
            for key, v in value.items():
                if not isinstance(key, str) or not key or not _value_ok(vp, v):
                    raise param_error(owner, p.name, p.rule(), dict(value))
        return value
    if k == "variant":
        return build_variant(owner, p, value)
    return value


def check_params(instance: Any) -> None:
    """Validate (and normalise) every declared parameter of a step instance, in field order.

    Call it first in ``__post_init__``; raises :class:`~sdckit.errors.ParameterError` with the
    one template ("The 'k' parameter of LocalSuppression must be an int >= 2. Got 1.").
    Lists become tuples and column names a tuple; numbers are only checked (an int given for
    a float stays an int, so e.g. top coding keeps an integer column integer).
    """
    owner = type(instance).__name__
    for f in dataclasses.fields(instance):
        decl = f.metadata.get(_KEY)
        if decl is None:
            continue
        p = Param(name=f.name, **decl)
        value = getattr(instance, f.name)
        new = check_value(owner, p, value)
        if p.kind in ("int", "float") and new == value:
            continue  # a number is only checked: 50 stays 50 (top coding keeps an int column int)
        if new is not value:
            object.__setattr__(instance, f.name, new)


def defaults(cls: type) -> dict:
    """The declared defaults of a step (required parameters left out)."""
    return {p.name: p.default for p in step_params(cls) if not p.required}


def schema(cls: type) -> dict:
    """JSON-ready schema of a step: name, one-line summary, parameters, engines."""
    doc = (cls.__doc__ or "").strip().splitlines()
    return {"name": getattr(cls, "step_name", cls.__name__),
            "class": cls.__name__,
            "summary": doc[0] if doc else "",
            "params": [p.to_dict() for p in step_params(cls)],
            "engines": list(getattr(cls, "engines", ("memory",))),
            "dask_note": getattr(cls, "dask_note", None)}


def has_role(name: str, role: str, roles: Mapping[str, Any]) -> bool:
    """Whether column ``name`` holds ``role`` (a key of :data:`ROLES`) in a roles mapping as
    :attr:`sdckit.Microdata.roles` gives it (``{"key_vars": (...), "weight": "w", ...}``)."""
    held = roles.get(ROLES[role][0])
    if role == "pram" and name in tuple(roles.get("key_vars") or ()):
        return True
    return name == held if isinstance(held, str) else name in tuple(held or ())


def check_columns(instance: Any, columns: Sequence[str], roles: Mapping[str, Any], *,
                  where: str) -> None:
    """Check every ``column``/``columns`` parameter of a step against the data it will read:
    each named column exists and holds the role its declaration requires.

    ``where`` starts the one-line message ("step 2 (pram).variables: `occupation` is not a
    key variable; add it to [roles] key_vars"). Raises :class:`~sdckit.errors.InputError`.
    """
    from ._validation import close_names
    from .errors import InputError

    for p in step_params(type(instance)):
        if p.kind not in ("column", "columns"):
            continue
        value = getattr(instance, p.name, None)
        if value is None:
            continue
        for name in (value,) if isinstance(value, str) else tuple(value):
            if name not in columns:
                raise InputError(f"{where}.{p.name}: column `{name}` is not in the data; "
                                 f"{close_names(name, columns)}")
            if p.role is not None and not has_role(name, p.role, roles):
                _, what, fix = ROLES[p.role]
                raise InputError(f"{where}.{p.name}: `{name}` is not {what}; {fix}.")
