"""Parameter sweeps: run candidate methods over parameter grids and seeds, measure risk and
utility of each release, in parallel, with results cached on disk.

A re-run computes only what changed: each (data, fixed steps, method, parameters, seed,
measures, sdckit version) has its own cache file.
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import itertools
import json
import multiprocessing
import os
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import InputError
from ..io.atomic import atomic_write_text
from ..microdata import Microdata
from ..registry import build_step
from ..result import jsonable
from ..risk.intruder import intruder_view
from ..utility.frontier import pareto_front  # noqa: F401  (explore's name for it)
from .measures import get_measure


@dataclass(frozen=True)
class Candidate:
    """One method with a grid: every combination of ``grid`` values, plus ``fixed`` settings."""

    method: str
    grid: dict[str, list] = field(default_factory=dict)
    fixed: dict[str, Any] = field(default_factory=dict)

    def settings(self) -> list[dict[str, Any]]:
        if not self.grid:
            return [dict(self.fixed)]
        names = list(self.grid)
        for name in names:
            if not isinstance(self.grid[name], list) or not self.grid[name]:
                raise InputError(f"candidates[{self.method}].grid.{name}: must be a non-empty list of "
                                 f"values, got {self.grid[name]!r}")
        return [{**self.fixed, **dict(zip(names, combo))}
                for combo in itertools.product(*(self.grid[n] for n in names))]


def default_grid(method: str, fixed: dict[str, Any] | None = None) -> dict[str, list]:
    """The grid a candidate sweeps when its spec gives none: the declared ``grid`` of the step's
    first parameter that has one and is not in ``fixed`` (:func:`sdckit.params.param`), or no
    grid (one setting) when the step declares none."""
    from ..params import step_params
    from ..registry import step_class

    fixed = fixed or {}
    for p in step_params(step_class(method, where=f"candidates[{method}].method")):
        if p.grid and p.name not in fixed:
            return {p.name: list(p.grid)}
    return {}


def _label(params: dict) -> str:
    """A setting as text for maps and tables: file parameters by their names only."""
    from ..result import public_params

    return ", ".join(f"{k}={v}" for k, v in public_params(dict(params)).items())


def data_fingerprint(md: Microdata) -> str:
    """A hash of the records and the roles (what every cached result depends on)."""
    h = hashlib.sha256()
    h.update(pd.util.hash_pandas_object(md.frame, index=False).to_numpy().tobytes())
    h.update(json.dumps(md.to_dict()["roles"], sort_keys=True).encode())
    return h.hexdigest()


# state shared with worker processes (fork): set before the pool starts
_STATE: dict[str, Any] = {}


def _evaluate(task: tuple[str, dict, int]) -> dict:
    from ..runner import run_steps

    method, params, seed = task
    original: Microdata = _STATE["original"]
    pre = _STATE["pre_steps"]
    t0 = time.perf_counter()
    try:
        step = build_step(method, params, where=f"candidate {method}({_label(params)})")
        # the release's own run of [pre-steps, candidate] with this seed (the one runner and
        # its seed rule); the pre-steps' results come from the cache filled before the pool
        released = run_steps(original, [*pre, step], seed, cache=_STATE["cache"]).released
        view = intruder_view(original, [*pre, step])
        risk = _STATE["risk"](original, released, view)
        utility = _STATE["utility"](original, released, view)
        return {"risk": risk, "utility": utility, "seconds": time.perf_counter() - t0, "error": None}
    except Exception as exc:  # a failing candidate is reported, the others go on
        return {"risk": None, "utility": None, "seconds": time.perf_counter() - t0,
                "error": f"{type(exc).__name__}: {exc}"}


@dataclass
class SweepResult:
    """Every evaluated (method, parameters, seed) and the summary over seeds."""

    runs: pd.DataFrame
    original_risk: float
    risk_measure: str
    utility_measure: str
    n_computed: int
    n_cached: int

    def summary(self) -> pd.DataFrame:
        """Mean and sd of risk and utility per (method, parameters); failed ones keep their error."""
        ok = self.runs[self.runs["error"].isna()]
        g = ok.groupby(["method", "params"], sort=False)
        s = g.agg(risk=("risk", "mean"), risk_sd=("risk", "std"), utility=("utility", "mean"),
                  utility_sd=("utility", "std"), n_seeds=("seed", "count")).reset_index()
        s[["risk_sd", "utility_sd"]] = s[["risk_sd", "utility_sd"]].fillna(0.0)
        s["label"] = [_label(json.loads(p)) for p in s["params"]]
        return s

    def failures(self) -> pd.DataFrame:
        bad = self.runs[self.runs["error"].notna()]
        return bad.drop_duplicates(["method", "params"])[["method", "params", "error"]]


class Sweep:
    """Run candidates over their grids and seeds on a Microdata after fixed pre-steps.

    Parameters
    ----------
    microdata : Microdata
        The original data.
    candidates : list of Candidate
    risk, utility : str
        Measure names (:mod:`sdckit.explore.measures`).
    pre_steps : list of steps
        Applied once before every candidate (e.g. removing identifiers, fixed recodes).
    seeds : list of int
        Seeds per setting (random methods are summarised by mean and sd over them). Seed s
        runs the pre-steps and the candidate exactly as a release of those steps with
        ``seed = s`` does (:func:`sdckit.runner.run_steps`: step i draws from child i).
    n_jobs : int
        Worker processes (default: the machine's cores).
    cache_dir : path, optional
        Where results are cached; None disables the cache.
    """

    def __init__(self, microdata: Microdata, candidates: Sequence[Candidate], *, risk: str = "linkage",
                 utility: str = "entropy", pre_steps: Sequence[Any] = (), seeds: Sequence[int] = (1, 2, 3),
                 n_jobs: int | None = None, cache_dir: str | os.PathLike | None = None,
                 progress: bool | None = None) -> None:
        if not candidates:
            raise InputError("explore: no candidates given; add [[candidates]] with a method and a grid.")
        self.microdata = microdata
        self.candidates = list(candidates)
        self.risk_name, self.utility_name = risk, utility
        self.risk, self.utility = get_measure("risk", risk), get_measure("utility", utility)
        self.pre_steps = list(pre_steps)
        self.seeds = [int(s) for s in seeds]
        self.n_jobs = max(1, n_jobs or os.cpu_count() or 1)
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.progress = sys.stderr.isatty() if progress is None else progress

    def _cache_key(self, fingerprint: str, method: str, params: dict, seed: int) -> str:
        from .. import __version__
        # "seeds": the rule of the one step runner (sdckit.runner): results of the older rule
        # (pre-steps with seed 0, the candidate with the seed itself) are not reused
        blob = json.dumps({"data": fingerprint, "pre": [repr(s) for s in self.pre_steps], "method": method,
                           "seeds": "runner",
                           "params": jsonable(params), "seed": seed, "risk": self.risk_name,
                           "utility": self.utility_name, "version": __version__}, sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()

    def tasks(self) -> list[tuple[str, dict, int]]:
        return [(c.method, params, seed) for c in self.candidates for params in c.settings() for seed in self.seeds]

    def run(self, tasks: Iterable[tuple[str, dict, int]] | None = None) -> SweepResult:
        tasks = list(tasks if tasks is not None else self.tasks())
        _STATE.update(original=self.microdata, pre_steps=self.pre_steps, cache=None,
                      risk=self.risk, utility=self.utility)
        fingerprint = data_fingerprint(self.microdata)
        rows: list[dict | None] = [None] * len(tasks)
        todo = []
        for i, (method, params, seed) in enumerate(tasks):
            key = self._cache_key(fingerprint, method, params, seed)
            path = self.cache_dir / f"{key}.json" if self.cache_dir else None
            if path is not None and path.exists():
                rows[i] = {**json.loads(path.read_text()), "cached": True}
            else:
                todo.append((i, path))
        if todo and self.pre_steps:
            from ..runner import StepCache, run_steps

            # the pre-steps once per seed, before the workers fork (they inherit the cache)
            cache = StepCache(maxsize=max(64, len(self.pre_steps) * len(self.seeds) + 1))
            for seed in dict.fromkeys(tasks[i][2] for i, _ in todo):
                run_steps(self.microdata, self.pre_steps, seed, cache=cache)
            _STATE["cache"] = cache
        results = self._compute([tasks[i] for i, _ in todo])
        for (i, path), res in zip(todo, results):
            rows[i] = {**res, "cached": False}
            if path is not None and res["error"] is None:
                atomic_write_text(path, json.dumps(res))
        runs = pd.DataFrame([{"method": m, "params": json.dumps(jsonable(p), sort_keys=False), "seed": s, **r}
                             for (m, p, s), r in zip(tasks, rows)])
        view = self.microdata.frame[list(self.microdata.key_vars)]
        original_risk = self.risk(self.microdata, self.microdata, view)
        return SweepResult(runs, original_risk, self.risk_name, self.utility_name, len(todo), len(tasks) - len(todo))

    def _compute(self, tasks: list[tuple[str, dict, int]]) -> list[dict]:
        if not tasks:
            return []
        from contextlib import nullcontext

        from ..progress import disable_bars, task

        # runs done out of total with an ETA: a bar on a terminal, events for listeners
        with (nullcontext() if self.progress else disable_bars()), \
                task("explore sweep", total=len(tasks)) as bar:
            if self.n_jobs == 1 or len(tasks) == 1:
                out = []
                for t in tasks:
                    out.append(_evaluate(t))
                    bar.advance()
                return out
            ctx = multiprocessing.get_context("fork")
            with cf.ProcessPoolExecutor(max_workers=self.n_jobs, mp_context=ctx) as pool:
                futures = [pool.submit(_evaluate, t) for t in tasks]
                for _ in cf.as_completed(futures):
                    bar.advance()
                return [f.result() for f in futures]
