"""The release gate: thresholds checked on the released data before anything is written.

A gate is a set of typed threshold objects (``KAnonymity(k=3)``, ``MaxGlobalRisk(risk=0.04)``),
each a registered :class:`~sdckit.registry.GateCheck` whose thresholds are declared with
:func:`sdckit.params.param` and validated on construction; the method packages register
theirs in their ``steps`` modules (``k_anonymity`` in :mod:`sdckit.risk.steps`). The dict
and TOML forms build them: ``{"k_anonymity": 3}`` and ``[gate] k_anonymity = 3`` both give
``KAnonymity(k=3)``.

Nothing is certified that was not checked. A release needs at least one *risk threshold*:
every registered check counts except ``allow_identifiers`` (it runs on every release and
stops direct identifiers, but says nothing of the keys' risk) and ``min_diagonal`` (a
smallest keep probability of PRAM bounds how much is changed, a promise of utility). A
steward who releases without one writes why: ``[gate] none = "why"`` (in Python
``NoThreshold("why")`` or ``{"none": "why"}``); the verdict of the report, the certificate
and the workbench is then "NOT CHECKED: why", never "Passed".
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._validation import param_error
from .errors import SpecError
from .microdata import Microdata
from .params import ROLES, check_params, param
from .registry import GateCheck, GateOutcome, build_gate_check, discover, gate_check_class, known_gate_checks
from .result import StepResult
from .risk.steps import check_k_anonymity  # noqa: F401  (its former home)

__all__ = ["Gate", "GateCheck", "GateOutcome", "NoThreshold", "as_gate", "risk_gate_checks",
           "run_gate", "NO_THRESHOLD_HELP"]

#: what a release without a risk threshold is told to do
NO_THRESHOLD_HELP = ("add one to [gate], e.g. k_anonymity = 3 (in Python gate={'k_anonymity': 3}), "
                     "or write [gate] none = \"why\" to release without one")


@dataclass(frozen=True)
class NoThreshold:
    """No risk threshold, on purpose: the steward states why.

    The release is then written with the verdict "NOT CHECKED: <reason>" in its report, its
    certificate and the workbench. Other checks of the gate (``allow_identifiers``,
    ``min_diagonal``) still run and can still fail it.
    """

    reason: str = param(kind="str", label="why no risk threshold",
                        help="why this release has no risk threshold (shown in its verdict)")

    def __post_init__(self) -> None:
        if not isinstance(self.reason, str) or not self.reason.split():
            raise param_error("NoThreshold", "reason", "a non-empty text saying why", self.reason)
        check_params(self)
        object.__setattr__(self, "reason", " ".join(self.reason.split()))


def risk_gate_checks() -> list[str]:
    """The names of the registered checks that count as risk thresholds."""
    return [n for n in known_gate_checks() if gate_check_class(n).counts_as_risk]


class Gate(Mapping):
    """The validated gate of a release: its typed checks, or the stated reason for none.

    As a mapping it reads like the spec's ``[gate]`` table without ``none``: threshold name
    -> threshold value (``gate["k_anonymity"] == 3``). Built by :func:`as_gate` from a dict, a
    TOML table, a list of checks or a :class:`NoThreshold`.

    Parameters
    ----------
    checks : sequence of GateCheck
        At most one check of each name.
    none : NoThreshold, optional
        The stated reason for releasing without a risk threshold (refused together with one).
    """

    def __init__(self, checks: Sequence[GateCheck] = (), none: NoThreshold | None = None) -> None:
        seen: dict[str, GateCheck] = {}
        for c in checks:
            if not isinstance(c, GateCheck) or not getattr(type(c), "gate_name", ""):
                raise param_error("Gate", "checks", "a list of registered gate checks "
                                  "(e.g. KAnonymity(k=3))", c)
            if c.gate_name in seen:
                raise SpecError(f"gate.{c.gate_name}: given twice ({seen[c.gate_name]!r} and {c!r}); "
                                "keep one")
            seen[c.gate_name] = c
        if none is not None and not isinstance(none, NoThreshold):
            raise param_error("Gate", "none", "a NoThreshold('why')", none)
        risk = [n for n, c in seen.items() if c.counts_as_risk]
        if none is not None and risk:
            raise SpecError(f"gate.none: the gate has the risk threshold(s) {', '.join(risk)}, so "
                            "nothing is left unchecked; remove none (or the thresholds)")
        self.checks: tuple[GateCheck, ...] = tuple(seen.values())
        self.none = none

    # ---------------------------------------------------------------- the mapping view
    def __getitem__(self, name: str) -> Any:
        for c in self.checks:
            if c.gate_name == name:
                return c.threshold
        raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        return iter([c.gate_name for c in self.checks])

    def __len__(self) -> int:
        return len(self.checks)

    def __repr__(self) -> str:
        parts = [repr(c) for c in self.checks] + ([repr(self.none)] if self.none else [])
        return f"Gate({', '.join(parts)})"

    # ---------------------------------------------------------------- what it holds
    @property
    def risk_checks(self) -> tuple[GateCheck, ...]:
        """The checks that count as risk thresholds."""
        return tuple(c for c in self.checks if c.counts_as_risk)

    @property
    def not_checked(self) -> str | None:
        """The stated reason when the release has no risk threshold on purpose, else None."""
        return None if self.none is None else self.none.reason

    def require_threshold(self) -> None:
        """Refuse a gate with no risk threshold and no stated reason (one line)."""
        if not self.risk_checks and self.none is None:
            others = [c.gate_name for c in self.checks]
            has = f" ({', '.join(others)} {'is' if len(others) == 1 else 'are'} not)" if others else ""
            raise SpecError(f"gate: the release has no risk threshold{has}: {NO_THRESHOLD_HELP}")

    def check_roles(self, microdata: Microdata) -> None:
        """Refuse a check whose declared roles the data do not hold, before any step runs."""
        for c in self.checks:
            for role in type(c).requires_roles:
                attr, what, fix = ROLES[role]
                held = getattr(microdata, attr)
                if not held:
                    raise SpecError(f"gate.{c.gate_name}: the data have no {role} variable "
                                    f"({what} is needed); {fix}, or remove the {c.gate_name} threshold")

    def check_plan(self, steps: Sequence[Any]) -> None:
        """Refuse a check that would have nothing to check in a release of ``steps`` (one
        line, before any step runs): a vacuous pass certifies nothing."""
        for c in self.checks:
            why = c.plan_problem(tuple(steps))
            if why:
                raise SpecError(f"gate.{c.gate_name}: {why}")

    def to_dict(self) -> dict:
        """The spec's ``[gate]`` table (TOML-ready: ``none`` included when set)."""
        out = {c.gate_name: c.to_value() for c in self.checks}
        if self.none is not None:
            out["none"] = self.none.reason
        return out

    def run(self, original: Microdata, released: Microdata,
            results: Sequence[StepResult]) -> list[GateOutcome]:
        """Check every threshold on the released data; the identifier check
        (``allow_identifiers``) runs on every release, with no column allowed unless the gate
        names some. Returns every outcome (the caller refuses to write on a failure)."""
        checks = list(self.checks)
        if not any(c.gate_name == "allow_identifiers" for c in checks):
            checks.insert(0, build_gate_check("allow_identifiers", ()))
        return [c.check(original, released, results) for c in checks]


