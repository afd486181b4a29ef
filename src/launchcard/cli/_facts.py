"""``launchcard facts``: the attributed facts of one recipe."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from launchcard.cli._app import app
from launchcard.cli._options import RecipesOpt, RevisionOpt, open_recipes


@app.command()
def facts(
    model: Annotated[str, typer.Argument(help="Recipe id, e.g. zai-org/GLM-5.3-Flash.")],
    recipes: RecipesOpt = None,
    revision: RevisionOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Print what a recipe declares, each value with its source line and document hash."""
    from launchcard.sources._recipe_facts import deployment_options, exact_url, recipe_facts, recipe_parameters

    repo = open_recipes(recipes, revision)
    rows = []
    for fact in recipe_facts(repo, model):
        ev = fact.evidence
        row = {"name": fact.name, "value": fact.value, "classification": fact.classification,
               "evidence_url": ev.url if ev else None, "source_document_sha256": ev.sha256 if ev else None}
        exact = exact_url(repo, model, fact)
        if exact:
            row["value_url"] = exact
        if fact.name == "Features selected by default":
            row["note"] = "the recipe's opt_in_features list, named as on published recipe index pages"
        rows.append(row)
    doc = repo.recipe(model)
    payload = {
        "model": model,
        "source": {"path": doc.path, "revision": doc.revision, "sha256": doc.sha256, "url": doc.url()},
        "recipe_parameters": recipe_parameters(repo, model),
        "deployment_options": deployment_options(repo, model),
        "facts": rows,
    }
    if as_json:
        typer.echo(json.dumps(payload, indent=2, ensure_ascii=False))
        return
    from rich.console import Console
    from rich.table import Table

    console = Console()
    console.print(f"[bold]{model}[/]  {doc.url()}  sha256 {doc.sha256}")
    table = Table(show_lines=False)
    for col in ("fact", "value", "class", "line"):
        table.add_column(col, overflow="fold")
    for row in rows:
        line = (row["evidence_url"] or "").rpartition("#")[2]
        table.add_row(row["name"], json.dumps(row["value"], ensure_ascii=False), row["classification"], line)
    console.print(table)
    console.print_json(json.dumps({"recipe_parameters": payload["recipe_parameters"],
                                   "deployment_options": payload["deployment_options"]}))
