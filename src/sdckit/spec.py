"""The TOML release spec: input, roles, ordered steps, gate thresholds and output paths.

Example::

    [input]
    path = "persons.csv"          # relative to the spec file
    na_values = [-9]              # optional: codes that mean "missing" (or per column: { Health = [-9] })
    delimiter = ";"               # optional: a CSV file's delimiter (default ",")
    ddi = "persons.xml"           # optional: a DDI-Codebook giving labels, missing codes, roles

    [roles]
    key_vars = ["region", "sex", "age"]
    weight = "weight"

    [run]
    seed = 20261122               # optional; a secret: goes to the internal report only

    [[steps]]
    method = "recode"
    variable = "age"
    mapping = { "0-15" = [1], "16-64" = [2, 3, 4, 5, 6], "65+" = [7, 8] }

    [gate]
    k_anonymity = 3               # at least one risk threshold, or none = "why"

    [output]
    directory = "release"
    data = "persons_released.csv"
    catalogue = ["ddi", "frictionless", "satre"]  # the default: codebook.xml, datapackage.json,
                                                  # satre_record.json in the public folder
    licence = "CC-BY-4.0"         # optional: the data package's licence

    [report]                      # optional: the report's title page and extra analyses
    title = "Labour force survey: public-use file"   # the report's heading (PDF title page too)
    organisation = "Statistics Office"
    dataset = "Labour force survey 2025"
    release = "Public-use file"
    page_size = "A4"              # or "Letter" (PDF export)
    choice_reason = "..."         # why the released setting was chosen over one the R-U map shows better
    analyses = [{ kind = "linear", outcome = "income", regressors = ["age", "sex"] }]

Validated on load: every error starts with the key path and states the rule, e.g.
``steps[2].k: must be an int >= 2, got 1``.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ._validation import close_names
from .catalogue.names import CATALOGUE_FORMATS  # the catalogue files ([output] catalogue; default all)
from .errors import InputError, ParameterError, SpecError
from .gate import Gate, as_gate
from .registry import build_step

_TOP = {"input", "roles", "run", "steps", "gate", "output", "report"}
_REPORT = {"title", "organisation", "dataset", "release", "analyses", "page_size", "choice_reason"}
_INPUT = {"path", "format", "na_values", "delimiter", "ddi"}
_ROLES = {"key_vars", "numeric_vars", "weight", "household", "strata", "sensitive", "pram_vars"}
_RUN = {"seed"}
_OUTPUT = {"directory", "data", "report", "internal_report", "internal_directory", "overwrite",
           "keep_order", "csv_formula_guard", "signing_key", "catalogue", "licence", "description"}

#: the sections of a release spec besides ``[[steps]]`` and ``[gate]`` (listed from their own
#: declarations): name -> (what the section holds, its keys); ``sdckit protect --help`` shows them
SPEC_SECTIONS = {
    "input": ("the data file and how to read it", _INPUT),
    "roles": ("what each column is (keys, numeric, weight, household, strata, sensitive, PRAM)", _ROLES),
    "run": ("the run's seed (a secret: kept in the internal report only)", _RUN),
    "output": ("where the public and internal files go and what is written", _OUTPUT),
    "report": ("the reports' title, organisation, release and the steward's analyses", _REPORT),
}



@dataclass(frozen=True)
class OutputSpec:
    """Where a release goes: a folder, the data file name (its suffix sets the format), reports."""

    directory: Path
    data: str = "released.csv"
    report: str = "report.html"
    internal_report: str = "internal_report.html"
    #: the folder of the internal files (seeds, row order, internal report); default: the public
    #: folder's name + "-internal", beside it. Never inside the public folder.
    internal_directory: Path | None = None
    #: replace an earlier release in the same folders
    overwrite: bool = False
    #: keep the input's row order (default: released rows are shuffled)
    keep_order: bool = False
    #: cells a spreadsheet would run as formulas in CSV outputs: "warn" (written, and said in
    #: the report), "quote" (written with a leading ', OWASP's rule) or "refuse" (see
    #: sdckit.io.formulas)
    csv_formula_guard: str = "warn"
    #: the steward's Ed25519 private key file (``sdckit keygen``) that signs the certificates;
    #: relative to the spec; never inside the output folders
    signing_key: Path | None = None
    #: the catalogue files written into the public folder: "ddi" (codebook.xml, DDI-Codebook
    #: 2.5), "frictionless" (datapackage.json), "satre" (satre_record.json)
    catalogue: tuple[str, ...] = CATALOGUE_FORMATS


@dataclass(frozen=True)
class ReleaseSpec:
    """A validated release spec (see the module docstring for the file format)."""

    input_path: Path
    input_format: str | None
    na_values: tuple
    roles: dict[str, Any]
    steps: tuple
    step_params: tuple[dict, ...]
    gate: Gate
    output: OutputSpec
    seed: int | None = None
    source: str | None = None
    raw: dict = field(default_factory=dict, repr=False)
    #: the CSV field delimiter of the input ([input] delimiter), None for ","
    delimiter: str | None = None
    #: a DDI-Codebook file ([input] ddi) giving labels, value labels, missing codes and roles
    ddi: Path | None = None


def _unknown(section: str, keys, allowed: set[str]) -> None:
    for key in keys:
        if key not in allowed:
            raise SpecError(f"{section}{'.' if section else ''}{key}: unknown key; "
                            f"the valid ones are {', '.join(sorted(allowed))} ({close_names(key, allowed)})")


def _expect(where: str, value: Any, kind: type | tuple, rule: str) -> Any:
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise SpecError(f"{where}: must be {rule}, got {value!r}")
    return value


def _na_values(value: Any) -> tuple:
    """``[input] na_values``: a list of codes missing in every column, or a table of codes per
    column (``{ Health = [-9] }``: SPSS/Stata user-missing codes are declared per column), held
    as ``(column, codes)`` pairs (:func:`sdckit.io.files.split_na_values` reads both)."""
    rule = 'a list of values (missing in every column) or a table of lists per column ({ Health = [-9] })'
    if isinstance(value, dict):
        out = []
        for col, codes in value.items():
            codes = _expect(f"input.na_values.{col}", codes, list, "a list of values")
            if any(isinstance(v, (list, dict)) for v in codes):
                raise SpecError(f"input.na_values.{col}: must be a list of values, got {codes!r}")
            out.append((str(col), tuple(codes)))
        return tuple(out)
    codes = _expect("input.na_values", value, list, rule)
    if any(isinstance(v, (list, dict)) for v in codes):
        raise SpecError(f"input.na_values: must be {rule}, got {value!r}")
    return tuple(codes)


def read_spec_file(path: str | os.PathLike) -> dict:
    """The parsed TOML of a spec file, with one-line errors for a missing, unreadable or
    invalid file (every spec reader of sdckit uses it)."""
    path = Path(path)
    if not path.exists():
        raise SpecError(f"{path}: no such spec file; check the path.")
    from .io.atomic import register_input

    register_input(path)  # no output of this run may be written over its spec
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{path}: is not valid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise SpecError(f"{path}: is not a UTF-8 text file (byte {exc.start}: {exc.reason}); "
                        "a spec is TOML text saved as UTF-8.") from None
    except OSError as exc:
        raise SpecError(f"{path}: cannot be read: {exc.strerror}") from None


def load_spec(path: str | os.PathLike | ReleaseSpec) -> ReleaseSpec:
    """Read and validate a release spec file; relative paths are taken from its folder. A
    :class:`ReleaseSpec` (e.g. from :func:`with_ddi`) is returned as it is."""
    if isinstance(path, ReleaseSpec):
        return path
    path = Path(path)
    raw = read_spec_file(path)
    try:
        return spec_from_dict(raw, base_dir=path.parent, source=str(path))
    except SpecError as exc:
        raise SpecError(f"{path}: {exc}") from None


def with_ddi(spec: ReleaseSpec, ddi: str | os.PathLike) -> ReleaseSpec:
    """The spec with ``ddi`` as its DDI-Codebook (``sdckit protect --ddi FILE``: the same as
    ``[input] ddi``, which it replaces); a relative path is taken from the working folder."""
    path = Path(ddi)
    if not path.is_file():
        raise InputError(f"--ddi: {path} is not a file; give the DDI-Codebook (XML) that describes "
                         f"{spec.input_path.name}")
    raw = dict(spec.raw)
    raw["input"] = {**(raw.get("input") or {}), "ddi": str(path)}
    return replace(spec, ddi=path.resolve(), raw=raw)


def _path_params(method: str, where: str) -> set[str]:
    """The parameters a step declares as file paths (kind ``"path"``): relative to the spec."""
    from .params import step_params
    from .registry import step_class

    return {p.name for p in step_params(step_class(method, where=f"{where}.method")) if p.kind == "path"}


def _refuse_flat_form(method: str, params: dict, where: str) -> None:
    """A step table in a form earlier specs used (e.g. PRAM's builder settings beside the step's
    own) is refused with one line showing the form to write (the step class says, with
    ``spec_form_problem(params)``)."""
    from .registry import step_class

    problem = getattr(step_class(method, where=f"{where}.method"), "spec_form_problem", None)
    text = problem(params) if callable(problem) else None
    if text:
        raise SpecError(f"{where}: {text}")


def _resolve(base_dir: Path, value: str) -> Path:
    p = Path(value).expanduser()
    return p if p.is_absolute() else (base_dir / p)


def spec_from_dict(raw: dict, *, base_dir: str | os.PathLike = ".", source: str | None = None) -> ReleaseSpec:
    """Validate a spec given as a dict (the parsed TOML)."""
    base_dir = Path(base_dir)
    _unknown("", raw, _TOP)

    inp = _expect("input", raw.get("input"), dict, "a table with at least path = \"...\"")
    _unknown("input", inp, _INPUT)
    if "path" not in inp:
        raise SpecError("input.path: is required (the data file to protect)")
    in_path = _resolve(base_dir, _expect("input.path", inp["path"], str, "a file path"))
    fmt = inp.get("format")
    if fmt is not None:
        _expect("input.format", fmt, str, "one of csv, parquet, sav, dta, sas7bdat")
    na_values = _na_values(inp.get("na_values", []))
    delimiter = inp.get("delimiter")
    if delimiter is not None:
        _expect("input.delimiter", delimiter, str, 'one character (e.g. ";") or "tab"')
        from .io.files import check_delimiter  # the reader's own rule

        try:
            check_delimiter(delimiter)
        except ParameterError as exc:
            raise SpecError(f"input.delimiter: must be {exc.rule}, got {delimiter!r}") from None

    ddi = inp.get("ddi")
    if ddi is not None:
        ddi = _resolve(base_dir, _expect("input.ddi", ddi, str, "the path of a DDI-Codebook file"))

    roles_raw = _expect("roles", raw.get("roles", {}), dict, "a table of column roles")
    _unknown("roles", roles_raw, _ROLES)
    roles: dict[str, Any] = {}
    for key, value in roles_raw.items():
        if key in ("weight", "household"):
            roles[key] = _expect(f"roles.{key}", value, str, "a column name")
        else:
            if isinstance(value, str):
                value = [value]
            _expect(f"roles.{key}", value, list, "a list of column names")
            for i, v in enumerate(value):
                _expect(f"roles.{key}[{i}]", v, str, "a column name")
            roles[key] = tuple(value)

    run = _expect("run", raw.get("run", {}), dict, "a table")
    _unknown("run", run, _RUN)
    seed = run.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise SpecError(f"run.seed: must be an int >= 0, got {seed!r}")

    steps_raw = raw.get("steps", [])
    _expect("steps", steps_raw, list, "an array of [[steps]] tables")
    steps, params_list = [], []
    for i, step in enumerate(steps_raw):
        where = f"steps[{i}]"
        _expect(where, step, dict, "a table with method = \"...\"")
        if "method" not in step:
            raise SpecError(f"{where}.method: is required (the step's method name)")
        method = _expect(f"{where}.method", step["method"], str, "a method name")
        params = {k: v for k, v in step.items() if k != "method"}
        _refuse_flat_form(method, params, where)
        paths = _path_params(method, where)
        for key, value in list(params.items()):
            if (key in paths or key == "file" or key.endswith("_file")) and isinstance(value, str):
                params[key] = str(_resolve(base_dir, value))
            elif isinstance(value, dict) and isinstance(value.get("type"), str):  # a variant's own paths
                params[key] = {k: str(_resolve(base_dir, v)) if (k == "file" or k.endswith("_file"))
                               and isinstance(v, str) else v for k, v in value.items()}
        steps.append(build_step(method, params, where=where))
        params_list.append({"method": method, **params})

    gate_raw = _expect("gate", raw.get("gate", {}), dict, "a table of thresholds")
    # every threshold built by its own declared constructor (KAnonymity(k=3), ...); a gate
    # with no risk threshold is refused when a release is made from the spec, not here, so
    # a spec being written (the workbench) can be checked before its gate is set
    gate = as_gate(gate_raw, where="gate")

    rep = _expect("report", raw.get("report", {}), dict, "a table (title, organisation, dataset, release, analyses, page_size, "
                  "choice_reason)")
    _unknown("report", rep, _REPORT)
    for key in ("title", "organisation", "dataset", "release", "choice_reason"):
        if key in rep:
            _expect(f"report.{key}", rep[key], str, "a text")
    if "page_size" in rep and rep["page_size"] not in ("A4", "Letter"):
        raise SpecError(f"report.page_size: must be \"A4\" or \"Letter\", got {rep['page_size']!r}")
    for i, a in enumerate(_expect("report.analyses", rep.get("analyses", []), list, "an array of analysis tables")):
        _expect(f"report.analyses[{i}]", a, dict, 'a table with kind = "linear", "logistic" or "pca"')

    out = _expect("output", raw.get("output", {}), dict, "a table")
    _unknown("output", out, _OUTPUT)
    for key in out:
        if key in ("overwrite", "keep_order"):
            _expect(f"output.{key}", out[key], bool, "true or false")
        elif key == "catalogue":
            value = [out[key]] if isinstance(out[key], str) else out[key]
            _expect("output.catalogue", value, list, f"a list of {', '.join(CATALOGUE_FORMATS)}")
            for i, v in enumerate(value):
                if v not in CATALOGUE_FORMATS:
                    raise SpecError(f"output.catalogue[{i}]: must be one of {', '.join(CATALOGUE_FORMATS)}, got {v!r}")
        elif key == "csv_formula_guard":
            if out[key] not in ("warn", "quote", "refuse"):
                raise SpecError(f'output.csv_formula_guard: must be "warn", "quote" or "refuse", got {out[key]!r}')
        elif key in ("licence", "description"):
            _expect(f"output.{key}", out[key], str, "a text (e.g. licence = \"CC-BY-4.0\")")
        else:
            _expect(f"output.{key}", out[key], str, "a path")
    for key in ("data", "report", "internal_report"):
        if key in out and (Path(out[key]).name != out[key] or out[key] in ("", ".", "..")):
            raise SpecError(f"output.{key}: must be a file name inside output.directory, got {out[key]!r}")
    output = OutputSpec(directory=_resolve(base_dir, out.get("directory", "release")),
                        data=out.get("data", "released" + (Path(in_path).suffix or ".csv")),
                        report=out.get("report", "report.html"),
                        internal_report=out.get("internal_report", "internal_report.html"),
                        internal_directory=(_resolve(base_dir, out["internal_directory"])
                                            if "internal_directory" in out else None),
                        overwrite=out.get("overwrite", False), keep_order=out.get("keep_order", False),
                        csv_formula_guard=out.get("csv_formula_guard", "warn"),
                        signing_key=(_resolve(base_dir, out["signing_key"]) if "signing_key" in out else None),
                        catalogue=tuple(([out["catalogue"]] if isinstance(out["catalogue"], str) else out["catalogue"])
                                        if "catalogue" in out else CATALOGUE_FORMATS))
    names = [output.data, output.report, output.internal_report]
    if len(set(names)) != len(names):
        raise SpecError(f"output: data, report and internal_report must be different files, got {names}")
    return ReleaseSpec(in_path, fmt, na_values, roles, tuple(steps), tuple(params_list), gate,
                       output, seed, source, raw, delimiter=delimiter, ddi=ddi)
