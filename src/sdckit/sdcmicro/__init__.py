"""Coming from sdcMicro: translate an sdcMicro script (R) into sdckit release specs.

:func:`translate` reads the script (:func:`parse_r`, a reader of R's call syntax) and turns
``createSdcObj``'s roles, the masking calls and the report into ``[roles]``, ``[[steps]]``,
``[gate]`` and ``[output]``, saying line by line what it could not translate. The command
line's ``sdckit from-sdcmicro script.R`` runs it.
"""

from .reader import parse_r
from .translate import LineNote, Translation, translate

__all__ = ["LineNote", "Translation", "parse_r", "translate"]
