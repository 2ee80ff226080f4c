"""Hypercube suppression (large tables) and the scalable protection audit."""

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import ParameterError
from sdckit.tables.audit import a_priori_bounds, audit
from sdckit.tables.audit_large import protection_audit
from sdckit.tables.cli import table_command
from sdckit.tables.hypercube import HypercubeSuppression, check_certificates
from sdckit.tables.rules import Primary, ThresholdRule, primary_cells
from sdckit.tables.suppression import OptimalSuppression
from sdckit.tables.table import Hierarchy, Table

from .helpers import table_2d


def _random_hier_table(seed: int) -> Table:
    """2 or 3 dimensions, each a random 1- or 2-level hierarchy, counts from a skewed Poisson."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 4))
    hs = []
    for d in range(k):
        if rng.random() < 0.5:
            hs.append(Hierarchy.flat([f"{d}x{i}" for i in range(int(rng.integers(2, 4)))]))
        else:
            lines = []
            for g in range(int(rng.integers(2, 3 + (k == 2)))):
                lines.append(f"{d}G{g}")
                lines += [f"@{d}G{g}l{i}" for i in range(int(rng.integers(2, 4)))]
            hs.append(Hierarchy.from_hrc("\n".join(lines)))
    leaves = [list(h.leaves) for h in hs]
    n = int(rng.integers(30, 120))
    df = pd.DataFrame({f"v{d}": rng.choice(lv, n, p=rng.dirichlet(np.full(len(lv), 0.7))) for d, lv in enumerate(leaves)})
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Table.from_microdata(df, list(df.columns), hierarchies={f"v{d}": h for d, h in enumerate(hs)})


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 100_000))
def test_every_hypercube_pattern_passes_the_full_audit(seed):
    t = _random_hier_table(seed)
    p = primary_cells(t, ThresholdRule(3))
    res = HypercubeSuppression().apply(t, p)
    # the full LP audit (two LPs per suppressed cell), independent of the method's own audit
    again = audit(t, res.suppressed, primary=p)
    assert again.ok and res.audit.ok and res.audit.mode == "exact"
    # never fewer primaries protected: every primary is suppressed and protected
    assert res.suppressed[p.sensitive].all()
    assert again.protected.all()
    # every certificate kept (its hypercube intact after the clean-up) passes its exact check
    assert res.n_certificates_ok == len(res.certificates) <= res.n_certified
    assert res.n_certified + res.n_lp_fallback == int((p.sensitive & ((p.upper > 0) | (p.lower > 0))).sum())


@settings(max_examples=8, deadline=None)
@given(st.integers(0, 100_000))
def test_hypercube_never_beats_the_proven_optimum(seed):
    rng = np.random.default_rng(seed)
    inner = rng.integers(0, 9, size=(3, 3))
    inner[rng.integers(0, 3), rng.integers(0, 3)] = rng.integers(1, 3)
    t = table_2d(inner)
    p = primary_cells(t, ThresholdRule(3))
    opt = OptimalSuppression().apply(t, p)
    hc = HypercubeSuppression(avoid_singletons=False).apply(t, p)
    assert opt.proven_optimal and hc.audit.ok
    # the optimum is a lower bound for any audited pattern of the same costs
    assert opt.cost <= hc.cost + 1e-9


def test_single_primary_gets_the_hand_computed_hypercube():
    # 2 x 2 inner cells, (r0, c0) = 1 is the primary. By hand: the only hypercube is the four
    # inner cells with signs + - / - +; moving it by t keeps the margins, and (r1, c1) = 5,
    # (r0, c1) = 6, (r1, c0) = 4 allow t in [-1, 4]: up 4 >= 1, down 1 >= 1 (level capped at 1)
    t = table_2d([[1, 6], [4, 5]])
    p = primary_cells(t, ThresholdRule(3))
    res = HypercubeSuppression().apply(t, p)
    inner = [t.cell_index(r, c) for r in ("r0", "r1") for c in ("c0", "c1")]
    assert sorted(np.flatnonzero(res.suppressed)) == sorted(inner)
    a = audit(t, res.suppressed, primary=p)
    assert a.interval(t.cell_index("r0", "c0")) == pytest.approx((0.0, 5.0))


def test_certificate_check_rejects_a_wrong_vector():
    t = table_2d([[1, 6], [4, 5]])
    p = primary_cells(t, ThresholdRule(3))
    res = HypercubeSuppression().apply(t, p)
    lb, ub = a_priori_bounds(t)
    (pc, (cells, sg)), = res.certificates.items()
    assert check_certificates(t, res.suppressed, p, {pc: (cells, sg)}, lb, ub).all()
    bad = sg.copy()
    bad[-1] = -bad[-1]  # breaks the margins: M d != 0
    assert not check_certificates(t, res.suppressed, p, {pc: (cells, bad)}, lb, ub).any()
    short = res.suppressed.copy()
    short[cells[-1]] = False  # a cell of the hypercube published
    assert not check_certificates(t, short, p, {pc: (cells, sg)}, lb, ub).any()


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 100_000))
def test_protection_audit_agrees_with_the_full_audit(seed):
    rng = np.random.default_rng(seed)
    t = table_2d(rng.integers(0, 8, size=(int(rng.integers(3, 7)), int(rng.integers(3, 7)))))
    p = primary_cells(t, ThresholdRule(3))
    sup = p.sensitive | (rng.random(t.n_cells) < rng.uniform(0.1, 0.6))
    full = audit(t, sup, primary=p)  # reference: two LPs per suppressed cell
    fast = protection_audit(t, sup, p)
    assert fast.mode == "exact" and fast.audited.all()
    verdict = dict(zip(full.cells.tolist(), full.protected.tolist()))
    assert [verdict[c] for c in fast.cells.tolist()] == fast.protected.tolist()
    assert fast.ok == full.ok


def test_protection_audit_states_a_sample_when_the_budget_runs_out():
    rng = np.random.default_rng(5)
    t = table_2d(rng.integers(0, 5, size=(12, 12)))
    p = primary_cells(t, ThresholdRule(3))
    sup = p.sensitive | t.is_inner
    full = protection_audit(t, sup, p)
    part = protection_audit(t, sup, p, max_lps=6)
    assert full.mode == "exact" and part.mode == "sampled"
    assert part.n_lps == 6 and 0 < part.n_audited < part.cells.size
    assert part.n_audited + part.n_not_audited == part.cells.size
    d = part.to_dict()
    assert d["mode"] == "sampled" and d["n_not_audited"] == part.n_not_audited
    # the verdicts of the audited sample are the exact ones
    assert (part.protected[part.audited] == full.protected[part.audited]).all()


def test_protection_audit_finds_an_unprotected_primary():
    # by hand: with only (r0, c0) and (r0, c1) suppressed, column c0's total gives (r0, c0) exactly
    t = table_2d([[1, 6], [4, 5]])
    p = primary_cells(t, ThresholdRule(3))
    sup = p.sensitive.copy()
    sup[t.cell_index("r0", "c1")] = True
    res = protection_audit(t, sup, p)
    assert not res.ok and res.n_unprotected == 1 and res.up_reach[0] == pytest.approx(0.0)


def test_parameter_errors():
    with pytest.raises(ParameterError):
        HypercubeSuppression(max_siblings=0)
    with pytest.raises(ParameterError):
        HypercubeSuppression(cost="price")


def test_hypercube_from_a_spec(tmp_path):
    examples = Path(__file__).resolve().parents[2] / "examples" / "tables"
    for f in examples.glob("delinquent*"):
        shutil.copy(f, tmp_path / f.name)
    spec = tmp_path / "s.toml"
    spec.write_text('[input]\ntable = "delinquent.csv"\nvalue = "n"\n[table]\ndimensions = ["county", "education"]\n'
                    '[[rules]]\ntype = "threshold"\nn = 3\n[protection]\nmethod = "hypercube"\n'
                    '[output]\naudit = "audit.csv"\n')
    summary, _ = table_command(str(spec))
    json.dumps(summary)
    assert summary["method"] == "hypercube" and summary["audit_ok"] and summary["audit_mode"] == "exact"
    assert summary["n_audited"] == summary["n_primary"] == 4 and summary["n_not_audited"] == 0
    assert Path(summary["outputs"]["audit"]).exists() and "public_report" in summary["outputs"]


def test_zero_level_primary_needs_no_hypercube():
    t = table_2d([[1, 6], [4, 5]])
    sens = np.zeros(t.n_cells, bool)
    sens[t.cell_index("r0", "c0")] = True
    z = np.zeros(t.n_cells)
    p = Primary(sens, z, z, z, np.full(t.n_cells, "", object))
    res = HypercubeSuppression().apply(t, p)
    assert res.n_secondary == 0 and res.audit.ok
