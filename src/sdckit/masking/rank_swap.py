"""Rank swapping of continuous variables (Moore 1996).

Each variable is swapped on its own: its values are sorted, and the value of rank i is
exchanged with the value of a rank j chosen at random among the not yet swapped ranks in
(i, i + P], where P is p percent of the number of values. Every variable keeps its multiset
of values exactly (its distribution, mean, variance, quantiles); the link between variables
is weakened, the more the larger p.

``p`` is a percentage in (0, 100]: p = 5 lets a value move at most 5 % of the records'
ranks. (sdcMicro's ``rankSwap`` documents its ``P`` as a percentage but uses it as a
fraction; here p = 5 means 5 %.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numba
import numpy as np

from .._random import RngLike, seed_sequence
from .._validation import check_float, param_error
from ..microdata import Microdata
from ..params import check_params, param
from ..registry import register_step
from ..result import Guarantee
from ._numeric import ContinuousResult, check_numeric, select_numeric, strata_rows
from .summaries import lazy_moments_summary


# --------------------------------------------------------------------------- kernel
@numba.njit(cache=True)
def _swap_partners(m, window, seed):  # pragma: no cover - compiled
    """Moore's pass over ranks 0..m-1: partner[i] is the rank whose value rank i receives.

    Rank i (not yet swapped) picks j uniformly among the unswapped ranks in (i, i + window]
    (Moore 1996, step 3): first by rejection (at most 32 draws, exact since each draw is
    uniform on the window), then, if all 32 hit swapped ranks, by counting the free ranks of
    the window and drawing one of them. A rank with no free partner ahead keeps its value.
    """
    # numba keeps its own generator per thread (not numpy's global state); the seed comes from
    # the step's child stream
    np.random.seed(seed)  # noqa: NPY002
    partner = np.arange(m)
    swapped = np.zeros(m, dtype=np.bool_)
    for i in range(m):
        if swapped[i]:
            continue
        hi = min(i + window, m - 1)
        w = hi - i
        if w <= 0:
            continue
        j = -1
        for _ in range(32):
            c = i + 1 + int(np.random.random() * w)  # noqa: NPY002
            if not swapped[c]:
                j = c
                break
        if j < 0:
            free = 0
            for c in range(i + 1, hi + 1):
                if not swapped[c]:
                    free += 1
            if free == 0:
                continue
            r = int(np.random.random() * free)  # noqa: NPY002
            for c in range(i + 1, hi + 1):
                if not swapped[c]:
                    if r == 0:
                        j = c
                        break
                    r -= 1
        swapped[i] = True
        swapped[j] = True
        partner[i] = j
        partner[j] = i
    return partner


def swap_window(m: int, p: float) -> int:
    """P: the largest rank difference allowed, floor(p / 100 * m) for m values."""
    return int(np.floor(p / 100.0 * m + 1e-9))


def code_extremes(sorted_values: np.ndarray, top_percent: float, bottom_percent: float) -> np.ndarray:
    """Replace the top (bottom) ``percent`` share of sorted values by their mean (sdcMicro's
    ``TopPercent`` / ``BottomPercent``); a copy."""
    out = sorted_values.copy()
    m = out.size
    n_top = int(np.floor(top_percent / 100.0 * m + 1e-9))
    n_bottom = int(np.floor(bottom_percent / 100.0 * m + 1e-9))
    # the mean lies within its block; the clip keeps rounding from putting it outside
    if n_top > 1:
        block = out[m - n_top:]
        out[m - n_top:] = np.clip(block.mean(), block[0], block[-1])
    if n_bottom > 1:
        block = out[:n_bottom]
        out[:n_bottom] = np.clip(block.mean(), block[0], block[-1])
    return out


def _check_percent(owner: str, name: str, value: float, *, allow_zero: bool) -> float:
    return check_float(owner, name, value, low=0.0, high=100.0, low_open=not allow_zero)


def rank_swap_array(X: np.ndarray, p: float, rng: RngLike = None, *, top_percent: float = 0.0,
                    bottom_percent: float = 0.0, strata: np.ndarray | None = None) -> np.ndarray:
    """Rank-swap every column of ``X`` (Moore 1996); returns a new array.

    Parameters
    ----------
    X : ndarray of shape (n, p) or (n,)
        Continuous values; NaN stays in place (swapping uses the values present).
    p : float in (0, 100]
        Maximum rank distance of a swap as a percentage of the number of values present in
        the column (and stratum): P = floor(p / 100 * m).
    rng : int, Generator, SeedSequence or None
        Randomness; one child stream per column (and stratum), so a column's result does not
        depend on the other columns.
    top_percent, bottom_percent : float in [0, 100)
        Share of largest (smallest) values replaced by their mean before swapping.
    strata : ndarray of int, optional
        Stratum code per record; values are swapped within their stratum only.

    Returns
    -------
    ndarray
        Same shape as X. Each column's multiset of (coded) values is the input's exactly and
        no value moves more than P ranks.

    References
    ----------
    Moore, R. A. (1996). Controlled data-swapping techniques for masking public use
    microdata sets. U.S. Census Bureau, Statistical Research Division Report RR96/04.
    Domingo-Ferrer, J. and Torra, V. (2001). A quantitative comparison of disclosure control
    methods for microdata. In *Confidentiality, Disclosure and Data Access*, 111-133.
    """
    return _rank_swap(X, p, rng, top_percent=top_percent, bottom_percent=bottom_percent, strata=strata)[0]


def _rank_swap(X, p, rng, *, top_percent, bottom_percent, strata):
    """:func:`rank_swap_array` and, per column, what each swap did: for each group of records
    swapped together, the records in rank order and the rank whose value each rank received
    (a certificate :func:`check_rank_swap` verifies against the output instead of sorting it)."""
    owner = "rank_swap_array"
    p = _check_percent(owner, "p", p, allow_zero=False)
    top_percent = _check_percent(owner, "top_percent", top_percent, allow_zero=True)
    bottom_percent = _check_percent(owner, "bottom_percent", bottom_percent, allow_zero=True)
    if top_percent + bottom_percent >= 100.0:
        raise param_error(owner, "top_percent + bottom_percent", "below 100", top_percent + bottom_percent)
    one_d = np.ndim(X) == 1
    X = check_numeric(X, None, where=owner, allow_nan=True)
    n, n_cols = X.shape
    groups = [np.arange(n)] if strata is None else strata_rows(np.asarray(strata))
    ss, _ = seed_sequence(rng)
    children = ss.spawn(n_cols * len(groups))
    cols = np.ascontiguousarray(X.T)                # one contiguous row per variable
    out = cols.copy()
    certificates = []
    for j in range(n_cols):
        col = cols[j]
        has_nan = bool(np.isnan(col).any())
        certificate = []
        certificates.append(certificate)
        for g, rows in enumerate(groups):
            if has_nan:
                rows = rows[~np.isnan(col[rows])]
            m = rows.size
            if m < 2:
                continue
            order = np.argsort(col if strata is None and not has_nan else col[rows])
            if strata is not None or has_nan:
                order = rows[order]                  # record index of each rank
            sorted_vals = code_extremes(col[order], top_percent, bottom_percent)
            seed = int(np.random.default_rng(children[j * len(groups) + g]).integers(0, 2**31 - 1))
            partner = _swap_partners(m, swap_window(m, p), seed)
            out[j, order] = sorted_vals[partner]     # rank i receives the value of rank partner[i]
            certificate.append((order, partner))
    out = out.T                                      # (n, p), column-major: no further copy
    return (out[:, 0] if one_d else out), certificates


@numba.njit(cache=True, nogil=True)
def _certified_distance(x, y, rows, order, partner):  # pragma: no cover - compiled
    """Verify a swap's certificate on the output and measure the swap from it, in O(m).

    ``order`` must list exactly the records ``rows`` (a boolean mask over the records) in an
    order of non-decreasing ``x``; ``partner`` must be a permutation of the ranks with
    ``y[order[i]] == x[order[partner[i]]]`` (rank i's record released the value of rank
    partner[i]). Then the released values are the sorted values permuted (the multiset is
    kept) and a record's rank interval is the run of equal values holding its rank: the
    distance is measured as :func:`_tie_intervals` and a sort of the output would measure it.

    Returns (verified, largest rank distance)."""
    m = order.shape[0]
    n = x.shape[0]
    seen = np.zeros(n, dtype=np.bool_)
    for i in range(m):
        r = order[i]
        if r < 0 or r >= n or not rows[r] or seen[r]:
            return False, 0
        seen[r] = True
    count = 0
    for r in range(n):
        count += rows[r]
    if count != m:
        return False, 0
    taken = np.zeros(m, dtype=np.bool_)
    for i in range(m):
        k = partner[i]
        if k < 0 or k >= m or taken[k]:
            return False, 0
        taken[k] = True
    ref = np.empty(m)
    for i in range(m):
        ref[i] = x[order[i]]
        if ref[i] != ref[i] or (i > 0 and ref[i] < ref[i - 1]):
            return False, 0
    for i in range(m):
        if y[order[i]] != ref[partner[i]]:
            return False, 0
    lo = np.empty(m, dtype=np.int64)
    hi = np.empty(m, dtype=np.int64)
    for i in range(m):
        lo[i] = lo[i - 1] if i > 0 and ref[i] == ref[i - 1] else i
    for i in range(m - 1, -1, -1):
        hi[i] = hi[i + 1] if i < m - 1 and ref[i] == ref[i + 1] else i
    worst = 0
    for i in range(m):
        k = partner[i]
        d = max(lo[k] - hi[i], lo[i] - hi[k])
        if d > worst:
            worst = d
    return True, worst


def _tie_intervals(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For sorted ``s``: the first and last index of the run of equal values holding each
    position (= searchsorted(s, s, "left") and searchsorted(s, s, "right") - 1), in O(m)."""
    m = s.size
    idx = np.arange(m)
    step = np.empty(m + 1, dtype=bool)
    step[0] = step[m] = True
    np.not_equal(s[1:], s[:-1], out=step[1:m])
    lo = np.maximum.accumulate(np.where(step[:m], idx, 0))
    hi = np.minimum.accumulate(np.where(step[1:], idx, m - 1)[::-1])[::-1]
    return lo, hi


