"""``launchcard sync``: bring the sources up to date from their upstreams into the cache (a corpus)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from launchcard.cli._app import app


def _pairs(values: list[str] | None, flag: str) -> dict[str, str]:
    from launchcard.cli._options import parse_pairs

    return parse_pairs(values, flag=flag, shape="SOURCE=VALUE", example="vllm-recipes=...")


@app.command()
def sync(
    cache: Annotated[Path | None, typer.Option("--cache", help="Cache folder (default: $LAUNCHCARD_CACHE, else the "
                                               "user cache dir); <cache>/corpus is a corpus for ingest/card.")] = None,
    config: Annotated[Path | None, typer.Option("--config", help="TOML file overriding upstreams per source "
                                                "([git.<name>] remote/revision/paths..., [hub] endpoint/models).")
                      ] = None,
    source: Annotated[list[str] | None, typer.Option("--source", help="Only this source (repeatable): vllm-recipes, "
                                                     "sglang-cookbook, dynamo, truss-examples, hf.")] = None,
    revision: Annotated[list[str] | None, typer.Option("--revision", help="SOURCE=REV: pin a git source to a "
                                                       "commit, tag or branch (repeatable).")] = None,
    remote: Annotated[list[str] | None, typer.Option("--remote", help="SOURCE=URL: another remote for a git "
                                                     "source (repeatable).")] = None,
    offline: Annotated[bool, typer.Option("--offline", help="Use the cache only (no network).")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bars.")] = False,
) -> None:
    """Fetch each source at its latest (or pinned) commit; a failed source keeps its previous snapshot."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

    from launchcard.cli._console import console as make_console
    from launchcard.sync import default_cache_dir, load_config
    from launchcard.sync import sync as run_sync

    cfg = load_config(config, remotes=_pairs(remote, "--remote"), revisions=_pairs(revision, "--revision"))
    where = cache.expanduser() if cache else default_cache_dir()
    err = make_console(stderr=True)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err, disable=quiet or not err.is_terminal, transient=True) as bar:
        tasks: dict[str, TaskID] = {}

        def tick(name: str, label: str, done: int, total: int) -> None:
            if name not in tasks:
                tasks[name] = bar.add_task(name, total=total)
            bar.update(tasks[name], description=f"{name}: {label[-40:]}", completed=done, total=total)

        outcomes = run_sync(where, cfg, sources=source, offline=offline, progress=tick)
    for o in outcomes:
        if o.ok:
            what = f"{o.commit[:12]} ({o.committed_at})" if o.commit else (o.note or "up to date")
            typer.echo(f"{o.source}: {what}{' (new)' if o.changed else ''}")
        for line in o.errors:
            typer.echo(f"launchcard: sync failed: {line}", err=True)
    failed = [o for o in outcomes if not o.ok]
    typer.echo(f"synced {len(outcomes) - len(failed)} of {len(outcomes)} source(s) into {where / 'corpus'}"
               + (f"; {len(failed)} failed, previous snapshot kept" if failed else ""))
    if failed:
        raise typer.Exit(1)
