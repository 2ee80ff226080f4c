"""Noise addition for continuous variables: additive (uncorrelated or correlated) and
multiplicative, with Kim's linear transformation or an exact moment match afterwards.

``level`` is one number for every method, the noise variance relative to the data's:

- ``additive``: z_j = x_j + e_j with e_j ~ N(0, level * s_j^2), s_j the variable's sd
  (uncorrelated noise; variances grow by (1 + level), correlations shrink by 1 / (1 + level));
- ``correlated``: z = x + e with e ~ N(0, level * Sigma), Sigma the data's covariance matrix
  (Kim 1986; Tendick & Matloff 1994): Cov(z) = (1 + level) Sigma in expectation, so the
  correlation matrix is kept in expectation;
- ``multiplicative``: z_j = x_j * f_j with f_j ~ N(1, level) (the relative error has
  variance ``level``; a value keeps its sign unless level is large);
- ``correlated2``: z_j = d x_j + (1 - d) x-bar_j + e_j with d = sqrt(1 - level) and
  e_j ~ N(0, level * s_j^2), level < 1 (Kim 1986's transformation applied to uncorrelated
  noise; sdcMicro's ``addNoise(method = "correlated2", delta)`` with level = delta^2): means
  and variances are kept in expectation, every covariance is multiplied by 1 - level.

``restore`` then transforms z:

- ``"kim"`` (correlated noise only): y = d z + (1 - d) x-bar with d = 1 / sqrt(1 + level)
  (Kim 1986), which restores the means and the covariance matrix in expectation;
- ``"exact"``: y = x-bar + (z - z-bar) A with A = L_z^{-T} L_x^T (Cholesky factors of the
  sample covariances), so the released means and covariance matrix equal the data's exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._random import RngLike, block_normals, seed_sequence
from .._validation import check_choice, check_float, param_error
from ..errors import InputError
from ..microdata import Microdata
from ..params import check_params, param
from ..registry import register_step
from ..result import Guarantee
from ._numeric import ContinuousResult, check_numeric, select_numeric, standardise
from .moments import exact_scale, psd_factor
from .summaries import lazy_moments_summary

METHODS = ("additive", "correlated", "multiplicative", "correlated2")
RESTORE = ("none", "kim", "exact")


def kim_factor(level: float) -> float:
    """d of Kim's transformation y = d z + (1 - d) x-bar: 1 / sqrt(1 + level)."""
    return 1.0 / np.sqrt(1.0 + level)


def _check_settings(owner: str, level: float, method: str, restore: str) -> float:
    level = check_float(owner, "level", level, low=0.0, low_open=True)
    check_choice(owner, "method", method, METHODS)
    check_choice(owner, "restore", restore, RESTORE)
    if method == "correlated2" and level >= 1:
        raise param_error(owner, "level", "a number in (0, 1) with method 'correlated2' (level = delta^2; "
                          "the data are shrunk by sqrt(1 - level))", level)
    if method == "correlated2" and restore != "none":
        raise param_error(owner, "restore", "'none' with method 'correlated2' (it restores means and "
                          "variances itself)", restore)
    if restore == "kim" and method != "correlated":
        raise param_error(owner, "restore", "'kim' only with method 'correlated' (Kim's transformation "
                          "restores covariances only for noise with the data's covariance)", restore)
    return level


