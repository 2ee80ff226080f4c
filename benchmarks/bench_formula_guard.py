"""The spreadsheet-formula guard of CSV outputs: its cost on top of writing the file.

Cases, each on the same frame (3 text columns of 40 categories, 2 of them formula-like, and 2
numeric columns): ``write_data`` with ``formula_guard="warn"`` (detection only) and
``"quote"`` (detection and the ' prefix), the detection alone (``formula_cells``), and the
baseline: pandas ``to_csv`` of the same frame (what ``write_data`` does without the guard).
Quality figures: the formula-like cells found (known by construction) and left after quoting.

    .venv/bin/python benchmarks/bench_formula_guard.py [--quick] [--n N]
"""

from __future__ import annotations

import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from _common import emit, parse_args, peak_mb, timed  # noqa: E402

from sdckit.errors import InputWarning  # noqa: E402
from sdckit.io.files import write_data  # noqa: E402
from sdckit.io.formulas import formula_cells, neutralise_formulas  # noqa: E402


def frame(n: int, seed: int = 0) -> tuple[pd.DataFrame, int]:
    rng = np.random.default_rng(seed)
    labels = np.array([f"cat{i}" for i in range(38)] + ["=cmd|' /C calc'!A0", "@SUM(A1:A9)"], dtype=object)
    cols = {f"t{j}": labels[rng.integers(0, 40, n)] for j in range(3)}
    cols["x"] = rng.normal(size=n)
    cols["k"] = rng.integers(-5, 5, n)
    df = pd.DataFrame(cols)
    n_formula = int(sum(np.isin(df[f"t{j}"], labels[38:]).sum() for j in range(3)))
    return df, n_formula


def cpu(fn) -> float:
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    sizes = [args.n] if args.n else ([20_000, 200_000] if args.quick else [100_000, 1_000_000])
    warnings.simplefilter("ignore", InputWarning)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for n in sizes:
            df, n_formula = frame(n)
            base_s, _ = timed(lambda: df.to_csv(tmp / "base.csv", index=False), args.repeat)
            for mode in ("warn", "quote"):
                def work(mode=mode):
                    (tmp / f"{mode}.csv").unlink(missing_ok=True)
                    return write_data(df, tmp / f"{mode}.csv", formula_guard=mode)
                s, path = timed(work, args.repeat)
                left = formula_cells(pd.read_csv(path, dtype=str)) if mode == "quote" else None
                emit(case=f"write_data_csv_{mode}", n=n, seconds=s, cpu_seconds=cpu(work), peak_mb=peak_mb(work),
                     baseline_seconds=base_s, ratio=s / base_s, formula_cells=n_formula,
                     formula_cells_left=None if left is None else sum(f["count"] for f in left))
            s, found = timed(lambda: formula_cells(df), args.repeat)
            emit(case="detect_only", n=n, seconds=s, cpu_seconds=cpu(lambda: formula_cells(df)),
                 peak_mb=peak_mb(lambda: formula_cells(df)), baseline_seconds=base_s, ratio=s / base_s,
                 formula_cells=n_formula, found=sum(f["count"] for f in found))
            s, _ = timed(lambda: neutralise_formulas(df), args.repeat)
            emit(case="quote_only", n=n, seconds=s, cpu_seconds=cpu(lambda: neutralise_formulas(df)),
                 peak_mb=peak_mb(lambda: neutralise_formulas(df)), baseline_seconds=base_s, ratio=s / base_s)


if __name__ == "__main__":
    main()
