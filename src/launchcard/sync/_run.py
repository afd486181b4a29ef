"""``sync``: every source in turn; one that fails keeps its previous snapshot and the others go on."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from launchcard.errors import InputError, LaunchcardError, SyncError
from launchcard.snapshot import point, write_json
from launchcard.sync import _git
from launchcard.sync._config import GitSource, SyncConfig
from launchcard.sync._snap import materialise, repo_dir

# (source, step label, done, total)
Progress = Callable[[str, str, int, int], None]


@dataclass(frozen=True)
class SourceOutcome:
    source: str
    ok: bool
    commit: str | None = None  # git: the snapshot's commit; hub: None
    committed_at: str | None = None
    snapshot: str | None = None  # the snapshot folder the corpus folder now points at
    changed: bool = False  # the corpus folder points somewhere new
    errors: tuple[str, ...] = ()  # one line each
    note: str | None = None


def state(cache: Path) -> dict[str, Any]:
    import json

    try:
        data = json.loads((cache / "state.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


@contextmanager
def _locked(cache: Path) -> Iterator[None]:
    """One sync per cache at a time (a second waits); ingests only read finished snapshots."""
    fix = "give a writable folder (it is made if missing), or leave --cache out"
    if cache.exists() and not cache.is_dir():
        raise InputError("cannot use the cache folder (a file, not a folder)", where=str(cache), field="cache",
                         fix=fix)
    try:
        cache.mkdir(parents=True, exist_ok=True)
        fh = open(cache / ".sync.lock", "w")  # noqa: SIM115 (closed by the with below)
    except OSError as exc:
        raise InputError(f"cannot use the cache folder ({exc.strerror})", where=str(cache), field="cache",
                         fix=fix) from None
    with fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _sync_git(cache: Path, src: GitSource, offline: bool, progress: Progress | None) -> SourceOutcome:
    where = f"{src.name} ({src.remote})"
    repo = repo_dir(cache, src)

    def step(label: str, done: int) -> None:
        if progress:
            progress(src.name, label, done, 4)

    try:
        if offline:
            if not (repo / "HEAD").is_file():
                raise SyncError("not in the cache", where=where, fix="run sync once without --offline")
            step("cached", 1)
            commit = _git.cached(repo, src.revision, where=where)
        else:
            step("fetching", 0)
            _git.ensure_clone(repo, src.remote, src.filter, where=where)
            step("fetching", 1)
            commit = _git.fetch(repo, src.revision, src.filter, where=where)
        step("checking out", 2)
        snap = materialise(cache, src, commit, where=where)
        step("linking", 3)
        link = cache / "corpus" / src.folder
        target = snap / src.subdir if src.subdir else snap
        before = os.path.realpath(link) if link.is_symlink() else None
        if link.exists() and not link.is_symlink():
            raise SyncError("the corpus folder is not a link sync made", where=str(link),
                                 fix="move it away, or use another --cache")
        point(link, target)
        _prune(snap.parent, keep={snap.name, Path(before).relative_to(snap.parent).parts[0]
                                   if before and Path(before).is_relative_to(snap.parent) else ""})
        step("done", 4)
        at = _git.commit_time(repo, commit, where=where)
        return SourceOutcome(src.name, True, commit=commit, committed_at=at.isoformat(), snapshot=str(snap),
                             changed=before != os.path.realpath(link))
    except (LaunchcardError, OSError) as exc:
        line = exc.one_line() if isinstance(exc, LaunchcardError) else f"{where}: {exc}"
        return SourceOutcome(src.name, False, errors=(line,))


def _prune(folder: Path, keep: set[str]) -> None:
    """Snapshots of a source other than the current and the previous one (an ingest may still be reading it)."""
    import shutil

    for old in folder.iterdir():
        if old.is_dir() and old.name not in keep and not old.name.startswith("."):
            shutil.rmtree(old, ignore_errors=True)


def _recipe_models(cache: Path) -> list[str]:
    base = cache / "corpus" / "vllm-recipes" / "models"
    return sorted(p.relative_to(base).with_suffix("").as_posix() for p in base.glob("*/*.yaml")) if base.is_dir() \
        else []


def _sync_hub(cache: Path, cfg: SyncConfig, offline: bool, progress: Progress | None) -> SourceOutcome:
    hub = cfg.hub
    link = cache / "corpus" / hub.folder
    if offline:
        ok = link.exists()
        return SourceOutcome(hub.name, ok, note="offline: cached snapshot kept" if ok else None,
                             errors=() if ok else (f"{hub.name}: not in the cache; run sync once without --offline",))
    models = list(hub.models) or _recipe_models(cache)
    if not models:
        return SourceOutcome(hub.name, True, note="no models to ask the Hub about (no recipes synced, none configured)")
    from launchcard.sync._hf import sync_hub

    def tick(label: str, done: int, total: int) -> None:
        if progress:
            progress(hub.name, label, done, total)

    before = os.path.realpath(link) if link.is_symlink() else None
    snap, failures = sync_hub(cache, hub, models, tick=tick)
    if snap is not None:
        point(link, snap)
        _prune(snap.parent, keep={snap.name, Path(before).name if before else ""})
    return SourceOutcome(hub.name, not failures, snapshot=str(snap) if snap else None, errors=tuple(failures),
                         changed=snap is not None and before != os.path.realpath(link),
                         note=f"{len(models) - len(failures)} of {len(models)} model(s)")


def sync(cache: Path, cfg: SyncConfig, *, sources: Sequence[str] | None = None, offline: bool = False,
         progress: Progress | None = None) -> list[SourceOutcome]:
    """Bring ``sources`` (default: all) of ``cfg`` up to date in ``cache``; one outcome per source."""
    names = cfg.names()
    for name in sources or ():
        if name not in names:
            raise InputError("unknown source", where=name, field="source", fix=f"known: {', '.join(names)}")
    wanted = set(sources or names)
    cache = cache.expanduser().resolve()
    outcomes: list[SourceOutcome] = []
    with _locked(cache):
        for src in cfg.git:
            if src.name in wanted:
                outcomes.append(_sync_git(cache, src, offline, progress))
        if cfg.hub.name in wanted:
            outcomes.append(_sync_hub(cache, cfg, offline, progress))
        st = state(cache)
        now = datetime.now(UTC).replace(microsecond=0).isoformat()
        for o in outcomes:
            entry = dict(st.get(o.source) or {})
            entry.update({"checked_at": now, "ok": o.ok, "errors": list(o.errors)})
            if o.ok:
                entry.update({k: v for k, v in asdict(o).items() if k in ("commit", "committed_at", "snapshot")})
                entry["synced_at"] = now
            git_src = next((g for g in cfg.git if g.name == o.source), None)
            if git_src is not None:  # what a history ingest needs without the config file
                entry["config"] = {**asdict(git_src), "paths": list(git_src.paths)}
            st[o.source] = entry
        write_json(cache / "state.json", st)
    return outcomes
