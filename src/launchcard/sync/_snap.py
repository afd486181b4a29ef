"""Immutable snapshot folders of a git source, one per commit, shared by ``sync`` and history ingests."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from launchcard import atomicfile
from launchcard.errors import SyncError
from launchcard.snapshot import MANIFEST, write_json
from launchcard.sync import _git
from launchcard.sync._config import GitSource


def repo_dir(cache: Path, src: GitSource) -> Path:
    return cache / "repos" / f"{src.name}.git"


def snapshot_dir(cache: Path, name: str, commit: str) -> Path:
    return cache / "snapshots" / name / commit


def materialise(cache: Path, src: GitSource, commit: str, *, where: str, allow_empty: bool = False) -> Path:
    """``<cache>/snapshots/<name>/<commit>/``: the source's files at ``commit`` and a manifest (commit, commit
    time, upstream URL base).  Written to a temporary folder and renamed, so it is complete or absent."""
    final = snapshot_dir(cache, src.name, commit)
    if (final / MANIFEST).is_file():
        return final
    repo = repo_dir(cache, src)
    files = _git.list_files(repo, commit, src.paths, where=where)
    if not files and not allow_empty:
        raise SyncError(f"commit {commit[:12]} has no file under {', '.join(src.paths)}", where=where,
                             fix="check the source's paths and revision in the sync config")
    final.parent.mkdir(parents=True, exist_ok=True)
    with atomicfile.staged_folder(final) as tmp:  # another process that finished it first keeps its folder
        if files:
            _git.checkout(repo, commit, files, tmp, where=where)
        (tmp / src.subdir).mkdir(parents=True, exist_ok=True)
        at = _git.commit_time(repo, commit, where=where)
        write_json(tmp / MANIFEST, {
            "source": src.name, "kind": "git", "remote": src.remote, "web": src.web, "commit": commit,
            "committed_at": at.isoformat(), "paths": list(src.paths), "files_count": len(files),
            "materialised_at": datetime.now(UTC).replace(microsecond=0).isoformat()})
    return final
