"""The privacy accountant of a release: losses, their composition, conversions and the budget.

Three kinds of privacy loss are accounted (the variants are types, not strings):

* :class:`PureDP` ``(epsilon)``: epsilon-differential privacy (Dwork et al. 2006);
* :class:`ZCDP` ``(rho)``: rho-zero-concentrated DP (Bun & Steinke 2016, Definition 1.1);
* :class:`ApproxDP` ``(epsilon, delta)``: approximate DP.

Composition (every mechanism of one release, across the cells of a table and across tables):

* pure DP adds epsilons (Dwork et al. 2006); zCDP adds rhos (Bun & Steinke 2016, Lemma 2.3);
* epsilon-DP implies ``epsilon^2 / 2``-zCDP (Bun & Steinke 2016, Proposition 1.4), so pure
  losses join a zCDP total that way;
* ``(epsilon_i, delta_i)`` losses add both parameters (basic composition, Dwork et al. 2006).

A zCDP total converts to approximate DP at a chosen ``delta`` by

* ``"cks"`` (default): the tight bound of Canonne, Kamath & Steinke (2020), Proposition 12 /
  Corollary 13 (the conversion OpenDP uses):
  ``epsilon(delta) = inf_{alpha > 1} alpha rho + (ln(1/delta) + (alpha - 1) ln(1 - 1/alpha)
  - ln(alpha)) / (alpha - 1)``, found at the root of its derivative
  ``rho (alpha - 1)^2 = ln(1 / (alpha delta))`` (one root, the left side minus the right
  increases in alpha);
* ``"bun-steinke"``: the simple bound ``epsilon = rho + 2 sqrt(rho ln(1/delta))`` (Bun &
  Steinke 2016, Proposition 1.3).

A release that mixes zCDP and approximate-DP losses spends, at a target ``delta``, the
approximate losses' epsilons plus the zCDP total's epsilon at ``delta - sum(delta_i)``; the
pure losses go into the zCDP total, or are added as epsilons, whichever is smaller.

References
----------
Dwork, C., McSherry, F., Nissim, K. & Smith, A. (2006). Calibrating noise to sensitivity in
private data analysis. *TCC 2006*.
Bun, M. & Steinke, T. (2016). Concentrated differential privacy: simplifications, extensions,
and lower bounds. *TCC 2016*; arXiv:1605.02065.
Canonne, C. L., Kamath, G. & Steinke, T. (2020). The discrete Gaussian for differential
privacy. *NeurIPS 2020*; arXiv:2004.00010, sec. 2.3 (Proposition 12, Corollary 13).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .._validation import check_choice, check_float, param_error
from ..errors import ParameterError

__all__ = ["PureDP", "ZCDP", "ApproxDP", "Loss", "Charge", "Accountant", "MaxEpsilon", "MaxRho", "Budget",
           "BudgetCheck", "zcdp_to_epsilon", "zcdp_to_delta", "CONVERSIONS"]

CONVERSIONS = ("cks", "bun-steinke")


@dataclass(frozen=True)
class PureDP:
    """epsilon-differential privacy."""

    epsilon: float

    def __post_init__(self) -> None:
        check_float("PureDP", "epsilon", self.epsilon, low=0)

    def describe(self) -> str:
        return f"epsilon = {self.epsilon:.6g} (pure DP)"


@dataclass(frozen=True)
class ZCDP:
    """rho-zero-concentrated differential privacy (Bun & Steinke 2016)."""

    rho: float

    def __post_init__(self) -> None:
        check_float("ZCDP", "rho", self.rho, low=0)

    def describe(self) -> str:
        return f"rho = {self.rho:.6g} (zCDP)"


@dataclass(frozen=True)
class ApproxDP:
    """(epsilon, delta)-differential privacy."""

    epsilon: float
    delta: float

    def __post_init__(self) -> None:
        check_float("ApproxDP", "epsilon", self.epsilon, low=0)
        check_float("ApproxDP", "delta", self.delta, low=0, high=1, high_open=True)

    def describe(self) -> str:
        return f"epsilon = {self.epsilon:.6g}, delta = {self.delta:.3g} (approximate DP)"


Loss = PureDP | ZCDP | ApproxDP


def _log_inv(delta: float) -> float:
    return -math.log(delta)


def zcdp_to_epsilon(rho: float, delta: float, conversion: str = "cks") -> float:
    """The epsilon of rho-zCDP at ``delta``: ``(epsilon, delta)``-DP holds.

    Parameters
    ----------
    rho : float
        zCDP parameter, >= 0.
    delta : float
        In (0, 1].
    conversion : {"cks", "bun-steinke"}
        ``"cks"``: Canonne, Kamath & Steinke (2020), Corollary 13 (tight; what OpenDP uses);
        ``"bun-steinke"``: Bun & Steinke (2016), Proposition 1.3.
    """
    check_choice("zcdp_to_epsilon", "conversion", conversion, CONVERSIONS)
    rho = check_float("zcdp_to_epsilon", "rho", rho, low=0)
    delta = check_float("zcdp_to_epsilon", "delta", delta, low=0, high=1, low_open=True)
    if rho == 0 or delta >= 1:
        return 0.0
    L = _log_inv(delta)
    if conversion == "bun-steinke":
        return rho + 2.0 * math.sqrt(rho * L)  # Bun & Steinke 2016, Prop. 1.3
    # CKS 2020, Cor. 13: minimise f(a) = a rho + (L + (a-1) ln(1-1/a) - ln a)/(a-1) over a > 1.
    # f'(a) = rho - (L - ln a)/(a-1)^2; its root solves g(a) = rho (a-1)^2 + ln a - L = 0, and
    # g increases on a > 1 with g(1) = -L < 0: bracket the root and bisect to the last float.
    def g(a: float) -> float:
        return rho * (a - 1.0) ** 2 + math.log(a) - L

    lo, hi = 1.0, 2.0
    while g(hi) < 0:
        lo, hi = hi, 2.0 * hi
    while True:
        mid = lo + (hi - lo) / 2.0
        if mid <= lo or mid >= hi:
            break
        if g(mid) < 0:
            lo = mid
        else:
            hi = mid
    best = math.inf
    for a in (lo, hi):
        if a > 1.0:
            eps = a * rho + (L + (a - 1.0) * math.log1p(-1.0 / a) - math.log(a)) / (a - 1.0)
            best = min(best, eps)
    return max(0.0, best)


def zcdp_to_delta(rho: float, epsilon: float) -> float:
    """The smallest delta with ``(epsilon, delta)``-DP for rho-zCDP (CKS 2020, Corollary 13):
    ``delta = inf_{a > 1} exp((a-1)(a rho - epsilon)) (1 - 1/a)^(a-1) / a``."""
    rho = check_float("zcdp_to_delta", "rho", rho, low=0)
    epsilon = check_float("zcdp_to_delta", "epsilon", epsilon, low=0)
    if rho == 0:
        return 0.0

    def log_delta(a: float) -> float:
        return (a - 1.0) * (a * rho - epsilon) + (a - 1.0) * math.log1p(-1.0 / a) - math.log(a)

    # d/da log_delta = (2a - 1) rho - epsilon + ln(1 - 1/a), increasing: bisect its root
    def d(a: float) -> float:
        return (2.0 * a - 1.0) * rho - epsilon + math.log1p(-1.0 / a)

    lo, hi = 1.0, 2.0
    while d(hi) < 0:
        lo, hi = hi, 2.0 * hi
    while True:
        mid = lo + (hi - lo) / 2.0
        if mid <= lo or mid >= hi:
            break
        if d(mid) < 0:
            lo = mid
        else:
            hi = mid
    vals = [log_delta(a) for a in (lo, hi) if a > 1.0]
    return float(min(1.0, math.exp(min(vals))))


@dataclass(frozen=True)
class Charge:
    """One mechanism's privacy loss in a release: which table, which mechanism, how many cells."""

    table: str
    mechanism: str
    loss: Loss
    n_cells: int = 0
    note: str = ""

    def to_dict(self) -> dict:
        d = {"table": self.table, "mechanism": self.mechanism, "kind": type(self.loss).__name__,
             "n_cells": int(self.n_cells)}
        d.update({k: float(v) for k, v in vars(self.loss).items()})
        if self.note:
            d["note"] = self.note
        return d


