"""Source adapters: one :class:`Adapter` subclass per source (listed by :func:`launchcard.merge.adapters`).

Also the typed recipe records (:class:`Recipe`, :class:`Strategy`, ...), the
JavaScript-semantics helpers the recipes builder relies on (:func:`truthy`, ...),
provenance lookups and recipe facts.

Names are loaded on first use so ``import launchcard.sources.vllm_recipes`` (the
resolve path) does not pull pydantic in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

# public name -> private module that defines it (and the name there, when it differs)
_LAZY: dict[str, tuple[str, str]] = {
    # adapters (pydantic)
    "Adapter": ("_base", "Adapter"),
    "Extract": ("_base", "Extract"),
    "ModelExtract": ("_base", "ModelExtract"),
    "ReadOptions": ("_base", "ReadOptions"),
    "SourceDoc": ("_base", "SourceDoc"),
    "parse_params_b": ("_base", "parse_params_b"),
    # typed recipe records (standard library only)
    "ArgList": ("_recipe_types", "ArgList"),
    "EnvMap": ("_recipe_types", "EnvMap"),
    "Feature": ("_recipe_types", "Feature"),
    "HwBlock": ("_recipe_types", "HwBlock"),
    "HwProfile": ("_recipe_types", "HwProfile"),
    "MinGpus": ("_recipe_types", "MinGpus"),
    "Mode": ("_recipe_types", "Mode"),
    "Omni": ("_recipe_types", "Omni"),
    "OmniTask": ("_recipe_types", "OmniTask"),
    "Recipe": ("_recipe_types", "Recipe"),
    "Strategy": ("_recipe_types", "Strategy"),
    "StrategyOverride": ("_recipe_types", "StrategyOverride"),
    "Token": ("_recipe_types", "Token"),
    "TpSpec": ("_recipe_types", "TpSpec"),
    "Variant": ("_recipe_types", "Variant"),
    # JavaScript semantics of the recipes builder (standard library only)
    "first_truthy": ("_js", "first_truthy"),
    "is_flag": ("_js", "is_flag"),
    "present": ("_js", "present"),
    "truthy": ("_js", "truthy"),
    # provenance of corpus files (standard library only)
    "declared_license": ("_provenance", "declared_license"),
    "provenance_lookup": ("_provenance", "lookup"),
    # what a recipe declares, as facts (pydantic)
    "default_variant_key": ("_recipe_facts", "default_variant_key"),
    "deployment_options": ("_recipe_facts", "deployment_options"),
    "exact_url": ("_recipe_facts", "exact_url"),
    "fact_rows": ("_recipe_facts", "fact_rows"),
    "recipe_facts": ("_recipe_facts", "recipe_facts"),
    "recipe_parameters": ("_recipe_facts", "recipe_parameters"),
}

__all__ = ["Adapter", "ArgList", "EnvMap", "Extract", "Feature", "HwBlock", "HwProfile", "MinGpus", "Mode",
           "ModelExtract", "Omni", "OmniTask", "ReadOptions", "Recipe", "SourceDoc", "Strategy", "StrategyOverride",
           "Token", "TpSpec", "Variant", "declared_license", "default_variant_key", "deployment_options",
           "exact_url", "fact_rows", "first_truthy", "is_flag", "parse_params_b", "present",
           "provenance_lookup", "recipe_facts", "recipe_parameters", "truthy"]

if TYPE_CHECKING:  # pragma: no cover
    # `X as X`: explicit re-exports (what type checkers and linters see instead of __getattr__)
    from launchcard.sources._base import Adapter as Adapter
    from launchcard.sources._base import Extract as Extract
    from launchcard.sources._base import ModelExtract as ModelExtract
    from launchcard.sources._base import ReadOptions as ReadOptions
    from launchcard.sources._base import SourceDoc as SourceDoc
    from launchcard.sources._base import parse_params_b as parse_params_b
    from launchcard.sources._js import first_truthy as first_truthy
    from launchcard.sources._js import is_flag as is_flag
    from launchcard.sources._js import present as present
    from launchcard.sources._js import truthy as truthy
    from launchcard.sources._provenance import declared_license as declared_license
    from launchcard.sources._provenance import lookup as provenance_lookup
    from launchcard.sources._recipe_facts import default_variant_key as default_variant_key
    from launchcard.sources._recipe_facts import deployment_options as deployment_options
    from launchcard.sources._recipe_facts import exact_url as exact_url
    from launchcard.sources._recipe_facts import fact_rows as fact_rows
    from launchcard.sources._recipe_facts import recipe_facts as recipe_facts
    from launchcard.sources._recipe_facts import recipe_parameters as recipe_parameters
    from launchcard.sources._recipe_types import ArgList as ArgList
    from launchcard.sources._recipe_types import EnvMap as EnvMap
    from launchcard.sources._recipe_types import Feature as Feature
    from launchcard.sources._recipe_types import HwBlock as HwBlock
    from launchcard.sources._recipe_types import HwProfile as HwProfile
    from launchcard.sources._recipe_types import MinGpus as MinGpus
    from launchcard.sources._recipe_types import Mode as Mode
    from launchcard.sources._recipe_types import Omni as Omni
    from launchcard.sources._recipe_types import OmniTask as OmniTask
    from launchcard.sources._recipe_types import Recipe as Recipe
    from launchcard.sources._recipe_types import Strategy as Strategy
    from launchcard.sources._recipe_types import StrategyOverride as StrategyOverride
    from launchcard.sources._recipe_types import Token as Token
    from launchcard.sources._recipe_types import TpSpec as TpSpec
    from launchcard.sources._recipe_types import Variant as Variant


def __getattr__(name: str) -> Any:  # PEP 562 lazy re-export; Any: the attribute is one of __all__
    entry = _LAZY.get(name)
    if entry is None:
        raise AttributeError(f"module 'launchcard.sources' has no attribute {name!r}")
    import importlib

    module, attr = entry
    return getattr(importlib.import_module(f"launchcard.sources.{module}"), attr)
