"""Write protected tables in tau-Argus's output layouts.

``<WRITETABLE> (table, type, options, "file")`` types, as tau-Argus numbers them and lays
them out (read from tau-Argus's own writer, libtauargus ``TauArgus.cpp``: ``WriteCSVTable``,
``WriteCellRecord``, ``WriteCSVCell``, ``WriteSBSStaart``; batch options from
``batch.java``/``SaveTable.java``):

1. CSV file, the table as a matrix: the last spanning variable's codes head the columns (the
   first field empty), one line per code of the one before it (its code, then the cells), an
   empty line after each layer; with three or more variables each layer starts with
   ``Var 1,"code"`` (``Var k`` for each outer variable). A one-variable table is one line of
   codes and one of values. Codes are quoted (``QU+``, the default); a total is ``Total``.
2. CSV file for a pivot table: one record per cell, the codes then the value; the first line
   names the variables and the value (``Freq`` for a frequency table, ``<response>_Round``
   after rounding), and ``Status`` with ``AS+``; with ``AS+`` a suppressed cell shows its
   value and tau-Argus's numeric status code, without it ``x``.
3. Code-value file: the records of type 2, the names line only with ``FL+``.
4. SBS file: the records of type 2 for non-empty cells, with the hierarchical level after
   each code (``HL+``), then the contributors and the SBS status letter (``V`` safe, ``A``
   frequency rule, ``B`` dominance / other primary, ``D`` secondary).
7. CKM file: codes and perturbed value, with the original value (``AO+``), the difference
   (``AD+``) and the cell key (``AC+``).

Types 5 (intermediate file) and 6 (JJ file, the input of tau-Argus's solvers) hold the cells'
costs, shadow values and protection bounds of tau-Argus's own solvers: they are refused.

Cell values are written with the response's decimals (``%.nf``; ``decimals``, default 0 for
whole numbers), ``x`` for a suppressed cell, ``-`` for an empty one. tau-Argus's numeric
status codes (``defines.h``, ``CellStatusItems``): 1 safe, 3 unsafe by a dominance / p% rule,
5 unsafe by the frequency rule, 10 protected, 11 secondary, 14 empty.

Options: ``AS`` add status, ``SE`` suppress empty cells, ``FL`` names on the first line,
``QU`` quote codes, ``HL`` hierarchical levels (SBS) (each followed by ``+`` or ``-``).
sdckit's status letters: ``S`` safe, ``U`` primary (unsafe), ``M`` secondary suppression,
``P`` protected, ``Z`` empty, ``R`` rounded, ``C`` perturbed by the cell key method.

References
----------
de Wolf, P.-P. et al. (2014). *tau-Argus user's manual* 4.1, section 4.6 (saving tables).
sdcTools/tauargus, ``batch.java`` (``writeTableBatch``: output types and options) and
``SaveTable.java`` (``writeTable``, ``makeFirstLine``); sdcTools/libtauargus ``TauArgus.cpp``
(the CSV, cell-record and SBS layouts) and ``defines.h`` (cell status codes).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...errors import InputError
from ...io.atomic import atomic_write_text

__all__ = ["table_status", "write_argus_table", "parse_write_options", "argus_table_text", "status_codes",
           "ARGUS_STATUS"]

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


#: tau-Argus's numeric cell status (libtauargus defines.h) of sdckit's letters; a primary cell
#: is CS_UNSAFE_FREQ (5) in a frequency table, CS_UNSAFE_RULE (3) in a magnitude table
ARGUS_STATUS = {"S": 1, "R": 1, "C": 1, "P": 10, "M": 11, "Z": 14}
_TYPE_NAMES = {1: "CSV", 2: "CSV for pivot", 3: "code-value", 4: "SBS", 5: "intermediate", 6: "JJ", 7: "CKM"}


def status_codes(table, status) -> np.ndarray:
    """tau-Argus's numeric status code of every cell (see the module docstring)."""
    st = np.asarray(status, dtype=object)
    out = np.array([ARGUS_STATUS.get(x, 0) for x in st], dtype=np.int64)
    out[st == "U"] = 5 if table.kind == "frequency" else 3
    if (out == 0).any():
        bad = sorted({str(x) for x in st[out == 0]})
        raise InputError(f"status: {', '.join(bad)} is not one of sdckit's cell status letters S, U, M, P, Z, R, C")
    return out