def add_noise_array(X: np.ndarray, level: float, rng: RngLike = None, *, method: str = "additive",
                    restore: str = "none", names: Sequence[str] | None = None) -> np.ndarray:
    """Add noise to the columns of ``X``; returns a new array (NaN stays NaN).

    Parameters
    ----------
    X : ndarray (n, p)
        Continuous values.
    level : float > 0
        Noise variance relative to the data's (see the module notes).
    rng : int, Generator, SeedSequence or None
    method : {"additive", "correlated", "multiplicative"}
    restore : {"none", "kim", "exact"}
        Transformation after the noise: Kim's (correlated noise only) or the exact match of
        means and covariances (complete records only).
    names : list of str, optional
        Column names for messages.

    References
    ----------
    Kim, J. J. (1986). A method for limiting disclosure in microdata based on random noise and
    transformation. *Proc. Section on Survey Research Methods, ASA*, 303-308.
    Tendick, P. and Matloff, N. (1994). A modified random perturbation method for database
    security. *ACM TODS* 19(1), 47-63.
    Brand, R. (2002). Microdata protection through noise addition. In *Inference Control in
    Statistical Databases*, LNCS 2316, 97-116.
    """
    owner = "add_noise_array"
    level = _check_settings(owner, level, method, restore)
    X = check_numeric(X, names, where=owner, allow_nan=(restore != "exact"))
    n, p = X.shape
    if n < 2:
        raise InputError(f"{owner}: needs at least 2 records to measure the variables' spread; got {n}.")
    # draws and moments shared with the Dask engine, so both release the same values bit for
    # bit: column j's normals are Phi^-1 of the block uniforms of child j of the stream, and
    # means / sds / covariance come from exact (double-double) sums (masking.moments)
    ss, _ = seed_sequence(rng)
    if method == "multiplicative":
        Z = X * (1.0 + np.sqrt(level) * block_normals(ss, 0, n, p))         # f ~ N(1, level)
    elif method == "correlated2":
        # Kim (1986) with uncorrelated noise, as sdcMicro's correlated2 (delta^2 = level):
        # z = d x + (1 - d) x-bar + e, d = sqrt(1 - level), e_j ~ N(0, level s_j^2)
        complete = not np.isnan(X).any()
        means = X.mean(axis=0) if complete else np.nanmean(X, axis=0)
        sd = X.std(axis=0, ddof=1) if complete else np.nanstd(X, axis=0, ddof=1)
        if not np.all(sd > 0):
            standardise(X, names, where=owner)                              # names the constant variable
        d = np.sqrt(1.0 - level)
        # memory engine only: the generator's own normals (no block scheme shared with Dask)
        Z = np.random.default_rng(ss).standard_normal((n, p))
        Z *= np.sqrt(level) * sd                                            # e_j ~ N(0, level s_j^2)
        Z += (1.0 - d) * means
        Z += d * X
    else:
        if method == "correlated" and (~np.isnan(X).any(axis=1)).sum() < 2:
            raise InputError(f"{owner}: fewer than 2 records have all the variables; the covariance "
                             "matrix cannot be estimated: use kind = \"additive\" or impute.")
        # correlated noise without Kim's transformation needs the covariance only
        means, sd, S = exact_scale(X, method, moments=method != "correlated" or restore == "kim")
        if method == "correlated":
            sd = np.sqrt(np.diag(S))                                        # Sigma
        if not np.all(sd > 0):
            standardise(X, names, where=owner)                              # names the constant variable
        if method == "additive" and p == 1:
            # one column: the normals are drawn into one buffer, scaled and shifted in place
            # (the same operations, element by element, as the general path below)
            E = _standard_normals(ss, n)
            E *= np.sqrt(level) * sd[0]                                     # e ~ N(0, level s^2)
            E += X[:, 0]
            Z = E.reshape(n, 1)
        else:
            E = block_normals(ss, 0, n, p)
            if method == "additive":
                E *= np.sqrt(level) * sd                                    # e_j ~ N(0, level s_j^2)
            else:
                E = np.einsum("il,jl->ij", E, np.sqrt(level) * psd_factor(S))  # e = F u ~ N(0, level Sigma)
            E += X
            Z = E
    if restore == "kim":
        d = kim_factor(level)                                               # Kim (1986): y = d z + (1 - d) x-bar
        Z = d * Z + (1.0 - d) * means
    elif restore == "exact":
        Z = match_moments(X, Z)
    return Z


def _standard_normals(ss, n: int) -> np.ndarray:
    """Column 0's normals of :func:`~sdckit._random.block_normals` (Phi^{-1} of the block
    uniforms of child 0 of ``ss``, u = 0 taken as 2^-54), drawn in place in one buffer. The
    uniforms are multiples of 2^-53, so max(u, 2^-54) is the same as the zero rule."""
    from scipy.special import ndtri

    from .._random import block_uniforms, child_stream

    u = block_uniforms(child_stream(ss, 0), 0, n)
    np.maximum(u, 2.0 ** -54, out=u)
    return ndtri(u, out=u)


