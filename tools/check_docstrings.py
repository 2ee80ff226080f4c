"""Check the docstrings of sdckit's public API with numpydoc's validator (run by ``make lint``).

The public API is every name in the ``__all__`` of ``sdckit`` and of its public subpackages
(the pages of ``docs/api/``). Each is validated with ``numpydoc.validate`` and the checks in
``CHECKS`` are enforced: every public object has a docstring with a one-line summary ending in
a period, its sections are well-formed and in numpydoc's order, and what the Parameters,
Returns and See Also sections say agrees with the signature (no parameter documented that does
not exist, none out of order, well-formed types and descriptions).

Not enforced yet (counted with ``--all``): a Parameters entry for every parameter (PR01),
Returns/See Also/Examples sections on every object (RT01, SA01, EX01) and an extended summary
(ES01); the public methods of the public classes are not checked either (many have no docstring).

Usage: ``python tools/check_docstrings.py [--all]``; exit status 1 when a check fails.
"""

from __future__ import annotations

import argparse
import collections
import importlib
import sys

from numpydoc.validate import validate

#: the packages whose ``__all__`` is the public API (their pages are docs/api/<name>.md)
PACKAGES = ("sdckit", "sdckit.attacks", "sdckit.dp", "sdckit.engine", "sdckit.explore", "sdckit.io",
            "sdckit.lattice", "sdckit.pram", "sdckit.risk", "sdckit.synth", "sdckit.utility", "sdckit.app",
            "sdckit.catalogue")

#: numpydoc's check codes enforced (https://numpydoc.readthedocs.io/en/latest/validation.html)
CHECKS = frozenset({
    "GL03",  # no double line breaks
    "GL05",  # no tabs
    "GL06",  # unknown section
    "GL07",  # sections in numpydoc's order
    "GL08",  # the object has a docstring
    "GL09",  # deprecation warning placed first
    "GL10",  # reST directives well-formed
    "SS01",  # a one-line summary
    "SS03",  # the summary ends with a period
    "PR02",  # no documented parameter that the signature lacks
    "PR03",  # parameters documented in the signature's order
    "PR05",  # parameter types not ending in a period
    "PR06",  # 'int', 'str', 'bool' rather than 'integer', 'string', 'boolean'
    "PR10",  # a space before the colon of 'name : type'
    "RT02",  # a Returns entry names a type, not the variable alone
    "YD01",  # generators have a Yields section
    "SA02", "SA03", "SA04",  # See Also entries well-formed
})


def public_names() -> list[str]:
    """The dotted names of the public API's callables, in package order."""
    out = []
    for pkg in PACKAGES:
        module = importlib.import_module(pkg)
        for name in getattr(module, "__all__", ()):
            if not name.startswith("_") and callable(getattr(module, name)):
                out.append(f"{pkg}.{name}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="count every numpydoc check, enforced or not")
    args = parser.parse_args(argv)
    failures, counts = [], collections.Counter()
    names = public_names()
    for name in names:
        for code, message in validate(name)["errors"]:
            counts[code] += 1
            if code in CHECKS:
                failures.append(f"{name}: {code} {message}")
    if args.all:
        for code, n in sorted(counts.items()):
            print(f"{code} {n}{'' if code in CHECKS else ' (not enforced)'}")
    for line in failures:
        print(line)
    print(f"docstrings: {len(names)} public objects, {len(failures)} problems", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
