"""Targeted record swapping (the TEDS scheme; the EU census 2021 method; sdcMicro's recordSwap).

Households at risk exchange their geography (the *swapping attribute*: a hierarchy such as
region > district > municipality) with a partner household that shares the *swapping key*
(similarity profile, e.g. household size) and lies in a nearby area: the same parent area
first, going up the hierarchy only if needed. Every other variable stays with its record,
so every margin of the non-geographic variables is kept exactly; whole households move.

Terms (Roehrig's TEDS example, 2002; sdcMicro ``recordSwap``):

- uniques key (``risk_variables``): variables that make a record risky: a record is at risk
  at level h when its combination of (geo_1..geo_h, risk_variables) occurs fewer than
  ``k_anonymity`` times;
- swapping key (``similar``): variables a partner must share, as a list of profiles tried
  in order (the first profile is the strictest);
- swapping attribute (``hierarchy``): the geography exchanged;
- protected (``carry_along``): household-level variables exchanged with the geography.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numba
import numpy as np
import pandas as pd

from .._random import seed_sequence
from .._validation import check_names, param_error
from ..errors import InputError
from ..microdata import Microdata
from ..params import check_params, param
from ..registry import register_step
from ..result import Guarantee, StepResult
from ..risk.frequencies import dense_groups, frequencies_from_codes


@numba.njit(cache=True)
def _match(receivers, order, group_start, group_end, group_of, differ, swapped, partner,
           starts, max_probe):  # pragma: no cover - compiled
    """Pair each receiver with an unswapped donor of its group that differs in ``differ``.

    ``order`` lists households sorted by group (random order within a group); a group's
    members are order[group_start[g]:group_end[g]]. A scan starts at a random offset and
    probes at most ``max_probe`` members. Returns the number of pairs made.
    """
    made = 0
    for t in range(receivers.shape[0]):
        r = receivers[t]
        if swapped[r]:
            continue
        g = group_of[r]
        lo = group_start[g]
        size = group_end[g] - lo
        if size <= 1:
            continue
        first = int(starts[t] * size)
        probes = min(size, max_probe)
        for j in range(probes):
            d = order[lo + (first + j) % size]
            if d != r and not swapped[d] and differ[d] != differ[r]:
                swapped[r] = True
                swapped[d] = True
                partner[r] = d
                partner[d] = r
                made += 1
                break
    return made


def _combine(arrays: Sequence[np.ndarray]) -> np.ndarray:
    """Dense int64 ids of the combinations of several integer code arrays (one per household)."""
    if not arrays:
        return np.zeros(0, dtype=np.int64)
    ids = np.zeros(arrays[0].shape[0], dtype=np.int64)
    for a in arrays:
        a = np.asarray(a, dtype=np.int64)
        m = int(a.max()) + 2 if a.size else 1
        code = ids * m + (a + 1)
        ids, _ = dense_groups(code, int(code.max()) + 1 if code.size else 1)
    return ids


@dataclass(frozen=True)
class _Households:
    """Households and their geography: the household column (None: one record, one household),
    each record's household, each household's first record, and per level h the area codes
    (``geo_codes[h]``) and the dense ids of (geo_1..geo_{h+1}) (``prefix[h]``), per record."""

    column: str | None
    of_record: np.ndarray
    first: np.ndarray
    geo_codes: list[np.ndarray]
    prefix: list[np.ndarray]

    @property
    def n(self) -> int:
        return int(self.first.size)

    @property
    def levels(self) -> int:
        return len(self.geo_codes)


@dataclass(frozen=True)
class _Pairs:
    """The pairing: which households swapped, each one's partner, and the risky households'
    counts (swapped, left without a partner)."""

    swapped: np.ndarray
    partner: np.ndarray
    n_risky_swapped: int
    n_risky_unmatched: int


@dataclass(frozen=True)
class SwapResult(StepResult):
    """Record-swap result: the partner of every household and the effect, level by level."""

    partner: np.ndarray | None = None
    household_risk_level: np.ndarray | None = None


@register_step("record_swap", engines=("memory", "dask"))
@dataclass(frozen=True)
class RecordSwap:
    """Targeted record swapping of households between nearby areas.

    Parameters
    ----------
    hierarchy : list of str
        Geography from the top level down (e.g. ``["region", "district", "municipality"]``);
        these columns are exchanged between partner households.
    similar : list of str, or list of lists of str
        Swapping key: profiles a partner must share, tried in order (e.g.
        ``[["hsize", "tenure"], ["hsize"]]``). Values are taken from each household's first
        record (use household-level variables).
    risk_variables : list of str
        Uniques key used with the geography to find records at risk.
    swap_rate : float in [0, 1]
        Target share of households whose geography is exchanged; one swap moves two
        households (sdcMicro's convention). Risky households are swapped first; random
        households fill up to the rate.
    k_anonymity : int >= 1
        A record is at risk at level h when (geo_1..geo_h, risk_variables) occurs fewer than
        k times; its household is swapped across the coarsest level at which it is at risk.
    household : str, optional
        Household id column (default: the Microdata's household role; without one, each
        record is its own household).
    carry_along : list of str
        Household-level variables exchanged together with the geography.
    allow_across_top : bool
        Allow partners in another top-level area (default False: a household at risk at the
        top level is swapped across the second level instead, and counted as such).
    donors : {"nearby", "anywhere"}
        Where a partner is looked for: ``"nearby"`` (default) in the same parent area first,
        going up the hierarchy only if needed; ``"anywhere"``, sdcMicro's ``recordSwap`` rule
        (its donor pool is every household outside the receiver's area at the level it is
        swapped at, so swaps, the random fill-up ones included, cross the top level). Needs
        ``allow_across_top``.
    swap_all_risky : bool
        Swap every household at risk even when that exceeds ``swap_rate`` (default True, as
        sdcMicro); with False, risky households are swapped in random order up to the rate.
    max_probe : int
        How many candidates a donor search probes in the partner pool before moving up a level.

    Notes
    -----
    Guarantees (checked on the output): every record of a household gets the same new
    geography, taken from one other household; every non-geographic, non-carry-along value is
    unchanged; no household changes its top-level area unless ``allow_across_top``; the
    realised number of swapped households is within 1 of round(swap_rate * n_households) when
    the risky households fit in it.

    References
    ----------
    Dalenius, T. and Reiss, S. P. (1982). Data-swapping: a technique for disclosure control.
    *Journal of Statistical Planning and Inference* 6, 73-85.
    Roehrig, S. F. (2002). Disclosure limitation in large statistical databases (the TEDS
    targeted swapping example).
    Eurostat (2021). Targeted record swapping for the 2021 census (ONS SAS code); sdcMicro's
    ``recordSwap`` (Gussenbauer), whose parameters this step mirrors.
    """

    hierarchy: Sequence[str] = param(kind="columns",
                                     help="geography from the top level down; exchanged between "
                                          "partner households")
    similar: Sequence = param((), kind="any",
                              help="swapping key: column names, or a list of such lists tried in "
                                   "order")
    risk_variables: Sequence[str] = param((), kind="columns",
                                          help="uniques key used with the geography to find "
                                               "records at risk")
    swap_rate: float = param(0.05, kind="float", low=0.0, high=1.0, unit="share of households",
                             grid=(0.01, 0.05, 0.1, 0.2),
                             help="target share of households whose geography is exchanged")
    k_anonymity: int = param(3, kind="int", low=1, symbol="k", unit="records", grid=(2, 3, 5),
                             help="a record is at risk when (geography, risk_variables) occurs "
                                  "fewer than k times")
    household: str | None = param(None, kind="column", nullable=True,
                                  help="household id column (default: the household role)")
    carry_along: Sequence[str] = param((), kind="columns",
                                       help="household-level variables exchanged with the geography")
    allow_across_top: bool = param(False, kind="bool",
                                   help="allow partners in another top-level area")
    donors: str = param("nearby", kind="choice", choices=("nearby", "anywhere"),
                        help="partners in the same parent area first (nearby), or anywhere outside "
                             "the receiver's area as sdcMicro's recordSwap")
    swap_all_risky: bool = param(True, kind="bool",
                                 help="swap every household at risk even beyond swap_rate")
    max_probe: int = param(256, kind="int", low=1, advanced=True,
                           help="candidates a donor search probes before moving up a level")
    _profiles: tuple = field(init=False, repr=False, default=())

    def __post_init__(self) -> None:
        check_params(self)
        owner = "RecordSwap"
        if self.donors == "anywhere" and not self.allow_across_top:
            raise param_error(owner, "donors", "'nearby' unless allow_across_top is true (donors "
                              "anywhere cross the top level)", self.donors)
        sim = self.similar
        if isinstance(sim, str) or (isinstance(sim, Sequence) and sim and all(isinstance(s, str) for s in sim)):
            profiles = (check_names(owner, "similar", sim),)
        elif isinstance(sim, Sequence) and not isinstance(sim, str):
            profiles = tuple(check_names(owner, "similar", p) for p in sim)
        else:
            raise param_error(owner, "similar", "a list of column names or a list of such lists", sim)
        object.__setattr__(self, "_profiles", profiles)

    # ------------------------------------------------------------------ helpers
    def _columns(self, md: Microdata) -> None:
        cols = set(md.columns)
        for role, names in [("hierarchy", self.hierarchy), ("risk_variables", self.risk_variables),
                            ("carry_along", self.carry_along)] + [("similar", p) for p in self._profiles]:
            for c in names:
                if c not in cols:
                    from .._validation import close_names
                    raise InputError(f"record_swap: {role} column {c!r} does not exist; "
                                     f"{close_names(c, md.columns)}")
        overlap = set(self.hierarchy) & (set(self.carry_along) | {c for p in self._profiles for c in p})
        if overlap:
            raise InputError(f"record_swap: {sorted(overlap)} cannot be both swapped (hierarchy) and "
                             "a swapping key or carry-along variable.")

    def apply(self, microdata: Microdata, *, rng=None) -> SwapResult:
        self._columns(microdata)
        ss, record = seed_sequence(rng)
        gen = np.random.default_rng(ss)
        frame = microdata.frame
        homes = self._households(microdata)
        hh_level, n_risky_top = self._risk_levels(frame, homes)
        target = int(round(self.swap_rate * homes.n))
        pairs = self._pair(frame, homes, hh_level, target, gen)
        out, src_rec = self._exchange(frame, homes, pairs.partner)
        summary, guarantees, params = self._outcome(frame, out, homes, hh_level, n_risky_top, target,
                                                    pairs, src_rec)
        return SwapResult("record_swap", microdata.with_data(out), params, summary, tuple(guarantees), record,
                          partner=pairs.partner, household_risk_level=hh_level)

    # ------------------------------------------------------------------ the parts of apply
    def _households(self, md: Microdata) -> _Households:
        """Household ids per record (one record one household without the household role) and
        the geography's area prefixes, refusing missing ids or areas and households that span
        several areas."""
        frame = md.frame
        n = md.n_records
        hh_col = self.household or md.household
        if hh_col is not None:
            if frame[hh_col].isna().any():
                raise InputError(f"record_swap: household column {hh_col!r} has "
                                 f"{int(frame[hh_col].isna().sum())} missing ids; every record needs one.")
            hh, _ = pd.factorize(frame[hh_col], sort=False)
            hh = hh.astype(np.int64)
        else:
            hh = np.arange(n, dtype=np.int64)
        n_hh = int(hh.max()) + 1
        first = np.full(n_hh, n, dtype=np.int64)
        np.minimum.at(first, hh, np.arange(n, dtype=np.int64))

        geo_codes = []
        for col in self.hierarchy:
            c, _ = pd.factorize(frame[col], sort=True)
            if (c < 0).any():
                raise InputError(f"record_swap: geography column {col!r} has {int((c < 0).sum())} "
                                 "missing values; every record needs an area.")
            geo_codes.append(c.astype(np.int64))
        levels = len(geo_codes)
        # prefix[h] = dense id of (geo_1..geo_{h+1}) per record
        prefix = [_combine(geo_codes[: h + 1]) for h in range(levels)]
        for h in range(levels):
            per_hh_min = np.full(n_hh, np.iinfo(np.int64).max)
            per_hh_max = np.full(n_hh, -1, dtype=np.int64)
            np.minimum.at(per_hh_min, hh, prefix[h])
            np.maximum.at(per_hh_max, hh, prefix[h])
            bad = np.flatnonzero(per_hh_min != per_hh_max)
            if bad.size:
                raise InputError(f"record_swap: {bad.size} households span several areas of "
                                 f"{self.hierarchy[h]!r} (household ids must not be shared across "
                                 "geographies); fix the ids or the geography.")
        return _Households(hh_col, hh, first, geo_codes, prefix)

    def _risk_levels(self, frame: pd.DataFrame, homes: _Households) -> tuple[np.ndarray, int]:
        """Each household's risk level (the coarsest level at which a member is at risk, ``levels``
        when none is) and how many households are at risk at the top level."""
        levels, hh, n_hh = homes.levels, homes.of_record, homes.n
        # risk: record at risk at level h when f(geo_1..geo_h, risk vars) < k  (sdcMicro's rule)
        risk_codes = [pd.factorize(frame[c], sort=True)[0].astype(np.int32) for c in self.risk_variables]
        risk_ncat = [int(c.max()) + 1 for c in risk_codes]
        hh_level = np.full(n_hh, levels, dtype=np.int64)  # `levels` = not at risk
        for h in range(levels - 1, -1, -1):
            p = homes.prefix[h].astype(np.int32)
            f = frequencies_from_codes([p, *risk_codes], [int(p.max()) + 1, *risk_ncat]).fk
            risky = f < self.k_anonymity
            lvl = np.where(risky, h, levels)
            np.minimum.at(hh_level, hh, lvl)  # coarsest level at which any member is at risk
        n_risky_top = int((hh_level == 0).sum())
        if not self.allow_across_top and levels > 1:
            hh_level = np.where(hh_level == 0, 1, hh_level)
        elif not self.allow_across_top and levels == 1:
            hh_level = np.where(hh_level == 0, levels, hh_level)  # nothing allowed: cannot move
        return hh_level, n_risky_top

    def _pair(self, frame: pd.DataFrame, homes: _Households, hh_level: np.ndarray, target: int,
              gen: np.random.Generator) -> _Pairs:
        """Pair households: every risky household first (differing at its risk level), then
        random households until ``target`` households are swapped (or no partner is left)."""
        levels, n_hh, first = homes.levels, homes.n, homes.first
        prefix_hh = [p[first] for p in homes.prefix]
        profiles_hh = [_combine([pd.factorize(frame[c], sort=True)[0][first] for c in prof])
                       for prof in self._profiles] or [np.zeros(n_hh, dtype=np.int64)]
        swapped = np.zeros(n_hh, dtype=np.bool_)
        partner = np.arange(n_hh, dtype=np.int64)
        risky_hh = np.flatnonzero(hh_level < levels)
        gen.shuffle(risky_hh)
        if not self.swap_all_risky:
            risky_hh = risky_hh[: max(target // 2, 0)]
        lowest = 0 if self.allow_across_top else min(1, levels - 1)

        def search(receivers: np.ndarray, level_of: np.ndarray) -> None:
            self._search(receivers, level_of, prefix_hh, profiles_hh, lowest, swapped, partner, gen)

        # risky households: must differ at their risk level -> search from that level upwards
        search(risky_hh, hh_level)
        n_risky_swapped = int(swapped[hh_level < levels].sum())
        n_risky_unmatched = int(((hh_level < levels) & ~swapped).sum())
        # fill up with random households (differ at the lowest level first)
        rounds = 0
        while swapped.sum() + 1 < target and rounds < 20:
            rounds += 1
            need_pairs = (target - int(swapped.sum())) // 2
            pool = np.flatnonzero(~swapped)
            if pool.size < 2:
                break
            receivers = gen.choice(pool, size=min(pool.size, need_pairs), replace=False)
            before = int(swapped.sum())
            remaining = need_pairs
            # match in slices so that the fill never overshoots the target
            for chunk in np.array_split(receivers, max(1, receivers.size // 1024)):
                if remaining <= 0:
                    break
                chunk = chunk[: remaining]
                b = int(swapped.sum())
                search(chunk, np.full(n_hh, levels - 1, dtype=np.int64))
                remaining -= (int(swapped.sum()) - b) // 2
            if int(swapped.sum()) == before:
                break
        return _Pairs(swapped, partner, n_risky_swapped, n_risky_unmatched)

    def _search(self, receivers: np.ndarray, level_of: np.ndarray, prefix_hh: list[np.ndarray],
                profiles_hh: list[np.ndarray], lowest: int, swapped: np.ndarray, partner: np.ndarray,
                gen: np.random.Generator) -> None:
        """Donor search: differ at each receiver's level, share its parent, going up if needed
        (updates ``swapped`` and ``partner`` in place)."""
        n_hh = swapped.size
        pending = receivers
        for differ_level in range(len(prefix_hh) - 1, lowest - 1, -1):
            for prof in profiles_hh:
                todo = pending[(~swapped[pending]) & (level_of[pending] >= differ_level)]
                if todo.size == 0:
                    continue
                parent = (prefix_hh[differ_level - 1] if differ_level > 0 and self.donors == "nearby"
                          else np.zeros(n_hh, np.int64))      # "anywhere": the whole file
                group = _combine([parent, prof])
                rnd = gen.random(n_hh)
                order = np.lexsort((rnd, group)).astype(np.int64)
                counts = np.bincount(group, minlength=int(group.max()) + 1)
                ends = np.cumsum(counts)
                starts_g = ends - counts
                _match(todo, order, starts_g, ends, group, prefix_hh[differ_level], swapped, partner,
                       gen.random(todo.size), self.max_probe)

    def _exchange(self, frame: pd.DataFrame, homes: _Households,
                  partner: np.ndarray) -> tuple[pd.DataFrame, np.ndarray]:
        """Each record takes the geography (and carry-along values) of its household's partner;
        returns the new frame and each record's source record."""
        src_rec = homes.first[partner[homes.of_record]]  # the first record of the partner household
        out = frame.copy(deep=False)
        moved_cols = list(self.hierarchy) + list(self.carry_along)
        for col in moved_cols:
            values = frame[col].to_numpy()
            out[col] = pd.Series(values[src_rec], index=frame.index).astype(frame[col].dtype)
        return out, src_rec

    def _outcome(self, frame: pd.DataFrame, out: pd.DataFrame, homes: _Households, hh_level: np.ndarray,
                 n_risky_top: int, target: int, pairs: _Pairs,
                 src_rec: np.ndarray) -> tuple[dict, list[Guarantee], dict]:
        """The summary, the independently checked guarantees and the public parameters."""
        levels, hh, n_hh, swapped = homes.levels, homes.of_record, homes.n, pairs.swapped
        n_swapped = int(swapped.sum())
        summary = {
            "n_households": n_hh, "swap_rate_requested": self.swap_rate,
            "households_swapped": n_swapped, "swap_rate_realised": n_swapped / n_hh,
            "records_swapped": int(swapped[hh].sum()),
            "risky_households": int((hh_level < levels).sum()),
            "risky_swapped_share": (pairs.n_risky_swapped / max(1, int((hh_level < levels).sum()))),
            "risky_without_partner": pairs.n_risky_unmatched,
            "risky_at_top_level": n_risky_top,
            "margin_change": _margin_changes(frame, out, self.hierarchy),
        }
        guarantees = check_record_swap(frame, out, hh, self.hierarchy, self.carry_along,
                                       self.allow_across_top, target, n_swapped,
                                       risky_fit=int((hh_level < levels).sum()) <= target)
        params = {"hierarchy": list(self.hierarchy), "similar": [list(p) for p in self._profiles],
                  "risk_variables": list(self.risk_variables), "swap_rate": self.swap_rate,
                  "k_anonymity": self.k_anonymity, "household": homes.column,
                  "carry_along": list(self.carry_along), "allow_across_top": self.allow_across_top,
                  "swap_all_risky": self.swap_all_risky, "donors": self.donors}
        if self.donors == "anywhere":
            # the sdcMicro rule, checked: a swapped household's area differs from its old one
            # at the finest level, and the records counted in another top-level area are stated
            moved = swapped[hh]
            prefix = homes.prefix
            finest_changed = bool((prefix[-1][moved] != prefix[-1][src_rec][moved]).all())
            summary["records_across_top"] = int((homes.geo_codes[0] != homes.geo_codes[0][src_rec]).sum())
            guarantees.append(Guarantee("area_changed", "every swapped household's area differs from "
                                        "its old one at the finest level", finest_changed, finest_changed))
        return summary, guarantees, params

    # ---- the Dask engine's protocol (sdckit.registry.DaskPlan)
    def dask_plan(self, roles):
        """Within the areas of the top hierarchy level; writes the hierarchy and carried columns."""
        from ..errors import SpecError
        from ..registry import DaskPlan, role_columns

        if self.donors == "anywhere":
            raise SpecError("donors: \"anywhere\" swaps across the top level and runs in memory only; "
                            "use donors = \"nearby\" on the Dask engine.")
        hierarchy = tuple(self.hierarchy)
        writes = tuple(dict.fromkeys(hierarchy + tuple(self.carry_along or ())))
        reads = tuple(dict.fromkeys((*writes, hierarchy[0], *role_columns(roles))))
        return DaskPlan("groups", reads, writes, hierarchy[0])


