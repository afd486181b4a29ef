"""Walk a synced git source's history: one corpus view per commit that changed the source's files.

Each view is a folder of links: the walked source's folder points at the
snapshot of that commit, every other folder at the cache's current snapshot.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

from launchcard.errors import InputError
from launchcard.sync import _git
from launchcard.sync._config import GitSource
from launchcard.sync._run import state
from launchcard.sync._snap import materialise, repo_dir, snapshot_dir


@dataclass(frozen=True)
class HistoryStep:
    source: str
    commit: str
    committed_at: datetime
    corpus: Path  # a corpus view (valid until the next step)
    models: tuple[str, ...] | None  # only these models' documents changed (None: any may have)
    index: int
    total: int


def find_cache(corpus: Path) -> Path | None:
    """The sync cache a corpus folder belongs to (``<cache>/corpus``), else None."""
    root = corpus.expanduser().resolve()
    return root.parent if root.name == "corpus" and (root.parent / "state.json").is_file() else None


def git_sources(cache: Path) -> dict[str, GitSource]:
    out: dict[str, GitSource] = {}
    for name, entry in state(cache).items():
        cfg = entry.get("config") if isinstance(entry, dict) else None
        if isinstance(cfg, dict) and entry.get("commit"):
            out[name] = GitSource(**{**cfg, "paths": tuple(cfg.get("paths") or ())})
    return out


def _spec(repo: Path, head: str, since: str | None, revisions: str | None, where: str) -> tuple[list[str], str | None]:
    """rev-list arguments and the base commit (captured first, as the starting point), from the options."""
    if revisions:
        base, dots, tip = revisions.partition("..")
        if not dots:
            raise InputError("not a commit range", where=revisions, field="revisions",
                             fix="write A..B (or A.. for A up to the synced commit)")
        tip = tip or head
        for rev in (base, tip):
            if not _git.has_commit(repo, rev):
                raise InputError(f"unknown commit {rev!r}", where=where, field="revisions",
                                 fix="give commits of the synced history (sync first, or widen the range)")
        return [f"{base}..{tip}"], _git.resolve(repo, base, where=where)
    return [f"--since={since_time(since)}", head] if since else [head], None


def since_time(since: str) -> str:
    """``--since`` as a time git reads exactly: an ISO date is its midnight UTC, an ISO time is kept (no zone:
    UTC); anything else is bad input.  git's approxidate takes a bare date at the current time of day
    (``--since 2026-09-01`` at 13:43 skipped that morning's commits) and any text as some time ("notadate" is
    now: 0 commits, exit 0)."""
    try:
        day = date.fromisoformat(since)
    except ValueError:
        pass
    else:
        return f"{day.isoformat()}T00:00:00+00:00"
    try:
        when = datetime.fromisoformat(since)
    except ValueError:
        raise InputError(f"not a date ({since!r})", where="", field="since",
                         fix="write an ISO date (2026-09-01, from its midnight UTC) or time "
                             "(2026-09-01T18:00:00Z)") from None
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).isoformat()


def walk(cache: Path, source: str, *, since: str | None = None, revisions: str | None = None
         ) -> Iterator[HistoryStep]:
    cache = cache.expanduser().resolve()
    sources = git_sources(cache)
    if source not in sources:
        raise InputError("not a synced git source", where=source, field="source",
                         fix=f"synced: {', '.join(sorted(sources)) or 'none; run launchcard sync'}")
    src = sources[source]
    repo = repo_dir(cache, src)
    where = f"{src.name} ({repo})"
    head = str(state(cache)[source]["commit"])
    spec, base = _spec(repo, head, since, revisions, where)
    found = _git.commits(repo, spec, src.paths, where=where)
    steps: list[tuple[str, datetime]] = []
    if base is not None:
        steps.append((base, _git.commit_time(repo, base, where=where)))
    steps += [c for c in found if c[0] != base]
    view = Path(tempfile.mkdtemp(prefix="history-", dir=cache))
    made: Path | None = None
    try:
        current = cache / "corpus"
        for entry in sorted(current.iterdir()) if current.is_dir() else []:
            if entry.name != src.folder.split("/")[0] and not entry.name.startswith("."):
                (view / entry.name).symlink_to(os.path.realpath(entry), target_is_directory=entry.is_dir())
        prev: str | None = None
        for i, (commit, at) in enumerate(steps, 1):
            if made is not None:  # a walked commit's snapshot is not kept (the synced one is)
                shutil.rmtree(made, ignore_errors=True)
                made = None
            existed = snapshot_dir(cache, src.name, commit).exists()
            snap = materialise(cache, src, commit, where=where, allow_empty=True)
            made = None if existed else snap
            link = view / src.folder
            link.parent.mkdir(parents=True, exist_ok=True)
            if link.is_symlink():
                link.unlink()
            link.symlink_to(snap / src.subdir if src.subdir else snap, target_is_directory=True)
            yield HistoryStep(src.name, commit, at, view, _models(repo, src, snap, prev, commit, where), i,
                              len(steps))
            prev = commit
    finally:
        shutil.rmtree(view, ignore_errors=True)
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)


def _models(repo: Path, src: GitSource, snap: Path, prev: str | None, commit: str, where: str
            ) -> tuple[str, ...] | None:
    """Models whose own document changed since ``prev``; None when a shared file changed (or no ``prev``)."""
    if prev is None or not src.models_dir:
        return None
    names = _git.changed(repo, prev, commit, src.paths, where=where)
    prefix = src.models_dir.rstrip("/") + "/"
    out: list[str] = []
    for n in names:
        parts = n[len(prefix):].split("/") if n.startswith(prefix) else []
        if len(parts) != 2 or not n.endswith(".yaml"):
            return None
        if (snap / n).is_file():  # deleted recipes have no card at this commit
            out.append(n[len(prefix):-len(".yaml")])
    return tuple(sorted(out))
