"""The ``launchcard facts`` report of one recipe: declared facts as the recipe index page lists them.

The rows are :func:`launchcard.resolve.recipe_fact_rows`, the same ``page`` shows (the opt-in list under
its own name, and what ``resolve`` really selects under "Features selected by default").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from launchcard.sources.vllm_recipes import RecipeRepo

# Any in this module: recipe YAML values in, a JSON report out.


def recipe_facts_report(repo: RecipeRepo, model: str) -> dict[str, Any]:  # Any: a JSON document
    from launchcard.resolve import recipe_fact_rows
    from launchcard.sources import deployment_options, recipe_parameters

    rows = recipe_fact_rows(repo, model)
    doc = repo.recipe(model)
    return {
        "model": model,
        "source": {"path": doc.path, "revision": doc.revision, "sha256": doc.sha256, "url": doc.url()},
        "recipe_parameters": recipe_parameters(repo, model),
        "deployment_options": deployment_options(repo, model),
        "facts": rows,
    }
