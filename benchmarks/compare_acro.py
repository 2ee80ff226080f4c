"""sdckit's output checking beside ACRO's (PyPI ``acro``, the SACRO project) on ACRO's own examples,
both in one process: the agreement table per output and per cell, and the cases ACRO misses.

Run from the project root:  .venv/bin/python benchmarks/compare_acro.py [--quick] [--acro-data DIR]

ACRO 1.0.2 needs pandas < 3, which the project's locked environment cannot hold, so it lives in
its own virtual environment, ``.venv-acro`` (ignored by git). Make it once with ``--setup`` (or
by hand: ``.uv/bin/uv venv --python .venv/bin/python .venv-acro``, then
``.uv/bin/uv pip install --python .venv-acro/bin/python acro==1.0.2 highspy==1.16.0``). Run from
the project's environment, the script starts itself again under ``.venv-acro`` with ``src`` on
the path: sdckit.outputs (numpy, pandas, scipy, highspy, statsmodels) imports there too, so
ACRO and sdckit run in that one process on the same frames.

Data: ACRO's repository's ``data/test_data.dta`` (charity grants, 918 rows: the data of its
test suite) and ``data/nursery.arff`` (UCI nursery admissions: its demo notebook
``notebooks/acro_demo_2026.py``), from ``--acro-data DIR`` or the folder named by the
``ACRO_DATA`` environment variable (e.g. a checkout's ``data/``). ACRO's survival example uses
R's ``flchain`` data, which needs the network; a synthetic survival sample stands in (said on
its line).

Cases: the calls of ACRO's demo notebook and test suite (frequency tables, tables of means and
sums, multi-level rows, margins, pivot tables with mean and std, a mode table, regressions with
too few and enough degrees of freedom, logit/probit, a histogram, a survival table), each made
once on an ``ACRO(suppress=False)`` and once on a ``sdckit.outputs.Session()`` with the same
arguments. Per output: each tool's status (sdckit's on ACRO's checks alone, and with its audits),
and per ACRO check the flagged cells (ACRO's ``sdc["cells"]`` positions against sdckit's), as
``cells_agree`` / ``cells_compared``. Every difference is named with its cause
(``differences``); a difference the script cannot name says ``"unexplained"``.

Then the constructed cases (ACRO issue #198 in spirit):

* ``margins_recover_suppressed``: a table with margins and a small row; ACRO with suppression on
  publishes its table; sdckit's batch check (:func:`sdckit.outputs.check_results`) audits ACRO's
  published file by LP and reports what the margins give back, with the interval;
* ``differencing_pair``: the same table on all records and on all but one; every cell of both
  passes ACRO's rules; sdckit's linked audit recovers the one record's cell exactly.

Finally ``acro_reads_sdckit_results``: ACRO's own loader (``acro.record.load_records``) reads the
``results.json`` that ``Session.finalise`` wrote.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv-acro"
ACRO_VERSION = "1.0.2"


def emit(**fields) -> None:
    print(json.dumps({k: (round(v, 6) if isinstance(v, float) else v) for k, v in fields.items()}, default=str),
          flush=True)


def setup() -> None:
    uv = ROOT / ".uv" / "bin" / "uv"
    subprocess.run([str(uv), "venv", "--python", str(ROOT / ".venv" / "bin" / "python"), str(VENV)], check=True)
    subprocess.run([str(uv), "pip", "install", "--python", str(VENV / "bin" / "python"), f"acro=={ACRO_VERSION}",
                    "highspy==1.16.0"], check=True)


def relaunch() -> int:
    python = VENV / "bin" / "python"
    if not python.is_file():
        emit(case="setup", error=f"acro is not importable here and {VENV.name} is missing: run "
             "benchmarks/compare_acro.py --setup once")
        return 2
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), SDCKIT_COMPARE_WORKER="1")
    return subprocess.call([str(python), __file__, *sys.argv[1:]], env=env)


# --------------------------------------------------------------------------- data

def load_data(folder: Path):
    import numpy as np
    import pandas as pd
    from scipy.io.arff import loadarff

    grants = pd.read_stata(folder / "test_data.dta")
    raw = pd.DataFrame(loadarff(folder / "nursery.arff")[0]).select_dtypes([object])
    nursery = raw.stack().str.decode("utf-8").unstack().rename(columns={"class": "recommendation"})
    # the demo's manipulation: 'children' numeric, 'more' drawn from 4..9 (here with a fixed seed)
    rng = np.random.default_rng(0)
    ch = nursery["children"].replace({"more": "4"}).astype(int)
    nursery["children"] = np.where(ch.isin([1, 2, 3]), ch, rng.integers(4, 10, len(ch)))
    return grants, nursery


def cases(grants, nursery, quick: bool):
    import numpy as np
    import pandas as pd
    import statsmodels.api as sm

    g = grants
    reg = g[["inc_activity", "inc_grants", "inc_donations", "total_costs"]].dropna()
    logit_df = g[["survivor", "inc_activity", "inc_grants", "inc_donations", "total_costs"]].dropna()
    surv_y = logit_df["survivor"].astype("category").cat.codes.astype(float)
    surv_y.name = "survivor"
    x_logit = sm.add_constant(logit_df[["inc_activity", "inc_grants", "inc_donations", "total_costs"]])
    rng = np.random.default_rng(1)
    n_s = 400
    surv = pd.DataFrame({"futime": rng.integers(1, 60, n_s).astype(float), "death": rng.integers(0, 2, n_s)})
    out = [
        ("demo: crosstab recommendation x parents", lambda s: s.crosstab(nursery.recommendation, nursery.parents)),
        ("demo: mean children by parents+finance x recommendation, margins",
         lambda s: s.crosstab([nursery.parents, nursery.finance], nursery.recommendation, values=nursery.children,
                              aggfunc="mean", margins=True)),
        ("tests: crosstab year x grant_type", lambda s: s.crosstab(g.year, g.grant_type)),
        ("tests: crosstab year x grant_type, margins", lambda s: s.crosstab(g.year, g.grant_type, margins=True)),
        ("tests: mean inc_grants year x grant_type",
         lambda s: s.crosstab(g.year, g.grant_type, values=g.inc_grants, aggfunc="mean")),
        ("tests: sum inc_grants year x survivor",
         lambda s: s.crosstab(g.year, [g.survivor], values=g.inc_grants, aggfunc="sum")),
        ("tests: mode inc_grants year x grant_type",
         lambda s: s.crosstab(g.year, g.grant_type, values=g.inc_grants, aggfunc="mode")),
        ("tests: pivot mean+std inc_grants by grant_type",
         lambda s: s.pivot_table(g, index=["grant_type"], values=["inc_grants"], aggfunc=["mean", "std"])),
        ("tests: pivot mean inc_grants year x grant_type",
         lambda s: s.pivot_table(g, index=["year"], columns=["grant_type"], values=["inc_grants"], aggfunc="mean")),
        ("tests: ols on 10 rows (too few dof)",
         lambda s: s.ols(reg.inc_activity.iloc[:10], sm.add_constant(reg[["inc_grants", "inc_donations",
                                                                           "total_costs"]].iloc[:10]))),
        ("tests: ols", lambda s: s.ols(reg.inc_activity, sm.add_constant(reg[["inc_grants", "inc_donations",
                                                                             "total_costs"]]))),
        ("tests: logit", lambda s: s.logit(surv_y, x_logit)),
        ("tests: probit", lambda s: s.probit(surv_y, x_logit)),
        ("tests: histogram inc_grants", lambda s: s.hist(g.dropna(subset=["inc_grants"]), "inc_grants")),
        ("synthetic: survival table (flchain needs the network)",
         lambda s: s.surv_func(surv.futime, surv.death, output="table") if hasattr(s, "surv_func")
         else s.survival(surv.futime, surv.death)),
    ]
    return out[:6] if quick else out


# --------------------------------------------------------------------------- comparison

def acro_cells(rec) -> dict[str, set]:
    sdc = rec.sdc or {}
    return {k: {tuple(p) for p in v} for k, v in (sdc.get("cells") or {}).items()}


def ours_cells(rec) -> dict[str, set]:
    return {c.name: {tuple(p) for p in c.cells()} for c in rec.checks if c.mask is not None}


def explain(case: str, check: str, kind: str, a: set, o: set, ev=None) -> str:
    if check == "MinimumDoFCheck" and kind == "table":
        return ("ACRO bug: for a table of standard deviations its MinimumDoFCheck mask is the table of "
                "degrees of freedom itself, so its cells are those with any degree of freedom and its summary the "
                "sum of them (acro/sdcchecks.py get_table_sdc); sdckit flags cells with count - 1 < dof_threshold")
    if "histogram" in case and check == "MinimumThresholdCheck":
        return ("ACRO bug: its bin counts drop every record equal to the largest value (np.digitize puts it past "
                "the last edge, outside the categories 1..bins; acro/sdcchecks.py check_min_threshold), so the last "
                "bin can be undercounted; sdckit counts with np.histogram")
    if (check == "PPercentCheck" and ev is not None and not (o - a)
            and all(ev.largest[i, j] == 0 for i, j in a - o)):
        return ("ACRO flags cells whose largest contribution is 0 (every value 0 or missing), although its own "
                "comment says such cells are non-disclosive: pandas' .where keeps (X - x1 - x2) where x1 == 0, so the "
                "ratio 0 < p (acro/sdcchecks.py check_ppercent_dominance); sdckit applies the p% rule as written, "
                "X - x1 - x2 < p x1, which is false when x1 = 0")
    if check == "PresenceOfZeroCheck" and kind == "histogram":
        return "unexplained"
    if check in ("MarginAuditCheck", "LinkedOutputsCheck"):
        return "sdckit only: the LP audit"
    return "unexplained"


def compare_one(name, call, ACRO, Session):
    import pandas as pd

    acro = ACRO(suppress=False)
    sess = Session()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.process_time()
        call(acro)
        t_acro = time.process_time() - t0
        t0 = time.process_time()
        call(sess)
        t_ours = time.process_time() - t0
    ra = acro.results.get_index(-1)
    ro = list(sess.outputs.values())[-1]
    ca, co = acro_cells(ra), ours_cells(ro)
    acro_names = set(ca) | ({c.name for c in ro.checks} & set((ra.sdc or {}).get("summary", {}) or {}))
    compared = agree = 0
    diffs = []
    for check in sorted(set(ca) | (set(co) & acro_names)):
        a, o = ca.get(check, set()), co.get(check, set())
        grid = set()
        if ro.outcome is not None and isinstance(ro.outcome, pd.DataFrame):
            grid = {(i, j) for i in range(ro.outcome.shape[0]) for j in range(ro.outcome.shape[1])}
        grid |= a | o
        compared += len(grid)
        agree += sum(1 for p in grid if (p in a) == (p in o))
        if a != o:
            diffs.append({"check": check, "acro_only": sorted(a - o)[:6], "sdckit_only": sorted(o - a)[:6],
                          "why": explain(name, check, ro.output_type, a, o, ro.evidence)})
    # statuses: sdckit on ACRO's checks alone (DoF of a model and the table checks), and with its audits
    acro_checks = [c for c in ro.checks if c.name not in ("MarginAuditCheck", "LinkedOutputsCheck",
                                                          "SurvivalThresholdCheck")]
    from sdckit.outputs.checks import overall_status

    ours_acro = overall_status(acro_checks)
    if ra.status != ours_acro:
        names = [d["check"] for d in diffs]
        why = ("ACRO's survival check reads the count of each 'num at risk' value; sdckit checks each step's "
               "number at risk and the curve's residual degrees of freedom" if "survival" in name else
               explain(name, names[0], ro.output_type, set(), set()) if names else "unexplained")
        diffs.append({"check": "status", "acro": ra.status, "sdckit": ours_acro, "why": why})
    emit(case=name, type=ro.output_type, acro_status=ra.status, sdckit_status_acro_checks=ours_acro,
         sdckit_status=ro.status, status_agree=ra.status == ours_acro, cells_compared=compared, cells_agree=agree,
         differences=diffs, acro_cpu_seconds=t_acro, sdckit_cpu_seconds=t_ours)
    return ra.status == ours_acro, compared, agree, diffs


def constructed(ACRO, Session, tmp: Path) -> None:
    import numpy as np
    import pandas as pd

    from sdckit.outputs import check_results

    rng = np.random.default_rng(198)
    n = 600
    df = pd.DataFrame({"region": rng.choice(["north", "south", "east"], n), "sex": rng.choice(["f", "m"], n)})
    df.loc[df.index[:4], "region"] = "west"       # a row of 4 records: fails the threshold (10)
    # (a) margins: ACRO with suppression on publishes the table; sdckit audits what it published
    acro = ACRO(suppress=True)
    published = acro.crosstab(df.region, df.sex, margins=True)
    acro.finalise(str(tmp / "acro_margins"), "json")
    doc = check_results(tmp / "acro_margins")
    rec = doc["outputs"][0]
    truth = pd.crosstab(df.region, df.sex, margins=True)
    emit(case="margins_recover_suppressed", acro_status=acro.results.get_index(0).status,
         acro_published=json.loads(published.to_json()), acro_blank_cells=int(published.isna().sum().sum()),
         sdckit_check_of_acro_file=rec["status"],
         sdckit_notes=[c.get("note") for c in rec.get("checks", []) if c.get("note")],
         sdckit_recovered=[r["sentence"] for r in rec.get("recovered", [])],
         truth={f"west|{c}": int(truth.loc["west", c]) for c in truth.columns},
         note="ACRO 1.0.2 recomputes the margins after suppression (the published All row and column add up the "
              "published cells), so its own table no longer gives the blank cells back (issue #198 is fixed for "
              "one table); sdckit's check of the file says the margins equal the published cells' sums")
    # (a2) the same suppressed table and a one-way table of the same records: the one-way table restores the
    # margin that ACRO's suppression removed; ACRO flags nothing in it, sdckit's linked audit recovers the cells
    one = pd.Series("all", index=df.index, name="all")
    acro = ACRO(suppress=True)
    sess = Session(suppress=True)
    for s in (acro, sess):
        s.crosstab(df.region, df.sex, margins=True)
        s.crosstab(df.sex, one)
    sets = sess.audit()
    found = [r for st in sets for r in st["recovered"] if r["what"] == "suppressed cell"]
    found += [d for c in sess.outputs["output_0"].checks if c.name == "MarginAuditCheck" for d in c.details or []]
    emit(case="margin_from_another_output", acro_status=[acro.results.get_index(i).status for i in (0, 1)],
         sdckit_status=[r.status for r in sess.outputs.values()],
         sdckit_recovered=[f"{r['cell']}: {r['interval']}" for r in found],
         truth={f"west|{c}": int(truth.loc["west", c]) for c in truth.columns},
         note="ACRO flags no cell of the one-way table and its PresenceOfLinkedTableCheck passes; both outputs "
              "say 'review' only because suppression is on (ACRO sets review on every table it suppresses). The "
              "one-way table restores the column totals that ACRO's recomputed margins left out, and their "
              "difference gives the suppressed cells back exactly")
    # (b) differencing: the same table on all records and on all but one; both pass ACRO's rules
    acro = ACRO(suppress=False)
    sess = Session()
    full = df[df.region != "west"]
    sub = full.drop(index=full.index[0])
    for s in (acro, sess):
        s.crosstab(full.region, full.sex)
        s.crosstab(sub.region, sub.sex)
    sets = sess.audit()
    rec = [r for st in sets for r in st["recovered"] if r["what"] == "derived cell"]
    emit(case="differencing_pair", acro_status=[acro.results.get_index(i).status for i in (0, 1)],
         sdckit_status=[r.status for r in sess.outputs.values()],
         sdckit_sets=[{"outputs": st["outputs"], "recovered": [r["sentence"] for r in st["recovered"]]}
                      for st in sets],
         recovered_value=rec[0]["value"] if rec else None, interval=rec[0]["interval"] if rec else None,
         note="ACRO's PresenceOfLinkedTableCheck passes both and only recommends a manual review")


def worker(args) -> int:
    from acro import ACRO
    from acro.record import load_records

    from sdckit.outputs import Session

    data = Path(args.acro_data or os.environ.get("ACRO_DATA", ""))
    if not (data / "test_data.dta").is_file() or not (data / "nursery.arff").is_file():
        emit(case="data", error="ACRO's data files test_data.dta and nursery.arff not found: give --acro-data DIR "
             "(the data/ folder of a checkout of github.com/AI-SDC/ACRO) or set ACRO_DATA")
        return 2
    import acro as acro_pkg

    grants, nursery = load_data(data)
    tmp = Path(tempfile.mkdtemp(prefix="compare-acro-"))
    cwd = os.getcwd()
    os.chdir(tmp)  # ACRO writes its artefacts into the working folder
    try:
        totals = {"outputs": 0, "status_agree": 0, "cells_compared": 0, "cells_agree": 0, "unexplained": 0}
        for name, call in cases(grants, nursery, args.quick):
            ok, compared, agree, diffs = compare_one(name, call, ACRO, Session)
            totals["outputs"] += 1
            totals["status_agree"] += int(ok)
            totals["cells_compared"] += compared
            totals["cells_agree"] += agree
            totals["unexplained"] += sum(1 for d in diffs if d["why"] == "unexplained")
        emit(case="summary", acro_version=getattr(acro_pkg, "__version__", ACRO_VERSION), **totals)
        constructed(ACRO, Session, tmp)
        sess = Session()
        sess.crosstab(grants.year, grants.grant_type)
        sess.finalise(tmp / "sdckit_session")
        try:
            loaded = load_records(str(tmp / "sdckit_session"))
            emit(case="acro_reads_sdckit_results", ok=True, outputs=loaded.get_keys())
        except Exception as exc:  # report, do not hide
            emit(case="acro_reads_sdckit_results", ok=False, error=f"{type(exc).__name__}: {exc}"[:200])
    finally:
        os.chdir(cwd)
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def main() -> int:
    import argparse

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="the first six cases and the constructed ones")
    p.add_argument("--acro-data", default=None, help="folder holding ACRO's test_data.dta and nursery.arff")
    p.add_argument("--setup", action="store_true", help="create .venv-acro with acro and highspy, then stop")
    p.add_argument("--n", type=int, default=None, help="(unused: the cases have fixed sizes)")
    args = p.parse_args()
    if args.setup:
        setup()
        return 0
    try:
        import acro  # noqa: F401
    except ImportError:
        if os.environ.get("SDCKIT_COMPARE_WORKER"):
            emit(case="setup", error="acro is not importable in .venv-acro: run --setup again")
            return 2
        return relaunch()
    return worker(args)


if __name__ == "__main__":
    sys.exit(main())
