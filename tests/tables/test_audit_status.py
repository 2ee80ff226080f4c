"""An audit says what it proved: exact, sampled (with its counts and rule) or failed.

A sampled audit never reads as passed (``audit_ok`` false in --json, "NOT proven safe" in the
text, the internal report and the public page); ``[protection] audit = "exact"`` refuses to
write anything when the audit is not exact and passing; the audit's budget is CPU time or LP
solves, so a jump of the wall clock does not change the verdict.
"""

import json
import time
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.cli import main
from sdckit.errors import GateError, SpecError
from sdckit.tables import audit_large
from sdckit.tables.audit import audit
from sdckit.tables.audit_large import protection_audit
from sdckit.tables.cli import table_command
from sdckit.tables.hypercube import HypercubeSuppression
from sdckit.tables.rules import ThresholdRule, primary_cells

from .helpers import table_2d


def _grid(seed: int = 5, n: int = 12):
    rng = np.random.default_rng(seed)
    t = table_2d(rng.integers(0, 5, size=(n, n)))
    p = primary_cells(t, ThresholdRule(3))
    return t, p


def _spec(tmp_path: Path, protection: str) -> Path:
    """A 12 x 12 count table from microdata with many small cells (threshold rule n = 3)."""
    rng = np.random.default_rng(11)
    df = pd.DataFrame({"a": rng.choice([f"a{i:02d}" for i in range(12)], 400),
                       "b": rng.choice([f"b{i:02d}" for i in range(12)], 400)})
    df.to_csv(tmp_path / "micro.csv", index=False)
    spec = tmp_path / "s.toml"
    spec.write_text('[input]\nmicrodata = "micro.csv"\n[table]\ndimensions = ["a", "b"]\n'
                    '[[rules]]\ntype = "threshold"\nn = 3\n[protection]\nmethod = "hypercube"\n' + protection)
    return spec


# ----------------------------------------------------------------------------- the audit objects

def test_a_sampled_protection_audit_is_never_ok():
    t, p = _grid()
    sup = p.sensitive | t.is_inner
    part = protection_audit(t, sup, p, max_lps=3)
    assert part.mode == "sampled" and part.status == "sampled" and part.stopped_by == "lps"
    assert part.n_unprotected == 0  # every audited primary passes ...
    assert not part.ok  # ... and still the pattern is not proven safe
    words = part.statement()
    assert f"Audited {part.n_audited:,} of {part.cells.size:,} sensitive cells" in words
    assert f"{part.n_not_audited:,} not audited" in words and "NOT proven safe" in words
    assert "random sample" in part.rule and "3 LP solves" in part.rule
    d = part.to_dict()
    assert d["status"] == "sampled" and d["ok"] is False and d["n_not_audited"] == part.n_not_audited > 0
    assert "NOT proven safe" in part.report_html() and "NOT proven safe" in part.describe()
    full = protection_audit(t, sup, p)
    assert full.status == "exact" and full.ok and "every one is protected" in full.statement()


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 40))
def test_audit_status_invariants(seed, max_lps):
    t, p = _grid(seed, 6)
    rng = np.random.default_rng(seed)
    sup = p.sensitive | (rng.random(t.n_cells) < 0.5)
    a = protection_audit(t, sup, p, max_lps=max_lps, rng=seed)
    assert a.n_audited + a.n_not_audited == a.cells.size
    assert a.ok == (a.status == "exact")
    assert a.ok == (a.mode == "exact" and bool(a.protected.all()))
    assert (a.status == "failed") == (a.n_unprotected > 0)
    if a.mode == "sampled":
        assert not a.ok and a.n_not_audited > 0
    # the verdict on each audited cell is the one of the full LP audit (two LPs per cell)
    full = audit(t, sup, primary=p)
    verdict = dict(zip(full.cells.tolist(), full.protected.tolist()))
    assert all(verdict[c] == pr for c, pr, au in zip(a.cells.tolist(), a.protected, a.audited) if au)


def test_full_audit_states_failed_in_words():
    # by hand: with only (r0, c0) and (r0, c1) suppressed, column c0's total gives (r0, c0) exactly
    t = table_2d([[1, 6], [4, 5]])
    p = primary_cells(t, ThresholdRule(3))
    sup = p.sensitive.copy()
    sup[t.cell_index("r0", "c1")] = True
    res = audit(t, sup, primary=p)
    assert res.status == "failed" and not res.ok
    assert "NOT protected" in res.statement() and "Audit: failed" in res.report_html()


# ----------------------------------------------------------------------------- CPU budget, not wall time

def _jumping_clock(monkeypatch):
    """The wall clock jumps by a day at every reading (a loaded or suspended machine); CPU time is real."""
    state = {"t": 0.0}

    def perf_counter():
        state["t"] += 86_400.0
        return state["t"]

    monkeypatch.setattr(audit_large, "time", types.SimpleNamespace(perf_counter=perf_counter,
                                                                    process_time=time.process_time))


def test_wall_clock_jump_does_not_change_the_verdict(monkeypatch):
    t, p = _grid()
    sup = p.sensitive | t.is_inner
    calm = protection_audit(t, sup, p, cpu_budget=60.0)
    _jumping_clock(monkeypatch)
    loaded = protection_audit(t, sup, p, cpu_budget=60.0)
    assert calm.status == loaded.status == "exact"
    assert (calm.protected == loaded.protected).all() and loaded.n_lps == calm.n_lps


