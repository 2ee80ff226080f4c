"""Apply a node: generalise each quasi-identifier to its level and suppress failing classes."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..errors import InputWarning
from ..result import StepResult
from .hierarchies import as_text
from .models import NodeView
from .search import Evaluator

SUPPRESSED = "*"


def kept_classes(ev: Evaluator, levels: Sequence[int]) -> np.ndarray:
    """Which classes of the node's table are kept (satisfy every class-based model)."""
    p = ev.problem
    lv = np.asarray(levels, dtype=np.int64)
    view = NodeView(p, lv, p.table(lv))
    ok = np.ones(view.table.n_classes, dtype=bool)
    for m in ev.models:
        if m.class_based:
            ok &= m.class_ok(view)
    return ok


def generalise_frame(data: pd.DataFrame, ev: Evaluator, levels: Sequence[int]) -> tuple[pd.DataFrame, np.ndarray]:
    """The released frame at ``levels``: QIs replaced by their labels, suppressed records' QIs
    set to ``*`` (ARX's convention). Returns the frame and the boolean mask of suppressed records."""
    p = ev.problem
    lv = np.asarray(levels, dtype=np.int64)
    ok = kept_classes(ev, lv)
    suppressed = ~ok[p.record_classes(lv)]
    out = data.copy()
    for j, col in enumerate(p.columns):
        lab = col.labels[int(lv[j])][col.code_map[int(lv[j])][col.raw]].astype(object)
        lab[suppressed] = SUPPRESSED
        out[p.qis[j]] = pd.Series(lab, index=data.index, dtype=object)
    return out, suppressed


@dataclass(frozen=True)
class PublishedLevels:
    """The hierarchy levels a ``generalise`` step published, as an intruder applies them to the
    original values they know (global recodings are published; the records the step suppressed
    are not: suppression is not a recoding anyone can repeat on their own data).

    Attributes
    ----------
    maps : mapping
        Column -> {original value as text: released label} at the chosen level.
    """

    maps: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    global_recode: ClassVar[bool] = True
    method: ClassVar[str] = "generalise"

    @classmethod
    def from_node(cls, ev: Evaluator, levels: Sequence[int]) -> PublishedLevels:
        """The label of every raw value of each quasi-identifier at ``levels``."""
        p = ev.problem
        maps = {}
        for j, col in enumerate(p.columns):
            lv = int(levels[j])
            raw = col.labels[0]
            rel = col.labels[lv][col.code_map[lv]]
            maps[p.qis[j]] = {str(a): str(b) for a, b in zip(raw, rel, strict=True)}
        return cls(maps)

    def apply(self, md: Any) -> StepResult:
        """``md`` with each quasi-identifier replaced by its published label (a value outside the
        map, which the step never saw, is kept as it is)."""
        out = md.frame.copy()
        for col, m in self.maps.items():
            if col in out.columns:
                text = as_text(out[col])
                out[col] = pd.Series(text.map(m).where(text.isin(list(m)), text).to_numpy(dtype=object),
                                     index=out.index, dtype=object)
        with warnings.catch_warnings():   # a QI at its top level has one category: expected
            warnings.simplefilter("ignore", InputWarning)
            return StepResult("generalise", md.with_data(out), params={}, summary={})
