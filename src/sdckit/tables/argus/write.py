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
5. Intermediate file (tau-Argus ``TableSet.write``): one line per cell, fields separated by
   ``;``: the codes (quoted with ``QU+``), the value (the rounded value after rounding), for a
   magnitude table the contributors and, unless ``SO+`` (status only), the shadow value (the
   response: sdckit has no separate shadow variable); the cost; unless ``SO+`` the top-n
   contributions (n as the rules need: n of (n,k)-dominance, 2 for the p% and pq rules), zero
   beyond the contributors; the status symbol (``S`` safe, ``U`` primary, ``M`` secondary,
   ``P`` protected, ``E`` empty); the lower and upper protection levels (tau-Argus keeps at
   least ``10**-decimals`` for every non-zero cell, ``MinLPL``); with ``AR+`` the audit's
   interval, its width and the three widths in percent of the value (``0;0;0`` for safe
   cells). ``SE+`` leaves empty cells out. ``HI+`` (holding level) writes the holdings' count
   in place of the contributors (0: sdckit takes no holding variable) and the top-n of the
   holding-level rules (none: sdckit refuses them).
6. JJ file, the input of tau-Argus's solvers (libtauargus ``CJJFormat::WriteCells`` and
   ``WriteRestrictions``, then tau-Argus's ``SaveTable.opschonenJJFileforKomma``): ``0``, the
   number of cells, one line per cell (index from 0, value, the cost scaled so that the
   largest is 20,000 (at least 1), status ``s``/``u``/``m``/``z``, the a-priori bounds (the
   table's minimum (if negative) and maximum times 1.5, widened to hold every primary cell's
   interval), the lower and upper protection levels (of primary cells; the upper one at least
   ``10**-decimals``; the lower one capped so that value - level stays above the lower bound),
   the sliding level 0); then the number of additivity relations and one line per relation,
   ``0 <n> : <parent> (-1) <child> (1) ...``, for every dimension in turn, over every
   combination of the other dimensions' codes, every code with children in hierarchy order.
   Beside it ``<file>.frq``: the contributors of every cell and ``0`` (holdings). ``TR+``
   (``WithBogus``) leaves out the cells of every code that is its parent's only child
   (libtauargus ``Variable.cpp``: ``IsBogus``), renumbers the rest, and a relation sums a
   parent's first descendants that are not an only child (``JJFormat.cpp`` ``GetRange``).
