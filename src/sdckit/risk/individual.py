"""Individual, global and household re-identification risk (Benedetti–Franconi, as mu-Argus).

Each record's risk is the posterior expectation of ``1 / F`` (``F`` its combination's count in
the population) given its sample frequency ``f_k`` and the estimate ``F_k`` (sum of weights):
under the negative-binomial super-population model ``F - f_k ~ NB(f_k, p_k)`` with
``p_k = f_k / F_k``,

    r_k = E[1/F | f_k] = sum_{j>=0} C(f_k+j-1, j) p_k^f_k (1-p_k)^j / (f_k + j).      (BF)

Closed forms (Benedetti & Franconi 1998; Franconi & Polettini 2004, eq. 5-7):

* f_k = 1: r = p/(1-p) log(1/p)
* f_k = 2: r = p/(1-p) - (p/(1-p))^2 log(1/p)
* f_k >= 3, approximation: r = p / (f_k - (1-p))
* exact (any f_k): r = p/f_k * 2F1(1, 1; f_k+1; 1-p), the sum (BF) in closed form.

References
----------
Benedetti, R. and Franconi, L. (1998). Statistical and technological solutions for controlled
data dissemination. Pre-proceedings of New Techniques and Technologies for Statistics, 225-232.

Franconi, L. and Polettini, S. (2004). Individual risk estimation in mu-Argus: a review.
Privacy in Statistical Databases, LNCS 3050, 262-272.

Hundepool, A. et al. (2014). mu-Argus 5.1 user's manual, section on the individual risk
threshold (the rule of :func:`global_risk_threshold`).

Templ, M., Kowarik, A. and Meindl, B. (2015). Statistical disclosure control for micro-data
using the R package sdcMicro. Journal of Statistical Software 67(4). (``indivRisk``,
``measure_risk``.)
"""

from __future__ import annotations

import numpy as np

from .._validation import check_choice, check_float
from ..errors import InputError

METHODS = ("approx", "exact")


def _bf_exact(f: np.ndarray, p: np.ndarray) -> np.ndarray:
    """The sum (BF) in closed form: r = p/f * 2F1(1, 1; f+1; 1-p), for real f > 0, 0 < p <= 1.

    Derivation: E[1/(f+J)] = int_0^1 t^(f-1) E[t^J] dt with E[t^J] = (p/(1-qt))^f; the
    substitution u = p/(1-qt), u = p + qv gives p int_0^1 v^(f-1)/(p+qv) dv, a Gauss
    hypergeometric integral (Euler's formula, then Pfaff's transformation).
    """
    from scipy.special import hyp2f1  # here: scipy.special costs `sdckit risk` a third of a second

    out = np.empty_like(p, dtype=np.float64)
    one = p >= 1.0
    out[one] = 1.0 / f[one]
    m = ~one
    q = 1.0 - p[m]
    f1 = f[m] == 1.0
    # f = 1: 2F1(1,1;2;q) = -log(1-q)/q; used directly (the series is slowest there)
    r = np.empty(q.shape, dtype=np.float64)
    pm = p[m]
    r[f1] = pm[f1] / q[f1] * np.log(1.0 / pm[f1])
    fm = f[m]
    small = ~f1 & (fm < 20)
    r[small] = pm[small] / fm[small] * hyp2f1(1.0, 1.0, fm[small] + 1.0, q[small])
    big = fm >= 20
    if big.any():
        # 2F1(1,1;f+1;q) = sum_j q^j j! / (f+1)_j; for f >= 20 the terms fall at least like
        # 1 / C(f+j, j), so the sum converges in a few dozen terms (scipy's hyp2f1 returns
        # NaN for large f and q near 1)
        fb, qb = fm[big], q[big]
        term = np.ones_like(fb)
        total = np.ones_like(fb)
        j = 0
        while True:
            term = term * qb * (j + 1) / (fb + 1 + j)
            total += term
            j += 1
            if term.max() < 1e-17 * total.min() or j > 100_000:
                break
        r[big] = pm[big] / fb * total
    out[m] = r
    return out


def individual_risk(fk: np.ndarray, Fk: np.ndarray | None = None, *, method: str = "approx",
                    weighted: bool | None = None) -> np.ndarray:
    """Benedetti–Franconi individual risk of each record, as sdcMicro's ``indivRisk``.

    Parameters
    ----------
    fk : array
        Sample frequency of each record's key combination (may be fractional with the
        missing-value weight ``alpha < 1``).
    Fk : array, optional
        Estimated population frequency (sum of weights). Without it, or with
        ``weighted=False``, the data are treated as a population and ``r = 1 / f_k``.
    method : {"approx", "exact"}
        ``"approx"`` (sdcMicro's and mu-Argus's default): the closed forms for f_k = 1, 2 and
        ``p / (f_k - (1-p))`` for f_k >= 3. ``"exact"``: the sum (BF) for every f_k.
    weighted : bool, optional
        Default: True when ``Fk`` is given.

    Returns
    -------
    ndarray of float64
        r_k in [0, 1].

    Notes
    -----
    Where this differs from sdcMicro: ``p_k = f_k / F_k`` is capped at 1 (weights below 1
    would otherwise give p > 1 and a negative log); a fractional f_k (missing-value weight
    alpha < 1) uses the exact formula, which is defined for real f_k, where sdcMicro's loop
    matches none of its cases and returns 0. ``r = 1/f_k`` when ``f_k = F_k``, as sdcMicro.
    """
    check_choice("individual_risk", "method", method, METHODS)
    fk = np.asarray(fk, dtype=np.float64)
    if weighted is None:
        weighted = Fk is not None
    if not weighted or Fk is None:
        return 1.0 / fk
    Fk = np.asarray(Fk, dtype=np.float64)
    if fk.shape != Fk.shape:
        raise InputError(f"fk and Fk must have the same length; got {fk.shape} and {Fk.shape}.")
    if np.any(fk <= 0) or np.any(~np.isfinite(Fk)) or np.any(Fk <= 0):
        raise InputError("individual risk needs f_k > 0 and finite F_k > 0 for every record; "
                         "check the weight column for zeros or missing values.")
    if method == "exact" and fk.size > 1:
        # the hypergeometric function is the costly part: evaluate it once per distinct pair
        pairs = np.stack([fk, Fk], axis=1)
        uniq, inverse = np.unique(pairs, axis=0, return_inverse=True)
        return _risk_values(uniq[:, 0], uniq[:, 1], method)[inverse.reshape(-1)]
    return _risk_values(fk, Fk, method)


