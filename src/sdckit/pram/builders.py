"""PRAM matrix builders: one declared type per builder, and the registry ``Pram.matrix`` reads.

Each builder is a frozen dataclass declared with :func:`~sdckit.params.param` (an alternative
is a type, not a string plus fields that apply to one choice only) with
``build(context) -> (TransitionMatrix, evidence dict)``. Built-in types:

- :class:`Identity`: P = I (nothing changes; a baseline);
- :class:`MaxEntropy`: keep with probability d (the step's ``min_diagonal``), move to every
  other category with (1 - d)/(L - 1); over a joint space too large for a dense matrix, move
  to one of the combinations that differ in exactly one variable (sparse);
- :class:`Invariant`: from a base matrix P and frequencies p, the Bayes inverse
  Q[k, j] = P[j, k] p_j / sum_l p_l P[l, k] and R = P Q, so p R = p (Kooiman et al. 1997;
  Gouweleeuw et al. 1998, sec. 3); optionally sdcMicro's blend alpha R + (1 - alpha) I. The
  base diagonal is chosen so that the FINAL matrix has every diagonal >= ``min_diagonal``;
- :class:`File`: a published matrix read from CSV or JSON, matched to the data's labels.

Other modules register more (``Evolved`` in :mod:`sdckit.pram.steps`, ``Optimal`` in
:mod:`sdckit.pram.optimal.register`) with :func:`register_matrix_type`.

References
----------
Kooiman, P., Willenborg, L. and Gouweleeuw, J. (1997). PRAM: a method for disclosure
limitation of microdata. Statistics Netherlands research paper 9705.
Gouweleeuw, J. M., Kooiman, P., Willenborg, L. C. R. J. and de Wolf, P.-P. (1998). Post
randomisation for statistical disclosure control. *Journal of Official Statistics* 14(4).
Templ, M., Kowarik, A. and Meindl, B. (2015). Statistical disclosure control for micro-data
using the R package sdcMicro. *Journal of Statistical Software* 67(4) (``pram``: pd, alpha).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._validation import check_float
from ..errors import InputError
from ..microdata import Microdata
from ..params import check_params, param, step_params
from .matrix import MAX_DENSE, TransitionMatrix

#: largest category space for which invariant PRAM builds dense matrices (R = P Q costs L^3)
DENSE_BUILD_LIMIT = 1000
#: largest joint space the pram step accepts (its labels are listed in the matrix)
MAX_JOINT = 2_000_000


# --------------------------------------------------------------------------- context and registry
@dataclass(frozen=True)
class MatrixContext:
    """What a matrix builder gets: the data and the (joint) frequencies of the records it is for.

    Attributes
    ----------
    microdata : Microdata
        The data before PRAM (all records).
    variables : tuple of str
        The variables the matrix is for (several when PRAMmed jointly).
    shape : tuple of int
        Number of categories of each variable; the joint space has prod(shape) categories.
    counts : numpy.ndarray
        Records per (joint) category among ``rows``, in C order of
        ``np.ravel_multi_index`` over the variables' codes; records with a missing value excluded.
    rows : numpy.ndarray of bool
        The records this matrix is for (e.g. one stratum).
    rng : numpy.random.Generator
        The builder's own stream (for random builders).
    min_diagonal : float or None
        The step's promised smallest diagonal entry (a target for the builders that have one).
    step_variables : tuple of str
        Every variable of the step (a matrix over one of them when PRAMmed independently).
    """

    microdata: Microdata
    variables: tuple
    shape: tuple
    counts: np.ndarray
    rows: np.ndarray
    rng: np.random.Generator
    min_diagonal: float | None = None
    step_variables: tuple = ()

    @property
    def categories(self) -> tuple:
        """Labels of the (joint) categories in C order (tuples of labels when joint)."""
        return category_labels(self.microdata, self.variables)

    @property
    def n_categories(self) -> int:
        return int(np.prod(self.shape))

    def codes(self) -> np.ndarray:
        """Joint codes of the records in ``rows`` (-1 when any variable is missing)."""
        return joint_codes([self.microdata.codes(v)[self.rows] for v in self.variables], self.shape)


def category_labels(microdata: Microdata, variables: Sequence[str]) -> tuple:
    """Labels of the categories of one variable, or tuples over the joint space in C order."""
    lists = [list(microdata.categories(v)) for v in variables]
    if len(lists) == 1:
        return tuple(lists[0])
    size = int(np.prod([len(x) for x in lists]))
    if size > MAX_JOINT:
        raise InputError(f"the joint space of {list(variables)} has {size:,} combinations (more than "
                         f"{MAX_JOINT:,}); PRAM these variables independently (joint = false), in smaller "
                         "groups, or recode them to fewer categories first.")
    return tuple(itertools.product(*lists))


def joint_codes(codes: Sequence[np.ndarray], shape: Sequence[int]) -> np.ndarray:
    """C-order code over the joint space (np.ravel_multi_index); -1 where any code is missing.
    One variable: its codes as they are (no copy)."""
    if len(codes) == 1:
        return np.asarray(codes[0])
    missing = np.zeros(codes[0].shape, dtype=bool)
    for c in codes:
        missing |= c < 0
    flat = np.ravel_multi_index(tuple(np.where(missing, 0, c) for c in codes), tuple(shape))
    return np.where(missing, -1, flat)


_TYPES: dict[str, type] = {}


def register_matrix_type(name: str) -> Callable[[type], type]:
    """Class decorator: make a matrix builder type one of the values of ``Pram.matrix``
    (``matrix = { type = "<name>", ... }`` in a spec).

    The class is a frozen dataclass whose settings are declared with
    :func:`~sdckit.params.param` and validated in ``__post_init__`` (``check_params``), with
    ``build(context) -> (TransitionMatrix, evidence dict)``. The evidence dict is public (it
    goes to the report). Two keys are promises the step checks independently on the output:
    ``"invariant": True`` (p P = p for the context's counts) and ``"min_diagonal": m`` (every
    diagonal >= m).
    """

    def deco(cls: type) -> type:
        if not (dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen
                and callable(getattr(cls, "build", None))):
            raise TypeError(f"matrix type {name!r}: {cls.__name__} must be a frozen dataclass with build()")
        if name in _TYPES and _TYPES[name] is not cls:
            raise TypeError(f"matrix type {name!r} registered twice ({_TYPES[name].__name__}, {cls.__name__})")
        cls.variant_name = name
        _TYPES[name] = cls
        return cls

    return deco


def matrix_types() -> tuple[type, ...]:
    """The registered matrix builder types, in registration order (the values ``Pram.matrix``
    accepts)."""
    return tuple(_TYPES.values())


def matrix_type(name: str) -> type:
    """The registered type ``name``; InputError listing the known ones otherwise."""
    if name not in _TYPES:
        raise InputError(f"unknown PRAM matrix type {name!r}; the known ones are "
                         f"{', '.join(sorted(_TYPES))}.")
    return _TYPES[name]


def known_matrix_methods() -> list[str]:
    """The names of the registered matrix types."""
    return sorted(_TYPES)


MatrixBuilder = Callable[[Any, MatrixContext], "tuple[TransitionMatrix, dict]"]


def matrix_method(matrix: Any) -> MatrixBuilder:
    """A ``fn(settings, context) -> (TransitionMatrix, evidence)`` for a matrix type instance or
    name, for callers holding flat settings (the Dask engine's ``PramSettings``).

    With an instance the settings object gives only ``min_diagonal`` and ``variables``; with a
    name the type's own parameters are read from it too (unset ones keep their defaults).
    """
    fixed = None if isinstance(matrix, str) else matrix
    cls = matrix_type(matrix) if fixed is None else type(matrix)

    def build(settings: Any, context: MatrixContext):
        chosen = getattr(settings, "matrix", None)
        spec = fixed if fixed is not None else chosen if isinstance(chosen, cls) else None
        if spec is None:
            given = {p.name: getattr(settings, p.name, None) for p in step_params(cls)}
            spec = cls(**{k: v for k, v in given.items() if v is not None})
        ctx = dataclasses.replace(context, min_diagonal=getattr(settings, "min_diagonal", None),
                                  step_variables=tuple(getattr(settings, "variables", None) or context.variables))
        return spec.build(ctx)

    return build


# --------------------------------------------------------------------------- plain matrices
def identity_matrix(categories: Sequence[Any], *, variables: Sequence[str] = ()) -> TransitionMatrix:
    """P = I (sparse beyond MAX_DENSE categories)."""
    L = len(categories)
    P = sp.identity(L, format="csr") if L > MAX_DENSE else np.eye(L)
    return TransitionMatrix(tuple(categories), P, tuple(variables), "identity")


def max_entropy_array(L: int, d: float) -> np.ndarray:
    """Keep with probability d, move to every other category with (1 - d) / (L - 1)."""
    if L == 1:
        return np.ones((1, 1))
    P = np.full((L, L), (1.0 - d) / (L - 1))
    np.fill_diagonal(P, d)
    return P


def neighbour_array(shape: Sequence[int], d: float, weights: np.ndarray | None = None) -> sp.csr_matrix:
    """Sparse joint-space matrix: keep with probability d, else change exactly one variable to
    another of its categories. Without ``weights`` every such combination is equally likely
    ((1 - d) / N, N = sum_j (L_j - 1)); with ``weights`` (e.g. the frequencies p) in proportion
    to the weight of the combination reached; a row whose neighbours all weigh 0 keeps (P_ii = 1)."""
    shape = tuple(int(s) for s in shape)
    J = int(np.prod(shape))
    N = sum(s - 1 for s in shape)
    if N == 0:
        return sp.identity(J, format="csr")
    cells = np.arange(J, dtype=np.int64)
    multi = np.unravel_index(cells, shape)
    cols = []
    strides = np.array([int(np.prod(shape[j + 1:])) for j in range(len(shape))], dtype=np.int64)
    for j, s in enumerate(shape):
        for shift in range(1, s):
            new = (multi[j] + shift) % s
            cols.append(cells + (new - multi[j]) * strides[j])
    c = np.stack(cols, axis=1)                       # (J, N) neighbours of each cell
    if weights is None:
        w = np.full(c.shape, 1.0 / N)
    else:
        w = np.asarray(weights, dtype=np.float64)[c]
        tot = w.sum(axis=1, keepdims=True)
        w = np.divide(w, tot, out=np.zeros_like(w), where=tot > 0)
    moves = w.sum(axis=1)                            # 1, or 0 when no neighbour weighs anything
    diag = 1.0 - (1.0 - d) * moves
    r = np.concatenate([cells, np.repeat(cells, N)])
    cc = np.concatenate([cells, c.ravel()])
    v = np.concatenate([diag, ((1.0 - d) * w).ravel()])
    P = sp.csr_matrix((v, (r, cc)), shape=(J, J))
    P.eliminate_zeros()
    return P


def proportional_array(p: np.ndarray, d: float) -> np.ndarray:
    """Keep with probability d, else draw the released category from the frequencies p:
    P = d I + (1 - d) 1 p^T (already invariant: p P = p)."""
    P = (1.0 - d) * np.repeat(p[None, :], p.size, axis=0)
    P[np.diag_indices(p.size)] += d
    return P


def max_entropy_matrix(categories: Sequence[Any], d: float, *, shape: Sequence[int] | None = None,
                       variables: Sequence[str] = ()) -> TransitionMatrix:
    """The maximum-entropy matrix with diagonal d (dense), or its one-variable-move sparse
    form when the joint space exceeds MAX_DENSE categories (``shape`` = categories per variable)."""
    check_float("max_entropy_matrix", "d", d, low=0.0, high=1.0)
    L = len(categories)
    if L > MAX_DENSE:
        if shape is None or len(shape) < 2:
            raise InputError(f"max_entropy: {L} categories are too many for a dense matrix (limit {MAX_DENSE}) "
                             "and a single variable has no sparse form; recode it to fewer categories.")
        return TransitionMatrix(tuple(categories), neighbour_array(shape, d), tuple(variables), "max_entropy")
    return TransitionMatrix(tuple(categories), max_entropy_array(L, d), tuple(variables), "max_entropy")


# --------------------------------------------------------------------------- invariant PRAM
def _frequencies(counts: Sequence[float]) -> np.ndarray:
    p = np.asarray(counts, dtype=np.float64).ravel()
    if (p < 0).any() or not np.isfinite(p).all() or p.sum() <= 0:
        raise InputError("invariant PRAM: the category frequencies must be >= 0 and not all 0 "
                         "(is the variable missing in every record?).")
    return p / p.sum()


def bayes_inverse(P: Any, p: np.ndarray) -> Any:
    """Q[k, j] = P[j, k] p_j / sum_l p_l P[l, k] (the posterior of the original category j given
    the released k). Rows k no original category reaches (column mass 0) are e_k."""
    c = np.asarray(P.T @ p).ravel()                      # c_k = sum_l p_l P[l, k]
    inv_c = np.divide(1.0, c, out=np.zeros_like(c), where=c > 0)
    if sp.issparse(P):
        Q = sp.diags(inv_c) @ P.T.tocsr() @ sp.diags(p)
        dead = np.flatnonzero(c <= 0)
        if dead.size:
            Q = Q + sp.csr_matrix((np.ones(dead.size), (dead, dead)), shape=Q.shape)
        return Q.tocsr()
    Q = inv_c[:, None] * P.T * p[None, :]
    dead = np.flatnonzero(c <= 0)
    Q[dead, :] = 0.0
    Q[dead, dead] = 1.0
    return Q


def invariant_array(P: Any, p: np.ndarray, alpha: float = 1.0) -> Any:
    """R = P Q (Q the Bayes inverse), blended alpha R + (1 - alpha) I; p R = p.

    Rows of categories with p_k = 0 are set to e_k (no record has them; invariance holds
    because no original category is released as k: Q[., k] = 0).
    """
    Q = bayes_inverse(P, p)
    zero = p <= 0
    if sp.issparse(P):
        R = (P @ Q).tocsr()
        keep = sp.diags((~zero).astype(float))
        R = keep @ R + sp.diags(zero.astype(float))
        R = alpha * R + (1.0 - alpha) * sp.identity(R.shape[0], format="csr")
        R = sp.csr_matrix(R)
        R.eliminate_zeros()
        sums = np.asarray(R.sum(axis=1)).ravel()
        return (sp.diags(1.0 / sums) @ R).tocsr()
    R = P @ Q
    z = np.flatnonzero(zero)
    R[z, :] = 0.0
    R[z, z] = 1.0
    R = alpha * R + (1.0 - alpha) * np.eye(R.shape[0])
    R = np.maximum(R, 0.0)
    return R / R.sum(axis=1, keepdims=True)


def invariant_diagonal(P: Any, p: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    """The diagonal of alpha R + (1 - alpha) I without forming R:
    R_ii = sum_k P_ik Q_ki = p_i sum_k P_ik^2 / c_k, c_k = (p P)_k; 1 where p_i = 0."""
    c = np.asarray(P.T @ p).ravel()
    inv_c = np.divide(1.0, c, out=np.zeros_like(c), where=c > 0)
    sq = P.multiply(P) if sp.issparse(P) else P * P
    r = p * np.asarray(sq @ inv_c).ravel()
    r = np.where(p > 0, r, 1.0)
    return alpha * r + (1.0 - alpha)


def sdcmicro_invariant(categories: Sequence[Any], counts: Sequence[float], pd: float = 0.8,
                       alpha: float = 0.5, *, rng=None, variables: Sequence[str] = ()) -> TransitionMatrix:
    """sdcMicro's ``pram`` matrix: base diagonals drawn uniformly in [pd, 1] (fixed pd without
    ``rng``), the rest of each row spread evenly; R = P Q; Rs = alpha R + (1 - alpha) I.

    Its ``pd`` bounds the base diagonal, not the final one: rare categories fall well below pd
    (see docs/methods/pram.md). Use :func:`invariant_matrix` for a guaranteed minimum.
    """
    check_float("sdcmicro_invariant", "pd", pd, low=0.0, high=1.0)
    check_float("sdcmicro_invariant", "alpha", alpha, low=0.0, high=1.0)
    p = _frequencies(counts)
    L = p.size
    if L > DENSE_BUILD_LIMIT:
        raise InputError(f"sdcMicro invariant PRAM: {L} categories exceed the dense limit {DENSE_BUILD_LIMIT}.")
    if rng is None:
        pds = np.full(L, pd)
    else:
        from .._random import as_generator
        pds = as_generator(rng).uniform(pd, 1.0, L)
    P = np.repeat(((1.0 - pds) / max(L - 1, 1))[:, None], L, axis=1)
    np.fill_diagonal(P, pds)
    return TransitionMatrix(tuple(categories), invariant_array(P, p, alpha), tuple(variables), "sdcmicro_invariant")


@dataclass(frozen=True)
class InvariantBuild:
    """An invariant matrix with its evidence: the base diagonal found and the base's form."""

    matrix: TransitionMatrix
    base_diagonal: float
    base: str
    min_diagonal: float
    alpha: float

    def evidence(self) -> dict:
        return {"invariant": True, "min_diagonal": self.min_diagonal, "alpha": self.alpha,
                "base": self.base, "base_diagonal": self.base_diagonal,
                "final_min_diagonal": self.matrix.min_diagonal}


