"""Controlled tabular adjustment: optimality against an enumeration of the directions, the LP
heuristic, the audit, integer changes and refusals."""

import itertools
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from sdckit.errors import InputError, ParameterError
from sdckit.tables.cta import ControlledAdjustment, cta_audit, cta_weights
from sdckit.tables.registry import build_table_method
from sdckit.tables.rules import DominanceRule, PPercentRule, Primary, ThresholdRule, primary_cells
from sdckit.tables.table import Hierarchy, Table

from .helpers import table_2d

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"
META = SHARED / "tauargus_meta"


def enumerated_optimum(t: Table, p: Primary, w: np.ndarray) -> float:
    """Independent reference: the best of the 2^k fixed-direction LPs (scipy's linprog), written
    from Castro (2006), model (1)-(5), without the binaries. Cells >= 0, empty cells fixed."""
    a = t.value
    n = t.n_cells
    m = t.relations.toarray()
    empty = (t.freq == 0) & (a == 0)
    sens = np.flatnonzero(p.sensitive)
    best = np.inf
    for dirs in itertools.product((1, -1), repeat=sens.size):
        lo_p, hi_p = np.zeros(n), np.full(n, np.inf)  # z+
        lo_m, hi_m = np.zeros(n), a.copy()  # z- (x >= 0)
        hi_p[empty] = hi_m[empty] = 0.0
        ok = True
        for s, d in zip(sens, dirs):
            if d > 0:
                lo_p[s], hi_m[s] = p.upper[s], 0.0
            else:
                if p.lower[s] > a[s]:
                    ok = False
                lo_m[s], hi_p[s] = p.lower[s], 0.0
        if not ok:
            continue
        r = linprog(np.concatenate([w, w]), A_eq=np.hstack([m, -m]), b_eq=np.zeros(m.shape[0]),
                    bounds=list(zip(lo_p, hi_p)) + list(zip(lo_m, hi_m)), method="highs")
        if r.status == 0:
            best = min(best, r.fun)
    return best


def _random_table(seed: int) -> Table:
    rng = np.random.default_rng(seed)
    shape = (int(rng.integers(2, 4)), int(rng.integers(2, 4)))
    inner = rng.integers(0, 12, size=shape)
    for _ in range(int(rng.integers(1, 4))):  # a few small cells to protect
        inner[rng.integers(0, shape[0]), rng.integers(0, shape[1])] = rng.integers(1, 3)
    return table_2d(inner)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 100_000), st.sampled_from(["relative", "unity"]))
def test_milp_objective_equals_the_enumerated_optimum(seed, weights):
    t = _random_table(seed)
    p = primary_cells(t, ThresholdRule(3, 20))
    if p.n_primary > 5:
        return
    res = ControlledAdjustment(weights=weights, mip_gap=0.0).apply(t, p)
    ref = enumerated_optimum(t, p, cta_weights(t, weights))
    assert res.audit.ok and res.proven_optimal
    assert res.objective == pytest.approx(ref, rel=1e-6, abs=1e-9)
    # the LP heuristic is feasible, audited, and never better than the optimum
    lp = ControlledAdjustment(weights=weights, method="lp").apply(t, p)
    assert lp.audit.ok and lp.objective >= ref - 1e-7 * (1 + ref)
    # the published table is additive and every sensitive cell moved out (checked here again)
    x = res.adjusted
    assert np.abs(t.relations @ x).max() <= 1e-6
    s = p.sensitive
    assert ((x[s] >= t.value[s] + p.upper[s] - 1e-6) | (x[s] <= t.value[s] - p.lower[s] + 1e-6)).all()
    assert (x >= -1e-9).all()


def test_hand_computed_single_cell():
    # 2 x 2 inner [[1, 9], [9, 9]], primary r0/c0 = 1 with levels 1 up, 1 down; unit weights.
    # Moving r0/c0 by +-1 forces one cell in its row and one in its column to move the other way
    # and r1/c1 the same way (or the totals to move): the cheapest is the 4-cell cycle, distance 4.
    t = table_2d([[1, 9], [9, 9]])
    p = primary_cells(t, ThresholdRule(3))
    res = ControlledAdjustment(weights="unity", mip_gap=0.0).apply(t, p)
    assert res.objective == pytest.approx(4.0)
    assert res.audit.ok
    assert min(abs(res.adjusted[t.cell_index("r0", "c0")] - v) for v in (0.0, 2.0)) < 1e-9


