"""The bundled demo release written once per test module, with a small R-U map sweep.

The full ``sdckit demo`` runs a long sweep; these helpers write the same release (same spec,
same seed) with a two-setting sweep so the report, certificate and browser tests stay fast.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

BROWSER_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def demo_spec(out_dir: Path):
    from sdckit.cli import demo_spec_dict
    from sdckit.spec import spec_from_dict

    raw, data_dir = demo_spec_dict(out_dir)
    return spec_from_dict(raw, base_dir=data_dir, source="bundled demo_release.toml"), data_dir


def write_demo_release(out_dir: Path, *, with_map: bool = True):
    """Run the demo release and write it to ``out_dir``; returns (run, paths, map figures)."""
    from sdckit.explore.rumap import release_ru_map_section
    from sdckit.explore.sweep import Candidate, Sweep
    from sdckit.release import Release

    spec, data_dir = demo_spec(out_dir)
    run = Release.from_spec(spec).run()
    sections, figures = [], None
    if with_map:
        xraw = tomllib.loads((data_dir / "demo_explore.toml").read_text("utf-8"))
        risk, utility = xraw["explore"]["risk"], xraw["explore"]["utility"]
        sweep = Sweep(run.original, [Candidate("local_suppression", {"k": [2, 5]})], risk=risk, utility=utility,
                      pre_steps=spec.steps[:1], seeds=[1], n_jobs=1, progress=False)
        res = sweep.run()
        html, figures = release_ru_map_section(run, res.summary(), original_risk=res.original_risk,
                                               risk_name=risk, utility_name=utility,
                                               threshold=xraw["explore"]["threshold"])
        sections.append(("R-U confidentiality map", html))
    paths = run.write(spec.output, extra_sections=sections)
    return run, paths, figures


def chromium_or_skip():
    import shutil

    import pytest

    path = shutil.which("chromium")
    if path is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    try:
        import playwright  # noqa: F401
    except ImportError:
        pytest.skip("playwright is not installed")
    return path
