"""``launchcard facts``: the attributed facts of one recipe."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from launchcard.cli._app import app
from launchcard.cli._options import JsonOpt, RecipesOpt, RevisionOpt, open_recipes


@app.command()
def facts(
    model: Annotated[str, typer.Argument(help="Recipe id, e.g. zai-org/GLM-5.3-Flash.")],
    recipes: RecipesOpt = None,
    revision: RevisionOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Print what a recipe declares, each value with its source line and document hash."""
    from launchcard.render import recipe_facts_report
    from launchcard.yamlread import ParsedCache, cache_root

    repo = open_recipes(recipes, revision)
    root = cache_root()
    if root is not None:  # the recipe and the shared files it cites, unchanged, are not parsed again
        repo.parsed = ParsedCache(root)
    model = repo.canonical(model)  # the recipe's own id (ids match case-insensitively)
    payload = recipe_facts_report(repo, model)
    if as_json:
        typer.echo(json.dumps(payload, indent=2, ensure_ascii=False))
        return
    src = payload["source"]
    columns = ("fact", "value", "class", "line")
    rows = [(row["name"], json.dumps(row["value"], ensure_ascii=False), row["classification"],
             (row["evidence_url"] or "").rpartition("#")[2]) for row in payload["facts"]]
    tail = {"recipe_parameters": payload["recipe_parameters"], "deployment_options": payload["deployment_options"]}
    if not sys.stdout.isatty():  # plain tab-separated rows off a terminal (as resolve --explain): whole values,
        # greppable, and no rich import (the JSON is laid out as rich's print_json lays it out)
        typer.echo(f"{model}  {src['url']}  sha256 {src['sha256']}")
        typer.echo("\n".join("\t".join(cells) for cells in (columns, *rows)))
        typer.echo(json.dumps(tail, indent=2, ensure_ascii=False))
        return
    from rich.table import Table

    from launchcard.cli._console import console as make_console

    console = make_console()
    console.print(f"[bold]{model}[/]  {src['url']}  sha256 {src['sha256']}")
    table = Table(show_lines=False)
    for col in columns:
        table.add_column(col, overflow="fold")
    for cells in rows:
        table.add_row(*cells)
    console.print(table)
    console.print_json(json.dumps(tail))
