"""The cell key method (CKM) for frequency and magnitude tables.

* :mod:`.ptable` -- p-tables: read (tau-Argus / ptable format), check, generate from D, V, js
  with the maximum-entropy construction, look up.
* :mod:`.cellkey` -- record keys, exact cell keys, frequency perturbation
  (:func:`perturb_frequencies`).
* :mod:`.magnitude` -- magnitude perturbation through the top contributors (flex function).

References
----------
Thompson, G., Broadfoot, S. & Elazar, D. (2013). Methodology for the automatic
confidentialisation of statistical outputs from remote servers at the Australian Bureau of
Statistics. UNECE/Eurostat Work Session on Statistical Data Confidentiality.
Enderle, T., Giessing, S. & Tent, R. (2018). Designing confidentiality on the fly. *PSD 2018*.
"""

# The names load on first use (PEP 562): importing one module of this package does not import
# the others (a command pays only for what it uses).
from ..._lazy import attach

_EXPORTS = {
    "CKMResult": "cellkey", "add_record_keys": "cellkey", "cell_keys": "cellkey",
    "ckm_frequency": "cellkey", "perturb_frequencies": "cellkey", "record_keys": "cellkey",
    "FlexParams": "magnitude", "ckm_magnitude": "magnitude", "perturb_magnitudes": "magnitude",
    "KEY_SCALE": "ptable", "PTable": "ptable", "load_ptable": "ptable",
}

__all__ = [
    "PTable", "load_ptable", "KEY_SCALE", "CKMResult", "add_record_keys", "record_keys",
    "cell_keys", "ckm_frequency", "perturb_frequencies", "FlexParams", "ckm_magnitude",
    "perturb_magnitudes",
]


__getattr__, __dir__ = attach(__name__, _EXPORTS, __all__, globals())
