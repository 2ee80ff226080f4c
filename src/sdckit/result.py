"""What every masking step returns: the new Microdata plus the evidence of what was done.

A method is a frozen dataclass of settings; ``apply(microdata, *, rng=None)`` returns a
:class:`StepResult` (or a subclass holding more evidence). Guarantees are data: each
:class:`Guarantee` states a promise and whether an independent checker found it to hold.
"""

from __future__ import annotations

import dataclasses
import html
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

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


class ResultDisplay:
    """Mixin of every result: a short ``repr``, HTML in notebooks, ``describe()`` and ``to_dict()``.

    Like SciPy's result objects (``scipy/_lib/_util.py`` ``_RichResult``) and scikit-learn's
    ``_repr_html_``: a result reads by its headline figures, never by a dump of its frames.

    ``_headline`` names the attributes (fields or properties) shown first, in order; without
    it the scalar fields are shown (and, for a result with a ``summary`` dict, its scalar
    figures). A subclass keeps its own ``__repr__``, ``describe`` or ``to_dict`` when it
    defines one; the mixin's ``__repr__`` is set on every dataclass subclass (the
    ``@dataclass`` decorator leaves a ``__repr__`` the class already has). Seeds are secrets:
    no field holding a :class:`~sdckit._random.SeedRecord` (nor one called ``seed`` or
    ``seeds``) is shown or exported.
    """

    _headline: ClassVar[tuple[str, ...]] = ()
    #: the most figures the repr and the headline show
    _max_headline: ClassVar[int] = 6

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__repr__" not in cls.__dict__:
            cls.__repr__ = ResultDisplay.__repr__  # type: ignore[method-assign]

    def headline(self) -> dict[str, Any]:
        """The headline figures, name -> value, in order."""
        if self._headline:
            return {name: getattr(self, name) for name in self._headline}
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self) if dataclasses.is_dataclass(self) else ():
            if f.name.startswith("_") or not _public_field(f.name, getattr(self, f.name)):
                continue
            value = getattr(self, f.name)
            if _is_scalar(value):
                out[f.name] = value
        for name in dir(type(self)):  # counts a class states as properties (n_suppressed, ...)
            if name.startswith("n_") and isinstance(getattr(type(self), name), property) and name not in out:
                value = getattr(self, name)
                if _is_scalar(value):
                    out[name] = value
        summary = getattr(self, "summary", None)
        if isinstance(summary, dict):
            for k, v in summary.items():
                if _is_scalar(v) and str(k) not in out:
                    out[str(k)] = v
        guarantees = _guarantees(self)
        if guarantees:
            out = dict(list(out.items())[: self._max_headline - 1])
            out["guarantees_held"] = f"{sum(bool(g.holds) for g in guarantees)}/{len(guarantees)}"
        return dict(list(out.items())[: self._max_headline])

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={_short(v)}" for k, v in self.headline().items())
        text = f"<{type(self).__name__}" + (f" {shown}" if shown else "") + ">"
        return text if len(text) <= 240 else text[:236] + "...>"

    def describe(self) -> dict:
        """The headline figures as a plain dict (JSON-ready)."""
        return jsonable({k: (v if _is_scalar(v) else _short(v)) for k, v in self.headline().items()})

    def to_dict(self) -> dict:
        """Every public field, JSON-ready: frames and arrays as records or lists when small,
        else by their size; no seed."""
        if not dataclasses.is_dataclass(self):
            return self.describe()
        return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)
                if not f.name.startswith("_") and _public_field(f.name, getattr(self, f.name))}

    def _repr_html_(self) -> str:
        """A small HTML fragment for notebooks: the headline figures in words, the guarantees
        as the report states them, and a short table; every text escaped."""
        rows = "".join(f"<tr><th>{html.escape(_words(k))}</th><td>{html.escape(_short(v, 60))}</td></tr>"
                       for k, v in self.headline().items())
        parts = [f"<div class='sdckit-result'><p><strong>{html.escape(type(self).__name__)}</strong></p>",
                 f"<table class='kv'>{rows}</table>" if rows else ""]
        guarantees = _guarantees(self)
        if guarantees:
            items = "".join(f"<li class='{'ok' if g.holds else 'fail'}'>{html.escape(g.statement)}: "
                            f"{html.escape(_short(g.value, 40))} — {'holds' if g.holds else 'FAILS'}</li>"
                            for g in guarantees[:8])
            parts.append(f"<ul class='guarantees'>{items}</ul>")
        table = self._short_table()
        if table:
            parts.append(table)
        parts.append("</div>")
        return "".join(parts)

    def _short_table(self) -> str:
        """The first rows of the first table-like field (a DataFrame), escaped."""
        for f in dataclasses.fields(self) if dataclasses.is_dataclass(self) else ():
            value = getattr(self, f.name)
            if type(value).__name__ == "DataFrame" and _public_field(f.name, value):
                head = value.head(5)
                cols = "".join(f"<th>{html.escape(str(c))}</th>" for c in head.columns[:8])
                body = "".join("<tr>" + "".join(f"<td>{html.escape(_short(x, 20))}</td>" for x in row[:8]) + "</tr>"
                               for row in head.itertuples(index=False, name=None))
                return (f"<p>{html.escape(_words(f.name))}: first {len(head)} of {len(value):,} rows</p>"
                        f"<table class='freq'><tr>{cols}</tr>{body}</table>")
        return ""


def _guarantees(result: Any) -> list:
    """The result's guarantees (a tuple or list of :class:`Guarantee`), else an empty list."""
    g = getattr(result, "guarantees", None)
    if isinstance(g, (tuple, list)) and g and all(isinstance(x, Guarantee) for x in g):
        return list(g)
    return []


