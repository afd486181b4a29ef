"""launchcard: how exactly to launch an open-weight LLM, and why.

The public API is re-exported here; implementation lives in private modules
one concern each (``sources``, ``resolve``, ``memory``, ``emit``, ...).
Imports are lazy so the command line starts fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from launchcard._version import __version__

_LAZY = {
    "LaunchcardError": "launchcard.errors",
    "SourceError": "launchcard.errors",
    "RecipeError": "launchcard.errors",
    "ResolveError": "launchcard.errors",
    "InputError": "launchcard.errors",
    "LaunchCard": "launchcard.card",
    "Fact": "launchcard.card",
    "Evidence": "launchcard.card",
    "Conditions": "launchcard.card",
    "EngineEnv": "launchcard.card",
    "card_json_schema": "launchcard.card",
    "RecipeRepo": "launchcard.sources.vllm_recipes",
    "load_recipes": "launchcard.sources.vllm_recipes",
    "resolve": "launchcard.resolve",
    "Choice": "launchcard.resolve",
    "ResolvedPlan": "launchcard.resolve",
}

__all__ = ["__version__", *_LAZY]

if TYPE_CHECKING:  # pragma: no cover
    # `X as X`: explicit re-exports (what type checkers and linters see instead of __getattr__)
    from launchcard.card import Conditions as Conditions
    from launchcard.card import EngineEnv as EngineEnv
    from launchcard.card import Evidence as Evidence
    from launchcard.card import Fact as Fact
    from launchcard.card import LaunchCard as LaunchCard
    from launchcard.card import card_json_schema as card_json_schema
    from launchcard.errors import InputError as InputError
    from launchcard.errors import LaunchcardError as LaunchcardError
    from launchcard.errors import RecipeError as RecipeError
    from launchcard.errors import ResolveError as ResolveError
    from launchcard.errors import SourceError as SourceError
    from launchcard.resolve import Choice as Choice
    from launchcard.resolve import ResolvedPlan as ResolvedPlan
    from launchcard.resolve import resolve as resolve
    from launchcard.sources.vllm_recipes import RecipeRepo as RecipeRepo
    from launchcard.sources.vllm_recipes import load_recipes as load_recipes


# Any: the lazily imported attribute is one of several unrelated classes and functions;
# type checkers resolve these names through the TYPE_CHECKING imports above instead.
def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'launchcard' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
