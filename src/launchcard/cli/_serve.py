"""``launchcard serve``: the web catalog over the catalog (SQLite file or PostgreSQL)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from launchcard.cli._app import app
from launchcard.cli._options import CatalogOpt


@app.command()
def serve(
    catalog: CatalogOpt = None,
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
    workers: Annotated[int, typer.Option("--workers", min=1, max=64, help=(
        "Worker processes sharing the port, each reading the same catalog (each picks up an ingest's "
        "changes within a second)."))] = 1,
) -> None:
    """Serve the web catalog: model pages, command builder, performance and hardware pages, JSON twins."""
    import os

    import uvicorn

    from launchcard.errors import InputError
    from launchcard.store import Catalog
    from launchcard.web import create_app

    # a catalog that is not there is a mistyped path or an ingest not run: serving an empty catalog it would
    # create says neither (card, diff and drift refuse it alike)
    Catalog(catalog, create=False).close()
    for folder in benchmarks or ():
        if not folder.is_dir():
            raise InputError("benchmarks folder not found", where=f"--benchmarks {folder}",
                             fix="pass a folder holding SGLang cookbook *-benchmarks.jsx files")
    if corpus is not None and not corpus.is_dir():  # as card and ingest refuse it (it served without one)
        raise InputError("corpus folder not found", where=str(corpus), field="corpus",
                         fix="pass the folder holding vllm-recipes/, sglang-cookbook/, providers/, dynamo/, hf/")
    _check_listen(host, port)
    if recipes is None and corpus is None:  # a self-contained catalog: the documents its ingest read
        corpus = _stored_corpus(catalog)
    if recipes is None and corpus is not None and (corpus / "vllm-recipes").is_dir():
        recipes = corpus / "vllm-recipes"
    if workers > 1:  # each worker process builds its own application from the environment
        from launchcard.store import default_catalog_path

        target = catalog or default_catalog_path()
        os.environ["LAUNCHCARD_CATALOG"] = target if isinstance(target, str) else str(target.expanduser().resolve())
        os.environ.pop("LAUNCHCARD_CORPUS", None)
        os.environ["LAUNCHCARD_RECIPES"] = str(recipes.resolve()) if recipes is not None else ""
        os.environ["LAUNCHCARD_BENCHMARKS"] = os.pathsep.join(str(b.resolve()) for b in benchmarks or ())
        typer.echo(f"launchcard: serving with {workers} workers on http://{host}:{port}/", err=True)
        uvicorn.run("launchcard.web:app_from_env", factory=True, workers=workers, host=host, port=port,
                    log_level="warning")
        return
    application = create_app(catalog, recipes, benchmarks or ())
    application.state.warm()
    typer.echo(f"launchcard: serving {application.state.catalog.count()} model(s) on http://{host}:{port}/", err=True)
    uvicorn.run(application, host=host, port=port, log_level="warning")


def _stored_corpus(catalog: str | None) -> Path | None:
    """The corpus the catalog's newest ingest read, written out under the user cache (None: none kept)."""
    from platformdirs import user_cache_dir

    from launchcard.store import default_catalog_path, is_url, materialize_corpus

    target = catalog or default_catalog_path()
    if not is_url(target):
        target = Path(target).expanduser()
        if not target.is_file():
            return None
    return materialize_corpus(target, Path(user_cache_dir("launchcard")) / "catalog-corpus")


def _check_listen(host: str, port: int) -> None:
    """Bad input unless the server can listen on ``host:port``, asked before the catalog is loaded and warmed:
    uvicorn reports a taken port after start-up, as a log line and exit 3 (its STARTUP_FAILURE)."""
    import errno
    import socket

    from launchcard.errors import InputError

    family = socket.AF_INET6 if ":" in host else socket.AF_INET  # as uvicorn.Config.bind_socket picks it
    try:
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn sets it
            sock.bind((host, port))
    except OSError as exc:
        taken = exc.errno in (errno.EADDRINUSE, errno.EACCES)
        raise InputError(f"cannot listen on {host}:{port} ({exc.strerror or exc})",
                         where=f"--port {port}" if taken else f"--host {host}",
                         fix="choose a free port with --port (or stop the server holding it)" if taken else
                             "give an address of this machine, e.g. --host 127.0.0.1 or --host 0.0.0.0") from None