@dataclass(frozen=True)
class MaxRho:
    """A budget in zCDP: the release's total rho must not pass ``rho``."""

    rho: float

    def __post_init__(self) -> None:
        check_float("MaxRho", "rho", self.rho, low=0, low_open=True)

    def describe(self) -> str:
        return f"rho <= {self.rho:g}"


@dataclass(frozen=True)
class MaxEpsilon:
    """A budget in (approximate) DP: the release's epsilon at ``delta`` must not pass ``epsilon``
    (``delta = 0``: pure DP; every loss must then be pure)."""

    epsilon: float
    delta: float = 0.0
    conversion: str = "cks"

    def __post_init__(self) -> None:
        check_float("MaxEpsilon", "epsilon", self.epsilon, low=0, low_open=True)
        check_float("MaxEpsilon", "delta", self.delta, low=0, high=1, high_open=True)
        check_choice("MaxEpsilon", "conversion", self.conversion, CONVERSIONS)

    def describe(self) -> str:
        return (f"epsilon <= {self.epsilon:g}" if self.delta == 0 else
                f"epsilon <= {self.epsilon:g} at delta = {self.delta:.3g}")


Budget = MaxRho | MaxEpsilon


@dataclass(frozen=True)
class BudgetCheck:
    """The outcome of checking an accountant against a budget."""

    passed: bool
    spent: float
    limit: float
    unit: str          # "rho" or "epsilon"
    delta: float | None
    statement: str

    def to_dict(self) -> dict:
        return {"passed": bool(self.passed), "spent": float(self.spent), "limit": float(self.limit),
                "unit": self.unit, "delta": self.delta, "statement": self.statement}


