"""Registers the basic categorical steps: ``recode``, ``remove`` and ``record_swap``."""

from .recode import Recode  # noqa: F401  (registration happens on import)
from .remove import RemoveVariables  # noqa: F401
from .record_swap import RecordSwap  # noqa: F401
