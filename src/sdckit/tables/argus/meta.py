"""Read tau-Argus files: ``.rda`` metadata (microdata and tabular), ``.hrc`` hierarchies,
``.cdl`` code lists, and the data files they describe (free format, fixed width, or CSV with a
header).

An ``.rda`` file lists the variables in file order. A line that does not start with ``<``
names a variable and, in fixed format, its start position, length and missing codes (free
format, with ``<SEPARATOR>``, gives a length or missing codes only); the lines below it hold
its tags (``<RECODEABLE>``, ``<NUMERIC>``, ``<WEIGHT>``, ``<HIERARCHICAL>``, ``<HIERCODELIST>``,
``<HIERLEADSTRING>``, ``<HIERLEVELS>``, ``<TOTCODE>``, ``<CODELIST>``, ``<FREQUENCY>``,
``<MAXSCORE>``, ``<STATUS>``, ``<RECORDKEY>``, ``<PFILE>``, ``<CKM>``, ``<SCALING>`` ...).
Several tags may share a line.

References
----------
de Wolf, P.-P. et al. (2014). *tau-Argus user's manual*, version 4.1, sections 5.1-5.4
(metadata, hierarchies, code lists, batch files). Statistics Netherlands.
sdcTools/tauargus, ``Metadata.java`` (tag reading) and ``batch.java`` (batch commands).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ...errors import InputError
from ..table import Hierarchy

__all__ = ["ArgusVariable", "ArgusMetadata", "read_rda", "read_cdl", "read_hrc", "read_argus_data"]


@dataclass
class ArgusVariable:
    """One variable of an ``.rda`` file with its tags (upper-case tag -> list of arguments)."""

    name: str
    fields: list = field(default_factory=list)
    tags: dict = field(default_factory=dict)
    line: int = 0

    def has(self, tag: str) -> bool:
        return tag.upper() in self.tags

    def arg(self, tag: str, default=None):
        a = self.tags.get(tag.upper())
        return a[0] if a else default

    @property
    def role(self) -> str:
        for tag, role in (("RECORDKEY", "record_key"), ("WEIGHT", "weight"), ("FREQUENCY", "frequency"),
                          ("MAXSCORE", "top"), ("STATUS", "status"), ("LOWERPL", "lower_pl"), ("UPPERPL", "upper_pl"),
                          ("SHADOW", "shadow"), ("COSTVAR", "cost"), ("HOLDING", "holding"), ("REQUEST", "request")):
            if self.has(tag):
                return role
        if self.has("NUMERIC"):
            return "numeric"
        return "categorical"


@dataclass
class ArgusMetadata:
    """The variables of an ``.rda`` file, in file order, and its global settings."""

    path: Path
    variables: list
    separator: str | None = None
    status_codes: dict = field(default_factory=lambda: {"SAFE": "S", "UNSAFE": "U", "PROTECT": "P"})

    def __getitem__(self, name: str) -> ArgusVariable:
        for v in self.variables:
            if v.name.lower() == name.lower():
                return v
        names = [v.name for v in self.variables]
        raise InputError(f"{self.path}: variable {name!r} is not in the metadata; its variables are {names}")

    @property
    def names(self) -> list:
        return [v.name for v in self.variables]

    def by_role(self, role: str) -> list:
        return [v for v in self.variables if v.role == role]

    def file(self, name: str) -> Path:
        """A file named in the metadata, relative to the metadata's folder (case-insensitive)."""
        p = Path(name)
        if not p.is_absolute():
            p = self.path.parent / p
        if p.is_file():
            return p
        if p.parent.is_dir():
            for q in p.parent.iterdir():
                if q.name.lower() == p.name.lower():
                    return q
        raise InputError(f"{self.path}: file {name!r} named in the metadata does not exist in {p.parent}")

    def hierarchy(self, name: str, codes=None) -> Hierarchy | None:
        """The hierarchy of a categorical variable (``.hrc`` file or ``<HIERLEVELS>`` digits), or None."""
        v = self[name]
        total = str(v.arg("TOTCODE", "Total"))
        if v.has("HIERCODELIST"):
            return read_hrc(self.file(v.arg("HIERCODELIST")), total=total, marker=str(v.arg("HIERLEADSTRING", "@")))
        if v.has("HIERLEVELS") and codes is not None:
            return _hier_from_levels([int(x) for x in v.tags["HIERLEVELS"]], codes, total)
        return None


_TAG = re.compile(r"<([A-Za-z_]+)>")


def _split_args(text: str) -> list:
    try:
        return shlex.split(text.replace("\\", "/"))
    except ValueError:
        return text.split()


