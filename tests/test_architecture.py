"""Architecture rule: no module reaches into another package's private names.

Each package (``launchcard/<pkg>/``) re-exports its public API from its ``__init__.py``;
a module of one package may import another package's public names only.  A top-level
module (``argv.py``, ``hardware.py``, ...) counts as its own package; top-level private
modules (``_version.py``) belong to the root package ``launchcard``.
"""

from __future__ import annotations

import ast
from pathlib import Path

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
    ("def f():\n    from launchcard.flags._dialect import merge_json\n", "argv.py", True),
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
