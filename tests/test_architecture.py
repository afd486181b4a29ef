"""Architecture rules.

1. No module reaches into another package's private names.  Each package
   (``launchcard/<pkg>/``) re-exports its public API from its ``__init__.py``; a module
   of one package may import another package's public names only.  A top-level module
   (``argv.py``, ``hardware.py``, ...) counts as its own package; top-level private
   modules (``_version.py``) belong to the root package ``launchcard``.
2. Imports run one way: the packages lie in the order of :data:`LAYERS` (data and
   vocabulary at the bottom, renderers and the CLI at the top), no module imports one
   of a higher layer, and there is no import circle between packages or between
   modules.  Imports are resolved statically from the source, wherever they are
   written: module level, inside functions (lazy), under ``if TYPE_CHECKING:``, and
   the PEP 562 ``_LAZY`` tables of package ``__init__`` files.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "launchcard"
ROOT = "launchcard"  # owner of launchcard/__init__.py, __main__.py and top-level private modules


def _private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def _owner_of_file(path: Path, src: Path) -> str:
    rel = path.relative_to(src)
    if len(rel.parts) > 1:
        return rel.parts[0]
    stem = rel.stem
    return ROOT if _private(stem) or stem in ("__init__", "__main__") else stem


def _owner_of_module(parts: list[str]) -> str:
    """``parts``: the dotted name after ``launchcard``; the package (or top-level module) that owns it."""
    if not parts:
        return ROOT
    return ROOT if _private(parts[0]) else parts[0]


def _module_of_file(path: Path, src: Path) -> list[str]:
    rel = path.relative_to(src).with_suffix("")
    parts = list(rel.parts)
    return parts[:-1] if parts[-1] == "__init__" else parts


def _violations_in(path: Path, src: Path = SRC) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    owner = _owner_of_file(path, src)
    here = _module_of_file(path, src)
    is_package = path.name == "__init__.py"
    found: list[str] = []

    def check(parts: list[str], line: int, shown: str) -> None:
        target = _owner_of_module(parts)
        if target == owner:
            return
        # private if any name below the owning package (or the top-level module itself) is private
        if any(_private(p) for p in parts):
            found.append(f"{path.relative_to(src.parent)}:{line}: {shown}")

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                dotted = alias.name.split(".")
                if dotted[0] == ROOT:
                    check(dotted[1:], node.lineno, f"import {alias.name}")
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative import: resolve against this module's package
                base = here if is_package else here[:-1]
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                dotted = [ROOT, *base, *(node.module.split(".") if node.module else [])]
            else:
                if node.module is None:
                    continue
                dotted = node.module.split(".")
            if dotted[0] != ROOT:
                continue
            for alias in node.names:
                # `from launchcard.pkg import _x` reaches a private module or name just the same
                check([*dotted[1:], alias.name], node.lineno,
                      f"from {'.'.join(dotted)} import {alias.name}")
    return found


def _modules() -> list[Path]:
    return sorted(SRC.rglob("*.py"))


def test_the_source_tree_is_found() -> None:
    names = {p.relative_to(SRC).as_posix() for p in _modules()}
    assert {"__init__.py", "argv.py", "resolve/__init__.py", "emit/_common.py"} <= names


def test_no_module_imports_another_packages_private_names() -> None:
    violations = [v for path in _modules() for v in _violations_in(path)]
    assert not violations, ("imports of another package's private modules or names "
                            "(re-export the name from that package's __init__.py instead):\n"
                            + "\n".join(violations))


@pytest.mark.parametrize(("source", "file", "bad"), [
    ("from launchcard.resolve._plan import ResolvedPlan\n", "emit/_x.py", True),
    ("import launchcard.sources._js\n", "argv.py", True),
    ("from launchcard.sync import _git\n", "cli/_x.py", True),
    ("from launchcard.argv import _private_helper\n", "check/_x.py", True),
    ("from launchcard._version import __version__\n", "emit/_x.py", True),
    ("def f():\n    from launchcard.flagspec._dialect import merge_json\n", "argv.py", True),
    ("from launchcard.resolve._plan import ResolvedPlan\n", "resolve/_x.py", False),
    ("from launchcard.sync import _git\n", "sync/_x.py", False),
    ("from launchcard.resolve import ResolvedPlan\n", "emit/_x.py", False),
    ("from launchcard.sources.vllm_recipes import RecipeRepo\n", "resolve/_x.py", False),
    ("from launchcard._version import __version__\n", "__init__.py", False),
    ("from launchcard import __version__\n", "emit/_x.py", False),
    ("from ._plan import Command\n", "resolve/_x.py", False),
    ("from ..sources._js import truthy\n", "resolve/_x.py", True),
])
def test_the_rule_itself(tmp_path: Path, source: str, file: str, bad: bool) -> None:
    """The checker flags what the rule forbids and nothing else (on a throwaway tree)."""
    src = tmp_path / "launchcard"
    path = src / file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source, encoding="utf-8")
    assert bool(_violations_in(path, src)) is bad, _violations_in(path, src)


def _packages() -> list[str]:
    return sorted(p.parent.name for p in SRC.glob("*/__init__.py"))


@pytest.mark.parametrize("package", _packages())
def test_every_public_name_resolves(package: str) -> None:
    """Each name in a package's ``__all__`` is there, including the lazily loaded (PEP 562) ones."""
    import importlib

    module = importlib.import_module(f"launchcard.{package}")
    missing = [name for name in getattr(module, "__all__", ()) if not hasattr(module, name)]
    assert not missing, f"launchcard.{package}.__all__ names that do not resolve: {missing}"


