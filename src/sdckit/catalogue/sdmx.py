"""SDMX for protected tables: SDMX-CSV 2.0 data with ``OBS_STATUS`` and ``CONF_STATUS`` per
cell, an SDMX-ML 2.1 data structure definition, and an SDMX-CSV reader.

Every cell carries both attributes, coded with the SDMX cross-domain code lists:

========================================  ===============  ===============  ===========
cell (tau-Argus status letter)            CONF_STATUS      OBS_STATUS       OBS_VALUE
========================================  ===============  ===============  ===========
safe (``S``), protected (``P``), empty    ``F`` free       ``A`` normal     the value
(``Z``)
primary suppression (``U``)               ``A`` small      ``Q`` missing,   empty
                                          counts (or the   suppressed
                                          rule's own code)
secondary suppression (``M``)             ``D`` secondary  ``Q``            empty
                                          set by the
                                          sender
perturbed by the cell key method (``C``)  ``F``            ``E`` estimated  the value
rounded (``R``)                           ``F``            ``E`` estimated  the value
========================================  ===============  ===============  ===========

A table's *public* release does not tell primary from secondary suppressions (that would show
which cells are sensitive): there every suppressed cell (the public status ``suppressed``) is
``C`` ("confidential statistical information") with ``OBS_STATUS`` ``Q``; the public statuses
``safe``, ``rounded`` and ``perturbed`` are read as ``S``, ``R`` and ``C`` above.

The primary code follows the rule that made the cell sensitive where the caller says
(``primary_code``): ``A`` small counts (threshold / frequency rule), ``O`` dominance by one
unit ((1,k)-dominance), ``T`` by two units ((2,k)-dominance), ``G`` by one or two units (p%
and pq rules, which protect the largest contributor against the second), ``C`` confidential
for any other rule. SDMX has no code for "perturbed" or "rounded"; ``E`` ("observation
obtained through an estimation methodology") is the nearest, and the published value is
free for publication (``F``) because the perturbation is the protection.

References
----------
SDMX Technical Working Group. *SDMX-CSV format* v2.0 (columns ``STRUCTURE``,
``STRUCTURE_ID``, ``ACTION``, the dimensions, ``OBS_VALUE``, the attributes).
SDMX Statistical Working Group. Code list ``CL_CONF_STATUS`` v1.3 (A, C, D, E, F, G, M, N,
O, S, T, X) and ``CL_OBS_STATUS`` v2.2 (A normal, E estimated, Q missing value; suppressed,
...); *Guidelines for Confidentiality and Embargo in SDMX* (2018), section on confidential
observations.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError

__all__ = ["CONF_STATUS", "OBS_STATUS", "sdmx_status", "sdmx_csv_text", "write_sdmx_csv", "read_sdmx_csv",
           "sdmx_structure_xml", "SdmxTable", "primary_codes", "RULE_CODES", "sdmx_identifier"]

#: CL_CONF_STATUS v1.3 (SDMX cross-domain code list): code -> name
CONF_STATUS = {
    "A": "Primary confidentiality due to small counts",
    "C": "Confidential statistical information",
    "D": "Secondary confidentiality set by the sender, not for publication",
    "F": "Free (free for publication)",
    "G": "Primary confidentiality due to dominance by one or two units",
    "N": "Not for publication, restricted for internal use only",
    "O": "Primary confidentiality due to dominance by one unit",
    "S": "Secondary confidentiality set and managed by the receiver, not for publication",
    "T": "Primary confidentiality due to dominance by two units",
}
#: the CL_OBS_STATUS v2.2 codes written here: code -> name
OBS_STATUS = {"A": "Normal value", "E": "Estimated value", "Q": "Missing value; suppressed"}
_SUPPRESSED = {"U", "M", "suppressed"}
_PRIMARY_CODES = {"A", "C", "G", "O", "T"}
#: a public table's cell statuses (sdckit.tables.public.STATUSES) as status letters; "suppressed"
#: (primary and secondary alike) is coded on its own
_PUBLIC_LETTERS = {"safe": "S", "rounded": "R", "perturbed": "C"}


def sdmx_status(status: Any, *, primary_code: Any = "A") -> tuple[np.ndarray, np.ndarray]:
    """``(CONF_STATUS, OBS_STATUS)`` arrays for tau-Argus status letters or a public table's
    statuses (``safe``, ``suppressed``, ``rounded``, ``perturbed``; see the module table).

    ``primary_code`` is one CL_CONF_STATUS primary code for every primary cell, or an array of
    codes, one per cell (read where the cell is primary).
    """
    st = np.asarray(status, dtype=object)
    public_suppressed = st == "suppressed"
    if public_suppressed.any() or np.isin(st, list(_PUBLIC_LETTERS)).any():
        st = np.array([_PUBLIC_LETTERS.get(x, x) for x in st.ravel()], dtype=object).reshape(st.shape)
        st[public_suppressed] = "M"
    conf = np.full(st.shape, "F", dtype=object)
    obs = np.full(st.shape, "A", dtype=object)
    primary = st == "U"
    codes = np.broadcast_to(np.asarray(primary_code, dtype=object), st.shape)
    bad = sorted({str(c) for c in codes[primary]} - _PRIMARY_CODES)
    if bad:
        raise InputError(f"primary_code: {', '.join(bad)} is not a CL_CONF_STATUS primary code; use one of "
                         f"{', '.join(sorted(_PRIMARY_CODES))}")
    conf[primary] = codes[primary]
    conf[st == "M"] = "D"
    conf[public_suppressed] = "C"  # primary or secondary: not told apart in public
    obs[np.isin(st, list(_SUPPRESSED))] = "Q"
    obs[np.isin(st, ["C", "R"])] = "E"
    unknown = sorted({str(s) for s in st.ravel()} - {"S", "P", "Z", "U", "M", "C", "R"})
    if unknown:
        raise InputError(f"status: {', '.join(unknown)} is not a tau-Argus cell status; use S, P, Z, U, M, C or R "
                         "(or a public status: safe, suppressed, rounded, perturbed)")
    return conf, obs


def sdmx_csv_text(table: Any, status: Any, *, values: Any = None, structure_id: str = "SDCKIT:TABLE(1.0.0)",
                  primary_code: Any = "A") -> str:
    """The SDMX-CSV 2.0 text of a table: one row per cell, the codes of each dimension, the
    published value (empty where suppressed) and both status attributes.

    ``values`` are the published values (default the table's own values; NaN or a status
    ``U``/``M`` means suppressed).
    """
    v = np.asarray(table.value if values is None else values, dtype=float).copy()
    st = np.asarray(status, dtype=object)
    if v.size != table.n_cells or st.size != table.n_cells:
        raise InputError(f"values and status must have one entry per cell ({table.n_cells}); got "
                         f"{v.size} values and {st.size} statuses")
    import pandas as pd

    conf, obs = sdmx_status(st, primary_code=primary_code)
    v[np.isin(st, list(_SUPPRESSED))] = np.nan
    frame = table.to_frame()
    # one vectorised write (no per-cell loop): whole numbers without ".0", others as repr, empty
    # where suppressed
    text = np.full(v.shape, "", dtype=object)
    present = ~np.isnan(v)
    whole = present & (np.abs(v - np.round(v)) < 1e-9)
    text[whole] = np.round(v[whole]).astype(np.int64).astype(str)
    text[present & ~whole] = v[present & ~whole].astype(object)  # written as repr(float)
    out = pd.DataFrame({"STRUCTURE": "dataflow", "STRUCTURE_ID": structure_id, "ACTION": "I",
                        **{d: frame[d].astype(str).to_numpy() for d in table.dims},
                        "OBS_VALUE": text, "OBS_STATUS": obs, "CONF_STATUS": conf},
                       columns=["STRUCTURE", "STRUCTURE_ID", "ACTION", *table.dims, "OBS_VALUE", "OBS_STATUS",
                                "CONF_STATUS"])
    return out.to_csv(index=False, lineterminator="\n")


def write_sdmx_csv(table: Any, status: Any, path: str | os.PathLike, *, values: Any = None,
                   structure_id: str = "SDCKIT:TABLE(1.0.0)", primary_code: Any = "A",
                   structure_path: str | os.PathLike | None = None) -> Path:
    """Write a protected table as SDMX-CSV 2.0 (atomically); with ``structure_path`` also its
    data structure definition (SDMX-ML 2.1, :func:`sdmx_structure_xml`). Returns the CSV's path."""
    from ..io.atomic import atomic_write_text

    out = atomic_write_text(Path(path), sdmx_csv_text(table, status, values=values, structure_id=structure_id,
                                                      primary_code=primary_code))
    if structure_path is not None:
        atomic_write_text(Path(structure_path), sdmx_structure_xml(table, structure_id=structure_id).decode("utf-8"))
    return out