def _decimals(v: np.ndarray, decimals: int | None) -> int:
    if decimals is not None:
        return int(decimals)
    finite = v[np.isfinite(v)]
    for d in range(0, 7):
        if np.all(np.abs(finite * 10**d - np.round(finite * 10**d)) < 1e-6):
            return d
    return 6


def _label(code: str, quotes: bool) -> str:
    text = str(code).replace('"', "'")  # tau-Argus replaces a double quote by a single one
    return f'"{text}"' if quotes else text


def _resp_type(status: np.ndarray) -> int:
    """tau-Argus's RespType: 0 suppression, 1 rounded, 3 cell key method."""
    if (status == "R").any():
        return 1
    if (status == "C").any():
        return 3
    return 0


def _cell_text(value: float, st: str, nd: int, resp_type: int, show_unsafe: bool, original: float) -> str:
    if st == "Z":
        return "-"
    if st in ("U", "M") and resp_type == 0:
        return f"{original:.{nd}f}" if show_unsafe else "x"
    return f"{value:.{nd}f}"


def _matrix(table, cells: list[str], quotes: bool) -> str:
    """Type 1: the table as tau-Argus's CSV matrix (WriteCSVTable with the variables in order)."""
    codes = [list(h.codes) for h in table.hierarchies]
    grid = np.array(cells, dtype=object).reshape(table.shape)
    if len(codes) == 1:
        return "," + ",".join(_label(c, quotes) for c in codes[0]) + "\n," + ",".join(grid.tolist())
    out: list[str] = []
    head = "," + ",".join(_label(c, quotes) for c in codes[-1]) + "\n"
    for layer in np.ndindex(*table.shape[:-2]):
        if len(codes) > 2:
            out.append(", ".join(f"Var {j + 1}," + _label(codes[j][i], quotes) for j, i in enumerate(layer)) + "\n")
        out.append(head)
        block = grid[layer]
        for r, row_code in enumerate(codes[-2]):
            out.append(_label(row_code, quotes) + "," + ",".join(block[r].tolist()) + "\n")
        out.append("\n")
    return "".join(out)


def _levels(h) -> np.ndarray:
    """The hierarchical level of every code as tau-Argus numbers it: 0 for the total and for a
    flat variable's codes, else the depth below the total."""
    depth = np.asarray(getattr(h, "depth", np.zeros(len(h))), dtype=np.int64)
    if h.n_levels <= 1:
        return np.zeros(len(h), dtype=np.int64)
    return depth