def invariant_matrix(categories: Sequence[Any], counts: Sequence[float], *, min_diagonal: float = 0.8,
                     alpha: float = 1.0, base: str = "proportional", shape: Sequence[int] | None = None,
                     variables: Sequence[str] = ()) -> InvariantBuild:
    """Invariant PRAM whose final diagonal is >= ``min_diagonal`` for every category.

    The base P keeps with probability d and moves with 1 - d: with ``base = "uniform"``
    (sdcMicro's shape) evenly to every other category, with ``base = "proportional"`` to a
    category drawn from the frequencies p (P = d I + (1 - d) 1 p^T). Over a joint space larger
    than DENSE_BUILD_LIMIT the moves go to the combinations one variable away (evenly, or in
    proportion to p). The uniform base sends as much to a rare category as to a frequent one,
    so a rare category's R_ii is small unless d is near 1; the proportional base keeps
    R_ii >= d^2 for every category. The final matrix
    alpha P Q + (1 - alpha) I has R_ii = alpha p_i sum_k P_ik^2 / (pP)_k + 1 - alpha, which
    is 1 at d = 1 and continuous in d; the builder finds the smallest d (the most perturbation
    in this family) with min_i R_ii >= min_diagonal by a grid then bisection, builds R, and
    checks its diagonal. Rare categories are what forces d up (sdcMicro's ``pd`` ignores them).

    Raises
    ------
    InputError
        When only d = 1 (the identity) meets the bound within 1e-12: no invariant matrix of
        this family perturbs these frequencies with that minimum diagonal.
    """
    owner = "invariant PRAM"
    from .._validation import check_choice
    check_choice(owner, "base", base, ("uniform", "proportional"))
    check_float(owner, "min_diagonal", min_diagonal, low=0.0, high=1.0, high_open=True)
    check_float(owner, "alpha", alpha, low=0.0, high=1.0, low_open=True)
    p = _frequencies(counts)
    L = p.size
    if len(categories) != L:
        raise InputError(f"{owner}: {len(categories)} labels for {L} frequencies.")
    if L == 1:
        m = TransitionMatrix(tuple(categories), np.ones((1, 1)), tuple(variables), "invariant")
        return InvariantBuild(m, 1.0, base, min_diagonal, alpha)
    if L <= DENSE_BUILD_LIMIT and base == "uniform":
        form, d_low = "uniform", 1.0 / L

        def make(d: float):
            return max_entropy_array(L, d)
    elif L <= DENSE_BUILD_LIMIT:
        form, d_low = "proportional", 0.0

        def make(d: float):
            return proportional_array(p, d)
    elif shape is not None and len(shape) > 1:
        form = f"one_variable_moves_{base}"
        d_low = 0.0 if base == "proportional" else 1.0 / (1 + sum(int(s) - 1 for s in shape))
        weights = p if base == "proportional" else None

        def make(d: float):
            return neighbour_array(shape, d, weights)
    else:
        raise InputError(f"{owner}: {L} categories exceed the dense limit {DENSE_BUILD_LIMIT} for one "
                         "variable; recode it to fewer categories first.")
    target = min_diagonal + 1e-12

    def ok(d: float) -> bool:
        return float(invariant_diagonal(make(d), p, alpha).min()) >= target

    # grid from the top: the smallest d such that it and every grid point above it are feasible
    grid = np.linspace(d_low, 1.0, 65)
    hi = 1.0
    lo = None
    for d in grid[::-1][1:]:
        if ok(d):
            hi = float(d)
        else:
            lo = float(d)
            break
    if lo is not None:
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            if ok(mid):
                hi = mid
            else:
                lo = mid
            if hi - lo < 1e-13:
                break
    if hi >= 1.0 - 1e-12:
        raise InputError(f"{owner}: no invariant matrix of this family (base diagonal d < 1) has every diagonal "
                         f">= {min_diagonal} for these frequencies (smallest share {p[p > 0].min():.3g}): only the "
                         "identity does. Lower min_diagonal, merge rare categories, or use matrix = \"identity\".")
    for _ in range(50):  # the built R is checked; round-off may need a hair more d
        R = invariant_array(make(hi), p, alpha)
        diag = R.diagonal()
        if float(np.min(diag)) >= min_diagonal:
            break
        hi = hi + 0.5 * (1.0 - hi)
    m = TransitionMatrix(tuple(categories), R, tuple(variables), "invariant")
    return InvariantBuild(m, hi, form, min_diagonal, alpha)


