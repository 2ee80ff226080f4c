"""DDI-Codebook 2.5: read a codebook's variable metadata, write one for a release.

A codebook (``<codeBook>``) describes a study (``stdyDscr``), its files (``fileDscr``), its
variables (``dataDscr/var``) and related materials (``otherMat``). sdckit reads from each
``<var>``: the name (``@name``), the label (``labl``), the value labels (``catgry`` with
``catValu`` and ``labl``), the missing codes (``catgry[@missing="Y"]`` and ``invalrng/item``
and ``invalrng/range``), the type (``varFormat/@type``: numeric or character; ``@intrvl``:
discrete or continuous) and the weight flag (``@wgt="wgt"``). A codebook written by sdckit
also carries each variable's role in a ``notes`` element of type ``sdckit:role``, so that a
release's codebook sets up the same roles when it is read again.

The codebook written for a release holds the released variables with their labels, value
labels and missing codes; what was done to each variable in plain words (``notes`` of type
``sdckit:disclosure-control``); the published PRAM matrices as related materials
(``otherMat`` with the file name as ``URI``); and the release's risk statement (the study's
confidentiality declaration ``dataAccs/useStmt/confDec`` and a ``notes`` of type
``sdckit:risk-statement``). It is valid against the DDI-Codebook 2.5 XML schema, which ships
in ``sdckit/catalogue/schemas/ddi_codebook_2_5`` (DDI Alliance, LGPL-3.0; see the LICENSE
file there) and :func:`validate_ddi` checks (it needs ``lxml``).

References
----------
DDI Alliance (2012). *DDI-Codebook 2.5* XML schema, ``codebook.xsd``: ``varType`` (sequence
``labl, ..., invalrng, ..., catgry, ..., varFormat, ..., notes``; attributes ``name``,
``wgt``, ``intrvl``), ``catgryType`` (``catValu``, ``labl``; attribute ``missing``),
``invalrngType`` (``item``/``range``), ``otherMatType`` (``labl``, ``txt``, ``notes``;
attributes ``type``, ``URI``), ``useStmtType`` (``confDec``).
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError

__all__ = ["NAMESPACE", "SCHEMA_DIR", "DdiVariable", "DdiMaterial", "DdiCodebook", "read_ddi", "ddi_xml",
           "write_ddi", "validate_ddi", "codebook_from_microdata"]

NAMESPACE = "ddi:codebook:2_5"
#: the DDI-Codebook 2.5 schema shipped with sdckit (codebook.xsd and its imports)
SCHEMA_DIR = Path(__file__).resolve().parent / "schemas" / "ddi_codebook_2_5"
_SCHEMA_LOCATION = "ddi:codebook:2_5 http://www.ddialliance.org/Specification/DDI-Codebook/2.5/XMLSchema/codebook.xsd"
_XSI = "http://www.w3.org/2001/XMLSchema-instance"
ROLE_NOTE = "sdckit:role"
SDC_NOTE = "sdckit:disclosure-control"
RISK_NOTE = "sdckit:risk-statement"
_ROLES = ("key_vars", "numeric_vars", "weight", "household", "strata", "sensitive", "pram_vars")


@dataclass(frozen=True)
class DdiVariable:
    """One ``<var>`` of a codebook.

    ``value_labels`` maps the code as written in the codebook (text) to its label;
    ``missing`` lists the missing codes (text) and ``missing_ranges`` the ranges
    (``{"lo": a, "hi": b}`` as text); ``representation`` is ``"numeric"`` or ``"character"``
    (None when the codebook does not say); ``interval`` ``"discrete"`` or ``"contin"``;
    ``role`` one of the Microdata roles or None; ``treatment`` the plain-words statements of
    what disclosure control did to the variable.
    """

    name: str
    label: str | None = None
    value_labels: Mapping[str, str] = field(default_factory=dict)
    missing: tuple[str, ...] = ()
    missing_ranges: tuple[Mapping[str, str], ...] = ()
    representation: str | None = None
    interval: str | None = None
    weight: bool = False
    role: str | None = None
    treatment: tuple[str, ...] = ()

    def typed(self, code: str) -> Any:
        """A code as a number where the variable is numeric (``"1"`` -> 1, ``"2.5"`` -> 2.5)."""
        if self.representation == "character":
            return code
        try:
            f = float(code)
        except ValueError:
            return code
        return int(f) if f.is_integer() else f


@dataclass(frozen=True)
class DdiMaterial:
    """A related material (``otherMat``): a published file, its title and a description."""

    uri: str
    title: str
    description: str = ""
    kind: str = "published file"


@dataclass(frozen=True)
class DdiCodebook:
    """What sdckit reads from and writes to a DDI-Codebook 2.5 file."""

    title: str
    variables: tuple[DdiVariable, ...] = ()
    data_file: str | None = None
    n_records: int | None = None
    materials: tuple[DdiMaterial, ...] = ()
    risk_statement: str | None = None
    abstract: str | None = None
    id_no: str | None = None

    def variable(self, name: str) -> DdiVariable:
        for v in self.variables:
            if v.name == name:
                return v
        raise InputError(f"codebook: no variable named {name!r}; it describes "
                         f"{', '.join(v.name for v in self.variables) or 'no variables'}")

    # ------------------------------------------------------------------ to sdckit
    def column_labels(self) -> dict[str, str]:
        return {v.name: v.label for v in self.variables if v.label}

    def value_labels(self) -> dict[str, dict[Any, str]]:
        """Value labels by column, the codes typed as the variable's representation."""
        return {v.name: {v.typed(c): lab for c, lab in v.value_labels.items()}
                for v in self.variables if v.value_labels}

    def missing_ranges(self) -> dict[str, list[dict]]:
        """Missing codes by column as :class:`~sdckit.microdata.DatasetMeta` keeps them
        (``{"lo": a, "hi": a}`` for a single code)."""
        out: dict[str, list[dict]] = {}
        for v in self.variables:
            ranges = [{"lo": v.typed(c), "hi": v.typed(c)} for c in v.missing]
            ranges += [{"lo": v.typed(r["lo"]), "hi": v.typed(r["hi"])} for r in v.missing_ranges]
            if ranges:
                out[v.name] = ranges
        return out

    def na_values(self) -> list[Any]:
        """Every single missing code (typed), for reading a data file with these codes as missing."""
        seen: list[Any] = []
        for v in self.variables:
            for c in v.missing:
                t = v.typed(c)
                if t not in seen:
                    seen.append(t)
        return seen

    def roles(self) -> dict[str, Any]:
        """The Microdata roles the codebook states (sdckit's role notes; ``wgt="wgt"`` names the
        weight), as keyword arguments of :func:`sdckit.io.read_microdata`."""
        out: dict[str, Any] = {}
        for v in self.variables:
            role = v.role or ("weight" if v.weight else None)
            if role in ("weight", "household"):
                out.setdefault(role, v.name)
            elif role in _ROLES:
                out.setdefault(role, []).append(v.name)
        return {k: (tuple(v) if isinstance(v, list) else v) for k, v in out.items()}

    def merged_meta(self, meta: Any):
        """``meta`` (a :class:`~sdckit.microdata.DatasetMeta` read with the data) with the
        codebook's variable labels, value labels and missing codes where the file has none."""
        from dataclasses import replace

        return replace(meta, column_labels={**self.column_labels(), **dict(meta.column_labels)},
                       value_labels={**self.value_labels(), **dict(meta.value_labels)},
                       missing_ranges={**self.missing_ranges(), **dict(meta.missing_ranges)})

    def to_meta(self, source: str | None = None, file_format: str | None = None):
        """The labels and missing codes as a :class:`~sdckit.microdata.DatasetMeta`."""
        from ..microdata import DatasetMeta

        return DatasetMeta(source=source, column_labels=self.column_labels(), value_labels=self.value_labels(),
                           file_format=file_format, missing_ranges=self.missing_ranges())


