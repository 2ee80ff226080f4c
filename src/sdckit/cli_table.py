"""The ``sdckit table`` verb, and the ``[protection]`` keys its ``--help`` lists.

The verb is a plain function whose typer declarations are strings (``from __future__ import
annotations``): :mod:`sdckit.cli` registers it and the thin parser of :mod:`sdckit.cli_dispatch`
reads them without importing typer, so ``sdckit table count`` loads neither typer nor pydantic.

``sdckit table --help`` ends with the keys a table spec's ``[protection]`` takes, for each
method, with their labels: the common keys (:data:`sdckit.tables.spec.PROTECTION_COMMON`) and
each method's (:func:`sdckit.tables.spec.protection_keys`), labelled from the table-method
registry's declarations (:func:`protection_key_listing`). Reading the registry imports numpy and
the differential-privacy samplers (numba), which a ``--help`` must not load; the listing is
therefore also stored in ``sdckit/data/table_protection_keys.json`` with a fingerprint of the
files that declare it (``python tools/write_table_keys.py`` rewrites it). The help reads the
stored listing when its fingerprint matches the files on disk and the registry is not loaded in
this process; otherwise (a changed declaration, a method registered at run time) it reads the
registry itself.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from ._lazy import lazy_module

if TYPE_CHECKING:
    import typer
else:
    typer = lazy_module("typer")  # the declarations below name it; typer reads them when it parses

__all__ = ["table_command", "protection_key_listing", "listing_fingerprint", "stored_listing",
           "table_keys_help_text", "table_keys_command_class", "LISTING_FILE"]

def _echo(message: str = "") -> None:
    """Print one line to stdout without importing typer (as :mod:`sdckit.cli` does)."""
    sys.stdout.write(f"{message}\n")
    sys.stdout.flush()


def _emit(obj: dict) -> None:
    from .result import jsonable

    _echo(json.dumps(jsonable(obj), sort_keys=False))


_TABLE_ACTIONS = ("count", "posterior", "perturb")


def table_command(
    target: Annotated[str | None, typer.Argument(help="A table spec (TOML), or an action: count, posterior, perturb.")] = None,
    rows: Annotated[str | None, typer.Option("--rows", help="count: row sums, comma-separated.")] = None,
    cols: Annotated[str | None, typer.Option("--cols", help="count: column sums, comma-separated.")] = None,
    table_file: Annotated[Path | None, typer.Option("--table", help="posterior/perturb: CSV of integer cells (no header).")] = None,
    alpha: Annotated[float, typer.Option("--alpha", help="perturb/posterior: probability of adding a cycle.")] = 0.25,
    beta: Annotated[float, typer.Option("--beta", help="perturb/posterior: probability of subtracting a cycle.")] = 0.25,
    design: Annotated[str, typer.Option("--design", help="Cycle design: shift or basic.")] = "shift",
    cells: Annotated[str | None, typer.Option("--cells", help="posterior: 1-based cells 'r,c;r,c' (default all).")] = None,
    at_least: Annotated[str | None, typer.Option("--at-least", help="posterior: insider prior 'r,c,value'.")] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="perturb: random seed (a secret; not printed); count --estimate: sampling seed.")] = None,
    estimate: Annotated[bool, typer.Option("--estimate", help="count: estimate by sequential importance sampling (estimate, std_error, ess).")] = False,
    samples: Annotated[int, typer.Option("--samples", help="count --estimate: number of sampled tables.")] = 10_000,
    time_limit: Annotated[float, typer.Option("--time-limit", help="count: CPU seconds; a count predicted to take longer is refused at once.")] = 600.0,
    max_memory: Annotated[float, typer.Option("--max-memory", help="count: GB; a count predicted to need more memory is refused at once.")] = 2.0,
    model: Annotated[str, typer.Option("--model", help="posterior: rule near zero, no-change (default) or skip-cycle.")] = "no-change",
    argus: Annotated[Path | None, typer.Option("--argus", help="Run a tau-Argus batch file (.arb) instead of a spec.")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="A spec with output.folder: replace an earlier release in the output folders.")] = False,
    key: Annotated[Path | None, typer.Option("--key", help="A spec with output.folder: the steward's private key (NAME.key of 'sdckit keygen') that signs the certificates.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of text.")] = False,
) -> None:
    """Protect a table from a spec (rules, suppression, rounding, margins, cell key method, with
    the audit), or run a tau-Argus batch file (--argus FILE.arb), or: count tables with given
    margins, perturb a table with cycles, compute posterior cell distributions of a perturbed table."""
    from .errors import InputError

    if argus is not None:
        from .tables.cli import argus_command

        out = argus_command(argus)
        if as_json:
            _emit(out)
        else:
            for j in out["jobs"]:
                _echo(f"line {j['line']}: {j['command']} " + ", ".join(f"{k}={v}" for k, v in j.items()
                                                                          if k not in ("line", "command", "tables")))
            for f in out["files"]:
                _echo(f"written: {f}")
        return
    if target is None:
        raise InputError("sdckit table needs a table spec (TOML), an action, or --argus FILE.arb")

    if target in _TABLE_ACTIONS:
        from .tables.exact_cli import count_command, parse_ints, perturb_command, posterior_command

        if target == "count":
            if not rows or not cols:
                raise InputError("sdckit table count needs --rows and --cols (comma-separated sums)")
            out = count_command(parse_ints(rows, "--rows"), parse_ints(cols, "--cols"), estimate=estimate,
                                n_samples=samples, seed=seed, time_limit=time_limit, max_memory_gb=max_memory)
            if as_json:
                _emit(out)
            else:
                _echo(f"about {out['estimate']} tables have these margins (standard error {out['std_error']}, "
                           f"ESS {out['ess']})" if estimate else
                           f"{int(out['count']):,} tables have these margins ({out['method']}, {out['cpu_seconds']} CPU s, "
                           f"predicted {out['predicted_cpu_seconds']})")
            return
        if table_file is None:
            raise InputError(f"sdckit table {target} needs --table FILE.csv (integer cells, one row per line)")
        if target == "perturb":
            out = perturb_command(table_file, alpha=alpha, beta=beta, design=design, seed=seed)
            text = "\n".join(" ".join(f"{v:>6d}" for v in r) for r in out["table"])
        else:
            out = posterior_command(table_file, alpha=alpha, beta=beta, design=design, cells=cells,
                                    at_least=at_least, model=model)
            text = "\n".join(f"cell ({k}): " + " ".join(f"{p:.3f}" for p in v) for k, v in out["cells"].items())
        if as_json:
            _emit(out)
        else:
            _echo(text)
        return
    if not Path(target).exists():
        raise InputError(f"sdckit table: {target!r} is neither an action ({', '.join(_TABLE_ACTIONS)}) "
                         "nor an existing table spec file")
    from .tables.cli import is_release_spec, table_command

    if is_release_spec(target):  # [output] folder: a release (public + internal, certificate, verify)
        from .progress import task
        from .report.table_release import release_table_spec

        with task("table release"):
            summary, run = release_table_spec(target, overwrite=overwrite, signing_key=key)
        if as_json:
            _emit(summary)
        else:
            rel = summary["release"]
            _echo(run.describe())
            _echo(rel["verdict"])
            _echo(f"public ({rel['folders']['public']}): {', '.join(rel['public'])}")
            _echo(f"internal ({rel['folders']['internal']}): {', '.join(rel['internal'])}")
        return
    summary, run = table_command(target)
    if as_json:
        _emit(summary)
    else:
        _echo(run.describe())
        for name, path in summary["outputs"].items():
            _echo(f"{name}: {path}")


# ----------------------------------------------------------------------------- the [protection] keys

_PACKAGE = Path(__file__).resolve().parent
#: the stored listing (package data), rewritten by tools/write_table_keys.py
LISTING_FILE = _PACKAGE / "data" / "table_protection_keys.json"
#: the files whose declarations make the listing, besides every ``*/table_methods.py`` (the
#: registry's providers, found as :func:`sdckit.tables.registry.discover` finds them)
_DECLARING = ("tables/spec.py", "tables/ckm/run.py", "dp/run.py", "dp/mechanisms.py")


def _declaring_files() -> list[str]:
    providers = sorted(p.relative_to(_PACKAGE).as_posix() for p in _PACKAGE.glob("*/table_methods.py"))
    return providers + list(_DECLARING)


def listing_fingerprint() -> str:
    """SHA-256 of the files that declare the ``[protection]`` keys (their package-relative names
    and contents); a missing file gives a fingerprint no stored listing has."""
    h = hashlib.sha256()
    for rel in _declaring_files():
        path = _PACKAGE / rel
        h.update(rel.encode() + b"\0")
        h.update(path.read_bytes() if path.is_file() else b"\0missing\0")
    return h.hexdigest()


def protection_key_listing() -> dict:
    """The ``[protection]`` keys of a table spec, read from the declarations (imports the registry).

    Returns
    -------
    dict
        ``{"common": [[key, label], ...], "methods": [[method, label, [[key, label], ...]], ...]}``:
        the keys every method takes, then each ``protection.method`` value
        (:func:`sdckit.tables.spec.spec_methods`) with its own keys, in the order
        :func:`~sdckit.tables.spec.protection_keys` gives them. A key read by a method's own
        module rather than declared (the cell key method's ``ptable``), or declared without a label,
        has the label None.
    """
    from .params import step_params
    from .tables.registry import known_table_methods, table_method_class
    from .tables.spec import PROTECTION_COMMON, protection_keys, spec_methods

    common = [[p.name, p.label] for p in PROTECTION_COMMON]
    dp_names = [n for n in known_table_methods() if n.startswith("dp_")]
    methods = []
    for method in spec_methods():
        if method == "dp":  # the four DP settings, chosen by mechanism and the table's kind (sdckit.dp.run)
            labels = {p.name: p.label for n in dp_names for p in step_params(table_method_class(n)) if p.label}
            label = "differential privacy, the setting chosen by mechanism and kind: " + ", ".join(dp_names)
        else:
            cls = table_method_class(method)
            labels = {p.name: p.label for p in step_params(cls)}
            label = cls.label
        keys = [k for k in protection_keys(method) if k not in {c for c, _ in common}]
        # sdckit.dp.run reads the declared clipping bounds lower/upper as clip_lower/clip_upper
        methods.append([method, label, [[k, labels.get(k, labels.get(k.removeprefix("clip_")))] for k in keys]])
    return {"common": common, "methods": methods}


def stored_listing() -> dict | None:
    """The stored listing when its fingerprint matches the declaring files, else None."""
    try:
        stored = json.loads(LISTING_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(stored, dict) or stored.get("fingerprint") != listing_fingerprint():
        return None
    return stored.get("listing")


def _listing() -> dict:
    if "sdckit.tables.registry" not in sys.modules:  # nothing registered at run time in this process
        stored = stored_listing()
        if stored is not None:
            return stored
    return protection_key_listing()


def _keys_text(keys: list) -> str:
    return ", ".join(k if label is None or label == k.replace("_", " ") else f"{k} ({label})" for k, label in keys)


def table_keys_help_text() -> str:
    """The end of ``sdckit table --help``: each method's ``[protection]`` keys with their labels."""
    listing = _listing()
    out = ["Keys of [protection] in a table spec (TOML), by method; 'docs/guides/protect_table.md' explains "
           "the spec:", f"  every method: {_keys_text(listing['common'])}"]
    for method, label, keys in listing["methods"]:
        out.append(f"  method = \"{method}\" ({label}): {_keys_text(keys) or 'no other keys'}")
    return "\n".join(out)


_COMMAND_CLASS: list = []


def table_keys_command_class() -> type:
    """A typer command class whose ``--help`` ends with :func:`table_keys_help_text` (computed
    when the help is shown; typer is imported here, when the application is built)."""
    if not _COMMAND_CLASS:
        from typer.core import TyperCommand

        class TableKeysEpilogCommand(TyperCommand):
            """Parses as a plain typer command; only its help's end differs."""

            help_only = True  # sdckit.cli_dispatch: the thin parser may read its command line

            @property
            def epilog(self) -> str:  # type: ignore[override]
                from rich.markup import escape

                return escape(table_keys_help_text())

            @epilog.setter
            def epilog(self, value) -> None:  # click sets it in __init__; the listing is computed
                pass

        _COMMAND_CLASS.append(TableKeysEpilogCommand)
    return _COMMAND_CLASS[0]
