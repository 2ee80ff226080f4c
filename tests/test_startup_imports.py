"""What each command imports: a verb loads only the packages it uses (a list per command, not a time).

Each case runs ``python -X importtime -m sdckit ...`` in a fresh process and reads the modules
it imported from the ``import time:`` lines on standard error. ``--version`` and ``--help``
import none of the heavy packages, nor typer itself (the root help is precomputed from typer's
rendering of the declarations); a verb's ``--help`` imports no numerical, report or web package
(``protect --help`` lists every step's declared parameters, so the method packages may load
there); and the fast verbs (risk, table count, anonymise, table --argus) load only what their
work needs: risk no numba or scipy, a table count no pandas (and on small margins no numba),
anonymise on a small table no numba or scipy (its search runs the numpy twins of the lattice
kernels until the work outgrows them), none of them the report or web stack, nor typer or pydantic (their command lines are read by the
thin parser of sdckit.cli_dispatch, which reads the verbs' declarations without typer).
Masking with PRAM loads no matplotlib until a report draws the matrix.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CENSUS = ROOT / "src" / "sdckit" / "data" / "uk_census2011_teaching_10k.csv"
SHARED = ROOT.parent / "shared" / "data"

NUMERIC = {"numpy", "pandas", "pyarrow", "numba", "llvmlite", "scipy", "highspy", "sklearn", "statsmodels"}
REPORTS = {"matplotlib", "altair", "vl_convert", "jinja2", "PIL"}
WEB_AND_SCALE = {"uvicorn", "starlette", "fastapi", "httpx", "dask", "distributed", "cryptography", "pyreadstat"}
TYPER_EXTRAS = {"rich", "pydantic", "markdown_it", "pygments"}  # typer loads them to parse and render a verb
TYPER = {"typer", "click"} | TYPER_EXTRAS  # a command line the thin parser reads needs none of them

NEVER_FOR_HELP = NUMERIC | REPORTS | WEB_AND_SCALE


def imported(*args: str, cwd: Path | None = None) -> tuple[set[str], subprocess.CompletedProcess]:
    """Top-level packages a fresh ``python -m sdckit ARGS`` imported, and the finished process."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPROFILEIMPORTTIME"}
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "sdckit", *args], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=600)
    names = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name and name != "imported package":
                names.add(name.split(".")[0])
    return names, proc


def _verbs() -> list[str]:
    import typer

    from sdckit.cli import app

    return sorted(typer.main.get_command(app).commands)


def test_the_reader_sees_what_a_command_imports():
    # the check cannot pass vacuously: a verb that reads a file does import pandas, and a verb's
    # help (rendered by typer) imports typer
    names, proc = imported("risk", str(CENSUS), "--keys", "Region,Sex", "--json")
    assert proc.returncode == 0, proc.stderr[-500:]
    assert {"numpy", "pandas", "sdckit"} <= names
    names, proc = imported("risk", "--help")
    assert proc.returncode == 0, proc.stderr[-500:]
    assert {"typer", "sdckit"} <= names


@pytest.mark.parametrize("args", [["--version"], ["--help"]])
def test_version_and_help_import_no_heavy_package(args):
    names, proc = imported(*args)
    assert proc.returncode == 0, proc.stderr[-500:]
    assert "sdckit" in proc.stdout
    assert not names & (NEVER_FOR_HELP | TYPER), sorted(names & (NEVER_FOR_HELP | TYPER))


@pytest.mark.parametrize("verb", _verbs())
def test_a_verbs_help_imports_no_heavy_package(verb):
    names, proc = imported(verb, "--help")
    assert proc.returncode == 0, proc.stderr[-500:]
    # protect --help ends with every step's parameters: the method packages declare them
    forbidden = REPORTS | WEB_AND_SCALE if verb == "protect" else NEVER_FOR_HELP
    assert not names & forbidden, f"sdckit {verb} --help imports {sorted(names & forbidden)}"


def test_risk_imports_no_numba_scipy_or_reports():
    names, proc = imported("risk", str(CENSUS), "--keys", "Region,Sex,Age,Marital Status", "--json")
    assert proc.returncode == 0, proc.stderr[-500:]
    bad = {"numba", "llvmlite", "scipy", "highspy", "sklearn"} | TYPER | REPORTS | WEB_AND_SCALE
    assert not names & bad, sorted(names & bad)


def test_table_count_imports_no_pandas_or_reports():
    names, proc = imported("table", "count", "--rows", "3,2", "--cols", "2,3", "--json")
    assert proc.returncode == 0, proc.stderr[-500:]
    assert '"count": 3' in proc.stdout  # 2 x 2 tables with these margins: x11 in {0, 1, 2}, by hand
    bad = {"pandas", "pyarrow", "highspy", "sklearn"} | TYPER | REPORTS | WEB_AND_SCALE
    assert not names & bad, sorted(names & bad)