# --------------------------------------------------------------------------- registered builders
@register_matrix_type("identity")
@dataclass(frozen=True)
class Identity:
    """P = I: nothing changes (a baseline)."""

    def __post_init__(self) -> None:
        check_params(self)

    def build(self, context: MatrixContext) -> tuple[TransitionMatrix, dict]:
        return identity_matrix(context.categories, variables=tuple(context.variables)), {}


@register_matrix_type("max_entropy")
@dataclass(frozen=True)
class MaxEntropy:
    """Maximum entropy: keep with probability d (the step's min_diagonal, default 0.8), else
    move to any other category evenly (one variable away over a large joint space)."""

    def __post_init__(self) -> None:
        check_params(self)

    def build(self, context: MatrixContext) -> tuple[TransitionMatrix, dict]:
        d = 0.8 if context.min_diagonal is None else context.min_diagonal
        m = max_entropy_matrix(context.categories, d, shape=context.shape, variables=tuple(context.variables))
        return m, {"min_diagonal": d, "form": "one_variable_moves" if m.is_sparse else "dense"}


@register_matrix_type("invariant")
@dataclass(frozen=True)
class Invariant:
    """Invariant PRAM (Gouweleeuw et al. 1998, sec. 3): R = P Q keeps p R = p, with every
    final diagonal entry >= the step's min_diagonal (default 0.8)."""

    alpha: float = param(1.0, kind="float", low=0.0, high=1.0, low_open=True, symbol="alpha",
                         help="blend alpha R + (1 - alpha) I (sdcMicro's alpha; 1: no blend)")
    base: str = param("proportional", kind="choice", choices=("proportional", "uniform"),
                      help="base matrix: moves drawn from the frequencies, or evenly (sdcMicro's shape)")

    def __post_init__(self) -> None:
        check_params(self)

    def build(self, context: MatrixContext) -> tuple[TransitionMatrix, dict]:
        cats, names = context.categories, tuple(context.variables)
        if context.counts.sum() == 0:  # a stratum where the variable is always missing
            return identity_matrix(cats, variables=names), {"note": "no non-missing records: identity"}
        b = invariant_matrix(cats, context.counts,
                             min_diagonal=0.8 if context.min_diagonal is None else context.min_diagonal,
                             alpha=self.alpha, base=self.base, shape=context.shape, variables=names)
        return b.matrix, b.evidence()


@register_matrix_type("file")
@dataclass(frozen=True)
class File:
    """A published matrix read from a CSV or JSON file with labels, matched to the data."""

    file: str = param(kind="path", help="matrix file (CSV or JSON with labels)")

    def __post_init__(self) -> None:
        check_params(self)

    def build(self, context: MatrixContext) -> tuple[TransitionMatrix, dict]:
        cats, names = context.categories, tuple(context.variables)
        m = TransitionMatrix.read(self.file, variables=names)
        m = m.match(cats, variable=" x ".join(names))
        return m, {"file": str(self.file)}
