"""Data shuffling (Muralidhar & Sarathy 2006): the confidential variables are predicted from
the non-confidential ones through a normal copula, and each confidential variable's original
values are then given to the records in the order of the prediction (rank replacement).

Each released confidential variable is a permutation of its original values (the marginal
distribution is kept exactly), and the rank correlations with the non-confidential
variables are kept in expectation. sdcMicro's ``shuffle(obj, form, method = "ds")``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._random import seed_sequence
from ..errors import InputError
from ..microdata import Microdata
from ..params import REQUIRED, check_params, param
from ..registry import register_step
from ..result import Guarantee
from ._numeric import ContinuousResult, select_numeric
from .moments import psd_factor
from .summaries import lazy_moments_summary


def _normal_scores(M: np.ndarray) -> np.ndarray:
    """Phi^{-1}((rank - 0.5) / n) per column, average ranks for ties (eq. 6 of the paper)."""
    from scipy.special import ndtri
    from scipy.stats import rankdata

    return ndtri((rankdata(M, axis=0, method="average") - 0.5) / M.shape[0])


def _spearman(M: np.ndarray) -> np.ndarray:
    from scipy.stats import rankdata

    return np.atleast_2d(np.corrcoef(rankdata(M, axis=0, method="average"), rowvar=False))


def shuffle_array(Y: np.ndarray, S: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Shuffle the confidential columns ``Y`` (n, p) given the non-confidential ``S`` (n, q).

    Muralidhar & Sarathy (2006), sec. 3: with Y*, S* the normal scores of Y, S and R their
    Spearman correlation matrix turned into a normal-copula correlation P = 2 sin(pi R / 6),
    draw y' = S* P_SS^{-1} P_SY + e, e ~ N(0, P_YY - P_YS P_SS^{-1} P_SY), and release, per
    confidential variable, its sorted original values in the rank order of y'.
    """
    n, p = Y.shape
    M = np.hstack([Y, S])
    P = 2.0 * np.sin(np.pi * _spearman(M) / 6.0)               # P = 2 sin(pi R / 6)
    Z = _normal_scores(M)
    iy, is_ = np.arange(p), np.arange(p, M.shape[1])
    pyy, pys, pss = P[np.ix_(iy, iy)], P[np.ix_(iy, is_)], P[np.ix_(is_, is_)]
    try:
        B = np.linalg.solve(pss, pys.T)                        # P_SS^{-1} P_SY
    except np.linalg.LinAlgError:
        raise InputError("shuffle: the non-confidential variables are collinear (their rank correlation "
                         "matrix is singular): drop one of them.") from None
    cond = Z[:, is_] @ B                                       # E[y* | s*]
    sigma = pyy - pys @ B                                      # Var[y* | s*]
    E = rng.standard_normal((n, p)) @ psd_factor((sigma + sigma.T) / 2.0).T
    ystar = cond + E
    out = np.empty_like(Y)
    for j in range(p):                                         # rank replacement
        out[np.argsort(ystar[:, j], kind="stable"), j] = np.sort(Y[:, j])
    return out


def predictor_matrix(md: Microdata, predictors: Sequence[str]) -> np.ndarray:
    """The non-confidential variables as numbers: numeric columns as they are, every other
    column as indicators of its categories less the first (R's treatment contrasts)."""
    parts = []
    for v in predictors:
        if v not in md.columns:
            raise InputError(f"shuffle: predictor column {v!r} does not exist.")
        col = md.frame[v]
        if col.isna().any():
            raise InputError(f"shuffle: predictor {v!r} has {int(col.isna().sum())} missing values; "
                             "impute them or leave the variable out.")
        if pd.api.types.is_numeric_dtype(col) and v not in md.key_vars:
            parts.append(col.to_numpy(dtype=np.float64)[:, None])
        else:
            dummies = pd.get_dummies(col.astype("category"), drop_first=True, dtype=np.float64)
            if dummies.shape[1]:
                parts.append(dummies.to_numpy())
    if not parts:
        raise InputError("shuffle: the predictors carry no variation (each has one category).")
    return np.hstack(parts)


@dataclass(frozen=True)
class ShuffleResult(ContinuousResult):
    """Data shuffling result."""


@register_step("shuffle", dask_note="the normal-score ranks and the rank replacement need every record of "
                                    "the file at once")
@dataclass(frozen=True)
class Shuffle:
    """Data shuffling of confidential numeric variables (Muralidhar & Sarathy 2006).

    Parameters
    ----------
    predictors : list of str
        Non-confidential variables the confidential ones are predicted from (sdcMicro's right
        side of ``form``); categorical ones enter as indicators of their categories.
    variables : list of str, optional
        Confidential numeric variables (left side of ``form``; default: the numeric_vars role).

    Notes
    -----
    Guarantee, checked on the output: each released variable holds exactly its original values
    (a permutation). The summary gives the largest change of a rank correlation between a
    confidential and a non-confidential variable. Complete records only.

    References
    ----------
    Muralidhar, K. and Sarathy, R. (2006). Data shuffling: a new masking approach for numerical
    data. *Management Science* 52(5), 658-670, sec. 3.
    """

    #: settings for the conformance checks (on :func:`sdckit.testing.example_microdata`)
    example_params = {"predictors": ["age", "sex"], "variables": ["income", "hours", "savings"]}

    predictors: Sequence[str] = param(REQUIRED, kind="columns",
                                      help="non-confidential variables the confidential ones are predicted from")
    variables: Sequence[str] | None = param(None, kind="columns", nullable=True,
                                            help="confidential numeric variables (default: the numeric_vars role)")

    def __post_init__(self) -> None:
        check_params(self)

    def apply(self, microdata: Microdata, *, rng=None) -> ShuffleResult:
        where = "shuffle"
        names, Y, _ = select_numeric(microdata, self.variables, where=where, allow_nan=False)
        clash = sorted(set(names) & set(self.predictors))
        if clash:
            raise InputError(f"{where}: {clash[0]!r} is both a confidential variable and a predictor; "
                             "name it in one list only.")
        S = predictor_matrix(microdata, self.predictors)
        ss, record = seed_sequence(rng)
        out = shuffle_array(Y, S, np.random.default_rng(ss))
        permutation = bool(np.array_equal(np.sort(out, axis=0), np.sort(Y, axis=0)))
        p = Y.shape[1]
        r_before = _spearman(np.hstack([Y, S]))[:p, p:]
        r_after = _spearman(np.hstack([out, S]))[:p, p:]
        released = microdata.with_columns({v: out[:, j] for j, v in enumerate(names)})
        summary = lazy_moments_summary(
            {"variables": names, "predictors": list(self.predictors),
             "max_rank_correlation_change": float(np.max(np.abs(r_after - r_before))),
             "changed_share": float(np.mean(out != Y))}, Y, out, names)
        g = Guarantee("same_values", "each released variable holds exactly its original values (a permutation)",
                      permutation, permutation)
        params = {"variables": names, "predictors": list(self.predictors)}
        return ShuffleResult(where, released, params, summary, (g,), record)
