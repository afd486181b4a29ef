"""``launchcard ingest --corpus DIR``: capture every model's card into the catalog, atomically.

Only models whose documents changed since their newest capture get a new one;
the others are marked checked.  ``--since``/``--revisions`` walk a synced git
source's history and store one capture per commit that changed a model's document.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from launchcard.cli._app import app
from launchcard.cli._options import CatalogOpt, RevisionOpt, WebUrlOpt, checked_revision

if TYPE_CHECKING:
    from rich.console import Console

    from launchcard.merge import CorpusResult


def _report(err: Console, result: CorpusResult) -> None:
    for line in result.problems:
        err.print(f"[yellow]skipped[/]: {line}", markup=True, highlight=False, soft_wrap=True)


@app.command()
def ingest(
    corpus: Annotated[Path | None, typer.Option("--corpus", help="Corpus folder holding vllm-recipes/, "
                                                "sglang-cookbook/, providers/, dynamo/, hf/ (or a sync cache's "
                                                "corpus/).")] = None,
    cache: Annotated[Path | None, typer.Option("--cache", help="A `launchcard sync` cache: read its corpus/ "
                                               "(default when --corpus is not given).")] = None,
    catalog: CatalogOpt = None,
    hub: Annotated[bool, typer.Option("--hub", help="Also capture the Hugging Face Hub (HF_ENDPOINT).")] = False,
    since: Annotated[str | None, typer.Option("--since", help="Walk the synced source's commits since DATE "
                                              "(ISO: 2026-09-01 = its midnight UTC, or 2026-09-01T18:00:00Z).")] = None,
    revisions: Annotated[str | None, typer.Option("--revisions", help="Walk the synced source's commits A..B "
                                                  "(A itself first; A.. = up to the synced commit).")] = None,
    source: Annotated[str, typer.Option("--source", help="Synced git source whose history --since/--revisions "
                                        "walk.")] = "vllm-recipes",
    force: Annotated[bool, typer.Option("--force", help="Store every card, even when its documents did not "
                                        "change.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bar.")] = False,
    revision: RevisionOpt = None,
    web_url: WebUrlOpt = None,
    cards: Annotated[str | None, typer.Option("--cards", help="Stream launch cards built elsewhere into the catalog: "
                                              "a JSON Lines file (one card a line), a folder of *.json/*.jsonl, or "
                                              "- for standard input; committed --batch cards at a time, resumable."
                                              )] = None,
    batch: Annotated[int, typer.Option("--batch", min=1, help="Cards per transaction with --cards.")] = 1000,
    workers: Annotated[int | None, typer.Option("--workers", min=0, help="Processes that validate and prepare "
                                                "--cards (default: one per core; 0 = none).")] = None,
) -> None:
    """Build every model's card from all sources and store the changed ones in one transaction."""
    _check_options(cards, batch=batch, workers=workers, building=(
        ("--corpus", corpus), ("--cache", cache), ("--hub", hub), ("--since", since), ("--revisions", revisions),
        ("--revision", revision)), source=source, history=bool(since or revisions))
    if cards is not None:
        _stream(cards, catalog, batch=batch, force=force, quiet=quiet, workers=workers)
        return
    from launchcard.errors import InputError
    from launchcard.merge import build_corpus
    from launchcard.store import Catalog

    if corpus is None:
        from launchcard.sync import default_cache_dir

        corpus = (cache.expanduser() if cache else default_cache_dir()) / "corpus"
    revision = checked_revision(corpus / "vllm-recipes", revision)
    _check_catalog(catalog)  # before the corpus is read: a bad path must not cost the build
    if quiet and not (since or revisions):  # no bar, plain lines: rich stays unimported (an unchanged ingest is quick)
        result = build_corpus(corpus, hub=hub, revision=revision, web_url=web_url)
        for line in result.problems:
            typer.echo(f"skipped: {line}", err=True)
    else:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        from launchcard.cli._console import console as make_console

        err = make_console(stderr=True)
        if since or revisions:
            _history(corpus, cache, catalog, source=source, since=since, revisions=revisions, hub=hub, force=force,
                     quiet=quiet, err=err)
            return
        # off a terminal the bar draws nothing, and a transient bar's closing newline would stand before the
        # one-line error of a corpus that cannot be read
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=err, transient=True, disable=not err.is_terminal) as bar:
            task = bar.add_task("reading", total=None)

            def tick(label: str, done: int, total: int) -> None:
                bar.update(task, description=f"reading {label[-48:]}", completed=done, total=total)

            result = build_corpus(corpus, hub=hub, progress=tick, revision=revision, web_url=web_url)
        _report(err, result)
    if not result.cards:  # nothing to store is a failed ingest, never "stored 0 card(s)"
        raise InputError(f"no card could be built ({len(result.problems)} document(s) skipped)", where=str(corpus),
                         field="corpus", fix="check the corpus layout and the skipped documents above")
    from launchcard.store import corpus_documents

    with Catalog(catalog) as cat:  # the documents read go in too: the catalog then serves its pages alone
        done = cat.ingest(result.cards.values(), force=force, documents=corpus_documents(corpus))
        where = cat.where
    typer.echo(f"stored {len(done.stored)} card(s), {len(done.unchanged)} unchanged (checked {done.checked_at}) "
               f"from {result.documents} document(s) in {where}; "
               f"skipped {len(result.problems)} bad document(s), {len(result.warnings)} non-command block(s)")


