"""Exceptions of sdckit.

Every error the library raises on purpose derives from :class:`SDCError`, so callers (and the
command line) can tell a refused input from a bug. Messages name the file, column, value and
rule, and say what to do.
"""

from __future__ import annotations


class SDCError(Exception):
    """Base class of every error sdckit raises on purpose."""

    #: exit code the command line uses for this kind of error
    exit_code = 2


class InputError(SDCError, ValueError):
    """The input data or a parameter breaks a rule (bad file, column, value or setting)."""


class ParameterError(InputError):
    """A method parameter is outside its allowed range or of the wrong type.

    ``param``, ``rule`` and ``value`` are kept so a spec can restate the error at its key
    path (``steps[2].k: must be an int >= 2, got 1``).
    """

    def __init__(self, message: str, *, param: str | None = None, rule: str | None = None,
                 value: object = None) -> None:
        super().__init__(message)
        self.param, self.rule, self.value = param, rule, value


class SpecError(InputError):
    """A release or table spec is invalid; the message starts with the key path."""


class GateError(SDCError):
    """A release failed its gate: nothing was written."""

    exit_code = 3


class SolverError(SDCError):
    """An optimisation solver failed or returned an answer that did not pass its check."""

    exit_code = 4


class InputWarning(UserWarning):
    """Suspicious but usable input (e.g. a key with more categories than rows)."""
