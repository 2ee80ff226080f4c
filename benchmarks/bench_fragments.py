"""The fragments the reports and the workbench share: their cost on one data set.

Cases, on a census-like frame (5 categorical keys with value labels, 2 numeric variables):
``frequency_table`` of one key, ``risk_histogram`` of the records' individual risks,
``riskiest_records_html`` (page 1 of 20; the risk measured beforehand, as the risk page has
it), ``below_k_records_html``, ``utility_panel_html`` (original against a copy with 1% of one
key changed) and ``gate_table_html`` of two thresholds. Baseline, timed in the same run: a
``np.bincount`` of the key's codes (the least a frequency table must do). Quality figures: the
records counted by the table and by the histogram (both must be n).

    .venv/bin/python benchmarks/bench_fragments.py [--quick] [--n N]
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
from _common import emit, parse_args, peak_mb, timed  # noqa: E402

from sdckit.microdata import DatasetMeta, Microdata  # noqa: E402
from sdckit.registry import build_gate_check  # noqa: E402
from sdckit.report import fragments as F  # noqa: E402
from sdckit.risk.report import measure_risk  # noqa: E402


def data(n: int, seed: int = 0) -> tuple[Microdata, Microdata]:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"region": rng.integers(1, 11, n), "sex": rng.integers(1, 3, n),
                       "age": rng.choice(["<25", "25-44", "45-64", "65+"], n), "marital": rng.integers(1, 6, n),
                       "birth": rng.integers(1, 4, n), "income": rng.normal(100, 20, n),
                       "hours": rng.normal(40, 5, n)})
    meta = DatasetMeta(value_labels={"sex": {1: "Male", 2: "Female"},
                                     "marital": {i: f"status {i}" for i in range(1, 6)}})
    keys = ["region", "sex", "age", "marital", "birth"]
    md = Microdata(df, key_vars=keys, numeric_vars=["income", "hours"], meta=meta)
    changed = df.copy()
    flip = rng.random(n) < 0.01
    changed.loc[flip, "marital"] = rng.integers(1, 6, int(flip.sum()))
    return md, Microdata(changed, key_vars=keys, numeric_vars=["income", "hours"], meta=meta)


def cpu(fn) -> float:
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    sizes = [args.n] if args.n else ([10_000, 100_000] if args.quick else [10_000, 1_000_000])
    for n in sizes:
        md, rel = data(n)
        base_s, _ = timed(lambda md=md: np.bincount(md.codes("marital") + 1), args.repeat)
        rep = measure_risk(md)
        risks = rep.records["risk"].to_numpy()
        k = build_gate_check("k_anonymity", 3).check(md, rel, [])
        g = build_gate_check("max_global_risk", 0.05).check(md, rel, [])
        cases = {
            "frequency_table": lambda md=md: F.frequency_table(md, "marital"),
            "risk_histogram": lambda risks=risks: F.risk_histogram(risks),
            "riskiest_records_html": lambda md=md, rep=rep: F.riskiest_records_html(md, rep, 1, 20),
            "below_k_records_html": lambda md=md, rep=rep: F.below_k_records_html(md, 3, rep, 1, 20),
            "utility_panel_html": lambda md=md, rel=rel: F.utility_panel_html(md, rel),
            "gate_table_html": lambda k=k, g=g: F.gate_table_html([k, g]),
        }
        quality = {"frequency_table": lambda out: {"records_counted": int(out["records"].sum())},
                   "risk_histogram": lambda out: {"records_counted": int(out["records"].sum())}}
        for case, fn in cases.items():
            s, out = timed(fn, args.repeat)
            extra = quality.get(case, lambda out: {})(out)
            emit(case=case, n=n, seconds=s, cpu_seconds=cpu(fn), peak_mb=peak_mb(fn),
                 baseline_seconds=base_s, **extra)


if __name__ == "__main__":
    main()
