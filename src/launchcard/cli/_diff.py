"""``launchcard diff MODEL``: what changed between two captures, fact by fact and flag by flag, with anchors."""

from __future__ import annotations

from typing import Annotated

import typer

from launchcard.cli._app import app
from launchcard.cli._options import CatalogOpt


@app.command()
def diff(
    model: Annotated[str, typer.Argument(help="HF repo id, e.g. zai-org/GLM-5.3-Flash.")],
    catalog: CatalogOpt = None,
    old: Annotated[int | None, typer.Option("--from", help="Older capture id of MODEL (default: the one "
                                               "before --to).")] = None,
    new: Annotated[int | None, typer.Option("--to", help="Newer capture id of MODEL (default: newest).")] = None,
    list_: Annotated[bool, typer.Option("--list", help="List the captures of MODEL.")] = False,
) -> None:
    """Compare two captures of a model's card."""
    from launchcard.store import Capture, Catalog, diff_captures

    with Catalog(catalog, create=False) as cat:
        if list_:
            caps = cat.captures(model)
            if not caps:
                cat.latest(model)  # raises: no card for MODEL, with the closest ids
            # labelled columns; "card sha256" is the first 12 hex digits of the card's content hash
            typer.echo("capture\tcaptured at\tcard sha256\tsources\tcommit\tcommitted at")
            for c in caps:
                commit = f"{c.commit_id[:12]}\t{c.committed_at}" if c.commit_id else "-\t-"
                typer.echo(f"{c.id}\t{c.captured_at}\t{c.card_sha256[:12]}\t{c.captured_by}\t{commit}")
            return
        result = diff_captures(cat, model, old, new)
    def at(c: Capture) -> str:
        return f"{c.captured_at}, commit {c.commit_id[:12]} of {c.committed_at}" if c.commit_id else c.captured_at

    typer.echo(f"{model}: capture {result.old.id} ({at(result.old)}) -> {result.new.id} "
               f"({at(result.new)}): {len(result.changes)} change(s)")
    for ch in result.changes:
        typer.echo(ch.line())
