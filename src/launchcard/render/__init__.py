"""Human-readable renderings of a launch card.

Re-exports are loaded on first use (PEP 562): ``facts`` renders a recipe's own facts and must not pay for the
card models (pydantic) that the Markdown card renderer imports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

_LAZY: dict[str, tuple[str, str]] = {
    "render_markdown": ("_markdown", "render_markdown"),  # imports the card models (pydantic)
    "recipe_facts_report": ("_recipe_facts", "recipe_facts_report"),
    "RecipeTexts": ("_usage", "RecipeTexts"),
    "env_calls_markdown": ("_usage", "env_calls_markdown"),
    "flag_table": ("_usage", "flag_table"),
    "recipe_texts": ("_usage", "recipe_texts"),
    "takes_images": ("_usage", "takes_images"),
}

__all__ = ["RecipeTexts", "env_calls_markdown", "flag_table", "recipe_facts_report", "recipe_texts",
           "render_markdown", "takes_images"]

if TYPE_CHECKING:  # pragma: no cover
    # `X as X`: explicit re-exports (what type checkers and linters see instead of __getattr__)
    from launchcard.render._markdown import render_markdown as render_markdown
    from launchcard.render._recipe_facts import recipe_facts_report as recipe_facts_report
    from launchcard.render._usage import RecipeTexts as RecipeTexts
    from launchcard.render._usage import env_calls_markdown as env_calls_markdown
    from launchcard.render._usage import flag_table as flag_table
    from launchcard.render._usage import recipe_texts as recipe_texts
    from launchcard.render._usage import takes_images as takes_images


def __getattr__(name: str) -> Any:  # PEP 562 lazy re-export; Any: the attribute is one of __all__
    entry = _LAZY.get(name)
    if entry is None:
        raise AttributeError(f"module 'launchcard.render' has no attribute {name!r}")
    import importlib

    module, attr = entry
    return getattr(importlib.import_module(f"launchcard.render.{module}"), attr)
