"""Global recoding of a categorical key: merge categories into broader ones.

Every record with an original category listed under a new label gets that label; the
category list of the variable shrinks, so key combinations get larger frequencies.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._validation import check_names, param_error
from ..errors import InputError
from ..microdata import Microdata
from ..registry import register_step
from ..result import Guarantee, StepResult


def _same(a: Any, b: Any) -> bool:
    """Match a spec value to a data category: 3 matches 3, 3.0 and "3"."""
    if a == b:
        return True
    return str(a) == str(b) or (_num(a) is not None and _num(a) == _num(b))


def _num(v: Any) -> float | None:
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


@register_step("recode")
@dataclass(frozen=True)
class Recode:
    """Merge categories of a key variable (global recoding).

    Parameters
    ----------
    variable : str
        The key variable to recode.
    mapping : dict
        ``{new_label: [old categories]}``. Categories not listed keep their value (as text
        when the new labels are text). Each old category may appear under one label only.

    Notes
    -----
    Guarantee: every released category of ``variable`` is either a new label or an original
    category that no label claims; the record count is unchanged.

    References
    ----------
    Hundepool, A. et al. (2012). *Statistical Disclosure Control*, Wiley, section 3.4.2
    (global recoding).
    """

    variable: str
    mapping: Mapping[str, Sequence[Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_names("Recode", "variable", self.variable)
        if not isinstance(self.mapping, Mapping) or not self.mapping:
            raise param_error("Recode", "mapping", "a non-empty table {new_label = [old values]}",
                              self.mapping)
        seen: dict[str, str] = {}
        for label, olds in self.mapping.items():
            if not isinstance(olds, Sequence) or isinstance(olds, str) or len(olds) == 0:
                raise param_error("Recode", f"mapping.{label}", "a non-empty list of old values", olds)
            for o in olds:
                if str(o) in seen:
                    raise param_error("Recode", f"mapping.{label}",
                                      f"a list of values not already under {seen[str(o)]!r}", o)
                seen[str(o)] = label

    def apply(self, microdata: Microdata, *, rng=None) -> StepResult:  # noqa: ARG002 (deterministic)
        var = self.variable
        if var not in microdata.key_vars:
            raise InputError(f"recode: {var!r} is not a key variable; the keys are "
                             f"{list(microdata.key_vars)}.")
        cats = microdata.categories(var)
        codes = microdata.codes(var)
        new_of_cat: list[Any] = []
        unknown = [o for olds in self.mapping.values() for o in olds
                   if not any(_same(o, c) for c in cats)]
        if unknown:
            raise InputError(f"recode: {var!r} has no categories {unknown!r}; its categories are "
                             f"{[*cats[:20]]}{' ...' if len(cats) > 20 else ''}.")
        text = any(isinstance(k, str) for k in self.mapping)
        for c in cats:
            target = c
            for label, olds in self.mapping.items():
                if any(_same(o, c) for o in olds):
                    target = label
                    break
            new_of_cat.append(str(target) if text else target)
        lookup = np.array(new_of_cat, dtype=object)
        values = np.where(codes >= 0, lookup[np.maximum(codes, 0)], None)
        frame = microdata.frame.copy(deep=False)
        frame[var] = pd.Series(values, index=frame.index).astype("object").where(codes >= 0, np.nan)
        if not text:
            frame[var] = frame[var].infer_objects()
        out = microdata.with_data(frame)
        released = set(out.categories(var))
        allowed = {str(v) if text else v for v in new_of_cat}
        ok = released <= allowed and out.n_records == microdata.n_records
        n_changed = int(sum((codes == i).sum() for i, (c, t) in enumerate(zip(cats, new_of_cat))
                            if not _same(c, t)))
        summary = {"variable": var, "categories_before": len(cats),
                   "categories_after": len(out.categories(var)), "records_recoded": n_changed}
        params = {"variable": var, "mapping": {k: list(v) for k, v in self.mapping.items()}}
        guarantee = Guarantee("recode_categories", f"{var} takes only the recoded categories",
                              sorted(map(str, released)), ok)
        return StepResult("recode", out, params, summary, (guarantee,))