def check_rank_swap(before: np.ndarray, after: np.ndarray, p: float, top_percent: float,
                    bottom_percent: float, strata: np.ndarray | None = None,
                    certificates: list | None = None) -> dict:
    """Independent check of a rank swap, column by column (and stratum by stratum).

    Returns the largest rank distance found per column, the window P, and whether each
    column's sorted (coded) values and missing positions are the input's exactly. A value's
    rank distance is measured between the rank interval of the record's original value and
    that of its released value among the sorted coded values (ties count as distance 0).

    ``certificates`` (from the swap, one list per column of (records in rank order, partner
    rank) per group; without top/bottom coding) replace the sorts: each is verified against
    the input and the output first (:func:`_certified_distance`), and a column whose
    certificate does not verify is checked by sorting, so a wrong certificate never passes.
    """
    before = np.asarray(before, dtype=np.float64).reshape(len(before), -1)
    after = np.asarray(after, dtype=np.float64).reshape(len(after), -1)
    n = before.shape[0]
    groups = None if strata is None else strata_rows(np.asarray(strata))
    max_dist, window, multiset_ok, nan_ok = [], [], True, True
    for j in range(before.shape[1]):
        x, y = np.ascontiguousarray(before[:, j]), np.ascontiguousarray(after[:, j])
        x_nan = np.isnan(x)
        nan_ok &= bool(np.array_equal(x_nan, np.isnan(y)))
        certified = _check_certified(x, y, x_nan, groups, n, p, top_percent, bottom_percent,
                                     None if certificates is None else certificates[j])
        if certified is not None:
            max_dist.append(certified[0])
            window.append(certified[1])
            continue
        worst, allowed = 0, 0
        whole = groups is None and not x_nan.any()   # one group, every value present: no gather
        for rows in ([None] if whole else groups or [np.arange(n)]):
            if whole:
                xs, ys = x, y
            else:
                keep = rows[~x_nan[rows]]
                xs, ys = x[keep], y[keep]
            if xs.size == 0:
                continue
            # ranks are found on sorted values (a binary search with sorted queries, then put
            # back in record order): the same intervals as searching each record's value
            ox = np.argsort(xs)                # ties share their rank interval: any order
            ref = xs[ox]
            m = ref.size
            # the coding, restated: top / bottom shares replaced by their means
            nt, nb = int(np.floor(top_percent / 100 * m + 1e-9)), int(np.floor(bottom_percent / 100 * m + 1e-9))
            coded_ref = ref.copy()
            if nt > 1:
                coded_ref[m - nt:] = ref[m - nt:].mean()
            if nb > 1:
                coded_ref[:nb] = ref[:nb].mean()
            coded_ref = np.sort(coded_ref)
            oy = np.argsort(ys)
            ys_sorted = ys[oy]
            if nt > 1 or nb > 1:  # a coded mean may differ from the kernel's in the last bit
                multiset_ok &= bool(np.allclose(ys_sorted, coded_ref, rtol=1e-13, atol=0.0))
            else:
                multiset_ok &= bool(np.array_equal(ys_sorted, coded_ref))
            # rank interval of each original value (in the uncoded order) and of its released value
            lo_x, hi_x = np.empty(m, dtype=np.intp), np.empty(m, dtype=np.intp)
            lo_x[ox], hi_x[ox] = _tie_intervals(ref)
            if nt > 1 or nb > 1:  # a coded mean may differ from the kernel's in the last bit:
                # place a released value at the coded value it equals up to that bit
                at = np.clip(np.searchsorted(coded_ref, ys_sorted), 0, m - 1)
                for cand in (at, np.maximum(at - 1, 0)):
                    close = np.isclose(coded_ref[cand], ys_sorted, rtol=1e-13, atol=0.0)
                    ys_sorted = np.where(close, coded_ref[cand], ys_sorted)
            lo_y, hi_y = np.empty(m, dtype=np.intp), np.empty(m, dtype=np.intp)
            if np.array_equal(ys_sorted, coded_ref):
                lo_y[oy], hi_y[oy] = _tie_intervals(coded_ref)
            else:
                lo_y[oy] = np.searchsorted(coded_ref, ys_sorted, side="left")
                hi_y[oy] = np.searchsorted(coded_ref, ys_sorted, side="right") - 1
            # a top/bottom coded original counts at any rank of its coded block
            if nt > 1:
                lo_x = np.where(lo_x >= m - nt, m - nt, lo_x)
                hi_x = np.where(hi_x >= m - nt, m - 1, hi_x)
            if nb > 1:
                lo_x = np.where(lo_x < nb, 0, lo_x)
                hi_x = np.where(hi_x < nb, nb - 1, hi_x)
            dist = np.maximum(0, np.maximum(lo_y - hi_x, lo_x - hi_y))
            worst = max(worst, int(dist.max()))
            allowed = max(allowed, swap_window(m, p))
        max_dist.append(worst)
        window.append(allowed)
    within = all(d <= w for d, w in zip(max_dist, window))
    return {"max_rank_distance": max_dist, "window": window, "within_window": within,
            "multiset_kept": multiset_ok, "missing_in_place": nan_ok}