# --- rule 2: one direction of dependence -----------------------------------------------------------

# Bottom to top.  A unit is a package (``resolve``) or a top-level module (``argv``); units on
# one line are independent of each other (no imports between them either way).  ``launchcard``
# is the root package's facade (``__init__``/``__main__``): it may import everything; what other
# modules import from it (``__version__``) is followed to the module that defines it.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("_version", "errors", "prompts", "atomicfile", "datadir", "idmemo", "gitref"),
    ("snapshot", "yamlread", "jsonread", "flagspec", "facts"),
    ("card", "argv", "hardware", "limits"),
    ("flags", "sources"),
    ("sync", "resolve", "memory", "explain", "clients"),
    ("check", "verify"),
    ("predict",),
    ("merge", "render", "page", "store"),
    ("emit", "live", "bench"),
    ("plansearch",),
    ("web",),
    ("cli",),
    ("launchcard",),
)


class Edge(NamedTuple):
    source: str  # importing module, dotted
    target: str  # imported module, dotted
    where: str  # path:line of the import


def _dotted_of_file(path: Path, src: Path) -> str:
    return ".".join([src.name, *_module_of_file(path, src)])


def _module_files(src: Path) -> dict[str, Path]:
    return {_dotted_of_file(p, src): p for p in sorted(src.rglob("*.py"))}


def _lazy_table(tree: ast.Module) -> list[tuple[str, int]]:
    """Module names in a PEP 562 ``_LAZY = {name: module | (module, attr)}`` table (as written)."""
    out: list[tuple[str, int]] = []
    for node in tree.body:
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if not isinstance(value, ast.Dict) or not any(isinstance(t, ast.Name) and t.id == "_LAZY" for t in targets):
            continue
        for v in value.values:
            first = v.elts[0] if isinstance(v, ast.Tuple) and v.elts else v
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                out.append((first.value, v.lineno))
    return out