def _public_field(name: str, value: Any) -> bool:
    """Whether a field may be shown or exported (a seed is a secret)."""
    return name not in ("seed", "seeds") and not isinstance(value, SeedRecord)


def _is_scalar(value: Any) -> bool:
    import numbers

    return value is None or isinstance(value, (str, bool, numbers.Number))


def _words(name: str) -> str:
    return str(name).replace("_", " ")


def _short(value: Any, width: int = 30) -> str:
    """A value in a few characters: numbers to 4 significant digits, text cut, containers by size."""
    import numbers

    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, numbers.Integral):
        return f"{int(value):,}"
    if isinstance(value, numbers.Real):
        return f"{float(value):.4g}"
    if isinstance(value, str):
        return value if len(value) <= width else value[: width - 3] + "..."
    shape = getattr(value, "shape", None)
    if shape is not None and isinstance(shape, tuple):
        return f"{type(value).__name__}({'x'.join(str(s) for s in shape)})"
    if isinstance(value, (list, tuple, dict, set)):
        return f"{type(value).__name__}({len(value)})"
    n = getattr(value, "n_records", None)
    if isinstance(n, int):
        return f"{type(value).__name__}({n:,} records)"
    return type(value).__name__


def _plain(value: Any, depth: int = 0) -> Any:
    """JSON-ready form of a field: small frames and arrays as records and lists, large ones by
    their size, nested results by their own ``to_dict()``, anything else by its short text."""
    import numbers

    import numpy as np

    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, numbers.Number):
        return jsonable(value.item() if isinstance(value, np.generic) else value)
    if depth > 4:
        return _short(value)
    if isinstance(value, SeedRecord):
        return None
    to_dict = getattr(value, "to_dict", None)
    if type(value).__name__ == "DataFrame":
        if len(value) <= 50:
            return jsonable(value.reset_index().to_dict(orient="records"))
        return {"rows": int(len(value)), "columns": [str(c) for c in value.columns]}
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist()) if value.size <= 1000 else {"shape": list(value.shape)}
    if type(value).__name__ == "Series":
        return jsonable(value.to_dict()) if len(value) <= 50 else {"rows": int(len(value))}
    if callable(to_dict) and not isinstance(value, type):
        try:
            return jsonable(to_dict())
        except TypeError:
            pass
    if isinstance(value, dict):
        return {str(k): _plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_plain(v, depth + 1) for v in value]
    if dataclasses.is_dataclass(value):
        return {f.name: _plain(getattr(value, f.name), depth + 1) for f in dataclasses.fields(value)
                if _public_field(f.name, getattr(value, f.name))}
    return _short(value)


@dataclass(frozen=True)
class StepResult(ResultDisplay):
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

    @property
    def guarantees_held(self) -> str:
        """How many of the step's guarantees hold, as "held/stated"."""
        return f"{sum(bool(g.holds) for g in self.guarantees)}/{len(self.guarantees)}"

    def to_dict(self) -> dict:
        """Public description (no seed, and file parameters by their names only)."""
        return {"method": self.method, "params": public_params(_jsonable(self.params)),
                "summary": _jsonable(self.summary),
                "guarantees": [g.to_dict() for g in self.guarantees],
                "artifacts": sorted(self.artifacts)}

    def describe(self) -> str:
        """The step in words: its settings, its figures and its checked guarantees, one per line
        (what ``sdckit protect`` prints)."""
        settings = " | ".join(f"{k.replace('_', ' ')} {words(v)}" for k, v in self.params.items())
        lines = [f"{self.method}: {settings}" if settings else self.method]
        for k, v in self.summary.items():
            lines.append(f"  {k.replace('_', ' ')}: {words(v)}")
        for g in self.guarantees:
            lines.append(f"  [{'ok' if g.holds else 'FAILED'}] {g.statement} (measured: {words(g.value)})")
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


def words(v: Any) -> str:
    """A value as a person reads it: numbers with separators or 4 significant digits, yes/no,
    lists joined by commas, tables as "key value" pairs, never Python or JSON syntax."""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        return f"{v:,.4g}" if abs(v) < 1e15 else f"{v:.4g}"
    if isinstance(v, dict):
        if not v:
            return "none"
        if "type" in v and isinstance(v["type"], str):
            rest = {k: x for k, x in v.items() if k != "type"}
            return v["type"] + (f" ({words(rest)})" if rest else "")
        nested = any(isinstance(x, (dict, list, tuple, set, frozenset)) for x in v.values())
        name = {k: (k.replace("_", " ") if isinstance(k, str) else str(k)) for k in v}
        if nested:   # "a: 1, 2; b: 3" (the inner lists keep their commas)
            return "; ".join(f"{name[k]}: {words(x)}" for k, x in v.items())
        return ", ".join(f"{name[k]} {words(x)}" for k, x in v.items())
    if isinstance(v, (list, tuple, set, frozenset)):
        items = [words(x) for x in v]
        if any(isinstance(x, (dict, list, tuple)) for x in v):
            return "; ".join(items) if items else "none"
        return ", ".join(items) if items else "none"
    if v is None:
        return "none"
    if hasattr(v, "variant_name"):  # a declared variant (a search, an l-diversity type, ...)
        fields = {f.name: getattr(v, f.name) for f in dataclasses.fields(v)} if dataclasses.is_dataclass(v) else {}
        return words({"type": v.variant_name, **fields})
    return str(v)


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, (dict, list, tuple)):
        return json.dumps(_jsonable(v))
    return str(v)
