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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ._validation import close_names
from .errors import ParameterError, SpecError
from .params import ROLES, check_params, is_declared, step_params

_STEPS: dict[str, type] = {}
_GATES: dict[str, type] = {}
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
        cls.step_name = name
        cls.engines = tuple(engines)
        cls.dask_note = dask_note
        return cls

    return deco


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
    (``k_anonymity = { k = 3 }``).

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

    def __post_init__(self) -> None:
        check_params(self)

    @property
    def threshold(self) -> Any:
        """The value of the first declared parameter (what the scalar spec form sets)."""
        return getattr(self, step_params(type(self))[0].name)

    def check(self, original: Any, released: Any, results: Any) -> GateOutcome:  # pragma: no cover
        raise NotImplementedError

    def plan_problem(self, steps: Any) -> str | None:
        """Why this check cannot check anything in a release of these steps (e.g. a PRAM
        threshold without a PRAM step), or None. A release refuses such a plan before any step
        runs: nothing is certified that was not checked."""
        return None

    @classmethod
    def from_value(cls, value: Any, *, where: str | None = None) -> "GateCheck":
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
        if not (dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen
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
    cls: type

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


def gate_check_class(name: str, *, where: str = "gate") -> type:
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


def published_recodes(results) -> list:
    """The global recodings among a run's step results, rebuilt as steps from their recorded
    parameters: what an intruder applies to what they know, since global recodings are
    published (a step class says so with ``global_recode = True``)."""
    steps = []
    for r in results:
        cls = _STEPS.get(getattr(r, "method", None)) if _discovered else None
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
