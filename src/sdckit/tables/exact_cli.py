"""Plain functions behind ``sdckit table count | posterior | perturb`` (the command line wraps them).

Each returns one JSON-ready dict with stable keys, so ``--json`` prints it as is.
Tables are given as nested lists of integers or as the path of a CSV file of integers
(one table row per line, no header; ``#`` starts a comment).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import InputError
from ..result import jsonable
from .count import DEFAULT_MAX_MEMORY_GB, DEFAULT_TIME_LIMIT, as_count_array, count_tables_exact
from .cyclic import CyclicPerturbation, check_cycles, cycle_design
from .posterior import perturbation_posterior, prior_at_least

__all__ = ["count_command", "posterior_command", "perturb_command", "read_int_table", "parse_ints",
           "parse_cells"]


def parse_ints(text: str, name: str) -> list[int]:
    """``"20,55,25,35"`` -> ``[20, 55, 25, 35]`` with a clear error for a bad entry."""
    out = []
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        try:
            out.append(int(part))
        except ValueError:
            raise InputError(f"{name}: {part!r} is not a whole number; give comma-separated counts such as 20,55,25") from None
    if not out:
        raise InputError(f"{name} is empty; give comma-separated counts such as 20,55,25")
    return out


def parse_cells(text: str | None) -> list[tuple[int, int]] | None:
    """``"1,2;1,4"`` (1-based row,column pairs, as in the seed) -> ``[(0, 1), (0, 3)]``."""
    if not text:
        return None
    cells = []
    for part in text.split(";"):
        ij = parse_ints(part, "--cells")
        if len(ij) != 2 or min(ij) < 1:
            raise InputError(f"--cells: {part!r} must be a 1-based 'row,column' pair such as 1,2")
        cells.append((ij[0] - 1, ij[1] - 1))
    return cells


def read_int_table(source, name: str = "the table") -> np.ndarray:
    """A 2-way integer table from a nested list or a CSV path."""
    if isinstance(source, (str, Path)):
        path = Path(source)
        if not path.exists():
            raise InputError(f"{name}: file {str(path)!r} does not exist")
        if path.is_dir():
            raise InputError(f"{path}: is a folder, not a CSV file of integer cells")
        from ..io.atomic import register_input

        register_input(path)
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"{path}: is not a UTF-8 text file (byte {exc.start}); give a CSV of integer "
                             "cells, one table row per line") from None
        rows = []
        for k, line in enumerate(text.splitlines(), 1):
            line = line.split("#", 1)[0].strip()
            if line:
                rows.append(parse_ints(line, f"{path}, line {k}"))
        if len({len(r) for r in rows}) > 1:
            raise InputError(f"{path}: rows have different lengths {sorted({len(r) for r in rows})}")
        if not rows:
            raise InputError(f"{path}: holds no cells; give a CSV of integer cells, one table row per line")
        try:
            return as_count_array(rows, name, ndim=2)
        except InputError as exc:
            raise InputError(f"{path}: {exc}") from None
    return as_count_array(source, name, ndim=2)


def count_command(rows: list[int], cols: list[int], *, estimate: bool = False, n_samples: int = 10_000,
                  seed: int | None = None, method: str = "auto", time_limit: float | None = DEFAULT_TIME_LIMIT,
                  max_memory_gb: float | None = DEFAULT_MAX_MEMORY_GB) -> dict:
    """Number of tables with the given row and column sums.

    Exact (default): ``{"count", "method", "seconds", "cpu_seconds", "predicted_cpu_seconds",
    "predicted_memory_gb", "time_limit", "max_memory_gb"}`` where ``count`` is a JSON number up
    to ``2**53`` and a decimal string above (so no JSON reader rounds it). The cost is predicted
    before the count starts: a count predicted to need more than ``time_limit`` CPU seconds
    (``--time-limit``, default 600) or ``max_memory_gb`` GB (``--max-memory``, default 2) is
    refused at once with one line giving the prediction and the ``--estimate`` alternative.
    With ``estimate``:
    sequential importance sampling, ``{"estimate", "std_error", "ess", "log10_estimate",
    "n_samples", "seconds", ...}`` (``estimate`` and ``std_error`` are floats, or strings
    such as ``"2.45e+399"`` beyond the float range).
    """
    if estimate:
        from .sis import sis_count

        if int(n_samples) < 2:
            raise InputError(f"--samples: must be a whole number >= 2 (the sampled tables); got {n_samples}")

        return sis_count(rows, cols, n_samples=n_samples, rng=seed).to_dict()
    from .._validation import check_float

    for name, v in (("--time-limit", time_limit), ("--max-memory", max_memory_gb)):
        if v is not None:
            check_float("sdckit table count", name, v, low=0, low_open=True)
    out = count_tables_exact(rows, cols, method=method, time_limit=time_limit, max_memory_gb=max_memory_gb).to_dict()
    out.update(time_limit=time_limit, max_memory_gb=max_memory_gb)
    return out


def perturb_command(table, alpha: float = 0.25, beta: float = 0.25, design: str = "shift",
                    seed: int | None = None) -> dict:
    """Cyclically perturb a table: the published table, cycles, alpha and beta, and the checks.

    The seed (if given) is not echoed: it would let anyone undo the perturbation.
    """
    T = read_int_table(table)
    res = CyclicPerturbation(alpha=alpha, beta=beta, design=design).apply(T, rng=seed)
    out = res.published()
    out["n_cycles"] = len(res.cycles)
    out["guarantees"] = [g.to_dict() for g in res.guarantees]
    return jsonable(out)


def posterior_command(table, alpha: float = 0.25, beta: float = 0.25, design: str = "shift",
                      cycles=None, cells=None, at_least: str | None = None, model: str = "no-change") -> dict:
    """Posterior cell distributions of a cyclically perturbed table.

    Parameters
    ----------
    table : nested list or CSV path
        The published table.
    alpha, beta : float
        The published probabilities.
    design : str
        The published cycle design (``"shift"`` or ``"basic"``) when ``cycles`` is not given.
    cycles : array-like, optional
        The published cycles (``(n, R, C)``), in the order they were applied.
    cells : str or list of (row, column), optional
        Cells to report; a string uses 1-based ``"1,2;1,4"``; default all.
    at_least : str, optional
        Insider prior ``"row,col,value"`` (1-based cell): that cell is at least ``value``.
    model : {"no-change", "skip-cycle"}
        Rule near zero assumed by the likelihood (see
        :func:`sdckit.tables.posterior.perturbation_likelihood`).

    Returns
    -------
    dict
        ``{"method", "alpha", "beta", "n_candidates", "cells": {"1,2": [p_0, p_1, ...]}, "mode",
        "published", "mode_violations"}`` (cells 1-based as in the seed).
    """
    P = read_int_table(table, "the published table")
    cyc = cycle_design(P.shape, design) if cycles is None else check_cycles(cycles, P.shape)
    prior = None
    if at_least:
        parts = parse_ints(at_least, "--at-least")
        if len(parts) != 3 or min(parts[:2]) < 1:
            raise InputError(f"--at-least: {at_least!r} must be 'row,column,value' (1-based cell), such as 1,2,5")
        i, j, v = parts
        if not (i <= P.shape[0] and j <= P.shape[1]):
            raise InputError(f"--at-least: cell {i},{j} is outside the table, which has {P.shape[0]} rows "
                             f"and {P.shape[1]} columns (cells are 1-based row,column)")
        prior = prior_at_least((i - 1, j - 1), v)
    post = perturbation_posterior(P, cyc, alpha, beta, prior=prior, model=model)
    chosen = parse_cells(cells) if isinstance(cells, str) else ([tuple(c) for c in cells] if cells else None)
    chosen = chosen or list(np.ndindex(*P.shape))
    for i, j in chosen:
        if not (0 <= i < P.shape[0] and 0 <= j < P.shape[1]):
            raise InputError(f"--cells: cell {i + 1},{j + 1} is outside the table, which has {P.shape[0]} rows "
                             f"and {P.shape[1]} columns (cells are 1-based row,column)")
    return jsonable({"method": post.method, "model": model, "alpha": alpha, "beta": beta, "n_cycles": len(cyc),
                     "n_candidates": post.n_candidates,
                     "cells": {f"{i + 1},{j + 1}": [round(float(p), 6) for p in post.cell((i, j))] for i, j in chosen},
                     "mode": post.mode(), "published": P,
                     "mode_violations": [{**v, "cell": [c + 1 for c in v["cell"]]} for v in post.mode_violations()]})
