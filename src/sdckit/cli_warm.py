"""``sdckit warm``: compile the numba kernels of the fast commands into numba's on-disk cache.

The Makefile runs it once after installing, so that a user's first command loads the kernels
instead of compiling them (a hidden verb of :mod:`sdckit.cli`).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from ._lazy import lazy_module

if TYPE_CHECKING:
    import typer
else:
    typer = lazy_module("typer")  # the declaration below names it; typer reads it when it parses


def warm_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of text.")] = False,
) -> None:
    """Compile the numba kernels of risk (with SUDA2), anonymise, the demo's masking steps and
    table count into numba's on-disk cache, on the bundled census sample and small margins. The
    Makefile runs it once after installing, so that a user's first command loads the kernels
    instead of compiling them."""
    import shutil
    import tempfile
    from importlib import resources

    data = Path(str(resources.files("sdckit").joinpath("data", "uk_census2011_teaching_10k.csv")))
    keys = ["Region", "Sex", "Age", "Marital Status"]

    def risk_kernels() -> None:
        from .io.files import read_microdata
        from .risk.report import measure_risk

        measure_risk(read_microdata(data, key_vars=keys), suda=True)

    def anonymise_kernels() -> None:  # the command's own path: a CSV and a folder of hierarchies
        import csv
        import random

        from .lattice.cli import run_anonymise

        qis = keys + ["Student", "Country of Birth", "Health", "Ethnic Group"]  # 8, as on adult
        with open(data, newline="", encoding="utf-8") as f:
            columns = list(zip(*[[r[c] for c in qis] for r in csv.DictReader(f)]))
        # 30,000 rows with each column shuffled on its own: the search's large-table paths run too
        shuffled, draw = [list(col) * 3 for col in columns], random.Random(0)
        for col in shuffled:
            draw.shuffle(col)
        rows = [list(r) for r in zip(*shuffled)]
        folder = Path(tempfile.mkdtemp(prefix="sdckit-warm-"))
        try:
            with open(folder / "data.csv", "w", newline="", encoding="utf-8") as f:
                csv.writer(f).writerows([qis, *rows])
            for i, qi in enumerate(qis):  # three levels: value, pairs of values, *
                levels = [[v, f"g{r // 2}", "*"] for r, v in enumerate(sorted({row[i] for row in rows}))]
                (folder / f"h_{qi}.csv").write_text("".join(";".join(x) + "\n" for x in levels), "utf-8")
            for k, suppression in ((5, 0.01), (2, 0.0)):  # numba's kernels (a small search runs numpy's)
                run_anonymise(folder / "data.csv", folder, qis, k=k, suppression=suppression,
                              metric="discernibility", kernels="numba")
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def step_kernels() -> None:  # the masking steps of the bundled demo release and its sweep
        from .io.files import read_microdata
        from .registry import build_step

        md = read_microdata(data, key_vars=keys + ["Country of Birth"])
        for method, params in (
                ("pram", {"variables": ["Marital Status"], "matrix": {"type": "invariant"}, "min_diagonal": 0.9}),
                ("local_suppression", {"k": 3}),
                ("record_swap", {"swap_rate": 0.1, "hierarchy": ["Region"], "similar": ["Sex", "Age"],
                                 "risk_variables": ["Marital Status", "Country of Birth"],
                                 "allow_across_top": True, "k_anonymity": 3})):
            build_step(method, params).apply(md, rng=0)

    def count_kernels() -> None:
        from .tables.exact_cli import count_command

        for rows, cols in (([108, 286, 71, 127], [220, 215, 93, 64]), ([5, 3, 2], [4, 4, 2]),
                           ([9, 8, 7, 6, 5], [7, 7, 7, 7, 7]), ([6, 6], [4, 4, 4])):
            count_command(rows, cols)
        count_command([20, 55, 25, 35], [50, 35, 30, 20], estimate=True, n_samples=200, seed=1)

    done = {}
    for name, fn in (("risk", risk_kernels), ("anonymise", anonymise_kernels), ("protect steps", step_kernels),
                     ("table count", count_kernels)):
        t0 = time.process_time()
        fn()
        done[name] = round(time.process_time() - t0, 2)
    if as_json:
        from .result import jsonable

        print(json.dumps(jsonable({"warmed": done})))
    else:
        print("numba kernels compiled or loaded from the cache (CPU seconds): "
                   + ", ".join(f"{k} {v}" for k, v in done.items()))
