"""Log-linear model risk: the probability that a sample unique is population unique.

Sample frequencies say which records are rare in the sample; a log-linear model of the key
table says how rare their combinations are likely to be in the population. Following
Skinner and Shlomo (2008), the sample count of each cell k of the key table (all
combinations of the observed levels, empty ones included) is Poisson,

    f_k ~ Poisson(mu_k),   mu_k = pi_k lambda_k,   log mu_k = x_k' beta        (S&S eq. 2-3)

with pi_k the sampling fraction and lambda_k the expected population count. Given f_k, the
unseen part of the population cell is F_k - f_k | f_k ~ Poisson(lambda_k (1 - pi_k)), so a
sample unique (f_k = 1) has, with nu_k = lambda_k (1 - pi_k) = mu_k (1 - pi_k) / pi_k,

    P(F_k = 1 | f_k = 1)   = exp(-nu_k)                                        (S&S eq. 5)
    E(1 / F_k | f_k = 1)   = (1 - exp(-nu_k)) / nu_k                           (S&S eq. 6)

and the file-level measures are their sums over the sample-unique cells, tau1 (expected
number of sample uniques that are population unique) and tau2 (expected number of correct
matches of sample uniques). For a record with f_k >= 1 the model gives, more generally,
E(1 / F_k | f_k) = 1F1(1; f_k + 1; -nu_k) / f_k (a Kummer function: 1/(f+X) = int_0^1
t^(f+X-1) dt with X ~ Poisson(nu)), which is the per-record risk reported here.

The five fitting methods of sdcMicro's ``modRisk`` are all available:

* ``"default"``: Poisson GLM of the counts f_k on the model terms;
* ``"CE"`` (Clogg & Eliason 1987): the same with the offset log(f_k / W_k + 0.1), W_k the sum
  of the weights in cell k (0 / 0 read as 0), bringing the sampling fraction into the fit;
* ``"PML"`` (pseudo maximum likelihood): the response is the weighted count scaled to the
  sample size and rounded, round(W_k n / N);
* ``"weightedLLM"``: the counts with W_k as one more (linear) predictor;
* ``"IPF"``: iterative proportional fitting of the counts to the margins of the model's
  generating class (sdcMicro's former ``LLmodGlobalRisk``; the same maximum-likelihood fit as
  ``"default"`` by another algorithm).

The GLM methods are fitted by IRLS (Newton's method for the canonical log link) with a
treatment-coded design on the full grid of cells, empty cells included (as S&S and sdcMicro
fit). The design is kept implicit (:class:`MarginDesign`): each of its columns is the
indicator of a cell of a margin, so X'v and X'WX are margins of dense tensors over the grid,
which is far faster than a sparse C x p product when the grid has millions of cells
(:func:`design_matrix` builds the explicit ``scipy.sparse`` matrix, used to check the
margins). Cells in a zero margin of a model term have mu_k = 0 exactly (the extended
maximum-likelihood estimate), so they are left out and their non-estimable parameters
dropped.

sdcMicro's figures (``gr1``, ``gr2``) are reproduced as well, as ``sdcmicro_gr1`` and
``sdcmicro_gr2``: its code uses nu_k = mu_k (1 - pi_k) (the fitted sample-scale mean, without
the division by pi_k of S&S eq. 5) and divides the sums by the number of non-empty cells.

References
----------
Skinner, C. J. and Shlomo, N. (2008). Assessing identification risk in survey microdata
using log-linear models. Journal of the American Statistical Association 103(483), 989-1001.

Skinner, C. J. and Holmes, D. J. (1998). Estimating the re-identification risk per record in
microdata. Journal of Official Statistics 14(4), 361-372.

Rinott, Y. and Shlomo, N. (2006). A generalized negative binomial smoothing model for sample
disclosure risk estimation. Privacy in Statistical Databases, LNCS 4302, 82-93.

Elamir, E. A. H. and Skinner, C. J. (2006). Record level measures of disclosure risk for
survey microdata. Journal of Official Statistics 22(3), 525-539.

Clogg, C. C. and Eliason, S. R. (1987). Some common problems in log-linear analysis.
Sociological Methods and Research 16(1), 8-44.

Templ, M., Kowarik, A. and Meindl, B. (2015). Statistical disclosure control for micro-data
using the R package sdcMicro. Journal of Statistical Software 67(4). (``modRisk``.)
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.special import hyp1f1

from .._validation import check_choice, check_float, check_int
from ..errors import InputError
from ..result import jsonable
from ._loglinear_fit import (  # noqa: F401
    MAX_CELLS,
    KeyTable,
    MarginDesign,
    PoissonFit,
    design_matrix,
    fit_ipf,
    fit_poisson_newton,
    formula_text,
    independent_columns,
    key_table,
    parse_formula,
)

METHODS = ("default", "CE", "PML", "weightedLLM", "IPF")


#: Largest table whose model diagnostic is leverage-corrected (the correction costs about as
#: much as the fit; with many more cells than parameters it changes the score little).
LEVERAGE_MAX_CELLS = 200_000


# --------------------------------------------------------------------------------------------
# risk
# --------------------------------------------------------------------------------------------

def expected_inverse_population(f: np.ndarray, nu: np.ndarray) -> np.ndarray:
    """E(1 / F | f) for F = f + X, X ~ Poisson(nu): 1F1(1; f + 1; -nu) / f (f >= 1).

    For f = 1 this is (1 - exp(-nu)) / nu (S&S eq. 6), with the limit 1 at nu = 0.
    """
    f = np.asarray(f, dtype=np.float64)
    nu = np.asarray(nu, dtype=np.float64)
    out = np.empty(np.broadcast(f, nu).shape)
    one = f == 1
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        small = nu < 1e-8
        r1 = np.where(small, 1.0 - nu / 2.0, -np.expm1(-nu) / np.where(small, 1.0, nu))
        rk = hyp1f1(1.0, f + 1.0, -nu) / np.maximum(f, 1.0)
    out[...] = np.where(one, r1, rk)
    return out


def selection_diagnostic(f: np.ndarray, mu: np.ndarray, pi: np.ndarray,
                         leverage: np.ndarray | None = None) -> dict:
    """Standardised score for under- / over-fitting, weighted towards tau1 and tau2.

    Under the Poisson model E[(f_k - mu_k)^2 - f_k] = 0 and Var[(f_k - mu_k)^2 - f_k] = 2 mu_k^2;
    a positive sum means more dispersion than the model allows (under-fitting: add
    interactions), a negative one less (over-fitting). Following the construction of Skinner
    and Shlomo (2008, sec. 4), each cell is weighted by the sensitivity of the risk measure to
    extra-Poisson variation of lambda_k: with E_k = pi_k g(lambda_k) the expected
    contribution of cell k to tau (g1(l) = l exp(-l) for tau1, g2(l) = (exp(-pi l) -
    exp(-l)) / (1 - pi) for tau2), a variance s^2 of lambda_k shifts it by about
    pi_k g''(lambda_k) s^2 / 2, and (f_k - mu_k)^2 - f_k estimates pi_k^2 s^2, so

        h_k = g''(lambda_k) / (2 pi_k),   bias = sum_k h_k [(f_k - mu_k)^2 - f_k],
        B = sum_k |h_k| [(f_k - mu_k)^2 - f_k] / sqrt(sum_k 2 h_k^2 mu_k^2).

    ``bias`` estimates tau(true) - tau(model); |B| > 1.96 flags the model (B > 0 under-, B < 0
    over-fitting). With fitted means, E[(f_k - mu_k)^2] = mu_k (1 - h_kk) (h_kk the leverage of
    cell k, McCullagh & Nelder 1989, sec. 12.5), so ``leverage`` adds mu_k h_kk back to each
    term; without it a model with many parameters looks over-fitted.
    """
    f = np.asarray(f, float)
    mu = np.asarray(mu, float)
    pi = np.clip(np.asarray(pi, float), 1e-12, 1.0)
    lam = mu / pi
    d = (f - mu) ** 2 - f
    if leverage is not None:
        d = d + mu * np.asarray(leverage, float)
    out = {}
    for name, g2 in (("tau1", (lam - 2.0) * np.exp(-lam)),
                     ("tau2", np.where(pi < 1, (pi ** 2 * np.exp(-pi * lam) - np.exp(-lam))
                                       / np.maximum(1.0 - pi, 1e-12), 0.0))):
        h = g2 / (2.0 * pi)
        den = float(np.sqrt(np.sum(2.0 * h ** 2 * mu ** 2)))
        score = float(np.sum(np.abs(h) * d) / den) if den > 0 else 0.0
        verdict = ("adequate" if abs(score) <= 1.96 else
                   "under-fitting (add interactions)" if score > 0 else
                   "over-fitting (remove terms)")
        out[name] = {"score": score, "bias": float(np.sum(h * d)), "verdict": verdict}
    return out


@dataclass(frozen=True)
class LogLinearRisk:
    """Log-linear model risk of a sample (Skinner & Shlomo 2008).

    Attributes
    ----------
    method, formula : str
    tau1 : float
        Expected number of sample uniques that are population unique, sum over sample-unique
        cells of P(F_k = 1 | f_k = 1).
    tau2 : float
        Expected number of correct matches of sample uniques, sum of E(1 / F_k | f_k = 1).
    sdcmicro_gr1, sdcmicro_gr2 : float
        The same sums with sdcMicro's ``modRisk`` conventions (see the module notes).
    record_pop_unique : ndarray (n,)
        Per record P(F_k = 1 | f_k): exp(-nu_k) for sample uniques, 0 otherwise.
    record_risk : ndarray (n,)
        Per record E(1 / F_k | f_k), the probability that a match to the population is correct.
    cells : pandas.DataFrame
        Non-empty cells: ``f``, ``mu`` (fitted sample mean), ``pi``, ``lambda``, ``nu``,
        ``pop_unique`` (P(F=1|f), 0 unless f = 1), ``risk`` (E(1/F|f)).
    diagnostic : dict
        :func:`selection_diagnostic` of the fit.
    notes : tuple of str
    """

    method: str
    formula: str
    tau1: float
    tau2: float
    sdcmicro_gr1: float
    sdcmicro_gr2: float
    n_records: int
    n_sample_uniques: int
    n_cells: int
    n_nonempty_cells: int
    record_pop_unique: np.ndarray
    record_risk: np.ndarray
    cells: pd.DataFrame
    diagnostic: dict
    deviance: float
    n_params: int
    n_iter: int
    converged: bool
    seconds: float
    notes: tuple = ()
    extra: dict = field(default_factory=dict)

    def summary(self) -> dict:
        """Plain figures for reports and ``--json``."""
        return jsonable({
            "method": self.method, "formula": self.formula, "tau1": self.tau1, "tau2": self.tau2,
            "tau1_share": self.tau1 / self.n_sample_uniques if self.n_sample_uniques else 0.0,
            "tau2_share": self.tau2 / self.n_sample_uniques if self.n_sample_uniques else 0.0,
            "sdcmicro_gr1": self.sdcmicro_gr1, "sdcmicro_gr2": self.sdcmicro_gr2,
            "n_records": self.n_records, "n_sample_uniques": self.n_sample_uniques,
            "n_cells": self.n_cells, "n_nonempty_cells": self.n_nonempty_cells,
            "expected_correct_matches": float(self.record_risk.sum()),
            "max_record_risk": float(self.record_risk.max()) if self.record_risk.size else 0.0,
            "diagnostic": self.diagnostic, "deviance": self.deviance, "n_params": self.n_params,
            "n_iter": self.n_iter, "converged": self.converged, "notes": list(self.notes),
            **({"selection": self.extra["selection"]} if "selection" in self.extra else {})})

    def to_dict(self) -> dict:
        return self.summary()

    def describe(self) -> str:
        d = self.diagnostic
        lines = [f"log-linear risk ({self.method}): {self.formula}",
                 f"  sample uniques {self.n_sample_uniques:,} in {self.n_nonempty_cells:,} non-empty "
                 f"of {self.n_cells:,} cells",
                 f"  tau1 {self.tau1:.4f} expected population uniques among them, "
                 f"tau2 {self.tau2:.4f} expected correct matches",
                 f"  sdcMicro's gr1 {self.sdcmicro_gr1:.6g}, gr2 {self.sdcmicro_gr2:.6g}",
                 f"  fit: deviance {self.deviance:.4g}, {self.n_params} parameters, "
                 f"{self.n_iter} iterations{'' if self.converged else ' (NOT converged)'}",
                 f"  diagnostic: tau1 score {d['tau1']['score']:.3g} ({d['tau1']['verdict']}), "
                 f"tau2 score {d['tau2']['score']:.3g} ({d['tau2']['verdict']})"]
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


def loglinear_risk(codes: Sequence[np.ndarray], weights: np.ndarray | None = None, *,
                   names: Sequence[str] | None = None, formula: str | None = None,
                   method: str = "default", sampling_fraction: float | None = None,
                   weight_name: str = "weight", max_cells: int = MAX_CELLS) -> LogLinearRisk:
    """Fit a Poisson log-linear model to the key table and estimate tau1, tau2 and per-record risk.

    Parameters
    ----------
    codes : list of int arrays
        One array of category codes per key (``-1`` = missing, refused here).
    weights : float array, optional
        Sampling weights (>= 1); a sample-unique record's sampling fraction is 1 / w, a cell's
        f_k / W_k. Without weights, ``sampling_fraction`` (default 1: the data are the population)
        is used for every cell.
    names : list of str
    formula : str, optional
        Model terms in R's notation, ``"a + b + c + a:b"``; default main effects only.
    method : {"default", "CE", "PML", "weightedLLM", "IPF"}
    sampling_fraction : float in (0, 1], optional
        Only without weights.

    Returns
    -------
    LogLinearRisk

    Raises
    ------
    InputError
        Missing key values, weights below 1, a rank-deficient design (naming the term), a key
        table above ``max_cells`` cells.

    References
    ----------
    Skinner and Shlomo (2008); sdcMicro's ``modRisk`` (Templ, Kowarik and Meindl 2015).
    """
    t0 = time.perf_counter()
    check_choice("loglinear_risk", "method", method, METHODS)
    max_cells = check_int("loglinear_risk", "max_cells", max_cells, min_value=1)
    names = list(names) if names is not None else [f"key{j}" for j in range(len(codes))]
    if len(codes) == 0:
        raise InputError("log-linear risk: no key variables given; name at least one key.")
    terms = parse_formula(formula, names)
    if weights is not None and sampling_fraction is not None:
        raise InputError("log-linear risk: give weights or a sampling fraction, not both.")
    if sampling_fraction is not None:
        sampling_fraction = check_float("loglinear_risk", "sampling_fraction", sampling_fraction,
                                        low=0.0, high=1.0, low_open=True)
    table = key_table(codes, weights, names, weight_name=weight_name, max_cells=max_cells)
    f, W, P = table.counts, table.weight_sums, table.inv_weight_sums
    n = int(f.sum())
    notes = []
    if weights is None:
        frac = 1.0 if sampling_fraction is None else sampling_fraction
        W = f / frac
        P = f * frac
        if sampling_fraction is None:
            notes.append("no weights and no sampling fraction: the data are taken as the population "
                         "(pi = 1), so every sample unique is population unique")
    N = float(W.sum())
    y, offset, covariate = _method_inputs(method, f, W, n, N)
    design = MarginDesign(table.shape, terms, names, covariate)
    if method == "IPF":
        fit = fit_ipf(y, table.shape, terms)
    else:
        fit = fit_poisson_newton(y, design, offset)
    if fit.dropped_params:
        notes.append(f"{fit.dropped_params} parameters are not estimable (zero margins of the "
                     "interaction terms); their cells have fitted mean 0")
    if not fit.converged:
        notes.append(f"the fit did not converge in {fit.n_iter} iterations")
    mu = fit.mu
    c = _cell_risks(f, W, P, mu)
    if c["n_su"] == 0:
        notes.append("no sample uniques: tau1 = tau2 = 0 (no record is unique on the keys)")
    diag = _selection_diagnostic(y if method == "PML" else f, mu, n, N, table.n_cells, design)
    nonempty, pop_unique, risk = c["nonempty"], c["pop_unique"], c["risk"]
    cells = pd.DataFrame({"cell": nonempty, "f": c["fk"].astype(np.int64), "mu": c["mu"], "pi": c["pi"],
                          "lambda": c["mu"] / c["pi"], "nu": c["nu"], "pop_unique": pop_unique, "risk": risk})
    pos = np.full(f.size, -1, dtype=np.int64)
    pos[nonempty] = np.arange(nonempty.size)
    rec = pos[table.cell]
    return LogLinearRisk(method=method, formula=formula_text(terms, names), tau1=c["tau1"], tau2=c["tau2"],
                         sdcmicro_gr1=c["gr1"], sdcmicro_gr2=c["gr2"], n_records=n, n_sample_uniques=c["n_su"],
                         n_cells=table.n_cells, n_nonempty_cells=int(nonempty.size),
                         record_pop_unique=pop_unique[rec], record_risk=risk[rec], cells=cells,
                         diagnostic=diag, deviance=fit.deviance, n_params=fit.n_params,
                         n_iter=fit.n_iter, converged=fit.converged,
                         seconds=time.perf_counter() - t0, notes=tuple(notes))


def _method_inputs(method: str, f: np.ndarray, W: np.ndarray, n: int,
                   N: float) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """The response, offset and extra covariate of each method (sdcMicro's modRisk)."""
    y = f
    offset = None
    covariate = None
    if method == "CE":
        with np.errstate(divide="ignore", invalid="ignore"):
            ec = np.where(W > 0, f / W, 0.0)
        offset = np.log(ec + 0.1)       # Clogg-Eliason offset, log(f_k / W_k + 0.1)
    elif method == "PML":
        y = np.round(W * (n / N))       # pseudo counts: weighted counts scaled to n, rounded
    elif method == "weightedLLM":
        scale = float(W.max()) if W.max() > 0 else 1.0
        covariate = W / scale           # W_k as a linear predictor (scaled: same fitted means)
    return y, offset, covariate


def _cell_risks(f: np.ndarray, W: np.ndarray, P: np.ndarray, mu: np.ndarray) -> dict:
    """Per non-empty cell: the sampling fraction, nu, the probability of population uniqueness
    and the expected 1 / F (Skinner & Shlomo 2008, eqs. 5-6), their sums over the sample
    uniques (tau1, tau2) and sdcMicro's global risks."""
    nonempty = np.flatnonzero(f > 0)
    fk = f[nonempty]
    # sampling fraction per non-empty cell: 1/w for a sample unique, f_k / W_k otherwise
    pi_cell = np.where(fk == 1, P[nonempty], fk / W[nonempty])
    pi_cell = np.clip(pi_cell, 1e-300, 1.0)
    mu_c = mu[nonempty]
    with np.errstate(divide="ignore", invalid="ignore"):
        nu = mu_c * (1.0 - pi_cell) / pi_cell   # nu_k = lambda_k (1 - pi_k), lambda_k = mu_k / pi_k
    pop_unique = np.where(fk == 1, np.exp(-nu), 0.0)                 # S&S eq. 5
    risk = expected_inverse_population(fk, nu)                       # S&S eq. 6 (f = 1), Kummer (f > 1)
    su = fk == 1
    n_su = int(su.sum())
    # sdcMicro's conventions: nu = mu (1 - p), p = sum of 1/w in the cell, sums / non-empty cells
    nu_s = mu_c * (1.0 - P[nonempty])
    gr1 = float(np.exp(-nu_s[su]).sum() / nonempty.size) if nonempty.size else 0.0
    gr2 = float(expected_inverse_population(np.ones(n_su), nu_s[su]).sum() / nonempty.size) if nonempty.size else 0.0
    return {"nonempty": nonempty, "fk": fk, "pi": pi_cell, "mu": mu_c, "nu": nu, "pop_unique": pop_unique,
            "risk": risk, "n_su": n_su, "tau1": float(pop_unique[su].sum()), "tau2": float(risk[su].sum()),
            "gr1": gr1, "gr2": gr2}


def _selection_diagnostic(y: np.ndarray, mu: np.ndarray, n: int, N: float, n_cells: int,
                          design: MarginDesign) -> dict:
    """The model-selection diagnostic on every cell with the overall sampling fraction n / N
    (S&S's constant pi; a per-cell f_k / W_k would make the weights depend on f_k and bias the
    score), leverage-corrected up to LEVERAGE_MAX_CELLS cells."""
    pi_all = np.full(y.size, n / N if N > 0 else 1.0)
    lev = None
    if n_cells <= LEVERAGE_MAX_CELLS:
        keep = None if np.all(mu > 0) else independent_columns(design.gram(mu))
        lev = design.leverages(mu, keep)
    diag = selection_diagnostic(y, mu, pi_all, leverage=lev)
    diag["leverage_corrected"] = lev is not None
    diag["sampling_fraction"] = float(pi_all[0]) if pi_all.size else 1.0
    return diag


def select_loglinear_model(codes: Sequence[np.ndarray], weights: np.ndarray | None = None, *,
                           names: Sequence[str], method: str = "default", measure: str = "tau1",
                           critical: float = 1.96, max_interactions: int | None = None,
                           **kwargs) -> LogLinearRisk:
    """Forward selection of two-way interactions with the diagnostic (S&S 2008, sec. 4).

    Starts from the main effects; while the model under-fits (B > ``critical`` for
    ``measure``), adds the two-way interaction whose model has the smallest |B|, and stops when
    the model is adequate, when no candidate lowers |B|, or after ``max_interactions``. The
    returned fit's ``extra["selection"]`` lists each step (formula, score, tau1, tau2).
    """
    check_choice("select_loglinear_model", "measure", measure, ("tau1", "tau2"))
    names = list(names)
    terms = list(names)
    best = loglinear_risk(codes, weights, names=names, formula=" + ".join(terms), method=method, **kwargs)
    path = [{"formula": best.formula, "score": best.diagnostic[measure]["score"],
             "tau1": best.tau1, "tau2": best.tau2}]
    candidates = [f"{a}:{b}" for a, b in itertools.combinations(names, 2)]
    limit = len(candidates) if max_interactions is None else max_interactions
    while best.diagnostic[measure]["score"] > critical and candidates and len(path) <= limit:
        trials = []
        for c in candidates:
            r = loglinear_risk(codes, weights, names=names, formula=" + ".join(terms + [c]),
                               method=method, **kwargs)
            trials.append((abs(r.diagnostic[measure]["score"]), c, r))
        score, c, r = min(trials, key=lambda t: t[0])
        if score >= abs(best.diagnostic[measure]["score"]):
            break
        terms.append(c)
        candidates.remove(c)
        best = r
        path.append({"formula": r.formula, "score": r.diagnostic[measure]["score"],
                     "tau1": r.tau1, "tau2": r.tau2})
    extra = dict(best.extra)
    extra["selection"] = path
    return LogLinearRisk(**{**{f: getattr(best, f) for f in best.__dataclass_fields__}, "extra": extra})


def microdata_loglinear_risk(microdata, *, formula: str | None = None, method: str = "default",
                             keys: Sequence[str] | None = None,
                             sampling_fraction: float | None = None) -> LogLinearRisk:
    """:func:`loglinear_risk` on the key variables and weight role of a Microdata.

    ``formula="auto"`` runs :func:`select_loglinear_model` (forward selection of two-way
    interactions with the diagnostic).
    """
    keys = list(microdata.key_vars if keys is None else keys)
    if not keys:
        raise InputError("log-linear risk needs key variables: give the key_vars role (--keys).")
    codes = [microdata.codes(k) for k in keys]
    kw = dict(method=method, sampling_fraction=sampling_fraction,
              weight_name=microdata.weight or "weight")
    if formula is not None and formula.strip().lower() == "auto":
        return select_loglinear_model(codes, microdata.weights(), names=keys, **kw)
    return loglinear_risk(codes, microdata.weights(), names=keys, formula=formula, **kw)


__all__ = ["LogLinearRisk", "METHODS", "MarginDesign", "design_matrix", "expected_inverse_population",
           "fit_ipf", "fit_poisson_newton", "key_table", "loglinear_risk", "microdata_loglinear_risk",
           "parse_formula", "select_loglinear_model", "selection_diagnostic"]
