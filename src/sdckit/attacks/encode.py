"""The released, original and control records on one encoding, for the attacks.

Each attack compares values across three files, so a category must have one code in all of
them and a numeric column one scale. :func:`encode_frames` gives every categorical column
joint integer codes (values that print the same are the same category: ``1``, ``1.0`` and
``"1"`` agree, so a CSV column read as text in one file and as numbers in another still
matches) and keeps numeric columns as numbers with their range over the three files. A
missing value is NaN in both kinds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._validation import close_names
from ..errors import InputError
from ..microdata import Microdata

FrameLike = pd.DataFrame | Microdata


@dataclass(frozen=True)
class EncodedFrames:
    """Released, original and control records as float64 arrays on one encoding.

    Attributes
    ----------
    columns : tuple of str
        The encoded columns, in the order of the arrays' columns.
    is_numeric : ndarray of bool
        Per column: numeric (distance ``|a - b| / range``) or categorical (0 or 1).
    inv_range : ndarray
        Per column: 1 / (largest - smallest value over the three files) for a numeric column
        (1 when the range is 0), 1 for a categorical one.
    released, original, control : ndarray
        One row per record; categorical columns hold their codes, missing values are NaN.
    categories : dict
        Column -> the category labels (code i is ``categories[col][i]``).
    """

    columns: tuple[str, ...]
    is_numeric: np.ndarray
    inv_range: np.ndarray
    released: np.ndarray
    original: np.ndarray
    control: np.ndarray | None
    categories: dict = field(default_factory=dict, repr=False)

    def index(self, names: Sequence[str]) -> np.ndarray:
        """Positions of ``names`` among the encoded columns."""
        pos = {c: i for i, c in enumerate(self.columns)}
        return np.array([pos[c] for c in names], dtype=np.int64)


def as_frame(data: FrameLike, what: str) -> pd.DataFrame:
    """The DataFrame of a Microdata or DataFrame argument (never copied or modified)."""
    if isinstance(data, Microdata):
        return data.frame
    if isinstance(data, pd.DataFrame):
        return data
    raise InputError(f"the {what} data must be a pandas DataFrame or a Microdata; got "
                     f"{type(data).__name__}.")


def numeric_columns(frames: Sequence[pd.DataFrame], columns: Sequence[str], *,
                    numeric: Sequence[str] | None = None,
                    categorical: Sequence[str] | None = None) -> set[str]:
    """The columns treated as numeric: those named in ``numeric``, else those whose dtype is
    numeric (not boolean) in every frame, less those named in ``categorical``."""
    if numeric is not None:
        return set(numeric)
    cat = set(categorical or ())
    out = set()
    for c in columns:
        if c in cat:
            continue
        if all(pd.api.types.is_numeric_dtype(f[c].dtype) and not pd.api.types.is_bool_dtype(f[c].dtype)
               for f in frames):
            out.add(c)
    return out


def microdata_numeric(*data: FrameLike) -> list[str] | None:
    """For Microdata arguments: their declared numeric variables and weight (the other
    columns are categorical, as sdckit's roles say); None when none is a Microdata."""
    mds = [d for d in data if isinstance(d, Microdata)]
    if not mds:
        return None
    out: list[str] = []
    for md in mds:
        out += list(md.numeric_vars) + ([md.weight] if md.weight else [])
    return sorted(set(out))


def label_of(v) -> str:
    """The printed form of a category: integral numbers without a decimal point."""
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return str(v)


def _joint_codes(series: Sequence[pd.Series]) -> tuple[list[np.ndarray], list[str]]:
    """Codes of one categorical column in several frames on one category list (sorted)."""
    per = [pd.factorize(s, use_na_sentinel=True) for s in series]
    labels = sorted({label_of(u) for _, uniq in per for u in uniq})
    where = {lab: i for i, lab in enumerate(labels)}
    out = []
    for codes, uniq in per:
        lut = np.array([where[label_of(u)] for u in uniq] + [np.nan], dtype=np.float64)
        out.append(lut[np.where(codes < 0, len(uniq), codes)])
    return out, labels


def encode_frames(released: FrameLike, original: FrameLike, control: FrameLike | None = None, *,
                  columns: Sequence[str] | None = None, numeric: Sequence[str] | None = None,
                  categorical: Sequence[str] | None = None) -> EncodedFrames:
    """Encode the three files on the columns they share (or ``columns``).

    Parameters
    ----------
    released, original, control : DataFrame or Microdata
        The released file, the original records it was made from, and records of the same
        population that it was not made from (optional).
    columns : sequence of str, optional
        The columns to encode; default: every column of the released file that the original
        (and the control) also has.
    numeric, categorical : sequence of str, optional
        Which columns are numeric; default: Microdata roles (numeric variables and weight),
        else every column with a numeric dtype in all files, less ``categorical``.

    Raises
    ------
    InputError
        If a named column is missing from a file, or no column is shared.
    """
    rel = as_frame(released, "released")
    ori = as_frame(original, "original")
    con = None if control is None else as_frame(control, "control")
    frames = [rel, ori] + ([con] if con is not None else [])
    names = ["released", "original"] + (["control"] if con is not None else [])
    if columns is None:
        columns = [c for c in rel.columns if all(c in f.columns for f in frames[1:])]
        if not columns:
            raise InputError("the released and original files share no column; an attack needs the "
                             "columns the release publishes about the same people.")
    columns = [str(c) for c in columns]
    for f, name in zip(frames, names):
        for c in columns:
            if c not in f.columns:
                raise InputError(f"the {name} data have no column {c!r}; "
                                 f"{close_names(c, [str(x) for x in f.columns])}")
    if numeric is None and categorical is None:
        numeric = microdata_numeric(released, original, *(() if control is None else (control,)))
    num = numeric_columns(frames, columns, numeric=numeric, categorical=categorical)
    arrays = [np.empty((len(f), len(columns)), dtype=np.float64) for f in frames]
    is_num = np.zeros(len(columns), dtype=bool)
    inv_range = np.ones(len(columns))
    categories: dict[str, list[str]] = {}
    for j, c in enumerate(columns):
        if c in num:
            vals = []
            for f, name in zip(frames, names):
                try:
                    vals.append(pd.to_numeric(f[c], errors="raise").to_numpy(dtype=np.float64, na_value=np.nan))
                except (TypeError, ValueError):
                    raise InputError(f"the {name} data: column {c!r} is declared numeric but holds "
                                     "values that are not numbers; declare it categorical.") from None
            lo = min((np.nanmin(v) for v in vals if np.isfinite(v).any()), default=0.0)
            hi = max((np.nanmax(v) for v in vals if np.isfinite(v).any()), default=0.0)
            is_num[j] = True
            inv_range[j] = 1.0 / (hi - lo) if hi > lo else 1.0
        else:
            vals, labels = _joint_codes([f[c] for f in frames])
            categories[c] = labels
        for a, v in zip(arrays, vals):
            a[:, j] = v
    return EncodedFrames(tuple(columns), is_num, inv_range, arrays[0], arrays[1],
                         arrays[2] if con is not None else None, categories)


def missing_as_code(data: np.ndarray, is_num: np.ndarray, *, copy: bool = True) -> np.ndarray:
    """``data`` (a copy unless ``copy=False``) with a missing value of a categorical column
    coded -1 instead of NaN (what the distance and density kernels expect: missing is one
    more category there); C-contiguous."""
    out = np.array(data, dtype=np.float64, copy=True) if copy else np.ascontiguousarray(data, dtype=np.float64)
    cat = ~np.asarray(is_num, dtype=bool)
    if cat.any():
        block = out[:, cat]
        block[np.isnan(block)] = -1.0
        out[:, cat] = block
    return out


def discriminating_order(data: np.ndarray, columns: np.ndarray, is_num: np.ndarray, inv_range: np.ndarray,
                         rng: np.random.Generator, n_pairs: int = 2000) -> np.ndarray:
    """``columns`` ordered by their mean distance between random pairs of records of ``data``,
    largest first: the order in which a nearest-neighbour search abandons a far candidate
    soonest. The order changes only the speed, never the neighbours found."""
    columns = np.asarray(columns)
    n = data.shape[0]
    if n < 2 or columns.size < 2:
        return columns
    a = data[rng.integers(0, n, n_pairs)][:, columns]
    b = data[rng.integers(0, n, n_pairs)][:, columns]
    num, inv = is_num[columns], inv_range[columns]
    miss_a, miss_b = np.isnan(a), np.isnan(b)
    diff = np.where(num, np.minimum(np.abs(a - b) * inv, 1.0), (a != b).astype(float))
    diff = np.where(miss_a | miss_b, np.where(miss_a & miss_b, 0.0, 1.0), diff)
    return columns[np.argsort(-diff.mean(axis=0), kind="stable")]
