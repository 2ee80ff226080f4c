"""sdckit's disclosure and utility measures against synthpop's own, on a synthetic file that
synthpop made (side by side through Rscript).

Skipped unless ``Rscript`` and the R package synthpop are installed
(``bash ../shared/tools/synthpop/install.sh``). The reference values are synthpop 1.9-2's
``disclosure()`` and ``utility.gen(method = "logit")``, computed by R on the same two CSV files.
"""

import json
import shutil
import subprocess
from importlib import resources

import pandas as pd
import pytest

from sdckit.synth import disclosure_measures, propensity_utility


def _synthpop_available() -> str | None:
    if shutil.which("Rscript") is None:
        return "Rscript not found: install R and synthpop with ../shared/tools/synthpop/install.sh"
    chk = subprocess.run(["Rscript", "-e", "suppressMessages(library(synthpop))"], capture_output=True, text=True)
    if chk.returncode != 0:
        return "R package synthpop not installed: run ../shared/tools/synthpop/install.sh"
    return None


pytestmark = pytest.mark.skipif(_synthpop_available() is not None, reason=str(_synthpop_available()))

R_SCRIPT = r"""
suppressPackageStartupMessages(library(synthpop))
args <- commandArgs(trailingOnly = TRUE)
ods <- read.csv(file.path(args[1], "orig.csv"), stringsAsFactors = TRUE)
s <- syn(ods, method = "cart", seed = 7, print.flag = FALSE)
write.csv(s$syn, file.path(args[1], "syn.csv"), row.names = FALSE)
syn1 <- read.csv(file.path(args[1], "syn.csv"), stringsAsFactors = TRUE)
d <- disclosure(syn1, ods, keys = c("Region", "Sex", "Age", "Marital"), target = "Health", print.flag = FALSE)
u1 <- utility.gen(syn1, ods, method = "logit", maxorder = 1, vars = c("Sex", "Age", "Marital", "Health", "Student"),
                  print.flag = FALSE)
u0 <- utility.gen(syn1, ods, method = "logit", maxorder = 0, print.flag = FALSE)
out <- list(ident = as.list(d$ident[1, ]), attrib = as.list(d$attrib[1, ]), caps = as.list(d$allCAPs[1, ]),
            pmse1 = u1$pMSE, spmse1 = u1$S_pMSE, df1 = u1$df, pmse0 = u0$pMSE, spmse0 = u0$S_pMSE)
num <- function(x) sprintf("%.17g", x)
cat("{", paste(sprintf('"%s": %s', c(paste0("ident.", names(out$ident)), paste0("attrib.", names(out$attrib)),
    paste0("caps.", names(out$caps)), "pmse1", "spmse1", "df1", "pmse0", "spmse0"),
    c(sapply(out$ident, num), sapply(out$attrib, num), sapply(out$caps, num), num(out$pmse1), num(out$spmse1),
      num(out$df1), num(out$pmse0), num(out$spmse0))), collapse = ", "), "}\n")
"""


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    work = tmp_path_factory.mktemp("synthpop")
    df = pd.read_csv(resources.files("sdckit") / "data" / "uk_census2011_teaching_10k.csv", nrows=1500)
    df = df[["Region", "Sex", "Age", "Marital Status", "Student", "Health", "Economic Activity"]]
    df.columns = ["Region", "Sex", "Age", "Marital", "Student", "Health", "Activity"]
    df.to_csv(work / "orig.csv", index=False)
    (work / "agree.R").write_text(R_SCRIPT)
    r = subprocess.run(["Rscript", str(work / "agree.R"), str(work)], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-2000:]
    ref = json.loads(r.stdout.strip().splitlines()[-1])
    return pd.read_csv(work / "orig.csv"), pd.read_csv(work / "syn.csv"), ref


def test_disclosure_equals_synthpop_to_1e_9(files):
    orig, syn, ref = files
    d = disclosure_measures(orig, syn, ["Region", "Sex", "Age", "Marital"], "Health")
    for group, ours in (("ident", d.identity), ("attrib", d.attribute), ("caps", d.cap)):
        for k, v in ours.items():
            assert abs(v - ref[f"{group}.{k}"]) <= 1e-9, (k, v, ref[f"{group}.{k}"])


def test_logit_pmse_equals_synthpop_to_1e_6(files):
    orig, syn, ref = files
    u1 = propensity_utility(orig, syn, method="logit", maxorder=1,
                            variables=["Sex", "Age", "Marital", "Health", "Student"])
    assert abs(u1.pMSE - ref["pmse1"]) <= 1e-6
    assert u1.df == ref["df1"]
    assert abs(u1.S_pMSE - ref["spmse1"]) <= 1e-6 * max(1.0, ref["spmse1"])
    u0 = propensity_utility(orig, syn, method="logit", maxorder=0)
    assert abs(u0.pMSE - ref["pmse0"]) <= 1e-6
    assert abs(u0.S_pMSE - ref["spmse0"]) <= 1e-6 * max(1.0, ref["spmse0"])
