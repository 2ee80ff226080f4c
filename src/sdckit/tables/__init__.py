"""sdckit.tables."""


def __getattr__(name: str):
    """``sdckit.tables.<Method>``: every registered table method class by its class name, on
    first use; a submodule (``sdckit.tables.rules``) otherwise, as after an eager import."""
    from importlib import import_module
    from importlib.util import find_spec

    if name.startswith("__"):
        raise AttributeError(name)
    if find_spec(f"{__name__}.{name}") is not None:  # a submodule: no registry scan (fast start-up)
        return import_module(f"{__name__}.{name}")
    from .registry import known_table_methods, table_method_class

    for method in known_table_methods():
        cls = table_method_class(method)
        if cls.__name__ == name:
            globals()[name] = cls  # resolved once
            return cls
    if find_spec(f"{__name__}.{name}") is not None:
        return import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
