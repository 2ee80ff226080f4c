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
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from ._lazy import lazy_module
from .errors import SDCError

if TYPE_CHECKING:
    import typer
else:  # imported on first use: the thin parser reads the verbs' declarations without it
    typer = lazy_module("typer")

# The typer application is built on first use (``sdckit.cli.app``, or a command line the thin
# parser of sdckit.cli_dispatch leaves to typer): ``sdckit --version`` and ``--help`` import neither
# typer nor any verb's module, and a verb whose command line the thin parser reads imports only its
# own module (not typer). The verbs below are plain functions whose annotations (typer's
# declarations, strings under ``from __future__ import annotations``) are read when the
# application is built (``JsonOpt`` is bound in this module's namespace then) or by the thin
# parser (with ``typer`` standing for a recorder of the declarations).
_COMMANDS: list[tuple[str | None, dict, object]] = []
#: annotation aliases, evaluated where typer's declarations are (see sdckit.cli_dispatch)
ANNOTATION_ALIASES = {"JsonOpt": 'Annotated[bool, typer.Option("--json", help="Print one JSON object instead of text.")]'}


def _echo(message: str = "", err: bool = False) -> None:
    """Print one line to stdout (or stderr), as ``typer.echo`` does for text, without importing typer."""
    stream = sys.stderr if err else sys.stdout
    stream.write(f"{message}\n")
    stream.flush()


def _command(name: str | None = None, **settings):
    """Register the decorated function as a verb (``app.command(name, **settings)`` once built)."""
    def register(fn):
        _COMMANDS.append((name, settings, fn))
        return fn
    return register


def _external(name: str, module: str, attr: str, **settings) -> None:
    """Register the verb ``name`` defined as ``attr`` in ``module`` (imported when the app is built)."""
    _COMMANDS.append((name, settings, (module, attr)))


def _emit(obj: dict) -> None:
    from .result import jsonable

    _echo(json.dumps(jsonable(obj), sort_keys=False))


def _version(value: bool) -> None:
    if value:
        from . import __version__

        _echo(f"sdckit {__version__}")
        raise typer.Exit(0)


def _root(version: Annotated[bool | None, typer.Option("--version", callback=_version, is_eager=True,
                                                          help="Print the version and exit.")] = None) -> None:
    """sdckit: statistical disclosure control for microdata and tables."""


def _split(value: str | None) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()] if value else []


