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
   (a finer partition), never from the records.

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
    of ``sum_j log2 f_j(raw)`` (for non-uniform entropy), ``cls[e]`` its class.
    """

    rep: np.ndarray
    cnt: np.ndarray
    wsum: np.ndarray
    cls: np.ndarray
    class_rep: np.ndarray
    class_size: np.ndarray
    class_wsum: np.ndarray

    @property
    def n_classes(self) -> int:
        return int(self.class_size.size)

    @property
    def n_rows(self) -> int:
        return int(self.rep.size)


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
    cache_rows : int
        Budget of cached table rows for roll-up.
    """

    def __init__(self, data: pd.DataFrame, qis: Sequence[str], hierarchies: Mapping[str, Hierarchy], *,
                 sensitive: str | None = None, sensitive_hierarchy: Hierarchy | None = None,
                 population: pd.DataFrame | None = None, cache_rows: int = 3_000_000) -> None:
        qis = list(qis)
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
        self.qis = qis
        self.n = int(len(data))
        if self.n == 0:
            raise InputError("the data have no records.")
        cols: list[EncodedColumn] = []
        pop_raw = []
        for q in qis:
            if q not in hierarchies:
                raise InputError(f"no hierarchy for quasi-identifier {q!r}.")
            h = check_hierarchy(hierarchies[q])
            enc, extra = encode(q, data[q], h, also=[population[q]] if population is not None else [])
            cols.append(enc)
            pop_raw.extend(extra)
        self.columns = cols
        self.heights = np.array([c.height for c in cols], dtype=np.int64)
        self.radix = self.heights + 1
        self.strides = np.ones(len(qis), dtype=np.int64)
        for j in range(1, len(qis)):
            self.strides[j] = self.strides[j - 1] * self.radix[j - 1]
        self.n_nodes = int(np.prod([int(r) for r in self.radix], dtype=object))
        if self.n_nodes >= 2 ** 62:
            raise InputError(f"the lattice of {len(qis)} quasi-identifiers has {self.n_nodes:.3g} nodes, more "
                             "than node ids can number (2^62); use fewer quasi-identifiers or shorter hierarchies.")
        q = len(qis)
        r_max = max(c.code_map.shape[1] for c in cols)
        self.cm3 = np.zeros((q, int(self.radix.max()), r_max), dtype=np.int32)
        for j, c in enumerate(cols):
            self.cm3[j, :c.code_map.shape[0], :c.code_map.shape[1]] = c.code_map
            self.cm3[j, c.code_map.shape[0]:, :c.code_map.shape[1]] = c.code_map[-1]
        # per-record log2 f_j(raw) summed over QIs (non-uniform entropy)
        w = np.zeros(self.n)
        self.raw_freq = []
        for c in cols:
            f = np.bincount(c.raw, minlength=c.code_map.shape[1]).astype(float)
            self.raw_freq.append(f)
            with np.errstate(divide="ignore"):
                w += np.log2(np.maximum(f[c.raw], 1.0))
        # sensitive attribute
        self.sensitive = sensitive
        self.sens_col: EncodedColumn | None = None
        if sensitive is not None:
            if sensitive_hierarchy is not None:
                self.sens_col, _ = encode(sensitive, data[sensitive], check_hierarchy(sensitive_hierarchy))
                s = self.sens_col.raw.astype(np.int64)
                self.n_sens = int(self.sens_col.code_map.shape[1])
            else:
                codes, uniq = pd.factorize(data[sensitive].astype("string").fillna(""), sort=True)
                s = codes.astype(np.int64)
                self.n_sens = int(len(uniq))
            self.sens_labels = (self.sens_col.labels[0] if self.sens_col is not None else np.asarray(uniq, dtype=object))
            self.sens_overall = np.bincount(s, minlength=self.n_sens) / self.n
        else:
            s = None
            self.n_sens = 0
        # compress records to distinct patterns (QIs + sensitive)
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
        # population patterns, appended after the data's patterns in a separate array
        self.population = None
        if population is not None:
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
                row = {qq: str(cols[j].labels[0][self.raw2d[i, j]]) for j, qq in enumerate(qis)}
                raise InputError(f"a record of the data is not in the population table: {row}; the "
                                 "data must be a subset of the population for delta-presence.")
        self.cache_budget = int(cache_rows)
        self.n_tables = 0
        self.clear_cache()

    def clear_cache(self, n_slots: int = 1024) -> None:
        """Forget the cached tables (used between timed runs)."""
        self._slot_of: dict[int, int] = {}
        self._slot_node = np.full(n_slots, -1, dtype=np.int64)
        self._slot_levels = np.zeros((n_slots, len(self.qis)), dtype=np.int64)
        self._slot_rows = np.full(n_slots, 2 ** 62, dtype=np.int64)
        self._slot_table: list[Table | None] = [None] * n_slots
        self._next_slot = 0
        self._cache_rows = 0

    # ------------------------------------------------------------------ nodes
    def node_id(self, levels: Sequence[int]) -> int:
        return int(sum(int(lv) * int(s) for lv, s in zip(levels, self.strides)))

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

    def _make_table(self, rep: np.ndarray, cnt: np.ndarray, wsum: np.ndarray, levels: np.ndarray) -> Table:
        """Group table rows ``rep`` (with ``cnt`` records each) into the classes of ``levels``."""
        lv = np.asarray(levels, dtype=np.int64)
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
        class_rep = rep[first]
        if self.sens is None:
            return Table(class_rep, csum, wout, np.arange(csum.size, dtype=np.int32), class_rep, csum, wout)
        k2 = gid.astype(np.int64) * self.n_sens + self.sens[rep]
        size2 = csum.size * self.n_sens
        g2, first2, c2, w2 = (K.group_dense(k2, cnt, wsum, size2) if size2 <= max(4 * rep.size, 4096)
                              else K.group(k2, cnt, wsum))
        return Table(rep[first2], c2, w2, gid[first2], class_rep, csum, wout)

    def table(self, levels: Sequence[int]) -> Table:
        """The class table of a node, rolled up from the smallest cached table below it."""
        lv = np.asarray(levels, dtype=np.int64)
        node = self.node_id(lv)
        slot = self._slot_of.get(node)
        if slot is not None:
            return self._slot_table[slot]
        src = self.base
        below = np.flatnonzero((self._slot_rows < src.n_rows) & np.all(self._slot_levels <= lv, axis=1))
        if below.size:
            src = self._slot_table[int(below[np.argmin(self._slot_rows[below])])]
        self.n_tables += 1
        tab = self._rollup(src, lv)
        self._store(node, lv, tab)
        return tab

    def _store(self, node: int, lv: np.ndarray, tab: Table) -> None:
        """Keep a table for roll-up (ring of slots, oldest out, within the row budget)."""
        n_slots = self._slot_rows.size
        slot = self._next_slot
        self._next_slot = (slot + 1) % n_slots
        old = self._slot_node[slot]
        if old >= 0:
            self._slot_of.pop(int(old), None)
            self._cache_rows -= int(self._slot_rows[slot])
        while self._cache_rows + tab.n_rows > self.cache_budget and self._slot_of:
            # drop the largest cached table until the new one fits
            victims = np.flatnonzero(self._slot_node >= 0)
            v = int(victims[np.argmax(np.where(self._slot_rows[victims] < 2 ** 62, self._slot_rows[victims], -1))])
            self._slot_of.pop(int(self._slot_node[v]), None)
            self._cache_rows -= int(self._slot_rows[v])
            self._slot_node[v] = -1
            self._slot_rows[v] = 2 ** 62
            self._slot_table[v] = None
        self._slot_node[slot] = node
        self._slot_levels[slot] = lv
        self._slot_rows[slot] = tab.n_rows
        self._slot_table[slot] = tab
        self._slot_of[node] = slot
        self._cache_rows += tab.n_rows

    def _rollup(self, src: Table, lv: np.ndarray) -> Table:
        return self._make_table(src.rep, src.cnt, src.wsum, lv)

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
