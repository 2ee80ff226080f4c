"""One HiGHS policy: every solver-using method works in any order in one process, silently.

HiGHS keeps one task scheduler per process; an instance run with the default thread count
made every later single-thread instance end with status 'not set', so the order in which
methods ran decided whether they worked. Each order below runs in a fresh process (the
scheduler is process-global, so the test process's own history must not hide the clash), and
the process must print nothing but the workload's one result line.
"""

from __future__ import annotations

import ast
import itertools
import json
import pathlib
import subprocess
import sys

import pytest

SRC = pathlib.Path(__file__).resolve().parents[1] / "src" / "sdckit"

WORKLOAD = r'''
import json, sys
import numpy as np
import pandas as pd

def exact_local_suppression():
    from sdckit.masking.local_suppression import exact_local_suppression
    rng = np.random.default_rng(0)
    codes = [rng.integers(0, 3, 30), rng.integers(0, 2, 30)]
    out, obj, st = exact_local_suppression(codes, 3, time_limit=30)
    return st.lower() == "optimal"

def evolved_pram():
    from sdckit.pram.evolve import feasible_anchor
    F = feasible_anchor(np.array([0.5, 0.3, 0.2]), 0.6, 0.95)
    return bool(np.allclose(F.sum(0), [0.5, 0.3, 0.2]))

def optimal_pram():
    from sdckit.microdata import Microdata
    from sdckit.pram.optimal.register import Optimal
    from sdckit.pram.steps import Pram
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"a": rng.integers(0, 3, 400), "b": rng.integers(0, 2, 400)})
    md = Microdata(df, key_vars=["a", "b"])
    res = Pram(variables=["a", "b"], matrix=Optimal(alpha=0.2, combinations=2), joint=True).apply(md, rng=3)
    return all(g.holds for g in res.guarantees)

def _table():
    from sdckit.tables.table import Hierarchy, Table
    inner = np.array([[15, 1, 3, 1], [20, 10, 10, 15], [3, 10, 10, 2], [12, 14, 7, 2]])
    rows, cols = list("ABCD"), list("wxyz")
    df = pd.DataFrame([(r, c, inner[i, j]) for i, r in enumerate(rows) for j, c in enumerate(cols)],
                      columns=["row", "col", "n"])
    return Table.from_cells(df, ["row", "col"], "n",
                            hierarchies={"row": Hierarchy.flat(rows), "col": Hierarchy.flat(cols)})

def _suppress(cls):
    from sdckit.tables.rules import ThresholdRule, primary_cells
    t = _table()
    p = primary_cells(t, ThresholdRule(3))
    return bool(cls().apply(t, p).audit.ok)

def optimal_suppression():
    from sdckit.tables.suppression import OptimalSuppression
    return _suppress(OptimalSuppression)

def modular_suppression():
    from sdckit.tables.modular import ModularSuppression
    return _suppress(ModularSuppression)

def heuristic_suppression():
    from sdckit.tables.suppression import HeuristicSuppression
    return _suppress(HeuristicSuppression)

def audit():
    from sdckit.tables.audit import audit as run_audit
    from sdckit.tables.rules import ThresholdRule, primary_cells
    t = _table()
    p = primary_cells(t, ThresholdRule(3))
    return bool(run_audit(t, p.sensitive | p.sensitive[::-1], primary=p) is not None)

def rounding():
    from sdckit.tables.rounding import ControlledRounding
    return ControlledRounding(base=5).apply(_table()).rounded is not None

def margins():
    from sdckit.tables.margins import release_margins
    return release_margins(_table()) is not None

ok = {name: bool(globals()[name]()) for name in sys.argv[1:]}
sys.stdout.write("RESULT " + json.dumps(ok) + "\n")
'''

METHODS = ["exact_local_suppression", "evolved_pram", "optimal_pram", "optimal_suppression",
           "modular_suppression", "heuristic_suppression", "audit", "rounding", "margins"]

# forward, reverse, and two fixed shuffles (itertools over a seeded permutation)
_perm = [METHODS[i] for i in (4, 1, 7, 0, 8, 2, 5, 3, 6)]
ORDERS = [METHODS, METHODS[::-1], _perm, [m for m in itertools.chain(METHODS[1::2], METHODS[::2])]]


@pytest.mark.parametrize("order", ORDERS, ids=["forward", "reverse", "shuffled", "interleaved"])
def test_every_solver_method_works_in_any_order_and_prints_nothing(order, tmp_path):
    proc = subprocess.run([sys.executable, "-c", WORKLOAD, *order], capture_output=True, text=True,
                          cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    # nothing but the result line: no HiGHS banner, no solver log
    assert len(lines) == 1 and lines[0].startswith("RESULT "), proc.stdout[:500]
    assert all(json.loads(lines[0][len("RESULT "):]).values())
    assert "HiGHS" not in proc.stderr, proc.stderr[:500]


def test_no_module_builds_a_highs_instance_outside_the_factory():
    """Every highspy.Highs() comes from sdckit._highs.new_highs (read from the source)."""
    offenders = []
    for path in SRC.rglob("*.py"):
        if path.name == "_highs.py" and path.parent == SRC:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
                if name == "Highs":
                    offenders.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert not offenders, f"HiGHS instances built outside sdckit._highs: {offenders}"


def test_factory_instances_are_single_threaded_and_silent(capfd):
    from sdckit._highs import new_highs

    h = new_highs(time_limit=5)
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    assert h.getOptionValue("threads")[1] == 1
    assert h.getOptionValue("output_flag")[1] is False
    with pytest.raises(ValueError, match="threads"):
        new_highs(options={"threads": 2})


def test_a_failed_solve_names_the_step_and_what_to_try():
    import numpy as np
    import scipy.sparse as sp

    from sdckit._highs import new_highs, pass_lp, raise_for_status
    from sdckit.errors import SolverError

    h = new_highs()
    # x >= 2 and x <= 1: infeasible (hand-made)
    pass_lp(h, sp.csc_matrix(np.array([[1.0]])), cost=np.array([1.0]), col_lower=np.array([0.0]),
            col_upper=np.array([1.0]), row_lower=np.array([2.0]), row_upper=np.array([np.inf]))
    h.run()
    with pytest.raises(SolverError, match=r"^local_suppression \(exact MILP\): HiGHS ended 'infeasible'; the constraints admit no solution: relax"):
        raise_for_status(h, step="local_suppression", what="exact MILP")
