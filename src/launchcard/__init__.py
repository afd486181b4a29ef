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
    from launchcard.card import Conditions, EngineEnv, Evidence, Fact, LaunchCard, card_json_schema
    from launchcard.errors import InputError, LaunchcardError, RecipeError, ResolveError, SourceError
    from launchcard.resolve import Choice, ResolvedPlan, resolve
    from launchcard.sources.vllm_recipes import RecipeRepo, load_recipes


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'launchcard' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
