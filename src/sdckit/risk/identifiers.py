"""Direct identifiers, linkage on every released column, and undeclared quasi-identifiers.

Three checks a steward needs beyond the declared key variables:

* :func:`identifier_check`: a released column that is unique or nearly unique per record
  (share of distinct values among the non-missing values above ``share``), or whose name says
  it is an identifier (id, name, address, phone, email, postcode, date of birth, ...), unless
  it was masked (at least half of its values changed by the steps) or the steward allowed it.
* :func:`linkage_all_columns`: what an intruder who knows a stated set of columns of a person
  (by default every released column) can do with the released file: the number of sample
  uniques on those columns, and the expected share of correct links by exact matching. The
  intruder takes a target's original values, finds the m released records with exactly those
  values, and picks one at random: the link is correct with probability 1/m when the target's
  own released record is among them, 0 otherwise (Domingo-Ferrer & Torra's distance-based
  linkage with the exact-match distance; Hundepool et al. 2012, section 3.3.5).
* :func:`undeclared_scan`: each column that is not a declared key, ranked by how many sample
  uniques it adds to the declared keys.

References
----------
Hundepool, A. et al. (2012). *Statistical Disclosure Control*. Wiley. Sections 3.3 and 3.4.
Domingo-Ferrer, J. and Torra, V. (2001). Disclosure risk assessment in statistical data
protection. *Journal of Computational and Applied Mathematics* 164, 285-293.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from ..errors import InputError
from ..microdata import Microdata, value_codes
from .frequencies import DENSE_LIMIT

#: name tokens that mark a direct identifier (matched on lower-case word tokens of the name)
IDENTIFIER_TOKENS = frozenset({
    "id", "ids", "identifier", "uuid", "guid", "name", "names", "surname", "forename",
    "firstname", "lastname", "fullname", "address", "street", "phone", "telephone", "mobile",
    "tel", "email", "mail", "postcode", "zipcode", "zip", "ssn", "nino", "passport", "iban",
    "account", "licence", "license", "dob", "birthdate", "nhs", "mrn", "url", "ip",
})
#: multi-word phrases that mark a direct identifier
IDENTIFIER_PHRASES = ("date of birth", "birth date", "postal code", "post code", "e mail",
                      "social security", "national insurance", "first name", "last name",
                      "family name", "given name", "phone number", "record number")


def _tokens(name: str) -> list[str]:
    # split camelCase and non-alphanumerics: "PersonID" -> person id, "hh_id" -> hh id
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", str(name))
    spaced = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", spaced)
    return [t for t in re.split(r"[^a-z0-9]+", spaced.lower()) if t]


def name_says_identifier(name: str) -> str | None:
    """The token or phrase of ``name`` that marks it as an identifier, or None."""
    toks = _tokens(name)
    text = " ".join(toks)
    for phrase in IDENTIFIER_PHRASES:
        if f" {phrase} " in f" {text} ":
            return phrase
    for t in toks:
        if t in IDENTIFIER_TOKENS:
            return t
    # glued forms: "hhid", "personid", "pid"
    joined = "".join(toks)
    if len(joined) <= 12 and joined.endswith("id") and joined not in ("paid", "void", "said", "valid", "covid"):
        return "id"
    return None


#: value codes of the columns of live frames (frame id -> (weak reference, {column: codes})): the
#: gate, the reports and the certificate ask the same questions of the same read-only frames
_FRAME_CODES: dict[int, tuple[weakref.ref, dict]] = {}


def column_codes(frame: pd.DataFrame, col) -> tuple[np.ndarray, int]:
    """:func:`sdckit.microdata.value_codes` of ``frame[col]``, computed once per column while the
    frame lives (a Microdata's frame is read-only). Integer columns are counted again each
    time (a min, a max and one pass); the hashed ones (floats, text) are kept, as int32 codes
    where they fit."""
    col_values = frame[col]
    if isinstance(col_values.dtype, np.dtype) and col_values.dtype.kind in "iu":
        return value_codes(col_values)
    key = id(frame)
    entry = _FRAME_CODES.get(key)
    if entry is None or entry[0]() is not frame:
        try:
            ref = weakref.ref(frame, lambda _ref, key=key: _FRAME_CODES.pop(key, None))
        except TypeError:
            return value_codes(col_values)
        entry = _FRAME_CODES[key] = (ref, {})
    found = entry[1].get(col)
    if found is None:
        codes, k = value_codes(col_values)
        if k < np.iinfo(np.int32).max:
            codes = codes.astype(np.int32, copy=False)
        codes.flags.writeable = False
        found = entry[1][col] = (codes, k)
    return found


def _changed_share(original: pd.Series, released: pd.Series) -> float:
    a = original.reset_index(drop=True)
    b = released.reset_index(drop=True)
    if all(isinstance(s.dtype, np.dtype) and s.dtype.kind in "iuf" for s in (a, b)):
        # numbers compare as numbers: the same as comparing them as Python objects
        x, y = a.to_numpy(), b.to_numpy()
        same = (x == y) | (pd.isna(x) & pd.isna(y))
        return float(1.0 - same.mean()) if len(a) else 0.0
    same = (a.astype(object) == b.astype(object)) | (a.isna() & b.isna())
    return float(1.0 - same.mean()) if len(a) else 0.0


def identifier_check(original: Microdata, released: Microdata, *, allow: Iterable[str] = (),
                     share: float = 0.9) -> list[dict]:
    """The released columns that look like direct identifiers, with the reason for each.

    Parameters
    ----------
    original, released : Microdata
        The input and the data about to be released (same rows, same order).
    allow : iterable of str
        Columns the steward accepts as released identifiers (``[gate] allow_identifiers``).
    share : float
        A column whose share of distinct values among its non-missing values exceeds this is
        "nearly unique per record".

    Returns
    -------
    list of dict
        One entry per flagged column: ``column``, ``reason`` (one line), ``distinct_share``,
        ``allowed`` (bool), ``masked`` (bool). Only entries with ``allowed`` and ``masked``
        both false fail the gate.
    """
    allow = set(allow)
    key = (id(original), id(released), tuple(sorted(map(str, allow))), float(share))
    last = _LAST_CHECK.get("key")
    if last is not None and last[0] == key and last[1] is original and last[2] is released:
        return [dict(entry) for entry in last[3]]   # the gate and the report ask the same question
    rel = released.frame
    orig = original.frame
    n = len(rel)
    out = []
    for col in rel.columns:
        values = rel[col]
        codes, distinct = column_codes(rel, col)    # distinct non-missing values, one pass
        n_present = int(np.count_nonzero(codes >= 0))
        dshare = distinct / n_present if n_present else 0.0
        marker = name_says_identifier(col)
        unique = n >= 20 and n_present >= 20 and dshare > share
        if not (unique or marker):
            continue
        masked = col in orig.columns and _changed_share(orig[col], values) >= 0.5
        if unique and marker:
            reason = (f"its name says it is an identifier ({marker!r}) and {dshare:.1%} of its "
                      f"values are distinct")
        elif unique:
            reason = f"{dshare:.1%} of its {n_present} values are distinct (above {share:.0%})"
        else:
            reason = f"its name says it is an identifier ({marker!r})"
        out.append({"column": str(col), "reason": reason, "distinct_share": dshare,
                    "name_marker": marker, "nearly_unique": bool(unique),
                    "allowed": col in allow, "masked": bool(masked)})
    _LAST_CHECK["key"] = (key, original, released, [dict(entry) for entry in out])
    return out


#: the last identifier check (its inputs held, so an id cannot be reused by other data)
_LAST_CHECK: dict = {}


def _combine(codes: np.ndarray | None, bound: int, digit: np.ndarray,
             k: int) -> tuple[np.ndarray, int]:
    """``codes * k + digit`` (codes below ``bound``), re-compressed to dense ids first
    when the product could overflow int64; the new codes and their bound."""
    if codes is None:
        return digit.astype(np.int64), k
    if bound > np.iinfo(np.int64).max // k:
        codes, uniques = pd.factorize(codes)
        codes, bound = codes.astype(np.int64), max(len(uniques), 1)
    codes = codes * k
    codes += digit
    return codes, bound * k


def row_codes(frame: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
    """One int64 per record, equal iff the records are equal on ``columns`` (missing equals
    missing): a mixed-radix code over each column's value codes (integers counted, other
    values hashed once), re-compressed whenever the next digit could overflow, numbered in
    the order the records first show each combination."""
    codes, _ = _mixed_radix(frame, columns)
    return pd.factorize(codes)[0].astype(np.int64)


def _mixed_radix(frame: pd.DataFrame, columns: Sequence[str], dense_limit: int | None = None
                 ) -> tuple[np.ndarray, int]:
    """The mixed-radix codes of :func:`row_codes` before their renumbering, and their bound
    (every code is below it); with ``dense_limit``, renumbered to dense ids only when the bound
    is above it (what a ``bincount`` of the codes needs, in any numbering)."""
    codes, bound = None, 1
    n = len(frame)
    for col in columns:
        c, k = column_codes(frame, col)
        if k == n and n > 0:        # a column with a value of its own per record: all rows differ
            return np.arange(n, dtype=np.int64), n
        codes, bound = _combine(codes, bound, c.astype(np.int64) + 1, k + 1)   # missing -> 0
    if codes is None:
        return np.zeros(n, dtype=np.int64), 1
    if dense_limit is not None and bound > dense_limit:
        codes, uniques = pd.factorize(codes)
        codes, bound = codes.astype(np.int64), max(len(uniques), 1)
    return codes, bound


def _rows_equal(original: pd.DataFrame, released: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
    """Per record: whether its original and released rows are equal on ``columns`` (missing
    equals missing; values compared as one column of both, as :func:`row_codes` of the two
    frames one after the other would code them)."""
    n = len(released)
    same = np.ones(n, dtype=bool)
    for col in columns:
        x, y = original[col].reset_index(drop=True), released[col].reset_index(drop=True)
        if x.dtype != y.dtype:                    # compared in the dtype of the two together
            both = pd.concat([x, y], ignore_index=True)
            x, y = both.iloc[:n], both.iloc[n:]
        xv, yv = x.to_numpy(), y.to_numpy()
        with np.errstate(invalid="ignore"):
            same &= (xv == yv) | (pd.isna(xv) & pd.isna(yv))
    return same


def linkage_all_columns(original: Microdata, released: Microdata,
                        columns: Sequence[str] | None = None, *, recodes: Sequence = (),
                        record_for_record: bool = True) -> dict:
    """Sample uniques and expected correct exact-match links for an intruder knowing ``columns``.

    ``columns`` defaults to every released column that is also in the original. Both frames
    must have the same rows in the same order (the release's own row order is not yet
    shuffled when this runs). ``recodes`` are the release's published global recodings (step
    objects): the intruder applies them to the original values first, as they are published.
    ``record_for_record=False`` (a synthetic file of another size, whose records stand for no
    original record): no released record is a respondent's own, so no link is correct.

    Returns
    -------
    dict
        ``columns`` (list), ``n_records``, ``sample_uniques`` (released records unique on the
        columns), ``sample_unique_share``, ``expected_correct_links`` (sum over records of
        1/m when the record's own released version is among its m exact matches) and
        ``correct_link_share`` (that sum / n): the share of records an intruder re-identifies
        by exact matching, in expectation.
    """
    for step in recodes:
        original = step.apply(original).microdata
    rel, orig = released.frame, original.frame
    if columns is None:
        columns = [c for c in rel.columns if c in orig.columns]
    columns = list(columns)
    missing = [c for c in columns if c not in rel.columns or c not in orig.columns]
    if missing:
        raise InputError(f"linkage on all columns: {missing} not in both the original and the "
                         "released data; name released columns only.")
    n = len(rel)
    if len(orig) != n and record_for_record:
        raise InputError(f"linkage on all columns: the original has {len(orig)} records and the "
                         f"release {n}; they must match record for record.")
    if not columns or n == 0:
        return {"columns": columns, "n_records": n, "sample_uniques": 0, "sample_unique_share": 0.0,
                "expected_correct_links": 0.0, "correct_link_share": 0.0}
    # the released rows coded among themselves; a target's own released record is among its
    # matches exactly when its original row equals its released row, and then its m matches
    # are the released records equal to that row (the same sums as coding both sides jointly)
    b, bound = _mixed_radix(rel, columns, max(DENSE_LIMIT, 4 * n))
    m = np.bincount(b, minlength=bound)[b]
    correct = (np.zeros(n, dtype=bool) if not record_for_record else
               np.ones(n, dtype=bool) if rel is orig else _rows_equal(orig, rel, columns))
    expected = float(np.where(correct, 1.0 / m, 0.0).sum())
    uniques = int((m == 1).sum())
    return {"columns": columns, "n_records": n, "sample_uniques": uniques,
            "sample_unique_share": uniques / n, "expected_correct_links": expected,
            "correct_link_share": expected / n}


def undeclared_scan(microdata: Microdata, *, columns: Sequence[str] | None = None,
                    top: int | None = None) -> list[dict]:
    """Rank the columns that are not declared keys by the sample uniques they add to the keys.

    For each candidate column c: the number of records unique on key_vars + [c], minus the
    number unique on key_vars alone (with no declared keys, the uniques on c alone).

    Returns
    -------
    list of dict
        ``column``, ``n_categories``, ``uniques_with`` and ``added_uniques``, largest first.
    """
    frame = microdata.frame
    keys = list(microdata.key_vars)
    cands = [c for c in (columns or frame.columns) if c not in keys]

    n = len(frame)

    def n_unique(codes: np.ndarray, bound: int) -> int:
        # records whose code no other record has: counted densely when the codes' range is
        # small (row codes are dense ids already), else over the ids of a hash factorisation
        if bound > max(DENSE_LIMIT, 4 * n):
            codes, uniques = pd.factorize(codes)
            bound = len(uniques)
        return int(np.count_nonzero(np.bincount(codes, minlength=bound)[codes] == 1))

    # the keys' row codes once; each candidate column is one more digit of them
    key_codes, key_bound = _mixed_radix(frame, keys, max(DENSE_LIMIT, 4 * n)) if keys else (None, 1)
    base = n_unique(key_codes, key_bound) if key_codes is not None else 0
    # a record unique on the keys stays unique with one more column; the others are unique on
    # keys + c exactly when unique among the records of the keys' shared combinations
    shared = None
    if key_codes is not None and base:
        shared = np.flatnonzero(np.bincount(key_codes, minlength=key_bound)[key_codes] > 1)
    rows = []
    for c in cands:
        cc, k = column_codes(frame, c)
        if k == n:                   # a value of its own per record: every record is unique
            with_c = k
        elif shared is not None:
            with_codes, bound = _combine(key_codes[shared], key_bound, cc[shared].astype(np.int64) + 1, k + 1)
            with_c = base + n_unique(with_codes, bound)
        else:
            with_codes, bound = _combine(key_codes, key_bound, cc.astype(np.int64) + 1, k + 1)
            with_c = n_unique(with_codes, bound)
        if frame[c].dtype == object:                      # None and NaN may count apart there
            n_categories = int(frame[c].nunique(dropna=False))
        else:                                             # nunique(dropna=False): missing counts once
            n_categories = k + int(bool((cc < 0).any()))
        rows.append({"column": str(c), "n_categories": int(n_categories),
                     "uniques_with": with_c, "added_uniques": with_c - base})
    rows.sort(key=lambda r: (-r["added_uniques"], r["column"]))
    return rows[:top] if top else rows
