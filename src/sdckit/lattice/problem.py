"""The data side of the lattice search: records compressed to patterns, class tables per node.

A node is a vector of levels, one per quasi-identifier (0 = original). Its equivalence
classes are found without touching records:

1. the records are compressed once to their distinct patterns of raw codes (with the
   sensitive value when a model needs it) and a count per pattern: the work per node grows
   with the number of distinct patterns, not with n;
2. a node's class key for a pattern is one int64, a mixed-radix sum of gathers from each
   quasi-identifier's ``(levels x n_raw)`` code map (:func:`._kernels.stage_keys`);
3. equal keys are grouped by hashing (:func:`._kernels.group`), O(rows);
4. counts roll up: a node's table is computed from the table of any cached node below it
   (a finer partition), never from the records; the smallest such table is used, and a
   *pivot* half-way down is built first when that table is still large (:meth:`Problem.table`);
   the cache holds a bounded number of table rows and drops the least recently used, and
   does not keep tables of more than half the base's rows (no cheaper a source than the base);
5. projections on groups of quasi-identifiers bound the records any node must suppress
   without counting it (:meth:`Problem.projection_suppressed_bound`).

References
----------
Kohlmayer, F., Prasser, F., Eckert, C., Kemper, A., Kuhn, K. A. (2012). Flash: efficient,
stable and optimal k-anonymity. *PASSAT/SocialCom 2012*, 708-717 (roll-up and snapshots).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import InputError
from . import _kernels as K
from .hierarchies import EncodedColumn, Hierarchy, check_hierarchy, encode

_KEY_LIMIT = 2 ** 62


@dataclass
class Table:
    """A node's equivalence classes (and, with a sensitive attribute, class x value entries).

    ``rep[e]`` is a base pattern of entry ``e`` (its raw codes give the entry's generalised
    codes at any coarser node), ``cnt[e]`` its records, ``wsum[e]`` the sum over its records
    of ``sum_j log2 f_j(raw)`` (for non-uniform entropy), ``cls[e]`` its class; ``raw[e]``
    holds the raw codes of ``rep[e]`` (column-major, so that a roll-up's pass over a column reads
    it in order).
    """

    rep: np.ndarray
    cnt: np.ndarray
    wsum: np.ndarray
    cls: np.ndarray
    class_rep: np.ndarray
    class_size: np.ndarray
    class_wsum: np.ndarray
    raw: np.ndarray | None = None

    @property
    def n_classes(self) -> int:
        return int(self.class_size.size)

    @property
    def n_rows(self) -> int:
        return int(self.rep.size)


def _check_inputs(data: pd.DataFrame, qis: list[str], sensitive: str | None,
                  population: pd.DataFrame | None) -> None:
    """The quasi-identifiers, the sensitive column and the population table against the data."""
    if not qis:
        raise InputError("give at least one quasi-identifier (--qis a,b,c).")
    missing = [q for q in qis if q not in data.columns]
    if missing:
        raise InputError(f"column {missing[0]!r} is not in the data; the columns are {list(data.columns)}.")
    if len(set(qis)) != len(qis):
        raise InputError(f"quasi-identifiers repeat: {qis}.")
    if sensitive is not None:
        if sensitive not in data.columns:
            raise InputError(f"sensitive column {sensitive!r} is not in the data.")
        if sensitive in qis:
            raise InputError(f"column {sensitive!r} cannot be both a quasi-identifier and sensitive.")
    if population is not None:
        pm = [q for q in qis if q not in population.columns]
        if pm:
            raise InputError(f"the population table has no column {pm[0]!r}; it needs every quasi-identifier.")


def _encode_columns(data: pd.DataFrame, qis: list[str], hierarchies: Mapping[str, Hierarchy],
                    population: pd.DataFrame | None) -> tuple[list[EncodedColumn], list[np.ndarray]]:
    """Each QI encoded with its checked hierarchy, and the population's raw codes in the same coding."""
    cols: list[EncodedColumn] = []
    pop_raw: list[np.ndarray] = []
    for q in qis:
        if q not in hierarchies:
            raise InputError(f"no hierarchy for quasi-identifier {q!r}.")
        h = check_hierarchy(hierarchies[q])
        enc, extra = encode(q, data[q], h, also=[population[q]] if population is not None else [])
        cols.append(enc)
        pop_raw.extend(extra)
    return cols, pop_raw


