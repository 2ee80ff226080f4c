"""Singling out: predicates read from the release that isolate exactly one original record.

The Article 29 Working Party (2014, sec. 2.2.3) calls singling out the possibility to isolate
some or all records that identify an individual. Following Cohen & Nissim (2020) and Anonymeter
(Giomi et al. 2023, sec. 4.1), the intruder writes predicates from the released file alone:

* univariate: a value that occurs once in the release (``col == v``), the smallest or largest
  value of a numeric column (``col <= min``, ``col >= max``), a column missing in exactly one
  record (``col is missing``);
* multivariate: a random released record and ``n_cols`` random columns; a categorical value
  gives ``col == v``, a numeric one ``col >= v`` when it lies above the column's median in the
  release and ``col <= v`` otherwise (reaching for the extremes).

A predicate is kept when it isolates exactly one released record; up to ``n_attacks`` distinct
predicates are kept (at most ``max_attempts`` are tried). The success on the original records
is the number of kept predicates that match exactly one original record, out of
``n_attacks``; the same predicates on the control records give the control success; and
``n_attacks`` random predicates (random columns, a random released value, a random operator)
on the original records give the naive baseline. As in Anonymeter, records repeated on every
attacked column count once in each file.

The intruder's predicates can also be given (``queries``: e.g. those another tool wrote, so that
two implementations are compared on the same predicates); :func:`singling_out_queries` returns
the predicates :func:`singling_out` writes, in the same form. A predicate is a sequence of terms
``(column, operator, value)`` joined by *and*; the operators are ``==``, ``!=``, ``<``, ``<=``,
``>``, ``>=`` (a missing value satisfies none of them, as SQL's NULL), ``is_null`` and
``not_null`` (value ``None``). A categorical value is compared by its printed form (``1``,
``1.0`` and ``"1"`` are one category) and ordered as text.

A control file of another size than the original is made comparable. With more control
records, the control count is the exact expected count on a random subset of the original's
size (hypergeometric, from each predicate's count on all control records). With fewer, the
count is scaled by the model of Cohen & Nissim (2020, sec. 4): a predicate of weight w isolates
one of n records with probability ``n w (1 - w)^(n - 1)``; the count over a set of predicates
is modelled as ``c * F(n, w_e)`` with ``F(n, w) = (1 - (n w + 1)(1 - w)^n) / (n + 1)`` (that
probability integrated over weights up to ``w_e``), fitted to the exact expected counts on
subsets of the control records (Anonymeter fits the same model to random subsamples).

References
----------
Article 29 Data Protection Working Party (2014). Opinion 05/2014 on anonymisation techniques.
Cohen, A. and Nissim, K. (2020). Towards formalizing the GDPR's notion of singling out.
*PNAS* 117(15), 8344-8352.
Giomi, M. et al. (2023). A unified framework for quantifying privacy risk in synthetic data.
*PETS* 2023(2), 312-328.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .._random import as_generator
from .._validation import check_choice, check_int
from ..errors import InputError
from .encode import EncodedFrames, FrameLike, encode_frames, label_of
from .kernels import (
    OP_EQ,
    OP_GE,
    OP_GT,
    OP_ISNULL,
    OP_LE,
    OP_LT,
    OP_NE,
    OP_NOTNULL,
    count_matches,
    count_matches_indexed,
)
from .results import AttackResult, attack_result

__all__ = ["singling_out", "singling_out_queries", "Predicates", "Records", "OPERATORS"]

_OWNER = "singling_out"

#: from this many records on, predicates are counted through sorted column orders
INDEX_FROM = 50_000

#: the operators of a predicate term, by name (see the module docstring)
OPERATORS = {"==": OP_EQ, "!=": OP_NE, "<": OP_LT, "<=": OP_LE, ">": OP_GT, ">=": OP_GE,
             "is_null": OP_ISNULL, "not_null": OP_NOTNULL}
_OP_NAMES = {v: k for k, v in OPERATORS.items()}


class Records:
    """Encoded records that predicates are counted on, with sorted column orders for large
    files (a predicate then scans only the records its most selective term allows)."""

    def __init__(self, data: np.ndarray, *, index: bool | None = None):
        self.data = np.ascontiguousarray(data, dtype=np.float64)
        n, d = self.data.shape
        self.indexed = n >= INDEX_FROM if index is None else index
        if self.indexed:
            self.order = np.empty((d, n), dtype=np.int32)
            self.sorted = np.empty((d, n))
            self.n_valid = np.empty(d, dtype=np.int64)
            for c in range(d):
                col = self.data[:, c]
                o = np.argsort(col)                       # NaN sorts last
                self.order[c] = o
                self.sorted[c] = col[o]
                self.n_valid[c] = int(np.count_nonzero(~np.isnan(col)))

    @property
    def n(self) -> int:
        return self.data.shape[0]


class Predicates:
    """A set of conjunctive predicates as arrays: column, operator and value per term."""

    def __init__(self, cols: np.ndarray, ops: np.ndarray, vals: np.ndarray, n_terms: np.ndarray):
        self.cols = np.ascontiguousarray(cols, dtype=np.int64)
        self.ops = np.ascontiguousarray(ops, dtype=np.int64)
        self.vals = np.ascontiguousarray(vals, dtype=np.float64)
        self.n_terms = np.ascontiguousarray(n_terms, dtype=np.int64)

    def __len__(self) -> int:
        return int(self.n_terms.shape[0])

    def take(self, which) -> Predicates:
        return Predicates(self.cols[which], self.ops[which], self.vals[which], self.n_terms[which])

    def counts(self, records, stop_at: int = 2) -> np.ndarray:
        """Records each predicate matches (counted up to ``stop_at``); ``records`` is a
        :class:`Records` or an array."""
        if len(self) == 0:
            return np.zeros(0, dtype=np.int64)
        if not isinstance(records, Records):
            records = Records(records, index=False)
        if records.indexed:
            return count_matches_indexed(records.data, records.order, records.sorted, records.n_valid, self.cols,
                                         self.ops, self.vals, self.n_terms, stop_at)
        return count_matches(records.data, self.cols, self.ops, self.vals, self.n_terms, stop_at)

    def keys(self) -> list[bytes]:
        """One key per predicate, equal for equal predicates (terms sorted by column)."""
        return [self.cols[i].tobytes() + self.ops[i].tobytes() + np.nan_to_num(self.vals[i], nan=-1.5e308).tobytes()
                for i in range(len(self))]

    @staticmethod
    def concat(parts: Sequence[Predicates]) -> Predicates:
        width = max((p.cols.shape[1] for p in parts), default=1)

        def pad(a, fill):
            return np.pad(a, ((0, 0), (0, width - a.shape[1])), constant_values=fill)

        return Predicates(np.concatenate([pad(p.cols, 0) for p in parts]),
                          np.concatenate([pad(p.ops, OP_NOTNULL) for p in parts]),
                          np.concatenate([pad(p.vals, 0.0) for p in parts]),
                          np.concatenate([p.n_terms for p in parts]))


def unique_rows(data: np.ndarray) -> np.ndarray:
    """The distinct rows of ``data`` (missing values equal each other), first occurrences kept."""
    if data.shape[0] == 0:
        return data
    dup = pd.DataFrame(data).duplicated().to_numpy()
    return data[~dup] if dup.any() else data


def _multivariate(records: Records, is_num: np.ndarray, n_queries: int, n_cols: int,
                  max_attempts: int, rng: np.random.Generator, batch: int = 1000) -> tuple[Predicates, int]:
    rel = records.data
    n, d = rel.shape
    n_cols = min(n_cols, d)
    with np.errstate(all="ignore"):
        medians = np.array([np.nanmedian(rel[:, j]) if is_num[j] and np.isfinite(rel[:, j]).any() else np.nan
                            for j in range(d)])
    kept: list[Predicates] = []
    seen: set[bytes] = set()
    n_kept = attempts = 0
    while n_kept < n_queries and attempts < max_attempts and n > 0:
        b = min(batch, max_attempts - attempts)
        rows = rng.integers(0, n, b)
        cols = np.sort(np.argsort(rng.random((b, d)), axis=1)[:, :n_cols], axis=1)
        vals = rel[rows[:, None], cols]
        num = is_num[cols]
        ops = np.where(num & (vals > medians[cols]), OP_GE, np.where(num, OP_LE, OP_EQ))
        ops = np.where(np.isnan(vals), OP_ISNULL, ops)
        preds = Predicates(cols, ops, vals, np.full(b, n_cols))
        singles = np.flatnonzero(preds.counts(records, stop_at=2) == 1)
        take = []
        keys = preds.take(singles).keys()
        for i, key in zip(singles, keys):
            if key not in seen:
                seen.add(key)
                take.append(i)
                if n_kept + len(take) >= n_queries:
                    break
        if take:
            kept.append(preds.take(np.array(take)))
            n_kept += len(take)
        attempts += b
    out = Predicates.concat(kept) if kept else Predicates(np.zeros((0, n_cols)), np.zeros((0, n_cols)),
                                                          np.zeros((0, n_cols)), np.zeros(0))
    return out, attempts


def _univariate(records: Records, is_num: np.ndarray, n_queries: int,
                rng: np.random.Generator) -> Predicates:
    rel = records.data
    cols, ops, vals = [], [], []
    for j in range(rel.shape[1]):
        x = rel[:, j]
        miss = np.isnan(x)
        if miss.sum() == 1:
            cols.append(j), ops.append(OP_ISNULL), vals.append(np.nan)
        present = x[~miss]
        if present.size == 0:
            continue
        if is_num[j]:
            cols += [j, j]
            ops += [OP_LE, OP_GE]
            vals += [present.min(), present.max()]
        uniq, cnt = np.unique(present, return_counts=True)
        rare = uniq[cnt == 1]
        cols += [j] * rare.size
        ops += [OP_EQ] * rare.size
        vals += rare.tolist()
    if not cols:
        return Predicates(np.zeros((0, 1)), np.zeros((0, 1)), np.zeros((0, 1)), np.zeros(0))
    order = rng.permutation(len(cols))
    preds = Predicates(np.array(cols)[order, None], np.array(ops)[order, None],
                       np.array(vals, dtype=np.float64)[order, None], np.ones(len(cols)))
    singles = np.flatnonzero(preds.counts(records, stop_at=2) == 1)
    keys = preds.take(singles).keys()
    seen, take = set(), []
    for i, key in zip(singles, keys):
        if key not in seen:
            seen.add(key)
            take.append(i)
            if len(take) >= n_queries:
                break
    return preds.take(np.array(take, dtype=np.int64))


def _random_predicates(rel: np.ndarray, is_num: np.ndarray, n_queries: int, n_cols: int,
                       rng: np.random.Generator) -> Predicates:
    """The naive attacker: random columns, a random released value, a random operator."""
    d = rel.shape[1]
    n_cols = min(n_cols, d)
    values = []
    for j in range(d):
        x = rel[:, j]
        u = np.unique(x[~np.isnan(x)])
        values.append(np.append(u, np.nan) if np.isnan(x).any() else u)
    cols = np.sort(np.argsort(rng.random((n_queries, d)), axis=1)[:, :n_cols], axis=1)
    vals = np.empty(cols.shape)
    ops = np.empty(cols.shape, dtype=np.int64)
    num_ops = np.array([OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE])
    cat_ops = np.array([OP_EQ, OP_NE])
    for i in range(n_queries):
        for t in range(n_cols):
            j = cols[i, t]
            if values[j].size == 0:
                vals[i, t], ops[i, t] = np.nan, OP_ISNULL
                continue
            v = values[j][rng.integers(values[j].size)]
            op = rng.choice(num_ops if is_num[j] else cat_ops)
            if np.isnan(v):
                op = OP_ISNULL if op == OP_EQ else OP_NOTNULL
            vals[i, t], ops[i, t] = v, op
    return Predicates(cols, ops, vals, np.full(n_queries, n_cols))


def _value_code(enc: EncodedFrames, name: str, value, where: str) -> float:
    """A predicate value on the encoding: a number for a numeric column; for a categorical one
    its code, or (a value no file holds) a code between its neighbours in the sorted labels,
    so that ``==`` matches nothing and ``<``/``>`` order it as text."""
    j = enc.columns.index(name)
    if enc.is_numeric[j]:
        try:
            return float(value)
        except (TypeError, ValueError):
            raise InputError(f"{where}: the column {name!r} is numeric; the value {value!r} is not a "
                             "number.") from None
    labels = enc.categories[name]
    lab = label_of(value)
    pos = bisect.bisect_left(labels, lab)        # the labels are sorted as text
    if pos < len(labels) and labels[pos] == lab:
        return float(pos)
    return pos - 0.5


def encode_queries(enc: EncodedFrames, cols: np.ndarray, queries) -> Predicates:
    """Predicates in the public form (see the module docstring) on the encoding of ``cols``."""
    names = [enc.columns[i] for i in cols]
    where_col = {c: i for i, c in enumerate(names)}
    rows = []
    for q, query in enumerate(queries):
        where = f"singling_out: query {q}"
        if isinstance(query, tuple) and len(query) == 3 and isinstance(query[1], str) and query[1] in OPERATORS:
            query = [query]          # one term given alone
        terms = []
        for term in query:
            try:
                name, op, value = term
            except (TypeError, ValueError):
                raise InputError(f"{where}: a term is (column, operator, value); got {term!r}.") from None
            if name not in where_col:
                raise InputError(f"{where}: the column {name!r} is not among the attacked columns {names}.")
            if op not in OPERATORS:
                raise InputError(f"{where}: unknown operator {op!r}; use one of {', '.join(OPERATORS)}.")
            code = np.nan if op in ("is_null", "not_null") else _value_code(enc, name, value, where)
            terms.append((where_col[name], OPERATORS[op], code))
        if not terms:
            raise InputError(f"{where}: a query needs at least one term.")
        rows.append(sorted(terms, key=lambda t: (t[0], t[1])))
    width = max((len(t) for t in rows), default=1)
    cols_a = np.zeros((len(rows), width), dtype=np.int64)
    ops_a = np.full((len(rows), width), OP_NOTNULL, dtype=np.int64)
    vals_a = np.zeros((len(rows), width))
    for i, terms in enumerate(rows):
        for t, (c, o, v) in enumerate(terms):
            cols_a[i, t], ops_a[i, t], vals_a[i, t] = c, o, v
    return Predicates(cols_a, ops_a, vals_a, np.array([len(t) for t in rows], dtype=np.int64))


def decode_predicates(enc: EncodedFrames, cols: np.ndarray, preds: Predicates) -> list[tuple]:
    """Predicates in the public form: one tuple of ``(column, operator, value)`` terms each."""
    out = []
    for i in range(len(preds)):
        terms = []
        for t in range(int(preds.n_terms[i])):
            j = int(cols[preds.cols[i, t]])
            name, op, v = enc.columns[j], _OP_NAMES[int(preds.ops[i, t])], float(preds.vals[i, t])
            if op in ("is_null", "not_null"):
                value = None
            elif enc.is_numeric[j]:
                value = v
            else:
                value = enc.categories[name][int(v)]
            terms.append((name, op, value))
        out.append(tuple(terms))
    return out


def _size_model(n, w, c):
    """c * F(n, w): expected predicates isolating one of n records (Cohen & Nissim 2020)."""
    n = np.asarray(n, dtype=float)
    return c * (1.0 - (n * w + 1.0) * (1.0 - w) ** n) / (n + 1.0)


def expected_singles(counts: np.ndarray, n_records: int, m) -> np.ndarray:
    """Expected number of predicates isolating exactly one record of a random subset of ``m``
    of ``n_records`` records, from each predicate's count on all of them (hypergeometric:
    ``c * C(N - c, m - 1) / C(N, m)`` summed over the predicates)."""
    from scipy.stats import hypergeom

    m = np.atleast_1d(np.asarray(m))
    return np.array([hypergeom.pmf(1, n_records, counts, mi).sum() for mi in m])


def _control_successes(preds: Predicates, control: Records, n_target: int) -> tuple[float, int, str | None]:
    """Predicates isolating one control record, made comparable to ``n_target`` records, the
    plain count before that, and a note on the correction (None without one).

    With as many control records as original ones, the plain count. With more, the exact
    expectation of the count on a random subset of ``n_target`` control records. With fewer,
    the count scaled by Cohen & Nissim's model ``c * F(n, w)``, fitted to the exact expected
    counts on subsets of 20 sizes up to the control's.
    """
    n_c = control.n
    if n_c == n_target or len(preds) == 0:
        plain = int((preds.counts(control) == 1).sum())
        return float(plain), plain, None
    counts = preds.counts(control, stop_at=n_c + 1)
    plain = int((counts == 1).sum())
    if n_c > n_target:
        return float(expected_singles(counts, n_c, n_target)[0]), plain, (
            f"The control count is the expected count on {n_target:,} of the {n_c:,} distinct control "
            "records (as many as the original's).")
    from scipy.optimize import curve_fit

    sizes = np.unique(np.linspace(min(1000, n_c), n_c, 20).astype(int))
    expected = expected_singles(counts, n_c, sizes)
    observed = float(plain)
    w0 = 1.0 / n_c
    c0 = max(observed, 1.0) / max(float(_size_model(n_c, w0, 1.0)), 1e-12)
    try:
        (w, c), _ = curve_fit(_size_model, sizes.astype(float), expected, p0=(w0, c0),
                              bounds=((1e-12, 0.0), (1.0, np.inf)))
        factor = float(_size_model(n_target, w, c) / _size_model(n_c, w, c))
        if not np.isfinite(factor):
            raise ValueError
    except (RuntimeError, ValueError, ZeroDivisionError):
        factor = 1.0
    return min(observed * factor, float(len(preds))), plain, (
        f"The control count was scaled by {factor:.3f} from {n_c:,} to {n_target:,} distinct records "
        "(Cohen & Nissim's model).")


def _prepare(original, released, control, columns, numeric, categorical, encoded, what: str):
    enc = encoded if encoded is not None else encode_frames(released, original, control, columns=columns,
                                                            numeric=numeric, categorical=categorical)
    if enc.control is None:
        raise InputError(f"{what}: needs control records (records the release was not made from).")
    cols = enc.index(columns) if columns is not None else np.arange(len(enc.columns))
    return enc, cols


def _write(rel: Records, is_num: np.ndarray, mode: str, n_attacks: int, n_cols: int, max_attempts: int,
           gen: np.random.Generator) -> tuple[Predicates, int | None]:
    """The intruder's predicates, written from the distinct released records (the first draws
    of ``gen``, so that :func:`singling_out_queries` writes what :func:`singling_out` does)."""
    if mode == "multivariate":
        return _multivariate(rel, is_num, n_attacks, n_cols, max_attempts, gen)
    return _univariate(rel, is_num, n_attacks, gen), None


def singling_out_queries(original: FrameLike, released: FrameLike, control: FrameLike, *,
                         mode: str = "multivariate", n_attacks: int = 500, n_cols: int = 3,
                         max_attempts: int = 10_000_000, columns: Sequence[str] | None = None,
                         numeric: Sequence[str] | None = None, categorical: Sequence[str] | None = None,
                         rng=None, encoded: EncodedFrames | None = None) -> list[tuple]:
    """The predicates :func:`singling_out` writes from the release with the same arguments
    (the same int seed as ``rng``), in the public form of its ``queries``.

    Returns
    -------
    list of tuple
        One tuple of ``(column, operator, value)`` terms per predicate.
    """
    check_choice(_OWNER, "mode", mode, ("multivariate", "univariate"))
    n_attacks = check_int(_OWNER, "n_attacks", n_attacks, min_value=1)
    n_cols = check_int(_OWNER, "n_cols", n_cols, min_value=1)
    max_attempts = check_int(_OWNER, "max_attempts", max_attempts, min_value=1)
    gen = as_generator(rng)
    enc, cols = _prepare(original, released, control, columns, numeric, categorical, encoded, "singling out")
    rel = Records(unique_rows(enc.released[:, cols]))
    preds, _ = _write(rel, enc.is_numeric[cols], mode, n_attacks, n_cols, max_attempts, gen)
    return decode_predicates(enc, cols, preds)


def singling_out(original: FrameLike, released: FrameLike, control: FrameLike, *,
                 mode: str = "multivariate", n_attacks: int | None = None, n_cols: int = 3,
                 max_attempts: int = 10_000_000, columns: Sequence[str] | None = None,
                 numeric: Sequence[str] | None = None, categorical: Sequence[str] | None = None,
                 confidence: float = 0.95, rng=None,
                 encoded: EncodedFrames | None = None, queries: Sequence | None = None) -> AttackResult:
    """Singling-out risk of a release (see the module docstring for the attack).

    Parameters
    ----------
    original : DataFrame or Microdata
        The records the release was made from.
    released : DataFrame or Microdata
        The released (masked or synthetic) file the intruder holds.
    control : DataFrame or Microdata
        Records of the same population that the release was not made from.
    mode : {"multivariate", "univariate"}
    n_attacks : int, optional
        Predicates to write (the denominator of the rates, as in Anonymeter, also when fewer
        could be found: the result then says so). Default 500, or the number of ``queries``.
    n_cols : int
        Columns per multivariate predicate.
    max_attempts : int
        Predicates tried at most while looking for ``n_attacks`` that isolate one record.
    columns, numeric, categorical : sequence of str, optional
        The columns attacked (default: all shared) and which are numeric (see
        :func:`~sdckit.attacks.encode.encode_frames`).
    confidence : float
        Level of the intervals.
    rng : int, Generator or None
        Randomness of the predicates and of the naive attacker.
    encoded : EncodedFrames, optional
        The three files already encoded (then the data arguments are not read again).
    queries : sequence, optional
        The intruder's predicates, evaluated as given instead of written from the release (see
        the module docstring for their form; :func:`singling_out_queries` writes them).
        ``n_attacks`` must be at least their number.
    """
    t0, c0 = time.perf_counter(), time.process_time()
    check_choice(_OWNER, "mode", mode, ("multivariate", "univariate"))
    if n_attacks is None:
        n_attacks = 500 if queries is None else max(len(queries), 1)
    n_attacks = check_int(_OWNER, "n_attacks", n_attacks, min_value=1)
    n_cols = check_int(_OWNER, "n_cols", n_cols, min_value=1)
    max_attempts = check_int(_OWNER, "max_attempts", max_attempts, min_value=1)
    if queries is not None and len(queries) > n_attacks:
        raise InputError(f"singling out: {len(queries):,} queries were given but n_attacks is {n_attacks:,}; "
                         "the rates count out of n_attacks, so give at most that many (or raise n_attacks).")
    gen = as_generator(rng)
    enc, cols = _prepare(original, released, control, columns, numeric, categorical, encoded, "singling out")
    is_num = enc.is_numeric[cols]
    # large files are counted through sorted column orders (see Records): each predicate then
    # scans only the range of its most selective term, in the release while the predicates
    # are written and in the original and control records (measured: at 200,000 records the
    # sorts and indexed counts of the original and control cost a third of their scans)
    rel = Records(unique_rows(enc.released[:, cols]))
    ori = Records(unique_rows(enc.original[:, cols]))
    con = Records(unique_rows(enc.control[:, cols]))
    notes: list[str] = []
    if queries is None:
        preds, attempts = _write(rel, is_num, mode, n_attacks, n_cols, max_attempts, gen)
        if len(preds) < n_attacks:
            notes.append(f"Only {len(preds):,} of the {n_attacks:,} predicates isolating one released record "
                         "could be written; the rates count all asked for, so the risk may be underestimated.")
    else:
        preds, attempts = encode_queries(enc, cols, queries), None
        if len(preds) < n_attacks:
            notes.append(f"{len(preds):,} given predicates were evaluated; the rates count out of "
                         f"n_attacks = {n_attacks:,}.")
    n_success = int((preds.counts(ori) == 1).sum())
    n_control, n_control_plain, note = _control_successes(preds, con, ori.n)
    if note:
        notes.append(note)
    base = _random_predicates(rel.data, is_num, n_attacks, 1 if mode == "univariate" else n_cols, gen)
    n_baseline = int((base.counts(ori) == 1).sum())
    settings = {"mode": mode, "n_cols": n_cols if mode == "multivariate" else 1,
                "columns": [enc.columns[i] for i in cols], "n_predicates": len(preds),
                "predicates": "written from the release" if queries is None else "given",
                "attempts": attempts, "n_released_distinct": rel.n,
                "n_original_distinct": ori.n, "n_control_distinct": con.n,
                "n_control_before_size_correction": n_control_plain}
    return attack_result("singling_out", n_success=n_success, n_attacks=n_attacks, n_control=n_control,
                         n_control_attacks=n_attacks, n_baseline=n_baseline, n_baseline_attacks=n_attacks,
                         confidence=confidence, settings=settings, notes=notes,
                         seconds=time.perf_counter() - t0, cpu_seconds=time.process_time() - c0)
