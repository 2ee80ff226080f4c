"""Results read well: every result class of the public method packages (found by importing them)
has the display mixin, a one-line short repr, an HTML fragment that parses and shows no raw JSON,
and a JSON-ready to_dict(); five real results are checked the same way, with their figures."""

from __future__ import annotations

import dataclasses
import importlib
import json
import pkgutil
import re
import traceback
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

import sdckit
from sdckit._random import SeedRecord
from sdckit.result import Guarantee, ResultDisplay

#: the packages whose result classes must read well (and the release run)
PACKAGES = ("risk", "utility", "tables", "synth", "attacks", "dp", "pram", "masking")
NAME = re.compile(r"(Result|Report|Run)$")
SECRET = 918273645546372819  # a seed's entropy must never reach a repr, an HTML fragment or a dict


def _modules():
    for pkg in PACKAGES:
        root = importlib.import_module(f"sdckit.{pkg}")
        yield root
        for info in pkgutil.walk_packages(root.__path__, prefix=f"sdckit.{pkg}."):
            try:
                yield importlib.import_module(info.name)
            except ImportError:  # an optional dependency (e.g. dask) that is not installed
                continue
    yield importlib.import_module("sdckit.release")


def _result_classes() -> list[type]:
    found = {}
    for mod in _modules():
        for name, obj in vars(mod).items():
            if (isinstance(obj, type) and obj.__module__ == mod.__name__ and NAME.search(name)
                    and dataclasses.is_dataclass(obj)):
                found[f"{obj.__module__}.{name}"] = obj
    return [found[k] for k in sorted(found)]


CLASSES = _result_classes()


