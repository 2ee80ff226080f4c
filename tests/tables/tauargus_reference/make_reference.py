"""Write the reference files of tests/tables/test_argus_write.py with tau-Argus's engine.

The files are what libtauargus (tau-Argus's C++ library, through pytauargus 0.6.0) writes for
the magnitude table Savings by Sex x Age (Age hierarchical, ``dim_age.hrc``) of the shared
tau-Argus example microdata (``../shared/data/tauargus_ckm_microdata.csv``) with the rules
``P(15,1)|NK(3,75)``, before any suppression:

* ``savings_intermediate.txt`` / ``savings_intermediate_so.txt``: ``<WRITETABLE> (1,5,,...)`` and
  ``(1,5,SO+,...)``, the intermediate file (pytauargus's port of tau-Argus's ``TableSet.write``);
* ``savings_intermediate_hi.txt``: ``(1,5,HI+,...)``, the same at the holding level (no holding
  variable: the holdings' counts are libtauargus's, and no holding-level rule asks for top-n columns);
* ``savings_raw.jj`` and ``savings_raw.jj.frq``: libtauargus's ``WriteJJFormat`` with tau-Argus's
  a-priori bounds (0 and 1.5 times the largest cell), before tau-Argus's Java layer rewrites it;
* ``savings_raw_tr.jj`` and ``savings_raw_tr.jj.frq``: the same with ``WithBogus`` (what ``TR+``
  passes): the cells of codes that are their parent's only child left out.

pytauargus is not a dependency of sdckit: it runs in its own environment, e.g.
``uv venv /tmp/pytau --python 3.11 && uv pip install --python /tmp/pytau/bin/python
pytauargus==0.6.0``, then ``/tmp/pytau/bin/python tests/tables/tauargus_reference/make_reference.py
../shared/data``. pytauargus reads fixed-width microdata, so the CSV is written as such first.
"""

from __future__ import annotations

import csv
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

RDA = """Sex 1 1
  <RECODEABLE>
  <TOTCODE> "Total"
Age 3 1
  <RECODEABLE>
  <TOTCODE> "Total"
  <HIERARCHICAL>
  <HIERCODELIST> "dim_age.hrc"
  <HIERLEADSTRING> "@"
Savings 5 5
  <NUMERIC>
"""
ARB = """<OPENMICRODATA> "micro.asc"
<OPENMETADATA> "micro.rda"
<SPECIFYTABLE> "Sex""Age"|"Savings"||
<SAFETYRULE> P(15,1)|NK(3,75)
<READMICRODATA>
<WRITETABLE> (1,5,,"savings_intermediate.txt")
<WRITETABLE> (1,5,SO+,"savings_intermediate_so.txt")
<WRITETABLE> (1,5,HI+,"savings_intermediate_hi.txt")
"""


def main(shared: Path) -> None:
    from pytauargus.engine import run_batch

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        shutil.copy(shared / "tauargus_meta" / "dim_age.hrc", work / "dim_age.hrc")
        with open(shared / "tauargus_ckm_microdata.csv", newline="") as f, open(work / "micro.asc", "w") as out:
            for r in csv.DictReader(f):
                out.write(f"{r['Sex']:>1} {r['Age']:>1} {r['Savings']:>5}\n")
        (work / "micro.rda").write_text(RDA)
        (work / "job.arb").write_text(ARB)
        eng = run_batch(str(work / "job.arb"))
        lo, hi = eng._table_cell_bounds(0)  # tau-Argus TableService: the a-priori bounds
        x_min = 1.5 * lo if lo < 0 else 0.0
        x_max = 1.5 * hi if hi > 0 else 0.0
        eng._tau.write_jj_format(0, str(work / "savings_raw.jj"), x_min, x_max, False, False, False)
        eng._tau.write_jj_format(0, str(work / "savings_raw_tr.jj"), x_min, x_max, True, False, False)
        for name in ("savings_intermediate.txt", "savings_intermediate_so.txt", "savings_intermediate_hi.txt",
                     "savings_raw.jj", "savings_raw.jj.frq", "savings_raw_tr.jj", "savings_raw_tr.jj.frq"):
            shutil.copy(work / name, HERE / name)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parents[3] / "shared" / "data")
