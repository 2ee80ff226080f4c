"""Run an explore spec: sweep, refine, choose, and write the R-U map and the proposed release spec."""

from __future__ import annotations

import html
import json
import os
from dataclasses import dataclass
from pathlib import Path

import tomli_w

from ..io.atomic import atomic_write_bytes, atomic_write_text
from ..io.files import read_microdata
from ..microdata import Microdata
from .rumap import ru_map_html, ru_map_png
from .search import Proposal, choose, refine
from .spec import ExploreSpec, load_explore_spec
from .sweep import Sweep, SweepResult


@dataclass
class ExploreRun:
    """What ``sdckit explore`` did: its spec, the sweep's result, the proposed release (or None
    when no candidate met the threshold) and the files it wrote."""

    spec: ExploreSpec
    result: SweepResult
    proposal: Proposal | None
    paths: dict[str, Path]

    def to_dict(self) -> dict:
        s = self.result.summary()
        return {
            "chosen": None if self.proposal is None else {"method": self.proposal.method,
                                                          "params": self.proposal.params},
            "risk": None if self.proposal is None else self.proposal.risk,
            "utility": None if self.proposal is None else self.proposal.utility,
            "threshold": self.spec.threshold,
            "original_risk": self.result.original_risk,
            "spec_written": str(self.paths["spec"]) if "spec" in self.paths else None,
            "ru_map": str(self.paths["map_html"]),
            "ru_map_methods": list(dict.fromkeys(s["method"])),
            "n_settings": int(len(s)), "n_computed": self.result.n_computed, "n_cached": self.result.n_cached,
            "failures": self.result.failures().to_dict("records"),
        }

    def describe(self) -> str:
        d = self.to_dict()
        lines = [f"{d['n_settings']} settings x {len(self.spec.seeds)} seeds "
                 f"({d['n_computed']} computed, {d['n_cached']} from cache); "
                 f"original {self.spec.risk} risk {d['original_risk']:.4g}, threshold {d['threshold']:g}"]
        if self.proposal is None:
            lines.append("no candidate is below the threshold: widen the grids or lower the utility wanted")
        else:
            p = self.proposal
            lines.append(f"proposed: {p.method}({', '.join(f'{k}={v}' for k, v in p.params.items())}) "
                         f"risk {p.risk:.4g} ± {p.risk_sd:.2g}, utility {p.utility:.4g} ± {p.utility_sd:.2g}")
            lines.append(f"release spec written to {d['spec_written']} (run it with: sdckit protect)")
        for f in d["failures"]:
            lines.append(f"failed: {f['method']} {f['params']}: {f['error']}")
        lines.append(f"R-U map: {d['ru_map']}")
        return "\n".join(lines)


def proposed_spec_text(spec: ExploreSpec, proposal: Proposal) -> str:
    """The release spec of the proposal: the explore spec's release part plus the chosen step."""
    raw = {k: v for k, v in spec.raw.items() if k not in ("explore", "candidates")}
    raw["input"] = {**raw["input"], "path": str(spec.release.input_path.resolve())}
    out = dict(raw.get("output", {}))
    out["directory"] = str(spec.release.output.directory.resolve())
    raw["output"] = out
    raw["steps"] = [*raw.get("steps", []), {"method": proposal.method, **proposal.params}]
    # the proposed spec is gated on the search's own threshold and risk measure
    from .measures import GATE_FOR_RISK

    gate = dict(raw.get("gate", {}))
    if spec.risk in GATE_FOR_RISK:
        gate[GATE_FOR_RISK[spec.risk]] = spec.threshold
    raw["gate"] = gate
    header = (f"# Proposed by sdckit explore: {proposal.method} with risk {proposal.risk:.4g} "
              f"(threshold {spec.threshold:g}) and utility {proposal.utility:.4g}.\n")
    order = ["input", "roles", "run", "steps", "gate", "output"]
    return header + tomli_w.dumps(_toml_ready({k: raw[k] for k in order if k in raw}))


def _toml_ready(value):
    """``value`` with what TOML cannot hold taken out: None entries dropped (TOML has no null),
    numpy scalars as Python numbers, tuples as lists."""
    if isinstance(value, dict):
        return {str(k): _toml_ready(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [_toml_ready(v) for v in value if v is not None]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):  # numpy scalar
        return value.item()
    return value


def explore_page(run_summary, spec: ExploreSpec, result: SweepResult, proposal: Proposal | None) -> str:
    s = result.summary()
    rows = "".join(f"<tr><td>{html.escape(r.method)}</td><td>{html.escape(r.label)}</td>"
                   f"<td>{r.risk:.4g} ± {r.risk_sd:.2g}</td><td>{r.utility:.4g} ± {r.utility_sd:.2g}</td></tr>"
                   for r in s.itertuples())
    chosen = (f"<p>Proposed: <b>{html.escape(proposal.method)}</b> {html.escape(json.dumps(proposal.params))}, "
              f"risk {proposal.risk:.4g}, utility {proposal.utility:.4g}.</p>" if proposal else
              "<p><b>No candidate is below the threshold.</b></p>")
    return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'/><title>R-U map</title></head>"
            "<body style='font-family:sans-serif;max-width:980px;margin:2em auto'>"
            f"<h1>R-U confidentiality map</h1>{chosen}{run_summary}"
            "<table border='1' cellpadding='3' style='border-collapse:collapse'><tr><th>method</th>"
            f"<th>parameters</th><th>risk</th><th>utility</th></tr>{rows}</table></body></html>")


def run_explore_spec(spec: ExploreSpec | str | os.PathLike, *, microdata: Microdata | None = None,
                     progress: bool | None = None) -> ExploreRun:
    """Sweep the candidates, refine, choose, and write the map, the runs and the proposed spec."""
    if not isinstance(spec, ExploreSpec):
        spec = load_explore_spec(spec)
    rs = spec.release
    md = microdata or read_microdata(rs.input_path, file_format=rs.input_format,
                                     na_values=list(rs.na_values) or None, **rs.roles)
    sweep = Sweep(md, spec.candidates, risk=spec.risk, utility=spec.utility, pre_steps=rs.steps,
                  seeds=spec.seeds, n_jobs=spec.n_jobs, cache_dir=spec.directory / "cache_internal", progress=progress)
    result = sweep.run()
    if spec.refine:
        result = refine(sweep, result, list(spec.candidates), spec.threshold, spec.refine)
    summary = result.summary()
    proposal = choose(summary, spec.threshold)
    out = spec.directory
    out.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    kw = dict(threshold=spec.threshold, original_risk=result.original_risk, risk_name=spec.risk,
              utility_name=spec.utility, chosen=None if proposal is None else (proposal.utility, proposal.risk))
    paths["map_png"] = atomic_write_bytes(out / "ru_map.png", ru_map_png(summary, failures=result.failures(), **kw))
    paths["map_html"] = atomic_write_text(out / "ru_map.html",
                                          explore_page(ru_map_html(summary, **kw), spec, result, proposal))
    # every run with its seed: an internal file (seeds are secrets), never published
    paths["runs"] = atomic_write_text(out / "runs_internal.csv", result.runs.to_csv(index=False))
    if proposal is not None:
        paths["spec"] = atomic_write_text(out / "proposed_release.toml", proposed_spec_text(spec, proposal))
    return ExploreRun(spec, result, proposal, paths)