def test_hypercube_audit_budget_is_cpu_time(monkeypatch):
    t, p = _grid(7, 10)
    calm = HypercubeSuppression(audit_seconds=60.0, audit_certificates=False).apply(t, p)
    _jumping_clock(monkeypatch)
    loaded = HypercubeSuppression(audit_seconds=60.0, audit_certificates=False).apply(t, p)
    assert calm.audit.status == loaded.audit.status == "exact" and loaded.audit.ok


# ----------------------------------------------------------------------------- the table run: json, text, pages

def test_sampled_hypercube_run_is_not_ok_anywhere(tmp_path, capsys):
    spec = _spec(tmp_path, "audit_lps = 1\naudit_certificates = false\n")
    summary, run = table_command(str(spec))
    assert summary["audit_status"] == "sampled" and summary["audit_ok"] is False
    assert summary["n_audited"] + summary["n_not_audited"] == summary["n_primary"]
    assert summary["n_not_audited"] > 0 and "random sample" in summary["audit_rule"]
    assert "NOT proven safe" in summary["audit_statement"]
    text = run.describe()
    assert "Audit sampled" in text and "NOT proven safe" in text
    internal = Path(summary["outputs"]["report"]).read_text()
    public = Path(summary["outputs"]["public_report"]).read_text()
    for page in (internal, public):
        assert "sampled" in page and "NOT proven safe" in page
    # the command line: --json and the human text
    assert main(["table", str(spec), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["audit_ok"] is False and d["audit_status"] == "sampled"
    assert main(["table", str(spec)]) == 0
    out = capsys.readouterr().out
    assert "NOT proven safe" in out and "audit_ok: true" not in out.lower()


def test_exact_audit_required_refuses_a_sample(tmp_path, capsys):
    spec = _spec(tmp_path, 'audit_lps = 1\naudit_certificates = false\naudit = "exact"\n')
    before = set(tmp_path.iterdir())
    with pytest.raises(GateError, match="NOT proven safe.*nothing was written"):
        table_command(str(spec))
    assert set(tmp_path.iterdir()) == before  # nothing written
    assert main(["table", str(spec), "--json"]) == 3
    err = capsys.readouterr()
    assert json.loads(err.out)["error"]["exit_code"] == 3 and len(err.err.strip().splitlines()) == 1
    assert set(tmp_path.iterdir()) == before


def test_exact_audit_required_passes_an_exact_audit(tmp_path):
    spec = _spec(tmp_path, 'audit = "exact"\n')
    summary, _ = table_command(str(spec))
    assert summary["audit_status"] == "exact" and summary["audit_ok"] is True
    assert summary["n_audited"] == summary["n_primary"] and summary["n_not_audited"] == 0
    assert Path(summary["outputs"]["table"]).exists()


def test_audit_requirement_is_checked(tmp_path):
    with pytest.raises(SpecError, match="protection.audit"):
        table_command(str(_spec(tmp_path, 'audit = "mostly"\n')))


# ----------------------------------------------------------------------------- proofs handed to the audit

def test_a_forged_proof_is_rejected_and_the_verdict_stands():
    # by hand: with only (r0, c0) and (r0, c1) suppressed, column c0's total gives (r0, c0) exactly;
    # the direction +1 on (r0, c0), -1 on (r0, c1) keeps row r0's total but breaks both column totals
    t = table_2d([[1, 6], [4, 5]])
    p = primary_cells(t, ThresholdRule(3))
    sup = p.sensitive.copy()
    sup[t.cell_index("r0", "c1")] = True
    forged = {0: (np.array([t.cell_index("r0", "c0"), t.cell_index("r0", "c1")]), np.array([1, -1]))}
    res = protection_audit(t, sup, p, proofs=forged)
    assert res.n_proofs_rejected == 1 and res.n_proven_by_given == 0
    assert res.status == "failed" and not res.ok
    # a proof whose support holds a published cell is rejected too: the full 2 x 2 inner cube,
    # with only three of its cells suppressed
    cube = np.array([t.cell_index(r, c) for r in ("r0", "r1") for c in ("c0", "c1")])
    res = protection_audit(t, sup | np.isin(np.arange(t.n_cells), cube[:3]), p,
                           proofs={0: (cube, np.array([1, -1, -1, 1]))})
    assert res.n_proofs_rejected == 1


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 100_000))
def test_audit_with_certificates_agrees_with_the_full_audit(seed):
    t, p = _grid(seed % 50, 5)
    res = HypercubeSuppression(avoid_singletons=False).apply(t, p)
    with_proofs = protection_audit(t, res.suppressed, p, proofs=res.certificates)
    assert with_proofs.n_proofs_rejected == 0
    full = audit(t, res.suppressed, primary=p)  # reference: two LPs per suppressed cell, no proofs
    verdict = dict(zip(full.cells.tolist(), full.protected.tolist()))
    assert [verdict[c] for c in with_proofs.cells.tolist()] == with_proofs.protected.tolist()
    assert with_proofs.ok == full.ok and with_proofs.status == "exact"
