"""Which outputs of a session link: the tables the linked audit stacks into one system.

Two tables link when they have the same measure and their variables nest (``_linked``): the
same variables on shared records (differencing of subsets), or fewer variables on at least the
other's records (a margin published apart). :func:`linked_components` finds the linked sets
(union-find over those pairs); :func:`linked_groups` splits a set of more than
:data:`MAX_LINKED` outputs into groups, one per largest set of variables among its outputs.

This is graph bookkeeping over the outputs' records and variables, with no linear programming
and no checks, so it sits apart from the session's audit (:meth:`sdckit.outputs.Session.audit`),
which solves one system per group with :func:`sdckit.outputs.audit.audit_linked`.
"""

from __future__ import annotations

from .record import OutputRecord

__all__ = ["linked_components", "linked_groups", "MAX_LINKED"]

#: largest set of linked tables audited as one system; a larger set is split into groups, one per
#: largest set of variables among its tables (:func:`linked_groups`)
MAX_LINKED = 16


def linked_components(recs: list[OutputRecord]) -> list[list[OutputRecord]]:
    """Tables that link (union-find over ``_linked`` pairs).

    Only pairs whose variables nest (equal, or one table's variables among the other's) are
    tried: the same table on another subset, or a table and one of its margins published apart.

    Parameters
    ----------
    recs : list of OutputRecord
        The session's tables that have a layout (linear measures on unique record ids).

    Returns
    -------
    list of list of OutputRecord
        The linked sets, each in the order of ``recs``; a table that links with none is a set
        of one.
    """
    parent = list(range(len(recs)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    buckets: dict[tuple, list[int]] = {}
    for i, r in enumerate(recs):
        buckets.setdefault((r.layout.measure, r.link_dims), []).append(i)
    keys = list(buckets)
    for a in keys:
        for b in keys:
            if a[0] != b[0] or not a[1] <= b[1] or (a[1] == b[1] and a is not b):
                continue
            for i in buckets[a]:
                for j in buckets[b]:
                    if i < j or (a != b and i != j):
                        if find(i) != find(j) and _linked(recs[i], recs[j]):
                            parent[find(i)] = find(j)
    comps: dict[int, list[OutputRecord]] = {}
    for i, r in enumerate(recs):
        comps.setdefault(find(i), []).append(r)
    return list(comps.values())


def linked_groups(comp: list[OutputRecord]) -> tuple[list[list[OutputRecord]], str]:
    """The systems of one linked set.

    The set itself, or (more than ``MAX_LINKED`` outputs) one group per largest set of variables
    among its outputs, holding every output whose variables are among them. Linked outputs nest
    in their variables (``_linked``), so every linked pair lies in the group of a largest set
    that holds the larger one's variables.

    Parameters
    ----------
    comp : list of OutputRecord
        One linked set, as :func:`linked_components` returns it.

    Returns
    -------
    groups : list of list of OutputRecord
        The systems to audit (groups of one output are left out).
    mode : str
        ``"joint"`` (the set is one system) or ``"by variables"``.
    """
    if len(comp) <= MAX_LINKED:
        return [comp], "joint"
    dims = {r.link_dims for r in comp}
    largest = sorted((d for d in dims if not any(d < e for e in dims)), key=sorted)
    groups = [[r for r in comp if r.link_dims <= d] for d in largest]
    return [g for g in groups if len(g) > 1], "by variables"


def _linked(a: OutputRecord, b: OutputRecord) -> bool:
    """Same measure and nested variables: the same variables on shared records (differencing of
    subsets), or fewer variables on at least the other's records (a margin published apart).
    A table of fewer variables on a part of the other's records is one of its rows: no link."""
    if a.layout.measure != b.layout.measure:
        return False
    da, db = a.link_dims, b.link_dims
    if da == db:
        return not _id_set(a).isdisjoint(_id_set(b))
    if db < da:
        a, b = b, a
    elif not da < db:
        return False
    return _id_set(a) >= _id_set(b)


def _id_set(rec: OutputRecord) -> frozenset:
    """The records behind a table (built once per output)."""
    cached = getattr(rec.layout, "_id_set", None)
    if cached is None:
        cached = frozenset(rec.layout.record_ids[rec.layout.cell >= 0].tolist())
        rec.layout._id_set = cached
    return cached