def read_rda(path: str | Path) -> ArgusMetadata:
    """Read a tau-Argus ``.rda`` metadata file."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"metadata file {str(p)!r} does not exist; give the path of a tau-Argus .rda file")
    variables: list[ArgusVariable] = []
    sep = None
    status = {"SAFE": "S", "UNSAFE": "U", "PROTECT": "P"}
    for lineno, raw in enumerate(p.read_text(encoding="latin-1").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("//"):
            continue
        if line.startswith("<"):
            parts = _TAG.split(line)  # ['', TAG, args, TAG, args, ...]
            for k in range(1, len(parts), 2):
                tag, args = parts[k].upper(), _split_args(parts[k + 1])
                if tag == "SEPARATOR":
                    sep = args[0] if args else ","
                    continue
                if tag in ("SAFE", "UNSAFE", "PROTECT") and not variables[-1:]:
                    status[tag] = args[0] if args else status[tag]
                    continue
                if not variables:
                    raise InputError(f"{p}: line {lineno}: tag <{tag}> comes before any variable; "
                                     "a variable line (name ...) must come first")
                variables[-1].tags[tag] = args
                if tag in ("SAFE", "UNSAFE", "PROTECT"):
                    status[tag] = args[0] if args else status[tag]
        else:
            toks = _split_args(line)
            variables.append(ArgusVariable(toks[0], toks[1:], {}, lineno))
    if not variables:
        raise InputError(f"{p}: no variables found; an .rda file lists one variable per line followed by its tags")
    return ArgusMetadata(p, variables, sep, status)


def read_cdl(path: str | Path) -> dict:
    """Read a ``.cdl`` code list: ``code,label`` per line -> {code: label}."""
    out = {}
    for lineno, raw in enumerate(Path(path).read_text(encoding="latin-1").splitlines(), start=1):
        if not raw.strip():
            continue
        if "," not in raw:
            raise InputError(f"{path}: line {lineno} ({raw!r}) is not 'code,label'")
        code, label = raw.split(",", 1)
        out[code.strip().strip('"')] = label.strip().strip('"')
    return out


def read_hrc(path: str | Path, total: str = "Total", marker: str = "@") -> Hierarchy:
    """Read a ``.hrc`` hierarchy (one code per line, one ``marker`` per level below the top)."""
    return Hierarchy.from_hrc(Path(path), total=total, marker=marker or "@")


def _hier_from_levels(levels: list, codes, total: str) -> Hierarchy:
    """A hierarchy from code digits (``<HIERLEVELS> 3 1 1``: the first 3 digits, then one more...)."""
    levels = [n for n in levels if n > 0]
    cuts = np.cumsum(levels)
    nodes, parent, index = [total], [-1], {}
    for c in sorted({str(c).strip() for c in codes}):
        par = 0
        for k, cut in enumerate(cuts):
            pref = c[:cut]
            key = (k, pref)
            if key not in index:
                nodes.append(pref if k < len(cuts) - 1 else c)
                parent.append(par)
                index[key] = len(nodes) - 1
            par = index[key]
    return Hierarchy(nodes, parent)


def read_argus_data(path: str | Path, meta: ArgusMetadata) -> pd.DataFrame:
    """Read a microdata or tabular data file described by ``meta``.

    Free format (``<SEPARATOR>``): the separator of the metadata, or the file's own delimiter
    (``,`` ``;`` tab) when its first line is a header naming the variables. Fixed format: the
    start position and length of each variable. Codes are read as text.
    """
    p = Path(path)
    if not p.is_file():
        raise InputError(f"data file {str(p)!r} does not exist")
    names = meta.names
    first = p.open(encoding="latin-1").readline().strip()
    cats = {v.name: str for v in meta.variables}
    if meta.separator is not None or any(d in first for d in (",", ";", "\t")):
        for delim in ([meta.separator] if meta.separator else []) + [",", ";", "\t"]:
            cells = [c.strip().strip('"') for c in first.split(delim)]
            lower = {c.lower() for c in cells}
            if len(cells) > 1 and sum(n.lower() in lower for n in names) * 2 >= len(names):
                # a header line: columns by name; with as many columns as variables, by position
                df = pd.read_csv(p, sep=delim, dtype=str, encoding="latin-1")
                df.columns = [c.strip().strip('"') for c in df.columns]
                if len(df.columns) == len(names):
                    df.columns = names
                else:
                    df = df.rename(columns={c: n for c in df.columns for n in names if c.lower() == n.lower()})
                return df.apply(lambda s: s.str.strip().str.strip('"'))
            if len(cells) == len(names):
                df = pd.read_csv(p, sep=delim, header=None, names=names, dtype=cats, encoding="latin-1")
                return df.apply(lambda s: s.str.strip().str.strip('"') if s.dtype == object else s)
        raise InputError(f"{p}: its lines have {len(first.split(meta.separator or ','))} fields but the metadata "
                         f"{meta.path.name} describes {len(names)} variables {names}")
    specs = []
    for v in meta.variables:
        try:
            start, length = int(v.fields[0]), int(v.fields[1])
        except (IndexError, ValueError):
            raise InputError(f"{meta.path}: line {v.line}: variable {v.name!r} needs a start position and a length "
                             "in fixed format (or add <SEPARATOR> for free format)") from None
        specs.append((start - 1, start - 1 + length))
    df = pd.read_fwf(p, colspecs=specs, names=names, dtype=str, encoding="latin-1")
    return df.apply(lambda s: s.str.strip())
