"""The recipe's fact rows as ``launchcard facts`` and ``page`` (md, html, json, web) all show them.

One correction to the published recipe index pages: their "Features selected by default" row shows the
recipe's ``opt_in_features`` list — the features that are *not* selected unless asked for.  Here that list
keeps its own name (``seed_name`` naming the page's label), and "Features selected by default" is what
``resolve`` really selects, from the one default the resolver uses.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from launchcard.errors import LaunchcardError

if TYPE_CHECKING:
    from launchcard.sources.vllm_recipes import RecipeRepo

# Any in this module: recipe YAML values in, JSON rows out.

SEED_LABEL = "Features selected by default"  # the published index pages' label for opt_in_features
OPT_IN = "Opt-in features (off unless asked for)"
SELECTED = "Features selected by default"


def recipe_fact_rows(repo: RecipeRepo, model: str,
                     url: Callable[[int | None], str] | None = None) -> list[dict[str, Any]]:
    """The recipe's declared fact rows, the opt-in list under its own name and, after it, the features
    ``resolve`` really selects: the one list ``facts`` and ``page`` (md, html, json) both show.
    ``url`` builds a line's evidence URL (``page`` pins its revision); default: the document's own."""
    from launchcard.sources import fact_rows

    rows: list[dict[str, Any]] = []
    for row in fact_rows(repo, model, url) if url is not None else fact_rows(repo, model):
        if row["name"] == SEED_LABEL:
            row["name"] = OPT_IN
            row["note"] = (f"the recipe's opt_in_features list; published recipe index pages label it {SEED_LABEL!r}, "
                           f"but these features are off by default")
            row["seed_name"] = SEED_LABEL
            rows.append(row)
            rows.append(_selected(repo, model, row, url))
            continue
        rows.append(row)
    return rows


def _selected(repo: RecipeRepo, model: str, opt_in: dict[str, Any],
              url: Callable[[int | None], str] | None) -> dict[str, Any]:
    """The features ``resolve MODEL`` selects with no option given (its default hardware and variant)."""
    from launchcard.resolve._choice import Choice
    from launchcard.resolve._run import resolve

    doc = repo.recipe(model)
    try:
        plan = resolve(repo, Choice(model=model), provenance=False)
    except LaunchcardError as exc:
        return {"name": SELECTED, "value": None, "classification": "derived",
                "evidence_url": url(None) if url is not None else doc.url(),
                "source_document_sha256": doc.sha256, "note": f"resolve has no default here: {exc.one_line()}"}
    return {"name": SELECTED, "value": list(plan.features), "classification": "derived",
            "evidence_url": (url or doc.url)(doc.line("features")), "source_document_sha256": doc.sha256,
            "note": f"what `resolve` selects by default (variant {plan.variant} on {plan.hardware}): the recipe's "
                    f"features minus {OPT_IN.split(' (')[0].lower()} {opt_in['value']}"}
