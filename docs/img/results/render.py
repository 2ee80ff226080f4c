"""Offline render of five results as a notebook shows them (the cell's code, its ``repr`` and
its ``_repr_html_``), one HTML page each, screenshotted with Debian's headless chromium.

Run from the project root: ``.venv/bin/python docs/img/results/render.py``. It writes
``docs/img/results/<name>.png`` (the pages go to a temporary folder) and prints one JSON line
per result.
"""

from __future__ import annotations

import html
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

import sdckit

HERE = Path(__file__).resolve().parent
STYLE = """body{font-family:sans-serif;font-size:13px;margin:16px;background:#fff;color:#222}
.cell{border-left:3px solid #42a5f5;padding:4px 10px;margin-bottom:10px}
.prompt{color:#303f9f;font-family:monospace}.out{color:#d84315;font-family:monospace}
pre{background:#f5f5f5;padding:6px;margin:4px 0;white-space:pre-wrap}
table{border-collapse:collapse;margin:4px 0}th,td{border:1px solid #ddd;padding:2px 8px;text-align:left}
li.ok{color:#2e7d32}li.fail{color:#c62828}"""


def _data() -> sdckit.Microdata:
    frame = pd.read_csv(Path(sdckit.__file__).parent / "data" / "uk_census2011_teaching_10k.csv", nrows=3000)
    return sdckit.Microdata(frame, key_vars=["Region", "Sex", "Age", "Marital Status"])


def _results(md: sdckit.Microdata) -> dict[str, tuple[str, object]]:
    from sdckit.pram.builders import Invariant
    from sdckit.tables.registry import build_table_method, build_table_rule
    from sdckit.tables.rules import primary_cells
    from sdckit.tables.table import Hierarchy, Table

    out: dict[str, tuple[str, object]] = {}
    out["risk_report"] = ("sdckit.measure_risk(md)", sdckit.measure_risk(md))
    pram = sdckit.steps.Pram(["Marital Status"], matrix=Invariant(alpha=0.8), min_diagonal=0.8)
    out["pram_result"] = ('sdckit.steps.Pram(["Marital Status"], matrix=Invariant(alpha=0.8),\n'
                          '                  min_diagonal=0.8).apply(md, rng=1)', pram.apply(md, rng=1))
    supp = sdckit.steps.LocalSuppression(k=3)
    out["local_suppression"] = ("sdckit.steps.LocalSuppression(k=3).apply(md, rng=1)", supp.apply(md, rng=1))
    release = sdckit.Release(md.with_data(md.frame.drop(columns=["Person ID"])), [pram, supp],
                             {"k_anonymity": 3, "min_diagonal": 0.8}, rng=1)
    out["release_run"] = ('sdckit.Release(md, [pram, suppression],\n'
                          '               {"k_anonymity": 3, "min_diagonal": 0.8}, rng=1).run()', release.run())
    frame = md.frame
    regions = sorted(frame["Region"].unique())
    sexes = sorted(frame["Sex"].unique())
    table = Table.from_microdata(frame, ["Region", "Sex"], hierarchies={"Region": Hierarchy.flat(regions),
                                                                      "Sex": Hierarchy.flat(sexes)})
    rule = build_table_rule({"type": "threshold", "n": 3}).build()
    method = build_table_method("rounding", {})
    out["table_rounding"] = ('build_table_method("rounding").apply(table, primary, rng=1)',
                             method.apply(table, primary_cells(table, [rule]), rng=1, microdata=frame))
    return out


def _page(code: str, obj: object) -> str:
    return (f"<!doctype html><html><head><meta charset='utf-8'><style>{STYLE}</style></head><body>"
            f"<div class='cell'><span class='prompt'>In [1]:</span><pre>{html.escape(code)}</pre></div>"
            f"<div class='cell'><span class='out'>Out[1] (text/plain):</span><pre>{html.escape(repr(obj))}</pre></div>"
            f"<div class='cell'><span class='out'>Out[1] (text/html):</span>{obj._repr_html_()}</div>"
            "</body></html>")


def main() -> int:
    md = _data()
    browser = shutil.which("chromium")
    pages = Path(tempfile.mkdtemp(prefix="sdckit-results-"))
    for name, (code, obj) in _results(md).items():
        page = pages / f"{name}.html"
        page.write_text(_page(code, obj), encoding="utf-8")
        png = HERE / f"{name}.png"
        if browser:
            subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                            f"--screenshot={png}", "--window-size=900,700", page.as_uri()],
                           check=True, capture_output=True, timeout=120)
        page.unlink()
        print(json.dumps({"case": name, "repr": repr(obj), "png": png.name if browser else None}))
    pages.rmdir()
    return 0


if __name__ == "__main__":
    sys.exit(main())
