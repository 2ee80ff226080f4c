"""What every masking step returns: the new Microdata plus the evidence of what was done.

A method is a frozen dataclass of settings; ``apply(microdata, *, rng=None)`` returns a
:class:`StepResult` (or a subclass holding more evidence). Guarantees are data: each
:class:`Guarantee` states a promise and whether an independent checker found it to hold.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ._random import SeedRecord

if TYPE_CHECKING:  # an annotation only: a table command need not import pandas
    from .microdata import Microdata


@dataclass(frozen=True)
class Guarantee:
    """A stated promise of a method and the independent check of it on the output.

    ``name`` is a short key (``"min_group_size"``), ``statement`` the promise in words,
    ``value`` what the checker measured, ``holds`` whether the promise is met.
    """

    name: str
    statement: str
    value: Any
    holds: bool

    def to_dict(self) -> dict:
        return {"name": self.name, "statement": self.statement, "value": _jsonable(self.value),
                "holds": bool(self.holds)}


def public_params(params: Any) -> Any:
    """Parameters as a public output may show them: a file parameter (``file``, ``*_file``, or
    an absolute path) by its file name only, never a path of the steward's machine."""
    import os

    if isinstance(params, dict):
        return {k: (os.path.basename(v) if isinstance(v, str) and (k == "file" or str(k).endswith("_file")
                                                                    or os.path.isabs(v)) else public_params(v))
                for k, v in params.items()}
    if isinstance(params, list):
        return [os.path.basename(v) if isinstance(v, str) and os.path.isabs(v) else public_params(v) for v in params]
    return params


def _jsonable(value: Any) -> Any:
    """Plain JSON types for numpy scalars, arrays, tuples and nested containers."""
    import numpy as np

    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, float) and value != value:
        return None
    return value


jsonable = _jsonable


@dataclass(frozen=True)
class StepResult:
    """Result of one step of a release.

    Attributes
    ----------
    method : str
        Registered step name (``"pram"``, ``"recode"``, ...).
    microdata : Microdata
        The data after the step.
    params : dict
        The step's settings (public: no seeds).
    summary : dict
        Public figures of the step's effect (values changed, SSE, ...).
    guarantees : tuple of Guarantee
        What the step promises, each checked on the output.
    seed : SeedRecord or None
        Where the step's randomness came from: internal report only.
    artifacts : dict
        Files to publish next to the data, name -> text (e.g. a PRAM matrix as CSV).
    """

    method: str
    microdata: Microdata
    params: dict = field(default_factory=dict)
    summary: dict = field(default_factory=dict)
    guarantees: tuple[Guarantee, ...] = ()
    seed: SeedRecord | None = None
    artifacts: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """Public description (no seed, and file parameters by their names only)."""
        return {"method": self.method, "params": public_params(_jsonable(self.params)),
                "summary": _jsonable(self.summary),
                "guarantees": [g.to_dict() for g in self.guarantees],
                "artifacts": sorted(self.artifacts)}

    def describe(self) -> str:
        lines = [f"{self.method}: " + ", ".join(f"{k}={v!r}" for k, v in self.params.items())]
        for k, v in self.summary.items():
            lines.append(f"  {k}: {v}")
        for g in self.guarantees:
            lines.append(f"  [{'ok' if g.holds else 'FAILED'}] {g.statement} (measured: {g.value})")
        return "\n".join(lines)

    def internal_report_html(self) -> str:
        """HTML for the internal report only (e.g. which original records an operational risk
        check tracked); empty by default. It is added after :meth:`report_html` there."""
        return ""

    def report_html(self) -> str:
        """Public HTML fragment for the release report; subclasses add plots and tables."""
        rows = "".join(f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(_fmt(v))}</td></tr>"
                       for k, v in self.summary.items())
        g = "".join(f"<li class='{'ok' if x.holds else 'fail'}'>{html.escape(x.statement)}: "
                    f"{html.escape(_fmt(x.value))} — {'holds' if x.holds else 'FAILS'}</li>"
                    for x in self.guarantees)
        params = html.escape(json.dumps(_jsonable(self.params)))
        return (f"<p><code>{params}</code></p>"
                + (f"<table class='kv'>{rows}</table>" if rows else "")
                + (f"<ul class='guarantees'>{g}</ul>" if g else ""))


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, (dict, list, tuple)):
        return json.dumps(_jsonable(v))
    return str(v)
