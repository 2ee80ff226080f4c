"""Registers the foundation's basic steps: ``recode`` (merge categories) and ``remove``."""

from .recode import Recode  # noqa: F401  (registration happens on import)
from .remove import RemoveVariables  # noqa: F401