@_command()
def risk(
    file: Annotated[Path, typer.Argument(help="Data file (CSV, Parquet, SPSS, Stata, SAS).")],
    keys: Annotated[str, typer.Option("--keys", help="Key variables, comma-separated.")],
    weight: Annotated[str | None, typer.Option("--weight", help="Sampling weight column.")] = None,
    household: Annotated[str | None, typer.Option("--household", help="Household id column.")] = None,
    sensitive: Annotated[str | None, typer.Option("--sensitive", help="Sensitive variables, comma-separated.")] = None,
    suda: Annotated[bool, typer.Option("--suda", help="Also compute SUDA2 scores.")] = False,
    suda_max_size: Annotated[int | None, typer.Option("--suda-max-size", help="Largest MSU size searched.")] = None,
    missing_alpha: Annotated[float, typer.Option("--missing-alpha", help="Weight of missing-value matches (sdcMicro's alpha).")] = 1.0,
    na_values: Annotated[str | None, typer.Option("--na-values", help="Codes meaning missing, comma-separated (e.g. -9).")] = None,
    delimiter: Annotated[str | None, typer.Option("--delimiter", help="Field delimiter of a CSV file: one character, e.g. ';', or 'tab' (default ',').")] = None,
    uniqueness: Annotated[int | None, typer.Option("--uniqueness", help="Tabulate uniqueness by combination of up to M key variables.")] = None,
    risk_method: Annotated[str, typer.Option("--risk-method", help="Individual risk for f_k >= 3: approx or exact.")] = "approx",
    max_global_risk: Annotated[float, typer.Option("--max-global-risk", help="Target global risk for the individual-risk threshold.")] = 0.01,
    output: Annotated[Path | None, typer.Option("--output", help="Write per-record risk to this file.")] = None,
    model: Annotated[str | None, typer.Option("--model", help="Model-based risk: loglinear (Skinner & Shlomo tau1, tau2).")] = None,
    ll_method: Annotated[str, typer.Option("--method", help="Log-linear fit: default, CE, PML, weightedLLM or IPF (sdcMicro's modRisk).")] = "default",
    formula: Annotated[str | None, typer.Option("--formula", help="Log-linear model terms, e.g. \"a+b+c+a:b\" (default: main effects; auto: forward selection).")] = None,
    population_uniques: Annotated[bool, typer.Option("--population-uniques", help="Estimate the population uniques (Zayatz, Pitman, SNB; Dankar et al.'s rule).")] = False,
    attacker: Annotated[float | None, typer.Option("--attacker", help="Prosecutor, journalist and marketer risk with this threshold (e.g. 0.2).")] = None,
    contributions: Annotated[bool, typer.Option("--contributions", help="Sample uniques lost when each key is dropped or coarsened.")] = False,
    population_table: Annotated[Path | None, typer.Option("--population-table", help="Population counts for --attacker: the key columns and a 'count' column.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Measure the disclosure risk of a data file on its key variables."""
    from .io.files import read_microdata, write_data
    from .risk.report import measure_risk

    t0 = time.perf_counter()
    key_list = _split(keys)
    if not key_list:
        raise SDCError("--keys: name at least one key variable, e.g. --keys age,sex,region")
    _check_risk_flags(missing_alpha=missing_alpha, risk_method=risk_method, uniqueness=uniqueness,
                      suda_max_size=suda_max_size, max_global_risk=max_global_risk, attacker=attacker)
    na = [_parse_scalar(v) for v in _split(na_values)] or None
    md = read_microdata(file, na_values=na, key_vars=key_list, weight=weight, household=household,
                        sensitive=_split(sensitive), delimiter=delimiter)
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
    if model is not None:
        if model != "loglinear":
            from .errors import ParameterError
            raise ParameterError(f"--model must be 'loglinear'. Got {model!r}.")
        kwargs["loglinear_method"] = ll_method
        kwargs["loglinear_formula"] = formula
    elif formula is not None or ll_method != "default":
        from .errors import ParameterError
        raise ParameterError("--method and --formula need --model loglinear.")
    if population_uniques:
        kwargs["population_uniques"] = True
    if attacker is not None:
        kwargs["attacker_threshold"] = attacker
        if population_table is not None:
            from .io.files import read_data
            pop_frame = read_data(population_table)[0]
            pop_frame.attrs["source"] = str(population_table)
            kwargs["attacker_population"] = pop_frame
    elif population_table is not None:
        from .errors import ParameterError
        raise ParameterError("--population-table needs --attacker THRESHOLD.")
    if contributions:
        kwargs["contributions"] = True
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
        _echo(f"{file}: keys {', '.join(key_list)}" + (f", weight {weight}" if weight else ""))
        _echo(report.describe())
        if output is not None:
            _echo(f"per-record risk written to {output}")


def _check_risk_flags(*, missing_alpha, risk_method, uniqueness, suda_max_size, max_global_risk,
                      attacker=None) -> None:
    """Check the risk command's flags up front, naming the flag the user typed."""
    import math

    from .errors import ParameterError

    def bad(flag: str, rule: str, value) -> ParameterError:
        return ParameterError(f"{flag} must be {rule}. Got {value!r}.", param=flag, rule=rule, value=value)

    if not (math.isfinite(missing_alpha) and 0.0 <= missing_alpha <= 1.0):
        raise bad("--missing-alpha", "a number in [0, 1]", missing_alpha)
    if risk_method not in ("approx", "exact"):
        raise bad("--risk-method", "one of 'approx', 'exact'", risk_method)
    if uniqueness is not None and uniqueness < 1:
        raise bad("--uniqueness", "an int >= 1", uniqueness)
    if suda_max_size is not None and suda_max_size < 1:
        raise bad("--suda-max-size", "an int >= 1", suda_max_size)
    if not (math.isfinite(max_global_risk) and 0.0 < max_global_risk <= 1.0):
        raise bad("--max-global-risk", "a number in (0, 1]", max_global_risk)
    if attacker is not None and not (math.isfinite(attacker) and 0.0 <= attacker <= 1.0):
        raise bad("--attacker", "a number in [0, 1] (the risk threshold)", attacker)


def pd_to_numeric(col):
    """The column as float64 numbers, or None when it holds text or true/false values."""
    import pandas as pd

    if pd.api.types.is_bool_dtype(col):
        return None
    num = pd.to_numeric(col, errors="coerce")
    if num.isna().sum() > col.isna().sum():
        return None
    return num.astype(float)


def _parse_scalar(text: str):
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def _run_summary(run, paths: dict) -> dict:
    return {
        "passed": run.verdict == "passed", "verdict": run.verdict_text,
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
        _echo(r.describe())
    for o in run.gate:
        _echo(f"gate {o.name} = {o.threshold}: {'passed' if o.passed else 'FAILED'} ({o.detail})")
    _echo(run.verdict_text)
    _echo(f"released data:   {paths['data']}")
    _echo(f"public report:   {paths['report']}")
    _echo(f"internal report: {paths['internal_report']} (holds the seeds: do not publish)")


@_command(cls="steps-epilog")  # --help ends with every step's declared parameters
def protect(
    spec: Annotated[Path, typer.Argument(help="Release spec (TOML).")],
    engine: Annotated[str, typer.Option("--engine", help="memory (default) or dask: partitioned data on a Dask cluster.")] = "memory",
    scheduler: Annotated[str | None, typer.Option("--scheduler", help="Dask scheduler tcp://host:port (default: a local cluster, one worker per core).")] = None,
    workers: Annotated[int | None, typer.Option("--workers", help="Workers of the local Dask cluster (default: the cores).")] = None,
    memory_limit: Annotated[str | None, typer.Option("--memory-limit", help="Memory limit per local Dask worker, e.g. 4GB.")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an earlier release in the output folders (kept until the new one is switched in).")] = False,
    key: Annotated[Path | None, typer.Option("--key", help="The steward's private key (NAME.key of 'sdckit keygen') that signs the certificates (default: [output] signing_key).")] = None,
    ddi: Annotated[Path | None, typer.Option("--ddi", help="A DDI-Codebook 2.5 file (XML) giving the input's labels, value labels, missing codes and roles (as [input] ddi, which it replaces).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Run a release spec: read, mask, check the gate, write data and reports."""
    if engine not in ("memory", "dask"):
        from .errors import ParameterError
        raise ParameterError(f"--engine must be 'memory' or 'dask'. Got {engine!r}.")
    if engine == "dask" and ddi is not None:
        from .errors import InputError
        raise InputError("--ddi: the dask engine does not read a DDI-Codebook; use --engine memory (the default) "
                         "or give the roles in [roles]")
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
                                 memory_limit=memory_limit, progress=not as_json,
                                 overwrite=overwrite or None, signing_key=key)
        if as_json:  # a failed gate raised GateError (exit 3) before anything was written
            _emit(drun.summary_dict())
        else:
            _echo(drun.describe())
        return
    from .release import protect as run_protect

    target = spec
    if ddi is not None:  # the same as [input] ddi
        from .spec import load_spec, with_ddi

        target = with_ddi(load_spec(spec), ddi)
    run, paths = run_protect(target, overwrite=overwrite or None, signing_key=key)
    if as_json:
        _emit(_run_summary(run, paths))
    else:
        _print_run(run, paths)


@_command()
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
        _echo(run.describe())


@_command()
def report(
    release_dir: Annotated[Path, typer.Argument(help="A folder written by sdckit protect or sdckit demo.")],
    pdf: Annotated[bool, typer.Option("--pdf", help="Also export the public report as PDF (headless Chromium).")] = False,
    page_size: Annotated[str | None, typer.Option("--page-size", help="PDF page size: A4 or Letter (default: the spec's [report] page_size, else A4).")] = None,
    pdf_path: Annotated[Path | None, typer.Option("--pdf-path", help="Where to write the PDF (default: <folder>-report.pdf beside the release folder; never inside it).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Summarise a written release (public figures only) and optionally export its report as PDF."""
    from .report.export import release_summary, report_to_pdf

    summary = release_summary(release_dir)
    if pdf:
        # beside the release folder, never inside it: the folder holds exactly the files its
        # signed certificate lists, and verify refuses any other
        target = pdf_path or release_dir.resolve().parent / f"{release_dir.resolve().name}-report.pdf"
        summary["pdf"] = str(report_to_pdf(Path(summary["report"]), target, page_size=page_size))
    if as_json:
        _emit(summary)
    else:
        _echo(f"release in {release_dir}: {summary['n_records']:,} records, steps "
                   f"{', '.join(summary['steps']) or 'none'}; {summary.get('verdict') or ('passed' if summary['passed'] else 'FAILED')}")
        for g in summary["gate"]:
            _echo(f"  gate {g['name']} = {g['threshold']}: {g['detail']}")
        _echo(f"public report: {summary['report']}" + (f"\nPDF: {summary['pdf']}" if pdf else ""))


_external("table", "sdckit.cli_table", "table_command", cls="table-keys-epilog")  # --help: the [protection] keys


@_command()
def estimate(
    released: Annotated[Path, typer.Argument(help="The released data file (CSV, Parquet, SPSS, Stata).")],
    matrix: Annotated[Path, typer.Option("--matrix", help="The published PRAM matrix (pram_*.csv or .json).")],
    by: Annotated[str | None, typer.Option("--by", help="Unperturbed variables to estimate within, comma separated.")] = None,
    weight: Annotated[str | None, typer.Option("--weight", help="Weight column (sums weights instead of counting).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """For analysts: unbiased estimates of the original frequencies of PRAMmed variables."""
    from ._validation import check_columns_exist
    from .errors import InputError
    from .io.files import read_data
    from .pram.estimate import estimate_frequencies
    from .pram.matrix import TransitionMatrix

    m = TransitionMatrix.read(matrix)
    frame, _ = read_data(released)
    if Path(released).suffix.lower() in (".sav", ".zsav", ".dta"):  # SPSS/Stata hold codes as doubles
        from .io.files import integral_floats_as_ints

        frame = integral_floats_as_ints(frame)
    names = Path(released).with_name("column_names.csv")
    if names.is_file():  # an SPSS/Stata release renamed columns: the matrix uses the original names
        mapping = read_data(names)[0].astype(str)
        if {"original_name", "delivered_name"} <= set(mapping.columns):
            frame = frame.rename(columns=dict(zip(mapping["delivered_name"], mapping["original_name"])))
    where = Path(released).name
    check_columns_exist(_split(by), list(frame.columns), where=f"{where} (--by)", role="--by")
    if weight is not None:
        check_columns_exist([weight], list(frame.columns), where=f"{where} (--weight)", role="weight")
        w = pd_to_numeric(frame[weight])
        if w is None:
            raise InputError(f"{where}: the --weight column {weight!r} holds text; weights must be numbers > 0: "
                             "name the weight column.")
    est = estimate_frequencies(frame, m, by=_split(by), weights=weight)
    table = est.table()
    if as_json:
        _emit({"variables": list(est.variables), "by": list(est.by), "n": float(est.n),
               "condition_number": float(est.condition_number), "has_negative": est.has_negative,
               "rows": json.loads(table.to_json(orient="records"))})
    else:
        _echo(f"{released}: PRAMmed {', '.join(est.variables)} (matrix {matrix}, condition number "
                   f"{est.condition_number:.3g})" + (f", by {', '.join(est.by)}" if est.by else ""))
        _echo(table.to_string(index=False))
        if est.has_negative:
            _echo("note: the moment estimate has negative cells; the ml_estimate column is the "
                       "maximum-likelihood estimate on the simplex (EM).")


def demo_spec_dict(output_dir: Path) -> tuple[dict, Path]:
    """The bundled demo spec (parsed) with its output folder set, and the folder of its data."""
    import tomllib
    from importlib import resources

    data_dir = resources.files("sdckit").joinpath("data")
    raw = tomllib.loads(data_dir.joinpath("demo_release.toml").read_text("utf-8"))
    raw.setdefault("output", {})["directory"] = str(output_dir.resolve())
    return raw, Path(str(data_dir))


@_command()
def demo(
    output: Annotated[Path, typer.Option("--output", help="Folder to write.")] = Path("sdckit-demo"),
    key: Annotated[Path | None, typer.Option("--key", help="The steward's private key (NAME.key of 'sdckit keygen') that signs the certificates.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Run the bundled release on the bundled census sample and write sdckit-demo/."""
    import tomllib

    from .explore.rumap import release_ru_map_section
    from .explore.run import run_explore_spec
    from .explore.spec import explore_spec_from_dict
    from .release import Release, release_folders, signing_key_for
    from .spec import spec_from_dict

    raw, data_dir = demo_spec_dict(output)
    spec = spec_from_dict(raw, base_dir=data_dir, source="sdckit demo (bundled demo_release.toml)")
    signing_key = signing_key_for(spec.output, key, *release_folders(spec.output))  # checked before any work
    run = Release.from_spec(spec).run()
    # the sweep behind the release: three methods on an R-U map
    xraw = tomllib.loads(data_dir.joinpath("demo_explore.toml").read_text("utf-8"))
    # the sweep's files (its runs table holds seeds) go to the internal folder only
    import tempfile

    sweep_dir = Path(tempfile.mkdtemp(prefix="sdckit-demo-sweep-"))
    xraw["explore"]["directory"] = str(sweep_dir / "explore")
    xraw["output"] = {"directory": str(output.resolve()) + "-proposed"}
    xspec = explore_spec_from_dict(xraw, base_dir=data_dir, source="bundled demo_explore.toml")
    xrun = run_explore_spec(xspec, microdata=run.original, progress=False)
    s = xrun.result.summary()
    p = xrun.proposal
    best = "" if p is None else (f"The sweep's best setting under the threshold: {p.method} with "
                                 + ", ".join(f"{k} = {v}" for k, v in p.params.items())
                                 + f" (risk {p.risk:.4g}, utility {p.utility:.4g}).")
    map_html, _ = release_ru_map_section(run, s, original_risk=xrun.result.original_risk, risk_name=xspec.risk,
                                         utility_name=xspec.utility, threshold=xspec.threshold,
                                         chosen=None if p is None else (p.utility, p.risk), chosen_text=best)
    try:
        paths = run.write(spec.output, extra_sections=[("R-U confidentiality map", map_html)], overwrite=True,
                          internal_trees={"explore": sweep_dir / "explore"}, signing_key=signing_key)
    finally:
        import shutil

        shutil.rmtree(sweep_dir, ignore_errors=True)
    summary = _run_summary(run, paths)
    summary["certificate"] = str(paths.get("certificate", Path(paths["report"]).with_name("certificate.json")))
    summary["ru_map_methods"] = xrun.to_dict()["ru_map_methods"]
    summary["ru_map"] = str(paths["internal_directory"] / "explore" / "ru_map.html")
    summary["explore_proposal"] = xrun.to_dict()["chosen"]
    written = xrun.to_dict()["spec_written"]
    summary["explore_spec"] = (str(paths["internal_directory"] / "explore" / Path(written).name)
                               if written else None)
    if as_json:
        _emit(summary)
    else:
        _print_run(run, paths)
        _echo(f"R-U map:         {summary['ru_map']} (methods: {', '.join(summary['ru_map_methods'])})")


_external("app", "sdckit.app.cli", "app_command")
_external("steps", "sdckit.cli_steps", "steps_command")
_external("verify", "sdckit.report.verify", "verify_command",
          help="Check a release folder against its certificate.json: the steward's signature "
          "(--key), hashes, no unlisted file, the internal folder's run, gate thresholds, "
          "published matrices (no original data needed).")
_external("outputs", "sdckit.report.outputs_cli", "outputs_command",
          help="Check researchers' outputs (ACRO's rules with the LP audit of margins and linked "
          "outputs): check, approve, reject, exception, release.")


@_command()
def keygen(
    name: Annotated[str, typer.Argument(help="The key pair's name: writes NAME.key (private) and NAME.pub (public).")] = "steward",
    directory: Annotated[Path, typer.Option("--dir", help="Folder to write the two files into (never a release folder).")] = Path("."),
    as_json: JsonOpt = False,
) -> None:
    """Write the steward's Ed25519 key pair that signs release certificates: NAME.key (private,
    mode 0600; encrypted with the passphrase in SDCKIT_KEY_PASSPHRASE when it is set) and
    NAME.pub (give it to whoever verifies: sdckit verify DIR --key NAME.pub)."""
    from .report.signing import PASSPHRASE_ENV, fingerprint, generate_keypair, load_public_key

    private, public = generate_keypair(directory, name)
    fp = fingerprint(load_public_key(public))
    encrypted = bool(os.environ.get(PASSPHRASE_ENV))
    if as_json:
        _emit({"private_key": str(private), "public_key": str(public), "fingerprint": fp,
               "passphrase_protected": encrypted})
    else:
        _echo(f"private key: {private} (keep it secret and outside every release folder"
                   + ("; protected by the passphrase in " + PASSPHRASE_ENV if encrypted else "") + ")")
        _echo(f"public key:  {public} (give it to whoever verifies: sdckit verify DIR --key {public.name})")
        _echo(f"fingerprint: {fp}")


@_command("from-sdcmicro")
def from_sdcmicro(
    script: Annotated[Path, typer.Argument(help="The sdcMicro script (R) to translate.")],
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the spec to this TOML file (a script reading several files gives NAME_<file>.toml each); default: print it.")] = None,
    input_path: Annotated[str | None, typer.Option("--input", help="The data file the spec reads (replaces the file the script reads).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Translate an sdcMicro script (createSdcObj's roles, the masking calls, the report) into a
    release spec, and say line by line what could not be translated."""
    from .errors import InputError
    from .sdcmicro import translate

    if not script.is_file():
        raise InputError(f"{script.name}: no such script; give the path of an R file.")
    translations = translate(script.read_text(encoding="utf-8"))
    written = []
    for t in translations:
        if input_path is not None:
            t.spec["input"]["path"] = input_path
        if output is not None:
            target = output if len(translations) == 1 else output.with_name(
                f"{output.stem}_{Path(t.source).stem or 'data'}{output.suffix or '.toml'}")
            if target.resolve() == script.resolve():
                raise InputError(f"{target.name}: is the script itself; write the spec to another file.")
            target.write_text(t.toml(), encoding="utf-8")
            written.append(str(target))
    if as_json:
        _emit({"specs": [{"source": t.source, "spec": t.spec, "file": (written[i] if written else None),
                          "lines": [n.to_dict() for n in t.notes]} for i, t in enumerate(translations)]})
        return
    for i, t in enumerate(translations):
        if written:
            _echo(f"spec for {t.source!r} written to {written[i]}")
        else:
            _echo(t.toml())
        missing = [n for n in t.notes if n.status == "not translated"]
        _echo(f"{len(missing)} line(s) not translated" + (":" if missing else ""), err=True)
        for n in missing:
            _echo(f"  line {n.line}: {n.what}", err=True)


_external("anonymise", "sdckit.lattice.cli", "anonymise_command")
_external("attack", "sdckit.attacks.cli", "attack_command")


_external("warm", "sdckit.cli_warm", "warm_command", hidden=True)


#: command classes that change only a verb's help: the thin parser reads such a verb's command line
_HELP_ONLY_CLASSES = (None, "table-keys-epilog")


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:
    sys.stderr.write(f"warning: {message}\n")


def _build_app() -> typer.Typer:
    """The typer application of every verb (built once; ``sdckit.cli.app``)."""
    global JsonOpt, app  # JsonOpt: the alias the verbs' annotations name
    from importlib import import_module

    import typer

    from .cli_steps import StepsEpilogCommand

    JsonOpt = eval(ANNOTATION_ALIASES["JsonOpt"])  # the one declaration of --json
    built = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                        help="sdckit: statistical disclosure control for microdata and tables.")
    built.callback()(_root)
    for name, settings, fn in _COMMANDS:
        if isinstance(fn, tuple):  # a verb defined in its own module
            fn = getattr(import_module(fn[0]), fn[1])
        if settings.get("cls") == "steps-epilog":  # --help ends with every step's declared parameters
            settings = {**settings, "cls": StepsEpilogCommand}
        elif settings.get("cls") == "table-keys-epilog":  # --help ends with the [protection] keys
            from .cli_table import table_keys_command_class

            settings = {**settings, "cls": table_keys_command_class()}
        built.command(name, **settings)(fn)
    app = built
    return built


def find_verb(name: str):
    """The verb typer would name ``name``, without building the application.

    Parameters
    ----------
    name : str
        The verb as typed (``anonymise``, ``from-sdcmicro``).

    Returns
    -------
    tuple or None
        ``(function, settings)``: the verb's function (its module imported) and the settings it
        is registered with (``cls``, ``help``, ``hidden``...); None when no verb has that name.
    """
    from importlib import import_module

    for registered, settings, fn in _COMMANDS:
        if isinstance(fn, tuple):  # a verb defined in its own module
            if registered != name:
                continue
            fn = getattr(import_module(fn[0]), fn[1])
        elif (registered or fn.__name__.lower().replace("_", "-")) != name:  # typer's get_command_name
            continue
        return fn, settings
    return None


def _application() -> typer.Typer:
    """The typer application, built on first use."""
    built = globals().get("app")
    return built if built is not None else _build_app()


def __getattr__(name: str):
    """``app`` (the typer application) is built on first use (PEP 562)."""
    if name == "app":
        return _application()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def root_help_text(columns: int = 80) -> str:
    """``sdckit --help`` as typer renders it without rich, on a terminal ``columns`` wide.

    :data:`sdckit.cli_dispatch.ROOT_HELP` holds this text for 80 columns or more (what
    ``sdckit --help`` prints without building the application); a test compares the two.
    """
    from typer.main import get_command

    group = get_command(_application())
    group.rich_markup_mode = None  # this command object only; `app` is not changed
    width = max(min(columns, 80) - 2, 50)  # click's HelpFormatter: at most 80 columns, less 2
    ctx = typer.Context(group, info_name="sdckit", terminal_width=width)
    return group.get_help(ctx)  # no parsing, no coercion


def _root_help() -> int:
    """``sdckit --help``: the commands and their one-line help, as plain text.

    The same text typer prints without rich (:func:`root_help_text`); on a terminal of 80
    columns or more it is the precomputed :data:`sdckit.cli_dispatch.ROOT_HELP`, so the help
    imports neither typer nor any verb's module.
    """
    import shutil

    from .cli_dispatch import ROOT_HELP

    width = shutil.get_terminal_size().columns
    sys.stdout.write((ROOT_HELP if width >= 80 else root_help_text(width)) + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``sdckit`` console script.

    An error is one line on stderr and a non-zero exit (2 bad input, 3 failed gate, 4 solver,
    1 unexpected). With ``--json``, stdout also holds exactly one JSON document then:
    ``{"error": {"message": ..., "exit_code": ...}}``.
    """
    warnings.showwarning = _one_line_warning
    debug = bool(os.environ.get("SDCKIT_DEBUG"))
    args = list(sys.argv[1:] if argv is None else argv)
    json_mode = "--json" in args
    if args == ["--version"]:  # answered before the commands are built (fast from the first call)
        from . import __version__

        sys.stdout.write(f"sdckit {__version__}\n")
        return 0
    if args == ["--help"]:
        return _root_help()
    from .cli_dispatch import Unsupported, one_verb_app, parse_args

    def fail(message: str, code: int) -> int:
        message = " ".join(str(message).split())  # one line, whatever the source said
        _echo(f"error: {message}", err=True)
        if json_mode:
            _echo(json.dumps({"error": {"message": message, "exit_code": code}}))
        return code

    try:
        try:  # the thin parser: no typer, no pydantic, no click command built (sdckit.cli_dispatch)
            found = find_verb(args[0]) if args and not args[0].startswith("-") else None
            if found is None or found[1].get("cls") not in _HELP_ONLY_CLASSES or found[1].get("context_settings"):
                raise Unsupported("typer parses this verb")  # a command class of its own parses its own way
            command, kwargs = found[0], parse_args(found[0], args[1:])
        except Unsupported:  # help, an error, or an option kind it leaves to typer: typer parses
            # only the verb's own command is built; with standalone_mode=False a command's
            # typer.Exit(code) comes back as the return value
            application = _application()
            verb_app = one_verb_app(application, args[0]) if args else application
            returned = verb_app(args=args, prog_name="sdckit", standalone_mode=False)
        else:
            returned = command(**kwargs)
    except SDCError as exc:
        if debug:
            raise
        return fail(str(exc), exc.exit_code)
    except OSError as exc:  # the machine said no: a path, a permission, a full disk
        if debug:
            raise
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        return fail(f"{where}{exc.strerror or exc}; check the path, its permissions and the free disk space", 2)
    except Exception as exc:  # typer's exit, a usage error (click-style) or an unexpected failure
        typer_module = sys.modules.get("typer")  # loaded where typer parsed (or a verb used it)
        if typer_module is not None and isinstance(exc, typer_module.Exit):
            return int(getattr(exc, "exit_code", 0) or 0)
        if typer_module is not None and isinstance(exc, typer_module.Abort):
            return fail("aborted", 130)
        if hasattr(exc, "format_message") and hasattr(exc, "exit_code"):
            return fail(f"{exc.format_message()} (see 'sdckit --help')", 2)
        if debug:
            raise
        return fail(f"internal error {type(exc).__name__}: {exc} "
                    "(run again with SDCKIT_DEBUG=1 for the traceback and report it)", 1)
    return returned if isinstance(returned, int) and not isinstance(returned, bool) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
