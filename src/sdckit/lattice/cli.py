"""``sdckit anonymise``: optimal generalisation of a file by lattice search (ARX's core).

This module only declares the command at import (``sdckit --help`` reads its options): numpy,
pandas and the numba kernels of the search load when the command runs.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import InputError

if TYPE_CHECKING:
    import pandas as pd


def _read(path: Path) -> pd.DataFrame:
    import pandas as pd

    if not path.exists():
        raise InputError(f"{path}: no such data file.")
    if path.suffix.lower() in (".parquet", ".pq"):
        return pd.read_parquet(path).astype(str)
    with open(path, encoding="utf-8-sig", errors="replace") as f:  # the header line, not the whole file
        sep = ";" if ";" in f.readline() else ","
    return pd.read_csv(path, dtype=str, keep_default_na=False, sep=sep, encoding="utf-8-sig")


def run_anonymise(file: Path, hierarchies: Path, qis: list[str], *, k: int | None, suppression: float,
                  metric: str, l: float | None = None, l_variant: str = "distinct", c: float | None = None,
                  t: float | None = None, t_distance: str = "equal", sensitive: str | None = None,
                  sensitive_hierarchy: Path | None = None, method: str = "exact", max_nodes: int = 2000,
                  time_limit: float | None = None, output: Path | None = None, arx_models: dict | None = None) -> dict:
    """Run the search on a file; returns the JSON summary (and writes the release if asked)."""
    import numpy as np

    from .hierarchies import find_hierarchies, read_hierarchy
    from .metrics import metric_value
    from .models import NodeView
    from .models_arx import make_models
    from .problem import Problem
    from .search import Evaluator
    from .searches import search
    from .transform import generalise_frame

    t0 = time.perf_counter()
    if output is not None:  # refuse an output over the input (or its links) before any work
        from ..io.atomic import check_writable_folder, guard_target, register_input  # noqa: PLC0415

        register_input(file)
        guard_target(output, (file,))
        check_writable_folder(Path(output).parent)
    data = _read(Path(file))
    if not qis:
        raise InputError("--qis: name the quasi-identifiers, comma-separated.")
    arx = {key: v for key, v in (arx_models or {}).items() if v is not None}
    models = make_models(k=k, l=l, l_variant=l_variant, c=c, t=t, t_distance=t_distance, **arx)
    if any(m.needs_sensitive for m in models) and sensitive is None:
        raise InputError("--l, --t, --beta and --delta-disclosure need --sensitive (the sensitive attribute).")
    hier = find_hierarchies(hierarchies, qis)
    sh = read_hierarchy(sensitive_hierarchy) if sensitive_hierarchy else None
    problem = Problem(data, qis, hier, sensitive=sensitive, sensitive_hierarchy=sh)
    ev = Evaluator(problem, models, suppression, metric)
    res = search(ev, method, max_nodes=max_nodes if method != "anytime" or max_nodes != 2000 else None,
                 time_limit=time_limit)
    lv = np.asarray(res.levels)
    view = NodeView(problem, lv, problem.table(lv))
    kept = np.ones(view.table.n_classes, dtype=bool)
    for m in models:
        if m.class_based:
            kept &= m.class_ok(view)
    out = {"levels": res.level_map(), "dm": metric_value("discernibility", view, kept),
           "n_suppressed": res.n_suppressed, "n_classes": res.n_classes, "nodes_checked": res.nodes_checked,
           "optimal": res.optimal, "seconds": round(time.perf_counter() - t0, 4),
           "search_seconds": round(res.seconds, 4), "metric": metric, "value": res.value, "bound": res.bound,
           "n_nodes": res.n_nodes, "n_patterns": res.n_patterns, "search": res.method}
    if res.events:   # the anytime search's progress: best, bound and gap along the run
        out["events"] = list(res.events)
    if output is not None:
        from ..io.atomic import atomic_write_text  # noqa: PLC0415

        frame, _ = generalise_frame(data, ev, res.levels)
        atomic_write_text(output, frame.to_csv(index=False))
        out["output"] = str(output)
    return out


def anonymise_command(
    file: Annotated[Path, typer.Argument(help="Data file (CSV with a header, or Parquet).")],
    hierarchies: Annotated[Path, typer.Option("--hierarchies", help="Folder of hierarchy files *_<qi>.csv.")],
    qis: Annotated[str, typer.Option("--qis", help="Quasi-identifiers, comma-separated.")],
    k: Annotated[int | None, typer.Option("--k", help="k of k-anonymity.")] = None,
    suppression: Annotated[float, typer.Option("--suppression", help="Largest share of records suppressed.")] = 0.0,
    metric: Annotated[str, typer.Option("--metric", help="discernibility, loss (ARX's), loss_mean, precision, "
                                        "non_uniform_entropy, normalised_entropy, aecs, kl_divergence, dm_star, "
                                        "height, ambiguity or classification (needs --sensitive).")
                      ] = "discernibility",
    l: Annotated[float | None, typer.Option("--l", help="l of l-diversity (needs --sensitive).")] = None,
    l_variant: Annotated[str, typer.Option("--l-variant", help="distinct, entropy or recursive.")] = "distinct",
    c: Annotated[float | None, typer.Option("--c", help="c of recursive-(c,l)-diversity.")] = None,
    t: Annotated[float | None, typer.Option("--t", help="t of t-closeness (needs --sensitive).")] = None,
    t_distance: Annotated[str, typer.Option("--t-distance", help="equal, hierarchical or ordered.")] = "equal",
    k_map: Annotated[int | None, typer.Option("--k-map", help="k of k-map (needs --population-size).")] = None,
    k_map_estimator: Annotated[str, typer.Option("--k-map-estimator",
                               help="poisson or zero_truncated_poisson.")] = "poisson",
    significance: Annotated[float, typer.Option("--significance", help="Significance of the k-map estimate.")
                            ] = 0.01,
    population_size: Annotated[float | None, typer.Option("--population-size",
                               help="Population size N (k-map, population uniqueness).")] = None,
    beta: Annotated[float | None, typer.Option("--beta", help="beta of beta-likeness (needs --sensitive).")] = None,
    beta_variant: Annotated[str, typer.Option("--beta-variant", help="basic or enhanced.")] = "basic",
    delta_disclosure: Annotated[float | None, typer.Option("--delta-disclosure",
                                help="delta of delta-disclosure privacy (needs --sensitive).")] = None,
    population_uniqueness: Annotated[float | None, typer.Option("--population-uniqueness",
                                     help="Largest estimated share of population uniques.")] = None,
    uniqueness_model: Annotated[str, typer.Option("--uniqueness-model",
                                help="zayatz, pitman, snb or dankar.")] = "dankar",
    sensitive: Annotated[str | None, typer.Option("--sensitive", help="Sensitive attribute.")] = None,
    sensitive_hierarchy: Annotated[Path | None, typer.Option("--sensitive-hierarchy",
                                   help="Hierarchy of the sensitive attribute.")] = None,
    method: Annotated[str, typer.Option("--search", help="exact, exhaustive, heuristic or anytime (best "
                                        "within --time-limit CPU seconds).")] = "exact",
    max_nodes: Annotated[int, typer.Option("--max-nodes", help="Node budget of the heuristic.")] = 2000,
    time_limit: Annotated[float | None, typer.Option("--time-limit", help="Seconds for the search.")] = None,
    output: Annotated[Path | None, typer.Option("--output", help="Write the released CSV here.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of text.")] = False,
) -> None:
    """Find the generalisation with the least loss that satisfies the models (ARX-style lattice search)."""
    if all(v is None for v in (k, l, t, k_map, beta, delta_disclosure, population_uniqueness)):
        raise InputError("give a privacy model: --k, --l, --t, --k-map, --beta, --delta-disclosure or "
                         "--population-uniqueness.")
    if k is not None and k < 2:  # as the generalise step declares it: k = 1 protects nobody
        raise InputError(f"--k must be a whole number >= 2 (k of k-anonymity); got {k}.")
    qi_list = [v.strip() for v in qis.split(",") if v.strip()]
    out = run_anonymise(file, hierarchies, qi_list, k=k, suppression=suppression, metric=metric, l=l,
                        l_variant=l_variant, c=c, t=t, t_distance=t_distance, sensitive=sensitive,
                        sensitive_hierarchy=sensitive_hierarchy, method=method, max_nodes=max_nodes,
                        time_limit=time_limit, output=output,
                        arx_models={"k_map": k_map, "population_size": population_size,
                                    "k_map_estimator": k_map_estimator if k_map is not None else None,
                                    "significance": significance, "beta": beta, "beta_variant": beta_variant,
                                    "delta_disclosure": delta_disclosure,
                                    "population_uniqueness": population_uniqueness,
                                    "uniqueness_model": uniqueness_model})
    if as_json:
        from ..result import jsonable  # noqa: PLC0415

        typer.echo(json.dumps(jsonable(out)))
        return
    typer.echo("levels:        " + ", ".join(f"{q}={v}" for q, v in out["levels"].items()))
    typer.echo(f"{metric}: {out['value']:.6g} (DM {out['dm']:.0f}), optimal: {out['optimal']}")
    typer.echo(f"suppressed:    {out['n_suppressed']} records; classes: {out['n_classes']}")
    typer.echo(f"nodes checked: {out['nodes_checked']} of {out['n_nodes']} in {out['search_seconds']} s")
