"""Write protected tables in tau-Argus's output formats.

``<WRITETABLE> (table, type, options, "file")`` types, as tau-Argus numbers them:

1. CSV file: one line per cell, the codes then the value (``x`` when suppressed), with the
   status (``AS+``) and variable names on the first line (``FL+``).
2. CSV file for a pivot table: the same lines with a header (the format pivot tools read).
3. Code-value file: codes and value, no status.
7. CKM file: codes and perturbed value, with the original value (``AO+``), the difference
   (``AD+``) and the cell key (``AC+``).

Options: ``AS`` add status, ``SE`` suppress empty cells, ``FL`` names on the first line,
``QU`` quote codes (each followed by ``+`` or ``-``). Status letters: ``S`` safe, ``U``
primary (unsafe), ``M`` secondary suppression, ``P`` protected, ``Z`` empty, ``R`` rounded,
``C`` perturbed by the cell key method. Types 4 (SBS), 5 (intermediate) and 6 (JJ) are not
written.

References
----------
de Wolf, P.-P. et al. (2014). *tau-Argus user's manual* 4.1, section 4.6 (saving tables).
sdcTools/tauargus, ``batch.java`` (``writeTableBatch``: output types and options).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...errors import InputError
from ...io.atomic import atomic_write_text

__all__ = ["table_status", "write_argus_table", "parse_write_options"]

_OPTIONS = {"AS": "status", "SE": "suppress_empty", "FL": "names", "QU": "quotes", "HL": "levels",
            "SO": "status_only", "AR": "audit", "HI": "holding", "TR": "trivial", "AO": "original",
            "AD": "difference", "AC": "cell_key"}


def parse_write_options(text: str, where: str) -> dict:
    """``AS+SE-QU+`` -> {"status": True, "suppress_empty": False, "quotes": True}."""
    out = {}
    s = text.replace(" ", "").upper()
    k = 0
    while k < len(s):
        code, sign = s[k:k + 2], s[k + 2:k + 3]
        if code not in _OPTIONS or sign not in ("+", "-"):
            raise InputError(f"{where}: write option {s[k:k + 3]!r} is not one of "
                             f"{', '.join(c + '+/-' for c in _OPTIONS)}")
        out[_OPTIONS[code]] = sign == "+"
        k += 3
    return out


def table_status(table, *, primary=None, suppressed=None, protected=None, kind: str = "suppression") -> np.ndarray:
    """tau-Argus status letter of every cell."""
    st = np.full(table.n_cells, "S", dtype=object)
    if kind == "rounding":
        st[:] = "R"
    elif kind == "ckm":
        st[:] = "C"
    if protected is not None:
        st[np.asarray(protected, bool)] = "P"
    if suppressed is not None:
        st[np.asarray(suppressed, bool)] = "M"
    if primary is not None:
        st[np.asarray(primary, bool)] = "U"
    st[(table.freq == 0) & (table.value == 0)] = "Z"
    return st


def write_argus_table(path: str | Path, table, values: np.ndarray, status: np.ndarray, out_type: int,
                      options: dict, *, where: str, extra: dict | None = None) -> Path:
    """Write one table; ``values`` are the published values (NaN = suppressed)."""
    if out_type not in (1, 2, 3, 7):
        names = {4: "SBS", 5: "intermediate", 6: "JJ"}
        raise InputError(f"{where}: output type {out_type} ({names.get(out_type, 'unknown')}) is not written by "
                         "sdckit; use 1 (CSV), 2 (CSV for pivot), 3 (code-value) or 7 (CKM)")
    f = table.to_frame()[list(table.dims)].astype(str)
    v = np.asarray(values, dtype=float)
    integral = np.all(np.isnan(v) | (np.abs(v - np.round(v)) < 1e-9))
    fmt = (lambda x: "x" if np.isnan(x) else (str(int(round(x))) if integral else f"{x:.6f}".rstrip("0").rstrip(".")))
    f["value"] = [fmt(x) for x in v]
    status_on = options.get("status", False) or out_type == 7 and options.get("status", False)
    if status_on and out_type in (1, 2):
        f["status"] = status
    if out_type == 7:
        for key in ("original", "difference", "cell_key"):
            if options.get(key) and extra is not None and key in extra:
                f[key] = [f"{x:.10g}" for x in extra[key]]
    keep = np.ones(len(f), bool)
    if options.get("suppress_empty", False):
        keep = table.freq > 0
    f = f[keep]
    quotes = options.get("quotes", True)
    if quotes:
        for d in table.dims:
            f[d] = '"' + f[d].str.replace('"', '""') + '"'
    names = options.get("names", out_type == 2)
    lines = []
    if names:
        lines.append(",".join((f'"{c}"' if quotes and c in table.dims else c) for c in f.columns))
    lines += [",".join(r) for r in f.astype(str).itertuples(index=False, name=None)]
    return atomic_write_text(Path(path), "\n".join(lines) + "\n")
