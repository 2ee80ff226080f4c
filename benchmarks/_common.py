"""Shared helpers of the benchmark scripts: argument parsing, timing, peak memory, JSON lines."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))


def parse_args(description: str) -> argparse.Namespace:
    """``--quick`` (small sizes, under 30 s in all) and ``--n N`` (one size)."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--quick", action="store_true", help="small sizes only (under 30 s in all)")
    p.add_argument("--n", type=int, default=None, help="run one size only")
    p.add_argument("--repeat", type=int, default=3, help="timing repeats (best is reported)")
    return p.parse_args()


def timed(fn: Callable[[], Any], repeat: int = 3) -> tuple[float, Any]:
    """Best wall time of ``repeat`` calls and the last result."""
    best, out = float("inf"), None
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def peak_mb(fn: Callable[[], Any]) -> float:
    """Peak traced allocation (numpy buffers included) of one call, in MB."""
    tracemalloc.start()
    try:
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / 1e6


def emit(**fields: Any) -> None:
    """Print one JSON line (rounding floats)."""
    out = {k: (round(v, 6) if isinstance(v, float) else v) for k, v in fields.items()}
    print(json.dumps(out), flush=True)


def r_available() -> str | None:
    """None when Rscript and sdcMicro are there, else why not."""
    if shutil.which("Rscript") is None:
        return "Rscript not found: install R and sdcMicro with ../shared/tools/sdcmicro/install.sh"
    chk = subprocess.run(["Rscript", "-e", "suppressMessages(library(sdcMicro))"],
                         capture_output=True, text=True)
    if chk.returncode != 0:
        return "R package sdcMicro not installed: run ../shared/tools/sdcmicro/install.sh"
    return None