@dataclass(frozen=True)
class SdmxTable:
    """An SDMX-CSV table as read: the dimensions, one row per observation (codes,
    ``OBS_VALUE`` as float with NaN where empty, ``OBS_STATUS``, ``CONF_STATUS``)."""

    structure_id: str
    dims: tuple[str, ...]
    frame: Any

    def to_table(self, **kwargs: Any) -> Any:
        """A :class:`sdckit.tables.Table` of the observations (every value must be present:
        a suppressed cell has no value to build a table from)."""
        from ..tables.table import Table

        missing = int(self.frame["OBS_VALUE"].isna().sum())
        if missing:
            raise InputError(f"SDMX-CSV {self.structure_id}: {missing} observations have no OBS_VALUE "
                             "(suppressed); a table to protect needs every value.")
        return Table.from_cells(self.frame, list(self.dims), "OBS_VALUE", **kwargs)


_NON_DIMS = {"STRUCTURE", "STRUCTURE_ID", "STRUCTURE_NAME", "ACTION", "OBS_VALUE"}


def read_sdmx_csv(path: str | os.PathLike, *, attributes: tuple[str, ...] = ("OBS_STATUS", "CONF_STATUS", "OBS_FLAG",
                                                                             "UNIT_MULT", "DECIMALS")) -> SdmxTable:
    """Read an SDMX-CSV 2.0 file of one structure. The dimensions are the columns between
    ``ACTION`` (or ``STRUCTURE_ID``) and ``OBS_VALUE`` except the named ``attributes``;
    codes are kept as text.

    Raises
    ------
    InputError
        The file is not SDMX-CSV 2.0 (no ``STRUCTURE``/``STRUCTURE_ID``/``OBS_VALUE`` column),
        holds several structures, or a value is not a number.
    """
    import pandas as pd

    path = Path(path)
    try:
        df = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, pd.errors.ParserError) as exc:
        raise InputError(f"{path}: cannot be read as CSV: {exc}") from None
    for col in ("STRUCTURE", "STRUCTURE_ID", "OBS_VALUE"):
        if col not in df.columns:
            raise InputError(f"{path}: column {col} is missing; an SDMX-CSV 2.0 file has STRUCTURE, STRUCTURE_ID, "
                             "the dimensions and OBS_VALUE.")
    ids = sorted(set(df["STRUCTURE_ID"]))
    if len(ids) != 1:
        raise InputError(f"{path}: holds {len(ids)} structures ({', '.join(ids[:5])}); give a file of one.")
    dims = tuple(c for c in df.columns if c not in _NON_DIMS and c not in attributes)
    raw = df["OBS_VALUE"].str.strip()
    values = pd.to_numeric(raw.where(raw != ""), errors="coerce")
    bad = values.isna() & (raw != "")
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(f"{path}: OBS_VALUE {raw.iloc[i]!r} on data line {i + 1} is not a number.")
    out = df[list(dims)].copy()
    out["OBS_VALUE"] = values.astype(float)
    for a in attributes:
        if a in df.columns:
            out[a] = df[a]
    return SdmxTable(ids[0], dims, out.reset_index(drop=True))


