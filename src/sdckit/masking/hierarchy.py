"""Generalisation hierarchies in ARX's file format: one row per raw value, levels in columns.

Row ``39,35-39,30-39,20-39,*`` says that the raw value 39 becomes ``35-39`` at level 1,
``30-39`` at level 2 and so on. Files have no header; the separator is ``;`` or ``,``.
"""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..errors import InputError


@dataclass(frozen=True)
class Hierarchy:
    """A generalisation hierarchy: ``table`` has the raw values in column 0, level i in column i."""

    table: pd.DataFrame
    source: str | None = None

    @property
    def n_levels(self) -> int:
        """Number of generalisation levels above the raw values."""
        return int(self.table.shape[1] - 1)

    def mapping(self, level: int) -> dict[str, str]:
        """raw value (as text) -> its label at ``level`` (0 = the raw value itself)."""
        if not 0 <= level <= self.n_levels:
            raise InputError(f"{self.source or 'hierarchy'}: level {level} does not exist; "
                             f"the levels are 0..{self.n_levels}.")
        return dict(zip(self.table.iloc[:, 0], self.table.iloc[:, level]))


def read_hierarchy(path: str | os.PathLike) -> Hierarchy:
    """Read an ARX-style hierarchy file (no header, ``;`` or ``,`` separated, all text)."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such hierarchy file; check the path (relative to the spec).")
    text = path.read_text(encoding="utf-8-sig")
    if not text.strip():
        raise InputError(f"{path}: the hierarchy file is empty.")
    sep = ";" if text.splitlines()[0].count(";") >= text.splitlines()[0].count(",") and ";" in text else ","
    rows = [r for r in csv.reader(text.splitlines(), delimiter=sep) if r]
    width = {len(r) for r in rows}
    if len(width) != 1:
        raise InputError(f"{path}: rows have different numbers of levels {sorted(width)}; every raw "
                         "value needs a label at every level.")
    table = pd.DataFrame(rows, dtype=str)
    dup = table.iloc[:, 0][table.iloc[:, 0].duplicated()]
    if len(dup):
        raise InputError(f"{path}: raw values listed twice: {dup.tolist()[:10]}")
    return Hierarchy(table, str(path))
