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

from .cellkey import CKMResult, add_record_keys, cell_keys, ckm_frequency, perturb_frequencies, record_keys
from .magnitude import FlexParams, ckm_magnitude, perturb_magnitudes
from .ptable import KEY_SCALE, PTable, load_ptable

__all__ = ["PTable", "load_ptable", "KEY_SCALE", "CKMResult", "add_record_keys", "record_keys", "cell_keys",
           "ckm_frequency", "perturb_frequencies", "FlexParams", "ckm_magnitude", "perturb_magnitudes"]