# ---------------------------------------------------------------------------------- structure
_MES = "http://www.sdmx.org/resources/sdmxml/schemas/v2_1/message"
_STR = "http://www.sdmx.org/resources/sdmxml/schemas/v2_1/structure"
_COM = "http://www.sdmx.org/resources/sdmxml/schemas/v2_1/common"


def _parse_id(structure_id: str) -> tuple[str, str, str]:
    agency, rest = structure_id.split(":", 1) if ":" in structure_id else ("SDCKIT", structure_id)
    ident, version = (rest[:-1].split("(", 1) if rest.endswith(")") and "(" in rest else (rest, "1.0.0"))
    return agency, ident, version


def sdmx_structure_xml(table: Any, *, structure_id: str = "SDCKIT:TABLE(1.0.0)") -> bytes:
    """An SDMX-ML 2.1 structure message: a code list per dimension (its hierarchy's codes,
    parents as ``Parent``), CL_CONF_STATUS and CL_OBS_STATUS as used here, the concepts, the
    data structure definition (the dimensions, ``OBS_VALUE``, the two observation-level
    attributes coded by those lists) and its dataflow."""
    agency, ident, version = _parse_id(structure_id)
    for p, u in (("mes", _MES), ("str", _STR), ("com", _COM)):
        ET.register_namespace(p, u)
    root = ET.Element(f"{{{_MES}}}Structure")
    header = ET.SubElement(root, f"{{{_MES}}}Header")
    ET.SubElement(header, f"{{{_MES}}}ID").text = f"{ident}_STRUCTURE"
    ET.SubElement(header, f"{{{_MES}}}Test").text = "false"
    ET.SubElement(header, f"{{{_MES}}}Prepared").text = "2000-01-01T00:00:00"
    ET.SubElement(header, f"{{{_MES}}}Sender", id=agency)
    structures = ET.SubElement(root, f"{{{_MES}}}Structures")

    def name(el: ET.Element, text: str) -> None:
        n = ET.SubElement(el, f"{{{_COM}}}Name")
        n.set("{http://www.w3.org/XML/1998/namespace}lang", "en")
        n.text = text

    # SDMX-ML 2.1 orders the containers: Dataflows, Codelists, Concepts, DataStructures
    flows = ET.SubElement(structures, f"{{{_STR}}}Dataflows")
    cls = ET.SubElement(structures, f"{{{_STR}}}Codelists")
    code_ids = {}
    for d, h in zip(table.dims, table.hierarchies):
        cl_id = "CL_" + "".join(ch if ch.isalnum() else "_" for ch in d.upper())
        code_ids[d] = cl_id
        cl = ET.SubElement(cls, f"{{{_STR}}}Codelist", id=cl_id, agencyID=agency, version=version)
        name(cl, f"Codes of {d}")
        for i, code in enumerate(h.codes):
            c = ET.SubElement(cl, f"{{{_STR}}}Code", id=str(code))
            name(c, str(code))
            parent = int(h.parent[i]) if getattr(h, "parent", None) is not None else -1
            if parent >= 0:
                p = ET.SubElement(c, f"{{{_STR}}}Parent")
                ET.SubElement(p, "Ref", id=str(h.codes[parent]))
    for cl_id, codes in (("CL_CONF_STATUS", CONF_STATUS), ("CL_OBS_STATUS", OBS_STATUS)):
        cl = ET.SubElement(cls, f"{{{_STR}}}Codelist", id=cl_id, agencyID="SDMX",
                           version="1.3" if cl_id == "CL_CONF_STATUS" else "2.2")
        name(cl, "Confidentiality status" if cl_id == "CL_CONF_STATUS" else "Observation status")
        for code, text in codes.items():
            name(ET.SubElement(cl, f"{{{_STR}}}Code", id=code), text)
    cs = ET.SubElement(ET.SubElement(structures, f"{{{_STR}}}Concepts"), f"{{{_STR}}}ConceptScheme",
                       id="CS_" + ident, agencyID=agency, version=version)
    name(cs, f"Concepts of {ident}")
    for concept in (*table.dims, "OBS_VALUE", "OBS_STATUS", "CONF_STATUS"):
        name(ET.SubElement(cs, f"{{{_STR}}}Concept", id=concept), concept)
    dsd = ET.SubElement(ET.SubElement(structures, f"{{{_STR}}}DataStructures"), f"{{{_STR}}}DataStructure",
                        id="DSD_" + ident, agencyID=agency, version=version)
    name(dsd, f"Data structure of {ident}")
    comps = ET.SubElement(dsd, f"{{{_STR}}}DataStructureComponents")

    def concept_ref(el: ET.Element, concept: str) -> None:
        ref = ET.SubElement(ET.SubElement(el, f"{{{_STR}}}ConceptIdentity"), "Ref")
        ref.attrib.update(id=concept, maintainableParentID="CS_" + ident, maintainableParentVersion=version,
                          agencyID=agency, package="conceptscheme", **{"class": "Concept"})

    def enum_ref(el: ET.Element, cl_id: str, cl_agency: str, cl_version: str) -> None:
        lr = ET.SubElement(ET.SubElement(el, f"{{{_STR}}}LocalRepresentation"), f"{{{_STR}}}Enumeration")
        ET.SubElement(lr, "Ref", id=cl_id, agencyID=cl_agency, version=cl_version, package="codelist",
                      **{"class": "Codelist"})

    dl = ET.SubElement(comps, f"{{{_STR}}}DimensionList", id="DimensionDescriptor")
    for pos, d in enumerate(table.dims, start=1):
        dim = ET.SubElement(dl, f"{{{_STR}}}Dimension", id=d, position=str(pos))
        concept_ref(dim, d)
        enum_ref(dim, code_ids[d], agency, version)
    al = ET.SubElement(comps, f"{{{_STR}}}AttributeList", id="AttributeDescriptor")
    for att, cl_version in (("OBS_STATUS", "2.2"), ("CONF_STATUS", "1.3")):
        a = ET.SubElement(al, f"{{{_STR}}}Attribute", id=att, assignmentStatus="Mandatory")
        concept_ref(a, att)
        enum_ref(a, "CL_" + att, "SDMX", cl_version)
        ET.SubElement(ET.SubElement(a, f"{{{_STR}}}AttributeRelationship"), f"{{{_STR}}}PrimaryMeasure").append(
            _ref_el("OBS_VALUE"))
    ml = ET.SubElement(comps, f"{{{_STR}}}MeasureList", id="MeasureDescriptor")
    pm = ET.SubElement(ml, f"{{{_STR}}}PrimaryMeasure", id="OBS_VALUE")
    concept_ref(pm, "OBS_VALUE")
    df = ET.SubElement(flows, f"{{{_STR}}}Dataflow", id=ident, agencyID=agency, version=version)
    name(df, ident)
    ET.SubElement(ET.SubElement(df, f"{{{_STR}}}Structure"), "Ref", id="DSD_" + ident, agencyID=agency,
                  version=version, package="datastructure", **{"class": "DataStructure"})
    ET.indent(root, space="  ")
    return ET.tostring(root, encoding="UTF-8", xml_declaration=True)