def _check_certified(x, y, x_nan, groups, n, p, top_percent, bottom_percent, certificate):
    """(largest distance, window) of one column from its verified certificate, or None when
    there is none, the values are coded, or it does not verify."""
    if certificate is None or top_percent > 0 or bottom_percent > 0:
        return None
    group_rows = groups or [np.arange(n)]
    if len(certificate) > len(group_rows):
        return None
    worst, allowed, i = 0, 0, 0
    for rows in group_rows:
        keep = rows[~x_nan[rows]]
        m = keep.size
        if m < 2:                          # not swapped: released as it was
            if m == 1 and not (y[keep[0]] == x[keep[0]]):
                return None
            if m:
                allowed = max(allowed, swap_window(m, p))
            continue
        if i >= len(certificate):
            return None
        order, partner = certificate[i]
        i += 1
        mask = np.zeros(n, dtype=np.bool_)
        mask[keep] = True
        ok, dist = _certified_distance(x, y, mask, np.asarray(order, dtype=np.int64),
                                       np.asarray(partner, dtype=np.int64))
        if not ok:
            return None
        worst = max(worst, int(dist))
        allowed = max(allowed, swap_window(m, p))
    if i != len(certificate):
        return None
    return worst, allowed


@dataclass(frozen=True)
class RankSwapResult(ContinuousResult):
    """A rank swap's result (the summary holds the swap window and the moments)."""


