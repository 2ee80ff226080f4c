"""Disclosure measures of a synthetic file, as synthpop 1.9 ``disclosure()`` defines them.

An intruder knows some *key* variables of a person and looks them up in the synthetic file,
to recognise a record (identity disclosure) or to learn the person's value of a *target*
variable (attribute disclosure). With ``d`` the original and ``s`` the synthetic records,
``f_d(k)``, ``f_s(k)`` the counts of key combination ``k`` and ``f_d(t, k)``, ``f_s(t, k)``
those of target level ``t`` within it, ``p_s(t | k) = f_s(t, k) / f_s(k)`` (Raab, Nowok &
Dibben 2024, sections 3-4; all measures in percent):

Identity
    ``UiO``   original records unique on the keys: ``#{k: f_d(k) = 1} / N_d``;
    ``UiS``   synthetic records unique on the keys: ``#{k: f_s(k) = 1} / N_s``;
    ``UiOiS`` original uniques whose keys occur in the synthetic file;
    ``repU``  replicated uniques: keys unique in both files, ``#{k: f_d(k) = f_s(k) = 1} / N_d``.
Attribute
    ``Dorig`` original records whose keys determine the target in the original
    (``p_d(t | k) = 1``); ``Dsyn`` the same within the synthetic file (over ``N_s``);
    ``iS``    original records whose keys occur in the synthetic file;
    ``DiS``   original records whose keys occur in the synthetic file with a target level that
    is certain there (some ``p_s(t | k) = 1``);
    ``DiSCO`` original records whose keys occur in the synthetic file and whose *own* target
    level is certain there (``p_s(t_i | k_i) = 1``): disclosed correctly;
    ``DiSDiO`` those of DiSCO whose target is also certain in the original.
CAP measures
    ``baseCAPd = sum_t (f_d(t) / N_d)^2``, ``CAPd = sum_k f_d(k) sum_t p_d(t | k)^2 / N_d``,
    ``CAPs`` the same within the synthetic file, ``DCAP = sum_{t,k} p_s(t | k) f_d(t, k) / N_d``
    and ``TCAP = DiSCO / (original records whose keys occur in the synthetic file)``
    (Taub, Elliot, Pampaka & Smith 2018 for the CAP family; synthpop 1.9's TCAP as above).

Missing values of keys and target are one more level ("Missing"). Options restrict the
records counted for attribute disclosure as synthpop's ``disclosure()`` does: ``not_targetlev``
(target levels not counted), ``usetargetNA`` (count records with a missing target),
``usekeysNA`` (count records with a missing key, one flag per key), and ``exclude_ov_denom_lim``
(drop cells counting more than ``denom_lim`` original records, which few would call
disclosive).

References
----------
Raab, G. M., Nowok, B. and Dibben, C. (2024). Practical privacy metrics for synthetic data.
arXiv:2406.16826 (the measures synthpop 1.9's ``disclosure()`` computes).
Taub, J., Elliot, M., Pampaka, M. and Smith, D. (2018). Differential correct attribution
probability for synthetic data: an exploration. PSD 2018, LNCS 11126, 122-137.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from .._validation import close_names
from ..errors import InputError
from ..result import jsonable
from .disclosure_tables import (
    DisclosureOptions,
    DisclosureStats,
    cell_stats,
    column_forms,
    level_cells,
    measures_from_stats,
    merge_cells,
    raw_cells,
)

IDENTITY = ("UiO", "UiS", "UiOiS", "repU")
ATTRIBUTE = ("Dorig", "Dsyn", "iS", "DiS", "DiSCO", "DiSDiO", "max_denom", "mean_denom")
CAP = ("baseCAPd", "CAPd", "CAPs", "DCAP", "TCAP")


@dataclass(frozen=True)
class DisclosureMeasures:
    """Identity, attribute and CAP measures of one synthetic file (percent), for ``keys`` and
    ``target``; ``n_original`` and ``n_synthetic`` records."""

    keys: tuple[str, ...]
    target: str
    identity: dict
    attribute: dict
    cap: dict
    n_original: int
    n_synthetic: int
    excluded: dict = field(default_factory=dict)

    @property
    def repU(self) -> float:
        return self.identity["repU"]

    @property
    def DiSCO(self) -> float:
        return self.attribute["DiSCO"]

    @property
    def TCAP(self) -> float:
        return self.cap["TCAP"]

    def to_dict(self) -> dict:
        return jsonable({"keys": list(self.keys), "target": self.target, "identity": self.identity,
                         "attribute": self.attribute, "cap": self.cap, "n_original": self.n_original,
                         "n_synthetic": self.n_synthetic, "excluded": self.excluded})

    def describe(self) -> str:
        return (f"keys {', '.join(self.keys)}; target {self.target}: "
                f"{self.identity['UiO']:.2f}% of the original records are unique on the keys, "
                f"{self.identity['repU']:.2f}% are unique in both files (repU); "
                f"the target is certain given the keys for {self.attribute['Dorig']:.2f}% in the "
                f"original and disclosed correctly by the synthetic file for "
                f"{self.attribute['DiSCO']:.2f}% (DiSCO; TCAP {self.cap['TCAP']:.2f}%)")

    def report_html(self) -> str:
        def row(label: str, v: float, what: str) -> str:
            return (f"<tr><th>{html.escape(label)}</th><td>{v:.2f}%</td>"
                    f"<td>{html.escape(what)}</td></tr>")

        i, a, c = self.identity, self.attribute, self.cap
        return ("<table class='kv'>"
                + row("unique in the original (UiO)", i["UiO"], "original records unique on the keys")
                + row("replicated uniques (repU)", i["repU"], "unique on the keys in both files")
                + row("target certain in the original (Dorig)", a["Dorig"],
                      "keys determine the target in the original data")
                + row("disclosed correctly (DiSCO)", a["DiSCO"],
                      "keys found in the synthetic file, which gives the person's own target value with certainty")
                + row("TCAP", c["TCAP"], "DiSCO among the original records whose keys occur in the synthetic file")
                + "</table>")


def check_disclosure_args(original_columns: Sequence[str], synthetic_columns: Sequence[str],
                          keys: Sequence[str], target: Any,
                          usekeysNA: bool | Sequence[bool] = True) -> tuple[list[str], tuple[bool, ...]]:
    """The keys in the original's column order (as synthpop orders them) and one
    ``usekeysNA`` flag per key; an :class:`~sdckit.errors.InputError` naming the column when
    the keys or the target are not usable."""
    keys = list(keys)
    if isinstance(target, (list, tuple)):
        raise InputError("disclosure: target must be a single column.")
    for c in [*keys, target]:
        for name, cols in (("original", original_columns), ("synthetic", synthetic_columns)):
            if c not in cols:
                raise InputError(f"disclosure: the {name} data have no column {c!r}; "
                                 f"{close_names(c, [str(x) for x in cols])}")
    if not keys:
        raise InputError("disclosure: name at least one key variable.")
    if len(set(keys)) != len(keys):
        raise InputError("disclosure: the keys repeat a column.")
    if target in keys:
        raise InputError(f"disclosure: the target {target!r} is also a key; the target is what the keys "
                         "should not reveal.")
    # synthpop orders the keys as the data's columns
    keys = [c for c in original_columns if c in keys]
    if isinstance(usekeysNA, bool):
        use_key_na = (usekeysNA,) * len(keys)
    else:
        use_key_na = tuple(bool(u) for u in usekeysNA)
        if len(use_key_na) != len(keys):
            raise InputError("disclosure: usekeysNA needs one flag per key.")
    return keys, use_key_na


def disclosure_options(use_key_na: Sequence[bool], *, not_targetlev: Sequence[Any] = (),
                       usetargetNA: bool = True, exclude_ov_denom_lim: bool = False,
                       denom_lim: int = 5) -> DisclosureOptions:
    """The options of :func:`disclosure_measures` as one value (what the cell statistics read)."""
    return DisclosureOptions(tuple(not_targetlev), bool(usetargetNA), tuple(use_key_na),
                             bool(exclude_ov_denom_lim), int(denom_lim))


def excluded_of(keys: Sequence[str], opts: DisclosureOptions) -> dict:
    """What the options excluded, in words fit for the result's ``excluded``."""
    excluded: dict = {}
    if opts.not_targetlev:
        excluded["not_targetlev"] = sorted({str(v) for v in opts.not_targetlev})
    if not opts.usetargetNA:
        excluded["missing_target"] = True
    if not all(opts.use_key_na):
        excluded["missing_keys"] = [k for k, u in zip(keys, opts.use_key_na) if not u]
    if opts.exclude_ov_denom_lim:
        excluded["over_denom_lim"] = int(opts.denom_lim)
    return excluded


