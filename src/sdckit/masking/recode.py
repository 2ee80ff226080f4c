"""Global recoding: merge categories, generalise by a hierarchy, bin numbers, top/bottom code.

Every record with a given original value gets the same new value (global, not local), so
key combinations merge and f_k can only grow.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .._validation import param_error
from ..errors import InputError
from ..microdata import Microdata, decode_arrow_strings, encode_column
from ..params import check_params, param
from ..registry import register_step
from ..result import Guarantee, StepResult
from .hierarchy import read_hierarchy
from .summaries import LazySummary


def _same(a: Any, b: Any) -> bool:
    """Match a spec value to a data category: 3 matches 3, 3.0 and "3"."""
    if a == b or str(a) == str(b):
        return True
    x, y = _num(a), _num(b)
    return x is not None and x == y


def _num(v: Any) -> float | None:
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _text(v: Any) -> str:
    """Raw value as hierarchy files write it: 39.0 -> "39"."""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _fmt_bound(b: float) -> str:
    return _text(b) if math.isfinite(b) else ("inf" if b > 0 else "-inf")


@register_step("recode", engines=("memory", "dask"))
@dataclass(frozen=True)
class Recode:
    """Global recoding of one variable, in one of four modes.

    Parameters
    ----------
    variable : str
        The column to recode (a key, a numeric variable or any other column).
    mapping : dict, optional
        Merge categories: ``{new_label: [old values]}``. Values not listed keep their value
        (as text when the labels are text).
    hierarchy_file : str, optional
        An ARX-style hierarchy (raw value, then one column per level); with ``level``.
    level : int, optional
        Hierarchy level to generalise to (1 = first level above the raw values).
    breaks : list of numbers, optional
        Bin a numeric variable into intervals between consecutive breaks (use ``inf`` and
        ``-inf`` for open ends); labels default to ``"a-b"``.
    labels : list of str, optional
        One label per interval (with ``breaks``).
    closed : {"left", "right"}
        With ``breaks``: intervals ``[a, b)`` (default) or ``(a, b]``.
    top, bottom : number, optional
        Top / bottom coding of a numeric variable: values above ``top`` become ``top``
        (or ``top_value``), values below ``bottom`` become ``bottom`` (or ``bottom_value``).
    top_value, bottom_value : number, optional
        Replacement values for top and bottom coding.

    Notes
    -----
    Guarantee (checked on the output): the variable takes only values of the recoding's
    range (new labels, unclaimed values, or values within [bottom, top]); the record count
    and every other column are unchanged; missing values stay missing.

    References
    ----------
    Hundepool, A. et al. (2012). *Statistical Disclosure Control*, Wiley, sections 3.4.2
    (global recoding) and 3.4.3 (top and bottom coding).
    Prasser, F. and Kohlmayer, F. (2015). Putting statistical disclosure control into
    practice: the ARX data anonymization tool (generalisation hierarchies).
    """

    variable: str = param(kind="column", help="the column to recode")
    mapping: Mapping[str, Sequence[Any]] | None = param(
        None, kind="mapping", nullable=True, help="merge categories: {new_label = [old values]}")
    hierarchy_file: str | None = param(None, kind="path", nullable=True,
                                       help="ARX-style hierarchy file (raw value, then one column "
                                            "per level); with level")
    level: int | None = param(None, kind="int", low=1, nullable=True,
                              help="hierarchy level to generalise to (1 = first level above the "
                                   "raw values)")
    breaks: Sequence[float] | None = param(None, kind="float_list", nullable=True,
                                           help="bin a numeric variable between consecutive "
                                                "breaks (inf and -inf for open ends)")
    labels: Sequence[str] | None = param(None, kind="str_list", nullable=True,
                                         help="one label per interval (with breaks)")
    closed: str = param("left", kind="choice", choices=("left", "right"),
                        help="with breaks: intervals [a, b) or (a, b]")
    top: float | None = param(None, kind="float", nullable=True,
                              help="top coding: values above top become top (or top_value)")
    bottom: float | None = param(None, kind="float", nullable=True,
                                 help="bottom coding: values below bottom become bottom "
                                      "(or bottom_value)")
    top_value: float | None = param(None, kind="float", nullable=True, advanced=True,
                                    help="replacement value for top coding")
    bottom_value: float | None = param(None, kind="float", nullable=True, advanced=True,
                                       help="replacement value for bottom coding")
    others: str | None = param(None, kind="str", nullable=True,
                               help="with a mapping: what values it does not list become: \"keep\" "
                                    "(released as they are) or a label (e.g. \"other\"); unset, "
                                    "an unlisted value is an error")

    #: a global recoding is published: an intruder applies it to what they know
    global_recode: ClassVar[bool] = True

    def __post_init__(self) -> None:
        check_params(self)
        owner = "Recode"
        modes = [self.mapping is not None, self.hierarchy_file is not None, self.breaks is not None,
                 self.top is not None or self.bottom is not None]
        if sum(modes) != 1:
            raise param_error(owner, "mapping", "given alone: set exactly one of mapping, "
                              "hierarchy_file (with level), breaks, or top/bottom", self.mapping)
        if self.mapping is not None:
            self._check_mapping()
        if self.others is not None and self.mapping is None:
            raise param_error(owner, "others", "set only with a mapping", self.others)
        if self.hierarchy_file is not None and self.level is None:
            raise param_error(owner, "level", "an int >= 1 when hierarchy_file is given", None)
        if self.breaks is not None:
            b = list(self.breaks)
            if len(b) < 2:
                raise param_error(owner, "breaks", "a list of at least 2 numbers", self.breaks)
            if any(x >= y for x, y in zip(b, b[1:])):
                raise param_error(owner, "breaks", "strictly increasing", self.breaks)
            if self.labels is not None and len(self.labels) != len(b) - 1:
                raise param_error(owner, "labels", f"a list of {len(b) - 1} labels (one per interval)",
                                  self.labels)
        if self.top is not None and self.bottom is not None and self.bottom >= self.top:
            raise param_error(owner, "bottom", f"below top ({self.top})", self.bottom)

    def _check_mapping(self) -> None:
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

    # ------------------------------------------------------------------ modes
    def _by_mapping(self, col: pd.Series) -> tuple[pd.Series, set]:
        cats = pd.unique(col.dropna())
        unknown = [o for olds in self.mapping.values() for o in olds if not any(_same(o, c) for c in cats)]
        if unknown:
            raise InputError(f"recode: {self.variable!r} has no values {unknown!r}; its values are "
                             f"{sorted(map(str, cats))[:20]}{' ...' if len(cats) > 20 else ''}.")
        text = any(isinstance(k, str) for k in self.mapping)
        unlisted = [c for c in cats if not any(_same(o, c) for olds in self.mapping.values() for o in olds)]
        if unlisted and self.others is None:
            shown = ", ".join(map(repr, sorted(map(_text, unlisted))[:20]))
            raise InputError(f"recode: the mapping of {self.variable!r} does not list the values {shown}"
                             f"{' ...' if len(unlisted) > 20 else ''}; list them in the mapping, or say what they "
                             "become with others = \"keep\" or others = \"<label>\".")
        lookup = {}
        for c in cats:
            default = c if self.others in (None, "keep") else self.others
            target = next((label for label, olds in self.mapping.items() if any(_same(o, c) for o in olds)), default)
            lookup[c] = _text(target) if text else target
        out = col.map(lookup)
        return out, set(lookup.values())

    def _by_hierarchy(self, col: pd.Series) -> tuple[pd.Series, set]:
        h = read_hierarchy(self.hierarchy_file)
        mapping = h.mapping(self.level)
        raw = col.dropna().map(_text)
        missing = sorted(set(raw) - set(mapping))
        if missing:
            raise InputError(f"recode: hierarchy {self.hierarchy_file} lacks {len(missing)} values of "
                             f"{self.variable!r}: {missing[:20]}; add them to the hierarchy file.")
        out = col.map(lambda v: mapping[_text(v)], na_action="ignore")
        return out, set(mapping.values())

    def _by_breaks(self, col: pd.Series) -> tuple[pd.Series, set]:
        values = pd.to_numeric(col, errors="coerce")
        bad = col.notna() & values.isna()
        if bad.any():
            raise InputError(f"recode: {self.variable!r} holds non-numeric values (e.g. "
                             f"{col[bad].iloc[0]!r}) and cannot be binned with breaks.")
        b = [float(x) for x in self.breaks]
        right = self.closed == "right"
        labels = list(self.labels) if self.labels is not None else [
            (f"({_fmt_bound(x)}-{_fmt_bound(y)}]" if right else f"{_fmt_bound(x)}-{_fmt_bound(y)}")
            for x, y in zip(b, b[1:])]
        binned = pd.cut(values, bins=b, labels=labels, right=right, include_lowest=True)
        outside = values.notna() & binned.isna()
        if outside.any():
            v = values[outside]
            raise InputError(f"recode: {int(outside.sum())} values of {self.variable!r} lie outside "
                             f"the breaks [{b[0]}, {b[-1]}] (e.g. {v.iloc[0]} in row {v.index[0]}); "
                             "widen the breaks or use inf / -inf.")
        return binned.astype(object).where(binned.notna(), np.nan), set(labels)

    def _by_top_bottom(self, col: pd.Series) -> tuple[pd.Series, set | None]:
        if not pd.api.types.is_numeric_dtype(col):
            raise InputError(f"recode: top/bottom coding needs a numeric column; {self.variable!r} is "
                             f"{col.dtype}.")
        out = col.copy()
        if self.top is not None:
            out = out.where(~(col > self.top), self.top if self.top_value is None else self.top_value)
        if self.bottom is not None:
            out = out.where(~(col < self.bottom), self.bottom if self.bottom_value is None else self.bottom_value)
        return out, None

    def _recode(self, col: pd.Series) -> tuple[pd.Series, set | None, str]:
        """The recoded values of ``col`` (element by element), the allowed range and the mode."""
        if self.mapping is not None:
            return *self._by_mapping(col), "mapping"
        if self.hierarchy_file is not None:
            return *self._by_hierarchy(col), "hierarchy"
        if self.breaks is not None:
            return *self._by_breaks(col), "breaks"
        return *self._by_top_bottom(col), "top_bottom"

    def _params(self) -> dict:
        return {k: v for k, v in {
            "variable": self.variable,
            "mapping": None if self.mapping is None else {k: list(v) for k, v in self.mapping.items()},
            "hierarchy_file": self.hierarchy_file, "level": self.level,
            "breaks": None if self.breaks is None else list(self.breaks),
            "labels": None if self.labels is None else list(self.labels),
            "closed": self.closed if self.breaks is not None else None, "top": self.top,
            "bottom": self.bottom, "top_value": self.top_value, "bottom_value": self.bottom_value,
            "others": self.others,
        }.items() if v is not None}

    @staticmethod
    def _positions(present: np.ndarray, n_cat: int) -> np.ndarray:
        """Category code -> row of the recoded table (the last entry: code -1 -> -1)."""
        pos = np.full(n_cat + 1, -1, dtype=np.intp)
        pos[present] = np.arange(present.size)
        return pos

    @staticmethod
    def _values(new_small: pd.Series):
        return new_small.array if isinstance(new_small.dtype, pd.api.extensions.ExtensionDtype) \
            else new_small.to_numpy()

    def _top_bottom_fast(self, microdata: Microdata, col: pd.Series) -> StepResult:
        """Top/bottom coding of a float column that is not a key: one compiled pass codes it,
        one more checks the output against the input (missing kept, every record follows the
        rule, so the coding is global, and the released range); the records changed come from
        that check. The distinct values before and after (a hash of every value) are counted
        only when the summary is read. Anything the check does not confirm goes through the
        general check instead."""
        from ._recode_kernels import top_bottom_check, top_bottom_code

        var = self.variable
        x = col.to_numpy()
        has_top, has_bottom = self.top is not None, self.bottom is not None
        rule = (float(self.top) if has_top else np.inf,
                float(self.top if self.top_value is None else self.top_value) if has_top else 0.0,
                float(self.bottom) if has_bottom else -np.inf,
                float(self.bottom if self.bottom_value is None else self.bottom_value) if has_bottom else 0.0)
        y = np.empty_like(x)
        top_bottom_code(x, y, *rule)
        out = microdata.with_columns({var: pd.Series(y, index=col.index, name=var, copy=False)})
        y = out.frame[var].to_numpy()
        missing_kept, follows, changed, n_released = top_bottom_check(x, y, *rule)
        if n_released == y.shape[0]:
            low, high = (y.min(), y.max()) if n_released else (np.nan, np.nan)
        else:
            low, high = (np.nanmin(y), np.nanmax(y)) if n_released else (np.nan, np.nan)
        if not (missing_kept and follows):   # the general check names what is wrong
            b_codes, b_cats, a_codes, a_cats = _encode_pair(col, out.frame[var], True)
            guarantees, counts = check_recode(b_codes, b_cats, a_codes, a_cats, None, self.top, self.bottom,
                                              self.top_value, self.bottom_value)
            return StepResult("recode", out, self._params(), {"variable": var, "mode": "top_bottom", **counts},
                              tuple(guarantees))
        hi = self.top_value if self.top_value is not None else self.top
        lo = self.bottom_value if self.bottom_value is not None else self.bottom
        ok = True
        if has_top:
            ok &= bool(n_released == 0 or high <= max(self.top, hi))
        if has_bottom:
            ok &= bool(n_released == 0 or low >= min(self.bottom, lo))
        rng_value = [float(low), float(high)] if n_released else [np.nan, np.nan]
        guarantees = (Guarantee("missing_kept", "missing values stay missing", True, True),
                      Guarantee("global", "every original value maps to one released value", True, True),
                      Guarantee("top_bottom", f"values within [{self.bottom}, {self.top}] after coding",
                                rng_value, ok))

        def distinct() -> dict:
            return {"distinct_before": int(pd.unique(x[~np.isnan(x)]).size),
                    "distinct_after": int(pd.unique(y[~np.isnan(y)]).size)}

        summary = LazySummary({"variable": var, "mode": "top_bottom", "distinct_before": None,
                               "distinct_after": None, "records_changed": int(changed)}, distinct)
        return StepResult("recode", out, self._params(), summary, guarantees)

    def apply(self, microdata: Microdata, *, rng=None) -> StepResult:  # noqa: ARG002 (deterministic)
        var = self.variable
        if var not in microdata.columns:
            from .._validation import close_names
            raise InputError(f"recode: column {var!r} does not exist; {close_names(var, microdata.columns)}")
        col = microdata.frame[var]
        is_key = var in microdata.key_vars
        by_table = not isinstance(col.dtype, pd.CategoricalDtype) and (
            is_key or self.mapping is not None or self.hierarchy_file is not None or self.breaks is not None)
        if by_table:
            # recode the column's category table once (one record per value present), then
            # take the new values by the codes; a key's new encoding comes from the same table
            fresh = False
            if is_key:
                before, b_cats = microdata.codes(var), microdata.categories(var)
            elif isinstance(col.dtype, np.dtype) and col.dtype.kind in "iu":
                before, b_cats = encode_column(col)                         # integers: counted, no hash
                fresh = True
            else:
                before, b_cats = pd.factorize(col, sort=False, use_na_sentinel=True)
                before, b_cats = before.astype(np.int32, copy=False), pd.Index(b_cats)
            n_cat = len(b_cats)
            if fresh:
                # counted from the column just now: every category occurs and is the value itself
                present = np.arange(n_cat)
                rep = None
                small = pd.Series(b_cats.to_numpy(), name=col.name)
            else:
                rows = np.flatnonzero(before >= 0)
                rep = np.zeros(n_cat, dtype=np.intp)
                rep[before[rows]] = rows                              # a record of each category
                present = np.flatnonzero(np.bincount(before[rows], minlength=n_cat))
                small = col.iloc[rep[present]].reset_index(drop=True)
            try:
                new_small, allowed, mode = self._recode(small)
            except InputError:
                self._recode(col)                                     # the message names data rows
                raise
            labels = new_small.infer_objects() if new_small.dtype == object else new_small
            b_codes = before
            if not is_key:
                # the released value of each record by one code per record: the recoded
                # table's distinct values, taken by the codes (the check reads the same codes)
                k_codes, uniques = pd.factorize(labels, sort=False, use_na_sentinel=True)
                table = np.full(n_cat + 1, -1, dtype=np.int32)        # code -1 (missing) -> -1
                table[present] = k_codes
                a_codes, a_cats = table[before], pd.Index(uniques)
                fast = decode_arrow_strings(labels.dtype, pd.Index(a_cats.to_numpy(dtype=object)), a_codes) \
                    if new_small.dtype == object else None
                if fast is not None:
                    new = pd.Series(fast, index=col.index, name=var)
                else:
                    new = pd.Series(pd.api.extensions.take(self._values(new_small), self._positions(present, n_cat)[before],
                                                           allow_fill=True), index=col.index, name=var)
                    new = new.infer_objects() if new.dtype == object else new
                out = microdata.with_columns({var: new})
            else:
                pos = self._positions(present, n_cat)
                # text labels: decoded by Arrow from the table (no Python string per record)
                fast = decode_arrow_strings(labels.dtype, pd.Index(labels.to_numpy(dtype=object)), pos[before]) \
                    if new_small.dtype == object else None
                if fast is not None:
                    new = pd.Series(fast, index=col.index, name=var)
                else:
                    new = pd.Series(pd.api.extensions.take(self._values(new_small), pos[before], allow_fill=True),
                                    index=col.index, name=var)
                    new = new.infer_objects() if new.dtype == object else new
                if isinstance(new.dtype, pd.CategoricalDtype):
                    out = microdata.with_columns({var: new}, encoded={var: encode_column(new)})
                else:
                    # the sorted distinct values of the new column = those of its category table
                    k_codes, uniques = pd.factorize(new.iloc[rep[present]], sort=True, use_na_sentinel=True)
                    table = np.full(n_cat + 1, -1, dtype=np.int32)
                    table[present] = k_codes
                    out = microdata.with_columns({var: new}, encoded={var: (table[before], pd.Index(uniques))})
                # the released Microdata's own encoding
                a_codes, a_cats = out.codes(var), out.categories(var)
        elif mode_top_bottom_fast(self, col):
            return self._top_bottom_fast(microdata, col)
        else:
            new, allowed, mode = self._recode(col)
            new = new.infer_objects() if new.dtype == object else new
            out = microdata.with_columns({var: new}, encoded={var: encode_column(new)}
                                         if var in microdata.key_vars else None)
            b_codes, b_cats, a_codes, a_cats = _encode_pair(col, out.frame[var], mode == "top_bottom")
        guarantees, counts = check_recode(b_codes, b_cats, a_codes, a_cats, allowed, self.top,
                                          self.bottom, self.top_value, self.bottom_value)
        summary = {"variable": var, "mode": mode, **counts}
        return StepResult("recode", out, self._params(), summary, tuple(guarantees))

    # ---- the Dask engine's protocol (sdckit.registry.DaskPlan)
    def dask_plan(self, roles):
        """Row by row: the map value -> released value fitted by this step on the distinct values."""
        from ..registry import DaskPlan

        return DaskPlan("rows", (self.variable,), (self.variable,))


def mode_top_bottom_fast(step: Recode, col: pd.Series) -> bool:
    """Whether top/bottom coding of ``col`` (not a key) takes the compiled path: a float64
    column (where a replacement keeps the dtype, as ``Series.where`` would)."""
    return (step.mapping is None and step.hierarchy_file is None and step.breaks is None
            and (step.top is not None or step.bottom is not None)
            and isinstance(col.dtype, np.dtype) and col.dtype == np.float64)


def _encode_pair(before: pd.Series, after: pd.Series,
                 numeric: bool = False) -> tuple[np.ndarray, pd.Index, np.ndarray, pd.Index]:
    """Codes (``-1`` = missing) and category tables of a column before and after a recode,
    for :func:`check_recode` (unsorted tables). With ``numeric`` (top and bottom coding: the
    tables are compared as numbers), numbers changed to few distinct values hash the column
    once: the released codes are the original ones except where the value changed."""
    b_codes, b_uniq = pd.factorize(before, sort=False, use_na_sentinel=True)
    b_uniq = pd.Index(b_uniq)
    if numeric and pd.api.types.is_numeric_dtype(before.dtype) and pd.api.types.is_numeric_dtype(after.dtype) \
            and not isinstance(before.dtype, pd.CategoricalDtype):
        x = before.to_numpy(dtype=np.float64, na_value=np.nan)
        y = after.to_numpy(dtype=np.float64, na_value=np.nan)
        changed = ~((x == y) | (np.isnan(x) & np.isnan(y)))
        new_vals = pd.unique(y[changed & ~np.isnan(y)])
        if new_vals.size <= 8:
            a_codes = b_codes.astype(np.int64)
            a_codes[changed & np.isnan(y)] = -1
            extra = []
            kept = ~changed
            for v in new_vals:                 # a released value may be an unchanged original one
                hit = np.flatnonzero(kept & (x == v))
                if hit.size:
                    a_codes[changed & (y == v)] = b_codes[hit[0]]
                else:
                    a_codes[changed & (y == v)] = len(b_uniq) + len(extra)
                    extra.append(v)
            a_uniq = pd.Index(np.concatenate([b_uniq.to_numpy(dtype=np.float64),
                                              np.asarray(extra, dtype=np.float64)]))
            return b_codes, b_uniq, a_codes, a_uniq
    a_codes, a_uniq = pd.factorize(after, sort=False, use_na_sentinel=True)
    return b_codes, b_uniq, a_codes, pd.Index(a_uniq)


def check_recode(before: np.ndarray, before_cats: pd.Index, after: np.ndarray, after_cats: pd.Index,
                 allowed: set | None, top=None, bottom=None, top_value=None,
                 bottom_value=None) -> tuple[list[Guarantee], dict]:
    """Independent checks of a global recode on the encoded column before and after (codes,
    ``-1`` = missing, and category tables, as :class:`~sdckit.microdata.Microdata` keeps them):
    missing kept, the same old value always maps to the same new value, and the values within
    the recoding's range. Also returns the counts of the summary: distinct values before and
    after, and records whose value changed.
    """
    before, after = np.asarray(before), np.asarray(after)
    nb, na = len(before_cats), len(after_cats)
    if before.size and before.min() >= 0 and after.min() >= 0:   # nothing missing on either side
        miss_kept = True
        b, a = before, after
    else:
        miss_b = before < 0
        miss_kept = bool(np.array_equal(miss_b, after < 0))
        if miss_b.any():
            rows = np.flatnonzero(~miss_b)
            b, a = before[rows], after[rows]
        else:
            b, a = before, after
    if miss_kept and nb * max(na, 1) <= max(4 * b.size, 1 << 16):
        # small tables: count the (original, released) pairs in one pass
        key = b.astype(np.int64)
        key *= na
        key += a
        pairs = np.bincount(key, minlength=nb * na).reshape(nb, na)
        functional = bool(((pairs > 0).sum(axis=1) <= 1).all())
        used_b, used_a = pairs.any(axis=1), pairs.any(axis=0)
        pair_b, pair_a = np.nonzero(pairs)
        pair_n = pairs[pair_b, pair_a]
    else:
        # one released code per original code: write any record's released code per original
        # code, then every record must agree with it
        seen = np.full(nb, -2, dtype=np.int64)
        seen[b] = a
        functional = bool(np.array_equal(seen[b], a))
        used_b = np.bincount(b, minlength=nb) > 0
        used_a = np.bincount(after[after >= 0], minlength=na) > 0
        pair_b = pair_a = pair_n = None
    g = [Guarantee("missing_kept", "missing values stay missing", miss_kept, miss_kept),
         Guarantee("global", "every original value maps to one released value", functional, functional)]
    values = after_cats[used_a]
    if allowed is not None:
        extra = sorted({str(v) for v in values} - {str(x) for x in allowed})
        g.append(Guarantee("recode_range", "the variable takes only the recoded values", extra or "none",
                           not extra))
    else:
        hi = top_value if top_value is not None else top
        lo = bottom_value if bottom_value is not None else bottom
        vals = np.asarray(values, dtype=np.float64)
        ok = True
        if top is not None:
            ok &= bool((vals <= max(top, hi)).all())
        if bottom is not None:
            ok &= bool((vals >= min(bottom, lo)).all())
        g.append(Guarantee("top_bottom", f"values within [{bottom}, {top}] after coding",
                           [float(vals.min()), float(vals.max())] if vals.size else [np.nan, np.nan], ok))
    # records changed: numbers compare by value, other values by their text
    bc, ac = np.asarray(before_cats), np.asarray(after_cats)
    numeric = pd.api.types.is_numeric_dtype(bc.dtype) and pd.api.types.is_numeric_dtype(ac.dtype)
    if pair_b is not None:
        differ = (bc[pair_b] != ac[pair_a]) if numeric else \
            np.array([str(bc[i]) != str(ac[j]) for i, j in zip(pair_b, pair_a)], dtype=bool)
        changed = int(pair_n[differ].sum()) if differ.size else 0
    elif numeric:
        changed = int(np.count_nonzero(bc[b] != ac[a]))
    else:
        text = {}
        for j in np.flatnonzero(used_a):
            text.setdefault(str(ac[j]), j)
        same = np.full(len(bc), -1, dtype=np.int64)                    # original code -> same-text code
        for k in np.flatnonzero(used_b):
            same[k] = text.get(str(bc[k]), -1)
        changed = int(np.count_nonzero(same[b] != a))
    counts = {"distinct_before": int(used_b.sum()), "distinct_after": int(used_a.sum()),
              "records_changed": changed}
    return g, counts
