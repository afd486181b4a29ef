"""The one list of sources a corpus read asks, in the order their extracts reach merge.

Adding a source = one :class:`~launchcard.sources.Adapter` subclass and
one line here; :func:`launchcard.merge.build_corpus` knows no source by name.
The list lives in ``merge`` because the vLLM recipes' adapter resolves a command
per model (it needs ``resolve`` and ``check``, which sit above ``sources``).
Adapters keep per-read state (an opened checkout), so each read gets fresh ones.
"""

from __future__ import annotations

from launchcard.sources import Adapter


def adapters() -> list[Adapter]:
    """A fresh instance of every registered source adapter."""
    # imported here: each adapter module pulls its parser (YAML, markdown) only when a corpus is read
    from launchcard.merge._vllm_source import VllmRecipes
    from launchcard.sources.dynamo import DynamoRecipe
    from launchcard.sources.hf_hub import HfConfigFile, HfHub
    from launchcard.sources.sglang_cookbook import SGLangCookbook
    from launchcard.sources.truss import TrussPreset

    return [VllmRecipes(), SGLangCookbook(), TrussPreset(), DynamoRecipe(), HfConfigFile(), HfHub()]
