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
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from ..errors import InputError
from ..microdata import Microdata, value_codes

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
        codes, distinct = value_codes(values)       # distinct non-missing values, one pass
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


def _combine(codes: np.ndarray | None, bound: int, column_codes: np.ndarray,
             k: int) -> tuple[np.ndarray, int]:
    """``codes * k + column_codes`` (codes below ``bound``), re-compressed to dense ids first
    when the product could overflow int64; the new codes and their bound."""
    if codes is None:
        return column_codes.astype(np.int64), k
    if bound > np.iinfo(np.int64).max // k:
        codes, uniques = pd.factorize(codes)
        codes, bound = codes.astype(np.int64), max(len(uniques), 1)
    codes = codes * k
    codes += column_codes
    return codes, bound * k


def row_codes(frame: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
    """One int64 per record, equal iff the records are equal on ``columns`` (missing equals
    missing): a mixed-radix code over each column's value codes (integers counted, other
    values hashed once), re-compressed whenever the next digit could overflow, numbered in
    the order the records first show each combination."""
    codes, bound = None, 1
    n = len(frame)
    for col in columns:
        c, k = value_codes(frame[col])
        if k == n and n > 0:        # a column with a value of its own per record: all rows differ
            return np.arange(n, dtype=np.int64)
        codes, bound = _combine(codes, bound, c.astype(np.int64) + 1, k + 1)   # missing -> 0
    if codes is None:
        codes = np.zeros(len(frame), dtype=np.int64)
    return pd.factorize(codes)[0].astype(np.int64)


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
                        columns: Sequence[str] | None = None, *, recodes: Sequence = ()) -> dict:
    """Sample uniques and expected correct exact-match links for an intruder knowing ``columns``.

    ``columns`` defaults to every released column that is also in the original. Both frames
    must have the same rows in the same order (the release's own row order is not yet
    shuffled when this runs). ``recodes`` are the release's published global recodings (step
    objects): the intruder applies them to the original values first, as they are published.

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
    if len(orig) != n:
        raise InputError(f"linkage on all columns: the original has {len(orig)} records and the "
                         f"release {n}; they must match record for record.")
    if not columns or n == 0:
        return {"columns": columns, "n_records": n, "sample_uniques": 0, "sample_unique_share": 0.0,
                "expected_correct_links": 0.0, "correct_link_share": 0.0}
    # the released rows coded among themselves; a target's own released record is among its
    # matches exactly when its original row equals its released row, and then its m matches
    # are the released records equal to that row (the same sums as coding both sides jointly)
    b = row_codes(rel, columns)
    counts = np.bincount(b)
    m = counts[b]
    correct = np.ones(n, dtype=bool) if rel is orig else _rows_equal(orig, rel, columns)
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

    def n_unique(codes: np.ndarray) -> int:
        ids, uniques = pd.factorize(codes)
        return int((np.bincount(ids, minlength=len(uniques))[ids] == 1).sum())

    # the keys' row codes once; each candidate column is one more digit of them
    key_codes = row_codes(frame, keys) if keys else None
    key_bound = int(key_codes.max()) + 1 if key_codes is not None and key_codes.size else 1
    base = n_unique(key_codes) if key_codes is not None else 0
    rows = []
    for c in cands:
        cc, k = value_codes(frame[c])
        if k == len(frame):          # a value of its own per record: every record is unique
            with_c = k
        else:
            with_codes, _ = _combine(key_codes, key_bound, cc.astype(np.int64) + 1, k + 1)
            with_c = n_unique(with_codes)
        if frame[c].dtype == object:                      # None and NaN may count apart there
            n_categories = int(frame[c].nunique(dropna=False))
        else:                                             # nunique(dropna=False): missing counts once
            n_categories = k + int(bool((cc < 0).any()))
        rows.append({"column": str(c), "n_categories": int(n_categories),
                     "uniques_with": with_c, "added_uniques": with_c - base})
    rows.sort(key=lambda r: (-r["added_uniques"], r["column"]))
    return rows[:top] if top else rows