def as_gate(gate: Any, *, where: str | None = None) -> Gate:
    """A :class:`Gate` from any of its forms, validated.

    ``None`` (no gate yet), a :class:`Gate`, a :class:`NoThreshold`, one registered check,
    a list of checks (and at most one NoThreshold), or a mapping ``{name: value}`` where the
    value is the threshold, a table of the check's parameters or a check instance, and
    ``"none"`` maps to the reason text. With ``where`` (a spec's key path) a bad value is a
    SpecError at that path; without it the check's own ParameterError (the one template).
    Unknown names are a SpecError naming the closest ones.
    """
    discover()
    if gate is None:
        return Gate()
    if isinstance(gate, Gate):
        return gate
    if isinstance(gate, NoThreshold):
        return Gate((), gate)
    if isinstance(gate, GateCheck):
        return Gate((gate,))
    if isinstance(gate, Mapping):
        checks, none = [], None
        for name, value in gate.items():
            if name == "none":
                none = _no_threshold(value, where)
            else:
                checks.append(build_gate_check(name, value, where=where))
        return Gate(checks, none)
    if isinstance(gate, Sequence) and not isinstance(gate, (str, bytes)):
        checks, nones = [], []
        for item in gate:
            (nones if isinstance(item, NoThreshold) else checks).append(item)
        if len(nones) > 1:
            raise SpecError("gate: more than one NoThreshold; state one reason")
        return Gate(checks, nones[0] if nones else None)
    raise param_error("Release", "gate", "a dict of thresholds (e.g. {'k_anonymity': 3}), a list "
                      "of gate checks or NoThreshold('why')", gate)


def _no_threshold(value: Any, where: str | None) -> NoThreshold:
    if isinstance(value, NoThreshold):
        return value
    try:
        return NoThreshold(value)
    except Exception as exc:  # ParameterError from the declaration
        if where is None:
            raise
        raise SpecError(f"{where}.none: must be a non-empty text saying why the release has no "
                        f"risk threshold, got {value!r}") from exc


def run_gate(thresholds: Any, original: Microdata, released: Microdata,
             results: Sequence[StepResult]) -> list[GateOutcome]:
    """Check every threshold of a gate (any form :func:`as_gate` takes); returns all outcomes
    (the caller refuses to write on a failure). The identifier check runs on every release."""
    return as_gate(thresholds).run(original, released, results)


def _check_classes() -> dict[str, type]:
    """Every registered gate check class by its class name (``KAnonymity``, ``MinDiagonal``, ...)."""
    return {gate_check_class(n).__name__: gate_check_class(n) for n in known_gate_checks()}


def __getattr__(name: str) -> Any:
    """``sdckit.gate.<Check>``: every registered gate check class, loaded on first use (the
    method packages register theirs in their ``steps`` modules)."""
    if name.startswith("__"):
        raise AttributeError(name)
    found = _check_classes().get(name)
    if found is None:
        raise AttributeError(f"module 'sdckit.gate' has no attribute {name!r}")
    globals()[name] = found  # resolved once
    return found


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_check_classes()))