# ---------------------------------------------------------------------------------- reading
def _local(tag: Any) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _children(el: ET.Element, name: str) -> list[ET.Element]:
    return [c for c in el if _local(c.tag) == name]


def _first_text(el: ET.Element, name: str) -> str | None:
    for c in _children(el, name):
        text = "".join(c.itertext()).strip()
        if text:
            return text
    return None


def _code(text: str | None) -> str:
    return (text or "").strip()


def read_ddi(path: str | os.PathLike) -> DdiCodebook:
    """Read a DDI-Codebook file (2.5, or 2.x without a namespace).

    Parameters
    ----------
    path : path
        The codebook XML file.

    Returns
    -------
    DdiCodebook
        The study title, the data file's name and record count (``fileDscr``), and every
        variable's name, label, value labels, missing codes, type and role.

    Raises
    ------
    InputError
        The file is missing, is not XML, declares a DOCTYPE (entity definitions are refused:
        a hostile file could expand them without end), or has no ``codeBook`` root.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read the codebook: {exc.strerror}; check the path.") from None
    if b"<!DOCTYPE" in raw[:4096].upper() or b"<!ENTITY" in raw.upper():
        raise InputError(f"{path}: the codebook declares a DOCTYPE or entities, which sdckit does not read; "
                         "remove the declaration (DDI-Codebook needs none).")
    try:
        root = ET.fromstring(raw)
    except ET.ParseError as exc:
        raise InputError(f"{path}: is not well-formed XML ({exc}); give a DDI-Codebook file.") from None
    if _local(root.tag) != "codeBook":
        raise InputError(f"{path}: the root element is <{_local(root.tag)}>, not <codeBook>; give a "
                         "DDI-Codebook file.")
    title = None
    for t in root.iter():
        if _local(t.tag) == "titl":
            title = "".join(t.itertext()).strip()
            break
    data_file, n_records = None, None
    for fd in _children(root, "fileDscr"):
        for ft in _children(fd, "fileTxt"):
            data_file = data_file or _first_text(ft, "fileName")
            for dim in _children(ft, "dimensns"):
                n = _first_text(dim, "caseQnty")
                if n and n.isdigit():
                    n_records = int(n)
    variables = []
    for dd in _children(root, "dataDscr"):
        for var in _children(dd, "var"):
            variables.append(_read_var(var, path))
    materials = []
    for om in _children(root, "otherMat"):
        materials.append(DdiMaterial(uri=om.get("URI", ""), title=_first_text(om, "labl") or "",
                                     description=_first_text(om, "txt") or "", kind=om.get("type", "")))
    risk = None
    for note in root.iter():
        if _local(note.tag) == "notes" and note.get("type") == RISK_NOTE:
            risk = "".join(note.itertext()).strip()
    return DdiCodebook(title=title or path.stem, variables=tuple(variables), data_file=data_file,
                       n_records=n_records, materials=tuple(materials), risk_statement=risk)


def _read_var(var: ET.Element, path: Path) -> DdiVariable:
    name = var.get("name")
    if not name:
        raise InputError(f"{path}: a <var> has no name attribute; every variable of the codebook needs one.")
    labels: dict[str, str] = {}
    missing: list[str] = []
    for cat in _children(var, "catgry"):
        code = _code(_first_text(cat, "catValu"))
        if not code:
            continue
        lab = _first_text(cat, "labl")
        if lab is not None:
            labels[code] = lab
        if (cat.get("missing") or "").upper() == "Y" and code not in missing:
            missing.append(code)
    ranges: list[dict[str, str]] = []
    for inv in _children(var, "invalrng"):
        for item in _children(inv, "item"):
            v = item.get("VALUE")
            if v is not None and v.strip() not in missing:
                missing.append(v.strip())
        for rng in _children(inv, "range"):
            lo, hi = rng.get("min") or rng.get("minExclusive"), rng.get("max") or rng.get("maxExclusive")
            if lo is not None and hi is not None:
                ranges.append({"lo": lo.strip(), "hi": hi.strip()})
    representation = None
    for vf in _children(var, "varFormat"):
        representation = vf.get("type")
    role = None
    treatment = []
    for note in _children(var, "notes"):
        text = "".join(note.itertext()).strip()
        if note.get("type") == ROLE_NOTE and text in _ROLES:
            role = text
        elif note.get("type") == SDC_NOTE and text:
            treatment.append(text)
    return DdiVariable(name=name, label=_first_text(var, "labl"), value_labels=labels, missing=tuple(missing),
                       missing_ranges=tuple(ranges), representation=representation,
                       interval=var.get("intrvl"), weight=var.get("wgt") == "wgt", role=role,
                       treatment=tuple(treatment))


# ---------------------------------------------------------------------------------- writing
def _q(name: str) -> str:
    return f"{{{NAMESPACE}}}{name}"


def _sub(parent: ET.Element, tag: str, text: str | None = None, /, **attrs: str | None) -> ET.Element:
    el = ET.SubElement(parent, _q(tag), {k: v for k, v in attrs.items() if v is not None})
    if text is not None:
        el.text = text
    return el


def ddi_xml(codebook: DdiCodebook) -> bytes:
    """The codebook as DDI-Codebook 2.5 XML (UTF-8), in the schema's element order."""
    ET.register_namespace("", NAMESPACE)
    ET.register_namespace("xsi", _XSI)
    root = ET.Element(_q("codeBook"), {"version": "2.5", f"{{{_XSI}}}schemaLocation": _SCHEMA_LOCATION})
    if codebook.id_no:
        root.set("ID", codebook.id_no)
    # stdyDscr: citation (titlStmt/titl is required), stdyInfo, dataAccs, notes
    study = _sub(root, "stdyDscr")
    cit = _sub(study, "citation")
    title_stmt = _sub(cit, "titlStmt")
    _sub(title_stmt, "titl", codebook.title)
    if codebook.abstract:
        _sub(_sub(study, "stdyInfo"), "abstract", codebook.abstract)
    if codebook.risk_statement:
        use = _sub(_sub(study, "dataAccs"), "useStmt")
        _sub(use, "confDec", codebook.risk_statement)
        _sub(study, "notes", codebook.risk_statement, type=RISK_NOTE, subject="disclosure risk")
    # fileDscr: the released data file
    if codebook.data_file:
        fd = _sub(root, "fileDscr", ID="F1", URI=codebook.data_file)
        ft = _sub(fd, "fileTxt")
        _sub(ft, "fileName", codebook.data_file)
        dim = _sub(ft, "dimensns")
        if codebook.n_records is not None:
            _sub(dim, "caseQnty", str(codebook.n_records))
        _sub(dim, "varQnty", str(len(codebook.variables)))
    if codebook.variables:
        dd = _sub(root, "dataDscr")
        for i, v in enumerate(codebook.variables):
            _write_var(dd, v, i, "F1" if codebook.data_file else None)
    for m in codebook.materials:
        om = _sub(root, "otherMat", type=m.kind, level="study", URI=m.uri)
        _sub(om, "labl", m.title)
        if m.description:
            _sub(om, "txt", m.description)
    ET.indent(root, space="  ")
    return ET.tostring(root, encoding="UTF-8", xml_declaration=True)


