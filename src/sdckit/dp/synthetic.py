"""Seeded synthetic hierarchical count tables (geography levels by other dimensions), for the
tests, the benchmark and the examples of :mod:`sdckit.dp`."""

from __future__ import annotations

import numpy as np

from ..tables.table import Hierarchy, Table
from .postprocess import TopDownLayout

__all__ = ["geography", "synthetic_counts"]


def geography(fanout: tuple[int, ...], *, total: str = "Total") -> Hierarchy:
    """A geography hierarchy: the total, then ``fanout[0]`` units, each with ``fanout[1]``
    children, ... (codes ``"1"``, ``"1.3"``, ``"1.3.7"``)."""
    codes, parent = [total], [-1]

    def add(prefix: str, me: int, level: int) -> None:
        if level == len(fanout):
            return
        for i in range(1, fanout[level] + 1):
            code = f"{prefix}.{i}" if prefix else str(i)
            codes.append(code)
            parent.append(me)
            add(code, len(codes) - 1, level + 1)

    add("", 0, 0)
    return Hierarchy(codes, parent)


def synthetic_counts(fanout: tuple[int, ...], categories: tuple[int, ...], *, mean: float = 3.0,
                     shape: float = 0.5, rng=0, geo_name: str = "geo") -> Table:
    """A consistent frequency table: geography ``fanout`` by flat dimensions with
    ``categories[d]`` categories each (plus their total).

    Inner counts are Poisson with gamma-distributed means (``shape``, mean ``mean``): many small
    and empty cells, some large ones, as in small-area census tables. Every total is the sum of
    its parts (computed from the detailed counts).
    """
    gen = np.random.default_rng(rng)
    geo = geography(tuple(fanout))
    hs = [geo] + [Hierarchy.flat([f"c{j + 1}" for j in range(n)]) for n in categories]
    dims = [geo_name] + [f"d{d + 1}" for d in range(len(categories))]
    layout = TopDownLayout.from_hierarchies(hs, 0)
    G, J = len(geo), layout.n_detail
    X = np.zeros((G, J), dtype=np.int64)
    leaves = np.flatnonzero(geo.is_leaf)
    lam = gen.gamma(shape, mean / shape, size=(leaves.size, J))
    X[leaves] = gen.poisson(lam)
    for g in range(G - 1, 0, -1):  # pre-order: children come after their parent
        X[geo.parent[g]] += X[g]
    value = layout.cells(X)
    return Table(dims, hs, value.astype(float), value)
