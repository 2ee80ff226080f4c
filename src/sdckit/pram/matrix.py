"""The PRAM transition matrix: labelled, validated, dense or sparse, and part of the release.

P[k, l] = P(released category l | original category k) (Gouweleeuw et al. 1998; Cator, Hensbergen and Rozenholc
section 1: P(X(i) = l | xi(i) = k) = P_kl). Rows are original categories, columns released
ones; every row sums to 1 within ``ROW_TOLERANCE`` and every entry is >= 0. The steward
publishes P with the data (CSV and JSON with the labels), so analysts can undo its effect
(:mod:`sdckit.pram.estimate`).

For several variables PRAMmed jointly, the categories are the combinations of the variables'
categories (the joint space X = X_1 x ... x X_m of Cator et al., section 1), as tuples of labels in the C
order of ``np.ravel_multi_index`` over the variables' codes; P may then be a
``scipy.sparse`` matrix.

References
----------
Gouweleeuw, J. M., Kooiman, P., Willenborg, L. C. R. J. and de Wolf, P.-P. (1998). Post
randomisation for statistical disclosure control: theory and implementation. *Journal of
Official Statistics* 14(4), 463-478.
Cator, E., Hensbergen, A. and Rozenholc, Y. Statistical disclosure control using PRAM.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..errors import InputError

#: largest allowed |row sum - 1|
ROW_TOLERANCE = 1e-12
#: largest category space held as a dense matrix (8 * 4096**2 bytes = 134 MB)
MAX_DENSE = 4096
#: condition number above which P counts as singular for estimation
MAX_CONDITION = 1e12
_LONG_HEADER = ["original", "released", "probability"]
_JOINT_SEP = " | "


def _plain(label: Any) -> Any:
    """A JSON/CSV friendly label (numpy scalars to Python, tuples kept as tuples)."""
    if isinstance(label, tuple):
        return tuple(_plain(x) for x in label)
    if isinstance(label, np.generic):
        return label.item()
    return label


def label_text(label: Any) -> str:
    """The text of a category label, as the matrix's CSV writes it.

    Parameters
    ----------
    label : object
        One label, or a tuple of labels (one per variable of a joint space).

    Returns
    -------
    str
        ``str(label)``; a tuple's parts joined by ``" | "``.
    """
    if isinstance(label, tuple):
        return _JOINT_SEP.join(str(x) for x in label)
    return str(label)


def show_labels(labels: Sequence[Any], limit: int = 10) -> str:
    """Labels listed for an error message: the first ``limit`` as Python literals, then a count.

    Parameters
    ----------
    labels : sequence
        The labels to name.
    limit : int
        How many to show.

    Returns
    -------
    str
        E.g. ``"'x', 'y' and 3 more"``.
    """
    shown = ", ".join(repr(_plain(x)) for x in list(labels)[:limit])
    return shown + (f" and {len(labels) - limit} more" if len(labels) > limit else "")


@dataclass(frozen=True, eq=False)
class TransitionMatrix:
    """A validated PRAM transition matrix with its category labels.

    Parameters
    ----------
    categories : sequence
        Labels of the categories in order: row/column ``k`` of ``P`` is ``categories[k]``.
        For a joint space, tuples of labels (one per variable) in C order.
    P : array_like or scipy.sparse matrix, shape (L, L)
        P[k, l] = probability that original category k is released as l. Copied (never the
        caller's array); sparse input is kept sparse (CSR).
    variables : sequence of str, optional
        The variable names the matrix is for (one, or several for a joint space).
    name : str, optional
        Where the matrix came from, used in error messages (a file name, "invariant", ...).

    Raises
    ------
    InputError
        Not square, size not matching the labels, repeated labels, non-finite or negative
        entries, or a row not summing to 1 within 1e-12.
    """

    categories: tuple
    P: Any
    variables: tuple = ()
    name: str = "transition matrix"
    _diag: np.ndarray = field(init=False, repr=False, compare=False, default=None)

    def __post_init__(self) -> None:
        cats = tuple(_plain(c) for c in self.categories)
        object.__setattr__(self, "categories", cats)
        variables = (self.variables,) if isinstance(self.variables, str) else tuple(self.variables)
        object.__setattr__(self, "variables", variables)
        where = self.name
        if sp.issparse(self.P):
            P = sp.csr_matrix(self.P, dtype=np.float64, copy=True)
            P.sum_duplicates()
            P.eliminate_zeros()
            values = P.data
        else:
            P = np.array(self.P, dtype=np.float64, copy=True)
            values = P
        if P.ndim != 2 or P.shape[0] != P.shape[1]:
            raise InputError(f"{where}: P must be a square matrix; got shape {P.shape}.")
        L = P.shape[0]
        if len(cats) != L:
            raise InputError(f"{where}: P is {L} x {L} but {len(cats)} category labels were given; "
                             "give one label per row and column.")
        if len(set(cats)) != L:
            seen, dup = set(), []
            for c in cats:
                if c in seen:
                    dup.append(c)
                seen.add(c)
            raise InputError(f"{where}: category labels repeat: {show_labels(dup)}; each label must be unique.")
        if not np.isfinite(values).all():
            raise InputError(f"{where}: P holds non-finite entries (NaN or infinity); every entry "
                             "must be a probability in [0, 1].")
        if (values < 0).any():
            if sp.issparse(P):
                coo = P.tocoo()
                i = int(np.argmin(coo.data))
                r, c, v = coo.row[i], coo.col[i], coo.data[i]
            else:
                r, c = np.unravel_index(int(np.argmin(P)), P.shape)
                v = P[r, c]
            n_neg = int((values < 0).sum())
            raise InputError(f"{where}: P has {n_neg} negative entries, e.g. P[{_plain(cats[r])!r}, "
                             f"{_plain(cats[c])!r}] = {v:.6g}; transition probabilities must be >= 0.")
        sums = np.asarray(P.sum(axis=1)).ravel()
        bad = np.flatnonzero(np.abs(sums - 1.0) > ROW_TOLERANCE)
        if bad.size:
            k = bad[np.argmax(np.abs(sums[bad] - 1.0))]
            raise InputError(f"{where}: {bad.size} rows of P do not sum to 1 (within {ROW_TOLERANCE:g}); "
                             f"e.g. the row of {_plain(cats[k])!r} sums to {sums[k]:.15g}. Rows are the "
                             "original categories: normalise each row (divide it by its sum) or write "
                             "the probabilities with full precision.")
        if not sp.issparse(P):
            P.setflags(write=False)
        object.__setattr__(self, "P", P)
        diag = np.asarray(P.diagonal(), dtype=np.float64).copy()
        diag.setflags(write=False)
        object.__setattr__(self, "_diag", diag)

    # ------------------------------------------------------------------ facts
    @property
    def n_categories(self) -> int:
        return len(self.categories)

    @property
    def is_sparse(self) -> bool:
        return sp.issparse(self.P)

    @property
    def diagonal(self) -> np.ndarray:
        """P[k, k] for every category (read only)."""
        return self._diag

    @property
    def min_diagonal(self) -> float:
        """The smallest probability of keeping a category, over every category."""
        return float(self._diag.min())

    def to_dense(self) -> np.ndarray:
        """P as a dense float64 array (a copy)."""
        if self.is_sparse:
            if self.n_categories > MAX_DENSE:
                raise InputError(f"{self.name}: the matrix has {self.n_categories} categories, too many "
                                 f"for a dense array (limit {MAX_DENSE}); work with the sparse .P.")
            return self.P.toarray()
        return np.array(self.P)

    def is_invariant(self, p: Sequence[float], tol: float = 1e-9) -> bool:
        """Whether ``p @ P == p`` within ``tol`` (max abs difference), for relative frequencies
        ``p`` (counts are normalised first)."""
        return invariance_error(self, p) <= tol

    def condition_number(self) -> float:
        """The 1-norm condition number ||P||_1 ||P^{-1}||_1.

        Exact for a dense P; for a sparse P, ||P^{-1}||_1 comes from Hager's deterministic
        estimator (a lower bound, usually exact) on a sparse LU factorisation. ``inf`` for a
        singular matrix: P^{-1}, the analyst's correction, does not exist then.
        """
        if not self.is_sparse:
            with np.errstate(all="ignore"):
                try:
                    c = float(np.linalg.cond(self.P, 1))
                except np.linalg.LinAlgError:
                    return math.inf
            return c if math.isfinite(c) else math.inf
        from scipy.sparse.linalg import splu

        A = self.P.tocsc()
        try:
            lu = splu(A)
        except RuntimeError:  # exactly singular
            return math.inf
        norm_a = float(abs(A).sum(axis=0).max())
        c = norm_a * _inverse_one_norm(lu, A.shape[0])
        return c if math.isfinite(c) else math.inf

    def expected_change_share(self, p: Sequence[float]) -> float:
        """Expected share of records whose category changes: sum_k p_k (1 - P_kk) / sum_k p_k."""
        p = self._frequencies(p)
        return float(p @ (1.0 - self._diag))

    def _frequencies(self, p: Sequence[float]) -> np.ndarray:
        p = np.asarray(p, dtype=np.float64).ravel()
        if p.size != self.n_categories:
            raise InputError(f"{self.name}: {p.size} frequencies given for {self.n_categories} categories.")
        if (p < 0).any() or not np.isfinite(p).all() or p.sum() <= 0:
            raise InputError(f"{self.name}: frequencies must be finite, >= 0 and not all 0.")
        return p / p.sum()

    # ------------------------------------------------------------------ labels
    def match(self, categories: Sequence[Any], *, variable: str | None = None) -> TransitionMatrix:
        """This matrix with rows and columns in the order of ``categories`` (the data's).

        Labels are compared as given, then by their text (a CSV reads every label as text).

        Raises
        ------
        InputError
            Naming the data's categories missing from the matrix and the matrix's extra ones.
        """
        want = [_plain(c) for c in categories]
        have = list(self.categories)
        if want == have:
            return self
        index = {c: i for i, c in enumerate(have)}
        text_index = {label_text(c): i for i, c in enumerate(have)}
        order, missing = [], []
        for c in want:
            if c in index:
                order.append(index[c])
            elif label_text(c) in text_index:
                order.append(text_index[label_text(c)])
            else:
                missing.append(c)
        used = set(order)
        extra = [have[i] for i in range(len(have)) if i not in used]
        if missing or extra:
            who = f"{variable!r}" if variable else "the data"
            parts = []
            if missing:
                parts.append(f"{who} has {len(missing)} categories not in the transition matrix: {show_labels(missing)}")
            if extra:
                parts.append(f"the matrix has {len(extra)} categories {who} does not have: {show_labels(extra)}")
            raise InputError(f"{self.name}: " + "; ".join(parts) + ". Give the matrix exactly the "
                             "variable's categories as row and column labels.")
        idx = np.asarray(order)
        P = self.P[idx][:, idx]
        return TransitionMatrix(tuple(want), P, self.variables, self.name)

    # ------------------------------------------------------------------ input / output
    def to_json(self) -> str:
        """JSON text: variables, categories, storage ("dense" rows, or "sparse" triplets) and P.

        Floats are written with 17 significant digits (``repr``), so a round trip is exact.
        """
        d: dict[str, Any] = {"variables": list(self.variables),
                             "categories": [list(c) if isinstance(c, tuple) else c for c in self.categories]}
        if self.is_sparse:
            coo = self.P.tocoo()
            d["storage"] = "sparse"
            d["rows"] = coo.row.tolist()
            d["cols"] = coo.col.tolist()
            d["values"] = coo.data.tolist()
        else:
            d["storage"] = "dense"
            d["P"] = self.P.tolist()
        return json.dumps(d)

    @classmethod
    def from_json(cls, text: str, *, name: str = "transition matrix") -> TransitionMatrix:
        """Read the JSON written by :meth:`to_json`."""
        try:
            d = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"{name}: not valid JSON ({exc}).") from None
        if not isinstance(d, dict) or "categories" not in d:
            raise InputError(f"{name}: a PRAM matrix in JSON needs 'categories' and 'P' (or sparse "
                             "'rows', 'cols', 'values').")
        cats = tuple(tuple(c) if isinstance(c, list) else c for c in d["categories"])
        if d.get("storage") == "sparse":
            L = len(cats)
            P = sp.csr_matrix((np.asarray(d["values"], float), (np.asarray(d["rows"], int),
                                                                 np.asarray(d["cols"], int))), shape=(L, L))
        else:
            if "P" not in d:
                raise InputError(f"{name}: the JSON has no 'P' (the matrix rows).")
            P = np.asarray(d["P"], dtype=float)
        return cls(cats, P, tuple(d.get("variables", ())), name)

    def to_csv(self) -> str:
        """CSV text with the labels.

        Dense: a header ``original \\ released, <label>, ...`` then one row per original
        category. Sparse: long format ``original, released, probability`` (non-zero entries).
        Joint labels are written as ``a | b | c``.
        """
        labels = [_csv_field(label_text(c)) for c in self.categories]
        if self.is_sparse:
            coo = self.P.tocoo()
            lines = [",".join(_LONG_HEADER)]
            lines += [f"{labels[r]},{labels[c]},{v!r}"
                      for r, c, v in zip(coo.row.tolist(), coo.col.tolist(), coo.data.tolist())]
        else:
            corner = (_JOINT_SEP.join(self.variables) if self.variables else "original") + " \\ released"
            lines = [",".join([_csv_field(corner), *labels])]
            lines += [label + "," + ",".join(map(repr, row)) for label, row in zip(labels, self.P.tolist())]
        return "\n".join(lines) + "\n"

    @classmethod
    def from_csv(cls, text: str, *, name: str = "transition matrix",
                 variables: Sequence[str] = ()) -> TransitionMatrix:
        """Read a matrix written by :meth:`to_csv` (dense or long format).

        Labels are read as text; :meth:`match` maps them to the data's categories.
        """
        rows = list(csv.reader(io.StringIO(text)))
        rows = [r for r in rows if r and any(x.strip() for x in r)]
        if not rows:
            raise InputError(f"{name}: the file is empty.")
        head = [h.strip() for h in rows[0]]
        if head == _LONG_HEADER:
            labels: dict[str, int] = {}
            r_idx, c_idx, vals = [], [], []
            for line, r in enumerate(rows[1:], start=2):
                if len(r) != 3:
                    raise InputError(f"{name}, line {line}: expected 3 fields (original, released, "
                                     f"probability); got {len(r)}.")
                a, b, v = r[0].strip(), r[1].strip(), _number(r[2], name, line)
                r_idx.append(labels.setdefault(a, len(labels)))
                c_idx.append(labels.setdefault(b, len(labels)))
                vals.append(v)
            L = len(labels)
            P = sp.csr_matrix((np.asarray(vals), (np.asarray(r_idx), np.asarray(c_idx))), shape=(L, L))
            cats = tuple(labels)
        else:
            cols = head[1:]
            body = rows[1:]
            if len(body) != len(cols):
                raise InputError(f"{name}: the header names {len(cols)} released categories but there are "
                                 f"{len(body)} rows; P must be square with one row per original category.")
            row_labels = [r[0].strip() for r in body]
            if row_labels != cols:
                diff = sorted(set(row_labels) ^ set(cols))
                raise InputError(f"{name}: the row labels must equal the column labels in the same order"
                                 + (f"; labels in only one of them: {show_labels(diff)}" if diff else
                                    " (same labels, different order)") + ".")
            P = np.zeros((len(cols), len(cols)))
            for i, r in enumerate(body):
                if len(r) != len(cols) + 1:
                    raise InputError(f"{name}, line {i + 2}: expected {len(cols) + 1} fields; got {len(r)}.")
                P[i] = [_number(x, name, i + 2) for x in r[1:]]
            cats = tuple(cols)
        if not variables and " \\ released" in head[0]:
            variables = tuple(v.strip() for v in head[0].split(" \\ ")[0].split("|") if v.strip() != "original")
        cats = tuple(tuple(x.strip() for x in c.split("|")) if "|" in c else c for c in cats)
        return cls(cats, P, tuple(variables), name)

    def write(self, path) -> None:
        """Write as CSV or JSON by the file's suffix (atomic)."""
        from pathlib import Path

        from ..io.atomic import atomic_write_text

        path = Path(path)
        text = self.to_json() if path.suffix.lower() == ".json" else self.to_csv()
        atomic_write_text(path, text)

    @classmethod
    def read(cls, path, *, variables: Sequence[str] = ()) -> TransitionMatrix:
        """Read a CSV or JSON matrix file (by suffix)."""
        from pathlib import Path

        path = Path(path)
        if not path.is_file():
            raise InputError(f"PRAM matrix file {str(path)!r} does not exist; write it with "
                             "TransitionMatrix.write or give the right path.")
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"{path}: is not a UTF-8 text file (byte {exc.start}); a PRAM matrix is a CSV "
                             "or JSON file as sdckit publishes it (pram_*.csv).") from None
        if path.suffix.lower() == ".json":
            m = cls.from_json(text, name=str(path))
            return m if not variables else TransitionMatrix(m.categories, m.P, tuple(variables), m.name)
        return cls.from_csv(text, name=str(path), variables=variables)

    def to_dict(self) -> dict:
        """Public facts of the matrix (no entries): size, storage, minimum diagonal, condition."""
        return {"variables": list(self.variables), "n_categories": self.n_categories,
                "storage": "sparse" if self.is_sparse else "dense", "min_diagonal": self.min_diagonal}

    def __repr__(self) -> str:
        return (f"<TransitionMatrix {self.n_categories} categories ({'sparse' if self.is_sparse else 'dense'}), "
                f"min diagonal {self.min_diagonal:.4g}>")


def _csv_field(text: str) -> str:
    """One CSV field, quoted when it holds a comma, quote or line break (RFC 4180)."""
    if any(ch in text for ch in ',"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text


def _inverse_one_norm(lu, n: int, max_iter: int = 6) -> float:
    """Hager's (1984) estimate of ||A^{-1}||_1 from an LU factorisation (deterministic start),
    with Higham's extra vector; a lower bound of the exact norm."""
    x = np.full(n, 1.0 / n)
    best = 0.0
    for _ in range(max_iter):
        y = lu.solve(x)
        best = max(best, float(np.abs(y).sum()))
        z = lu.solve(np.where(y >= 0, 1.0, -1.0), trans="T")
        j = int(np.argmax(np.abs(z)))
        if np.abs(z[j]) <= z @ x:
            break
        x = np.zeros(n)
        x[j] = 1.0
    if n > 1:  # Higham's (1988) extra test vector, guards against Hager's worst cases
        b = (-1.0) ** np.arange(n) * (1.0 + np.arange(n) / (n - 1))
        best = max(best, 2.0 * float(np.abs(lu.solve(b)).sum()) / (3.0 * n))
    return best


def _number(text: str, name: str, line: int) -> float:
    try:
        return float(text)
    except ValueError:
        raise InputError(f"{name}, line {line}: {text.strip()!r} is not a number; entries of P must be "
                         "probabilities.") from None


def invariance_error(matrix: TransitionMatrix | Any, p: Sequence[float]) -> float:
    """max_k |(p P)_k - p_k| for relative frequencies p (counts are normalised)."""
    P = matrix.P if isinstance(matrix, TransitionMatrix) else matrix
    p = np.asarray(p, dtype=np.float64).ravel()
    p = p / p.sum()
    pP = np.asarray(P.T @ p).ravel()
    return float(np.abs(pP - p).max())


def as_matrix(P: Any) -> Any:
    """The array (dense or sparse) of a TransitionMatrix, or P itself."""
    return P.P if isinstance(P, TransitionMatrix) else P
