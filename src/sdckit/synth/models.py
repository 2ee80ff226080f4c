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

from .tree import Tree, grow_tree

#: the methods a variable may be given (``constant`` is chosen automatically)
METHODS = ("cart", "sample", "norm", "normrank", "logreg", "polyreg", "pmm", "passive")
NUMERIC_ONLY = ("norm", "normrank", "pmm")
CATEGORICAL_ONLY = ("logreg", "polyreg")


# ----------------------------------------------------------------------------- helpers
def decimal_places(values: np.ndarray) -> int:
    """The most decimal places among the values (at most 15), as synthpop's rounding of
    synthetic values uses."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return 0
    v = np.unique(v)
    for d in range(16):
        s = v * 10.0 ** d
        if np.all(np.abs(s - np.round(s)) <= 1e-9 * np.maximum(1.0, np.abs(s))):
            return d
    return 15


def _binned_pair_counts(x: np.ndarray, nb: int) -> tuple[float, np.ndarray]:
    """Bin width and the counts of pairs of values ``k`` bins apart (k = 0 .. nb-1)."""
    lo, hi = float(x.min()), float(x.max())
    d = (hi - lo) * 1.01 / nb
    if d <= 0:
        return 1.0, np.zeros(nb)
    b = np.minimum(((x - lo) / d).astype(np.int64), nb - 1)
    c = np.bincount(b, minlength=nb).astype(np.float64)
    # pairs i < j at bin distance k: sum_b c[b] c[b + k] (k > 0), c(c-1)/2 within a bin
    full = np.correlate(c, c, mode="full")[nb - 1:]
    full[0] = float(np.sum(c * (c - 1.0))) / 2.0
    return d, full


def _psi(n: int, d: float, cnt: np.ndarray, h: float, order: int) -> float:
    """Binned estimate of the density functional psi_r (r = 4 or 6) with a Gaussian kernel
    (Sheather & Jones 1991, eq. (6); Wand & Jones 1995, section 3.6.1)."""
    delta = (np.arange(cnt.shape[0]) * d / h) ** 2
    keep = delta < 1000.0
    delta, c = delta[keep], cnt[keep]
    if order == 4:
        term = np.exp(-delta / 2.0) * (delta * delta - 6.0 * delta + 3.0)
        s = 2.0 * np.sum(term * c) + n * 3.0
        return s / (n * (n - 1) * h ** 5 * math.sqrt(2.0 * math.pi))
    term = np.exp(-delta / 2.0) * (delta ** 3 - 15.0 * delta ** 2 + 45.0 * delta - 15.0)
    s = 2.0 * np.sum(term * c) - 15.0 * n
    return s / (n * (n - 1) * h ** 7 * math.sqrt(2.0 * math.pi))


def sheather_jones_bandwidth(x: np.ndarray, nb: int = 1000) -> float:
    """The Sheather-Jones "solve the equation" bandwidth of a Gaussian kernel density.

    h solves ``h = (R(K) / (n * psi_4(g(h))))^(1/5)`` with the pilot ``g(h) = 1.357 *
    (psi_4(a) / -psi_6(b))^(1/7) * h^(5/7)`` and the normal-reference pilots ``a``, ``b``
    (Sheather & Jones 1991, section 3, eqs. (9)-(12)); the functionals are estimated on 1000
    bins. This is the ``width = "SJ"`` bandwidth synthpop's density smoothing uses.
    """
    from scipy.optimize import brentq

    x = np.asarray(x, dtype=np.float64)
    x = x[np.isfinite(x)]
    n = x.size
    if n < 2:
        return 0.0
    sd = float(np.std(x, ddof=1))
    q75, q25 = np.percentile(x, [75, 25])
    scale = min(sd, (q75 - q25) / 1.349) if q75 > q25 else sd
    if not scale > 0:
        return 0.0
    d, cnt = _binned_pair_counts(x, nb)
    a = 1.24 * scale * n ** (-1.0 / 7.0)
    b = 1.23 * scale * n ** (-1.0 / 9.0)
    c1 = 1.0 / (2.0 * math.sqrt(math.pi) * n)
    td = -_psi(n, d, cnt, b, 6)
    sda = _psi(n, d, cnt, a, 4)
    if not (td > 0 and sda > 0):
        return 1.06 * scale * n ** -0.2   # degenerate pilots: the normal reference rule
    alph2 = 1.357 * (sda / td) ** (1.0 / 7.0)

    def f(h: float) -> float:
        v = _psi(n, d, cnt, alph2 * h ** (5.0 / 7.0), 4)
        return (c1 / v) ** 0.2 - h if v > 0 else -h

    hmax = 1.144 * scale * n ** -0.2
    lower, upper = 0.1 * hmax, hmax
    for _ in range(100):
        if f(lower) * f(upper) <= 0:
            break
        lower, upper = lower / 1.2, upper * 1.2
    else:
        return 1.06 * scale * n ** -0.2
    return float(brentq(f, lower, upper, xtol=0.1 * lower))


@dataclass(frozen=True)
class Smoother:
    """Gaussian kernel smoothing of synthetic values (synthpop's ``smoothing = "density"``).

    Computed once from the observed values: the bandwidth (Sheather-Jones), the value left
    unsmoothed when it holds more than 70% of the records, the top code left unsmoothed when
    the largest value is ten times as frequent as the next one, the bounds ``[min, max]`` (the
    upper one ``max + bandwidth`` when there is no top code) and the decimals to round to.
    """

    bandwidth: float
    lower: float
    upper: float
    decimals: int
    modal: float | None
    top: float | None

    @classmethod
    def fit(cls, y: np.ndarray) -> Smoother:
        y = np.asarray(y, dtype=np.float64)
        y = y[np.isfinite(y)]
        vals, counts = np.unique(y, return_counts=True)
        modal = float(vals[np.argmax(counts)]) if counts.max() / counts.sum() > 0.7 else None
        top = None
        if vals.size >= 2 and 10 * counts[-2] < counts[-1] - counts[-2]:
            top = float(vals[-1])
        keep = np.ones(y.shape[0], dtype=bool)
        if modal is not None:
            keep &= y != modal
        if top is not None:
            keep &= y != top
        bw = sheather_jones_bandwidth(y[keep]) if keep.sum() >= 2 else 0.0
        upper = float(y.max()) if top is not None else float(y.max()) + bw
        return cls(bw, float(y.min()), upper, decimal_places(y), modal, top)

    def apply(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        v = np.asarray(values, dtype=np.float64).copy()
        z = rng.standard_normal(v.shape[0])   # one normal per record, used or not
        if self.bandwidth <= 0:
            return v
        move = np.ones(v.shape[0], dtype=bool)
        if self.modal is not None:
            move &= v != self.modal
        if self.top is not None:
            move &= v != self.top
        w = v[move] + self.bandwidth * z[move]
        w = np.clip(w, self.lower, self.upper)
        v[move] = np.round(w, self.decimals)
        return v


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
