"""Releases that catalogues and pipelines read: DDI-Codebook 2.5 (:mod:`.ddi`), SDMX-CSV 2.0 with
its structure (:mod:`.sdmx`), Frictionless data packages (:mod:`.frictionless`) and the SATRE
disclosure-control record (:mod:`.satre`)."""

# The names load on first use (PEP 562): importing one module of this package does not import
# the others (a command pays only for what it uses).
from .._lazy import attach

_EXPORTS = {
    "DdiCodebook": "ddi", "DdiVariable": "ddi", "DdiMaterial": "ddi", "read_ddi": "ddi", "write_ddi": "ddi",
    "ddi_xml": "ddi", "validate_ddi": "ddi", "codebook_from_microdata": "ddi",
    "write_sdmx_csv": "sdmx", "read_sdmx_csv": "sdmx", "sdmx_csv_text": "sdmx", "sdmx_status": "sdmx",
    "sdmx_structure_xml": "sdmx", "SdmxTable": "sdmx", "primary_codes": "sdmx", "sdmx_identifier": "sdmx",
    "datapackage_dict": "frictionless", "table_schema": "frictionless",
    "satre_record": "satre",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = attach(__name__, _EXPORTS, __all__, globals())
