"""The import environment of a capture: stubbed modules and shimmed functions, and the record of them.

A release's parser is sometimes captured over a borrowed environment that lacks modules the parser never
uses (GPU kernels, optional integrations); ``install_stubs`` stands in for them and ``captured_by`` says
which ones the engine really imported.  Standard library only (runs inside the engine's environment).
"""

from __future__ import annotations

import json
import sys
import types
from typing import Any

_USED: set[str] = set()  # "stub:NAME" / "shim:SPEC" that the engine actually used during this capture


class _Stub(types.ModuleType):
    """A module that hands out a permissive placeholder for every attribute."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.__path__: list[str] = []

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return type(name, (), {"__init__": lambda self, *a, **k: None, "__call__": lambda self, *a, **k: None,
                                "__getattr__": lambda self, n: None})


def install_stubs() -> None:
    """Stub the modules named in ``LAUNCHCARD_CAPTURE_STUBS`` (comma-separated; a name covers its submodules).

    Only for imports the parser never uses (GPU kernels, optional integrations)
    that a borrowed environment lacks; ``captured_by`` records them.
    """
    import importlib.abc
    import importlib.machinery
    import os

    for shim in (s for s in os.environ.get("LAUNCHCARD_CAPTURE_SHIMS", "").split(",") if s):
        # "torch._C._cpu:_is_avx512_supported=false": a function the borrowed env's library lacks,
        # returning that JSON value (only set when missing)
        import importlib

        target, _, value = shim.partition("=")
        mod, _, attr = target.partition(":")
        owner = importlib.import_module(mod)
        if not hasattr(owner, attr):
            result = json.loads(value or "null")

            def shimmed(*a: Any, _r: Any = result, _s: str = shim, **k: Any) -> Any:
                _USED.add("shim:" + _s)
                return _r

            setattr(owner, attr, shimmed)
    names = tuple(s for s in os.environ.get("LAUNCHCARD_CAPTURE_STUBS", "").split(",") if s)
    if not names:
        return

    class Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
            if any(fullname == n or fullname.startswith(n + ".") for n in names):
                return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
            return None

        def create_module(self, spec: Any) -> Any:
            _USED.add("stub:" + next(n for n in names if spec.name == n or spec.name.startswith(n + ".")))
            return _Stub(spec.name)

        def exec_module(self, module: Any) -> None:
            return None

    sys.meta_path.insert(0, Finder())


def captured_by(module: Any) -> dict[str, Any]:
    """How this spec was obtained: the engine's real parser, in which environment, with which stubs.

    ``method`` is "real parser in full env" when the engine is installed in the
    running environment, else "real parser, release source over a borrowed env"
    (the release's Python files from its wheel, on PYTHONPATH over another
    environment's dependencies: ``LAUNCHCARD_CAPTURE_HOST`` names it), and
    "... with stubbed imports" when ``LAUNCHCARD_CAPTURE_STUBS`` stubbed modules.
    """
    import os

    where = os.path.realpath(os.path.dirname(getattr(module, "__file__", "") or ""))
    full = where.startswith(os.path.realpath(sys.prefix) + os.sep)
    # only the stubs the engine really imported and the shims it really called
    stubs = sorted(u[5:] for u in _USED if u.startswith("stub:"))
    out: dict[str, Any] = {
        "method": "real parser in full env" if full else "real parser, release source over a borrowed env"
    }
    if not full:
        out["host_env"] = os.environ.get("LAUNCHCARD_CAPTURE_HOST", "unknown")
    shims = sorted(u[5:] for u in _USED if u.startswith("shim:"))
    if stubs or shims:
        out["method"] += " with stubbed imports"
    if stubs:
        out["stubbed"] = stubs
    if shims:
        out["shimmed"] = shims
    return out
