"""Primary sensitivity rules for tables and the protection levels they imply.

Each rule marks sensitive cells and gives, per cell, the upper, lower and sliding protection
levels that the published pattern must guarantee (tau-Argus' convention): with ``a`` the true
value and ``[lo, hi]`` the attacker's feasibility interval, a protected cell has
``hi >= a + upper``, ``lo <= a - lower`` and ``hi - lo >= sliding``.

References
----------
Hundepool, A. et al. (2012). *Statistical Disclosure Control*, sections 4.2.2-4.2.3 (p% rule
protection level p/100*x1 - (X - x1 - x2); (n,k)-dominance level 100/k * (x1+...+xn) - X). Wiley.
de Wolf, P.-P. et al. (2014). *tau-Argus user's manual* 4.1, section 4.4 (frequency range).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import check_bool, check_float, check_int
from ..errors import InputError
from .table import Table

__all__ = ["ThresholdRule", "PPercentRule", "PQRule", "DominanceRule", "Primary", "primary_cells",
           "rule_from_dict"]


@dataclass(frozen=True)
class Primary:
    """Sensitive cells and their protection levels (flat arrays over the table's cells)."""

    sensitive: np.ndarray
    upper: np.ndarray
    lower: np.ndarray
    sliding: np.ndarray
    reason: np.ndarray  # object array: name of the first rule that flagged the cell, "" otherwise

    @property
    def n_primary(self) -> int:
        return int(self.sensitive.sum())


def _none(t: Table) -> tuple:
    z = np.zeros(t.n_cells)
    return np.zeros(t.n_cells, bool), z, z.copy()


@dataclass(frozen=True)
class ThresholdRule:
    """Minimum frequency: a cell with 0 < contributors < ``n`` is sensitive.

    Protection level (upper and lower): ``range_percent``/100 of the cell value, at least 1
    for frequency tables (so the count is never exactly disclosed); :func:`primary_cells` caps
    the lower level of a non-negative cell at its value (no cell can go below 0).
    """

    n: int = 3
    range_percent: float = 10.0

    def __post_init__(self) -> None:
        check_int("ThresholdRule", "n", self.n, min_value=1)
        check_float("ThresholdRule", "range_percent", self.range_percent, low=0)

    name = "threshold"

    def evaluate(self, t: Table) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        sens = (t.freq > 0) & (t.freq < self.n)
        a = np.abs(t.value)
        pl = self.range_percent / 100.0 * a
        if t.kind == "frequency":
            pl = np.maximum(pl, 1.0)
        return sens, np.where(sens, pl, 0.0), np.where(sens, pl, 0.0)


def _tops(t: Table, n: int, who: str) -> np.ndarray:
    if t.kind != "magnitude" or t.top is None:
        raise InputError(f"the {who} rule needs a magnitude table with its largest contributions; "
                         "build the table with a response variable")
    if t.top.shape[1] < n:
        raise InputError(f"the {who} rule needs the {n} largest contributions per cell; the table keeps "
                         f"{t.top.shape[1]} (build it with n_top >= {n})")
    return t.top


@dataclass(frozen=True)
class PPercentRule:
    """p% rule: sensitive if ``X - x1 - x2 < p/100 * x1`` (the second largest contributor
    could estimate x1 to within p%); protection level ``p/100 x1 - (X - x1 - x2)``."""

    p: float = 10.0

    def __post_init__(self) -> None:
        check_float("PPercentRule", "p", self.p, low=0, low_open=True, high=100)

    name = "p%"

    def evaluate(self, t: Table):
        top = _tops(t, 2, "p%")
        x = np.abs(t.value)
        pl = self.p / 100.0 * top[:, 0] - (x - top[:, 0] - top[:, 1])
        sens = (t.freq > 0) & (pl > 1e-9 * np.maximum(x, 1))
        return sens, np.where(sens, pl, 0.0), np.where(sens, pl, 0.0)


@dataclass(frozen=True)
class PQRule:
    """pq rule (prior-posterior): sensitive if ``X - x1 - x2 < p/q * x1``; level ``p/q x1 - (X-x1-x2)``."""

    p: float = 10.0
    q: float = 50.0

    def __post_init__(self) -> None:
        check_float("PQRule", "p", self.p, low=0, low_open=True, high=100)
        check_float("PQRule", "q", self.q, low=self.p, high=100)

    name = "pq"

    def evaluate(self, t: Table):
        top = _tops(t, 2, "pq")
        x = np.abs(t.value)
        pl = self.p / self.q * top[:, 0] - (x - top[:, 0] - top[:, 1])
        sens = (t.freq > 0) & (pl > 1e-9 * np.maximum(x, 1))
        return sens, np.where(sens, pl, 0.0), np.where(sens, pl, 0.0)


@dataclass(frozen=True)
class DominanceRule:
    """(n,k)-dominance: sensitive if the ``n`` largest contributions exceed k% of the cell;
    protection level ``100/k (x1 + ... + xn) - X``."""

    n: int = 1
    k: float = 80.0

    def __post_init__(self) -> None:
        check_int("DominanceRule", "n", self.n, min_value=1)
        check_float("DominanceRule", "k", self.k, low=0, low_open=True, high=100)

    name = "dominance"

    def evaluate(self, t: Table):
        top = _tops(t, self.n, "dominance")
        x = np.abs(t.value)
        s = top[:, : self.n].sum(axis=1)
        pl = 100.0 / self.k * s - x
        sens = (t.freq > 0) & (s > self.k / 100.0 * x + 1e-12)
        return sens, np.where(sens, pl, 0.0), np.where(sens, pl, 0.0)


def primary_cells(table: Table, rules, *, zero_unsafe: bool = False, manual: np.ndarray | None = None,
                  manual_level: float = 0.0) -> Primary:
    """Apply the rules (a cell is sensitive if any rule says so; levels are the maxima).

    ``zero_unsafe`` makes empty cells sensitive too (protection level 1 upwards, as for a count).
    ``manual`` marks extra cells sensitive with ``manual_level`` (or 10% of the value).
    """
    check_bool("primary_cells", "zero_unsafe", zero_unsafe)
    rules = list(rules) if isinstance(rules, (list, tuple)) else [rules]
    sens, up, lo = _none(table)
    sl = np.zeros(table.n_cells)
    reason = np.full(table.n_cells, "", dtype=object)
    for r in rules:
        s, u, l = r.evaluate(table)
        reason[s & ~sens] = r.name
        sens |= s
        up, lo = np.maximum(up, u), np.maximum(lo, l)
    if zero_unsafe:
        z = table.freq == 0
        reason[z & ~sens] = "zero"
        sens |= z
        up = np.where(z, np.maximum(up, 1.0), up)
    if manual is not None:
        m = np.asarray(manual, bool)
        reason[m & ~sens] = "manual"
        lvl = np.maximum(manual_level, 0.1 * np.abs(table.value))
        sens |= m
        up, lo = np.where(m, np.maximum(up, lvl), up), np.where(m, np.maximum(lo, lvl), lo)
    # a cell cannot be shown to be below zero: the lower level of a non-negative cell is capped
    # at its value (tau-Argus does the same with its default a-priori bound 0)
    lo = np.where(table.value >= 0, np.minimum(lo, np.maximum(table.value, 0.0)), lo)
    return Primary(sens, up, lo, sl, reason)


_RULES = {"threshold": ThresholdRule, "p%": PPercentRule, "ppercent": PPercentRule, "pq": PQRule,
          "dominance": DominanceRule, "nk": DominanceRule}


def rule_from_dict(spec: dict):
    """Build a rule from a spec table such as ``{type = "threshold", n = 3}``."""
    spec = dict(spec)
    kind = spec.pop("type", None)
    if kind not in _RULES:
        raise InputError(f"rule type must be one of {sorted(_RULES)}; got {kind!r}")
    try:
        return _RULES[kind](**spec)
    except TypeError as e:
        raise InputError(f"rule {kind!r}: {e}") from None