class _Checker(HTMLParser):
    """Parses a fragment and checks that every opened tag is closed in order."""

    VOID = {"br", "img", "hr", "meta", "input", "col"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes {self.stack[-1:]}"
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def _check_display(obj) -> None:
    text = repr(obj)
    assert "\n" not in text and len(text) <= 240, text
    assert text.startswith(f"<{type(obj).__name__}"), text
    fragment = obj._repr_html_()
    parser = _Checker()
    parser.feed(fragment)
    parser.close()
    assert not parser.stack, f"unclosed tags {parser.stack}"
    shown = "".join(parser.text)
    assert "{" not in shown, f"raw JSON in the HTML of {type(obj).__name__}: {shown[:200]}"
    assert "<script" not in fragment.lower() and "<b>" not in fragment  # text is escaped
    d = obj.to_dict()
    dumped = json.dumps(d)
    for out in (text, fragment, dumped):
        assert str(SECRET) not in out, "a seed reached a public output"
    assert isinstance(obj.describe(), (dict, str, pd.DataFrame))


# --------------------------------------------------------------------------- every class
def _dummy(annotation: str):
    """A value of a field's annotated type (text with markup, to check the escaping)."""
    a = str(annotation)
    if "SeedRecord" in a:
        return SeedRecord(SECRET, (0,), "os")
    if "DataFrame" in a:
        return pd.DataFrame({"a<b>": [1, 2, 3], "b": ["<b>x</b>", "y", "z"]})
    if "ndarray" in a:
        return np.arange(6.0).reshape(2, 3)
    if "Microdata" in a:
        return sdckit.Microdata(pd.DataFrame({"k": ["a", "b", "a"]}), key_vars=["k"])
    if "Guarantee" in a:
        return (Guarantee("g", "a <b>promise</b>", 0.5, True),)
    for word, value in (("bool", True), ("int", 3), ("float", 0.25), ("str", "<b>x</b>"),
                        ("dict", {"a": 1, "b": [1, 2]}), ("tuple", ()), ("list", [])):
        if a.split("[")[0].split("|")[0].strip() == word:
            return value
    return None


def _instance(cls):
    obj = object.__new__(cls)
    for f in dataclasses.fields(cls):
        object.__setattr__(obj, f.name, _dummy(f.type))
    return obj


def test_every_result_class_of_the_public_packages_has_the_display_mixin():
    assert len(CLASSES) >= 25
    missing = [c.__qualname__ for c in CLASSES if not issubclass(c, ResultDisplay)]
    assert not missing, f"result classes without ResultDisplay: {missing}"
    assert issubclass(sdckit.ReleaseRun, ResultDisplay)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_the_mixin_repr_and_html_read_well_on_every_class(cls):
    # a bare instance of each class (its fields set to values of their annotated types): the
    # mixin's repr is one short line, its HTML parses, escapes its text and shows no JSON
    obj = _instance(cls)
    guarantees = getattr(cls, "guarantees", None)
    if isinstance(guarantees, property):
        pytest.skip(f"{cls.__name__}.guarantees is computed from consistent data (a real instance is needed)")
    try:
        obj.headline()
    except Exception as exc:  # a property of the class itself (an n_* count) needs consistent data
        where = traceback.extract_tb(exc.__traceback__)[-1].filename
        if where.endswith(("sdckit/result.py", "sdckit\\result.py")):
            raise
        pytest.skip(f"{cls.__name__}: a count it states needs consistent data ({type(exc).__name__})")
    if cls.__repr__ is ResultDisplay.__repr__ and not cls._headline:
        text = repr(obj)
        assert "\n" not in text and len(text) <= 240, text
        assert str(SECRET) not in text
    fragment = ResultDisplay._repr_html_(obj) if not cls._headline else None
    if fragment is not None:
        parser = _Checker()
        parser.feed(fragment)
        assert not parser.stack
        assert "{" not in "".join(parser.text) and "<b>" not in fragment and str(SECRET) not in fragment
    if cls.to_dict is ResultDisplay.to_dict:
        dumped = json.dumps(obj.to_dict())
        assert str(SECRET) not in dumped


def test_a_dataframe_repr_is_its_shape_never_its_rows():
    @dataclasses.dataclass(frozen=True)
    class Frame(ResultDisplay):
        frame: pd.DataFrame
        n: int = 4

    obj = Frame(pd.DataFrame({"x": range(1000)}))
    assert repr(obj) == "<Frame n=4>"
    assert "first 5 of 1,000 rows" in obj._repr_html_()
    assert obj.to_dict() == {"frame": {"rows": 1000, "columns": ["x"]}, "n": 4}


# --------------------------------------------------------------------------- five real results
@pytest.fixture(scope="module")
def md():
    rng = np.random.default_rng(20261126)
    n = 600
    df = pd.DataFrame({"region": rng.choice(["north", "south", "east <w>"], n),
                       "sex": rng.choice(["f", "m"], n),
                       "age": rng.integers(1, 6, n),
                       "income": rng.lognormal(10, 0.5, n).round(2)})
    return sdckit.Microdata(df, key_vars=["region", "sex", "age"], numeric_vars=["income"])


def test_risk_report(md):
    r = sdckit.measure_risk(md)
    _check_display(r)
    # the headline figures are typed attributes read from the measured summary
    assert r.n_records == 600 and isinstance(r.k_reached, int)
    assert r.n_sample_uniques == int((r.records["fk"] == 1).sum())  # counted independently
    assert repr(r).startswith("<RiskReport n_records=600, n_sample_uniques=")


def test_pram_result(md):
    r = sdckit.steps.Pram(["region"], min_diagonal=0.8).apply(md, rng=SECRET)
    _check_display(r)
    changed = int((r.microdata.frame["region"] != md.frame["region"]).sum())  # counted independently
    assert r.n_changed == changed and r.min_diagonal >= 0.8 and r.n_matrices == 1
    assert "guarantees_held=5/5" in repr(r)


def test_microaggregation_result(md):
    r = sdckit.steps.Microaggregation(variables=["income"], k=3).apply(md, rng=SECRET)
    _check_display(r)


def test_release_run(md):
    run = sdckit.Release(md, [sdckit.steps.Pram(["region"])], {"max_global_risk": 0.99, "allow_identifiers": ["income"]},
                         rng=SECRET).run()
    _check_display(run)
    assert run.n_records == 600 and run.n_steps == 1 and run.n_failed == 0
    assert run.describe()["verdict"] == "passed"
    assert "max_global_risk" in run._repr_html_() and "passed" in run._repr_html_()
    assert json.loads(json.dumps(run.to_dict()))["verdict"].startswith("Passed")


def test_table_result():
    from sdckit.tables.registry import build_table_method, build_table_rule
    from sdckit.tables.rules import primary_cells
    from sdckit.tables.table import Hierarchy, Table

    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"county": rng.choice(["a", "b", "c"], 200), "edu": rng.choice(["x", "y"], 200)})
    table = Table.from_microdata(frame, ["county", "edu"],
                                 hierarchies={"county": Hierarchy.flat(["a", "b", "c"]),
                                              "edu": Hierarchy.flat(["x", "y"])})
    rule = build_table_rule({"type": "threshold", "n": 3}).build()
    method = build_table_method("rounding", {})
    r = method.apply(table, primary_cells(table, [rule]), rng=SECRET, microdata=frame)
    _check_display(r)
