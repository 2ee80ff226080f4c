"""Lazy package attributes (PEP 562), one implementation for every package ``__init__``.

A package lists ``{public name: submodule}`` and calls :func:`attach`; importing the package
then imports none of its submodules, and a name is imported on first use (so a command pays
only for what it uses). The same idea as scientific-python's ``lazy_loader.attach``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any


def attach(package: str, exports: Mapping[str, str], public: Iterable[str] = (),
           namespace: dict | None = None) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of package ``package``.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    exports : mapping
        Public name -> submodule (relative to the package) that defines it.
    public : iterable of str
        The package's ``__all__`` (listed by ``dir()``).
    namespace : dict, optional
        The package's ``globals()``: a resolved name is stored there, so it is looked up once.

    A name that is not exported but is a submodule resolves to that submodule, as after an
    eager import; anything else raises AttributeError.
    """
    public = tuple(public)

    def __getattr__(name: str) -> Any:
        from importlib import import_module
        from importlib.util import find_spec

        module = exports.get(name)
        if module is not None:
            value = getattr(import_module(f"{package}.{module}"), name)
            if namespace is not None:
                namespace[name] = value  # resolved once
            return value
        if not name.startswith("__") and find_spec(f"{package}.{name}") is not None:
            return import_module(f"{package}.{name}")
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(namespace or ()) | set(public) | set(exports))

    return __getattr__, __dir__


class LazyModule:
    """A stand-in for the module ``name`` that imports it on the first attribute read.

    For a module needed only on some paths of its importer (``typer`` in a command module whose
    declarations are read without it): ``typer = lazy_module("typer")`` under ``if not
    TYPE_CHECKING``.
    """

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        from importlib import import_module

        return getattr(import_module(self._name), attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"


def lazy_module(name: str) -> LazyModule:
    """The module ``name``, imported on first use (see :class:`LazyModule`)."""
    return LazyModule(name)
