"""``launchcard serve``: the web catalog over the SQLite catalog."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from launchcard.cli._app import app


@app.command()
def serve(
    catalog: Annotated[
        Path | None, typer.Option("--catalog", help="SQLite catalog file (default: user data dir).")
    ] = None,
    corpus: Annotated[
        Path | None,
        typer.Option(
            "--corpus", envvar="LAUNCHCARD_CORPUS", help="Corpus folder; its vllm-recipes/ feeds pages and the builder."
        ),
    ] = None,
    recipes: Annotated[
        Path | None,
        typer.Option(
            "--recipes", envvar="LAUNCHCARD_RECIPES", help="A vllm-project/recipes checkout (instead of --corpus)."
        ),
    ] = None,
    benchmarks: Annotated[
        list[Path] | None,
        typer.Option(
            "--benchmarks",
            help="Folder of SGLang cookbook *-benchmarks.jsx files (repeatable), e.g. a synced sglang "
            "docs/src/snippets/configs.",
        ),
    ] = None,
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="Port to listen on.")] = 8080,
) -> None:
    """Serve the web catalog: model pages, command builder, performance and hardware pages, JSON twins."""
    import uvicorn

    from launchcard.web import create_app

    if recipes is None and corpus is not None and (corpus / "vllm-recipes").is_dir():
        recipes = corpus / "vllm-recipes"
    application = create_app(catalog, recipes, benchmarks or ())
    typer.echo(f"launchcard: serving {len(application.state.catalog.rows)} model(s) on http://{host}:{port}/", err=True)
    uvicorn.run(application, host=host, port=port, log_level="warning")
