"""Running sdcMicro beside sdckit in tests: whether R and sdcMicro are there, and one Rscript run.

Tests that use it are skipped, with the reason, when ``Rscript`` or the R package sdcMicro is
missing (install both with ``../shared/tools/sdcmicro/install.sh``).
"""

from __future__ import annotations

import shutil
import subprocess
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=1)
def sdcmicro_missing() -> str | None:
    """None when Rscript and sdcMicro (with robustbase) load, else why not."""
    if shutil.which("Rscript") is None:
        return "Rscript not found: install R and sdcMicro with ../shared/tools/sdcmicro/install.sh"
    chk = subprocess.run(["Rscript", "-e", "suppressMessages({library(sdcMicro); library(robustbase)})"],
                         capture_output=True, text=True)
    if chk.returncode != 0:
        return "R package sdcMicro not installed: run ../shared/tools/sdcmicro/install.sh"
    return None


def run_r(script: str, workdir: Path) -> None:
    """Run ``script`` with Rscript, its working directory ``workdir``; raise with R's message."""
    path = workdir / "run.R"
    path.write_text("suppressPackageStartupMessages({library(sdcMicro); library(robustbase)})\n" + script)
    out = subprocess.run(["Rscript", str(path)], cwd=workdir, capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        raise RuntimeError(f"Rscript failed: {out.stderr[-2000:]}")