def _write_var(parent: ET.Element, v: DdiVariable, i: int, file_id: str | None) -> None:
    attrs = {"ID": f"V{i + 1}", "name": v.name, "files": file_id}
    if v.interval in ("discrete", "contin"):
        attrs["intrvl"] = v.interval
    if v.weight:
        attrs["wgt"] = "wgt"
    var = _sub(parent, "var", **attrs)
    if v.label:
        _sub(var, "labl", v.label)
    if v.missing or v.missing_ranges:
        inv = _sub(var, "invalrng")
        for c in v.missing:
            _sub(inv, "item", VALUE=c)
        for r in v.missing_ranges:
            _sub(inv, "range", min=r["lo"], max=r["hi"])
    codes = list(v.value_labels)
    codes += [c for c in v.missing if c not in v.value_labels]
    for c in codes:
        cat = _sub(var, "catgry", missing="Y" if c in v.missing else None)
        _sub(cat, "catValu", c)
        if c in v.value_labels:
            _sub(cat, "labl", v.value_labels[c])
    if v.representation in ("numeric", "character"):
        _sub(var, "varFormat", type=v.representation, schema="other")
    if v.role:
        _sub(var, "notes", v.role, type=ROLE_NOTE, subject="role in disclosure control")
    for text in v.treatment:
        _sub(var, "notes", text, type=SDC_NOTE, subject="disclosure control")


