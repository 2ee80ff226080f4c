"""One output of a researcher's session with its checks: the unit an output checker reads.

:class:`OutputRecord` holds what a session call recorded (ACRO's output type, properties and
command, the frames written as files, the checks and ACRO's outcome table) and what sdckit adds
for its audits (the table's layout, the cells' figures kept in memory, the variables that link
tables). It is a plain record that the session fills and the audits read, so it sits apart
from :mod:`sdckit.outputs.session` (which re-exports it) and from
:mod:`sdckit.outputs.linking`, which both use it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .audit import TableLayout
from .checks import CHECK_WORDS, STATBARN, overall_status

__all__ = ["OutputRecord"]


@dataclass
class OutputRecord:
    """One output of a session with its checks (the checker's unit)."""

    uid: str
    output_type: str                 # ACRO's type: "table", "regression", "histogram", "survival plot", "custom"
    properties: dict
    command: str
    frames: list = field(default_factory=list)     # DataFrames written as CSV files
    checks: list = field(default_factory=list)     # list[Check]
    outcome: pd.DataFrame | None = None
    statistics: tuple = ()
    dims: list = field(default_factory=list)
    timestamp: str = ""
    comments: list = field(default_factory=list)
    exception: str = ""
    custom_file: Path | None = None
    figure: Any = None                  # (kind, data) drawn at finalise
    layout: TableLayout | None = None   # for the audits
    evidence: Any = None                # the cells' figures (kept in memory, never written)
    link_dims: frozenset = frozenset()  # the variables with more than one category (what links tables)
    audit: dict = field(default_factory=dict)

    @property
    def status(self) -> str:
        if self.output_type == "custom":
            return "review"
        return overall_status(self.checks)

    def failed_mask(self) -> np.ndarray | None:
        masks = [c.mask for c in self.checks if c.status == "fail" and c.mask is not None and c.mask.ndim == 2]
        if not masks:
            return None
        return np.logical_or.reduce(masks)

    def summary(self) -> str:
        head = "+".join(STATBARN.get(s, s) for s in self.statistics) if self.statistics else self.output_type
        parts = [f"{c.name}: {c.summary}" for c in self.checks if c.status != "pass"
                 or c.name in ("MinimumDoFCheck",)]
        return f"{head} : \n " + "\n ".join(parts) + "\n" if parts else f"{head} : pass"

    def sentences(self) -> list[str]:
        """The checks in words, for the checker."""
        out = []
        for c in self.checks:
            words = CHECK_WORDS.get(c.name, c.name)
            if c.status == "pass":
                continue
            if c.mask is not None and c.n_cells:
                out.append(f"{c.status}: {c.n_cells} cell{'s' if c.n_cells != 1 else ''} with {words}"
                           if c.name in ("MinimumThresholdCheck", "PresenceOfZeroCheck")
                           else f"{c.status}: {c.n_cells} cell{'s' if c.n_cells != 1 else ''}: {words}")
            else:
                out.append(f"{c.status}: {words} ({c.summary.strip()})")
            for d in c.details or []:
                out.append("  " + d["sentence"])
        return out or ["pass: every check passed"]
