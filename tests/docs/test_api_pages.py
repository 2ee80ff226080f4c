"""Every public subpackage of sdckit has an API page (docs/api/<name>.md, rendered by
mkdocstrings when tests/docs/test_site.py builds the site), each page names only modules that
exist, and the docstring check of ``make lint`` enforces only real numpydoc check codes."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "sdckit"
API = ROOT / "docs" / "api"
#: subpackages documented without a page of their own: name -> where (none today)
NO_PAGE: dict[str, str] = {}


def _public_subpackages() -> list[str]:
    return sorted(p.name for p in SRC.iterdir()
                  if p.is_dir() and not p.name.startswith("_") and (p / "__init__.py").exists())


def test_every_public_subpackage_has_an_api_page():
    missing = [name for name in _public_subpackages()
               if name not in NO_PAGE and not (API / f"{name}.md").is_file()]
    assert not missing, f"write docs/api/<name>.md (mkdocstrings ::: directives) for: {missing}"


def test_api_pages_name_existing_modules():
    wrong = []
    for page in sorted(API.glob("*.md")):
        for dotted in re.findall(r"^::: (sdckit[\w.]*)", page.read_text(encoding="utf-8"), re.M):
            rel = Path(*dotted.split(".")[1:])
            if not ((SRC / rel).with_suffix(".py").is_file() or (SRC / rel / "__init__.py").is_file()
                    or dotted == "sdckit"):
                wrong.append(f"{page.name}: {dotted}")
    assert not wrong, f"API pages name modules that do not exist: {wrong}"


def test_the_docstring_check_enforces_real_numpydoc_codes():
    spec = importlib.util.spec_from_file_location("check_docstrings", ROOT / "tools" / "check_docstrings.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["check_docstrings"] = module
    try:
        spec.loader.exec_module(module)
        from numpydoc.validate import ERROR_MSGS

        assert module.CHECKS <= set(ERROR_MSGS), sorted(module.CHECKS - set(ERROR_MSGS))
        # every package it checks exists and has a page
        for pkg in module.PACKAGES[1:]:
            assert (SRC / pkg.split(".")[1] / "__init__.py").is_file(), pkg
            assert (API / f"{pkg.split('.')[1]}.md").is_file(), pkg
    finally:
        sys.modules.pop("check_docstrings", None)
