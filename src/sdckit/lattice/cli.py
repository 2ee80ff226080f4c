"""``sdckit anonymise``: optimal generalisation of a file by lattice search (ARX's core).

This module only declares the command at import (``sdckit anonymise --help`` reads its options):
numpy, pandas and the numba kernels of the search load when the command runs, and typer only
where typer parses the command line (the thin parser of :mod:`sdckit.cli_dispatch` reads the
declarations without it).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from .._lazy import lazy_module
from ..errors import InputError

if TYPE_CHECKING:
    import pandas as pd
    import typer
else:
    typer = lazy_module("typer")  # the declarations below name it; typer reads them when it parses


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
                  time_limit: float | None = None, output: Path | None = None, arx_models: dict | None = None,
                  kernels: str | None = None, population: Path | None = None, dp: dict | None = None,
                  solution_space: bool = False, gs_factor: float = 0.5,
                  microaggregate: dict[str, str] | None = None) -> dict:
    """Run the search on a file; returns the JSON summary (and writes the release if asked).

    ``population`` is a population table (CSV or Parquet) of which the data are a research
    subset: k-map counts it and the journalist profitability models need it
    (:mod:`sdckit.lattice.population_table`).

    ``kernels`` fixes the search kernels' backend for the process ("numba" or "numpy"; default:
    numpy until the work outgrows it, see :mod:`sdckit.lattice._kernels`); the result is the same.

    ``gs_factor`` is ARX's generalisation/suppression factor of the metrics ARX weighs with it
    (:data:`sdckit.lattice.metrics_arx.GS_FACTOR_METRICS`); ``microaggregate`` maps columns (not among ``qis``) to a microaggregation function
    (:mod:`sdckit.lattice.microaggregation`).

    ``solution_space`` adds ``"solution_space"``: what the search knows about the lattice
    (:func:`sdckit.lattice.solution_space.describe_space`; ``sdckit anonymise --json`` sets it).
    """
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
    if kernels is not None:
        from . import _kernels

        _kernels.use(kernels)
    if output is not None:  # refuse an output over the input (or its links) before any work
        from ..io.atomic import check_writable_folder, guard_target, register_input  # noqa: PLC0415

        register_input(file)
        guard_target(output, (file,))
        check_writable_folder(Path(output).parent)
    data = _read(Path(file))
    if not qis:
        raise InputError("--qis: name the quasi-identifiers, comma-separated.")
    from .microaggregation import check_quality_settings, lattice_qis  # noqa: PLC0415

    check_quality_settings(metric, gs_factor, microaggregate, dp=dp is not None)
    qis = lattice_qis(qis, microaggregate, explicit=True)
    if dp is not None:   # (epsilon, delta)-DP by SafePub: the release holds the QI columns of the drawn records
        return _run_safepub(data, hierarchies, qis, dp, k=k, metric=metric, output=output, t0=t0)
    arx = {key: v for key, v in (arx_models or {}).items() if v is not None}
    game = arx.pop("game", None)   # the amounts of the profitability game (publisher_payout too)
    if game is not None:
        from .profitability import CostBenefit  # noqa: PLC0415

        arx["cost_benefit"] = CostBenefit(*(float(v) for v in game),
                                          journalist=str(arx.get("profitability")).startswith("journalist"))
    pop = None
    if population is not None:   # a research subset of a population table: k-map counts the table
        from .population_table import check_research_subset, read_population  # noqa: PLC0415

        pop = read_population(population, qis)
        check_research_subset(data, pop, qis, Path(population).name)
        arx.pop("k_map_estimator", None)
    elif str(arx.get("profitability")).startswith("journalist"):
        raise InputError(f"--profitability {arx['profitability']} needs the population table: give --population "
                         "(a file of which the data are a subset).")
    models = make_models(k=k, l=l, l_variant=l_variant, c=c, t=t, t_distance=t_distance, **arx)
    if any(m.needs_sensitive for m in models) and sensitive is None:
        raise InputError("--l, --t, --beta and --delta-disclosure need --sensitive (the sensitive attribute).")
    hier = find_hierarchies(hierarchies, qis)
    sh = read_hierarchy(sensitive_hierarchy) if sensitive_hierarchy else None
    problem = Problem(data, qis, hier, sensitive=sensitive, sensitive_hierarchy=sh, population=pop)
    from .microaggregation import prepare_problem  # noqa: PLC0415

    prepare_problem(problem, data, gs_factor=gs_factor, microaggregate=microaggregate)
    ev = Evaluator(problem, models, suppression, metric, cost_benefit=arx.get("cost_benefit"))
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
    out["gs_factor"] = gs_factor
    if microaggregate:
        out["microaggregated"] = dict(microaggregate)
    if pop is not None:
        out["population_records"] = len(pop)
    if metric in ("publisher_payout", "entropy_information_loss") or arx.get("profitability"):
        from .profitability import profitability_summary  # noqa: PLC0415

        out.update(profitability_summary(view, kept, ev.cost_benefit or arx.get("cost_benefit")))
    if solution_space:   # what the search knows about the lattice: counts, checked nodes, the chosen node's neighbours
        from .solution_space import describe_space  # noqa: PLC0415

        out["solution_space"] = describe_space(ev, res).to_dict()
    if output is not None:
        from ..io.atomic import atomic_write_text  # noqa: PLC0415

        frame, suppressed = generalise_frame(data, ev, res.levels)
        if microaggregate:
            from .microaggregation import microaggregate_frame  # noqa: PLC0415

            frame = microaggregate_frame(data, frame, suppressed, qis, microaggregate)
        atomic_write_text(output, frame.to_csv(index=False))
        out["output"] = str(output)
    return out


def _run_safepub(data: pd.DataFrame, hierarchies: Path, qis: list[str], dp: dict, *, k: int | None, metric: str,
                 output: Path | None, t0: float) -> dict:
    """``--epsilon``: SafePub on the QI columns (:mod:`sdckit.lattice.safepub`), fresh entropy;
    with ``--dp-levels``/``--dp-preset`` its data-independent variant (:mod:`sdckit.lattice.safepub_fixed`)."""
    import numpy as np

    from .hierarchies import find_hierarchies
    from .safepub import safepub
    from .safepub_step import FixedSafePubDP, SafePubDP

    if dp.get("type") == "safepub_fixed":
        from .safepub_fixed import safepub_fixed  # noqa: PLC0415

        fixed = FixedSafePubDP(**{key: v for key, v in dp.items() if key != "type"})
        out, res = safepub_fixed(data[qis], qis, find_hierarchies(hierarchies, qis), epsilon=fixed.epsilon,
                                 delta=fixed.delta, levels=fixed.levels, preset=fixed.preset,
                                 rng=np.random.default_rng(), min_k=k)
        summary = {"levels": res.level_map, "search": "none (levels given)", "dp": res.to_dict(),
                   "seconds": round(time.perf_counter() - t0, 4)}
    else:
        settings = SafePubDP(**{key: v for key, v in dp.items() if key != "type"})
        out, res = safepub(data[qis], qis, find_hierarchies(hierarchies, qis), epsilon=settings.epsilon,
                           delta=settings.delta, steps=settings.steps, epsilon_search=settings.search_budget,
                           metric=metric, rng=np.random.default_rng(), min_k=k)
        summary = {"levels": res.level_map, "metric": metric, "search": "safepub", "dp": res.to_dict(),
                   "seconds": round(time.perf_counter() - t0, 4)}
    if output is not None:
        from ..io.atomic import atomic_write_text  # noqa: PLC0415

        atomic_write_text(output, out.to_csv(index=False))
        summary["output"] = str(output)
    return summary


def _parse_levels(text: str | None) -> dict[str, int]:
    """``--dp-levels age=2,sex=0`` -> ``{"age": 2, "sex": 0}``."""
    out: dict[str, int] = {}
    for item in (text or "").split(","):
        if not item.strip():
            continue
        name, sep, level = item.partition("=")
        if not sep or not level.strip().isdigit():
            raise InputError(f"--dp-levels: {item.strip()!r} is not qi=level with a whole number >= 0 (e.g. age=2).")
        out[name.strip()] = int(level)
    return out


def anonymise_command(
    file: Annotated[Path, typer.Argument(help="Data file (CSV with a header, or Parquet).")],
    hierarchies: Annotated[Path, typer.Option("--hierarchies", help="Folder of hierarchy files *_<qi>.csv.")],
    qis: Annotated[str, typer.Option("--qis", help="Quasi-identifiers, comma-separated.")],
    k: Annotated[int | None, typer.Option("--k", help="k of k-anonymity.")] = None,
    suppression: Annotated[float, typer.Option("--suppression", help="Largest share of records suppressed.")] = 0.0,
    metric: Annotated[str, typer.Option("--metric", help="discernibility, loss (ARX's), loss_mean, precision, "
                                        "non_uniform_entropy, normalised_entropy, aecs, kl_divergence, dm_star, "
                                        "height, ambiguity, classification (needs --sensitive), "
                                        "publisher_payout or entropy_information_loss.")
                      ] = "discernibility",
    l: Annotated[float | None, typer.Option("--l", help="l of l-diversity (needs --sensitive).")] = None,
    l_variant: Annotated[str, typer.Option("--l-variant", help="distinct, entropy or recursive.")] = "distinct",
    c: Annotated[float | None, typer.Option("--c", help="c of recursive-(c,l)-diversity.")] = None,
    t: Annotated[float | None, typer.Option("--t", help="t of t-closeness (needs --sensitive).")] = None,
    t_distance: Annotated[str, typer.Option("--t-distance", help="equal, hierarchical or ordered.")] = "equal",
    k_map: Annotated[int | None, typer.Option("--k-map", help="k of k-map (needs --population or --population-size).")] = None,
    k_map_estimator: Annotated[str, typer.Option("--k-map-estimator",
                               help="poisson or zero_truncated_poisson.")] = "poisson",
    significance: Annotated[float, typer.Option("--significance", help="Significance of the k-map estimate.")
                            ] = 0.01,
    population_size: Annotated[float | None, typer.Option("--population-size",
                               help="Population size N (k-map, population uniqueness).")] = None,
    population: Annotated[Path | None, typer.Option("--population",
                          help="Population table (CSV or Parquet) of which the data are a subset: k-map "
                               "counts it; the journalist profitability models need it.")] = None,
    beta: Annotated[float | None, typer.Option("--beta", help="beta of beta-likeness (needs --sensitive).")] = None,
    beta_variant: Annotated[str, typer.Option("--beta-variant", help="basic or enhanced.")] = "basic",
    delta_disclosure: Annotated[float | None, typer.Option("--delta-disclosure",
                                help="delta of delta-disclosure privacy (needs --sensitive).")] = None,
    population_uniqueness: Annotated[float | None, typer.Option("--population-uniqueness",
                                     help="Largest estimated share of population uniques.")] = None,
    uniqueness_model: Annotated[str, typer.Option("--uniqueness-model",
                                help="zayatz, pitman, snb or dankar.")] = "dankar",
    profitability: Annotated[str, typer.Option("--profitability",
                             help="ARX's profitability model: none, prosecutor, prosecutor_no_attack, "
                                  "journalist or journalist_no_attack (these two need --population).")
                             ] = "none",
    publisher_benefit: Annotated[float, typer.Option("--publisher-benefit",
                                 help="Profitability game: the publisher's benefit per record.")] = 1200.0,
    publisher_loss: Annotated[float, typer.Option("--publisher-loss",
                              help="Profitability game: the publisher's loss per re-identified record.")] = 300.0,
    adversary_gain: Annotated[float, typer.Option("--adversary-gain",
                              help="Profitability game: the adversary's gain per re-identified record.")] = 300.0,
    adversary_cost: Annotated[float, typer.Option("--adversary-cost",
                              help="Profitability game: the adversary's cost per attacked record.")] = 4.0,
    sensitive: Annotated[str | None, typer.Option("--sensitive", help="Sensitive attribute.")] = None,
    sensitive_hierarchy: Annotated[Path | None, typer.Option("--sensitive-hierarchy",
                                   help="Hierarchy of the sensitive attribute.")] = None,
    method: Annotated[str, typer.Option("--search", help="exact, exhaustive, heuristic or anytime (best "
                                        "within --time-limit CPU seconds).")] = "exact",
    max_nodes: Annotated[int, typer.Option("--max-nodes", help="Node budget of the heuristic.")] = 2000,
    time_limit: Annotated[float | None, typer.Option("--time-limit", help="Seconds for the search.")] = None,
    output: Annotated[Path | None, typer.Option("--output", help="Write the released CSV here.")] = None,
    epsilon: Annotated[float | None, typer.Option("--epsilon", help="(epsilon, delta)-differential privacy by "
                       "SafePub: the budget; the release is the QI columns of the drawn records.")] = None,
    delta: Annotated[float, typer.Option("--delta", help="delta of (epsilon, delta)-DP (with --epsilon).")] = 1e-6,
    dp_steps: Annotated[int, typer.Option("--dp-steps", help="Steps of SafePub's private search.")] = 300,
    dp_levels: Annotated[str | None, typer.Option("--dp-levels", help="SafePub without a search (with --epsilon): "
                         "the level of each quasi-identifier, qi=level, comma-separated (e.g. age=2,sex=0); all "
                         "of epsilon sets beta and k.")] = None,
    dp_preset: Annotated[str | None, typer.Option("--dp-preset", help="With --epsilon, no search: ARX's "
                         "generalisation degree for the quasi-identifiers --dp-levels leaves out: none, low, "
                         "low_medium, medium, medium_high, high or complete.")] = None,
    gs_factor: Annotated[float, typer.Option("--gs-factor", help="ARX's generalisation/suppression factor of the "
                         "loss, classification, precision, AECS, payout and entropy-loss metrics, 0..1 (0: only generalisation counts, 1: only "
                         "suppression).")] = 0.5,
    microaggregate: Annotated[str | None, typer.Option("--microaggregate", help="Columns microaggregated instead "
                              "of generalised, not in --qis: column=function, comma-separated (arithmetic_mean, "
                              "geometric_mean, median, mode, interval).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of text.")] = False,
) -> None:
    """Find the generalisation with the least loss that satisfies the models (ARX-style lattice search)."""
    dp = None if epsilon is None else {"type": "safepub", "epsilon": epsilon, "delta": delta, "steps": dp_steps}
    if dp_levels is not None or dp_preset is not None:   # SafePub's data-independent variant
        if epsilon is None:
            raise InputError("--dp-levels and --dp-preset set SafePub's levels: give --epsilon as well.")
        dp = {"type": "safepub_fixed", "epsilon": epsilon, "delta": delta, "levels": _parse_levels(dp_levels),
              "preset": dp_preset}
    if all(v is None for v in (k, l, t, k_map, beta, delta_disclosure, population_uniqueness, epsilon)) and \
            profitability == "none":
        raise InputError("give a privacy model: --k, --l, --t, --k-map, --beta, --delta-disclosure, "
                         "--population-uniqueness or --profitability.")
    if profitability not in ("none", "prosecutor", "prosecutor_no_attack", "journalist", "journalist_no_attack"):
        raise InputError(f"--profitability must be none, prosecutor, prosecutor_no_attack, journalist or "
                         f"journalist_no_attack; got {profitability!r}.")
    if k is not None and k < 2:  # as the generalise step declares it: k = 1 protects nobody
        raise InputError(f"--k must be a whole number >= 2 (k of k-anonymity); got {k}.")
    qi_list = [v.strip() for v in qis.split(",") if v.strip()]
    if not 0.0 <= gs_factor <= 1.0:
        raise InputError(f"--gs-factor must lie in [0, 1]; got {gs_factor:g}.")
    micro = {}
    for item in (microaggregate or "").split(","):
        if item.strip():
            column, sep, function = item.partition("=")
            if not sep:
                raise InputError(f"--microaggregate: {item.strip()!r} is not column=function (e.g. age=arithmetic_mean).")
            micro[column.strip()] = function.strip()
    out = run_anonymise(file, hierarchies, qi_list, k=k, suppression=suppression, metric=metric, l=l,
                        l_variant=l_variant, c=c, t=t, t_distance=t_distance, sensitive=sensitive,
                        sensitive_hierarchy=sensitive_hierarchy, method=method, max_nodes=max_nodes,
                        time_limit=time_limit, output=output, population=population, solution_space=as_json,
                        gs_factor=gs_factor, microaggregate=micro,
                        dp=dp,
                        arx_models={"k_map": k_map, "population_size": population_size,
                                    "k_map_estimator": k_map_estimator if k_map is not None else None,
                                    "significance": significance, "beta": beta, "beta_variant": beta_variant,
                                    "delta_disclosure": delta_disclosure,
                                    "population_uniqueness": population_uniqueness,
                                    "uniqueness_model": uniqueness_model,
                                    "profitability": None if profitability == "none" else profitability,
                                    "game": (publisher_benefit, publisher_loss, adversary_gain, adversary_cost)})
    if as_json:
        from ..result import jsonable  # noqa: PLC0415

        print(json.dumps(jsonable(out)))
        return
    print("levels:        " + ", ".join(f"{q}={v}" for q, v in out["levels"].items()))
    if "dp" in out:
        d = out["dp"]
        print(f"SafePub: k = {d['k']}, beta = {d['beta']:.4g}; released {d['n_released']} records")
        return
    print(f"{metric}: {out['value']:.6g} (DM {out['dm']:.0f}), optimal: {out['optimal']}")
    print(f"suppressed:    {out['n_suppressed']} records; classes: {out['n_classes']}")
    print(f"nodes checked: {out['nodes_checked']} of {out['n_nodes']} in {out['search_seconds']} s")