def _check_options(cards: str | None, *, batch: int, workers: int | None, building: tuple[tuple[str, object], ...],
                   source: str, history: bool) -> None:
    """InputError for an option this ingest would ignore: --cards stores cards built elsewhere (the options that
    build them from a corpus do nothing there), --batch/--workers pace --cards only, --source names the history
    --since/--revisions walk.  Each was dropped unsaid."""
    from launchcard.errors import InputError

    given = [name for name, value in building if value]
    if cards is not None and given:
        raise InputError(f"--cards stores cards built elsewhere; {', '.join(given)} build(s) cards from a corpus",
                         where=given[0], fix=f"drop {', '.join(given)}, or drop --cards")
    pacing = [name for name, off in (("--batch", batch == 1000), ("--workers", workers is None)) if not off]
    if cards is None and pacing:
        raise InputError(f"{', '.join(pacing)} pace(s) --cards only", where=pacing[0],
                         fix=f"add --cards FILE, or drop {', '.join(pacing)}")
    if source != "vllm-recipes" and not history:
        raise InputError("--source names the synced source whose history --since/--revisions walk", where="--source",
                         fix="add --since DATE or --revisions A..B, or drop --source")


def _history(corpus: Path, cache: Path | None, catalog: Path | str | None, *, source: str, since: str | None,
             revisions: str | None, hub: bool, force: bool, quiet: bool, err: Console) -> None:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from launchcard.errors import InputError
    from launchcard.merge import build_corpus
    from launchcard.store import Catalog, CommitRef
    from launchcard.sync import find_cache, walk

    if since and revisions:
        raise InputError("give --since or --revisions, not both", where=revisions, field="revisions",
                         fix="drop one of them")
    root = cache.expanduser() if cache else find_cache(corpus)
    if root is None:
        raise InputError("not a synced corpus (no state.json next to it)", where=str(corpus), field="corpus",
                         fix="run launchcard sync and pass its --cache (history needs the git repositories)")
    stored = unchanged = commits = 0
    problems: set[str] = set()
    with Catalog(catalog) as cat, Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                           TimeElapsedColumn(), console=err, disable=quiet or not err.is_terminal,
                                           transient=True) as bar:
        task = bar.add_task("history", total=None)
        for step in walk(root, source, since=since, revisions=revisions):
            bar.update(task, description=f"{source} {step.commit[:12]}", completed=step.index - 1, total=step.total)
            if step.models == ():
                continue  # only deleted recipes changed
            result = build_corpus(step.corpus, models=step.models, hub=hub)
            problems.update(result.problems)
            done = cat.ingest(result.cards.values(), force=force,
                              commit=CommitRef(step.commit, step.committed_at.isoformat()))
            commits += 1
            stored += len(done.stored)
            unchanged += len(done.unchanged)
            if done.stored:
                typer.echo(f"{step.commit[:12]} {step.committed_at.isoformat()}: {len(done.stored)} capture(s)")
        where = cat.where
    for line in sorted(problems):
        err.print(f"[yellow]skipped[/]: {line}", markup=True, highlight=False, soft_wrap=True)
    typer.echo(f"walked {commits} commit(s) of {source}: stored {stored} capture(s), {unchanged} unchanged, in {where}")


def _stream(cards: str, catalog: str | None, *, batch: int, force: bool, quiet: bool, workers: int | None) -> None:
    """``ingest --cards``: flat memory, one transaction per batch; a second run after an interruption stores
    only what the first did not commit (the rest is found unchanged)."""
    from rich.progress import Progress, TextColumn, TimeElapsedColumn

    from launchcard.cli._console import console as make_console
    from launchcard.store import Catalog, prepared_cards

    err = make_console(stderr=True)
    fresh = _new_catalog_file(catalog)  # made by this run: removed again if the run stores nothing
    committed = 0
    try:
        with Catalog(catalog) as cat, Progress(TextColumn("{task.description}"), TimeElapsedColumn(), console=err,
                                               disable=quiet or not err.is_terminal, transient=True) as bar:
            task = bar.add_task("cards", total=None)

            def tick(stored: int, seen: int) -> None:
                nonlocal committed
                committed = stored
                bar.update(task, description=f"{seen} card(s) read, {stored} stored")

            done = cat.ingest_stream(prepared_cards(cards, workers=workers), batch=batch, force=force, progress=tick)
            where = cat.where
    except BaseException:
        if fresh is not None and not committed:  # a bad first card leaves no empty catalog behind
            for part in (fresh, fresh.with_name(fresh.name + "-wal"), fresh.with_name(fresh.name + "-shm")):
                part.unlink(missing_ok=True)
        raise
    typer.echo(f"stored {len(done.stored)} card(s), {done.unchanged_total} unchanged (checked {done.checked_at}) "
               f"from {cards} in {where}")


def _new_catalog_file(catalog: str | None) -> Path | None:
    """The SQLite file ``catalog`` names (the default one where None) when it does not exist yet, else None."""
    from launchcard.store import default_catalog_path, is_url

    target = catalog or default_catalog_path()
    if is_url(target):
        return None
    path = Path(target).expanduser()
    return None if path.exists() else path


def _check_catalog(catalog: str | None) -> None:
    """The SQLite catalog an ingest will write: one that exists is opened (not a database, unreadable: one line
    now), a new one must be creatable; nothing is created here (a failed build leaves no empty catalog)."""
    from launchcard.cli._outfile import check_out_file
    from launchcard.store import Catalog, default_catalog_path, is_url, refuse_other_url

    target = catalog or default_catalog_path()
    refuse_other_url(target)
    if is_url(target):
        return
    path = Path(target).expanduser()
    if path.is_file():
        Catalog(path, create=False).close()
    else:
        check_out_file(path, field="catalog", what="catalog file")