class Problem:
    """Data, quasi-identifiers and hierarchies, encoded for fast per-node class counting.

    Parameters
    ----------
    data : DataFrame
        The records.
    qis : sequence of str
        Quasi-identifiers, each with a hierarchy in ``hierarchies``.
    hierarchies : mapping
        qi -> :class:`~sdckit.masking.hierarchy.Hierarchy` (checked on entry).
    sensitive : str, optional
        The sensitive attribute (for l-diversity and t-closeness).
    sensitive_hierarchy : Hierarchy, optional
        Its hierarchy (for t-closeness with hierarchical distance).
    population : DataFrame, optional
        The population table holding the QIs (for delta-presence); the data are a subset of it.
    cache_rows : int, optional
        Budget of cached table rows for roll-up (24 bytes a row plus one byte a
        quasi-identifier, or two with more than 126 raw codes in a column); default
        ``max(3,000,000, 16 x patterns)``. Least recently used tables are dropped first. With
        a million distinct patterns the default holds about 0.6 GB; a quarter of it checked
        about 1.5 times fewer nodes per CPU second in a measured run.
    pivot_rows : int, optional
        A node whose smallest cached table below has more rows than this is rolled up through
        a pivot (see :meth:`table`); default ``max(8192, patterns // 16)``.
    """

    def __init__(self, data: pd.DataFrame, qis: Sequence[str], hierarchies: Mapping[str, Hierarchy], *,
                 sensitive: str | None = None, sensitive_hierarchy: Hierarchy | None = None,
                 population: pd.DataFrame | None = None, cache_rows: int | None = None,
                 pivot_rows: int | None = None) -> None:
        qis = list(qis)
        _check_inputs(data, qis, sensitive, population)
        self.qis = qis
        self.n = int(len(data))
        if self.n == 0:
            raise InputError("the data have no records.")
        cols, pop_raw = _encode_columns(data, qis, hierarchies, population)
        self.columns = cols
        self._index_lattice()
        w = self._record_weights()
        s = self._encode_sensitive(data, sensitive, sensitive_hierarchy)
        self._compress_patterns(w, s)
        # population patterns, appended after the data's patterns in a separate array
        self.population = None
        if population is not None:
            self._encode_population(pop_raw)
        self.cache_budget = int(cache_rows) if cache_rows is not None else max(3_000_000, 16 * self.m)
        self.pivot_rows = int(pivot_rows) if pivot_rows is not None else max(8192, self.m // 16)
        self.clear_cache()

    def _index_lattice(self) -> None:
        """Node ids (mixed radix over the levels) and the stacked code maps of every QI."""
        cols, q = self.columns, len(self.qis)
        self.heights = np.array([c.height for c in cols], dtype=np.int64)
        self.radix = self.heights + 1
        self.strides = np.ones(q, dtype=np.int64)
        for j in range(1, q):
            self.strides[j] = self.strides[j - 1] * self.radix[j - 1]
        self.n_nodes = int(np.prod([int(r) for r in self.radix], dtype=object))
        if self.n_nodes >= 2 ** 62:
            raise InputError(f"the lattice of {q} quasi-identifiers has {self.n_nodes:.3g} nodes, more "
                             "than node ids can number (2^62); use fewer quasi-identifiers or shorter hierarchies.")
        r_max = max(c.code_map.shape[1] for c in cols)
        self.cm3 = np.zeros((q, int(self.radix.max()), r_max), dtype=np.int32)
        self.ncodes = np.ones((q, int(self.radix.max())), dtype=np.int64)
        for j, c in enumerate(cols):
            self.cm3[j, :c.code_map.shape[0], :c.code_map.shape[1]] = c.code_map
            self.cm3[j, c.code_map.shape[0]:, :c.code_map.shape[1]] = c.code_map[-1]
            self.ncodes[j, :c.n_codes.size] = c.n_codes
            self.ncodes[j, c.n_codes.size:] = c.n_codes[-1]
        # one int64 key per row at every node (no staging) when the product of the largest
        # radices fits: then a node's table is one pass of :func:`._kernels.rollup`
        self._one_stage = float(np.log2(self.ncodes.max(axis=1).astype(float)).sum()) < 61.0

    def _record_weights(self) -> np.ndarray:
        """Per record, log2 f_j(raw) summed over the QIs (non-uniform entropy); keeps the raw
        frequencies in ``raw_freq``."""
        w = np.zeros(self.n)
        self.raw_freq = []
        for c in self.columns:
            f = np.bincount(c.raw, minlength=c.code_map.shape[1]).astype(float)
            self.raw_freq.append(f)
            with np.errstate(divide="ignore"):
                w += np.log2(np.maximum(f[c.raw], 1.0))
        return w

    def _encode_sensitive(self, data: pd.DataFrame, sensitive: str | None,
                          sensitive_hierarchy: Hierarchy | None) -> np.ndarray | None:
        """The sensitive attribute's codes per record (None without one), its labels and overall
        distribution."""
        self.sensitive = sensitive
        self.sens_col: EncodedColumn | None = None
        if sensitive is None:
            self.n_sens = 0
            return None
        if sensitive_hierarchy is not None:
            self.sens_col, _ = encode(sensitive, data[sensitive], check_hierarchy(sensitive_hierarchy))
            s = self.sens_col.raw.astype(np.int64)
            self.n_sens = int(self.sens_col.code_map.shape[1])
            self.sens_labels = self.sens_col.labels[0]
        else:
            codes, uniq = pd.factorize(data[sensitive].astype("string").fillna(""), sort=True)
            s = codes.astype(np.int64)
            self.n_sens = int(len(uniq))
            self.sens_labels = np.asarray(uniq, dtype=object)
        self.sens_overall = np.bincount(s, minlength=self.n_sens) / self.n
        return s

    def _compress_patterns(self, w: np.ndarray, s: np.ndarray | None) -> None:
        """Compress the records to their distinct patterns (QIs + sensitive) and build the base
        table (level 0)."""
        cols, q = self.columns, len(self.qis)
        raws = np.stack([c.raw for c in cols], axis=1).astype(np.int32)
        cnt1 = np.ones(self.n, dtype=np.int64)
        ident = np.arange(self.n, dtype=np.int32)
        level0 = np.zeros(q, dtype=np.int64)
        gid = self._dense_keys(raws, ident, level0, cnt1)
        if s is not None:
            gid = (gid.astype(np.int64) * self.n_sens + s)
        g2, first, csum, wout = K.group(gid.astype(np.int64), cnt1, w)
        # the narrowest integer type: less memory traffic in the per-node key kernel
        n_raw_max = max(c.code_map.shape[1] for c in cols)  # data and population share the codes
        width = np.int8 if n_raw_max < 127 else np.int16 if n_raw_max < 32767 else np.int32
        self.raw2d = np.ascontiguousarray(raws[first]).astype(width)
        self.sens = None if s is None else s[first].astype(np.int64)
        self.record_pattern = g2           # record -> base pattern
        self.m = int(first.size)
        base_rep = np.arange(self.m, dtype=np.int32)
        self.base = self._make_table(base_rep, csum, wout, level0)

    def _encode_population(self, pop_raw: list[np.ndarray]) -> None:
        """The population's distinct patterns and counts; every data pattern must be among them."""
        level0 = np.zeros(len(self.qis), dtype=np.int64)
        praws = np.stack(pop_raw, axis=1).astype(np.int32)
        pc = np.ones(len(praws), dtype=np.int64)
        pg = self._dense_keys(praws, np.arange(len(praws), dtype=np.int32), level0, pc)
        _, pfirst, pcsum, _ = K.group(pg.astype(np.int64), pc, np.zeros(len(praws)))
        self.population = (np.ascontiguousarray(praws[pfirst]).astype(self.raw2d.dtype), pcsum)
        # each data pattern must occur in the population
        allraw = np.concatenate([self.raw2d, self.population[0]])
        rep = np.arange(len(allraw), dtype=np.int32)
        gk = self._dense_keys(allraw, rep, level0, np.ones(len(allraw), dtype=np.int64))
        popc = np.bincount(gk[self.m:], weights=self.population[1], minlength=int(gk.max()) + 1)
        if (popc[gk[:self.m]] == 0).any():
            i = int(np.flatnonzero(popc[gk[:self.m]] == 0)[0])
            row = {qq: str(self.columns[j].labels[0][self.raw2d[i, j]]) for j, qq in enumerate(self.qis)}
            raise InputError(f"a record of the data is not in the population table: {row}; the "
                             "data must be a subset of the population for delta-presence.")

    def clear_cache(self, n_slots: int = 1024) -> None:
        """Forget the cached tables and reset the counters (used between timed runs)."""
        self.n_tables = 0       # tables built (checked nodes and pivots)
        self.n_pivots = 0       # of which pivots
        self.rows_rolled = 0    # source rows read to build them
        self._slot_of: dict[int, int] = {}
        self._slot_node = np.full(n_slots, -1, dtype=np.int64)
        self._slot_levels = np.zeros((n_slots, len(self.qis)), dtype=np.int64)
        self._slot_rows = np.full(n_slots, 2 ** 62, dtype=np.int64)
        self._slot_table: list[Table | None] = [None] * n_slots
        self._slot_tick = np.zeros(n_slots, dtype=np.int64)   # last use, for LRU eviction
        self._tick = 0
        self._cache_rows = 0
        # levels and class counts of every table built (kept after eviction; 8 bytes a level)
        self._known_levels = np.zeros((256, len(self.qis)), dtype=np.int64)
        self._known_rows = np.zeros(256, dtype=np.int64)
        self._n_known = 0

    # ------------------------------------------------------------------ nodes
    def node_id(self, levels: Sequence[int]) -> int:
        return int(np.dot(np.asarray(levels, dtype=np.int64), self.strides))

    def levels_of(self, node: int) -> np.ndarray:
        return (int(node) // self.strides) % self.radix

    @property
    def top(self) -> np.ndarray:
        return self.heights.copy()

    # ------------------------------------------------------------------ keys
    def _cmn(self, lv: np.ndarray) -> np.ndarray:
        """(q x n_raw) code maps at the node's levels."""
        return self.cm3[np.arange(len(self.qis)), np.minimum(lv, self.radix - 1)]

    def _plan(self, levels: np.ndarray, rows: int) -> list[tuple[np.ndarray, np.ndarray, int]]:
        """Split the columns into stages whose mixed-radix keys fit in int64."""
        stages, cols, mults, prod = [], [], [], 1
        limit = _KEY_LIMIT
        for j in range(len(self.qis)):
            r = int(self.columns[j].n_codes[min(int(levels[j]), self.columns[j].height)])
            if cols and prod * r > limit:
                stages.append((np.array(cols, dtype=np.int64), np.array(mults, dtype=np.int64), prod))
                cols, mults, prod = [], [], 1
                limit = _KEY_LIMIT // max(rows, 1)
            cols.append(j)
            mults.append(prod)
            prod *= r
        stages.append((np.array(cols, dtype=np.int64), np.array(mults, dtype=np.int64), prod))
        return stages

    def _dense_keys(self, raw2d: np.ndarray, rep: np.ndarray, levels: np.ndarray, cnt: np.ndarray) -> np.ndarray:
        """Group ids (0..g-1, dense) of the QI codes of ``raw2d[rep]`` at ``levels``."""
        lv = np.asarray(levels, dtype=np.int64)
        keys = np.empty(0, dtype=np.int64)
        stages = self._plan(lv, rep.size)
        zero_w = np.zeros(rep.size)
        for i, (cols, mults, prod) in enumerate(stages):
            # key = previous dense group id * (this stage's radix product) + this stage's digits
            keys = K.stage_keys(keys, np.int64(prod), raw2d, rep, self._cmn(lv), cols, mults)
            if i < len(stages) - 1:
                keys = K.group(keys, cnt, zero_w)[0].astype(np.int64)
        return K.group(keys, cnt, zero_w)[0]

    def _make_table(self, rep: np.ndarray, cnt: np.ndarray, wsum: np.ndarray, levels: np.ndarray,
                    raw: np.ndarray | None = None, raw_limit: int | None = None) -> Table:
        """Group table rows ``rep`` (with ``cnt`` records each, raw codes ``raw``, default
        ``raw2d[rep]``) into the classes of ``levels``. Without a sensitive attribute, a table of
        more than ``raw_limit`` classes gets no copy of its rows' raw codes (``raw`` None: it is
        not cached as a roll-up source, and a roll-up from it would read ``raw2d``)."""
        lv = np.asarray(levels, dtype=np.int64)
        if raw is None:
            raw = np.asfortranarray(self.raw2d[rep])  # column-major: a roll-up reads a column a pass
        if self._one_stage:
            gid, first, csum, wout = K.rollup(raw, cnt, wsum, self.cm3, lv, self.ncodes)
        else:
            stages = self._plan(lv, rep.size)
            keys = np.empty(0, dtype=np.int64)
            for i, (cols, mults, prod) in enumerate(stages):
                keys = K.stage_keys(keys, np.int64(prod), self.raw2d, rep, self._cmn(lv), cols, mults)
                if i < len(stages) - 1:
                    keys = K.group(keys, cnt, wsum)[0].astype(np.int64)
            prod = stages[-1][2] if len(stages) == 1 else None
            if prod is not None and prod <= max(4 * rep.size, 4096):
                # small key space: direct addressing instead of hashing
                gid, first, csum, wout = K.group_dense(keys, cnt, wsum, int(prod))
            else:
                gid, first, csum, wout = K.group(keys, cnt, wsum)
        if self.sens is None:
            if raw_limit is not None and csum.size > raw_limit:
                class_rep = rep[first]
                return Table(class_rep, csum, wout, np.arange(csum.size, dtype=np.int32), class_rep, csum, wout)
            raw_out, class_rep = K.take_rows(raw, rep, first, self.ncodes, lv)
            return Table(class_rep, csum, wout, np.arange(csum.size, dtype=np.int32), class_rep, csum, wout,
                         raw_out)
        class_rep = rep[first]
        k2 = gid.astype(np.int64) * self.n_sens + self.sens[rep]
        size2 = csum.size * self.n_sens
        g2, first2, c2, w2 = (K.group_dense(k2, cnt, wsum, size2) if size2 <= max(4 * rep.size, 4096)
                              else K.group(k2, cnt, wsum))
        return Table(rep[first2], c2, w2, gid[first2], class_rep, csum, wout, np.asfortranarray(raw[first2]))

    def table(self, levels: Sequence[int]) -> Table:
        """The class table of a node, rolled up from the smallest cached table below it.

        Roll-up is exact from any node below (a finer partition): the node's classes are the
        groups of the source's rows by their codes at the node. When the smallest cached
        source still has more than ``pivot_rows`` rows and lies two or more levels below, the
        table of a *pivot* half-way between them is built first (recursively, and cached):
        a pivot costs one pass over the large source, and every later node above it rolls up
        from its smaller table instead.
        """
        lv = np.ascontiguousarray(levels, dtype=np.int64)
        node = self.node_id(lv)
        slot = self._slot_of.get(node)
        if slot is not None:
            self._tick += 1
            self._slot_tick[slot] = self._tick
            return self._slot_table[slot]
        return self._build(node, lv)

    def _source(self, lv: np.ndarray) -> tuple[Table, np.ndarray]:
        s = K.best_slot(self._slot_levels, self._slot_rows, lv, self.base.n_rows)
        if s < 0:
            return self.base, np.zeros_like(lv)
        self._tick += 1
        self._slot_tick[s] = self._tick
        return self._slot_table[s], self._slot_levels[s]

    def _build(self, node: int, lv: np.ndarray) -> Table:
        src, src_lv = self._source(lv)
        diff = lv - src_lv
        total = int(diff.sum())
        if src.n_rows > self.pivot_rows and total >= 2:
            # pivot strictly between the source and the node: half of each level gap, then
            # single levels until it is half-way in total height
            mid = src_lv + diff // 2
            short = total // 2 - int((diff // 2).sum())
            for j in np.flatnonzero(diff % 2):
                if short <= 0:
                    break
                mid[j] += 1
                short -= 1
            mnode = self.node_id(mid)
            # a pivot pays only if its table is much smaller than the source: skip it when a
            # table already built above it has half the source's rows or more
            floor = K.largest_above(self._known_levels, self._known_rows, self._n_known, mid)
            if mnode not in self._slot_of and 2 * floor < src.n_rows:
                self.n_pivots += 1
                self._build(mnode, mid)
                src, src_lv = self._source(lv)
        self.n_tables += 1
        self.rows_rolled += src.n_rows
        tab = self._rollup(src, lv)
        if tab.n_rows <= self.base.n_rows // 2:
            # a table of more than half the base's rows is no cheaper a source than the base:
            # caching it would only evict smaller tables
            self._store(node, lv, tab)
        if self._n_known == self._known_rows.size:
            self._known_levels = np.concatenate([self._known_levels, np.zeros_like(self._known_levels)])
            self._known_rows = np.concatenate([self._known_rows, np.zeros_like(self._known_rows)])
        self._known_levels[self._n_known] = lv
        self._known_rows[self._n_known] = tab.n_classes
        self._n_known += 1
        return tab

    def _store(self, node: int, lv: np.ndarray, tab: Table) -> None:
        """Keep a table for roll-up: a free slot, else the least recently used one; then drop
        the least recently used tables until the cached rows fit the budget."""
        slot = int(np.argmin(self._slot_node))  # the first free slot (-1), if any
        if self._slot_node[slot] >= 0:
            slot = int(np.argmin(self._slot_tick))
        self._evict(slot)
        while self._cache_rows + tab.n_rows > self.cache_budget and self._slot_of:
            used = np.flatnonzero(self._slot_node >= 0)
            self._evict(int(used[np.argmin(self._slot_tick[used])]))
        self._tick += 1
        self._slot_tick[slot] = self._tick
        self._slot_node[slot] = node
        self._slot_levels[slot] = lv
        self._slot_rows[slot] = tab.n_rows
        self._slot_table[slot] = tab
        self._slot_of[node] = slot
        self._cache_rows += tab.n_rows

    def _evict(self, slot: int) -> None:
        old = int(self._slot_node[slot])
        if old < 0:
            return
        self._slot_of.pop(old, None)
        self._cache_rows -= int(self._slot_rows[slot])
        self._slot_node[slot] = -1
        self._slot_rows[slot] = 2 ** 62
        self._slot_table[slot] = None

    def _rollup(self, src: Table, lv: np.ndarray) -> Table:
        return self._make_table(src.rep, src.cnt, src.wsum, lv, src.raw, raw_limit=self.base.n_rows // 2)

    # ------------------------------------------------------------------ projections
    def projection_groups(self, max_nodes: int = 1024) -> list[list[int]]:
        """Groups of quasi-identifiers for :meth:`projection_failing`: consecutive runs whose
        sub-lattice has at most ``max_nodes`` nodes, in the given order and in reverse."""
        out: list[list[int]] = []
        q = len(self.qis)
        if q < 2:
            return out
        for order in (list(range(q)), list(range(q - 1, -1, -1))):
            group, size = [], 1
            for j in order:
                r = int(self.radix[j])
                if group and size * r > max_nodes:
                    out.append(group)
                    group, size = [], 1
                group.append(j)
                size *= r
            out.append(group)
        uniq = []
        for g in out:
            if len(g) >= 2 and sorted(g) not in [sorted(u) for u in uniq]:
                uniq.append(g)
        return uniq

    def projection_suppressed(self, dims: Sequence[int], k: int) -> np.ndarray:
        """Records in classes of fewer than ``k`` records, for every node of the sub-lattice
        of ``dims`` (the records grouped by those quasi-identifiers only), indexed by the
        sub-lattice node id (:meth:`projection_stats`)."""
        return self.projection_stats(dims, k)[0]

    def projection_stats(self, dims: Sequence[int], k: int) -> tuple[np.ndarray, ...]:
        """For every node of the sub-lattice of ``dims`` (the records grouped by those
        quasi-identifiers only): the records in classes of fewer than ``k`` records, the
        number of classes, the sum of the squared class sizes and the largest class size.

        Returns four arrays indexed by the sub-lattice node id (mixed radix over ``dims``, the
        first fastest; :meth:`sub_ids`). Each sub-node is rolled up from its predecessor along the first
        raised dimension, which is the last sub-node visited whose earlier dimensions are all
        at level 0 (an "anchor"): one table per dimension is kept at a time.
        """
        dims = [int(d) for d in dims]
        q = len(self.qis)
        R = int(self.radix.max())
        if not hasattr(self, "_cm3x"):
            # one more level per column, past the top, where every value has code 0: a column
            # at that level drops out of the class key (the projection)
            self._cm3x = np.zeros((q, R + 1, self.cm3.shape[2]), dtype=np.int32)
            self._cm3x[:, :R] = self.cm3
            self._ncx = np.ones((q, R + 1), dtype=np.int64)
            self._ncx[:, :R] = self.ncodes
        cm3x, ncx = self._cm3x, self._ncx
        rad = [int(self.radix[d]) for d in dims]
        n_sub = int(np.prod(rad))
        lv = np.full(q, R, dtype=np.int64)
        for d in dims:
            lv[d] = 0
        zero_w = np.zeros(self.base.n_rows)
        _, first, cnt, _ = K.rollup(self.base.raw, self.base.cnt, zero_w, cm3x, lv, ncx)
        raw = K.take_rows(self.base.raw, self.base.rep, first, ncx, lv)[0]
        anchors: list = [None] * len(dims)
        out = np.zeros(n_sub, dtype=np.int64)
        n_cls = np.zeros(n_sub, dtype=np.int64)
        sum_sq = np.zeros(n_sub)
        largest = np.zeros(n_sub, dtype=np.int64)
        levels = [0] * len(dims)
        for x in range(n_sub):
            if x:
                # odometer step: the first dimension that is raised now
                i = 0
                while levels[i] + 1 == rad[i]:
                    levels[i] = 0
                    i += 1
                levels[i] += 1
                j0 = next(t for t in range(len(dims)) if levels[t] > 0)
                raw, cnt = anchors[j0]
                for t, d in enumerate(dims):
                    lv[d] = levels[t]
                _, first, cnt2, _ = K.rollup(raw, cnt, np.zeros(cnt.size), cm3x, lv, ncx)
                raw, cnt = K.take_rows(raw, np.zeros(cnt.size, dtype=np.int32), first, ncx, lv)[0], cnt2
                j_hi = j0
            else:
                j_hi = len(dims) - 1
            for t in range(j_hi + 1):
                anchors[t] = (raw, cnt)
            # one pass: records in classes under k, and (the DM bound with k = 1) the sum of squares
            out[x], _, _, _, sum_sq[x] = K.class_stats(cnt, cnt >= k, self.n, 1)
            n_cls[x] = cnt.size
            largest[x] = int(cnt.max())
        return out, n_cls, sum_sq, largest

    def sub_ids(self, nodes: np.ndarray, dims: Sequence[int]) -> np.ndarray:
        """The sub-lattice id over ``dims`` (mixed radix, the first fastest) of each node id."""
        sub = np.zeros(nodes.size, dtype=np.int64)
        mult = 1
        for d in dims:
            sub += ((nodes // self.strides[d]) % self.radix[d]) * mult
            mult *= int(self.radix[d])
        return sub

    def projection_suppressed_bound(self, k: int, max_nodes: int = 1024) -> np.ndarray:
        """A lower bound of the records every node suppresses, from projections, without
        counting the nodes.

        A class of a node lies inside one class of the node's projection on any subset of the
        quasi-identifiers, so a record in a projection class of fewer than ``k`` records is
        in a node class of fewer than ``k`` records and is suppressed by any model whose kept
        classes need ``k`` records or more. Returns, over node ids, the largest such count
        over the groups of :meth:`projection_groups` (it never grows upwards).
        """
        out = np.zeros(self.n_nodes, dtype=np.int64)
        if k <= 1:
            return out
        for dims in self.projection_groups(max_nodes):
            self.add_projection_bound(out, dims, k)
        return out

    def add_projection_bound(self, out: np.ndarray, dims: Sequence[int], k: int) -> bool:
        """Raise ``out`` (over node ids, records each node must suppress) to the records in
        classes of fewer than ``k`` of the projection on ``dims`` (see
        :meth:`projection_suppressed_bound`); False, and ``out`` unchanged, when the
        projection's keys would not fit one int64."""
        dims = [int(d) for d in dims]
        widest = np.log2(self.ncodes.max(axis=1).astype(float))
        if k <= 1 or float(widest[dims].sum()) >= 61.0:
            return False
        self.fold_projection(out, dims, self.projection_suppressed(dims, k))
        return True

    def fold_projection(self, out: np.ndarray, dims: Sequence[int], sup: np.ndarray) -> None:
        """``out = max(out, sup[sub-lattice id over dims])`` over node ids, in chunks (no
        lattice-sized temporaries)."""
        step = 1 << 20
        for a in range(0, self.n_nodes, step):
            ids = np.arange(a, min(a + step, self.n_nodes), dtype=np.int64)
            np.maximum(out[a:a + ids.size], sup[self.sub_ids(ids, dims)], out=out[a:a + ids.size])

    def projection_failing(self, k: int, max_suppressed: int, max_nodes: int = 1024) -> np.ndarray:
        """Nodes that must suppress more than ``max_suppressed`` records (so fail) by
        :meth:`projection_suppressed_bound`; a down-set. Boolean array over node ids."""
        return self.projection_suppressed_bound(k, max_nodes) > max_suppressed

    def population_counts(self, tab: Table, levels: Sequence[int]) -> np.ndarray:
        """Population records in each class of ``tab`` (delta-presence)."""
        assert self.population is not None
        praw, pcnt = self.population
        allraw = np.concatenate([self.raw2d[tab.class_rep], praw])
        rep = np.arange(len(allraw), dtype=np.int32)
        c = np.concatenate([np.ones(tab.n_classes, dtype=np.int64), pcnt])
        lv = np.asarray(levels, dtype=np.int64)
        stages = self._plan(lv, rep.size)
        keys = np.empty(0, dtype=np.int64)
        zero_w = np.zeros(rep.size)
        for i, (cols, mults, prod) in enumerate(stages):
            keys = K.stage_keys(keys, np.int64(prod), allraw, rep, self._cmn(lv), cols, mults)
            if i < len(stages) - 1:
                keys = K.group(keys, c, zero_w)[0].astype(np.int64)
        gid = K.group(keys, c, zero_w)[0]
        popc = np.bincount(gid[tab.n_classes:], weights=pcnt, minlength=int(gid.max()) + 1)
        return popc[gid[:tab.n_classes]]

    def generalised_codes(self, tab: Table, levels: Sequence[int]) -> np.ndarray:
        """(n_classes x q) label codes of each class at ``levels``."""
        reps = self.raw2d[tab.class_rep]
        return np.stack([self.columns[j].code_map[int(levels[j]), reps[:, j]] for j in range(len(self.qis))], axis=1)

    def record_classes(self, levels: Sequence[int]) -> np.ndarray:
        """Class of every record at ``levels`` (index into the node's table classes)."""
        tab = self.table(levels)
        # class of each base pattern: group base patterns at the node, map to the table's classes
        lv = np.asarray(levels, dtype=np.int64)
        allraw = np.concatenate([self.raw2d[tab.class_rep], self.raw2d])
        rep = np.arange(len(allraw), dtype=np.int32)
        gid = self._dense_keys(allraw, rep, lv, np.ones(len(allraw), dtype=np.int64))
        cls_of_gid = np.full(int(gid.max()) + 1, -1, dtype=np.int64)
        cls_of_gid[gid[:tab.n_classes]] = np.arange(tab.n_classes)
        pattern_cls = cls_of_gid[gid[tab.n_classes:]]
        return pattern_cls[self.record_pattern]