def _risk_values(f: np.ndarray, F: np.ndarray, method: str) -> np.ndarray:
    p = np.minimum(f / F, 1.0)  # p_k = f_k / F_k
    integral = f == np.round(f)
    if method == "exact":
        r = _bf_exact(f, p)
    else:
        # each record's closed form on its own entries only (the same operations on the same
        # values as evaluating every form everywhere and selecting)
        r = np.empty_like(p)
        one, two = f == 1, f == 2
        rest = ~(one | two)
        with np.errstate(divide="ignore", invalid="ignore"):
            for mask, form in ((one, 1), (two, 2)):
                if mask.any():
                    pm = p[mask]
                    qm = 1.0 - pm
                    odds = pm / qm                  # p/(1-p)
                    log1p_ = np.log(1.0 / pm)
                    r[mask] = odds * log1p_ if form == 1 else odds - odds * odds * log1p_   # eq. 5, eq. 6
            if rest.any():
                pm = p[rest]
                r[rest] = pm / (f[rest] - (1.0 - pm))   # f_k >= 3, approximation (eq. 7)
        frac = ~integral
        if frac.any():
            r[frac] = _bf_exact(f[frac], p[frac])
    # population case within a sample: f_k = F_k gives 1/f_k (sdcMicro's rule)
    eq = p >= 1.0
    r[eq] = 1.0 / f[eq]
    return np.clip(r, 0.0, 1.0)


def global_risk_threshold(risk: np.ndarray, max_global_risk: float,
                          counts: np.ndarray | None = None) -> float | None:
    """The individual-risk threshold that brings the global risk under ``max_global_risk``.

    mu-Argus's rule (manual 4.1, sec. 2.3.4.1, eq. 17; sdcMicro's ``measure_threshold``):
    records above a threshold tau are to be protected until their risk is tau, so the
    expected re-identifications become ER(tau) = sum_{r_i <= tau} r_i + tau * #{r_i > tau}.
    The threshold is the largest observed risk value tau with ER(tau) < max_global_risk * n.

    ``counts`` (optional) gives the number of records holding each value of ``risk`` (one
    value per key combination), which avoids sorting one value per record.

    Returns
    -------
    float or None
        ``None`` when the global risk is already below the target (sdcMicro reports NA);
        ``0.0`` when no observed risk value reaches it (as sdcMicro).
    """
    check_float("global_risk_threshold", "max_global_risk", max_global_risk, low=0, high=1,
                low_open=True, high_open=True)
    risk = np.asarray(risk, dtype=np.float64)
    mult = np.ones(risk.shape[0]) if counts is None else np.asarray(counts, dtype=np.float64)
    n = mult.sum()
    target = max_global_risk * n  # ER target
    if np.dot(risk, mult) < target:
        return None
    values, pos = np.unique(risk, return_inverse=True)  # ascending
    pos = pos.reshape(-1)
    counts = np.bincount(pos, weights=mult, minlength=values.size)
    sums = np.bincount(pos, weights=risk * mult, minlength=values.size)
    below_or_eq = np.cumsum(sums)                    # sum of r_i <= tau
    above = n - np.cumsum(counts)                    # #{r_i > tau}
    er = below_or_eq + values * above                # eq. 17
    ok = np.flatnonzero(er < target)
    if ok.size == 0:
        return 0.0
    return float(values[ok[-1]])


def household_risk(risk: np.ndarray, household: np.ndarray) -> np.ndarray:
    """Household risk of each record: r_hh = 1 - prod_{i in hh} (1 - r_i).

    The probability that at least one member of the household is re-identified, members
    assumed independent (sdcMicro's ``measure_risk`` with ``hid``).

    Parameters
    ----------
    risk : array
        Individual risks.
    household : array
        Integer household ids (dense or not; ``-1`` is refused as missing).
    """
    risk = np.asarray(risk, dtype=np.float64)
    household = np.asarray(household)
    if household.shape != risk.shape:
        raise InputError("household ids must have one entry per record.")
    if np.any(household < 0):
        raise InputError(f"{int((household < 0).sum())} records have no household id; "
                         "give every record a household id (a single-person household its own id).")
    _, dense = np.unique(household, return_inverse=True)
    dense = dense.reshape(-1)
    with np.errstate(divide="ignore"):
        log_safe = np.bincount(dense, weights=np.log1p(-np.minimum(risk, 1.0)))  # sum log(1 - r_i)
    r_hh = -np.expm1(log_safe)
    return np.clip(r_hh, 0.0, 1.0)[dense]
