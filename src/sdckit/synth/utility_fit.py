"""Fitted-model comparison of a synthetic file (synthpop's ``compare.fit.synds``).

A regression is fitted to both files; each coefficient's standardised difference, the overlap
of the two 95% intervals (Karr, Kohnen, Oganian, Reiter & Sanil 2006) and the lack-of-fit
statistic (see :mod:`sdckit.synth.utility`).

References
----------
Karr, A. F., Kohnen, C. N., Oganian, A., Reiter, J. P. and Sanil, A. P. (2006). A framework for
evaluating the utility of data altered to protect confidentiality. The American Statistician
60(3), 224-232.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._validation import close_names
from ..errors import InputError
from ..result import jsonable
from .frames import frame_of as _frame
from .frames import is_numeric as _is_numeric


# ----------------------------------------------------------------------------- fitted models
@dataclass(frozen=True)
class FitComparison:
    """A regression fitted to both files (synthpop's ``compare.fit.synds``)."""

    model: str
    outcome: str
    regressors: tuple[str, ...]
    coefficients: tuple[dict, ...]
    mean_abs_std_diff: float
    mean_ci_overlap: float
    lack_of_fit: float
    lof_pvalue: float

    def to_dict(self) -> dict:
        return jsonable(self.__dict__)

    def describe(self) -> str:
        return (f"{self.model} regression of {self.outcome}: mean |standardised difference| "
                f"{self.mean_abs_std_diff:.3g}, mean interval overlap {self.mean_ci_overlap:.3g}, "
                f"lack of fit {self.lack_of_fit:.3g} (p = {self.lof_pvalue:.3g})")


def compare_fit(original: Any, synthetic: Any, outcome: str, regressors: Sequence[str], *,
                model: str = "linear", ci_level: float = 0.95) -> FitComparison:
    """Fit ``outcome ~ regressors`` (``"linear"``: OLS; ``"logistic"``: a 0/1 outcome) to both
    files and compare the coefficients (module docstring). Categorical regressors enter as
    dummies of the original's categories (first dropped); records with a missing value leave
    the fit."""
    import statsmodels.api as sm
    from scipy.stats import chi2, norm

    if model not in ("linear", "logistic"):
        raise InputError(f"compare_fit: model must be 'linear' or 'logistic'; got {model!r}.")
    d, s = _frame(original, "original"), _frame(synthetic, "synthetic")
    regressors = list(regressors)
    for c in [outcome, *regressors]:
        for name, fr in (("original", d), ("synthetic", s)):
            if c not in fr.columns:
                raise InputError(f"compare_fit: the {name} data have no column {c!r}; "
                                 f"{close_names(c, [str(x) for x in fr.columns])}")
    levels = {r: sorted(d[r].dropna().unique().tolist(), key=str) for r in regressors if not _is_numeric(d[r])}

    def design(fr: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series]:
        parts = {"(Intercept)": np.ones(len(fr))}
        for r in regressors:
            if r in levels:
                for lv in levels[r][1:]:
                    parts[f"{r}{lv}"] = np.where(fr[r].isna(), np.nan, (fr[r] == lv).astype(float))
            else:
                parts[r] = pd.to_numeric(fr[r], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        x = pd.DataFrame(parts, index=fr.index)
        y = pd.to_numeric(fr[outcome], errors="coerce").astype(float)
        ok = x.notna().all(axis=1) & y.notna()
        return x[ok], y[ok]

    xo, yo = design(d)
    xs, ys = design(s)
    if model == "logistic":
        fo = sm.Logit(yo, xo).fit(disp=0, maxiter=200)
        fs = sm.Logit(ys, xs).fit(disp=0, maxiter=200)
        vo = np.asarray(fo.cov_params())
    else:
        fo = sm.OLS(yo, xo).fit()
        fs = sm.OLS(ys, xs).fit()
        vo = np.asarray(fo.cov_params())
    bo, bs = np.asarray(fo.params), np.asarray(fs.params)
    se = np.sqrt(np.diag(vo))
    z = norm.ppf(1 - (1 - ci_level) / 2)
    rows = []
    for j, name in enumerate(xo.columns):
        lo_o, hi_o = bo[j] - z * se[j], bo[j] + z * se[j]
        lo_s, hi_s = bs[j] - z * se[j], bs[j] + z * se[j]
        ov = min(hi_o, hi_s) - max(lo_o, lo_s)
        overlap = 0.5 * (ov / (hi_o - lo_o) + ov / (hi_s - lo_s))
        rows.append({"coefficient": name, "synthetic": float(bs[j]), "original": float(bo[j]),
                     "original_se": float(se[j]), "std_diff": float((bs[j] - bo[j]) / se[j]),
                     "ci_overlap": float(overlap)})
    n, k = len(d), len(s)
    diffv = bs - bo
    lof = float(diffv @ np.linalg.pinv(vo * n / k) @ diffv)
    p = float(1 - chi2.cdf(lof, len(bo)))
    return FitComparison(model, outcome, tuple(regressors), tuple(rows),
                         float(np.mean([abs(r["std_diff"]) for r in rows])),
                         float(np.mean([r["ci_overlap"] for r in rows])), lof, p)


__all__ = ["FitComparison", "compare_fit"]
