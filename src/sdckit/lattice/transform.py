"""Apply a node: generalise each quasi-identifier to its level and suppress failing classes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

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
