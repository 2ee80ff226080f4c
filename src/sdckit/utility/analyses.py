"""Operational utility check: run the steward's representative analyses on the original and
the released data and put the results side by side (Matloff & Tendick, section 5.1 (a)).

Rather than a global distance between the two data sets, the steward states the analyses
users will run (linear regression, logistic regression, principal components, any function
of a data frame); :func:`compare_analyses` runs each on both data sets and reports every
quantity with its difference, relative difference and, for regression coefficients, the
difference in units of the original standard error. Records with a missing value in an
analysis' variables are dropped from that analysis (R's ``na.omit``), so suppressed records
of a release simply leave the fit.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._validation import check_choice, check_int, check_names, close_names, param_error
from ..errors import InputError
from ..result import jsonable


def _frame(data: Any) -> pd.DataFrame:
    """A DataFrame from a DataFrame or a Microdata (its records)."""
    if isinstance(data, pd.DataFrame):
        return data
    frame = getattr(data, "frame", None)
    if isinstance(frame, pd.DataFrame):
        return frame
    raise InputError(f"an analysis needs a pandas DataFrame or a Microdata; got {type(data).__name__}.")


def _need(frame: pd.DataFrame, columns: Sequence[str], where: str) -> None:
    for c in columns:
        if c not in frame.columns:
            raise InputError(f"{where}: column {c!r} does not exist; {close_names(c, [str(x) for x in frame.columns])}")


def _design(frame: pd.DataFrame, regressors: Sequence[str], levels: Mapping[str, list]) -> pd.DataFrame:
    """Regressors as numbers: numeric columns as they are, others as dummies (first level dropped)."""
    parts = {}
    for r in regressors:
        if r in levels:
            for lv in levels[r][1:]:
                parts[f"{r}[{lv}]"] = (frame[r] == lv).astype(float).to_numpy()
        else:
            parts[r] = pd.to_numeric(frame[r], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    out = pd.DataFrame(parts, index=frame.index)
    out.insert(0, "const", 1.0)
    return out


def _levels(frame: pd.DataFrame, regressors: Sequence[str]) -> dict[str, list]:
    """Category lists of non-numeric regressors, from the original data (so both fits align)."""
    return {r: sorted(frame[r].dropna().unique().tolist(), key=str) for r in regressors
            if not pd.api.types.is_numeric_dtype(frame[r]) or pd.api.types.is_bool_dtype(frame[r])}


@dataclass(frozen=True)
class LinearRegression:
    """Ordinary least squares of ``outcome`` on ``regressors`` with an intercept (statsmodels OLS).

    Quantities: every coefficient (with its standard error); the comparison reports the
    difference in units of the original standard error.
    """

    outcome: str
    regressors: Sequence[str]
    name: str | None = None

    def __post_init__(self) -> None:
        check_names("LinearRegression", "outcome", self.outcome)
        object.__setattr__(self, "regressors", check_names("LinearRegression", "regressors", self.regressors))

    @property
    def label(self) -> str:
        return self.name or f"linear regression of {self.outcome} on {', '.join(self.regressors)}"

    def _fit(self, frame: pd.DataFrame, levels: Mapping[str, list], model: str) -> dict:
        import statsmodels.api as sm

        _need(frame, [self.outcome, *self.regressors], self.label)
        x = _design(frame, self.regressors, levels)
        y = pd.to_numeric(frame[self.outcome], errors="coerce").astype(float)
        ok = x.notna().all(axis=1).to_numpy() & y.notna().to_numpy()
        x, y = x[ok], y[ok]
        if len(y) <= x.shape[1]:
            raise InputError(f"{self.label}: only {len(y)} complete records for {x.shape[1]} "
                             "coefficients; the data are too thin for this analysis.")
        if model == "logit":
            values = set(np.unique(y.to_numpy()))
            if not values <= {0.0, 1.0}:
                raise InputError(f"{self.label}: the outcome {self.outcome!r} must be 0/1; it has "
                                 f"values {sorted(values)[:5]}. Recode it first.")
            fit = sm.Logit(y, x).fit(disp=0, maxiter=200)
        else:
            fit = sm.OLS(y, x).fit()
        return {"estimates": {k: float(v) for k, v in fit.params.items()},
                "se": {k: float(v) for k, v in fit.bse.items()}, "n": int(len(y))}

    def run(self, frame: pd.DataFrame, reference: pd.DataFrame | None = None) -> dict:
        """Estimates and standard errors; category levels from ``reference`` (default: frame)."""
        return self._fit(frame, _levels(reference if reference is not None else frame, self.regressors), "ols")


@dataclass(frozen=True)
class LogisticRegression(LinearRegression):
    """Logistic regression (statsmodels Logit) of a 0/1 ``outcome`` on ``regressors``."""

    @property
    def label(self) -> str:
        return self.name or f"logistic regression of {self.outcome} on {', '.join(self.regressors)}"

    def run(self, frame: pd.DataFrame, reference: pd.DataFrame | None = None) -> dict:
        return self._fit(frame, _levels(reference if reference is not None else frame, self.regressors), "logit")


@dataclass(frozen=True)
class PrincipalComponents:
    """Principal components of standardised ``variables`` (the correlation matrix).

    Quantities: the share of variance explained by each of the first ``n_components``
    components, and the angle in degrees between each original loading vector and the
    released one (sign ignored: 0 = same direction).
    """

    variables: Sequence[str]
    n_components: int | None = None
    name: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "variables", check_names("PrincipalComponents", "variables", self.variables))
        if len(self.variables) < 2:
            raise param_error("PrincipalComponents", "variables", "at least 2 column names", self.variables)
        if self.n_components is not None:
            check_int("PrincipalComponents", "n_components", self.n_components, min_value=1,
                      max_value=len(self.variables))

    @property
    def label(self) -> str:
        return self.name or f"principal components of {', '.join(self.variables)}"

    def run(self, frame: pd.DataFrame, reference: pd.DataFrame | None = None) -> dict:  # noqa: ARG002
        _need(frame, self.variables, self.label)
        x = frame[list(self.variables)].apply(pd.to_numeric, errors="coerce").dropna().to_numpy(float)
        if x.shape[0] < 2:
            raise InputError(f"{self.label}: fewer than 2 complete records.")
        sd = x.std(axis=0, ddof=1)
        sd[sd == 0] = 1.0
        z = (x - x.mean(axis=0)) / sd
        _, s, vt = np.linalg.svd(z, full_matrices=False)
        share = s ** 2 / np.sum(s ** 2)
        m = self.n_components or len(self.variables)
        return {"estimates": {f"explained[{i + 1}]": float(share[i]) for i in range(m)},
                "loadings": vt[:m], "n": int(x.shape[0])}


@dataclass(frozen=True)
class UserAnalysis:
    """Any function of a data frame returning a number or a mapping name -> number."""

    name: str
    function: Callable[[pd.DataFrame], Any]

    @property
    def label(self) -> str:
        return self.name

    def run(self, frame: pd.DataFrame, reference: pd.DataFrame | None = None) -> dict:  # noqa: ARG002
        value = self.function(frame)
        if isinstance(value, Mapping):
            est = {str(k): float(v) for k, v in value.items()}
        elif isinstance(value, pd.Series):
            est = {str(k): float(v) for k, v in value.items()}
        else:
            est = {"value": float(value)}
        return {"estimates": est, "n": int(len(frame))}


@dataclass(frozen=True)
class Classification:
    """Cross-validated accuracy of a classifier predicting ``target`` from ``features`` (ARX's
    classification analysis; :mod:`sdckit.utility.classification`).

    Quantities: the accuracy of ``classifier`` (``naive_bayes``, ``random_forest`` or
    ``logistic``) trained and tested on the data itself (k-fold, the same folds on both data
    sets), and ZeroR's (always the most frequent class). A release that keeps what the
    classifier uses has the original's accuracy.
    """

    target: str
    features: Sequence[str]
    classifier: str = "naive_bayes"
    folds: int = 10
    name: str | None = None

    def __post_init__(self) -> None:
        from .classification import CLASSIFIERS

        check_names("Classification", "target", self.target)
        object.__setattr__(self, "features", check_names("Classification", "features", self.features))
        check_choice("Classification", "classifier", self.classifier, tuple(CLASSIFIERS))
        check_int("Classification", "folds", self.folds, min_value=2)

    @property
    def label(self) -> str:
        from .classification import CLASSIFIERS

        return self.name or (f"{CLASSIFIERS[self.classifier]} predicting {self.target} from "
                             f"{', '.join(self.features)}")

    def run(self, frame: pd.DataFrame, reference: pd.DataFrame | None = None) -> dict:  # noqa: ARG002
        from .classification import cross_validated_accuracy

        _need(frame, [self.target, *self.features], self.label)
        r = cross_validated_accuracy(frame, self.target, self.features, classifier=self.classifier,
                                     folds=self.folds)
        return {"estimates": {"accuracy": r["accuracy"], "ZeroR accuracy": r["zeror_accuracy"]}, "n": r["n"]}


Analysis = LinearRegression | LogisticRegression | PrincipalComponents | Classification | UserAnalysis


def analysis_from_dict(spec: Mapping[str, Any]) -> Analysis:
    """An analysis from a release-spec table: ``{kind = "linear" | "logistic" | "pca" | "classification", ...}``.

    ``linear`` / ``logistic``: ``outcome``, ``regressors``; ``pca``: ``variables``,
    optional ``n_components``; ``classification``: ``target``, ``features``, optional
    ``classifier`` and ``folds``; every kind: optional ``name``.
    """
    if not isinstance(spec, Mapping):
        raise param_error("analyses", "entry", "a table with a 'kind' key", spec)
    spec = dict(spec)
    kinds = {"linear": LinearRegression, "logistic": LogisticRegression, "pca": PrincipalComponents,
             "classification": Classification}
    takes = {"linear": "outcome, regressors", "logistic": "outcome, regressors", "pca": "variables, n_components",
             "classification": "target, features, classifier, folds"}
    kind = check_choice("analyses", "kind", spec.pop("kind", None), tuple(kinds))
    try:
        return kinds[kind](**spec)
    except TypeError as exc:
        raise InputError(f"analyses: a {kind!r} analysis takes {takes[kind]} "
                         f"and name; got {sorted(spec)} ({exc}).") from None


def _angle(a: np.ndarray, b: np.ndarray) -> float:
    """Angle in degrees between two loading vectors, ignoring sign."""
    c = abs(float(a @ b)) / (np.linalg.norm(a) * np.linalg.norm(b))
    return math.degrees(math.acos(min(1.0, c)))


@dataclass(frozen=True)
class AnalysisComparison:
    """The analyses on the original and the released data, side by side.

    ``rows`` holds one dict per quantity: analysis, quantity, original, released, difference
    (released - original), rel_diff (|difference| / |original|), original_se and diff_in_se
    (regressions), n_original, n_released.
    """

    rows: tuple[dict, ...]
    errors: Mapping[str, str] = field(default_factory=dict)

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame(list(self.rows))

    def max_rel_diff(self, analysis: str | None = None, *, skip: Sequence[str] = ("const",)) -> float:
        """Largest relative difference over the quantities (of one analysis), intercept skipped."""
        vals = [r["rel_diff"] for r in self.rows if (analysis is None or r["analysis"] == analysis)
                and r["quantity"] not in skip and r["rel_diff"] is not None and not math.isnan(r["rel_diff"])]
        return max(vals) if vals else float("nan")

    def to_dict(self) -> dict:
        return jsonable({"rows": list(self.rows), "errors": dict(self.errors)})

    def report_html(self) -> str:
        head = ("<tr><th>analysis</th><th>quantity</th><th>original</th><th>released</th>"
                "<th>relative difference</th><th>original SE</th><th>difference / SE</th></tr>")

        def f(v: Any, fmt: str = "{:.6g}") -> str:
            return "" if v is None or (isinstance(v, float) and math.isnan(v)) else fmt.format(v)

        body = "".join(
            f"<tr><td>{html.escape(r['analysis'])}</td><td>{html.escape(r['quantity'])}</td>"
            f"<td>{f(r['original'])}</td><td>{f(r['released'])}</td><td>{f(r['rel_diff'], '{:.2%}')}</td>"
            f"<td>{f(r.get('original_se'))}</td><td>{f(r.get('diff_in_se'), '{:+.2f}')}</td></tr>"
            for r in self.rows)
        errs = "".join(f"<li>{html.escape(k)}: {html.escape(v)}</li>" for k, v in self.errors.items())
        return (f"<table class='analyses'>{head}{body}</table>"
                + (f"<p>Analyses that could not run:</p><ul>{errs}</ul>" if errs else ""))


def compare_analyses(original: Any, released: Any, analyses: Sequence[Analysis], *,
                     raise_errors: bool = True) -> AnalysisComparison:
    """Run each analysis on both data sets and compare quantity by quantity.

    Parameters
    ----------
    original, released : pandas.DataFrame or Microdata
    analyses : list of LinearRegression, LogisticRegression, PrincipalComponents, UserAnalysis
        (or release-spec tables, see :func:`analysis_from_dict`).
    raise_errors : bool
        With False, an analysis that fails on the released data (e.g. a category lost, a
        separated logistic fit) is listed in ``errors`` instead of raising.

    References
    ----------
    Matloff, N. and Tendick, P. (2018), section 5.1 (a): judge a release by the analyses its
    users will run, e.g. regression coefficients against the original standard errors.
    """
    orig, rel = _frame(original), _frame(released)
    rows: list[dict] = []
    errors: dict[str, str] = {}
    for a in analyses:
        if isinstance(a, Mapping):
            a = analysis_from_dict(a)
        try:
            ro = a.run(orig, orig)
            rr = a.run(rel, orig)
        except Exception as exc:  # statsmodels raises its own errors (singular, separation)
            if raise_errors and isinstance(exc, InputError):
                raise
            if raise_errors:
                raise InputError(f"{a.label}: the analysis failed: {exc}") from exc
            errors[a.label] = str(exc)
            continue
        for q, vo in ro["estimates"].items():
            vr = rr["estimates"].get(q, float("nan"))
            diff = vr - vo
            row = {"analysis": a.label, "quantity": q, "original": vo, "released": vr,
                   "difference": diff, "rel_diff": abs(diff) / abs(vo) if vo != 0 else float("nan"),
                   "n_original": ro["n"], "n_released": rr["n"]}
            if "se" in ro:
                se = ro["se"][q]
                row["original_se"] = se
                row["diff_in_se"] = diff / se if se > 0 else float("nan")
            rows.append(row)
        if "loadings" in ro:
            for i, (lo, lr) in enumerate(zip(ro["loadings"], rr["loadings"])):
                rows.append({"analysis": a.label, "quantity": f"loading_angle_deg[{i + 1}]",
                             "original": 0.0, "released": _angle(lo, lr), "difference": _angle(lo, lr),
                             "rel_diff": float("nan"), "n_original": ro["n"], "n_released": rr["n"]})
    return AnalysisComparison(tuple(rows), errors)
