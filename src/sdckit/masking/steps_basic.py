"""Registers the basic categorical steps: recode, remove, record_swap, local_suppression."""

from .local_suppression import LocalSuppression  # noqa: F401
from .recode import Recode  # noqa: F401  (registration happens on import)
from .record_swap import RecordSwap  # noqa: F401
from .remove import RemoveVariables  # noqa: F401
