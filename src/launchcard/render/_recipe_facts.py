"""The ``launchcard facts`` report of one recipe: declared facts as the recipe index page lists them.

One correction to the page: its "Features selected by default" row shows the
recipe's ``opt_in_features`` list — the features that are *not* selected unless
asked for.  Here that list keeps its own name (with a note naming the page's
label), and "Features selected by default" is what ``resolve`` really selects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from launchcard.errors import LaunchcardError

if TYPE_CHECKING:
    from launchcard.sources.vllm_recipes import RecipeRepo

# Any in this module: recipe YAML values in, a JSON report out.

SEED_LABEL = "Features selected by default"  # the published index pages' label for opt_in_features
OPT_IN = "Opt-in features (off unless asked for)"
SELECTED = "Features selected by default"


def recipe_facts_report(repo: RecipeRepo, model: str) -> dict[str, Any]:  # Any: a JSON document
    from launchcard.sources import deployment_options, fact_rows, recipe_parameters

    rows: list[dict[str, Any]] = []
    for row in fact_rows(repo, model):
        if row["name"] == SEED_LABEL:
            row["name"] = OPT_IN
            row["note"] = (f"the recipe's opt_in_features list; published recipe index pages label it {SEED_LABEL!r}, "
                           f"but these features are off by default")
            row["seed_name"] = SEED_LABEL
            rows.append(row)
            rows.append(_selected(repo, model, row))
            continue
        rows.append(row)
    doc = repo.recipe(model)
    return {
        "model": model,
        "source": {"path": doc.path, "revision": doc.revision, "sha256": doc.sha256, "url": doc.url()},
        "recipe_parameters": recipe_parameters(repo, model),
        "deployment_options": deployment_options(repo, model),
        "facts": rows,
    }


def _selected(repo: RecipeRepo, model: str, opt_in: dict[str, Any]) -> dict[str, Any]:
    """The features ``resolve MODEL`` selects with no option given (its default hardware and variant)."""
    from launchcard.resolve import Choice, resolve

    doc = repo.recipe(model)
    try:
        plan = resolve(repo, Choice(model=model), provenance=False)
    except LaunchcardError as exc:
        return {"name": SELECTED, "value": None, "classification": "derived", "evidence_url": doc.url(),
                "source_document_sha256": doc.sha256, "note": f"resolve has no default here: {exc.one_line()}"}
    return {"name": SELECTED, "value": list(plan.features), "classification": "derived",
            "evidence_url": doc.url(doc.line("features")), "source_document_sha256": doc.sha256,
            "note": f"what `resolve` selects by default (variant {plan.variant} on {plan.hardware}): the recipe's "
                    f"features minus {OPT_IN.split(' (')[0].lower()} {opt_in['value']}"}