def _edges(src: Path = SRC) -> list[Edge]:
    """Every import of a launchcard module by a launchcard module, resolved to the module file it loads."""
    files = _module_files(src)
    root = src.name
    trees = {m: ast.parse(p.read_text(encoding="utf-8"), filename=str(p)) for m, p in files.items()}

    def existing(dotted: str) -> str:
        while dotted not in files and "." in dotted:
            dotted = dotted.rsplit(".", 1)[0]
        return dotted

    # where the root package gets each name it re-exports (`from launchcard import __version__`)
    root_names: dict[str, str] = {}
    for node in ast.walk(trees.get(root, ast.Module(body=[], type_ignores=[]))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(root):
            for alias in node.names:
                root_names[alias.asname or alias.name] = existing(node.module)

    out: list[Edge] = []
    for module, tree in trees.items():
        path = files[module]
        is_package = path.name == "__init__.py"
        package = module if is_package else module.rsplit(".", 1)[0]
        rel = path.relative_to(src.parent).as_posix()

        def add(target: str, line: int, module: str = module, rel: str = rel) -> None:
            target = existing(target)
            if target != module and target.split(".")[0] == root:
                out.append(Edge(module, target, f"{rel}:{line}"))

        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    add(alias.name, node.lineno)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[: len(base) - (node.level - 1)]
                    dotted = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    dotted = node.module or ""
                if dotted.split(".")[0] != root:
                    continue
                for alias in node.names:
                    name = f"{dotted}.{alias.name}"
                    if name in files:  # `from pkg import submodule`
                        add(name, node.lineno)
                    elif dotted == root:  # the root facade: follow the name to its defining module
                        add(root_names.get(alias.name, root), node.lineno)
                    else:
                        add(dotted, node.lineno)
        if is_package:
            for target, line in _lazy_table(tree):
                add(target if target.startswith(root + ".") else f"{module}.{target}", line)
    return out


def _unit(module: str) -> str:
    """``launchcard.resolve._run`` -> ``resolve``; ``launchcard.argv`` -> ``argv``; the root -> ``launchcard``."""
    parts = module.split(".")
    if len(parts) == 1 or parts[1] == "__main__":
        return parts[0]
    return parts[1]


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One circle of ``graph`` (its nodes in order, the first repeated at the end), or None."""
    colour: dict[str, int] = {}  # 1 on the current path, 2 done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        colour[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if colour.get(nxt) == 1:
                return [*stack[stack.index(nxt):], nxt]
            if nxt not in colour and (found := visit(nxt)) is not None:
                return found
        stack.pop()
        colour[node] = 2
        return None

    for node in sorted(graph):
        if node not in colour and (found := visit(node)) is not None:
            return found
    return None


def _explain(circle: list[str], edges: list[Edge], key: Callable[[str], str]) -> str:
    lines = []
    for a, b in itertools.pairwise(circle):
        where = sorted({e.where for e in edges if key(e.source) == a and key(e.target) == b})
        lines.append(f"  {a} -> {b}   ({', '.join(where[:3])}{' ...' if len(where) > 3 else ''})")
    return "\n".join(lines)


def _unit_graph(edges: list[Edge]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for e in edges:
        if _unit(e.source) != _unit(e.target):
            graph.setdefault(_unit(e.source), set()).add(_unit(e.target))
    return graph


def _module_graph(edges: list[Edge]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for e in edges:
        graph.setdefault(e.source, set()).add(e.target)
    return graph


def _layer_violations(edges: list[Edge]) -> list[str]:
    rank = {u: i for i, layer in enumerate(LAYERS) for u in layer}
    bad: list[str] = []
    for e in edges:
        a, b = _unit(e.source), _unit(e.target)
        if a == b:
            continue
        if a not in rank or b not in rank:
            bad.append(f"{e.where}: {a if a not in rank else b} is in no layer (add it to LAYERS)")
        elif rank[b] >= rank[a]:
            bad.append(f"{e.where}: {a} (layer {rank[a]}) imports {b} (layer {rank[b]}): "
                       f"{e.source} -> {e.target}")
    return list(dict.fromkeys(bad))


@pytest.fixture(scope="module")
def edges() -> list[Edge]:
    return _edges()


def test_lazy_imports_are_seen(edges: list[Edge]) -> None:
    """Function-level, TYPE_CHECKING and _LAZY-table imports are all edges (spot checks on the real tree)."""
    pairs = {(e.source, e.target) for e in edges}
    assert ("launchcard.sources._base", "launchcard.snapshot") in pairs  # inside a method
    assert ("launchcard.sync", "launchcard.sync._history") in pairs  # _LAZY table
    assert ("launchcard.emit._header", "launchcard._version") in pairs  # `from launchcard import __version__`


def test_packages_lie_in_one_order(edges: list[Edge]) -> None:
    bad = _layer_violations(edges)
    assert not bad, "imports against the layer order (tests/test_architecture.py LAYERS):\n" + "\n".join(bad)


def test_no_import_circle_between_packages(edges: list[Edge]) -> None:
    circle = _cycle(_unit_graph(edges))
    assert circle is None, "import circle between packages:\n" + _explain(circle, edges, _unit)


def test_no_import_circle_between_modules(edges: list[Edge]) -> None:
    circle = _cycle(_module_graph(edges))
    assert circle is None, "import circle between modules:\n" + _explain(circle, edges, lambda m: m)


def test_every_unit_has_a_layer() -> None:
    units = {_unit(_dotted_of_file(p, SRC)) for p in _modules()}
    listed = [u for layer in LAYERS for u in layer]
    assert len(listed) == len(set(listed)), "a unit listed twice in LAYERS"
    assert units == set(listed), f"not in LAYERS: {sorted(units - set(listed))}; gone: {sorted(set(listed) - units)}"


_CIRCLES = {
    # the three ties issue 21 names, as they were written
    "lazy": {"sources/_x.py": "def f():\n    from launchcard.merge import recipe_extract\n",
             "merge/_y.py": "from launchcard.sources import Extract\n"},
    "top-level": {"hardware.py": "def f():\n    from launchcard.sources import load_yaml\n",
                  "sources/_base.py": "from launchcard.hardware import named_in\n"},
    "type-only": {"argv.py": "import typing\nif typing.TYPE_CHECKING:\n    from launchcard.flags import FlagSpec\n",
                  "flags/_check.py": "def g():\n    from launchcard.argv import split_env\n"},
    "lazy-table": {"sync/__init__.py": "_LAZY = {'walk': '_history'}\n",
                   "sync/_history.py": "from launchcard.sync import GitSource\n"},
    "relative": {"resolve/__init__.py": "from ._run import resolve\nX = 1\n",
                 "resolve/_run.py": "def f():\n    from . import X\n"},
}


@pytest.mark.parametrize("case", sorted(_CIRCLES))
def test_a_circle_is_found(tmp_path: Path, case: str) -> None:
    """The circle checks see circles however the imports are written (on a throwaway tree)."""
    src = tmp_path / "launchcard"
    for file, text in {"__init__.py": "", **_CIRCLES[case]}.items():
        path = src / file
        path.parent.mkdir(parents=True, exist_ok=True)
        for parent in path.relative_to(src).parents:
            (src / parent / "__init__.py").touch()
        path.write_text(text, encoding="utf-8")
    edges = _edges(src)
    assert _cycle(_module_graph(edges)) or _cycle(_unit_graph(edges)), edges


def test_no_circle_in_a_straight_tree(tmp_path: Path) -> None:
    src = tmp_path / "launchcard"
    for file, text in {"__init__.py": "from launchcard._version import __version__\n",
                       "_version.py": "__version__ = '1'\n", "errors.py": "",
                       "emit/__init__.py": "from launchcard.emit._x import f\n",
                       "emit/_x.py": "from launchcard import __version__\nfrom launchcard.errors import E\n"}.items():
        path = src / file
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    edges = _edges(src)
    assert _cycle(_module_graph(edges)) is None and _cycle(_unit_graph(edges)) is None, edges
    assert ("launchcard.emit._x", "launchcard._version") in {(e.source, e.target) for e in edges}


def test_the_readme_states_the_same_layers() -> None:
    """The README's layer table is LAYERS (the order is documented where people read it, and stays true)."""
    import re

    readme = (SRC.parents[1] / "README.md").read_text(encoding="utf-8")
    block = readme.split("| layer | packages and top-level modules |", 1)[1].split("\n\n", 1)[0]
    rows = re.findall(r"^\| (\d+) \| (.+) \|$", block, flags=re.M)
    assert [tuple(re.findall(r"`([\w]+)`", names)) for _, names in rows] == list(LAYERS)