def _margin_changes(before: pd.DataFrame, after: pd.DataFrame, hierarchy: Sequence[str]) -> dict:
    """Per geography level: records counted in another area than before (sum |diff| / 2)."""
    out = {}
    for h in range(len(hierarchy)):
        cols = list(hierarchy[: h + 1])
        a = before.groupby(cols, dropna=False).size()
        b = after.groupby(cols, dropna=False).size()
        diff = a.subtract(b, fill_value=0).abs().sum() / 2
        out[hierarchy[h]] = int(diff)
    return out


def check_record_swap(before: pd.DataFrame, after: pd.DataFrame, household: np.ndarray,
                      hierarchy: Sequence[str], carry_along: Sequence[str], allow_across_top: bool,
                      target: int, n_swapped: int, *, risky_fit: bool = True) -> list[Guarantee]:
    """Independent checks of a record swap on the data before and after."""
    moved = list(hierarchy) + list(carry_along)
    others = [c for c in before.columns if c not in moved]
    unchanged = all(before[c].equals(after[c]) for c in others)
    geo_after = _combine([pd.factorize(after[c], sort=True)[0] for c in hierarchy])
    n_hh = int(household.max()) + 1
    lo = np.full(n_hh, np.iinfo(np.int64).max)
    hi = np.full(n_hh, -1, dtype=np.int64)
    np.minimum.at(lo, household, geo_after)
    np.maximum.at(hi, household, geo_after)
    same_in_household = bool((lo == hi).all())
    top_kept = allow_across_top or bool((before[hierarchy[0]] == after[hierarchy[0]]).all())
    g = [
        Guarantee("other_variables_unchanged",
                  "every value outside the geography and carry-along variables is unchanged "
                  "(all their margins are kept exactly)", unchanged, unchanged),
        Guarantee("whole_households", "all members of a household share one released geography",
                  same_in_household, same_in_household),
        Guarantee("top_level_kept", "no household leaves its top-level area"
                  if not allow_across_top else "swaps across the top level were allowed", top_kept, top_kept),
    ]
    if risky_fit:
        ok = abs(n_swapped - target) <= 1
        g.append(Guarantee("swap_rate", f"swapped households within 1 of the target {target}",
                           n_swapped, ok))
    return g
