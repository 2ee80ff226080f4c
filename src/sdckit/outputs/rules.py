"""The environment's output-checking rules: ACRO's defaults, overridable by a TOML file.

The defaults are those of ACRO's ``default.yaml`` (version 1.0.2): a frequency threshold of 10
records per cell, 10 residual degrees of freedom for a model, the (n, k)-dominance rule with
n = 2 and k = 90 %, the p-ratio rule with p = 10 %, zeros disclosive, missing values not
checked, 10 records behind each survival step. sdckit adds one setting: whether tables with
margins, and outputs linked through shared cells, are audited by linear programming
(``audit``, on by default).

References
----------
Green, E., Ritchie, F., Smith, J. et al. (2023). ACRO: tools for the semi-automatic checking of
research outputs (SACRO project), ``acro/default.yaml``.
Hundepool, A. et al. (2012). *Statistical Disclosure Control*, section 4.2.2 (p% rule: a cell is
sensitive when X - x1 - x2 < p x1) and 4.2.3 ((n,k)-dominance: x1 + ... + xn > k X). Wiley.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from ..errors import InputError, ParameterError
from ..params import check_params, param

__all__ = ["OutputRules", "load_rules", "ACRO_NAMES"]

#: the names ACRO's ``default.yaml`` gives the same settings (a rules file may use either)
ACRO_NAMES = {
    "safe_threshold": "threshold",
    "safe_dof_threshold": "dof_threshold",
    "safe_nk_n": "nk_n",
    "safe_nk_k": "nk_k",
    "safe_pratio_p": "p_ratio",
    "check_missing_values": "check_missing_values",
    "survival_safe_threshold": "survival_threshold",
    "zeros_are_disclosive": "zeros_are_disclosive",
}


@dataclass(frozen=True)
class OutputRules:
    """The rules every output of a session is checked against (ACRO's defaults).

    Parameters
    ----------
    threshold : int
        Smallest number of records behind a published cell, histogram bin or table row.
    dof_threshold : int
        Smallest residual degrees of freedom of a model (and of a standard deviation's cell).
    nk_n, nk_k : int, float
        (n, k)-dominance: a magnitude cell fails when its n largest contributions make at
        least the fraction k of its total.
    p_ratio : float
        p-ratio rule: a magnitude cell fails when ``(X - x1 - x2) / x1 < p``.
    check_missing_values : bool
        Flag magnitude cells with missing values (for review).
    survival_threshold : int
        Smallest number of records at risk behind a survival curve's step.
    zeros_are_disclosive : bool
        A cell with no record fails (class disclosure).
    audit : bool
        Audit tables with margins, and outputs linked through shared cells, by linear programming.
    """

    threshold: int = param(10, kind="int", low=1, help="smallest number of records behind a cell", unit="records")
    dof_threshold: int = param(10, kind="int", low=1, help="smallest residual degrees of freedom of a model")
    nk_n: int = param(2, kind="int", low=1, symbol="n", help="(n,k)-dominance: number of largest contributions")
    nk_k: float = param(0.9, kind="float", low=0, high=1, low_open=True, symbol="k",
                        help="(n,k)-dominance: largest share of the total the n largest may make")
    p_ratio: float = param(0.1, kind="float", low=0, high=1, low_open=True, symbol="p",
                           help="p-ratio rule: smallest (X - x1 - x2) / x1")
    check_missing_values: bool = param(False, kind="bool", help="flag cells with missing values for review")
    survival_threshold: int = param(10, kind="int", low=1, help="smallest number at risk behind a survival step",
                                    unit="records")
    zeros_are_disclosive: bool = param(True, kind="bool", help="a cell with no record fails")
    audit: bool = param(True, kind="bool", help="audit margins and linked outputs by linear programming")

    def __post_init__(self) -> None:
        check_params(self)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def acro_config(self) -> dict[str, Any]:
        """The same rules under ACRO's names (the ``config.json`` ACRO writes beside its results)."""
        mine = self.to_dict()
        return {acro: mine[ours] for acro, ours in ACRO_NAMES.items()}


def load_rules(path: str | os.PathLike | None = None, **overrides: Any) -> OutputRules:
    """The environment's rules: ACRO's defaults, then a TOML file's ``[rules]`` table (or its top
    level), then keyword overrides. Keys may be sdckit's names or ACRO's (``safe_threshold``)."""
    values: dict[str, Any] = {}
    if path is not None:
        p = Path(path)
        try:
            with open(p, "rb") as fh:
                doc = tomllib.load(fh)
        except FileNotFoundError:
            raise InputError(f"{p.name}: no such rules file; give the environment's rules TOML") from None
        except tomllib.TOMLDecodeError as exc:
            raise InputError(f"{p.name}: not valid TOML ({exc}); fix the file") from None
        table = doc.get("rules", doc)
        if not isinstance(table, dict):
            raise InputError(f"{p.name}: [rules] must be a table of settings")
        known = {f.name for f in fields(OutputRules)}
        for key, value in table.items():
            name = ACRO_NAMES.get(key, key)
            if name not in known:
                close = difflib.get_close_matches(key, sorted(known | set(ACRO_NAMES)), n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise InputError(f"{p.name}: unknown rule {key!r}{hint}; the rules are {', '.join(sorted(known))}")
            values[name] = value
    values.update(overrides)
    try:
        return OutputRules(**values)
    except ParameterError as exc:
        if path is None:
            raise
        raise ParameterError(f"{Path(path).name}: {exc}", param=exc.param, rule=exc.rule, value=exc.value) from None
