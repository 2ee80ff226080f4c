"""Linked tables: joint suppression consistent on common cells, joint audit, consistent CKM noise."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdckit.errors import InputError
from sdckit.tables.audit import audit
from sdckit.tables.ckm import PTable
from sdckit.tables.linked import LinkedSystem, linked_ckm, protect_linked
from sdckit.tables.rules import ThresholdRule
from sdckit.tables.table import Hierarchy, Table

H_R = Hierarchy(["Total", "ab", "a", "b", "cde", "c", "d", "e"], [-1, 0, 1, 1, 0, 4, 4, 4])


def _data(seed: int = 3, n: int = 400) -> pd.DataFrame:
    g = np.random.default_rng(seed)
    return pd.DataFrame({"r": g.choice(list("abcde"), n, p=[.4, .3, .2, .07, .03]),
                         "s": g.choice(list("xyz"), n, p=[.6, .3, .1]),
                         "k": g.choice(list("pq"), n, p=[.9, .1])})


def _tables(df):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [Table.from_microdata(df, ["r", "s"], hierarchies={"r": H_R}),
                Table.from_microdata(df, ["r", "k"]),
                Table.from_microdata(df, ["s", "k"])]


def test_common_cells_found_by_hand():
    t = _tables(_data())
    sys_ = LinkedSystem(t)
    # by hand: T1 (r with ab/cde x s) and T2 (r flat x k) share r-leaves x Total (5) and Total x Total;
    # T1 and T3 share Total x s (3) and Total x Total; T2 and T3 share Total x k (2) and Total x Total:
    # 5 + 3 + 2 + 1 distinct shared cells
    assert sys_.n_shared == 11
    assert sys_.n_cells == sum(x.n_cells for x in t) - (5 + 3 + 2 + 2)  # grand total held once, not thrice
    # every table's relations hold on the joint values
    assert np.allclose(sys_.relations @ sys_.value, 0)


@pytest.mark.parametrize("method", ["optimal", "heuristic"])
def test_linked_pattern_consistent_and_passes_joint_audit(method):
    t = _tables(_data())
    res = protect_linked(t, [ThresholdRule(n=5)], method=method, time_limit=60)
    assert res.consistent()
    assert res.result.primary.n_primary > 0
    # the joint audit, recomputed here on the joint system from the mapped-back patterns
    joint = np.zeros(res.system.n_cells, bool)
    for s, m in zip(res.suppressed, res.system.maps):
        joint[m[s]] = True
    a = audit(res.system, joint, primary=res.result.primary)
    assert a.ok and res.audit_ok
    assert all(x.ok for x in res.table_audits())  # each table alone is protected too


def test_disagreeing_tables_one_line():
    ta = Table.from_cells(pd.DataFrame({"r": ["a", "b"], "n": [3, 4]}), ["r"], "n")
    tb = Table.from_cells(pd.DataFrame({"r": ["a", "b"], "n": [3, 5]}), ["r"], "n")
    with pytest.raises(InputError, match=r"linked tables disagree on a common cell: T1 \(r=Total\) = 7 but "
                                         r"T2 \(r=Total\) = 8"):
        LinkedSystem([ta, tb])


def test_linked_ckm_same_noise():
    df = _data()
    df["Key"] = np.random.default_rng(5).random(len(df))
    res, chk = linked_ckm(df, [{"dims": ["r", "s"], "hierarchies": {"r": H_R}}, {"dims": ["r", "k"]},
                               {"dims": ["s", "k"]}], ptable=PTable.generate(D=3, V=1.5, js=1))
    assert chk["consistent"] and chk["n_shared"] == 11
    # by hand: the r margin of table 1 and of table 2 (same records) are perturbed alike
    f1 = res[0].frame().query("s == 'Total'").set_index("r")["perturbed"]
    f2 = res[1].frame().query("k == 'Total'").set_index("r")["perturbed"]
    assert (f1.loc[list("abcde")] == f2.loc[list("abcde")]).all()


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.integers(3, 6))
def test_property_joint_audit_and_consistency(seed, n):
    t = _tables(_data(seed=seed, n=150))
    res = protect_linked(t, [ThresholdRule(n=n)], method="heuristic", time_limit=30)
    assert res.consistent() and res.audit_ok
