"""Registries of release-spec step types and gate checks.

A step type is a frozen dataclass with ``apply(microdata, *, rng=None) -> StepResult``,
registered with :func:`register_step`. A gate check is a frozen dataclass deriving from
:class:`GateCheck` (``KAnonymity(k=3)``), registered with :func:`register_gate_check`.
Subpackages put their registrations in a module named ``steps`` or ``steps_<topic>``
(``sdckit/pram/steps.py``, ``sdckit/masking/steps.py``, ...): :func:`discover` imports every
such module, so a new method needs no edit outside its own package.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ._validation import close_names
from .errors import ParameterError, SpecError
from .params import ROLES, check_params, is_declared, step_params

_STEPS: dict[str, type] = {}
_GATES: dict[str, type[GateCheck]] = {}
_discovered = False


def register_step(name: str, *, engines: tuple[str, ...] = ("memory",),
                  dask_note: str | None = None) -> Callable[[type], type]:
    """Class decorator: make a method available as ``method = "<name>"`` in a release spec.

    ``engines`` says where the step runs ("memory", "dask"); a step that does not run on the
    Dask engine says why in ``dask_note`` (the engine's refusal message is made from it).
    Parameters are declared on the dataclass with :func:`sdckit.params.param`.
    """

    def deco(cls: type) -> type:
        if not dataclasses.is_dataclass(cls):
            raise TypeError(f"step {name!r}: {cls.__name__} must be a dataclass")
        if name in _STEPS and _STEPS[name] is not cls:
            raise TypeError(f"step {name!r} registered twice ({_STEPS[name].__name__}, {cls.__name__})")
        _STEPS[name] = cls
        step: Any = cls  # the class gains attributes no type checker can see
        step.step_name = name
        step.engines = tuple(engines)
        step.dask_note = dask_note
        return cls

    return deco


@dataclass(frozen=True)
class DaskPlan:
    """How a step runs on the Dask engine: what a step claiming ``engines=(..., "dask")``
    returns from its ``dask_plan(roles)`` (``roles``: the spec's ``[roles]`` table).

    The step declares its plan; the engine (:mod:`sdckit.engine`, which nothing below it
    imports) runs it. ``kernel`` names the engine's partitioned form that runs the step with
    the step's own child stream:

    * ``"pram"``, ``"noise"``: statistics merged exactly over partitions, a small fitted plan,
      then a transform of each partition by its global rows (the same draws as in memory);
    * ``"rank_swap"``, ``"microaggregation"``: the method within blocks of values;
    * ``"groups"``: the step's own ``apply`` within each group of ``group_by``;
    * ``"rows"``: row by row (the step's own ``apply`` on the column's distinct values or on
      each partition).

    ``reads`` and ``writes`` are the columns the step reads and writes, from its declared
    column parameters and the roles: the engine fits steps whose inputs no earlier step
    writes in one pass over the input.
    """

    kernel: str
    reads: tuple[str, ...]
    writes: tuple[str, ...]
    group_by: str | None = None


def role_columns(roles: Mapping[str, Any]) -> tuple[str, ...]:
    """Every column named by a ``[roles]`` table, in order, once."""
    out: list[str] = []
    for v in roles.values():
        out += [v] if isinstance(v, str) else list(v or ())
    return tuple(dict.fromkeys(out))


def dask_takes_only(step: Any, allowed: tuple[str, ...]) -> None:
    """Refuse (one-line SpecError at the parameter) a declared parameter outside ``allowed``
    set to other than its default: the Dask engine's form of the step does not take it."""
    for p in step_params(type(step)):
        if p.name not in allowed and not p.required and getattr(step, p.name) != p.default:
            raise SpecError(f"{p.name}: {type(step).step_name} on the Dask engine does not take {p.name!r} "
                            f"(it takes {', '.join(sorted(allowed))}); run this step with the in-memory engine.")


@dataclass(frozen=True)
class GateOutcome:
    """One gate threshold checked on the release: ``passed`` and by how much."""

    name: str
    threshold: Any
    value: Any
    passed: bool
    detail: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "passed", bool(self.passed))  # a numpy bool reads as a bool

    def to_dict(self) -> dict:
        from .result import jsonable
        return jsonable({"name": self.name, "threshold": self.threshold, "value": self.value,
                         "passed": self.passed, "detail": self.detail})


class GateCheck:
    """Base of the gate check types: a frozen dataclass of declared thresholds.

    A gate check is a typed object (ARX's ``KAnonymity(5)``): its thresholds are dataclass
    fields declared with :func:`sdckit.params.param` (type, range, unit, label, symbol, help),
    validated on construction with the one parameter-error template, and registered by name
    with :func:`register_gate_check`. ``check(original, released, results)`` measures the
    released data and returns a :class:`GateOutcome`.

    The first declared parameter is the *threshold*: the spec's scalar form sets it
    (``[gate] k_anonymity = 3`` builds ``KAnonymity(k=3)``); the table form sets any of them
    (``k_anonymity = { k = 3 }``). Parameters shared by several checks may come from a declared
    base class when they are keyword-only (the base decorated ``@dataclass(frozen=True,
    kw_only=True)``): :func:`register_gate_check` lists keyword-only parameters after the
    others, so the subclass's threshold stays first.

    Class attributes set by :func:`register_gate_check`: ``gate_name``, ``counts_as_risk``
    (whether it is a risk threshold; a release needs at least one), ``requires_roles`` (roles
    the data must hold before any step runs), ``engines`` and ``description`` (the docstring's
    first line).
    """

    gate_name: ClassVar[str] = ""
    counts_as_risk: ClassVar[bool] = True
    requires_roles: ClassVar[tuple[str, ...]] = ()
    engines: ClassVar[tuple[str, ...]] = ("memory",)
    description: ClassVar[str] = ""

    if TYPE_CHECKING:  # the subclasses are dataclasses: their __init__ takes the declared parameters
        def __init__(self, *args: Any, **kwargs: Any) -> None: ...

    def __post_init__(self) -> None:
        check_params(self)

    @property
    def threshold(self) -> Any:
        """The value of the first declared parameter (what the scalar spec form sets)."""
        return getattr(self, step_params(type(self))[0].name)

    def check(self, original: Any, released: Any, results: Any) -> GateOutcome:  # pragma: no cover
        raise NotImplementedError

    #: the Dask engine's protocol: the summary, merged over partitions, that :meth:`finish`
    #: reads ("frequencies": the released keys' combination table; "pram_matrices": the
    #: fitted PRAM matrices), or None when the check does not run on the Dask engine
    dask_summary: ClassVar[str | None] = None

    def finish(self, summary: Any) -> GateOutcome:  # pragma: no cover
        """The outcome from the engine's merged :attr:`dask_summary` (the partitioned form of
        :meth:`check`)."""
        raise NotImplementedError

    def plan_problem(self, steps: Any) -> str | None:
        """Why this check cannot check anything in a release of these steps (e.g. a PRAM
        threshold without a PRAM step), or None. A release refuses such a plan before any step
        runs: nothing is certified that was not checked."""
        return None

    @classmethod
    def from_value(cls, value: Any, *, where: str | None = None) -> GateCheck:
        """Build the check from its spec form: an instance, a table of its parameters, or the
        threshold alone. Raises ParameterError (the one template) for a bad value and
        SpecError for an unknown parameter of the table form (at ``where`` when given)."""
        if isinstance(value, cls):
            return value
        params = step_params(cls)
        if isinstance(value, Mapping) and params[0].kind != "mapping":
            names = [p.name for p in params]
            for key in value:
                if key not in names:
                    at = f"{where or 'gate.' + cls.gate_name}.{key}"
                    raise SpecError(f"{at}: unknown parameter of the gate threshold {cls.gate_name!r}; "
                                    f"the valid ones are {', '.join(names)} ({close_names(str(key), names)})")
            return cls(**value)
        if isinstance(value, GateCheck):
            raise ParameterError(f"The {cls.gate_name!r} gate threshold must be a {cls.__name__} or "
                                 f"its value. Got {type(value).__name__}.", param=params[0].name,
                                 rule=params[0].rule(), value=value)
        return cls(value)

    def to_value(self) -> Any:
        """The spec form: the threshold alone when every other parameter has its default,
        else a table of the threshold and the parameters set otherwise (lists for tuples)."""
        params = step_params(type(self))

        def plain(v: Any) -> Any:
            return [plain(x) for x in v] if isinstance(v, (tuple, list)) else v

        changed = [p for p in params[1:] if p.required or getattr(self, p.name) != p.default]
        if not changed:
            return plain(self.threshold)
        return {p.name: plain(getattr(self, p.name)) for p in [params[0], *changed]}

    def describe(self) -> str:
        """One line: the gate name, its threshold and what it checks."""
        return f"{self.gate_name} = {self.to_value()!r}: {self.description}"

    #: the measured figures of :meth:`check` in words: key -> (label, unit); a unit "share"
    #: is shown as a percentage, "percent" is a value already in percent; a key without an
    #: entry reads as its name in words
    measured_labels: ClassVar[Mapping[str, tuple[str, str | None]]] = {}

    @classmethod
    def measured_sentence(cls, measured: Any) -> str:
        """The measured value of :meth:`check` as a sentence for a person ("k reached: 3;
        records below k: 0"), built from :attr:`measured_labels`; never JSON. A check whose
        measured value reads poorly this way overrides it."""
        return measured_words(measured, cls.measured_labels)


def _number_words(value: Any, unit: str | None) -> str:
    """One figure in words with its unit: shares as percentages, counts with separators."""
    import math

    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return "yes" if value else "no"
    if value is None:
        return "not measured"
    if isinstance(value, str):
        return value
    try:
        x = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(x):
        return "not measured"
    if unit == "share":
        return f"{x:.2%}"
    if unit == "percent":
        return f"{x:.4g}%"
    if x.is_integer() and abs(x) < 1e15 and (unit == "records" or "int" in type(value).__name__):
        text = f"{int(x):,}"
    elif x != 0 and (abs(x) < 1e-3 or abs(x) >= 1e6):
        text = f"{x:.3g}"
    else:
        text = f"{x:.4g}"
    return f"{text} {unit}" if unit and unit not in ("records", "probability") else text


def measured_words(measured: Any, labels: Mapping[str, tuple[str, str | None]] | None = None) -> str:
    """A measured value of any shape as plain words: ``label: value`` pairs joined by "; ",
    labelled keys first in their declared order; a nested table per variable reads
    "variable: ..."; lists as comma lists. Never braces or quotes of JSON."""
    labels = labels or {}
    if measured is None:
        return "not applicable"
    if isinstance(measured, Mapping):
        if not measured:
            return "nothing measured"
        keys = [k for k in labels if k in measured] + [k for k in measured if k not in labels]
        parts = []
        for k in keys:
            v = measured[k]
            label, unit = labels.get(k, (str(k).replace("_", " "), None))
            if isinstance(v, Mapping):
                inner = measured_words(v, labels)
                parts.append(f"{k if k not in labels else label} ({inner})")
            else:
                text = measured_words(v, labels) if isinstance(v, (list, tuple)) else _number_words(v, unit)
                parts.append(f"{label}: {text}")
        return "; ".join(parts)
    if isinstance(measured, (list, tuple)):
        if not measured:
            return "none"
        items = []
        for x in measured:
            if isinstance(x, Mapping):
                items.append(str(x.get("column", x.get("name", measured_words(x, labels)))))
            else:
                items.append(_number_words(x, None))
        return ", ".join(items)
    return _number_words(measured, None)


def register_gate_check(name: str, *, risk: bool = True, requires: tuple[str, ...] = (),
                        engines: tuple[str, ...] = ("memory",),
                        description: str | None = None) -> Callable[[type], type]:
    """Class decorator: make a gate check usable as ``[gate] <name> = ...``.

    The class is a frozen dataclass deriving from :class:`GateCheck` whose parameters are
    declared with :func:`sdckit.params.param` (the first is the threshold). ``risk`` says
    whether it counts as a risk threshold (a release needs at least one, or a stated reason
    for none); ``requires`` names roles the data must hold (``"sensitive"``, ``"numeric"``,
    ``"weight"``: checked before any step runs); ``engines`` where it is checked ("memory",
    "dask"); ``description`` the one line the docs and forms show (default: the docstring's
    first line).
    """

    def deco(cls: type) -> type:
        if not (dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
                and issubclass(cls, GateCheck)):
            raise TypeError(f"gate check {name!r}: {cls.__name__} must be a frozen dataclass "
                            "deriving from GateCheck")
        if not step_params(cls) or not is_declared(cls):
            raise TypeError(f"gate check {name!r}: declare every parameter of {cls.__name__} with param()")
        if name in _GATES and _GATES[name] is not cls:
            raise TypeError(f"gate check {name!r} registered twice ({_GATES[name].__name__}, {cls.__name__})")
        for role in requires:
            if role not in ROLES:
                raise TypeError(f"gate check {name!r}: unknown role {role!r} (one of {tuple(ROLES)})")
        # threshold-first: keyword-only parameters (a shared base's) after the others, so the
        # first declared parameter is the subclass's threshold (the order __init__ takes too)
        fields = cls.__dataclass_fields__
        cls.__dataclass_fields__ = dict(sorted(fields.items(), key=lambda kv: kv[1].kw_only is True))
        doc = (cls.__doc__ or "").strip().splitlines()
        cls.gate_name = name
        cls.counts_as_risk = bool(risk)
        cls.requires_roles = tuple(requires)
        cls.engines = tuple(engines)
        text = description
        if text is None:  # the docstring's first line, as a phrase ("every record's ...")
            text = doc[0].rstrip(".") if doc else name
            if text[:2].istitle():
                text = text[0].lower() + text[1:]
        cls.description = text
        _GATES[name] = cls
        return cls

    return deco


@dataclass(frozen=True)
class GateEntry:
    """A registered gate check seen by name (what :func:`gate_check` returns).

    ``validate(value)`` builds the check from its spec value and returns the normalised
    threshold; ``check(original, released, results, threshold)`` builds and runs it. Both go
    through the check's own constructor.
    """

    name: str
    cls: type[GateCheck]

    @property
    def description(self) -> str:
        return self.cls.description

    @property
    def counts_as_risk(self) -> bool:
        return self.cls.counts_as_risk

    def build(self, value: Any) -> GateCheck:
        return self.cls.from_value(value)

    def validate(self, value: Any) -> Any:
        return self.build(value).threshold

    def check(self, original: Any, released: Any, results: Any, threshold: Any) -> GateOutcome:
        return self.build(threshold).check(original, released, results)


def discover() -> None:
    """Import every ``sdckit.<subpackage>.steps`` module (they register themselves)."""
    global _discovered
    if _discovered:
        return
    # found on disk, so only the steps modules are imported (not every subpackage)
    root, here = __name__.rpartition(".")[0], Path(__file__).parent
    for pkg in pkgutil.iter_modules([str(here)]):
        if not pkg.ispkg:
            continue
        for mod in pkgutil.iter_modules([str(here / pkg.name)]):
            if mod.name == "steps" or mod.name.startswith("steps_"):
                importlib.import_module(f"{root}.{pkg.name}.{mod.name}")
    _discovered = True


def known_steps() -> list[str]:
    discover()
    return sorted(_STEPS)


def known_gate_checks() -> list[str]:
    discover()
    return sorted(_GATES)


def step_class(name: str, *, where: str = "method") -> type:
    discover()
    if name not in _STEPS:
        raise SpecError(f"{where}: unknown step method {name!r}; the known methods are "
                        f"{', '.join(sorted(_STEPS))}")
    return _STEPS[name]


def gate_check_class(name: str, *, where: str = "gate") -> type[GateCheck]:
    """The registered gate check class called ``name``; an unknown name is a one-line
    SpecError with the closest names."""
    discover()
    if not isinstance(name, str) or name not in _GATES:
        raise SpecError(f"{where}.{name}: unknown gate threshold ({close_names(str(name), _GATES)}); "
                        f"the known ones are {', '.join(sorted(_GATES))}, or none = \"why\"")
    return _GATES[name]


def gate_check(name: str, *, where: str = "gate") -> GateEntry:
    """The registered gate check ``name`` (see :class:`GateEntry`)."""
    return GateEntry(name, gate_check_class(name, where=where))


def build_gate_check(name: str, value: Any, *, where: str | None = None) -> GateCheck:
    """Gate check ``name`` built from its spec value (``3``, ``{k = 3}`` or an instance).

    Without ``where`` a bad value raises the ParameterError of the check's constructor (the
    one template: "The 'k' parameter of KAnonymity must be an int >= 2. Got -2."); with
    ``where`` (a spec's key path, e.g. ``"gate"``) the error is restated there:
    ``gate.k_anonymity: must be an int >= 2, got -2``.
    """
    cls = gate_check_class(name, where=where or "gate")
    at = f"{where}.{name}" if where else None
    try:
        return cls.from_value(value, where=at)
    except ParameterError as exc:
        if at is None:
            raise
        key = at if not isinstance(value, Mapping) or exc.param is None else f"{at}.{exc.param}"
        shown = value if not isinstance(value, Mapping) else exc.value
        raise SpecError(f"{key}: must be {exc.rule}, got {shown!r}") from None
    except TypeError as exc:  # a required parameter missing from the table form
        raise SpecError(f"{at or 'gate.' + name}: {exc}") from None


def build_step(name: str, params: dict[str, Any], *, where: str = "step") -> Any:
    """Create step ``name`` from spec parameters, with errors at the spec's key path."""
    cls = step_class(name, where=f"{where}.method")
    fields = {f.name for f in dataclasses.fields(cls) if f.init}
    for key in params:
        if key not in fields:
            raise SpecError(f"{where}.{key}: unknown parameter of step {name!r}; the valid ones are "
                            f"{', '.join(sorted(fields))}")
    for p in step_params(cls):  # the declarations say which parameters are required
        if p.required and p.name not in params:
            raise SpecError(f"{where}.{p.name}: step {name!r} needs this parameter ({p.help}); "
                            f"it must be {p.rule()}")
    try:
        return cls(**params)
    except ParameterError as exc:
        if exc.param is not None:
            raise SpecError(f"{where}.{exc.param}: must be {exc.rule}, got {exc.value!r}") from None
        raise SpecError(f"{where}: {exc}") from None
    except TypeError as exc:  # a required parameter is missing
        raise SpecError(f"{where}: {exc}") from None


def published_recodes(results: Iterable[Any]) -> list[Any]:
    """The global recodings among a run's step results, rebuilt as steps from their recorded
    parameters: what an intruder applies to what they know, since global recodings are
    published (a step class says so with ``global_recode = True``). A result may carry its
    recoding itself (``published_recoding``, e.g. a generalisation's levels, whose hierarchy
    files are not among its public parameters); that object is used as it is."""
    steps = []
    for r in results:
        published = getattr(r, "published_recoding", None)
        if published is not None:  # a step whose recoding needs more than its public parameters
            steps.append(published)
            continue
        cls = _STEPS.get(str(getattr(r, "method", ""))) if _discovered else None
        if cls is None:
            try:
                cls = step_class(r.method)
            except SpecError:
                continue
        if not getattr(cls, "global_recode", False):
            continue
        try:
            steps.append(build_step(r.method, dict(r.params)))
        except (SpecError, ParameterError):
            continue
    return steps