def _ref_el(ident: str) -> ET.Element:
    el = ET.Element("Ref")
    el.set("id", ident)
    return el


#: CL_CONF_STATUS primary code of each sensitivity rule (sdckit.tables.rules names): small counts
#: for the threshold rule, dominance by one or two units for the p% and pq rules; the
#: (n,k)-dominance rule's code depends on n (:func:`primary_codes`)
RULE_CODES = {"threshold": "A", "p%": "G", "pq": "G"}


def primary_codes(reason: Any, dominance_n: Any = ()) -> np.ndarray:
    """The CL_CONF_STATUS primary code of every cell from the rule that made it sensitive
    (``reason``, the rule's name per cell as :func:`sdckit.tables.rules.primary_cells` gives it).

    ``dominance_n`` holds the ``n`` of every (n,k)-dominance rule applied: ``O`` (dominance by
    one unit) when all are n = 1, ``T`` (by two units) when all are n = 2, ``G`` (by one or two)
    when they are 1 and 2, else ``C``. Any other reason (zero cells, manual) is ``C``.
    """
    ns = set(int(n) for n in dominance_n)
    dom = {frozenset({1}): "O", frozenset({2}): "T", frozenset({1, 2}): "G"}.get(frozenset(ns), "C")
    codes = {**RULE_CODES, "dominance": dom}
    r = np.asarray(reason, dtype=object)
    return np.array([codes.get(str(x), "C") for x in r.ravel()], dtype=object).reshape(r.shape)


def sdmx_identifier(text: str) -> str:
    """An SDMX identifier (``[A-Za-z0-9_@$-]+``, here upper case) made from a name."""
    out = "".join(ch if ch.isalnum() and ch.isascii() or ch in "_@$-" else "_" for ch in str(text).upper())
    return out.strip("_") or "TABLE"
