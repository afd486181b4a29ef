"""``launchcard ingest --corpus DIR``: capture every model's card into the catalog, atomically."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from launchcard.cli._app import app
from launchcard.cli._options import CatalogOpt, RevisionOpt, WebUrlOpt


@app.command()
def ingest(
    corpus: Annotated[Path, typer.Option("--corpus", help="Corpus folder holding vllm-recipes/, sglang-cookbook/, "
                                         "providers/, dynamo/, hf/.")],
    catalog: CatalogOpt = None,
    hub: Annotated[bool, typer.Option("--hub", help="Also capture the Hugging Face Hub (HF_ENDPOINT).")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bar.")] = False,
    revision: RevisionOpt = None,
    web_url: WebUrlOpt = None,
) -> None:
    """Build every model's card from all sources and store them in one transaction."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from launchcard.errors import InputError
    from launchcard.merge import build_corpus
    from launchcard.store import Catalog

    err = Console(stderr=True)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err, disable=quiet, transient=True) as bar:
        task = bar.add_task("reading", total=None)

        def tick(label: str, done: int, total: int) -> None:
            bar.update(task, description=f"reading {label[-48:]}", completed=done, total=total)

        result = build_corpus(corpus, hub=hub, progress=tick, revision=revision, web_url=web_url)
    for line in result.problems:
        err.print(f"[yellow]skipped[/]: {line}", markup=True, highlight=False, soft_wrap=True)
    if not result.cards:  # nothing to store is a failed ingest, never "stored 0 card(s)"
        raise InputError(f"no card could be built ({len(result.problems)} document(s) skipped)", where=str(corpus),
                         field="corpus", fix="check the corpus layout and the skipped documents above")
    with Catalog(catalog) as cat:
        ids = cat.add(result.cards.values())
        path = cat.path
    typer.echo(f"stored {len(ids)} card(s) from {result.documents} document(s) in {path}; "
               f"skipped {len(result.problems)} bad document(s), {len(result.warnings)} non-command block(s)")