def match_moments(X: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """y = x-bar + (z - z-bar) A with A^T Cov(z) A = Cov(x): the means and the covariance
    matrix of y equal X's exactly (A = L_z^{-T} L_x^T from Cholesky factors)."""
    Lx = np.linalg.cholesky(np.atleast_2d(np.cov(X, rowvar=False)))
    Lz = np.linalg.cholesky(np.atleast_2d(np.cov(Z, rowvar=False)))
    A = np.linalg.solve(Lz.T, Lx.T)
    return X.mean(axis=0) + (Z - Z.mean(axis=0)) @ A


def check_noise(X: np.ndarray, Y: np.ndarray, level: float, method: str, restore: str, *,
                corr_x: np.ndarray | None = None) -> dict:
    """Independent check of the noise on the output.

    Recovers the noise from (X, Y): e = Y - X (additive, correlated), Y / X - 1
    (multiplicative, X != 0), (Y - (1 - d) x-bar) / d - X after Kim's transformation; and
    measures its variance relative to the data's per variable (to be within 6 standard
    errors of ``level``: the sampling sd of a variance ratio is about level * sqrt(2 / m))
    and, for correlated noise, the largest difference between the correlation matrices of
    the noise and of the data (within 6 / sqrt(m)). After ``restore="exact"`` it checks the
    means and covariance matrix instead (relative error below 1e-8). ``corr_x``: the
    correlation matrix of complete ``X``, when the caller has it.
    """
    m = X.shape[0] if not np.isnan(X).any() else int((~np.isnan(X)).all(axis=1).sum())
    out = {"records": m}
    if restore == "exact":
        mean_err = np.abs(Y.mean(axis=0) - X.mean(axis=0)) / (X.std(axis=0) + 1e-300)
        cx, cy = np.cov(X, rowvar=False), np.cov(Y, rowvar=False)
        cov_err = np.abs(cy - cx) / (np.sqrt(np.outer(np.diag(cx), np.diag(cx))) + 1e-300)
        out.update(max_mean_error_sd=float(mean_err.max()), max_cov_error=float(np.max(cov_err)),
                   holds=bool(mean_err.max() < 1e-8 and np.max(cov_err) < 1e-8),
                   realised_ratio=(np.nanvar(Y - X, axis=0, ddof=1) / np.nanvar(X, axis=0, ddof=1)).tolist())
        return out
    # complete data (the usual case): plain moments, no NaN masks
    complete = m == X.shape[0]
    var = (lambda A: np.var(A, axis=0, ddof=1)) if complete else (lambda A: np.nanvar(A, axis=0, ddof=1))
    cross = None
    if method == "correlated2":
        d = np.sqrt(1.0 - level)
        if complete:
            # e = y - d x - (1 - d) x-bar, so Var(e) = Var(y - d x): from the centred cross
            # products (three p x p products, no n x p noise array)
            Xc, Yc = X - X.mean(axis=0), Y - Y.mean(axis=0)
            cx, cy, cxy = Xc.T @ Xc, Yc.T @ Yc, Xc.T @ Yc
            cross = (cx, cy)
            ratio = np.diag(cy - 2.0 * d * cxy + d * d * cx) / (level * np.diag(cx))
            m_col = np.full(X.shape[1], X.shape[0])
        else:
            E = Y - d * X
            E -= (1.0 - d) * np.nanmean(X, axis=0)
            ratio = np.nanvar(E, axis=0, ddof=1) / (level * np.nanvar(X, axis=0, ddof=1))
            m_col = (~np.isnan(E)).sum(axis=0)
    elif method == "multiplicative":
        with np.errstate(divide="ignore", invalid="ignore"):
            E = np.where(X != 0, Y / X - 1.0, np.nan)
        ratio = np.nanvar(E, axis=0, ddof=1) / level
        m_col = (~np.isnan(E)).sum(axis=0)
    else:
        if restore == "kim":
            d = kim_factor(level)
            E = (Y - (1.0 - d) * (X.mean(axis=0) if complete else np.nanmean(X, axis=0))) / d - X
        else:
            E = Y - X
        complete = complete and not np.isnan(E).any()
        if complete:
            ratio = var(E) / (level * var(X))
            m_col = np.full(E.shape[1], E.shape[0])
        else:
            ratio = np.nanvar(E, axis=0, ddof=1) / (level * np.nanvar(X, axis=0, ddof=1))
            m_col = (~np.isnan(E)).sum(axis=0)
    tol = 6.0 * np.sqrt(2.0 / np.maximum(m_col - 1, 1))
    ok = bool(np.all(np.abs(ratio - 1.0) <= tol))
    out.update(realised_ratio=(ratio * level).tolist(), tolerance=tol.tolist())
    if method == "correlated2" and X.shape[1] > 1:
        # the covariances shrink by 1 - level: measured on complete records, as the share of the
        # data's covariance kept (off-diagonal), reported beside the expected factor
        if cross is not None:
            cx, cy = cross                                  # (n - 1) x the covariances: a ratio
        else:
            rows = ~(np.isnan(X).any(axis=1) | np.isnan(Y).any(axis=1))
            Xc, Yc = X[rows] - X[rows].mean(axis=0), Y[rows] - Y[rows].mean(axis=0)
            cx, cy = Xc.T @ Xc, Yc.T @ Yc
        off = ~np.eye(X.shape[1], dtype=bool)
        out["covariance_factor_expected"] = 1.0 - level
        out["covariance_factor_realised"] = float(np.sum(cy[off] * cx[off]) / np.sum(cx[off] ** 2))
    if method == "correlated" and X.shape[1] > 1:
        if complete:
            cx = np.corrcoef(X, rowvar=False) if corr_x is None else corr_x
            dc, n_rows = np.abs(np.corrcoef(E, rowvar=False) - cx), E.shape[0]
        else:
            rows = ~np.isnan(E).any(axis=1)
            dc = np.abs(np.corrcoef(E[rows], rowvar=False) - np.corrcoef(X[rows], rowvar=False))
            n_rows = int(rows.sum())
        out["max_noise_correlation_gap"] = float(np.max(dc))
        ok &= bool(np.max(dc) <= 6.0 / np.sqrt(max(n_rows - 1, 1)))
    out["holds"] = ok
    return out


@dataclass(frozen=True)
class NoiseResult(ContinuousResult):
    """Noise addition result (the summary holds the realised noise level per variable)."""


@register_step("noise", engines=("memory", "dask"))
@dataclass(frozen=True)
class Noise:
    """Add random noise to numeric variables.

    Parameters
    ----------
    level : float > 0
        Noise variance relative to the data's variance (additive: per variable; correlated:
        level * covariance matrix; multiplicative: variance of the factor around 1). sdcMicro's
        ``addNoise(noise = 150)`` (sd = 1.5 s_j) is level = 2.25.
    variables : list of str, optional
        Numeric variables (default: the numeric_vars role).
    kind : {"additive", "correlated", "multiplicative", "correlated2"}
        The noise model (``method`` names the step in a release spec, hence ``kind``).
        ``correlated2``: z = sqrt(1 - level) x + (1 - sqrt(1 - level)) x-bar + e, e_j ~ N(0,
        level s_j^2), level < 1 (sdcMicro's correlated2 with delta = sqrt(level)): means and
        variances kept in expectation, covariances multiplied by 1 - level.
    restore : {"none", "kim", "exact"}
        After the noise: nothing; Kim's transformation (means and covariances restored in
        expectation, correlated noise only); exact match of means and covariances.

    Notes
    -----
    Missing values stay missing (restore = "exact" needs complete records). The covariance of
    correlated noise is that of the complete records. Guarantee (checked independently on
    the output): the noise recovered from the output has the stated level within sampling
    error (and, correlated, the data's correlation matrix); with restore = "exact", the means
    and covariance matrix are the data's.

    References
    ----------
    Kim (1986), Tendick & Matloff (1994), Brand (2002): full entries under
    :func:`add_noise_array`.
    """

    level: float = param(0.1, kind="float", low=0.0, low_open=True, unit="share of variance",
                         grid=(0.01, 0.05, 0.1, 0.25, 0.5),
                         help="noise variance relative to the data's variance")
    variables: Sequence[str] | None = param(None, kind="columns", nullable=True,
                                            help="numeric variables (default: the numeric_vars role)")
    kind: str = param("correlated", kind="choice", choices=METHODS,
                      help="noise model: additive, correlated (Kim), multiplicative, or correlated2 "
                           "(shrink by sqrt(1 - level), add uncorrelated noise)")
    restore: str = param("none", kind="choice", choices=RESTORE,
                         help="after the noise: nothing, Kim's transformation (correlated only), "
                              "or an exact match of means and covariances")

    def __post_init__(self) -> None:
        check_params(self)
        _check_settings("Noise", self.level, self.kind, self.restore)
        if self.restore == "kim" and self.kind != "correlated":
            raise param_error("Noise", "restore", "'kim' only with method 'correlated' (Kim's "
                              "transformation restores covariances only for noise with the data's "
                              "covariance)", self.restore)

    def apply(self, microdata: Microdata, *, rng=None) -> NoiseResult:
        names, X, _ = select_numeric(microdata, self.variables, where="noise",
                                     allow_nan=(self.restore != "exact"))
        ss, record = seed_sequence(rng)
        Y = add_noise_array(X, self.level, ss, method=self.kind, restore=self.restore, names=names)
        if len(names) == 1 and Y.shape[1] == 1 and Y[:, 0].flags.c_contiguous:
            # the one released column is the drawn buffer itself: no copy into the frame
            import pandas as pd

            released = microdata.with_columns({names[0]: pd.Series(Y[:, 0], index=microdata.frame.index,
                                                                   name=names[0], copy=False)})
        else:
            released = microdata.with_columns({v: Y[:, j] for j, v in enumerate(names)})
        corr_x = None
        if self.kind == "correlated" and self.restore != "exact" and X.shape[1] > 1 and X.shape[0] >= 3 \
                and X.flags.c_contiguous and not np.isnan(X).any():
            corr_x = np.corrcoef(X, rowvar=False)        # read by the check and the summary
        chk = check_noise(X, Y, self.level, self.kind, self.restore, corr_x=corr_x)
        # the moments before and after are report figures: computed when the summary is read
        summary = lazy_moments_summary(
            {"variables": names, "kind": self.kind, "level": self.level, "restore": self.restore,
             "noise_sd_share": float(np.sqrt(self.level)),
             "realised_level": dict(zip(names, chk["realised_ratio"])),
             **{k: chk[k] for k in ("covariance_factor_expected", "covariance_factor_realised") if k in chk}},
            X, Y, names, corr_before=corr_x)
        if self.restore == "exact":
            g = Guarantee("moments_restored", "released means and covariance matrix equal the data's "
                          "(relative error < 1e-8)", {"mean": chk["max_mean_error_sd"], "cov": chk["max_cov_error"]},
                          chk["holds"])
        else:
            what = ("noise covariance = level x data covariance" if self.kind == "correlated" else
                    "z = sqrt(1 - level) x + (1 - sqrt(1 - level)) x-bar + e, noise variance = level x "
                    "each variable's variance" if self.kind == "correlated2" else
                    "noise variance = level x each variable's variance" if self.kind == "additive" else
                    "multiplicative factor variance = level")
            g = Guarantee("noise_level", f"{what} (level {self.level:g}), within 6 standard errors",
                          dict(zip(names, chk["realised_ratio"])), chk["holds"])
        params = {"level": self.level, "variables": names, "kind": self.kind, "restore": self.restore}
        return NoiseResult("noise", released, params, summary, (g,), record)

    # ---- the Dask engine's protocol (sdckit.registry.DaskPlan)
    def dask_plan(self, roles):
        """Noise at scale: moments merged over partitions, each partition's noise from its rows."""
        from ..errors import SpecError
        from ..registry import DaskPlan

        if self.kind == "correlated2":
            raise SpecError("kind: \"correlated2\" runs in memory only; use the memory engine or "
                            "kind = \"correlated\" with restore = \"kim\".")
        if self.restore not in ("none", "kim"):
            raise SpecError(f"restore: {self.restore!r} needs a second pass over the output and runs in "
                            "memory only; use \"none\" or \"kim\" on the Dask engine.")
        cols = tuple(self.variables or roles.get("numeric_vars", ()))
        return DaskPlan("noise", cols, cols)
