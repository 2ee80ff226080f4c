"""Neighbourhood resampling of mixed data (Matloff & Tendick's ``nbrs``).

Each selected record i is replaced, variable by variable, by the value of an independently
drawn neighbour: for j = 1..p draw a record a_j from the set S_i of records within distance
epsilon of record i (record i itself excluded) and release W'_ij = W_{a_j, j} (Matloff and Tendick 2018,
section 2, eq. (2)). The conditional independence of the draws does not break the dependence
between variables: as epsilon -> 0 the joint law of the released record tends to that of the
original data (section 3, eqs. (4)-(12)), so the multivariate structure of continuous,
categorical and mixed data is kept without modelling it.

Distance (section 4): Euclidean on standardised variables (sd with n - 1, as R's ``scale``),
each variable's coordinate multiplied by its weight (``wts``). Categorical variables are coded
inside the method and their released values are values of real neighbours, so they are always
valid categories: a binary variable becomes one standardised dummy (exactly the paper's coding
of sex, ms and phd); a variable with c > 2 categories becomes c standardised dummies, each
multiplied by 1/sqrt(2), so two categories a, b lie at distance
w * sqrt((1/var_a + 1/var_b) / 2): the single-dummy distance w / sd when c = 2.

Neighbour search: a ``scipy.spatial.cKDTree``, never an n x n matrix. The ball S_i is read
from a k-nearest-neighbour query of ``probe`` neighbours bounded by epsilon (fixed-size
arrays, vectorised); only records whose ball holds more than ``probe`` records get their
ball listed by ``query_ball_point``. The draws are uniform numbers drawn once for all
(selected record, variable) pairs, so the output does not depend on the chunk size or the
number of workers.

The core on arrays (metric, searches, draws, the independent checker) is in
:mod:`sdckit.masking._neighbours_core`; this module holds the method on microdata and its
result.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from scipy.spatial import cKDTree

from .._random import seed_sequence
from .._validation import check_float, close_names, param_error
from ..errors import InputError
from ..microdata import Microdata
from ..params import REQUIRED, check_params, flat_form_problem, param, variant_value
from ..result import StepResult
from ..risk.metric import MixedMetric, values_equal  # noqa: F401 - re-exported (the metric M)

# the core on arrays (searches, draws, checker) lives in _neighbours_core; re-exported here
from ._neighbours_core import (  # noqa: F401
    OWNER,
    PairDistance,
    ball_search,
    check_neighbours,
    distance_summary,
    draw_members,
    grouped_ball_draws,
    knn_search,
)


# ---------------------------------------------------------------------------------- result
@dataclass(frozen=True)
class NeighbourResult(StepResult):
    """Neighbourhood resampling result.

    Attributes
    ----------
    source : ndarray (n, p) int64
        Row whose value each released value is: ``source[i, j]`` for variable j; ``i`` for
        records left unchanged, ``-1`` for suppressed ones.
    selected, suppressed, fallback : ndarray of bool (n,)
        Records chosen for modification (q), records set to missing (no neighbour, policy
        "suppress"), records whose neighbourhood came from the k-NN fallback.
    n_neighbours : ndarray (n,) int64
        |S_i| for selected records (0 otherwise).
    radius : ndarray (n,) float64
        Radius of S_i (epsilon_i, or the k-th neighbour distance for k-NN neighbourhoods).
    variables : tuple of str
        Resampled variables, in the column order of ``source``.
    metric : MixedMetric
        The distance used.
    """

    source: np.ndarray | None = None
    selected: np.ndarray | None = None
    suppressed: np.ndarray | None = None
    fallback: np.ndarray | None = None
    n_neighbours: np.ndarray | None = None
    radius: np.ndarray | None = None
    variables: tuple[str, ...] = ()
    metric: MixedMetric | None = None


# ---------------------------------------------------------------------------------- neighbourhoods
@dataclass(frozen=True)
class Radius:
    """S_i = the records within distance eps_i of record i (Matloff & Tendick 2018, section 2),
    with a per-record radius (section 8) and a policy for a record whose S_i is empty.

    Parameters
    ----------
    eps : float > 0, optional
        Neighbourhood radius epsilon on the standardised, weighted scale (required unless
        ``eps_column`` is given).
    eps_column : str, optional
        Per-record radius read from this numeric column (it takes no part in the distance and
        is not resampled); with ``eps`` the smaller of the two; combined with
        ``min_neighbours`` when both are given.
    min_neighbours : int >= 1, optional
        Per-record radius (section 8): eps_i = max(eps, distance to the m-th nearest other
        record), so every neighbourhood holds at least m records.
    no_neighbour : {"suppress", "knn"}
        A selected record with no neighbour within eps_i: ``"suppress"`` sets all its
        ``variables`` to missing (the paper's NA record); ``"knn"`` resamples it from its k
        nearest records instead.
    k : int >= 1
        Neighbourhood size of the ``no_neighbour="knn"`` fallback.
    """

    variant_name: ClassVar[str] = "radius"

    eps: float | None = param(None, kind="float", low=0.0, low_open=True, nullable=True,
                              symbol="epsilon", grid=(0.1, 0.2, 0.3, 0.5),
                              unit="standardised, weighted distance",
                              help="neighbourhood radius (required without eps_column)")
    eps_column: str | None = param(None, kind="column", nullable=True, advanced=True,
                                   help="numeric column holding a per-record radius")
    min_neighbours: int | None = param(None, kind="int", low=1, nullable=True, symbol="m",
                                       unit="records",
                                       help="per-record radius reaching at least this many records")
    no_neighbour: str = param("suppress", kind="choice", choices=("suppress", "knn"),
                              help="a selected record with no neighbour within eps: set missing, "
                                   "or resample from its k nearest")
    k: int = param(10, kind="int", low=1, unit="records", symbol="k", advanced=True,
                   help="neighbourhood size of the no_neighbour='knn' fallback")

    def __post_init__(self) -> None:
        check_params(self)
        if self.eps is None and self.eps_column is None:
            raise param_error("Radius", "eps", "a number > 0 (the neighbourhood radius) when eps_column "
                              "is not given", self.eps)


@dataclass(frozen=True)
class Knn:
    """S_i = the k nearest other records (Matloff & Tendick 2018, section 8), never empty.

    Parameters
    ----------
    k : int >= 1
        Neighbourhood size.
    """

    variant_name: ClassVar[str] = "knn"

    k: int = param(10, kind="int", low=1, unit="records", symbol="k",
                   help="neighbourhood size: the k nearest other records")

    def __post_init__(self) -> None:
        check_params(self)


#: the neighbourhoods ``NeighbourResampling.neighbourhood`` takes (one declared type each)
NEIGHBOURHOODS = (Radius, Knn)


# ---------------------------------------------------------------------------------- method
@dataclass(frozen=True)
class NeighbourResampling:
    """Replace each selected record's values by values of independently drawn neighbours.

    Parameters
    ----------
    neighbourhood : Radius or Knn
        The neighbourhood S_i, a declared type with its own settings: ``Radius(eps=0.3)``
        (records within eps, section 2; with ``eps_column``, ``min_neighbours``, and the
        ``no_neighbour`` policy with its fallback ``k``), or ``Knn(k=10)`` (the k nearest
        other records, section 8). In a spec an inline table: ``neighbourhood = { type =
        "radius", eps = 0.3 }`` or ``neighbourhood = { type = "knn", k = 5 }``.
    q : float in (0, 1]
        Share of records modified (``modprop``).
    selection : {"exact", "bernoulli"}
        ``"exact"`` (default, as the published code ``nbrs``): exactly floor(n q) records
        chosen at random without replacement. ``"bernoulli"`` (as the paper's text): each
        record independently with probability q.
    variables : list of str
        Variables used in the distance and resampled (default: every column except the
        weight and household roles). Other columns are left as they are.
    categorical : list of str, optional
        Variables treated as categories (coded as dummies in the distance). Default: the key
        variables among ``variables`` and every non-numeric column.
    weights : mapping column -> float >= 0
        Per-variable weight of the standardised coordinate (``wts``); default 1. Weight 0
        leaves a variable out of the distance (it is still resampled).
    probe : int >= 1
        Ball members read from the bounded k-NN query before ``query_ball_point`` lists a
        ball; changes speed only, never the output.
    max_groups : int >= 0
        Search by categorical combination (one KD-tree on the continuous coordinates per
        combination, partner combinations within eps) when the categorical variables form at
        most this many combinations; otherwise one KD-tree on all coordinates. Speed only:
        both searches give the same output.
    chunk_size : int >= 1
        Records queried at a time (memory: about chunk_size * probe * 16 bytes).
    workers : int
        Threads of the KD-tree queries (-1 = all cores); changes speed only.

    Notes
    -----
    Guarantees (checked on the output by :func:`check_neighbours`, which recomputes every
    distance from a closed pairwise formula, independent of the coordinates used here):
    every released value of a modified record equals the original value of the same variable
    in a record at distance <= eps_i from it (or among its k nearest for k-NN
    neighbourhoods), never the record itself; unmodified records are identical; suppressed
    records are missing in every resampled variable; categorical values are categories of
    the input; the number of modified records is floor(n q) for ``selection="exact"``.

    References
    ----------
    Matloff, N. and Tendick, P. (2018). A new method for avoiding data disclosure while
    automatically preserving multivariate relations. arXiv:1510.04406; R code ``nbrs`` in
    github.com/matloff/statdb (Neighbors.R).
    """

    neighbourhood: Any = param(REQUIRED, kind="variant", variants=NEIGHBOURHOODS, label="neighbourhood",
                               help="records within eps (with a per-record radius and a policy for "
                                    "records without neighbours), or the k nearest other records")
    q: float = param(1.0, kind="float", low=0.0, high=1.0, low_open=True, symbol="q",
                     unit="share of records", grid=(0.25, 0.5, 1.0),
                     help="share of records modified (modprop)")
    selection: str = param("exact", kind="choice", choices=("exact", "bernoulli"),
                           help="exactly floor(n q) records, or each record with probability q")
    variables: Sequence[str] = param((), kind="columns",
                                     help="variables in the distance and resampled (default: all "
                                          "but the weight and household roles)")
    categorical: Sequence[str] | None = param(None, kind="columns", nullable=True, allow_empty=True,
                                              help="variables treated as categories (default: key "
                                                   "variables and non-numeric columns)")
    weights: Mapping[str, float] = param({}, kind="mapping",
                                         help="per-variable weight >= 0 of the standardised "
                                              "coordinate (wts); default 1")
    probe: int = param(32, kind="int", low=1, advanced=True,
                       help="ball members read by the bounded k-NN query (speed only)")
    max_groups: int = param(4096, kind="int", low=0, advanced=True,
                            help="search per categorical combination up to this many combinations "
                                 "(speed only)")
    chunk_size: int = param(65_536, kind="int", low=1, unit="records", advanced=True,
                            help="records queried at a time (memory only)")
    workers: int = param(1, kind="int", low=-1, advanced=True,
                         help="threads of the KD-tree queries, -1 = all cores (speed only)")

    #: keys of the flat form of earlier specs (the neighbourhood's settings beside the step's own)
    FLAT_KEYS: ClassVar[tuple[str, ...]] = ("eps", "eps_column", "min_neighbours", "no_neighbour", "k")

    def __post_init__(self) -> None:
        check_params(self)
        owner = type(self).__name__
        for name, w in self.weights.items():
            check_float(owner, f"weights[{name!r}]", w, low=0.0)
        object.__setattr__(self, "weights", {str(k): float(v) for k, v in self.weights.items()})
        if self.workers == 0:
            raise param_error(owner, "workers", "an int >= 1 or -1 (all cores)", self.workers)

    @classmethod
    def spec_form_problem(cls, params: dict) -> str | None:
        """Why a spec table of this step is in the flat form of earlier specs (a neighbourhood
        name in ``neighbourhood``, ``eps``, ``k`` ... beside it), with the table to write
        instead; None when it is not. The spec reader refuses such a table with this one line."""
        return flat_form_problem(params, "neighbourhood", cls.FLAT_KEYS, "radius")

    @property
    def _eps_column(self) -> str | None:
        return getattr(self.neighbourhood, "eps_column", None)

    # ------------------------------------------------------------------ set-up
    def _variables(self, md: Microdata) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
        cols = md.columns
        eps_column = self._eps_column
        skip = {md.weight, md.household, eps_column} - {None}
        variables = self.variables or tuple(c for c in cols if c not in skip)
        for v in variables:
            if v not in cols:
                raise InputError(f"neighbours: variable {v!r} does not exist; {close_names(v, cols)}")
        if eps_column is not None:
            if eps_column not in cols:
                raise InputError(f"neighbours: eps_column {eps_column!r} does not exist; "
                                 f"{close_names(eps_column, cols)}")
            if eps_column in variables:
                raise InputError(f"neighbours: eps_column {eps_column!r} cannot also be a "
                                 "resampled variable; take it out of 'variables'.")
        for name in self.weights:
            if name not in variables:
                where = "is not one of the resampled variables" if name in cols else "does not exist"
                raise InputError(f"neighbours: weights name column {name!r}, which {where}; "
                                 f"{close_names(name, variables)}")
        frame = md.frame
        if self.categorical is None:
            cat = tuple(v for v in variables if v in md.key_vars
                        or not pd.api.types.is_numeric_dtype(frame[v])
                        or pd.api.types.is_bool_dtype(frame[v]))
        else:
            for v in self.categorical:
                if v not in variables:
                    raise InputError(f"neighbours: categorical column {v!r} is not one of the "
                                     f"resampled variables; {close_names(v, variables)}")
            cat = tuple(self.categorical)
        cont = tuple(v for v in variables if v not in cat)
        for v in cont:
            if not pd.api.types.is_numeric_dtype(frame[v]) or pd.api.types.is_bool_dtype(frame[v]):
                raise InputError(f"neighbours: column {v!r} is not numeric; list it in 'categorical'.")
        return tuple(variables), cont, cat

    def _radius(self, md: Microdata, x: np.ndarray, tree) -> np.ndarray:
        nb: Radius = self.neighbourhood
        n = md.n_records
        radius = np.full(n, np.inf if nb.eps is None else float(nb.eps))
        if nb.eps_column is not None:
            col = pd.to_numeric(md.frame[nb.eps_column], errors="coerce").to_numpy(np.float64,
                                                                                    na_value=np.nan)
            bad = np.flatnonzero(~(col > 0) | ~np.isfinite(col))
            if bad.size:
                raise InputError(f"neighbours: eps_column {nb.eps_column!r} must hold finite numbers "
                                 f"> 0; {bad.size} records do not (first row {md.frame.index[bad[0]]!r}).")
            radius = np.minimum(radius, col) if nb.eps is not None else col
        if nb.min_neighbours is not None:
            m = min(nb.min_neighbours, n - 1)
            dm = np.empty(n)
            for s in range(0, n, self.chunk_size):  # eps_i = max(eps, d_m(i))  (section 8)
                rows = np.arange(s, min(n, s + self.chunk_size))
                _, d = knn_search(tree(), x[rows], rows, m, self.workers)
                dm[rows] = d[:, -1]
            radius = dm if (nb.eps is None and nb.eps_column is None) else np.maximum(radius, dm)
        return radius

    # ------------------------------------------------------------------ apply
    def apply(self, microdata: Microdata, *, rng: Any = None) -> NeighbourResult:
        variables, cont, cat = self._variables(microdata)
        n, p = microdata.n_records, len(variables)
        if n < 2:
            raise InputError("neighbours: needs at least 2 records (a record is never its own neighbour).")
        ss, record = seed_sequence(rng)
        select_ss, draw_ss = ss.spawn(2)
        frame = microdata.frame
        metric = MixedMetric.fit(frame, cont, cat, self.weights)
        notes = [f"{v!r} takes no part in the distance: {why}" for v, why in metric.excluded.items()]
        if metric.n_dims == 0:
            raise InputError("neighbours: every variable is constant or has weight 0; there is no "
                             "distance to find neighbours by.")
        x = metric.transform(frame)
        trees: dict[str, cKDTree] = {}

        def full_tree() -> cKDTree:  # built only when a k-NN query needs it
            if "full" not in trees:
                trees["full"] = cKDTree(x)
            return trees["full"]

        # which records are modified: floor(n q) at random, or each with probability q
        gsel = np.random.default_rng(select_ss)
        if self.selection == "exact":
            sel = np.sort(gsel.choice(n, size=int(math.floor(n * self.q)), replace=False))
        else:
            sel = np.flatnonzero(gsel.random(n) < self.q)
        u = np.random.default_rng(draw_ss).random((sel.size, p))  # one uniform per (i, j)

        nb = self.neighbourhood
        k = min(nb.k, n - 1)
        src = np.full((sel.size, p), -1, dtype=np.int64)
        count = np.zeros(sel.size, dtype=np.int64)
        used_radius = np.zeros(sel.size)
        fallback = np.zeros(sel.size, dtype=bool)
        path = "knn"
        if isinstance(nb, Knn):
            for s in range(0, sel.size, self.chunk_size):
                part = slice(s, min(sel.size, s + self.chunk_size))
                rows = sel[part]
                nbr, d = knn_search(full_tree(), x[rows], rows, k, self.workers)
                src[part] = nbr[np.arange(rows.size)[:, None], (u[part] * k).astype(np.int64)]
                count[part], used_radius[part] = k, d[:, -1]
        else:
            radius = self._radius(microdata, x, full_tree)
            used_radius = radius[sel]
            radius = radius * (1 + 1e-10)  # a boundary point counts in whichever way d is rounded
            comb, first = metric.combinations(frame)
            if first.size <= self.max_groups:
                path = "grouped"
                grouped_ball_draws(x, metric.n_continuous, comb, first, sel, radius, u, src, count,
                                    self.probe, self.chunk_size, self.workers)
            else:
                path = "tree"
                for s in range(0, sel.size, self.chunk_size):
                    part = slice(s, min(sel.size, s + self.chunk_size))
                    rows = sel[part]
                    offsets, members = ball_search(full_tree(), x[rows], rows, radius[rows], self.probe,
                                             self.workers)
                    src[part], count[part] = draw_members(offsets, members, u[part])
            lonely = np.flatnonzero(count == 0)
            if lonely.size and nb.no_neighbour == "knn":
                for s in range(0, lonely.size, self.chunk_size):
                    t = lonely[s:s + self.chunk_size]
                    nbr, d = knn_search(full_tree(), x[sel[t]], sel[t], k, self.workers)
                    src[t] = nbr[np.arange(t.size)[:, None], (u[t] * k).astype(np.int64)]
                    count[t], used_radius[t], fallback[t] = k, d[:, -1], True
        notes.append(f"neighbour search: {path}"
                     + (f" ({first.size} categorical combinations)" if path == "grouped" else ""))

        if isinstance(nb, Radius) and nb.no_neighbour == "suppress" and sel.size \
                and not count.any():
            ds = distance_summary(x)
            d1 = ds.get("d1", {})
            raise InputError(
                f"neighbours: none of the {sel.size} selected records has a neighbour within "
                f"eps = {nb.eps}; every one would be suppressed. Distances to the nearest other "
                f"record: median {d1.get('median', float('nan')):.4g}, 90% quantile "
                f"{d1.get('q90', float('nan')):.4g}; try eps = {d1.get('q90', float('nan')):.3g} "
                f"(gives 90% of records a neighbour), lower the weights of categorical variables, "
                f"or use no_neighbour = 'knn'.")

        return self._release(microdata, variables, cat, metric, sel, src, count, used_radius,
                             fallback, notes, record)

    def _release(self, md: Microdata, variables, cat, metric, sel, src, count, used_radius,
                 fallback, notes, record) -> NeighbourResult:
        n, p = md.n_records, len(variables)
        frame = md.frame
        source = np.tile(np.arange(n, dtype=np.int64)[:, None], (1, p))
        source[sel] = src
        suppressed = np.zeros(n, dtype=bool)
        suppressed[sel] = (src < 0).all(axis=1) if p else False
        selected = np.zeros(n, dtype=bool)
        selected[sel] = True
        n_nb = np.zeros(n, dtype=np.int64)
        n_nb[sel] = count
        rad = np.zeros(n)
        rad[sel] = used_radius
        fb = np.zeros(n, dtype=bool)
        fb[sel] = fallback

        key_codes, columns = {}, {}
        take = np.where(source < 0, 0, source)
        for j, v in enumerate(variables):
            if v in md.key_vars:
                codes = md.codes(v)[take[:, j]]
                codes[suppressed] = -1
                key_codes[v] = codes
                continue
            col = frame[v].take(take[:, j])
            col.index = frame.index
            if suppressed.any():
                if pd.api.types.is_integer_dtype(col.dtype) and not isinstance(col.dtype, pd.CategoricalDtype):
                    col = col.astype("Int64")
                elif pd.api.types.is_bool_dtype(col.dtype):
                    col = col.astype("boolean")
                col = col.mask(suppressed)
            columns[v] = col
        out = md.with_codes(key_codes) if key_codes else md
        out = out.with_columns(columns) if columns else out

        guarantees = check_neighbours(frame, out.frame, variables, cat, self.weights, source,
                                      selected, suppressed, rad, fb, knn=isinstance(self.neighbourhood, Knn),
                                      k=min(self.neighbourhood.k, n - 1),
                                      expected_selected=(int(math.floor(n * self.q))
                                                         if self.selection == "exact" else None))
        modified = selected & ~suppressed
        changed = np.zeros(n, dtype=bool)
        for v in variables:
            a, b = frame[v], out.frame[v]
            changed |= ~values_equal(a, b)
        sizes = count[count > 0] if count.size else count
        summary = {
            "n_records": n, "variables": list(variables), "categorical": list(cat),
            "distance_dims": metric.n_dims,
            "records_selected": int(selected.sum()), "records_resampled": int(modified.sum()),
            "records_suppressed": int(suppressed.sum()), "suppressed_share": float(suppressed.mean()),
            "records_knn_fallback": int(fb.sum()),
            "records_changed": int(changed.sum()),
            "values_changed_share": float(np.mean([(~values_equal(frame[v], out.frame[v])).mean()
                                                   for v in variables])) if variables else 0.0,
            "neighbours_mean": float(sizes.mean()) if sizes.size else 0.0,
            "neighbours_median": float(np.median(sizes)) if sizes.size else 0.0,
            "neighbours_min": int(sizes.min()) if sizes.size else 0,
            "notes": notes,
        }
        params = {"neighbourhood": variant_value(self.neighbourhood), "q": self.q,
                  "selection": self.selection,
                  "variables": list(variables), "categorical": list(cat), "weights": dict(self.weights)}
        return NeighbourResult("neighbours", out, params, summary, tuple(guarantees), record,
                               source=source, selected=selected, suppressed=suppressed,
                               fallback=fb, n_neighbours=n_nb, radius=rad,
                               variables=tuple(variables), metric=metric)


