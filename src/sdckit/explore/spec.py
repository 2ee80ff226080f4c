"""The explore spec: a release spec plus ``[explore]`` settings and ``[[candidates]]``.

::

    [input] / [roles] / [run] / [[steps]] / [gate] / [output]   # as in a release spec;
                                                                # [[steps]] run before every candidate
    [explore]
    risk = "linkage"        # risk measure (lower is safer)
    utility = "entropy"     # utility measure (1 = original)
    threshold = 0.02        # the highest acceptable risk
    seeds = [1, 2, 3]       # seeds per setting
    refine = 4              # bisection steps on the chosen method's numeric parameter
    directory = "explore"   # where the map, the runs and the proposed spec are written

    [[candidates]]
    method = "local_suppression"
    grid = { k = [2, 3, 5, 10] }            # optional: default, the step's declared grid
    fixed = { importance = [1, 2, 3] }      # optional settings kept constant

Grid values are checked one by one against the step's parameter declarations
(:mod:`sdckit.params`) before any combination is built; without ``grid`` a candidate sweeps
the declared grid of the step's main parameter (:func:`sdckit.explore.sweep.default_grid`).
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from ..errors import ParameterError, SpecError
from ..params import check_value, step_params
from ..registry import step_class
from ..spec import ReleaseSpec, spec_from_dict
from .sweep import Candidate, default_grid

#: the keys of ``[explore]`` (``sdckit protect --help`` lists them)
EXPLORE_KEYS = frozenset({"risk", "utility", "threshold", "seeds", "refine", "directory", "n_jobs"})
_EXPLORE = EXPLORE_KEYS
#: the keys of each ``[[candidates]]`` table
CANDIDATE_KEYS = frozenset({"method", "grid", "fixed"})


@dataclass(frozen=True)
class ExploreSpec:
    release: ReleaseSpec
    candidates: tuple[Candidate, ...]
    risk: str
    utility: str
    threshold: float
    seeds: tuple[int, ...]
    refine: int
    directory: Path
    n_jobs: int | None
    base_dir: Path
    raw: dict


def explore_spec_from_dict(raw: dict, *, base_dir: str | os.PathLike = ".", source: str | None = None) -> ExploreSpec:
    base_dir = Path(base_dir)
    raw = dict(raw)
    ex = raw.pop("explore", None)
    cands = raw.pop("candidates", None)
    if not isinstance(ex, dict):
        raise SpecError("explore: is required (a table with risk, utility, threshold)")
    for key in ex:
        if key not in _EXPLORE:
            raise SpecError(f"explore.{key}: unknown key; the valid ones are {', '.join(sorted(_EXPLORE))}")
    if "threshold" not in ex or isinstance(ex["threshold"], bool) or not isinstance(ex["threshold"], (int, float)) \
            or not ex["threshold"] > 0:
        raise SpecError(f"explore.threshold: must be a number > 0, got {ex.get('threshold')!r}")
    seeds = ex.get("seeds", [1, 2, 3])
    if not isinstance(seeds, list) or not seeds or not all(isinstance(s, int) and s >= 0 for s in seeds):
        raise SpecError(f"explore.seeds: must be a non-empty list of ints >= 0, got {seeds!r}")
    refine = ex.get("refine", 4)
    if not isinstance(refine, int) or refine < 0:
        raise SpecError(f"explore.refine: must be an int >= 0, got {refine!r}")
    if not isinstance(cands, list) or not cands:
        raise SpecError("candidates: at least one [[candidates]] table with method and grid is required")
    candidates = []
    for i, c in enumerate(cands):
        if not isinstance(c, dict) or "method" not in c:
            raise SpecError(f"candidates[{i}].method: is required")
        extra = set(c) - CANDIDATE_KEYS
        if extra:
            raise SpecError(f"candidates[{i}].{sorted(extra)[0]}: unknown key; the valid ones are fixed, grid, method")
        declared = {p.name: p for p in step_params(step_class(c["method"], where=f"candidates[{i}].method"))}
        fixed = dict(c.get("fixed", {}))
        grid = c["grid"] if "grid" in c else default_grid(c["method"], fixed)
        if not isinstance(grid, dict):
            raise SpecError(f"candidates[{i}].grid: must be a table of lists, got {grid!r}")
        for name, values in grid.items():
            if not isinstance(values, list) or not values:
                raise SpecError(f"candidates[{i}].grid.{name}: must be a non-empty list of values, got {values!r}")
            if name not in declared:
                raise SpecError(f"candidates[{i}].grid.{name}: unknown parameter of step {c['method']!r}; "
                                f"the valid ones are {', '.join(sorted(declared))}")
            for value in values:  # each value against its declaration, before any combination
                try:
                    check_value(c["method"], declared[name], value)
                except ParameterError as exc:
                    raise SpecError(f"candidates[{i}].{name}: must be {exc.rule}, got {value!r}") from None
        for key, value in fixed.items():  # file parameters are relative to the spec, as in steps
            if key.endswith("_file") and isinstance(value, str) and not Path(value).is_absolute():
                fixed[key] = str(base_dir / value)
        cand = Candidate(c["method"], dict(grid), fixed)
        # validate every setting now, so a typo fails before any work starts
        from ..registry import build_step
        for params in cand.settings():
            build_step(cand.method, params, where=f"candidates[{i}]")
        candidates.append(cand)
    release = spec_from_dict(raw, base_dir=base_dir, source=source)
    from .measures import get_measure
    for kind in ("risk", "utility"):
        try:
            get_measure(kind, ex.get(kind, "linkage" if kind == "risk" else "entropy"))
        except Exception as exc:
            raise SpecError(f"explore.{kind}: {exc}") from None
    directory = Path(ex.get("directory", "explore"))
    return ExploreSpec(release, tuple(candidates), ex.get("risk", "linkage"), ex.get("utility", "entropy"),
                       float(ex["threshold"]), tuple(seeds), refine,
                       directory if directory.is_absolute() else base_dir / directory,
                       ex.get("n_jobs"), base_dir, {**raw, "explore": ex, "candidates": cands})


def load_explore_spec(path: str | os.PathLike) -> ExploreSpec:
    path = Path(path)
    if not path.exists():
        raise SpecError(f"{path}: no such spec file; check the path.")
    try:
        raw = tomllib.loads(path.read_text("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{path}: is not valid TOML: {exc}") from None
    try:
        return explore_spec_from_dict(raw, base_dir=path.parent, source=str(path))
    except SpecError as exc:
        raise SpecError(f"{path}: {exc}") from None
