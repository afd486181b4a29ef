"""``launchcard schema``: the JSON Schema of a launch card."""

from __future__ import annotations

import json

import typer

from launchcard.cli._app import app


@app.command()
def schema() -> None:
    """Print the JSON Schema of a launch card."""
    from launchcard.card import card_json_schema

    typer.echo(json.dumps(card_json_schema(), indent=2))