def write_ddi(codebook: DdiCodebook, path: str | os.PathLike) -> Path:
    """Write the codebook (atomically) as DDI-Codebook 2.5 XML; returns the path."""
    from ..io.atomic import atomic_write_text

    return atomic_write_text(Path(path), ddi_xml(codebook).decode("utf-8"))


def validate_ddi(source: str | os.PathLike | bytes) -> list[str]:
    """Validate XML (a file or its bytes) against the shipped DDI-Codebook 2.5 schema.

    Returns the schema's error messages (``line N: message``); an empty list means valid.
    Needs ``lxml`` (an optional dependency: ``pip install lxml``).
    """
    try:
        from lxml import etree
    except ImportError:  # pragma: no cover - lxml is in the test extra
        raise InputError("validating a DDI codebook needs lxml; install it (pip install lxml).") from None
    schema = _schema(etree)
    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    doc = etree.fromstring(source, parser) if isinstance(source, bytes) else etree.parse(str(source), parser)
    if schema.validate(doc):
        return []
    return [f"line {e.line}: {e.message}" for e in schema.error_log]


_SCHEMA_CACHE: dict[str, Any] = {}


def _schema(etree: Any) -> Any:
    if "codebook" not in _SCHEMA_CACHE:
        parser = etree.XMLParser(no_network=True)
        _SCHEMA_CACHE["codebook"] = etree.XMLSchema(etree.parse(str(SCHEMA_DIR / "codebook.xsd"), parser))
    return _SCHEMA_CACHE["codebook"]


