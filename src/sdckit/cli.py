"""The ``sdckit`` command: risk, protect, explore, report, table, estimate, demo.

Every command has ``--json`` (one JSON object with stable keys). Errors print one line
without a traceback and exit non-zero: 2 for bad input, 3 for a failed gate, 4 for a solver
failure, 1 for an unexpected error (set SDCKIT_DEBUG=1 for the traceback).
"""

from __future__ import annotations

import json
import os
import sys
import time
import tomllib
import warnings
from importlib import resources
from pathlib import Path
from typing import Annotated, Optional

import typer

from . import __version__
from .errors import SDCError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="sdckit: statistical disclosure control for microdata and tables.")

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object instead of text.")]


def _emit(obj: dict) -> None:
    from .result import jsonable

    typer.echo(json.dumps(jsonable(obj), sort_keys=False))


def _version(value: bool) -> None:
    if value:
        typer.echo(f"sdckit {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(version: Annotated[Optional[bool], typer.Option("--version", callback=_version, is_eager=True,
                                                          help="Print the version and exit.")] = None) -> None:
    """sdckit: statistical disclosure control for microdata and tables."""


def _split(value: str | None) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()] if value else []


@app.command()
def risk(
    file: Annotated[Path, typer.Argument(help="Data file (CSV, Parquet, SPSS, Stata, SAS).")],
    keys: Annotated[str, typer.Option("--keys", help="Key variables, comma-separated.")],
    weight: Annotated[Optional[str], typer.Option("--weight", help="Sampling weight column.")] = None,
    household: Annotated[Optional[str], typer.Option("--household", help="Household id column.")] = None,
    sensitive: Annotated[Optional[str], typer.Option("--sensitive", help="Sensitive variables, comma-separated.")] = None,
    suda: Annotated[bool, typer.Option("--suda", help="Also compute SUDA2 scores.")] = False,
    suda_max_size: Annotated[Optional[int], typer.Option("--suda-max-size", help="Largest MSU size searched.")] = None,
    missing_alpha: Annotated[float, typer.Option("--missing-alpha", help="Weight of missing-value matches (sdcMicro's alpha).")] = 1.0,
    na_values: Annotated[Optional[str], typer.Option("--na-values", help="Codes meaning missing, comma-separated (e.g. -9).")] = None,
    uniqueness: Annotated[Optional[int], typer.Option("--uniqueness", help="Tabulate uniqueness by combination of up to M key variables.")] = None,
    risk_method: Annotated[str, typer.Option("--risk-method", help="Individual risk for f_k >= 3: approx or exact.")] = "approx",
    max_global_risk: Annotated[float, typer.Option("--max-global-risk", help="Target global risk for the individual-risk threshold.")] = 0.01,
    output: Annotated[Optional[Path], typer.Option("--output", help="Write per-record risk to this file.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Measure the disclosure risk of a data file on its key variables."""
    from .io.files import read_microdata, write_data
    from .risk.report import measure_risk

    t0 = time.perf_counter()
    key_list = _split(keys)
    if not key_list:
        raise SDCError("--keys: name at least one key variable, e.g. --keys age,sex,region")
    na = [_parse_scalar(v) for v in _split(na_values)] or None
    md = read_microdata(file, na_values=na, key_vars=key_list, weight=weight, household=household,
                        sensitive=_split(sensitive))
    kwargs = {}
    if suda:
        kwargs["suda"] = True
        if suda_max_size is not None:
            kwargs["suda_max_size"] = suda_max_size
    if missing_alpha != 1.0:
        kwargs["missing_alpha"] = missing_alpha
    if uniqueness is not None:
        kwargs["uniqueness_max_size"] = uniqueness
    kwargs["risk_method"] = risk_method
    kwargs["max_global_risk"] = max_global_risk
    report = measure_risk(md, **kwargs)
    if output is not None:
        write_data(report.records.reset_index(drop=True), output, inputs=(str(file),))
    if as_json:
        d = dict(report.to_dict())
        d["file"] = str(file)
        d["keys"] = key_list
        d["seconds"] = round(time.perf_counter() - t0, 4)
        if output is not None:
            d["output"] = str(output)
        _emit(d)
    else:
        typer.echo(f"{file}: keys {', '.join(key_list)}" + (f", weight {weight}" if weight else ""))
        typer.echo(report.describe())
        if output is not None:
            typer.echo(f"per-record risk written to {output}")


def _parse_scalar(text: str):
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def _run_summary(run, paths: dict) -> dict:
    return {
        "passed": run.passed,
        "n_records": run.released.n_records,
        "steps": [r.method for r in run.results],
        "gate": [o.to_dict() for o in run.gate],
        "data": str(paths["data"]),
        "report": str(paths["report"]),
        "internal_report": str(paths["internal_report"]),
        "seconds": round(run.seconds, 4),
    }


def _print_run(run, paths: dict) -> None:
    for r in run.results:
        typer.echo(r.describe())
    for o in run.gate:
        typer.echo(f"gate {o.name} = {o.threshold}: {'passed' if o.passed else 'FAILED'} ({o.detail})")
    typer.echo(f"released data:   {paths['data']}")
    typer.echo(f"public report:   {paths['report']}")
    typer.echo(f"internal report: {paths['internal_report']} (holds the seeds: do not publish)")


@app.command()
def protect(
    spec: Annotated[Path, typer.Argument(help="Release spec (TOML).")],
    engine: Annotated[str, typer.Option("--engine", help="memory (default) or dask: partitioned data on a Dask cluster.")] = "memory",
    scheduler: Annotated[Optional[str], typer.Option("--scheduler", help="Dask scheduler tcp://host:port (default: a local cluster, one worker per core).")] = None,
    workers: Annotated[Optional[int], typer.Option("--workers", help="Workers of the local Dask cluster (default: the cores).")] = None,
    memory_limit: Annotated[Optional[str], typer.Option("--memory-limit", help="Memory limit per local Dask worker, e.g. 4GB.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Run a release spec: read, mask, check the gate, write data and reports."""
    if engine not in ("memory", "dask"):
        from .errors import ParameterError
        raise ParameterError(f"--engine must be 'memory' or 'dask'. Got {engine!r}.")
    if engine == "dask":
        try:
            import dask  # noqa: F401
            import distributed  # noqa: F401
        except ImportError:
            from .errors import InputError
            raise InputError("--engine dask needs Dask: pip install 'sdckit[dask]' "
                             "(or .venv/bin/pip install 'dask[distributed]').") from None
        from .engine import protect_with_dask
        drun = protect_with_dask(spec, scheduler=scheduler, n_workers=workers,
                                 memory_limit=memory_limit, progress=not as_json)
        if as_json:  # a failed gate raised GateError (exit 3) before anything was written
            _emit(drun.summary_dict())
        else:
            typer.echo(drun.describe())
        return
    from .release import protect as run_protect

    run, paths = run_protect(spec)
    if as_json:
        _emit(_run_summary(run, paths))
    else:
        _print_run(run, paths)


@app.command()
def explore(
    spec: Annotated[Path, typer.Argument(help="Explore spec (TOML): a release spec with [explore] and [[candidates]].")],
    as_json: JsonOpt = False,
) -> None:
    """Sweep candidate methods, draw the R-U map, and propose the best release under the threshold."""
    from .explore.run import run_explore_spec

    run = run_explore_spec(spec)
    if as_json:
        _emit(run.to_dict())
    else:
        typer.echo(run.describe())


@app.command()
def report(
    release_dir: Annotated[Path, typer.Argument(help="A folder written by sdckit protect or sdckit demo.")],
    pdf: Annotated[bool, typer.Option("--pdf", help="Also export the public report as PDF (headless Chromium).")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Summarise a written release (public figures only) and optionally export its report as PDF."""
    from .report.export import release_summary, report_to_pdf

    summary = release_summary(release_dir)
    if pdf:
        summary["pdf"] = str(report_to_pdf(Path(summary["report"])))
    if as_json:
        _emit(summary)
    else:
        typer.echo(f"release in {release_dir}: {summary['n_records']:,} records, steps "
                   f"{', '.join(summary['steps']) or 'none'}, gate {'passed' if summary['passed'] else 'FAILED'}")
        for g in summary["gate"]:
            typer.echo(f"  gate {g['name']} = {g['threshold']}: {g['detail']}")
        typer.echo(f"public report: {summary['report']}" + (f"\nPDF: {summary['pdf']}" if pdf else ""))


_TABLE_ACTIONS = ("count", "posterior", "perturb")


@app.command()
def table(
    target: Annotated[str, typer.Argument(help="A table spec (TOML), or an action: count, posterior, perturb.")],
    rows: Annotated[Optional[str], typer.Option("--rows", help="count: row sums, comma-separated.")] = None,
    cols: Annotated[Optional[str], typer.Option("--cols", help="count: column sums, comma-separated.")] = None,
    table_file: Annotated[Optional[Path], typer.Option("--table", help="posterior/perturb: CSV of integer cells (no header).")] = None,
    alpha: Annotated[float, typer.Option("--alpha", help="perturb/posterior: probability of adding a cycle.")] = 0.25,
    beta: Annotated[float, typer.Option("--beta", help="perturb/posterior: probability of subtracting a cycle.")] = 0.25,
    design: Annotated[str, typer.Option("--design", help="Cycle design: shift or basic.")] = "shift",
    cells: Annotated[Optional[str], typer.Option("--cells", help="posterior: 1-based cells 'r,c;r,c' (default all).")] = None,
    at_least: Annotated[Optional[str], typer.Option("--at-least", help="posterior: insider prior 'r,c,value'.")] = None,
    seed: Annotated[Optional[int], typer.Option("--seed", help="perturb: random seed (a secret; not printed).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Protect a table from a spec (rules, suppression, rounding, margins, with the audit), or:
    count tables with given margins, perturb a table with cycles, compute posterior cell
    distributions of a perturbed table."""
    from .errors import InputError

    if target in _TABLE_ACTIONS:
        from .tables.exact_cli import count_command, parse_ints, perturb_command, posterior_command

        if target == "count":
            if not rows or not cols:
                raise InputError("sdckit table count needs --rows and --cols (comma-separated sums)")
            out = count_command(parse_ints(rows, "--rows"), parse_ints(cols, "--cols"))
            if as_json:
                _emit(out)
            else:
                typer.echo(f"{out['count']:,} tables have these margins")
            return
        if table_file is None:
            raise InputError(f"sdckit table {target} needs --table FILE.csv (integer cells, one row per line)")
        if target == "perturb":
            out = perturb_command(table_file, alpha=alpha, beta=beta, design=design, seed=seed)
            text = "\n".join(" ".join(f"{v:>6d}" for v in r) for r in out["table"])
        else:
            out = posterior_command(table_file, alpha=alpha, beta=beta, design=design, cells=cells,
                                    at_least=at_least)
            text = "\n".join(f"cell ({k}): " + " ".join(f"{p:.3f}" for p in v) for k, v in out["cells"].items())
        if as_json:
            _emit(out)
        else:
            typer.echo(text)
        return
    if not Path(target).exists():
        raise InputError(f"sdckit table: {target!r} is neither an action ({', '.join(_TABLE_ACTIONS)}) "
                         "nor an existing table spec file")
    from .tables.cli import table_command

    summary, run = table_command(target)
    if as_json:
        _emit(summary)
    else:
        typer.echo(run.describe())
        for name, path in summary["outputs"].items():
            typer.echo(f"{name}: {path}")


@app.command()
def estimate(
    released: Annotated[Path, typer.Argument(help="The released data file (CSV, Parquet, SPSS, Stata).")],
    matrix: Annotated[Path, typer.Option("--matrix", help="The published PRAM matrix (pram_*.csv or .json).")],
    by: Annotated[Optional[str], typer.Option("--by", help="Unperturbed variables to estimate within, comma separated.")] = None,
    weight: Annotated[Optional[str], typer.Option("--weight", help="Weight column (sums weights instead of counting).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """For analysts: unbiased estimates of the original frequencies of PRAMmed variables."""
    from .io.files import read_data
    from .pram.estimate import estimate_frequencies
    from .pram.matrix import TransitionMatrix

    m = TransitionMatrix.read(matrix)
    frame, _ = read_data(released)
    est = estimate_frequencies(frame, m, by=_split(by), weights=weight)
    table = est.table()
    if as_json:
        _emit({"variables": list(est.variables), "by": list(est.by), "n": float(est.n),
               "condition_number": float(est.condition_number), "has_negative": est.has_negative,
               "rows": json.loads(table.to_json(orient="records"))})
    else:
        typer.echo(f"{released}: PRAMmed {', '.join(est.variables)} (matrix {matrix}, condition number "
                   f"{est.condition_number:.3g})" + (f", by {', '.join(est.by)}" if est.by else ""))
        typer.echo(table.to_string(index=False))
        if est.has_negative:
            typer.echo("note: the moment estimate has negative cells; the ml_estimate column is the "
                       "maximum-likelihood estimate on the simplex (EM).")


def demo_spec_dict(output_dir: Path) -> tuple[dict, Path]:
    """The bundled demo spec (parsed) with its output folder set, and the folder of its data."""
    data_dir = resources.files("sdckit").joinpath("data")
    raw = tomllib.loads(data_dir.joinpath("demo_release.toml").read_text("utf-8"))
    raw.setdefault("output", {})["directory"] = str(output_dir.resolve())
    return raw, Path(str(data_dir))


@app.command()
def demo(
    output: Annotated[Path, typer.Option("--output", help="Folder to write.")] = Path("sdckit-demo"),
    as_json: JsonOpt = False,
) -> None:
    """Run the bundled release on the bundled census sample and write sdckit-demo/."""
    from .release import Release
    from .spec import spec_from_dict

    from .explore.run import run_explore_spec
    from .explore.rumap import ru_map_html
    from .explore.spec import explore_spec_from_dict

    raw, data_dir = demo_spec_dict(output)
    spec = spec_from_dict(raw, base_dir=data_dir, source="sdckit demo (bundled demo_release.toml)")
    run = Release.from_spec(spec).run()
    # the sweep behind the release: three methods on an R-U map
    xraw = tomllib.loads(data_dir.joinpath("demo_explore.toml").read_text("utf-8"))
    xraw["explore"]["directory"] = str((output / "explore").resolve())
    xraw["output"] = {"directory": str((output / "explore" / "proposed_release").resolve())}
    xspec = explore_spec_from_dict(xraw, base_dir=data_dir, source="bundled demo_explore.toml")
    xrun = run_explore_spec(xspec, microdata=run.original, progress=False)
    s = xrun.result.summary()
    p = xrun.proposal
    map_html = ru_map_html(s, threshold=xspec.threshold, original_risk=xrun.result.original_risk,
                           risk_name=xspec.risk, utility_name=xspec.utility,
                           chosen=None if p is None else (p.utility, p.risk))
    note = ("<p>Each point is one method and setting (mean over seeds; hover for details). The dashed line is "
            f"the risk threshold {xspec.threshold:g}. " + ("" if p is None else
            f"Best under the threshold: {p.method} {json.dumps(p.params)} (risk {p.risk:.4g}, utility {p.utility:.4g})."
            ) + "</p>")
    paths = run.write(spec.output, extra_sections=[("R-U confidentiality map", note + map_html)])
    summary = _run_summary(run, paths)
    summary["ru_map_methods"] = xrun.to_dict()["ru_map_methods"]
    summary["ru_map"] = str(xrun.paths["map_html"])
    summary["explore_proposal"] = xrun.to_dict()["chosen"]
    summary["explore_spec"] = xrun.to_dict()["spec_written"]
    if as_json:
        _emit(summary)
    else:
        _print_run(run, paths)
        typer.echo(f"R-U map:         {summary['ru_map']} (methods: {', '.join(summary['ru_map_methods'])})")


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:
    sys.stderr.write(f"warning: {message}\n")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``sdckit`` console script."""
    warnings.showwarning = _one_line_warning
    debug = bool(os.environ.get("SDCKIT_DEBUG"))
    try:
        app(args=argv, prog_name="sdckit", standalone_mode=False)
    except SDCError as exc:
        if debug:
            raise
        typer.echo(f"error: {exc}", err=True)
        return exc.exit_code
    except typer.Exit as exc:
        return int(getattr(exc, "exit_code", 0) or 0)
    except typer.Abort:
        typer.echo("error: aborted", err=True)
        return 130
    except Exception as exc:  # a usage error (click-style) or an unexpected failure: one line
        if hasattr(exc, "format_message") and hasattr(exc, "exit_code"):
            typer.echo(f"error: {exc.format_message()} (see 'sdckit --help')", err=True)
            return 2
        if debug:
            raise
        typer.echo(f"error: internal error {type(exc).__name__}: {exc} "
                   "(run again with SDCKIT_DEBUG=1 for the traceback and report it)", err=True)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