def test_the_audit_catches_what_the_promise_excludes():
    t = table_2d([[1, 9], [9, 9]])
    p = primary_cells(t, ThresholdRule(3))
    assert not cta_audit(t, t.value, p).ok  # nothing moved: the sensitive cell is inside
    x = ControlledAdjustment().apply(t, p).adjusted.copy()
    assert cta_audit(t, x, p).ok
    x[t.cell_index("r1", "c1")] += 1.0  # breaks additivity
    aud = cta_audit(t, x, p)
    assert not aud.ok and "do NOT add up" in aud.statement() and aud.status == "failed"


def test_integer_changes_for_counts():
    t = _random_table(11)
    p = primary_cells(t, ThresholdRule(3, 15))
    res = ControlledAdjustment(integer=True, weights="relative").apply(t, p)
    assert res.audit.ok and np.allclose(res.adjusted, np.round(res.adjusted))


def test_a_cell_that_cannot_leave_its_interval_is_refused_in_one_line():
    t = table_2d([[1, 9], [9, 9]])
    p = primary_cells(t, ThresholdRule(3))
    big = Primary(p.sensitive, np.where(p.sensitive, 5.0, 0.0), np.where(p.sensitive, 5.0, 0.0), p.sliding, p.reason)
    with pytest.raises(InputError, match=r"r0 / c0 .*cannot leave its protection interval") as exc:
        ControlledAdjustment(upper_bound=3.0).apply(t, big)
    assert "\n" not in str(exc.value)


def test_parameters_use_the_template():
    with pytest.raises(ParameterError, match=r"^The 'method' parameter of ControlledAdjustment"):
        ControlledAdjustment(method="simplex")
    res = build_table_method("cta", {"solver": "lp"}).apply(table_2d([[1, 9], [9, 9]]),
                                                              primary_cells(table_2d([[1, 9], [9, 9]]), ThresholdRule(3)))
    assert res.audit.ok and set(res.status) == {"perturbed"}


@pytest.mark.skipif(not (META / "dim_age.hrc").is_file(), reason="../shared/data/tauargus_meta is absent")
def test_magnitude_table_within_one_percent_of_the_exact_optimum():
    # Savings by Sex x Age (hierarchical Age), P(15,1)|NK(3,75): the default MILP (gap 1e-4) against
    # the same model solved with gap 0 (pytauargus cannot run tau-Argus's CTA headless)
    micro = pd.read_csv(SHARED / "tauargus_ckm_microdata.csv", dtype=str)
    micro["Savings"] = micro["Savings"].astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = Table.from_microdata(micro, ["Sex", "Age"], response="Savings",
                                 hierarchies={"Age": Hierarchy.from_hrc(META / "dim_age.hrc")})
    p = primary_cells(t, [PPercentRule(15), DominanceRule(3, 75)])
    fast = ControlledAdjustment().apply(t, p)
    exact = ControlledAdjustment(mip_gap=0.0).apply(t, p)
    assert fast.audit.ok and exact.audit.ok and exact.proven_optimal
    assert fast.objective <= exact.objective * 1.01 + 1e-12
    assert fast.objective == pytest.approx(enumerated_optimum(t, p, cta_weights(t, "relative")), rel=1e-2)


def test_a_table_spec_with_method_cta_writes_the_adjusted_table(tmp_path):
    from sdckit.tables.spec import run_table_spec

    t = table_2d([[1, 9, 4], [9, 9, 2], [5, 6, 7]])
    t.to_frame().rename(columns={"value": "n"})[["row", "col", "n"]].to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "s.toml").write_text('[input]\ntable = "t.csv"\nvalue = "n"\n[table]\ndimensions = ["row", "col"]\n'
                                     '[[rules]]\ntype = "threshold"\nn = 3\n[protection]\nmethod = "cta"\n'
                                     'weights = "unity"\nsolver = "milp"\n[output]\ntable = "out.csv"\n')
    run = run_table_spec(tmp_path / "s.toml")
    d = run.to_dict()
    assert d["audit_ok"] and d["audit_status"] == "exact" and d["method"] == "cta"
    out = pd.read_csv(tmp_path / "out.csv", dtype={"row": str, "col": str}).set_index(["row", "col"])["value"]
    for r in ("r0", "r1", "r2"):  # rows add up in the written file
        assert out[(r, "Total")] == sum(out[(r, c)] for c in ("c0", "c1", "c2"))
    assert out[("r0", "c0")] != 1 and out[("r1", "c2")] != 2  # the sensitive cells moved
