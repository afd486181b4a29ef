"""Human-readable renderings of a launch card."""

from launchcard.render._markdown import render_markdown
from launchcard.render._recipe_facts import recipe_facts_report
from launchcard.render._usage import RecipeTexts, env_calls_markdown, flag_table, recipe_texts, takes_images

__all__ = ["RecipeTexts", "env_calls_markdown", "flag_table", "recipe_facts_report", "recipe_texts",
           "render_markdown", "takes_images"]
