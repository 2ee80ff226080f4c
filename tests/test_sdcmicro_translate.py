"""``sdckit from-sdcmicro``: the R reader, the translation of sdcMicro calls into a release
spec, and the translated specs run: the guide's typical session, the main example of
sdcMicro's record-swapping vignette (read from the source tarball when it is there) and the R
driver script of ``benchmarks/compare_sdcmicro.py``."""

import importlib.util
import json
import re
import sys
import tarfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import tomli_w
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit import InputError
from sdckit.cli import main
from sdckit.release import protect
from sdckit.sdcmicro import parse_r, translate

ROOT = Path(__file__).resolve().parents[1]
TARBALL = ROOT.parent / "shared" / "tools" / "sdcmicro" / "sdcMicro-5.8.1-src.tar.gz"
CENSUS = ROOT / "src" / "sdckit" / "data" / "uk_census2011_teaching_10k.csv"

GUIDE_SCRIPT = """
library(sdcMicro)
census <- read.csv("census.csv", check.names = FALSE)
kv <- c("Region", "Sex", "Age",
        "Marital Status")   # continued on a second line
sdc <- createSdcObj(census, keyVars = kv,
                    weightVar = NULL, hhId = NULL)
sdc <- removeDirectID(sdc, "Person ID")
sdc <- groupAndRename(sdc, "Age", before = c("2", "3"), after = "16-34")
sdc <- pram(sdc, variables = "Marital Status", pd = 0.9)
sdc <- localSuppression(sdc, k = 3)
print(sdc, "risk")
plot(sdc)
report(sdc, internal = TRUE)
write.csv(extractManipData(sdc), "census_released.csv", row.names = FALSE)
"""


def _run(spec: dict, tmp_path: Path, data: Path):
    spec = json.loads(json.dumps(spec))
    spec["input"]["path"] = str(data)
    spec["output"]["directory"] = str(tmp_path / "release")
    path = tmp_path / "spec.toml"
    path.write_text(tomli_w.dumps(spec))
    run, _ = protect(path)
    return run


def test_reader_reads_calls_named_args_vectors_and_formulas():
    tree = parse_r('x <- f(a, b = c("u", \'v\'), n = -1.5e2, k = 5L, t = TRUE, z = NULL)\n'
                   'g(x)$y[1, ] ; h <- a + b ~ s + t\nfunction(a = 1) { if (a) 1 else 2 }')
    assign = tree[0]
    assert assign.kind == "assign" and assign.args[0].value == "x"
    call = assign.args[1]
    names = [n for n, _ in call.args]
    assert names == [None, "b", "n", "k", "t", "z"]
    assert [a.value for _, a in call.args[1][1].args] == ["u", "v"]
    assert call.args[2][1].kind == "unary" and call.args[2][1].args[0].value == 150.0
    assert call.args[3][1].value == 5 and call.args[4][1].value is True and call.args[5][1].kind == "null"
    assert tree[1].kind == "index" and tree[1].value.kind == "dollar"
    assert tree[2].args[1].kind == "formula"
    assert tree[3].kind == "function" and tree[3].args[0].kind == "block"


@settings(max_examples=50, deadline=None)
@given(values=st.lists(st.one_of(st.integers(-10**6, 10**6), st.text(alphabet="abcXYZ _-.é", max_size=8)),
                       min_size=1, max_size=6),
       k=st.integers(2, 20), aggr=st.integers(2, 9))
def test_constants_round_trip_into_the_spec(values, k, aggr):
    # invariant: whatever vector of names a script gives, the step gets exactly those names
    names = [str(v) for v in values]
    r_vec = "c(" + ", ".join('"' + n.replace("\\", "\\\\").replace('"', '\\"') + '"' for n in names) + ")"
    script = (f'd <- read.csv("f.csv")\nv <- {r_vec}\n'
              f'd <- microaggregation(d, variables = v, aggr = {aggr}, method = "pca")\n'
              f'd <- localSuppression(d, k = {k})\n')
    (t,) = translate(script)
    ma, ls = t.spec["steps"]
    assert ma == {"method": "microaggregation", "k": aggr, "algorithm": {"type": "pca"}, "variables": names}
    assert ls == {"method": "local_suppression", "k": k} and t.spec["gate"] == {"k_anonymity": k}


def test_units_are_converted_and_untranslatable_lines_are_named():
    script = ('x <- read.csv("n.csv")\n'
              'x <- addNoise(x, variables = c("a", "b"), noise = 30)\n'          # (30/100)^2
              'x <- addNoise(x, variables = c("a", "b"), noise = 9, method = "correlated")\n'
              'x <- addNoise(x, variables = c("a", "b"), method = "correlated2", delta = 0.3)\n'
              'x <- rankSwap(x, variables = "a", P = 0.05, TopPercent = 0, BottomPercent = 0)\n'
              'x <- addNoise(x, variables = "a", method = "ROMM")\n'
              'x <- microaggregation(x, variables = c("a", "b"), method = "clustpca", clustermethod = "kmeans")\n'
              'y <- mean(x$a)\n')
    (t,) = translate(script)
    steps = t.spec["steps"]
    assert [s.get("level") for s in steps[:3]] == [pytest.approx(0.09), pytest.approx(0.09), pytest.approx(0.09)]
    assert [s["kind"] for s in steps[:3]] == ["additive", "correlated", "correlated2"]
    assert steps[3]["p"] == pytest.approx(5.0)
    missing = {n.line: n.what for n in t.notes if n.status == "not translated"}
    assert set(missing) == {6, 7, 8}
    assert "ROMM" in missing[6] and "kmeans" in missing[7]