def measures_of(stats: DisclosureStats, keys: Sequence[str], target: str, opts: DisclosureOptions,
                n_original: int, n_synthetic: int) -> DisclosureMeasures:
    """The measures from merged cell statistics (:mod:`sdckit.synth.disclosure_tables`)."""
    identity, attribute, cap = measures_from_stats(stats)
    return DisclosureMeasures(tuple(keys), target, identity, attribute, cap, int(n_original), int(n_synthetic),
                              excluded_of(keys, opts))


def disclosure_measures(original: Any, synthetic: Any, keys: Sequence[str], target: str, *,
                        not_targetlev: Sequence[Any] = (), usetargetNA: bool = True,
                        usekeysNA: bool | Sequence[bool] = True, exclude_ov_denom_lim: bool = False,
                        denom_lim: int = 5) -> DisclosureMeasures:
    """synthpop 1.9's ``disclosure()`` measures of ``synthetic`` against ``original``.

    The two files' (keys, target) count tables are built and measured by
    :mod:`sdckit.synth.disclosure_tables`, the same code the Dask engine runs on partitions
    (the figures are the same for any partitioning).

    Parameters
    ----------
    original, synthetic : pandas.DataFrame or Microdata
    keys : list of str
        What the intruder knows.
    target : str
        What the intruder wants to learn (not one of the keys).
    not_targetlev : list
        Target levels not counted as disclosed (as labels).
    usetargetNA, usekeysNA : bool
        Count records with a missing target / key (per key: a list of flags).
    exclude_ov_denom_lim, denom_lim
        Drop cells of more than ``denom_lim`` records from the attribute measures.

    Returns
    -------
    DisclosureMeasures
    """
    d = _frame(original, "original")
    s = _frame(synthetic, "synthetic")
    keys, use_key_na = check_disclosure_args(list(d.columns), list(s.columns), keys, target, usekeysNA)
    opts = disclosure_options(use_key_na, not_targetlev=not_targetlev, usetargetNA=usetargetNA,
                              exclude_ov_denom_lim=exclude_ov_denom_lim, denom_lim=denom_lim)
    raw_d, types_d = raw_cells(d, keys, target)
    raw_s, types_s = raw_cells(s, keys, target)
    forms = column_forms([types_d, types_s], [*keys, target])
    cells = merge_cells([level_cells(raw_d, forms, keys, target, False),
                         level_cells(raw_s, forms, keys, target, True)], [*keys, target])
    return measures_of(cell_stats(cells, keys, target, opts), keys, target, opts, len(d), len(s))


