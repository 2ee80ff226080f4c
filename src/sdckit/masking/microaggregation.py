"""Microaggregation: replace each record's values by the mean (or median) of a group of at
least k similar records, so that every released combination is shared by k or more records.

MDAV (maximum distance to average vector) for several variables at once, the optimal
univariate method of Hansen & Mukherjee, and a partitioned MDAV for millions of records.
All work on standardised variables and give groups of k..2k-1 records, within strata.
The algorithms on arrays are in :mod:`sdckit.masking.mdav_kernels`; this module holds the method on
microdata, its independent check and the release step.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .._random import seed_sequence
from .._validation import check_choice, check_int, param_error
from ..errors import InputError
from ..microdata import Microdata
from ..params import check_params, flat_form_problem, param, variant_value
from ..registry import register_step
from ..result import Guarantee
from ._numeric import (
    ContinuousResult,
    check_numeric,
    moments_summary,
    numeric_names,
    select_numeric,
    standardise,
    strata_rows,
)
from .ma_clustering import CLUSTER_METHODS, RANDOM_METHODS, ROBUST_PCA_METHODS, clustering_labels
from .ma_methods import SORTED_METHODS, rmd_labels, robust_distances, sorted_labels

# the algorithms on arrays (MDAV with its k-d tree, the reference and partitioned MDAV, the
# optimal univariate partition, group SSE and aggregation) live in mdav_kernels; re-exported here
from .mdav_kernels import (  # noqa: F401
    aggregate_groups,
    check_k,
    group_sse,
    mdav,
    mdav_partitioned,
    mdav_reference,
    optimal_univariate,
)
from .mdav_kernels import mdav_kernel as _mdav


def _variable_blocks(p: int, variables_per_group: int | None, method: str) -> list[list[int]]:
    if method in ("univariate", "onedims"):
        return [[j] for j in range(p)]
    size = variables_per_group or p
    return [list(range(i, min(i + size, p))) for i in range(0, p, size)]


def _group(Z: np.ndarray, k: int, method: str, block: int, X: np.ndarray | None = None,
           rng: np.random.Generator | None = None, n_clusters: int = 8) -> np.ndarray:
    if method in CLUSTER_METHODS + ROBUST_PCA_METHODS:       # on the values in their own units
        Xv = Z if X is None else X
        if method in CLUSTER_METHODS and Xv.shape[0] <= n_clusters:
            raise InputError(f"microaggregation: {method} clusters a stratum of {Xv.shape[0]} records into "
                             f"n_clusters = {n_clusters}; CLARA needs more records than clusters: lower "
                             "n_clusters or merge strata.")
        return clustering_labels(Xv, k, method, n_clusters=n_clusters, rng=rng)
    if method in SORTED_METHODS:
        return sorted_labels(Z if X is None else X, k, method)     # orders on the values themselves
    if method == "rmd":
        Xv = Z if X is None else X
        return rmd_labels(Xv, k, robust_distances(Xv, np.random.default_rng(rng)))
    if method == "univariate":
        return optimal_univariate(Z[:, 0], k)
    if method == "mdav_partitioned":
        return mdav_partitioned(Z, k, block)
    return _mdav(np.ascontiguousarray(Z), k)


def microaggregate_array(X: np.ndarray, k: int, *, variables_per_group: int | None = None,
                         method: str = "mdav", aggregate: str = "mean", strata: np.ndarray | None = None,
                         missing: str = "refuse", block: int = 50_000, names: Sequence[str] | None = None,
                         rng: np.random.Generator | None = None,
                         n_clusters: int = 8) -> tuple[np.ndarray, list[np.ndarray]]:
    """Microaggregate the columns of ``X`` on standardised values; returns (masked X, labels).

    Parameters
    ----------
    X : ndarray (n, p)
        Continuous values in their own units.
    k : int >= 2
        Minimum group size; every group has k..2k-1 records.
    variables_per_group : int, optional
        Microaggregate the variables this many at a time (consecutive columns; e.g. 4 as in
        Sebé et al.'s Table 5.2), each block with its own groups; default: all at once.
        Ignored by ``method="univariate"`` (each variable on its own).
    method : str
        One of ``METHODS``. MDAV; MDAV within principal-axis cells of at most ``block``
        records (millions of records); the optimal univariate method of Hansen & Mukherjee,
        per variable; and sdcMicro's other methods (:mod:`sdckit.masking.ma_methods`): groups
        of k consecutive records in file order (``simple``), in the order of the block's first
        variable (``single``), of each variable on its own (``onedims``), of the first principal
        component (``pca``); robust Mahalanobis distance (``rmd``, random: ``rng``); CLARA
        clusters each in its own order (``clustpca``, ``clustpppca``, ``clustmcdpca``,
        ``influence``) and robust first components (``pppca``, ``mcdpca``), in
        :mod:`sdckit.masking.ma_clustering`.
    rng : Generator, optional
        ``rmd``, ``mcdpca``, ``clustmcdpca`` only: draws the random subsets of the MCD estimate.
    n_clusters : int
        Clusters of the CLARA methods (sdcMicro's ``nc``).
    aggregate : {"mean", "median"}
        The value given to a group's members (in original units).
    strata : ndarray of int, optional
        Stratum code per record: groups are formed within strata (each stratum needs k records).
    missing : {"refuse", "separate"}
        "refuse": NaN is an error (counted, with where). "separate": within a block, records
        are grouped with records of the same missingness pattern, on the variables they have;
        NaN stays NaN; a record missing all the block's variables is left as it is (label -1).
        A pattern with fewer than k records is an error.
    block : int
        Largest cell of ``mdav_partitioned``.
    names : list of str, optional
        Column names for messages.

    Returns
    -------
    X_masked : ndarray (n, p)
        A new array; the input is not modified.
    labels : list of ndarray of int64
        Group labels per variable block (in ``_variable_blocks`` order), -1 for a record left as is.
    """
    owner = "microaggregate_array"
    check_choice(owner, "method", method, METHODS)
    check_choice(owner, "aggregate", aggregate, ("mean", "median"))
    check_choice(owner, "missing", missing, ("refuse", "separate"))
    if variables_per_group is not None:
        check_int(owner, "variables_per_group", variables_per_group, min_value=1)
    X = check_numeric(X, names, where=owner, allow_nan=(missing == "separate"))
    n, p = X.shape
    k = check_k(k, n, owner)
    Z, _, _ = standardise(X, names, where=owner)
    strata_list = [np.arange(n)] if strata is None else strata_rows(np.asarray(strata))
    out = X.copy()
    all_labels = []
    for cols in _variable_blocks(p, variables_per_group, method):
        labels = np.full(n, -1, dtype=np.int64)
        offset = 0
        nan = np.isnan(Z[:, cols])
        pattern = (nan * (1 << np.arange(len(cols)))).sum(axis=1) if nan.any() else np.zeros(n, dtype=np.int64)
        for rows_s in strata_list:
            for pat in np.unique(pattern[rows_s]):
                rows = rows_s[pattern[rows_s] == pat]
                have = [c for i, c in enumerate(cols) if not (pat >> i) & 1]
                if not have:
                    continue                       # nothing observed: nothing to aggregate
                if rows.size < k:
                    what = "stratum" if pat == 0 else f"group of records missing {_nan_names(cols, pat, names)}"
                    raise InputError(f"{owner}: a {what} has {rows.size} records, fewer than k = {k}; "
                                     "merge strata, impute, or lower k.")
                lab = _group(Z[np.ix_(rows, have)], k, method, block, X[np.ix_(rows, have)], rng, n_clusters)
                labels[rows] = lab + offset
                offset += int(lab.max()) + 1
        out[:, cols] = aggregate_groups(X[:, cols], labels, aggregate)
        all_labels.append(labels)
    return out, all_labels


def _nan_names(cols: list[int], pattern: int, names: Sequence[str] | None) -> str:
    nm = numeric_names(names, max(cols) + 1)
    return ", ".join(repr(nm[c]) for i, c in enumerate(cols) if (pattern >> i) & 1)


METHODS = ("mdav", "mdav_partitioned", "univariate") + SORTED_METHODS + ("rmd",) + CLUSTER_METHODS \
    + ROBUST_PCA_METHODS


def _size_counts(labels_list: Sequence[np.ndarray]) -> dict[int, int]:
    """How many groups have each size, over all variable blocks (public: no membership)."""
    counts: dict[int, int] = {}
    for lab in labels_list:
        sizes = np.bincount(lab[lab >= 0])
        for size, number in enumerate(np.bincount(sizes[sizes > 0])):
            if number:
                counts[size] = counts.get(size, 0) + int(number)
    return counts


def check_microaggregation(X: np.ndarray, out: np.ndarray, labels_list: Sequence[np.ndarray],
                           blocks: Sequence[Sequence[int]], k: int, how: str) -> dict:
    """Independent check of a microaggregation with pandas group-bys (not the bincount code).

    Returns the smallest and largest group, whether every group has k..2k-1 records, and
    whether every released value equals its group's mean (median) of the original values
    (relative tolerance 1e-9) for every group and variable; records with label -1 must be
    unchanged.
    """
    lo, hi, sizes_ok, values_ok = None, None, True, True
    for labels, cols in zip(labels_list, blocks):
        grouped = labels >= 0
        values_ok &= bool(np.array_equal(out[~grouped][:, cols], X[~grouped][:, cols], equal_nan=True))
        if not grouped.any():
            continue
        sizes = pd.Series(labels[grouped]).value_counts()
        lo = int(sizes.min()) if lo is None else min(lo, int(sizes.min()))
        hi = int(sizes.max()) if hi is None else max(hi, int(sizes.max()))
        sizes_ok &= bool(sizes.min() >= k and sizes.max() <= 2 * k - 1)
        frame = pd.DataFrame(X[grouped][:, cols])
        ref = frame.groupby(labels[grouped]).transform(how).to_numpy()
        got = out[grouped][:, cols]
        scale = np.nanmax(np.abs(X[:, cols]), axis=0, initial=0.0) + 1e-300
        close = np.abs(got - ref) <= 1e-9 * scale
        values_ok &= bool((close | (np.isnan(got) & np.isnan(ref))).all())
    return {"min_group": lo, "max_group": hi, "sizes_ok": sizes_ok, "values_ok": values_ok}


@dataclass(frozen=True)
class MicroaggregationResult(ContinuousResult):
    """Microaggregation result; ``labels`` holds the group labels of each variable block
    (internal: group membership is not published)."""

    labels: tuple = ()


# ------------------------------------------------------------------ the algorithms (variant types)
@dataclass(frozen=True)
class Mdav:
    """MDAV on the standardised variables (Domingo-Ferrer & Mateo-Sanz 2002): the record
    farthest from the centroid and its k - 1 nearest neighbours, then the record farthest from
    that one, repeatedly.
    """

    variant_name: ClassVar[str] = "mdav"

    def __post_init__(self) -> None:
        check_params(self)


@dataclass(frozen=True)
class MdavPartitioned:
    """MDAV within principal-axis cells of at most ``block`` records, for millions of records.

    Parameters
    ----------
    block : int >= 2k
        Largest cell; the step checks it against its k.
    """

    variant_name: ClassVar[str] = "mdav_partitioned"

    block: int = param(50_000, kind="int", low=4, unit="records", advanced=True,
                       help="largest cell of the partitioned MDAV (at least 2k)")

    def __post_init__(self) -> None:
        check_params(self)


@dataclass(frozen=True)
class Univariate:
    """The optimal univariate partition (Hansen & Mukherjee 2003), each variable on its own."""

    variant_name: ClassVar[str] = "univariate"

    def __post_init__(self) -> None:
        check_params(self)


@dataclass(frozen=True)
class Simple:
    """sdcMicro's ``simple``: groups of k consecutive records in file order."""

    variant_name: ClassVar[str] = "simple"

    def __post_init__(self) -> None:
        check_params(self)


@dataclass(frozen=True)
class Single:
    """sdcMicro's ``single``: groups of k consecutive records in ascending order of the first
    variable (sdcMicro's ``varsort`` is the variable listed first)."""

    variant_name: ClassVar[str] = "single"

    def __post_init__(self) -> None:
        check_params(self)


@dataclass(frozen=True)
class Onedims:
    """sdcMicro's ``onedims`` (individual ranking): groups of k consecutive records in the
    order of each variable on its own."""

    variant_name: ClassVar[str] = "onedims"

    def __post_init__(self) -> None:
        check_params(self)


@dataclass(frozen=True)
class Pca:
    """sdcMicro's ``pca``: groups of k consecutive records in the order of the first principal
    component of the standardised variables."""

    variant_name: ClassVar[str] = "pca"

    def __post_init__(self) -> None:
        check_params(self)


@dataclass(frozen=True)
class Rmd:
    """sdcMicro's ``rmd``: the record farthest from the robust (MCD) centre by Mahalanobis
    distance with its k - 1 nearest neighbours, repeatedly; random through the MCD's subsets
    (the seed is recorded)."""

    variant_name: ClassVar[str] = "rmd"

    def __post_init__(self) -> None:
        check_params(self)


def _n_clusters():
    return param(8, kind="int", low=1, unit="clusters", symbol="nc",
                 help="clusters CLARA forms before ordering (sdcMicro's nc)")


@dataclass(frozen=True)
class Clustpca:
    """sdcMicro's ``clustpca``: CLARA clusters on the values, each cluster in the order of its
    first principal component (standardised within the cluster), the clusters one after the
    other; groups of k consecutive records in that sequence. Deterministic (CLARA's own
    generator), as sdcMicro's.

    Parameters
    ----------
    n_clusters : int
        Clusters (sdcMicro's ``nc``).
    """

    variant_name: ClassVar[str] = "clustpca"

    n_clusters: int = _n_clusters()

    def __post_init__(self) -> None:
        check_params(self)


@dataclass(frozen=True)
class Clustpppca:
    """sdcMicro's ``clustpppca``: as ``clustpca``, each cluster in the order of its first robust
    projection-pursuit component (MAD scale, candidates the centred records).

    Parameters
    ----------
    n_clusters : int
        Clusters (sdcMicro's ``nc``).
    """

    variant_name: ClassVar[str] = "clustpppca"

    n_clusters: int = _n_clusters()

    def __post_init__(self) -> None:
        check_params(self)


@dataclass(frozen=True)
class Clustmcdpca:
    """sdcMicro's ``clustmcdpca``: as ``clustpca``, each cluster in the order of the first
    principal component of its MCD covariance; random through the MCD's subsets (the seed is
    recorded).

    Parameters
    ----------
    n_clusters : int
        Clusters (sdcMicro's ``nc``).
    """

    variant_name: ClassVar[str] = "clustmcdpca"

    n_clusters: int = _n_clusters()

    def __post_init__(self) -> None:
        check_params(self)


@dataclass(frozen=True)
class Influence:
    """sdcMicro's ``influence``: CLARA clusters, each cluster in the order of the variable on
    which its medoid has its largest value.

    Parameters
    ----------
    n_clusters : int
        Clusters (sdcMicro's ``nc``).
    """

    variant_name: ClassVar[str] = "influence"

    n_clusters: int = _n_clusters()

    def __post_init__(self) -> None:
        check_params(self)


@dataclass(frozen=True)
class Pppca:
    """sdcMicro's ``pppca``: groups of k consecutive records in the order of the first robust
    projection-pursuit component of the whole file."""

    variant_name: ClassVar[str] = "pppca"

    def __post_init__(self) -> None:
        check_params(self)


@dataclass(frozen=True)
class Mcdpca:
    """sdcMicro's ``mcdpca``: groups of k consecutive records in the order of the first
    principal component of the file's MCD covariance; random through the MCD's subsets."""

    variant_name: ClassVar[str] = "mcdpca"

    def __post_init__(self) -> None:
        check_params(self)


#: the algorithms ``Microaggregation.algorithm`` takes (one declared type each, in ``METHODS`` order)
MICROAGGREGATION_ALGORITHMS = (Mdav, MdavPartitioned, Univariate, Simple, Single, Onedims, Pca, Rmd,
                               Clustpca, Clustpppca, Clustmcdpca, Influence, Pppca, Mcdpca)


@register_step("microaggregation", engines=("memory", "dask"))
@dataclass(frozen=True)
class Microaggregation:
    """Microaggregation of numeric variables with minimum group size k.

    Parameters
    ----------
    k : int >= 2
        Minimum group size; every group has k to 2k - 1 records.
    variables : list of str, optional
        Numeric variables (default: the numeric_vars role).
    algorithm : Mdav, MdavPartitioned, Univariate, Simple, Single, Onedims, Pca, Rmd, Clustpca, Clustpppca, \
Clustmcdpca, Influence, Pppca or Mcdpca
        (``method`` names the step in a release spec, hence ``algorithm``.) A declared type
        with its own settings; in a spec an inline table, ``algorithm = { type =
        "mdav_partitioned", block = 10000 }`` or ``algorithm = { type = "pca" }``.
        MDAV on the standardised variables (``Mdav()``, the default; all at once or
        ``variables_per_group`` at a time); MDAV within principal-axis cells of at most
        ``block`` records (``MdavPartitioned(block=50000)``), for millions of records; the
        optimal univariate method (Hansen & Mukherjee) per variable. The other
        methods of sdcMicro's ``microaggregation(method = ...)``, with its definitions: groups
        of k consecutive records in file order (``simple``), in ascending order of the first
        variable (``single``; sdcMicro's ``varsort`` is the variable listed first), of each
        variable on its own (``onedims``, individual ranking), of the first principal component
        of the standardised variables (``pca``); and robust Mahalanobis distance (``rmd``:
        the record farthest from the robust (MCD) centre with its k - 1 nearest neighbours,
        repeatedly; random through the MCD's subsets); CLARA clusters on the values, the
        clusters one after the other, each in its own order (``clustpca``: first principal
        component; ``clustpppca``: first projection-pursuit component; ``clustmcdpca``: first
        component of the MCD covariance; ``influence``: the medoid's largest variable), each
        with ``n_clusters`` (default 8, sdcMicro's ``nc``); and the first robust component of
        the whole file (``pppca``, ``mcdpca``). ``mcdpca`` and ``clustmcdpca`` are random.
    variables_per_group : int, optional
        Microaggregate the variables this many at a time (e.g. 4, Table 5.2 of the post-masking chapter after Sebé et al. 2002).
    aggregate : {"mean", "median"}
        Value given to every member of a group.
    missing : {"refuse", "separate"}
        Records with missing values: refused (default), or grouped separately by their
        missingness pattern on the variables they have (NaN stays NaN).

    Notes
    -----
    Groups are formed within strata (the Microdata's strata role); a stratum with fewer
    than k records is an error. Guarantees, checked independently on the output: every
    group has between k and 2k - 1 records, and every released value equals its group's
    aggregate. The summary reports SSE and SSE/SST on the standardised variables.

    References
    ----------
    Domingo-Ferrer, J. and Mateo-Sanz, J. M. (2002). Practical data-oriented microaggregation
    for statistical disclosure control. *IEEE TKDE* 14(1), 189-201.
    Hansen, S. L. and Mukherjee, S. (2003). A polynomial algorithm for optimal univariate
    microaggregation. *IEEE TKDE* 15(4), 1043-1044.
    """

    k: int = param(3, kind="int", low=2, unit="records", symbol="k", grid=(3, 5, 10),
                   help="minimum group size; every group has k to 2k - 1 records")
    variables: Sequence[str] | None = param(None, kind="columns", nullable=True,
                                            help="numeric variables (default: the numeric_vars role)")
    algorithm: Any = param(Mdav(), kind="variant", variants=MICROAGGREGATION_ALGORITHMS, label="algorithm",
                           help="MDAV, MDAV within principal-axis cells, optimal univariate, or sdcMicro's "
                                "simple, single, onedims, pca, rmd, clustpca, clustpppca, clustmcdpca, "
                                "influence, pppca, mcdpca, with that algorithm's own settings")
    variables_per_group: int | None = param(None, kind="int", low=1, nullable=True, advanced=True,
                                            help="microaggregate the variables this many at a time")
    aggregate: str = param("mean", kind="choice", choices=("mean", "median"),
                           help="value given to every member of a group")
    missing: str = param("refuse", kind="choice", choices=("refuse", "separate"),
                         help="records with missing values: refused, or grouped by missingness pattern")

    #: keys of the flat form of earlier specs (the algorithm's settings beside the step's own)
    FLAT_KEYS: ClassVar[tuple[str, ...]] = ("block",)

    def __post_init__(self) -> None:
        check_params(self)
        if isinstance(self.algorithm, MdavPartitioned) and self.algorithm.block < 2 * self.k:  # needs k
            raise param_error("Microaggregation", "algorithm.block", f"an int >= {2 * self.k} (2k)",
                              self.algorithm.block)

    @classmethod
    def spec_form_problem(cls, params: dict) -> str | None:
        """Why a spec table of this step is in the flat form of earlier specs (an algorithm name
        in ``algorithm``, ``block`` beside it), with the table to write instead; None when it
        is not. The spec reader refuses such a table with this one line."""
        return flat_form_problem(params, "algorithm", cls.FLAT_KEYS, "mdav")

    @property
    def cell_size(self) -> int:
        """Largest cell of the partitioned MDAV: ``algorithm.block``, or its default when the
        algorithm is plain MDAV (which the Dask engine runs partitioned)."""
        a = self.algorithm
        return a.block if isinstance(a, MdavPartitioned) else MdavPartitioned().block

    def apply(self, microdata: Microdata, *, rng=None) -> MicroaggregationResult:
        where = "microaggregation"
        names, X, strata = select_numeric(microdata, self.variables, where=where,
                                          allow_nan=(self.missing == "separate"))
        if self.k > X.shape[0]:
            raise InputError(f"{where}: k = {self.k} is larger than the number of records ({X.shape[0]}).")
        method = self.algorithm.variant_name
        gen, record = None, None
        if method in ("rmd",) + RANDOM_METHODS:       # the random methods: their seed is recorded
            ss, record = seed_sequence(rng)
            gen = np.random.default_rng(ss)
        out, labels = microaggregate_array(X, self.k, variables_per_group=self.variables_per_group,
                                           method=method, aggregate=self.aggregate, strata=strata,
                                           missing=self.missing, block=self.cell_size, names=names, rng=gen,
                                           n_clusters=getattr(self.algorithm, "n_clusters", 8))
        blocks = _variable_blocks(len(names), self.variables_per_group, method)
        Z, _, _ = standardise(X, names, where=where)
        sse = sst = 0.0
        for lab, cols in zip(labels, blocks):
            s, t = group_sse(Z[:, cols], lab)
            sse, sst = sse + s, sst + t
        chk = check_microaggregation(X, out, labels, blocks, self.k, self.aggregate)
        released = microdata.with_columns({v: out[:, j] for j, v in enumerate(names)})
        summary = {"variables": names, "algorithm": method, "k": self.k,
                   "variable_blocks": [[names[c] for c in cols] for cols in blocks],
                   "groups": int(sum(int(lab.max()) + 1 for lab in labels if (lab >= 0).any())),
                   "min_group": chk["min_group"], "max_group": chk["max_group"],
                   "sse": sse, "sst": sst, "sse_sst": sse / sst if sst else 0.0,
                   "group_sizes": _size_counts(labels)}
        summary.update(moments_summary(X, out, names))
        guarantees = (
            Guarantee("min_group_size", f"every group has between {self.k} and {2 * self.k - 1} records",
                      [chk["min_group"], chk["max_group"]], chk["sizes_ok"]),
            Guarantee("group_values", f"every released value equals its group's {self.aggregate}",
                      chk["values_ok"], chk["values_ok"]),
        )
        params = {"k": self.k, "variables": names, "algorithm": variant_value(self.algorithm),
                  "variables_per_group": self.variables_per_group, "aggregate": self.aggregate,
                  "missing": self.missing}
        return MicroaggregationResult(where, released, params, summary, guarantees, seed=record,
                                      labels=tuple(labels))

    # ---- the Dask engine's protocol (sdckit.registry.DaskPlan)
    def dask_plan(self, roles):
        """Scalable MDAV within blocks along the first principal axis."""
        from ..errors import SpecError
        from ..registry import DaskPlan, dask_takes_only

        dask_takes_only(self, ("variables", "k", "algorithm"))
        if not isinstance(self.algorithm, (Mdav, MdavPartitioned)):
            raise SpecError(f"algorithm: {self.algorithm.variant_name!r} orders or clusters the whole file "
                            f"at once and runs in memory only; run this step with the in-memory engine, "
                            f"or use algorithm = {{ type = \"mdav_partitioned\" }} on the Dask engine.")
        cols = tuple(self.variables or roles.get("numeric_vars", ()))
        return DaskPlan("microaggregation", cols, cols)
