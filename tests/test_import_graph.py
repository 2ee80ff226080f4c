"""The import graph of ``src/sdckit``, read from the source with ``ast``: layers point down and
there are no import cycles.

Every ``import`` and ``from ... import`` counts, wherever it stands (module level, inside a
function, under ``if TYPE_CHECKING:``), and so does ``importlib.import_module("sdckit...")``
with a literal name. ``from .pkg import name`` is an edge to the module ``pkg.name`` when that
is a module, else to ``pkg``. Importing ``sdckit.a.b`` does not count as importing the package
``sdckit.a`` itself (Python runs ``sdckit/a/__init__.py`` first, but a package ``__init__``
here only re-exports its own modules).

The layers (lowest first; a module may import its own layer and the layers below):

core
    ``sdckit`` (the public surface), ``errors``, ``_validation``, ``_random``, ``_highs``,
    ``_sums`` (exact double-double sums), ``_lazy`` (lazy package attributes), ``params``,
    ``progress`` (progress events and bars),
    ``microdata``, ``io``, ``result``
    (StepResult, Guarantee), ``registry`` (step and gate registries: every method registers
    into it, so it sits below them), and ``report.plots`` (matplotlib figure to inline HTML:
    a leaf used by the methods' own report sections, importing nothing from sdckit).
methods
    ``risk``, ``utility``, ``pram``, ``masking``, ``tables``, ``lattice`` and any other
    subpackage not named in another layer.
orchestration
    ``spec`` (TOML release spec -> registered steps), ``_spec_docs`` (the spec's reference
    and step listings generated from the declarations), ``release``, ``gate``, ``report``,
    ``explore``.
clients
    ``cli``, ``cli_steps``, ``__main__``, ``app``, ``engine`` (the Dask engine is a client of
    the same spec: nothing below it imports it).

Within the methods and orchestration layers the packages are ordered too (``RANKS``; a module
may import its own rank and the ranks below, lazily or not): the measures (``risk``,
``utility``) sit below the methods that change data (``masking``, ``pram``, ``tables``, ...);
``gate`` below ``spec`` below ``report`` below ``explore`` below ``release``.

No private name crosses a module boundary: ``from x import _name`` is refused unless ``x`` is the
importing module's own package and ``_name`` a module of it, and a private module
(``sdckit.pkg._mod``) is imported only from inside ``sdckit.pkg`` (the top-level private
modules, ``sdckit._random`` and the like, are the core's helpers for the whole package).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "sdckit"

LAYERS = ("core", "methods", "orchestration", "clients")
#: the layer of each top-level module or subpackage of sdckit (a subpackage not named here
#: is a method package); a top-level single module must be named here
PLACEMENT = {
    # core
    "sdckit": "core", "sdckit.errors": "core", "sdckit._validation": "core",
    "sdckit._random": "core", "sdckit._highs": "core", "sdckit._sums": "core", "sdckit._lazy": "core",
    "sdckit._version": "core",
    "sdckit.params": "core", "sdckit.progress": "core", "sdckit.microdata": "core",
    "sdckit.io": "core", "sdckit.result": "core", "sdckit.registry": "core",
    # methods
    "sdckit.risk": "methods", "sdckit.utility": "methods", "sdckit.pram": "methods",
    "sdckit.masking": "methods", "sdckit.tables": "methods", "sdckit.lattice": "methods",
    # orchestration
    "sdckit.spec": "orchestration", "sdckit._spec_docs": "orchestration",
    "sdckit.release": "orchestration", "sdckit.gate": "orchestration", "sdckit.steps": "orchestration",
    "sdckit.testing": "orchestration",
    "sdckit.runner": "orchestration",
    "sdckit.report": "orchestration", "sdckit.explore": "orchestration",
    # clients
    "sdckit.cli": "clients", "sdckit.cli_steps": "clients", "sdckit.cli_dispatch": "clients", "sdckit.cli_warm": "clients", "sdckit.cli_table": "clients", "sdckit.__main__": "clients",
    "sdckit.app": "clients", "sdckit.engine": "clients",
}
#: single modules placed apart from their package (the most specific name wins)
MODULE_PLACEMENT = {
    "sdckit.report.plots": "core",
}
#: the order of the packages inside a layer: rank by package or module (the most specific name
#: wins; a method package not named here has the methods' top rank; an orchestration module not
#: named here is not ordered)
RANKS = {
    "sdckit.risk": 0, "sdckit.utility": 0,
    "sdckit.gate": 0, "sdckit.spec": 1, "sdckit._spec_docs": 1, "sdckit.report": 2,
    "sdckit.explore": 3, "sdckit.release": 4,
}
#: the ranks of the methods that change data (every method package not among the measures)
METHODS_TOP_RANK = 1
#: the modules that may import sdckit.engine
ENGINE_USERS = ("sdckit.engine", "sdckit.app", "sdckit.cli", "sdckit.cli_steps", "sdckit.__main__")


def _module_name(path: Path, src: Path = SRC) -> str:
    parts = list(path.relative_to(src.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules(src: Path = SRC) -> dict[str, Path]:
    return {_module_name(p, src): p for p in sorted(src.rglob("*.py"))}


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The module a dotted name refers to: the longest prefix that is a module."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


def import_graph() -> dict[str, set[str]]:
    """{module: modules of sdckit it imports}, from every import statement in its source."""
    modules = _modules()
    packages = {m for m, p in modules.items() if p.name == "__init__.py"}
    graph: dict[str, set[str]] = {}
    for mod, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        package = mod if mod in packages else mod.rpartition(".")[0]
        out: set[str] = set()
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[:len(base) - (node.level - 1)]
                    origin = ".".join(base + ([node.module] if node.module else []))
                else:
                    origin = node.module or ""
                # ``from pkg import sub`` imports the module pkg.sub when there is one
                targets = [f"{origin}.{a.name}" if f"{origin}.{a.name}" in modules else origin
                           for a in node.names]
            elif isinstance(node, ast.Call):
                fn = node.func
                fname = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", None)
                if (fname in ("import_module", "__import__") and node.args
                        and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                    targets = [node.args[0].value]
            for t in targets:
                if t == "sdckit" or t.startswith("sdckit."):
                    r = _resolve(t, modules)
                    if r is not None and r != mod:
                        out.add(r)
        graph[mod] = out
    return graph


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected component of more than one module, each as one cycle through
    it (Tarjan's algorithm, then a shortest path back to the start inside the component)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                components.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    cycles = []
    for comp in components:
        members = set(comp)
        start = min(comp)
        # breadth-first search from start's successors back to start, inside the component
        prev = {w: start for w in graph[start] if w in members}
        frontier = list(prev)
        while start not in prev and frontier:
            nxt = []
            for v in frontier:
                for w in sorted(graph[v]):
                    if w in members and w not in prev:
                        prev[w] = v
                        nxt.append(w)
            frontier = nxt
        path, v = [start], prev[start]
        while v != start:
            path.append(v)
            v = prev[v]
        cycles.append([start] + path[:0:-1] + [start])
    return cycles


def layer_of(module: str) -> str | None:
    for name in sorted(MODULE_PLACEMENT, key=len, reverse=True):
        if module == name or module.startswith(name + "."):
            return MODULE_PLACEMENT[name]
    parts = module.split(".")
    top = ".".join(parts[:2])
    if top in PLACEMENT:
        return PLACEMENT[top]
    if (SRC / parts[1]).is_dir():
        return "methods"  # another method package
    return None


@pytest.fixture(scope="module")
def graph():
    return import_graph()


def test_the_graph_is_read_from_the_source(graph):
    # known edges, one of each kind, read by eye from the source
    assert "sdckit.errors" in graph["sdckit.microdata"]          # from .errors import ...
    assert "sdckit.registry" in graph["sdckit.spec"]             # module-level relative import
    assert "sdckit.release" in graph["sdckit.cli"]               # function-local import
    assert "sdckit.engine" not in graph["sdckit.masking.noise"]


def test_cycle_finder_reports_a_cycle():
    # a hand-made graph: a -> b -> c -> a plus a dangling d
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycles(g) == [["a", "b", "c", "a"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles(graph):
    cycles = find_cycles(graph)
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_core_and_methods_never_import_the_engine(graph):
    bad = sorted(f"{m} -> {t}" for m, ts in graph.items() for t in ts
                 if (t == "sdckit.engine" or t.startswith("sdckit.engine."))
                 and not any(m == u or m.startswith(u + ".") for u in ENGINE_USERS))
    assert not bad, "imports of sdckit.engine from below the clients: " + "; ".join(bad)


def test_every_module_has_a_layer(graph):
    unplaced = sorted(m for m in graph if layer_of(m) is None)
    assert not unplaced, ("place these modules in a layer (PLACEMENT in this test and the "
                          f"README's Layout section): {unplaced}")


def test_layers_point_down(graph):
    up = sorted(f"{m} ({layer_of(m)}) -> {t} ({layer_of(t)})" for m, ts in graph.items() for t in ts
                if layer_of(m) and layer_of(t) and LAYERS.index(layer_of(t)) > LAYERS.index(layer_of(m)))
    assert not up, "imports from a lower layer up to a higher one: " + "; ".join(up)


def rank_of(module: str) -> int | None:
    """The rank of a module inside its layer (None for the core, the clients and an orchestration
    module not in ``RANKS``)."""
    layer = layer_of(module)
    if layer not in ("methods", "orchestration"):
        return None
    for name in sorted(RANKS, key=len, reverse=True):
        if module == name or module.startswith(name + "."):
            return RANKS[name]
    return METHODS_TOP_RANK if layer == "methods" else None


def upward_within_layers(graph: dict[str, set[str]]) -> set[str]:
    return {f"{m} -> {t}" for m, ts in graph.items() for t in ts
            if layer_of(m) == layer_of(t) and rank_of(m) is not None and rank_of(t) is not None
            and rank_of(t) > rank_of(m)}


def private_imports(src: Path = SRC) -> set[str]:
    """``importer -> origin.name`` for every private name or private module imported against the
    rules in the module docstring (from every import statement, wherever it stands); ``src`` is
    the package folder (sdckit's by default)."""
    modules = _modules(src)
    packages = {m for m, p in modules.items() if p.name == "__init__.py"}
    found: set[str] = set()

    def private_module_ok(target: str, importer: str) -> bool:
        # sdckit.pkg._mod (or anything inside it) may be imported from inside sdckit.pkg only
        parts = target.split(".")
        for i, part in enumerate(parts[1:], start=1):
            if part.startswith("_") and not part.startswith("__"):
                owner = ".".join(parts[:i])
                return importer == owner or importer.startswith(owner + ".")
        return True

    for mod, path in modules.items():
        package = mod if mod in packages else mod.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.startswith("sdckit.") and not private_module_ok(a.name, mod):
                        found.add(f"{mod} -> {a.name}")
                continue
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            if not (origin == "sdckit" or origin.startswith("sdckit.")):
                continue
            for a in node.names:
                target = f"{origin}.{a.name}"
                if target in modules:  # a module: allowed where its privacy allows
                    if not private_module_ok(target, mod):
                        found.add(f"{mod} -> {target}")
                elif not private_module_ok(origin, mod):
                    found.add(f"{mod} -> {target}")
                elif a.name.startswith("_") and not a.name.startswith("__") and origin != mod:
                    found.add(f"{mod} -> {target}")
    return found


def test_private_import_rule_reads_the_source(tmp_path):
    # an allowed private module of the same package, read from sdckit's source
    assert not any(e.startswith("sdckit.masking.neighbours -> sdckit.masking._neighbours_core")
                   for e in private_imports())
    # a hand-made package with one import of each kind; the refused ones listed by hand
    pkg = tmp_path / "sdckit"
    (pkg / "a").mkdir(parents=True)
    (pkg / "b").mkdir()
    for f in ("__init__.py", "a/__init__.py", "b/__init__.py", "_core.py"):
        (pkg / f).write_text("")
    (pkg / "a" / "_kern.py").write_text("def k(): pass\n")
    (pkg / "a" / "mod.py").write_text("def _helper(): pass\ndef public(): pass\n")
    (pkg / "a" / "user.py").write_text(
        "from . import _kern\n"                # a private module of its own package: allowed
        "from .mod import public\n"            # a public name: allowed
        "from .mod import _helper as helper\n"  # a private name of another module: refused
        "from .._core import x\n")             # a top-level private module (the core's): allowed
    (pkg / "b" / "user.py").write_text(
        "import sdckit.a._kern\n"              # another package's private module: refused
        "from ..a._kern import k\n"            # a name inside it: refused
        "def f():\n    from sdckit.a.mod import _helper\n")   # lazy, still refused
    assert private_imports(pkg) == {"sdckit.a.user -> sdckit.a.mod._helper", "sdckit.b.user -> sdckit.a._kern",
                                    "sdckit.b.user -> sdckit.a._kern.k", "sdckit.b.user -> sdckit.a.mod._helper"}


def test_no_private_name_crosses_a_module():
    found = sorted(private_imports())
    assert not found, "private names imported across modules (make them public or move them): " + "; ".join(found)


def test_packages_point_down_within_a_layer(graph):
    found = sorted(upward_within_layers(graph))
    assert not found, "imports running back up inside a layer (RANKS; move the code down): " + "; ".join(found)


def test_rank_finder_orders_the_packages():
    assert rank_of("sdckit.risk.linkage") < rank_of("sdckit.masking.noise")
    assert rank_of("sdckit.pram.apply") == METHODS_TOP_RANK
    assert rank_of("sdckit.report.release") < rank_of("sdckit.explore.sweep") < rank_of("sdckit.release")
    assert rank_of("sdckit.errors") is None and rank_of("sdckit.cli") is None
    g = {"sdckit.risk.a": {"sdckit.masking.b"}, "sdckit.masking.b": {"sdckit.risk.a"}}
    assert upward_within_layers(g) == {"sdckit.risk.a -> sdckit.masking.b"}