7. CKM file (tau-Argus ``TableSet.writeCKM``): the codes, each followed by ``;``, and the
   perturbed value, with the original value (``AO+``), the difference (``AD+``) and the cell
   key (``AC+``, with the record key's decimals), all separated by ``;``; no names line.

tau-Argus also writes a metadata file (``.rda``) beside types 5 and 7 describing the columns
(``Metadata.writeTableMetadata`` / ``writeCKMMetadata``); sdckit does not write it: its
variables' lines name tau-Argus's code list and hierarchy files by path (``writeVariable``),
and sdckit's outputs hold no paths. The batch's notes say so.

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
(the CSV, cell-record and SBS layouts) and ``defines.h`` (cell status codes); sdcTools/tauargus
``TableSet.java`` (``write``: the intermediate file; ``writeCKM``: the CKM file),
``SaveTable.java`` (``writeJJ``, ``opschonenJJFileforKomma``, ``realLPL``, ``realUPL``),
``CellStatus.java``/``CellStatusCategory.java`` (status symbols), ``TableService.java``
(the a-priori bounds: minimum and maximum cell value times 1.5); sdcTools/libtauargus
``JJFormat.cpp`` (``WriteCells``, ``WriteRestrictions``, ``WriteRange``, ``GetRange``) and
``Table.cpp`` (``SetProtectionLevelCell``: ``MinLPL``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...errors import InputError
from ...io.atomic import atomic_write_text

__all__ = ["table_status", "write_argus_table", "parse_write_options", "argus_table_text", "status_codes",
           "ARGUS_STATUS", "jj_text", "jj_bounds", "top_n_needed", "trivial_codes"]

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


def _decimals(v: np.ndarray, decimals: int | None, *, limit: int = 6) -> int:
    if decimals is not None:
        return int(decimals)
    finite = v[np.isfinite(v)]
    for d in range(0, limit + 1):
        if np.all(np.abs(finite * 10**d - np.round(finite * 10**d)) < 1e-6):
            return d
    return limit


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
    if out_type not in _TYPE_NAMES:
        raise InputError(f"{where}: output type {out_type} is not a tau-Argus output type; use 1 (CSV), 2 (CSV for "
                         "pivot), 3 (code-value), 4 (SBS), 5 (intermediate), 6 (JJ) or 7 (CKM)")
    st = np.asarray(status, dtype=object)
    v = np.asarray(values, dtype=float)
    orig = np.asarray(table.value, dtype=float)
    if v.size != table.n_cells or st.size != table.n_cells:
        raise InputError(f"{where}: values and status need one entry per cell ({table.n_cells})")
    resp_type = _resp_type(st)
    if out_type in (4, 5, 6) and resp_type == 3:
        raise InputError(f"{where}: output type {out_type} ({_TYPE_NAMES[out_type]}) is not written for a table "
                         "protected by the cell key method (tau-Argus refuses it too); use 1, 2, 3 or 7")
    if out_type == 7 and resp_type != 3:
        raise InputError(f"{where}: output type 7 (CKM) needs a table protected by the cell key method")
    nd = _decimals(np.concatenate([v[np.isfinite(v)], orig]), decimals)
    quotes = options.get("quotes", True)
    show = bool(options.get("status", False))
    frame = table.to_frame()
    codes = [frame[d].astype(str).to_numpy() for d in table.dims]
    if out_type == 7:
        return _ckm_text(table, v, st, codes, options, extra or {}, quotes, nd)
    if out_type == 5:
        return _intermediate_text(table, v, st, codes, options, extra or {}, quotes, nd, where)
    if out_type == 6:
        lpl, upl = _levels_of(table, extra or {}, where, 6)
        return jj_text(table, st, lower_protection=lpl, upper_protection=upl, cost=(extra or {}).get("cost"),
                       decimals=nd, trivial=bool(options.get("trivial", False)))
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


def _ckm_text(table, v, st, codes, options, extra, quotes, nd) -> str:
    """Type 7: tau-Argus's ``TableSet.writeCKM`` (``;`` after every code, then the values)."""
    keys = extra.get("cell_key")
    kd = extra.get("cell_key_decimals")
    if options.get("cell_key") and keys is not None and kd is None:
        kd = _decimals(np.asarray(keys, float), None, limit=15)
    cols = [[_label(c, quotes) + ";" for c in col] for col in codes]
    lines = []
    keep = (table.freq > 0) if options.get("suppress_empty", False) else np.ones(table.n_cells, bool)
    orig = np.asarray(extra.get("original", table.value), float)
    for i in np.flatnonzero(keep):
        parts = "".join(c[i] for c in cols) + _fixed(v[i], nd)
        if options.get("original"):
            parts += ";" + _fixed(orig[i], nd)
        if options.get("difference"):
            parts += ";" + _fixed(v[i] - orig[i], nd)
        if options.get("cell_key") and keys is not None:
            parts += ";" + _fixed(float(keys[i]), int(kd))
        lines.append(parts)
    return "\n".join(lines) + ("\n" if lines else "")


def _fixed(x: float, nd: int) -> str:
    """A number as Java's ``DecimalFormat`` with ``nd`` fraction digits (half-even, no grouping)."""
    return f"{x:.{nd}f}"


def top_n_needed(rules) -> int:
    """How many largest contributions tau-Argus keeps per cell for these rules
    (``TableSet.numberOfTopNNeeded``): n of an (n,k)-dominance rule, n + 1 = 2 for a p% or pq rule."""
    n = 0
    for r in rules or ():
        name = getattr(r, "name", "")
        if name == "dominance":
            n = max(n, int(r.n))
        elif name in ("p%", "pq"):
            n = max(n, 2)
    return n


def _levels_of(table, extra: dict, where: str, out_type: int) -> tuple[np.ndarray, np.ndarray]:
    lo, up = extra.get("lower_protection"), extra.get("upper_protection")
    if lo is None or up is None:
        raise InputError(f"{where}: output type {out_type} ({_TYPE_NAMES[out_type]}) needs the protection levels of "
                         "the primary cells; write it from a table protected by suppression (OPT, MOD or GH)")
    return np.asarray(lo, float).ravel(), np.asarray(up, float).ravel()


def _intermediate_text(table, v, st, codes, options, extra, quotes, nd, where) -> str:
    """Type 5: tau-Argus's ``TableSet.write`` (intermediate file), see the module docstring."""
    lpl, upl = _levels_of(table, extra, where, 5)
    value = np.where(st == "R", v, np.asarray(table.value, float))  # rounded: the rounded value
    simple = bool(options.get("status_only", False))
    # HI+ (holding level): tau-Argus writes the holdings' count and their top-n contributions
    # (numberOfHoldingTopNNeeded: the n of the holding-level rules). sdckit refuses holding-level
    # rules and <HOLDING> variables, so every count is 0 (libtauargus DataCell: FreqHolding
    # starts at 0 and grows only with a holding variable) and no top-n column is written.
    holding = bool(options.get("holding", False))
    magnitude = table.kind != "frequency"
    n_top = 0 if (simple or holding) else int(extra.get("n_top", 0))
    top = None
    if n_top:
        if table.top is None or table.top.shape[1] < n_top:
            raise InputError(f"{where}: output type 5 needs the {n_top} largest contributions per cell; "
                             "the table keeps fewer (write it with SO+)")
        top = np.where(np.arange(n_top)[None, :] < table.freq[:, None], table.top[:, :n_top], 0.0)
    cost = np.asarray(extra.get("cost", table.value), float)
    # tau-Argus's stored levels (Table.cpp SetProtectionLevelCell): every non-zero cell at least
    # MinLPL = 10**-decimals, a zero cell lower 0, an empty cell 0 and 0
    min_lpl = 10.0 ** -nd
    nonzero = np.asarray(table.value, float) != 0
    lo = np.where(nonzero, np.maximum(lpl, min_lpl), 0.0)
    up = np.where(nonzero, np.maximum(upl, min_lpl), np.where(table.freq > 0, upl, 0.0))
    symbol = {"S": "S", "R": "S", "U": "U", "M": "M", "P": "P", "Z": "E"}
    audit = bool(options.get("audit", False))
    if audit:
        rl, ru = extra.get("realized_lower"), extra.get("realized_upper")
        if rl is None or ru is None:
            raise InputError(f"{where}: output type 5 with AR+ needs the audit's intervals; the protection run "
                             "has none (write it with AR-)")
        rl, ru = np.asarray(rl, float), np.asarray(ru, float)
    keep = (st != "Z") if options.get("suppress_empty", False) else np.ones(table.n_cells, bool)
    cols = [[_label(c, quotes) for c in col] for col in codes]
    lines = []
    for i in np.flatnonzero(keep):
        parts = [c[i] for c in cols] + [_fixed(value[i], nd)]
        if magnitude:
            parts.append("0" if holding else str(int(table.freq[i])))
            if not simple:
                parts.append(_fixed(table.value[i], nd))  # the shadow: the response, before rounding
        parts.append(_fixed(cost[i], nd))
        if top is not None:
            parts += [_fixed(x, nd) for x in top[i]]
        parts.append(symbol.get(st[i], "S"))
        parts += [_fixed(lo[i], nd), _fixed(up[i], nd)]
        if audit:
            parts += [_fixed(rl[i], nd), _fixed(ru[i], nd), _fixed(ru[i] - rl[i], nd)]
            x = value[i]
            if x == 0 or st[i] in ("S", "R"):  # CellStatusCategory SAFE_NOT_PROTECTED
                parts += ["0", "0", "0"]
            else:
                parts += [f"{100 * (x - rl[i]) / x:.2f}", f"{100 * (ru[i] - x) / x:.2f}",
                          f"{100 * (ru[i] - rl[i]) / x:.2f}"]
        lines.append(";".join(parts))
    return "\n".join(lines) + ("\n" if lines else "")


#: tau-Argus scales the JJ file's costs so that the largest is this (libtauargus Table.cpp)
JJ_MAX_SCALED_COST = 20000


def jj_bounds(table) -> tuple[float, float]:
    """The a-priori bounds tau-Argus gives its solvers (TableService / TableSet: the minimum and
    maximum value over the non-empty cells; the maximum times 1.5 (0 if not positive), the
    minimum times 1.5 if negative, else 0)."""
    v = np.asarray(table.value, float)[np.asarray(table.freq) > 0]
    if v.size == 0:
        return 0.0, 0.0
    lo, hi = float(v.min()), float(v.max())
    return (1.5 * lo if lo < 0 else 0.0), (1.5 * hi if hi > 0 else 0.0)


def trivial_codes(h) -> np.ndarray:
    """The codes tau-Argus's ``TR+`` leaves out of a JJ file: in a hierarchical variable, the only
    child of its parent (libtauargus ``Variable.cpp``: ``IsBogus`` when a code has one child). A
    one-level variable is not hierarchical there (its codes are never left out)."""
    out = np.zeros(len(h), bool)
    if h.n_levels > 1:
        for ch in h.children:
            if len(ch) == 1:
                out[ch[0]] = True
    return out


def jj_text(table, status, *, lower_protection, upper_protection, cost=None, decimals: int = 0,
            cleaned: bool = True, trivial: bool = False) -> str:
    """The JJ file of a table (tau-Argus output type 6; see the module docstring).

    ``status`` holds sdckit's letters (``U`` primary, ``M`` secondary, ``Z`` empty, ``P``
    protected, else safe); ``lower_protection`` / ``upper_protection`` the primary cells'
    levels; ``cost`` the cells' costs before scaling (default the value, tau-Argus's default
    cost variable, the response). The values are the table's own (as tau-Argus's solvers read
    them, also after rounding).

    With ``cleaned=False`` the text is what libtauargus's ``WriteJJFormat`` writes (what
    pytauargus's ``write_jj_format`` gives); tau-Argus then rewrites it
    (``SaveTable.opschonenJJFileforKomma``): the bounds with ``decimals + 1`` fraction digits,
    the levels with ``decimals + 3``, the lower level capped at ``value - bound - 10**-(d+1)``
    (at least 0), the upper level at least ``10**-d``, and the relations without their
    trailing space.

    With ``trivial=True`` (``TR+``, libtauargus ``WriteCells`` / ``WriteRestrictions`` with
    ``WithBogus``) the cells of every code that is its parent's only child
    (:func:`trivial_codes`) are left out, the others renumbered in table order, and a parent's
    relation sums its first descendants that are not an only child.
    """
    st = np.asarray(status, dtype=object)
    resp = np.asarray(table.value, float)
    lpl_in = np.asarray(lower_protection, float)
    upl_in = np.asarray(upper_protection, float)
    c = np.asarray(table.value if cost is None else cost, float)
    max_cost = max(float(c.max()), 0.0) if c.size else 0.0
    scaled = (np.floor(c * JJ_MAX_SCALED_COST / max_cost + 0.5) if max_cost > 0 else np.zeros_like(c)).astype(np.int64)
    scaled[scaled == 0] = 1
    x_min, x_max = jj_bounds(table)
    nd, nd3 = int(decimals), int(decimals) + 3
    round_const = 10.0 ** -nd
    letter = {"U": "u", "M": "m", "Z": "z", "P": "z"}
    kept = _jj_kept_cells(table, trivial)
    lines = ["0", str(kept.size)]
    for j, i in enumerate(kept):
        s = letter.get(st[i], "s")
        lpl = upl = 0.0
        if s == "u":
            lpl, upl = lpl_in[i], max(upl_in[i], round_const)
        lb, ub = x_min, x_max
        # JJFormat.cpp WriteCells: the bounds widened to hold the primary cell's interval
        if lb > resp[i] - lpl:
            lb = resp[i] - lpl
        upl = max(upl, 0.0)
        if resp[i] + upl > ub:
            ub = resp[i] + upl
        if not cleaned:
            lines.append(f"{j} {resp[i]:.{nd}f} {scaled[i]} {s} {lb:.{nd}f} {ub:.{nd}f} {lpl:.{nd3}f} {upl:.{nd3}f} "
                         f"{0.0:.{nd}f}")
            continue
        head = f"{j} {resp[i]:.{nd}f} {scaled[i]} {s}"
        if s == "z":
            lines.append(f"{head} {lb:.{nd}f} {ub:.{nd}f} {lpl:.{nd3}f} {upl:.{nd3}f} {0.0:.{nd}f}")
            continue
        # SaveTable.opschonenJJFileforKomma on the values as written (%.*f), then realLPL/realUPL
        r = float(f"{resp[i]:.{nd}f}")
        b0, b1 = float(f"{lb:.{nd}f}"), float(f"{ub:.{nd}f}")
        l2, u3 = float(f"{lpl:.{nd3}f}"), float(f"{upl:.{nd3}f}")
        b0 = max(b0, x_min)
        if r - l2 < b0:
            l2 = r - b0
        eps1 = 1.0 / 10 ** (nd + 1)
        room = max(r - x_min, 0.0)
        if l2 + eps1 > room:
            l2 = room - eps1
        l2 = max(l2, 0.0)
        u3 = max(u3, 1.0 / 10 ** nd)
        lines.append(f"{head} {b0:.{nd + 1}f} {b1:.{nd + 1}f} {l2:.{nd3}f} {u3:.{nd3}f} {0.0:.{nd}f}")
    rel = _jj_relations(table, trivial)
    lines.append(str(len(rel)))
    lines += [r if cleaned else r + " " for r in rel]
    return "\n".join(lines) + "\n"


def jj_frequencies(table, trivial: bool = False) -> str:
    """The ``<file>.frq`` beside a JJ file: every written cell's contributors and its holdings (0)."""
    freq = np.asarray(table.freq)
    return "".join(f"{int(freq[i])} 0\n" for i in _jj_kept_cells(table, trivial))


def _jj_kept_cells(table, trivial: bool) -> np.ndarray:
    """The table's cells a JJ file holds, in order: all, or with ``TR+`` those of no trivial code."""
    if not trivial:
        return np.arange(table.n_cells)
    keep = np.ones(table.shape, bool)
    for d, h in enumerate(table.hierarchies):
        sl = [np.newaxis] * len(table.shape)
        sl[d] = slice(None)
        keep &= ~trivial_codes(h)[tuple(sl)]
    return np.flatnonzero(keep.ravel())


def _jj_children(h, p: int, bogus: np.ndarray) -> list:
    """JJFormat.cpp GetRange: a parent's children, or with ``TR+`` (``bogus`` set) its first
    descendants that are not an only child (none when the parent is one, or when every descendant is)."""
    if not bogus.any():
        return list(h.children[p])
    if bogus[p]:
        return []
    ch = list(h.children[p])
    while len(ch) == 1:
        ch = list(h.children[ch[0]])
    return ch


def _jj_relations(table, trivial: bool = False) -> list[str]:
    """JJFormat.cpp WriteRestrictions / WriteRange: for each dimension, over the other
    dimensions' codes (outer first), every code with children: parent = sum of children; with
    ``TR+`` over the codes that are not trivial, numbered among them."""
    bogus = [trivial_codes(h) if trivial else np.zeros(len(h), bool) for h in table.hierarchies]
    new_index = [np.cumsum(~b) - 1 for b in bogus]
    shape = tuple(int((~b).sum()) for b in bogus)
    out = []
    for d, h in enumerate(table.hierarchies):
        parents = [(p, ch) for p in range(len(h)) if (ch := _jj_children(h, p, bogus[d]))]
        others = [range(n) if k != d else [0] for k, n in enumerate(shape)]
        for combo in np.ndindex(*[len(o) for o in others]):
            idx = list(combo)
            for p, ch in parents:
                idx[d] = int(new_index[d][p])
                head = int(np.ravel_multi_index(tuple(idx), shape))
                cells = []
                for c in ch:
                    idx[d] = int(new_index[d][c])
                    cells.append(f"{int(np.ravel_multi_index(tuple(idx), shape))} (1)")
                out.append(f"0 {len(ch) + 1} : {head} (-1) " + " ".join(cells))
    return out


def write_argus_table(path: str | Path, table, values: np.ndarray, status: np.ndarray, out_type: int,
                      options: dict, *, where: str, extra: dict | None = None, response: str | None = None,
                      decimals: int | None = None) -> Path:
    """Write one table in tau-Argus's layout ``out_type`` (:func:`argus_table_text`), atomically;
    a JJ file (type 6) gets its ``<file>.frq`` beside it, as tau-Argus writes it."""
    out = atomic_write_text(Path(path), argus_table_text(table, values, status, out_type, options, where=where,
                                                         extra=extra, response=response, decimals=decimals))
    if out_type == 6:
        atomic_write_text(Path(str(path) + ".frq"), jj_frequencies(table, bool(options.get("trivial", False))))
    return out