def test_a_small_table_count_loads_no_compiled_kernel_nor_typers_validation():
    # the hair/eye margins: counted in numpy (numba's first load costs more than the count), and
    # parsed by the thin parser (no pydantic)
    names, proc = imported("table", "count", "--rows", "108,286,71,127", "--cols", "220,215,93,64", "--json")
    assert proc.returncode == 0, proc.stderr[-500:]
    assert '"count": 1225914276768514' in proc.stdout and '"method": "ie-mitm"' in proc.stdout  # Diaconis & Gangolli
    bad = {"numba", "llvmlite", "scipy", "pandas", "pyarrow"} | TYPER
    assert not names & bad, sorted(names & bad)


def test_anonymise_imports_no_solver_or_reports(tmp_path):
    rows = [("a", "1"), ("a", "2"), ("b", "1"), ("b", "2")] * 3
    (tmp_path / "d.csv").write_text("x,y\n" + "".join(f"{x},{y}\n" for x, y in rows), encoding="utf-8")
    (tmp_path / "h_x.csv").write_text("a;*\nb;*\n", encoding="utf-8")
    (tmp_path / "h_y.csv").write_text("1;*\n2;*\n", encoding="utf-8")
    names, proc = imported("anonymise", str(tmp_path / "d.csv"), "--hierarchies", str(tmp_path), "--qis", "x,y",
                           "--k", "2", "--json")
    assert proc.returncode == 0, proc.stderr[-500:]
    bad = {"numba", "llvmlite", "scipy", "highspy", "sklearn"} | TYPER | REPORTS | WEB_AND_SCALE
    assert not names & bad, sorted(names & bad)


@pytest.mark.skipif(not (SHARED / "tauargus_meta" / "microdata.rda").is_file(),
                    reason="../shared/data/tauargus_meta (tau-Argus example files) is absent")
def test_argus_batch_imports_no_reports_or_unused_kernels(tmp_path):
    import shutil

    for f in (SHARED / "tauargus_meta").iterdir():
        shutil.copy(f, tmp_path / f.name)
    shutil.copy(SHARED / "tauargus_ckm_microdata.csv", tmp_path / "micro.csv")
    (tmp_path / "job.arb").write_text('<OPENMICRODATA> "micro.csv"\n<OPENMETADATA> "microdata.rda"\n'
                                      '<SPECIFYTABLE> "Sex""Age"|||\n<SAFETYRULE> FREQ(10,20)\n<READMICRODATA>\n'
                                      '<SUPPRESS> MOD(1,5,1,0,0)\n<WRITETABLE> (1,1,AS+,"t1_mod.csv")\n')
    names, proc = imported("table", "--argus", str(tmp_path / "job.arb"), "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-500:]
    bad = {"numba", "llvmlite", "sklearn"} | TYPER | REPORTS | WEB_AND_SCALE  # MOD needs no hypercube kernels
    assert not names & bad, sorted(names & bad)


def test_pram_without_a_report_imports_no_matplotlib():
    code = ("import sys\n"
            "from sdckit.io.files import read_microdata\n"
            "from sdckit.registry import build_step\n"
            f"md = read_microdata({str(CENSUS)!r}, key_vars=['Region', 'Sex', 'Age', 'Marital Status'])\n"
            "r = build_step('pram', {'variables': ['Marital Status'], 'min_diagonal': 0.8}).apply(md, rng=0)\n"
            "r.to_dict()\n"
            "print('before report', 'matplotlib' in sys.modules)\n"
            "r.report_html()\n"
            "print('after report', 'matplotlib' in sys.modules)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-500:]
    # the check can fail: drawing the matrix does load it
    assert "before report False" in proc.stdout and "after report True" in proc.stdout, proc.stdout


LAZY_PACKAGES = ["sdckit", "sdckit.risk", "sdckit.lattice", "sdckit.io", "sdckit.utility", "sdckit.explore",
                 "sdckit.tables.argus", "sdckit.tables.ckm", "sdckit.engine", "sdckit.pram"]


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_every_public_name_of_a_lazy_package_resolves(package):
    """A package's ``__init__`` loads its names on first use: each name in ``__all__`` is there,
    and is the very object its module defines."""
    import importlib

    if package == "sdckit.engine":
        pytest.importorskip("dask")
    pkg = importlib.import_module(package)
    for name in pkg.__all__:
        value = getattr(pkg, name)
        if package == "sdckit" and name == "__version__":
            assert isinstance(value, str) and value
            continue
        home = importlib.import_module(value.__module__) if hasattr(value, "__module__") else None
        assert home is None or getattr(home, name, value) is value, f"{package}.{name}"
        assert name in dir(pkg)
    with pytest.raises(AttributeError):
        _ = pkg.no_such_name
