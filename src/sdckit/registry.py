"""Registries of release-spec step types and gate checks.

A step type is a frozen dataclass with ``apply(microdata, *, rng=None) -> StepResult``,
registered with :func:`register_step`. A gate check is a function registered with
:func:`register_gate_check`. Subpackages put their registrations in a module named
``steps`` or ``steps_<topic>`` (``sdckit/pram/steps.py``, ``sdckit/masking/steps.py``, ...):
:func:`discover` imports every such module, so a new method needs no edit outside its own package.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._validation import close_names
from .errors import ParameterError, SpecError
from .params import step_params

_STEPS: dict[str, type] = {}
_GATES: dict[str, "GateCheck"] = {}
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

    def to_dict(self) -> dict:
        from .result import jsonable
        return jsonable({"name": self.name, "threshold": self.threshold, "value": self.value,
                         "passed": self.passed, "detail": self.detail})


@dataclass(frozen=True)
class GateCheck:
    """A gate threshold type: ``check(original, released, results, threshold) -> GateOutcome``.

    ``validate(threshold)`` raises ParameterError for a bad threshold value.
    """

    name: str
    check: Callable[..., GateOutcome]
    validate: Callable[[Any], Any]
    description: str


def register_gate_check(name: str, validate: Callable[[Any], Any], description: str):
    """Function decorator: register a gate threshold usable as ``[gate] <name> = ...``."""

    def deco(fn: Callable[..., GateOutcome]):
        _GATES[name] = GateCheck(name, fn, validate, description)
        return fn

    return deco


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


def gate_check(name: str, *, where: str = "gate") -> GateCheck:
    discover()
    if name not in _GATES:
        raise SpecError(f"{where}.{name}: unknown gate threshold; the known ones are "
                        f"{', '.join(sorted(_GATES))} ({close_names(name, _GATES)})")
    return _GATES[name]


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