@dataclass(frozen=True)
class Accountant:
    """The privacy losses of one release, composed.

    Immutable: :meth:`spend` returns a new accountant with one more charge.

    Examples
    --------
    >>> acc = Accountant().spend(Charge("persons", "discrete Gaussian", ZCDP(0.25)))
    >>> acc = acc.spend(Charge("households", "discrete Gaussian", ZCDP(0.25)))
    >>> acc.total_rho()
    0.5
    """

    charges: tuple[Charge, ...] = field(default_factory=tuple)

    def spend(self, charge: Charge) -> Accountant:
        if not isinstance(charge, Charge):
            raise param_error("Accountant.spend", "charge", "a Charge", charge)
        return Accountant(self.charges + (charge,))

    def _split(self):
        pure = [c.loss.epsilon for c in self.charges if isinstance(c.loss, PureDP)]
        zc = [c.loss.rho for c in self.charges if isinstance(c.loss, ZCDP)]
        ap = [(c.loss.epsilon, c.loss.delta) for c in self.charges if isinstance(c.loss, ApproxDP)]
        return pure, zc, ap

    def total_rho(self) -> float:
        """Total zCDP: the rhos add, a pure epsilon counts ``epsilon^2 / 2`` (Bun & Steinke 2016,
        Prop. 1.4 and Lemma 2.3). Refused when a loss is approximate DP (no zCDP bound)."""
        pure, zc, ap = self._split()
        if ap:
            raise ParameterError("the release holds approximate-DP losses, which have no zCDP bound; "
                                 "declare the budget as max_epsilon at a delta instead of max_rho")
        return math.fsum(zc) + math.fsum(e * e / 2.0 for e in pure)

    def total_epsilon(self, delta: float = 0.0, conversion: str = "cks") -> float:
        """Total epsilon at ``delta`` (see the module text for the rules). ``delta = 0`` needs
        every loss to be pure DP (their epsilons add); otherwise infinite."""
        pure, zc, ap = self._split()
        delta = float(delta)
        if not zc and not ap:
            return math.fsum(pure)
        d_ap = math.fsum(d for _, d in ap)
        e_ap = math.fsum(e for e, _ in ap)
        if delta <= d_ap:
            return math.inf if (zc or delta < d_ap) else e_ap + math.fsum(pure)
        if not zc:
            return e_ap + math.fsum(pure)
        rest = delta - d_ap
        rho = math.fsum(zc)
        with_pure_as_rho = zcdp_to_epsilon(rho + math.fsum(e * e / 2.0 for e in pure), rest, conversion)
        with_pure_added = zcdp_to_epsilon(rho, rest, conversion) + math.fsum(pure)
        return e_ap + min(with_pure_as_rho, with_pure_added)

    def check(self, budget: Budget) -> BudgetCheck:
        """Whether the release's total stays within ``budget`` (checked before any noise is drawn)."""
        if isinstance(budget, MaxRho):
            try:
                spent = self.total_rho()
            except ParameterError:
                spent = math.inf
            ok = spent <= budget.rho * (1 + 1e-12)
            words = (f"The release spends rho = {spent:.6g} (zCDP) of its budget rho <= {budget.rho:g}: "
                     + ("within budget." if ok else "OVER BUDGET."))
            return BudgetCheck(ok, spent, budget.rho, "rho", None, words)
        if isinstance(budget, MaxEpsilon):
            spent = self.total_epsilon(budget.delta, budget.conversion)
            ok = spent <= budget.epsilon * (1 + 1e-12)
            at = "" if budget.delta == 0 else f" at delta = {budget.delta:.3g}"
            how = "" if budget.delta == 0 else (" (zCDP converted by Canonne, Kamath & Steinke 2020)"
                                                 if budget.conversion == "cks" else
                                                 " (zCDP converted by Bun & Steinke 2016)")
            words = (f"The release spends epsilon = {spent:.6g}{at}{how} of its budget epsilon <= "
                     f"{budget.epsilon:g}: " + ("within budget." if ok else "OVER BUDGET."))
            return BudgetCheck(ok, spent, budget.epsilon, "epsilon", budget.delta, words)
        raise param_error("Accountant.check", "budget", "a MaxRho or MaxEpsilon", budget)

    def per_table(self) -> dict:
        """Loss per table: {table: {"rho": ..., "epsilon": ...}} (zCDP and pure parts)."""
        out: dict[str, dict] = {}
        for c in self.charges:
            d = out.setdefault(c.table, {"rho": 0.0, "epsilon": 0.0, "delta": 0.0})
            if isinstance(c.loss, ZCDP):
                d["rho"] += c.loss.rho
            elif isinstance(c.loss, PureDP):
                d["epsilon"] += c.loss.epsilon
            else:
                d["epsilon"] += c.loss.epsilon
                d["delta"] += c.loss.delta
        return out

    def to_dict(self) -> dict:
        return {"charges": [c.to_dict() for c in self.charges], "per_table": self.per_table()}