# ---------------------------------------------------------------------------------- from a Microdata
def _text_code(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def codebook_from_microdata(md: Any, *, title: str, data_file: str | None = None,
                            treatment: Mapping[str, Sequence[str]] | None = None,
                            materials: Iterable[DdiMaterial] = (), risk_statement: str | None = None,
                            abstract: str | None = None, value_labels: Mapping[str, Mapping[Any, str]] | None = None
                            ) -> DdiCodebook:
    """The codebook of a Microdata's columns: labels, value labels and missing codes from its
    metadata (``value_labels`` overrides the value labels, e.g. those that still fit after a
    recode), roles, representation from the column's dtype, and ``treatment`` (column ->
    plain-words statements)."""
    import pandas as pd

    meta = md.meta
    vlabels = meta.value_labels if value_labels is None else value_labels
    roles: dict[str, str] = {}
    for role, cols in md.roles.items():
        for c in ([cols] if isinstance(cols, str) else list(cols or ())):
            roles.setdefault(c, role)
    variables = []
    for col in md.frame.columns:
        s = md.frame[col]
        numeric = pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)
        labels = {_text_code(k): str(v) for k, v in (vlabels.get(col) or {}).items()}
        missing: list[str] = []
        ranges: list[dict[str, str]] = []
        for r in meta.missing_ranges.get(col, []) or []:
            lo, hi = r.get("lo"), r.get("hi")
            if lo == hi:
                missing.append(_text_code(lo))
            else:
                ranges.append({"lo": _text_code(lo), "hi": _text_code(hi)})
        role = roles.get(str(col))
        variables.append(DdiVariable(
            name=str(col), label=meta.column_labels.get(col), value_labels=labels, missing=tuple(missing),
            missing_ranges=tuple(ranges), representation="numeric" if numeric else "character",
            interval="contin" if (numeric and pd.api.types.is_float_dtype(s) and not labels) else "discrete",
            weight=role == "weight", role=role, treatment=tuple((treatment or {}).get(str(col), ()))))
    return DdiCodebook(title=title, variables=tuple(variables), data_file=data_file, n_records=md.n_records,
                       materials=tuple(materials), risk_statement=risk_statement, abstract=abstract)
