"""``launchcard diff MODEL``: what changed between two captures, fact by fact, with anchors."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from launchcard.cli._app import app
from launchcard.errors import CatalogError


@app.command()
def diff(
    model: Annotated[str, typer.Argument(help="HF repo id, e.g. zai-org/GLM-5.3-Flash.")],
    catalog: Annotated[Optional[Path], typer.Option("--catalog", help="SQLite catalog file.")] = None,
    old: Annotated[Optional[int], typer.Option("--from", help="Older capture id (default: second newest).")] = None,
    new: Annotated[Optional[int], typer.Option("--to", help="Newer capture id (default: newest).")] = None,
    list_: Annotated[bool, typer.Option("--list", help="List the captures of MODEL.")] = False,
) -> None:
    """Compare two captures of a model's card."""
    from launchcard.store import Catalog, diff_cards

    with Catalog(catalog) as cat:
        caps = cat.captures(model)
        if list_:
            for c in caps:
                typer.echo(f"{c.id}\t{c.captured_at}\t{c.card_sha256[:12]}\t{c.captured_by}")
            return
        if old is None or new is None:
            if len(caps) < 2 and (old is None or new is None):
                raise CatalogError(f"{model!r} has {len(caps)} capture(s); a diff needs two",
                                   where=f"--catalog {cat.path}", fix="ingest again after the sources change")
            new = new if new is not None else caps[-1].id
            old = old if old is not None else max(c.id for c in caps if c.id < new)
        a, b = cat.card(old), cat.card(new)
    changes = diff_cards(a, b)
    typer.echo(f"{model}: capture {old} ({a.captured_at}) -> {new} ({b.captured_at}): {len(changes)} change(s)")
    for ch in changes:
        typer.echo(ch.line())