@register_step("rank_swap", engines=("memory", "dask"))
@dataclass(frozen=True)
class RankSwap:
    """Rank swapping of numeric variables (Moore 1996), each variable on its own.

    Parameters
    ----------
    p : float in (0, 100]
        Maximum rank distance of a swap, as a percentage of the number of values present.
    variables : list of str, optional
        Numeric variables to swap (default: the numeric_vars role).
    top_percent, bottom_percent : float in [0, 100)
        Share of the largest (smallest) values replaced by their mean before swapping
        (as sdcMicro's ``TopPercent`` / ``BottomPercent``).

    Notes
    -----
    Swaps stay within strata when the data has a strata role. Missing values stay where
    they are; P counts the values present. Guarantees (checked independently on the
    output): each variable's multiset of (coded) values is kept exactly, and no value moves
    more than P = floor(p / 100 * m) ranks.

    References
    ----------
    Moore, R. A. (1996). Controlled data-swapping techniques for masking public use
    microdata sets. U.S. Census Bureau, Report RR96/04.
    """

    p: float = param(5.0, kind="float", low=0.0, high=100.0, low_open=True, symbol="p",
                     unit="percent of ranks", grid=(1.0, 5.0, 10.0, 15.0),
                     help="maximum rank distance of a swap, as a percentage of the values present")
    variables: Sequence[str] | None = param(None, kind="columns", nullable=True,
                                            help="numeric variables (default: the numeric_vars role)")
    top_percent: float = param(0.0, kind="float", low=0.0, high=100.0, unit="percent",
                               advanced=True,
                               help="share of the largest values replaced by their mean first")
    bottom_percent: float = param(0.0, kind="float", low=0.0, high=100.0, unit="percent",
                                  advanced=True,
                                  help="share of the smallest values replaced by their mean first")

    def __post_init__(self) -> None:
        check_params(self)
        if self.top_percent + self.bottom_percent >= 100.0:
            raise param_error("RankSwap", "top_percent + bottom_percent", "below 100",
                              self.top_percent + self.bottom_percent)

    def apply(self, microdata: Microdata, *, rng=None) -> RankSwapResult:
        names, X, strata = select_numeric(microdata, self.variables, where="rank_swap", allow_nan=True)
        ss, record = seed_sequence(rng)
        out, certificates = _rank_swap(X, self.p, ss, top_percent=self.top_percent,
                                       bottom_percent=self.bottom_percent, strata=strata)
        released = microdata.with_columns({v: out[:, j] for j, v in enumerate(names)})
        chk = check_rank_swap(X, out, self.p, self.top_percent, self.bottom_percent, strata,
                              certificates=certificates)
        # the moments before and after are report figures: computed when the summary is read
        summary = lazy_moments_summary(
            {"variables": names, "p_percent": self.p, "window_ranks": dict(zip(names, chk["window"])),
             "max_rank_distance": dict(zip(names, chk["max_rank_distance"]))}, X, out, names)
        guarantees = (
            Guarantee("swap_range", f"no value moves more than p = {self.p:g}% of the ranks "
                      "(P = floor(p/100 * values present))", dict(zip(names, chk["max_rank_distance"])),
                      chk["within_window"]),
            Guarantee("marginals_kept", "each variable's multiset of values (after top/bottom coding) "
                      "is kept exactly and missing values stay in place",
                      chk["multiset_kept"] and chk["missing_in_place"],
                      chk["multiset_kept"] and chk["missing_in_place"]),
        )
        params = {"p": self.p, "variables": names, "top_percent": self.top_percent,
                  "bottom_percent": self.bottom_percent}
        return RankSwapResult("rank_swap", released, params, summary, guarantees, record)

    # ---- the Dask engine's protocol (sdckit.registry.DaskPlan)
    def dask_plan(self, roles):
        """Rank swapping within blocks of ranks (the window P of the whole variable)."""
        from ..registry import DaskPlan, dask_takes_only

        dask_takes_only(self, ("variables", "p"))
        cols = tuple(self.variables or roles.get("numeric_vars", ()))
        return DaskPlan("rank_swap", cols, cols)
