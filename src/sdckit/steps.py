"""Every registered release step class by its class name: ``sdckit.steps.Pram``,
``sdckit.steps.LocalSuppression``, ...

The classes load on first use (PEP 562): the registry imports the method packages' ``steps``
modules (:func:`sdckit.registry.discover`) only when a name is asked for. The spec names of the
steps (``"pram"``) are :func:`sdckit.registry.known_steps`.
"""

from __future__ import annotations

from typing import Any


def _classes() -> dict[str, type]:
    from .registry import known_steps, step_class

    return {step_class(n).__name__: step_class(n) for n in known_steps()}


def __getattr__(name: str) -> Any:
    if name == "__all__":
        return sorted(_classes())
    if name.startswith("__"):
        raise AttributeError(name)
    found = _classes().get(name)
    if found is None:
        from ._validation import close_names

        raise AttributeError(f"sdckit.steps has no step class {name!r}; {close_names(name, list(_classes()))}")
    globals()[name] = found  # resolved once
    return found


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_classes()))