def test_guide_session_translates_and_runs(tmp_path):
    (t,) = translate(GUIDE_SCRIPT)
    assert t.spec["roles"]["key_vars"] == ["Region", "Sex", "Age", "Marital Status"]
    assert [s["method"] for s in t.spec["steps"]] == ["remove", "recode", "pram", "local_suppression"]
    assert t.spec["output"]["data"] == "census_released.csv"
    assert [n.line for n in t.notes if n.status == "not translated"] == [13]        # plot(sdc)
    run = _run(t.spec, tmp_path, CENSUS)
    assert run.passed
    assert all(g.holds for r in run.results for g in r.guarantees)


def test_cli_writes_the_spec_and_lists_what_it_could_not_translate(tmp_path, capsys):
    script = tmp_path / "s.R"
    script.write_text(GUIDE_SCRIPT)
    out = tmp_path / "s.toml"
    assert main(["from-sdcmicro", str(script), "-o", str(out), "--input", str(CENSUS), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["specs"][0]["file"] == str(out) and out.exists()
    assert any(line["status"] == "not translated" and line["line"] == 13 for line in doc["specs"][0]["lines"])
    assert main(["from-sdcmicro", str(tmp_path / "none.R")]) == 2


def test_a_script_without_sdcmicro_calls_is_refused():
    with pytest.raises(InputError, match="no sdcMicro call"):
        translate("x <- 1\nprint(x)\n")


def _vignette_example() -> str:
    """The R chunks of sdcMicro's recordSwapping vignette up to its first recordSwap call."""
    with tarfile.open(TARBALL) as tar:
        text = tar.extractfile("sdcMicro/vignettes/recordSwapping.Rmd").read().decode()
    chunks = re.findall(r"```r\n(.*?)```", text, flags=re.S)
    out = []
    for c in chunks:
        out.append(c)
        if "recordSwap(" in c:
            break
    return "\n".join(out)


def _households(n_hh: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    size = rng.integers(1, 6, n_hh)
    hid = np.repeat(np.arange(1, n_hh + 1), size)
    nuts1 = rng.integers(1, 4, n_hh)
    return pd.DataFrame({"nuts1": nuts1[hid - 1], "nuts2": (nuts1 * 10 + rng.integers(1, 5, n_hh))[hid - 1],
                         "hid": hid, "hsize": size[hid - 1], "hincome": rng.integers(1, 10, n_hh)[hid - 1],
                         "ageGroup": rng.integers(1, 8, hid.size), "gender": rng.integers(1, 3, hid.size)})


@pytest.mark.skipif(not TARBALL.exists(), reason=f"sdcMicro's source tarball not found at {TARBALL}")
def test_record_swapping_vignette_example_translates_and_runs(tmp_path):
    (t,) = translate(_vignette_example())
    (step,) = t.spec["steps"]
    assert step == {"method": "record_swap", "hierarchy": ["nuts1", "nuts2"], "allow_across_top": True,
                    "donors": "anywhere", "similar": ["hsize"],
                    "risk_variables": ["hincome", "ageGroup", "gender"], "swap_rate": 0.05,
                    "k_anonymity": 3, "household": "hid"}
    data = tmp_path / "dat.csv"
    _households(4000, 3).to_csv(data, index=False)
    spec = dict(t.spec, gate={"none": "test of the translation"})
    run = _run(spec, tmp_path, data)
    assert all(g.holds for r in run.results for g in r.guarantees)


def _compare_module():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        spec = importlib.util.spec_from_file_location("compare_sdcmicro", ROOT / "benchmarks" / "compare_sdcmicro.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return mod


def test_benchmark_driver_script_translates_and_runs(tmp_path):
    cmp = _compare_module()
    translations = {t.source: t for t in translate(cmp._fill(cmp.R_SCRIPT))}
    assert [s["method"] for s in translations["num.csv"].spec["steps"]] == ["microaggregation", "rank_swap"]
    assert [s["method"] for s in translations["keys.csv"].spec["steps"]] == ["pram", "noise", "recode"]
    assert translations["corr.csv"].spec["steps"][0]["kind"] == "correlated"
    assert translations["adult.csv"].spec["gate"] == {"k_anonymity": 5}
    # microaggregation(method = m) with m computed in R is reported, not guessed
    assert any("microaggregation()" in n.what and "method" in n.what and n.status == "not translated"
               for n in translations["num.csv"].notes)
    notes = translations["keys.csv"].notes
    assert any("topBotCoding" in n.what and n.status == "not translated" for n in notes)  # value read from a file
    cmp.make_files(tmp_path, 2000, 1500, np.random.default_rng(1), 1500)
    for src in ("num.csv", "keys.csv", "corr.csv") + (("adult.csv",) if (tmp_path / "adult.csv").exists() else ()):
        out = tmp_path / src.replace(".csv", "")
        out.mkdir()
        run = _run(translations[src].spec, out, tmp_path / src)
        assert all(g.holds for r in run.results for g in r.guarantees), src