def argus_table_text(table, values: np.ndarray, status: np.ndarray, out_type: int, options: dict, *,
                     where: str = "WRITETABLE", extra: dict | None = None, response: str | None = None,
                     decimals: int | None = None) -> str:
    """The text of one table in tau-Argus's layout ``out_type`` (see the module docstring).

    ``values`` are the published values (NaN = suppressed), ``status`` sdckit's letters per
    cell; ``response`` names the value column of a magnitude table in the first line (default
    the table's response, ``Freq`` for a frequency table).
    """
    if out_type not in (1, 2, 3, 4, 7):
        raise InputError(f"{where}: output type {out_type} ({_TYPE_NAMES.get(out_type, 'unknown')}) is not written "
                         "by sdckit (it holds tau-Argus's own solver input: costs, shadow values and bounds); use 1 "
                         "(CSV), 2 (CSV for pivot), 3 (code-value), 4 (SBS) or 7 (CKM)")
    st = np.asarray(status, dtype=object)
    v = np.asarray(values, dtype=float)
    orig = np.asarray(table.value, dtype=float)
    if v.size != table.n_cells or st.size != table.n_cells:
        raise InputError(f"{where}: values and status need one entry per cell ({table.n_cells})")
    resp_type = _resp_type(st)
    if out_type == 4 and resp_type == 3:
        raise InputError(f"{where}: output type 4 (SBS) is not written for a table protected by the cell key "
                         "method (tau-Argus refuses it too); use 1, 2, 3 or 7")
    nd = _decimals(np.concatenate([v[np.isfinite(v)], orig]), decimals)
    quotes = options.get("quotes", True)
    show = bool(options.get("status", False))
    frame = table.to_frame()
    codes = [frame[d].astype(str).to_numpy() for d in table.dims]
    if out_type == 7:
        return _ckm_text(table, v, codes, options, extra, quotes)
    if out_type == 1:
        cells = [_cell_text(v[i], st[i], nd, resp_type, False, orig[i]) for i in range(table.n_cells)]
        return _matrix(table, cells, quotes)
    numeric = status_codes(table, st)
    q = '"' if quotes else ""
    lines: list[str] = []
    if out_type == 2 or (out_type == 3 and options.get("names", False)):
        name = "Freq" if table.kind == "frequency" else (response or table.response or "value")
        if table.kind != "frequency" and resp_type == 1:
            name += "_Round"
        head = [f"{q}{d}{q}" for d in table.dims] + [f"{q}{name}{q}"]
        if show and resp_type == 0:
            head.append(f"{q}Status{q}")
        elif show and resp_type == 1:
            head.append(f"{q}{response or table.response or 'Freq'}_Orig{q}")
        lines.append(",".join(head))
    keep = np.ones(table.n_cells, bool)
    if options.get("suppress_empty", False) or out_type == 4:
        keep = table.freq > 0
    levels = [_levels(h) for h in table.hierarchies] if (out_type == 4 and options.get("levels", False)) else None
    idx = np.unravel_index(np.arange(table.n_cells), table.shape)
    for i in np.flatnonzero(keep):
        parts = []
        for k in range(len(table.dims)):
            parts.append(_label(codes[k][i], quotes))
            if levels is not None:
                parts.append(str(int(levels[k][idx[k][i]])))
        cell = _cell_text(v[i], st[i], nd, resp_type, show or out_type == 4, orig[i])
        if out_type == 4:
            # the cell's value, then ",<contributors>," and the SBS letter (WriteSBSStaart);
            # the dominance percentage needs the shadow's top contributions: not written
            letter = {"U": "A" if table.kind == "frequency" else "B", "M": "D", "Z": "-"}.get(st[i], "V")
            lines.append(",".join(parts) + "," + cell + f",{int(table.freq[i])},{letter}")
            continue
        if show and resp_type == 0:
            cell += f",{numeric[i]}"
        elif show and resp_type == 1:
            cell += ",-" if st[i] == "Z" else f",{orig[i]:.{nd}f}"
        lines.append(",".join(parts) + "," + cell)
    return "\n".join(lines) + ("\n" if lines else "")


def _ckm_text(table, v, codes, options, extra, quotes) -> str:
    f_cols = [[_label(c, quotes) for c in col] for col in codes]
    integral = np.all(np.isnan(v) | (np.abs(v - np.round(v)) < 1e-9))

    def fmt(x: float) -> str:
        return "x" if np.isnan(x) else (str(int(round(x))) if integral else f"{x:.6f}".rstrip("0").rstrip("."))

    cols = [*f_cols, [fmt(x) for x in v]]
    head = [(f'"{d}"' if quotes else d) for d in table.dims] + ["value"]
    for key in ("original", "difference", "cell_key"):
        if options.get(key) and extra is not None and key in extra:
            cols.append([f"{x:.10g}" for x in extra[key]])
            head.append(key)
    keep = table.freq > 0 if options.get("suppress_empty", False) else np.ones(table.n_cells, bool)
    lines = [",".join(head)] if options.get("names", False) else []
    lines += [",".join(c[i] for c in cols) for i in np.flatnonzero(keep)]
    return "\n".join(lines) + "\n"


def write_argus_table(path: str | Path, table, values: np.ndarray, status: np.ndarray, out_type: int,
                      options: dict, *, where: str, extra: dict | None = None, response: str | None = None,
                      decimals: int | None = None) -> Path:
    """Write one table in tau-Argus's layout ``out_type`` (:func:`argus_table_text`), atomically."""
    return atomic_write_text(Path(path), argus_table_text(table, values, status, out_type, options, where=where,
                                                          extra=extra, response=response, decimals=decimals))
