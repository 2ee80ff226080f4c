"""The per-variable models of sequential synthesis, named as synthpop names them.

Each model is fitted once on the original records (``fit``) and then draws any number of
synthetic values from synthetic predictors (``draw``), so a large file can be drawn in
partitions, each from its own random stream, after a single fit.

``sample``
    a value drawn with replacement from the observed values (the marginal).
``cart``
    a classification or regression tree (:mod:`sdckit.synth.tree`, CART as rpart grows it)
    fitted on the predictors; each synthetic record falls into a leaf and takes the value of a
    record drawn at random from that leaf (a *donor*), optionally smoothed by a Gaussian kernel
    (synthpop's ``smoothing = "density"``; Nowok, Raab & Dibben 2016, section 3.1; Reiter 2005
    for trees as synthesisers).
``norm``
    linear regression, a synthetic value ``x'beta + sigma * z`` (ridge ``1e-5 * diag(X'X)``,
    sigma from the residuals with ``n - p - 1`` degrees of freedom), rounded to the decimals of
    the observed values.
``normrank``
    ``norm`` on the normal scores ``Phi^-1(rank / (n + 1))`` of the observed values, mapped
    back to the observed value of the same rank.
``pmm``
    predictive mean matching: the regression's prediction for each synthetic record, matched
    to the three observed records with the closest predictions, one of which gives its value.
``logreg``, ``polyreg``
    logistic regression (two categories) and multinomial logistic regression (more), the
    category drawn from the fitted probabilities.
``passive``
    derived from earlier variables by a formula (:mod:`sdckit.synth.expr`), not modelled.
``constant``
    a variable with a single value keeps it.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .smoothing import Smoother, decimal_places, sheather_jones_bandwidth
from .tree import Tree, grow_tree

#: the methods a variable may be given (``constant`` is chosen automatically)
METHODS = ("cart", "sample", "norm", "normrank", "logreg", "polyreg", "pmm", "passive")
NUMERIC_ONLY = ("norm", "normrank", "pmm")
CATEGORICAL_ONLY = ("logreg", "polyreg")


# the values' decimals, the Sheather-Jones bandwidth and the kernel smoother live in
# sdckit.synth.smoothing (kept importable here)


# ----------------------------------------------------------------------------- models
@dataclass
class Fitted:
    """A fitted model of one variable: ``draw(x, rng) -> values`` for synthetic predictors.

    ``x`` is a :class:`Predictors` view of the synthetic records; categorical values are
    codes ``0..n_classes-1``, numeric ones floats.
    """

    method: str
    details: dict = field(default_factory=dict)

    def draw(self, x: Predictors, rng: np.random.Generator) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError


@dataclass
class Predictors:
    """The predictors of some records, in the two forms the models read.

    ``binned`` is a whole frame's matrix of tree bins (records x slots, uint8); the predictors
    are its columns ``features`` and the records its rows ``rows`` (no copy). ``sources`` holds
    each predictor's full column of raw values (floats, or category codes), read for the
    regressions at ``rows`` (:attr:`raw`, :meth:`design`).
    """

    binned: np.ndarray
    features: np.ndarray
    rows: np.ndarray
    is_cat: np.ndarray
    n_levels: np.ndarray
    sources: list
    _raw: list | None = None

    @classmethod
    def none(cls, n: int) -> Predictors:
        """No predictor, ``n`` records."""
        return cls(np.zeros((n, 0), np.uint8), np.zeros(0, np.int64), np.arange(n, dtype=np.int64),
                   np.zeros(0, bool), np.zeros(0, np.int64), [])

    @property
    def n(self) -> int:
        return int(self.rows.shape[0])

    @property
    def p(self) -> int:
        return int(self.features.shape[0])

    @property
    def raw(self) -> list:
        if self._raw is None:
            self._raw = [src[self.rows] for src in self.sources]
        return self._raw

    def design(self, keep_levels: list | None = None) -> np.ndarray:
        """Numeric predictors as they are, categorical ones as dummies (first level dropped)."""
        cols = []
        for j, v in enumerate(self.raw):
            if self.is_cat[j]:
                levels = range(1, int(self.n_levels[j])) if keep_levels is None else keep_levels[j]
                for lv in levels:
                    cols.append((v == lv).astype(np.float64))
            else:
                cols.append(np.asarray(v, dtype=np.float64))
        if not cols:
            return np.zeros((self.n, 0))
        return np.column_stack(cols)

    def levels_present(self) -> list:
        """Levels (beyond the first present) of each categorical predictor: the dummies a
        regression keeps."""
        out = []
        for j, v in enumerate(self.raw):
            if self.is_cat[j]:
                present = np.flatnonzero(np.bincount(v, minlength=int(self.n_levels[j])))
                out.append(list(present[1:]))
            else:
                out.append(None)
        return out


@dataclass
class SampleModel(Fitted):
    values: np.ndarray = field(default_factory=lambda: np.zeros(0))
    smoother: Smoother | None = None

    def draw(self, x: Predictors, rng: np.random.Generator) -> np.ndarray:
        out = self.values[rng.integers(0, self.values.shape[0], x.n)]
        if self.smoother is not None:
            out = self.smoother.apply(out, rng)
        return out


@dataclass
class ConstantModel(Fitted):
    value: Any = 0

    def draw(self, x: Predictors, rng: np.random.Generator) -> np.ndarray:
        return np.full(x.n, self.value)


@dataclass
class CartModel(Fitted):
    """A tree and its donors: ``donors[start[leaf]:end[leaf]]`` are the observed values of
    the records in each leaf."""

    tree: Tree | None = None
    donors: np.ndarray = field(default_factory=lambda: np.zeros(0))
    smoother: Smoother | None = None

    def draw(self, x: Predictors, rng: np.random.Generator) -> np.ndarray:
        tree = self.tree
        leaf = tree.apply(x.binned, x.is_cat, x.features, x.rows)
        u = rng.random(x.n)
        size = tree.end[leaf] - tree.start[leaf]
        pos = tree.start[leaf] + np.minimum((u * size).astype(np.int64), size - 1)
        out = self.donors[pos]
        if self.smoother is not None:
            out = self.smoother.apply(out, rng)
        return out


def _ridge_ols(X: np.ndarray, y: np.ndarray, ridge: float = 1e-5) -> tuple[np.ndarray, float]:
    """Coefficients with synthpop's ridge ``ridge * diag(X'X)`` and sigma with n - p - 1
    degrees of freedom (``.norm.fix.syn``)."""
    xtx = X.T @ X
    pen = ridge * np.diag(xtx)
    beta = np.linalg.solve(xtx + np.diag(pen), X.T @ y)
    res = y - X @ beta
    dof = max(y.shape[0] - X.shape[1] - 1, 1)
    return beta, float(math.sqrt(float(res @ res) / dof))


@dataclass
class NormModel(Fitted):
    beta: np.ndarray = field(default_factory=lambda: np.zeros(0))
    sigma: float = 0.0
    decimals: int = 0
    levels: list | None = None

    def draw(self, x: Predictors, rng: np.random.Generator) -> np.ndarray:
        X = np.column_stack([np.ones(x.n), x.design(self.levels)])
        return np.round(X @ self.beta + rng.standard_normal(x.n) * self.sigma, self.decimals)


@dataclass
class NormRankModel(Fitted):
    beta: np.ndarray = field(default_factory=lambda: np.zeros(0))
    sigma: float = 0.0
    sorted_y: np.ndarray = field(default_factory=lambda: np.zeros(0))
    levels: list | None = None
    smoother: Smoother | None = None

    def draw(self, x: Predictors, rng: np.random.Generator) -> np.ndarray:
        from scipy.special import ndtr

        X = np.column_stack([np.ones(x.n), x.design(self.levels)])
        pred = X @ self.beta + rng.standard_normal(x.n) * self.sigma
        m = self.sorted_y.shape[0]
        r = np.clip(np.round(ndtr(pred) * (m + 1)).astype(np.int64), 1, m)
        out = self.sorted_y[r - 1]
        if self.smoother is not None:
            out = self.smoother.apply(out, rng)
        return out


@dataclass
class PmmModel(Fitted):
    beta: np.ndarray = field(default_factory=lambda: np.zeros(0))
    fitted_sorted: np.ndarray = field(default_factory=lambda: np.zeros(0))
    y_sorted: np.ndarray = field(default_factory=lambda: np.zeros(0))
    levels: list | None = None
    donors: int = 3
    smoother: Smoother | None = None

    def draw(self, x: Predictors, rng: np.random.Generator) -> np.ndarray:
        X = np.column_stack([np.ones(x.n), x.design(self.levels)])
        z = X @ self.beta
        f = self.fitted_sorted
        m = f.shape[0]
        d = self.donors
        pos = np.searchsorted(f, z)
        # the d closest fitted values lie among the d on each side of the insertion point
        off = np.arange(-d, d)
        cand = np.clip(pos[:, None] + off[None, :], 0, m - 1)
        dist = np.abs(f[cand] - z[:, None])
        # ties broken at random (a tiny random key), as synthpop's rank(ties = "random")
        key = dist + rng.random(dist.shape) * 1e-12 * (1.0 + np.abs(z[:, None]))
        # repeated candidates (clipped at the ends) must not count twice
        dup = np.zeros_like(key, dtype=bool)
        dup[:, 1:] = cand[:, 1:] == cand[:, :-1]
        key[dup] = np.inf
        nearest = np.argsort(key, axis=1)[:, :d]
        n_ok = np.minimum(np.isfinite(np.take_along_axis(key, nearest, axis=1)).sum(axis=1), d)
        pick = (rng.random(x.n) * n_ok).astype(np.int64)
        chosen = cand[np.arange(x.n), nearest[np.arange(x.n), pick]]
        out = self.y_sorted[chosen]
        if self.smoother is not None:
            out = self.smoother.apply(out, rng)
        return out


@dataclass
class LogitModel(Fitted):
    """Logistic (two categories) or multinomial logistic regression: the category drawn from
    the fitted probabilities (numeric predictors scaled to [0, 1] as synthpop's polyreg does)."""

    model: Any = None
    classes: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    scale: list | None = None
    levels: list | None = None

    def draw(self, x: Predictors, rng: np.random.Generator) -> np.ndarray:
        X = _scaled(x.design(self.levels), self.scale)
        if self.model is None:
            return np.full(x.n, self.classes[0])
        prob = self.model.predict_proba(X)
        cum = np.cumsum(prob, axis=1)
        u = rng.random(x.n)
        idx = np.minimum((u[:, None] > cum).sum(axis=1), prob.shape[1] - 1)
        return self.classes[idx]


def _scaled(X: np.ndarray, scale: list | None) -> np.ndarray:
    if scale is None or X.shape[1] == 0:
        return X
    lo, span = scale
    return (X - lo) / span


# ----------------------------------------------------------------------------- fitting
def fit_model(method: str, y: np.ndarray, x: Predictors, *, categorical: bool, n_classes: int,
              min_leaf: int = 5, cp: float = 1e-8, smoothing: bool = False) -> Fitted:
    """Fit ``method`` for outcome ``y`` (codes or floats, one per record of ``x.rows``) on the
    predictors ``x``."""
    y = np.asarray(y)
    if y.shape[0] == 0:
        raise ValueError("no records to fit")
    if method == "sample" or x.p == 0:
        smoother = Smoother.fit(y) if smoothing and not categorical else None
        return SampleModel("sample", values=y.copy(), smoother=smoother)
    if method == "cart":
        n_all = x.binned.shape[0]
        y_all = np.zeros(n_all, dtype=np.int64 if categorical else np.float64)
        y_all[x.rows] = y
        if categorical:
            tree = grow_tree(x.binned, x.is_cat, y_class=y_all, n_classes=n_classes, min_leaf=min_leaf,
                             cp=cp, rows=x.rows, feats=x.features)
        else:
            tree = grow_tree(x.binned, x.is_cat, y=y_all, min_leaf=min_leaf, cp=cp, rows=x.rows,
                             feats=x.features)
        donors = y_all[tree.order]
        leaves = tree.leaves
        slim = dataclasses.replace(tree, order=np.zeros(0, dtype=np.int64))
        return CartModel("cart", {"leaves": int(leaves.shape[0])}, tree=slim, donors=donors,
                         smoother=Smoother.fit(y) if smoothing and not categorical else None)
    levels = x.levels_present()
    X = np.column_stack([np.ones(x.n), x.design(levels)])
    if method in ("norm", "normrank", "pmm"):
        yf = y.astype(np.float64)
        if method == "normrank":
            from scipy.special import ndtri
            from scipy.stats import rankdata

            z = ndtri(rankdata(yf) / (yf.shape[0] + 1))
            beta, sigma = _ridge_ols(X, z)
            return NormRankModel("normrank", beta=beta, sigma=sigma, sorted_y=np.sort(yf), levels=levels,
                                 smoother=Smoother.fit(yf) if smoothing else None)
        beta, sigma = _ridge_ols(X, yf)
        if method == "norm":
            return NormModel("norm", beta=beta, sigma=sigma, decimals=decimal_places(yf), levels=levels)
        fitted = X @ beta
        o = np.argsort(fitted, kind="mergesort")
        return PmmModel("pmm", beta=beta, fitted_sorted=fitted[o], y_sorted=yf[o], levels=levels,
                        smoother=Smoother.fit(yf) if smoothing else None)
    if method in ("logreg", "polyreg"):
        from sklearn.linear_model import LogisticRegression

        design = X[:, 1:]
        lo = design.min(axis=0) if design.shape[1] else np.zeros(0)
        span = design.max(axis=0) - lo if design.shape[1] else np.zeros(0)
        span = np.where(span > 0, span, 1.0)
        scale = [lo, span]
        classes = np.unique(y.astype(np.int64))
        if classes.shape[0] < 2:
            return LogitModel(method, classes=classes, scale=scale, levels=levels)
        model = LogisticRegression(C=1e4, max_iter=1000)
        model.fit(_scaled(design, scale), y.astype(np.int64))
        return LogitModel(method, model=model, classes=model.classes_.astype(np.int64), scale=scale,
                          levels=levels)
    raise ValueError(f"unknown method {method!r}")


def usable_predictors(x: Predictors, y: np.ndarray, eps: float = 1e-5, max_cor: float = 0.99999,
                      chunk: int = 65536) -> np.ndarray:
    """Which predictors to use: not constant (variance > eps on their numeric codes), not an
    almost exact copy of the outcome (correlation < max_cor), and no set of them almost
    collinear (the smallest eigenvalue of their correlation matrix over the largest > eps;
    the predictor loading most on the smallest eigenvector leaves first). This is synthpop's
    ``remove.lindep.syn``, applied before every model. The moments are accumulated over
    blocks of records (no copy of the whole predictor matrix)."""
    p = x.p
    if p == 0:
        return np.zeros(0, dtype=bool)
    n = x.n
    yv = np.asarray(y, dtype=np.float64)
    # centred cross-products of [predictors, y], block by block around a first-block shift
    shift = None
    s1 = np.zeros(p + 1)
    s2 = np.zeros((p + 1, p + 1))
    for a in range(0, n, chunk):
        rows = x.rows[a:a + chunk]
        block = np.empty((p + 1, rows.shape[0]))
        for j, src in enumerate(x.sources):
            block[j] = src[rows]
        block[p] = yv[a:a + chunk]
        if shift is None:
            shift = block.mean(axis=1)
        block -= shift[:, None]
        s1 += block.sum(axis=1)
        s2 += block @ block.T
    cov = (s2 - np.outer(s1, s1) / n) / max(n - 1, 1)
    var = np.diag(cov).copy()
    keep = var[:p] > eps
    if keep.any() and var[p] > 0:
        with np.errstate(invalid="ignore", divide="ignore"):
            c = cov[:p, p] / np.sqrt(var[:p] * var[p])
        ok = np.where(np.isnan(c), True, c < max_cor)
        keep &= ok
    while keep.sum() > 1:
        idx = np.flatnonzero(keep)
        sd = np.sqrt(var[idx])
        cx = cov[np.ix_(idx, idx)] / np.outer(sd, sd)
        w, v = np.linalg.eigh(cx)
        if w[0] / w[-1] >= eps:
            break
        keep[idx[int(np.argmax(np.abs(v[:, 0])))]] = False
    return keep


__all__ = ["METHODS", "Fitted", "Predictors", "Smoother", "fit_model", "sheather_jones_bandwidth",
           "decimal_places", "usable_predictors"]