def default_keys_targets(key_vars: Sequence[str], sensitive: Sequence[str], others: Sequence[str],
                         keys: Sequence[str] = (), targets: Sequence[str] = ()) -> tuple[list[str], list[str]]:
    """The keys (given, else the key variables) and targets (given, else the sensitive
    variables, else ``others``) of the disclosure figures, targets that are keys left out;
    no targets without keys."""
    keys = list(keys) or list(key_vars)
    if not keys:
        return [], []
    targets = list(targets) or list(sensitive) or list(others)
    return keys, [t for t in dict.fromkeys(targets) if t not in keys]


class DisclosureSource:
    """The original and the released file as the disclosure gate checks read them.

    :meth:`measures` gives :func:`disclosure_measures` for some keys and targets. This one holds
    two in-memory frames; the Dask engine gives one over partitioned files with the same
    attributes, whose figures come from count tables merged on the workers.

    Attributes
    ----------
    key_vars, sensitive : tuple of str
        The original data's roles (the checks' default keys and targets).
    original_columns, released_columns : list of str
    scope : str
        What the two files are, in words ("" for the release's own original and released files).
    """

    def __init__(self, original: Any, released: Any) -> None:
        self.original, self.released = original, released
        self.key_vars = tuple(getattr(original, "key_vars", ()) or ())
        self.sensitive = tuple(getattr(original, "sensitive", ()) or ())
        self.original_columns = [str(c) for c in _frame(original, "original").columns]
        self.released_columns = [str(c) for c in _frame(released, "released").columns]
        self.scope = ""

    def measures(self, keys: Sequence[str], targets: Sequence[str]) -> list[DisclosureMeasures]:
        """One :class:`DisclosureMeasures` per target, with ``disclosure()``'s default options."""
        return [disclosure_measures(self.original, self.released, keys, t) for t in targets]

    def measured_target(self, keys: Sequence[str]) -> str | None:
        """A target whose figures with these keys are at hand (None: nothing is kept here)."""
        return None


def _frame(data: Any, what: str) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        return data
    frame = getattr(data, "frame", None)
    if isinstance(frame, pd.DataFrame):
        return frame
    raise InputError(f"disclosure: the {what} data must be a DataFrame or a Microdata; got {type(data).__name__}.")


__all__ = ["DisclosureMeasures", "disclosure_measures", "check_disclosure_args", "disclosure_options",
           "excluded_of", "measures_of", "default_keys_targets", "DisclosureSource", "IDENTITY", "ATTRIBUTE", "CAP"]
