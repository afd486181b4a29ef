"""Bring the sources up to date from their upstreams into a cache that is itself a corpus.

``sync`` clones or fetches each git upstream (vllm-project/recipes, the SGLang
cookbook in sgl-project/sglang, ai-dynamo/dynamo recipes, basetenlabs/truss-examples)
into ``<cache>/repos/<name>.git`` (bare, blobless partial clone), writes the files
launchcard reads at the chosen commit into an immutable ``<cache>/snapshots/<name>/<commit>/``
(with a manifest naming commit, commit time and upstream URLs), and only then
points ``<cache>/corpus/<folder>`` at it (an atomic symlink swap): a failed source
leaves its previous snapshot in place.  Hugging Face Hub ``config.json`` files
come through ``huggingface_hub`` the same way.  ``<cache>/corpus`` is read by
``ingest``/``card`` like any corpus; ``history`` walks a synced source's commits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from launchcard.sync._config import GitSource, HubSource, SyncConfig, default_cache_dir, load_config
from launchcard.sync._run import SourceOutcome, sync

# loaded on first use: the history walk is not on the resolve path
_LAZY = {"find_cache": "_history", "walk": "_history"}

__all__ = ["GitSource", "HubSource", "SourceOutcome", "SyncConfig", "default_cache_dir", "find_cache", "load_config",
           "sync", "walk"]

if TYPE_CHECKING:  # pragma: no cover
    from launchcard.sync._history import find_cache as find_cache
    from launchcard.sync._history import walk as walk


def __getattr__(name: str) -> Any:  # PEP 562 lazy re-export; Any: the attribute is one of _LAZY
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'launchcard.sync' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"launchcard.sync.{module}"), name)
