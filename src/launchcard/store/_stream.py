"""Launch cards read one at a time from JSON Lines files or folders of ``*.json`` cards (``ingest --cards``).

A catalog at Hub scale is fed from cards built elsewhere (another host, a Hub
crawl, a platform's own inventory): reading them lazily, one line at a time,
keeps memory flat however many there are.  A line that is not a launch card is
bad input naming the file and line; the cards before it are already committed
by :meth:`Catalog.ingest_stream` and a second run after the fix picks up from
there.

:func:`prepared_cards` spreads the per-card work (validation, the stored JSON,
fingerprints, index and fact rows: about two thirds of an ingest's CPU) over
worker processes in order, with a bounded number of chunks in flight, so the
writer only runs SQL and memory stays flat.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from pydantic import ValidationError

from launchcard.card import LaunchCard
from launchcard.errors import InputError
from launchcard.store._prepare import Prepared, prepare

_CHUNK = 200  # lines per task: large enough that pickling stays small next to the work


def read_cards(path: Path | str) -> Iterator[LaunchCard]:
    """Each launch card in ``path``: a ``.jsonl`` file (one card per line; ``-`` is standard input) or a
    folder of ``*.json`` / ``*.jsonl`` files (sorted by name, so a second run reads them in the same order)."""
    for text, where in _documents(path):
        yield _one(text, where)


def prepared_cards(path: Path | str, *, workers: int | None = None) -> Iterator[Prepared]:
    """:func:`read_cards` then :func:`~launchcard.store._prepare.prepare`, in input order: in ``workers``
    processes (None: one per core where there are two or more; 0: in this process)."""
    import os

    if workers is None:
        cores = os.cpu_count() or 1
        workers = cores if cores > 1 else 0
    docs = _documents(path)
    if workers == 0:
        for text, where in docs:
            yield prepare(_one(text, where))
        return
    import concurrent.futures as cf
    import multiprocessing
    from collections import deque
    from itertools import islice

    # spawn, not fork: the parent holds a database connection and a progress-bar thread
    with cf.ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        pending: deque[cf.Future[list[Prepared]]] = deque()
        while True:
            while len(pending) < 2 * workers:
                chunk = list(islice(docs, _CHUNK))
                if not chunk:
                    break
                pending.append(pool.submit(_prepare_chunk, chunk))
            if not pending:
                return
            yield from pending.popleft().result()


def _prepare_chunk(chunk: list[tuple[str, str]]) -> list[Prepared]:
    return [prepare(_one(text, where)) for text, where in chunk]


def _documents(path: Path | str) -> Iterator[tuple[str, str]]:
    """(JSON text, where: file or file:line) of each card document in ``path``."""
    if str(path) == "-":
        yield from _lines(sys.stdin, "<stdin>")
        return
    path = Path(path).expanduser()
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.suffix in (".json", ".jsonl") and p.is_file())
        if not files:
            raise InputError("no *.json or *.jsonl card files in the folder", where=str(path), field="cards",
                             fix="give a folder of launch-card JSON files or a JSON Lines file")
        for file in files:
            if file.suffix == ".json":
                yield file.read_text(encoding="utf-8"), str(file)
            else:
                with file.open(encoding="utf-8") as fh:
                    yield from _lines(fh, str(file))
        return
    if not path.is_file():
        raise InputError("card file not found", where=str(path), field="cards",
                         fix="give a JSON Lines file of launch cards, a folder of them, or - for standard input")
    with path.open(encoding="utf-8") as fh:
        yield from _lines(fh, str(path))


def _lines(fh: Iterable[str], name: str) -> Iterator[tuple[str, str]]:
    for no, line in enumerate(fh, 1):
        if line.strip():
            yield line, f"{name}:{no}"


def _one(text: str, where: str) -> LaunchCard:
    try:
        return LaunchCard.model_validate_json(text)
    except ValidationError as exc:
        errors = exc.errors()
        loc = ".".join(str(p) for p in errors[0]["loc"]) if errors else ""
        msg = errors[0]["msg"] if errors else "invalid"
        raise InputError(f"not a launch card: {loc or '(document)'}: {msg}", where=where, field="cards",
                         fix="each line must be one launch-card JSON document (launchcard schema card)") from exc
