"""Source adapters: one :class:`Adapter` subclass per source, all listed by :func:`adapters`.

Names are loaded on first use so ``import launchcard.sources.vllm_recipes`` (the
resolve path) does not pull pydantic in.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Adapter", "Extract", "ModelExtract", "ReadOptions", "SourceDoc", "adapters"]


def __getattr__(name: str) -> Any:  # PEP 562 lazy re-export; Any: the attribute is one of __all__
    if name == "adapters":
        from launchcard.sources._registry import adapters

        return adapters
    if name in __all__:
        from launchcard.sources import _base

        return getattr(_base, name)
    raise AttributeError(f"module 'launchcard.sources' has no attribute {name!r}")
