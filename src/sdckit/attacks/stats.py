"""Success rates, the risk as the excess over the control, and their intervals.

An attack is a number of Bernoulli trials (one per target record or query). Its success rate
is estimated with the Wilson score interval (Wilson 1927): centre
``(k + z^2/2) / (n + z^2)`` and half-width ``z / (n + z^2) * sqrt(k (n - k) / n + z^2 / 4)``.

The risk is the success on the records the release was made from beyond the success on
control records it was not made from, as a share of what the control attack left to gain
(Giomi et al. 2023, sec. 3, eq. 1; Stadler et al. 2022 use the same baseline logic)::

    risk = (r_train - r_control) / (1 - r_control)

Its error is propagated from the two rates' errors to first order (the delta method), and the
risk and its interval are clipped to [0, 1].

References
----------
Wilson, E. B. (1927). Probable inference, the law of succession, and statistical inference.
*JASA* 22, 209-212.
Giomi, M., Boenisch, F., Wehmeyer, C. and Tasnádi, B. (2023). A unified framework for
quantifying privacy risk in synthetic data. *PETS* 2023(2), 312-328.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy.stats import norm

from .._validation import check_float, check_int, param_error

__all__ = ["Rate", "wilson_rate", "excess_risk", "excess_risk_error", "z_value"]


@dataclass(frozen=True)
class Rate:
    """A success rate: its estimate and the half-width of its interval."""

    value: float
    error: float

    @property
    def low(self) -> float:
        return max(0.0, self.value - self.error)

    @property
    def high(self) -> float:
        return min(1.0, self.value + self.error)


def z_value(confidence: float) -> float:
    """The two-sided normal quantile of a confidence level (1.96 for 0.95)."""
    check_float("the attack", "confidence", confidence, low=0.0, high=1.0, low_open=True, high_open=True)
    return float(norm.ppf(0.5 * (1.0 + confidence)))


def wilson_rate(n_success: float, n_trials: int, confidence: float = 0.95) -> Rate:
    """Wilson score estimate of a success rate and the half-width of its interval.

    ``n_success`` may be fractional (a count corrected for the size of the control file).
    """
    n = check_int("wilson_rate", "n_trials", n_trials, min_value=1)
    k = float(n_success)
    if not (0.0 <= k <= n):
        raise param_error("wilson_rate", "n_success", f"a number in [0, n_trials = {n}]", n_success)
    z = z_value(confidence)
    z2 = z * z
    denom = n + z2
    centre = (k + 0.5 * z2) / denom
    half = z / denom * math.sqrt(k * (n - k) / n + 0.25 * z2)
    return Rate(centre, half)


def excess_risk(attack: Rate, control: Rate) -> tuple[float, tuple[float, float], float]:
    """Risk ``(r_train - r_control) / (1 - r_control)``, its interval, and the unclipped value.

    Returns
    -------
    (risk, (low, high), raw)
        ``risk`` and the interval clipped to [0, 1]; ``raw`` the value before clipping (negative
        when the control records were attacked more successfully than the training records).
    """
    if control.value >= 1.0:  # nothing left to gain: the excess is not defined
        return 0.0, (0.0, 1.0), float("nan")
    raw = (attack.value - control.value) / (1.0 - control.value)
    err = excess_risk_error(attack, control)
    clip = lambda v: min(max(v, 0.0), 1.0)  # noqa: E731
    return clip(raw), (clip(raw - err), clip(raw + err)), raw


def excess_risk_error(attack: Rate, control: Rate) -> float:
    """Half-width of the excess risk's interval, propagated to first order (delta method)."""
    if control.value >= 1.0:
        return float("nan")
    d_attack = 1.0 / (1.0 - control.value)                          # d risk / d r_train
    d_control = (attack.value - 1.0) / (1.0 - control.value) ** 2   # d risk / d r_control
    return math.hypot(attack.error * d_attack, control.error * d_control)
