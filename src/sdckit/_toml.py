"""A small TOML writer for the specs sdckit writes (tables, arrays of tables, inline tables)."""

from __future__ import annotations

import json
import math
import re
from typing import Any

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(k: str) -> str:
    return k if _BARE.match(k) else json.dumps(k)


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        if math.isnan(v):
            return "nan"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_key(str(k))} = {_value(x)}" for k, x in v.items()) + " }"
    if hasattr(v, "item"):  # numpy scalar
        return _value(v.item())
    raise TypeError(f"cannot write {type(v).__name__} to TOML")


def dumps(doc: dict) -> str:
    """TOML text of ``doc``: top-level tables of scalars, and lists of tables as [[arrays]]."""
    lines: list[str] = []
    for name, section in doc.items():
        if isinstance(section, dict):
            lines.append(f"[{_key(name)}]")
            lines += [f"{_key(str(k))} = {_value(v)}" for k, v in section.items() if v is not None]
            lines.append("")
        elif isinstance(section, list) and section and all(isinstance(x, dict) for x in section):
            for item in section:
                lines.append(f"[[{_key(name)}]]")
                lines += [f"{_key(str(k))} = {_value(v)}" for k, v in item.items() if v is not None]
                lines.append("")
        else:
            lines.insert(0, f"{_key(name)} = {_value(section)}")
    return "\n".join(lines)
