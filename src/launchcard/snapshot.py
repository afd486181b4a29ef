"""The manifest of a synced snapshot folder, and where each of its files came from.

Standard library (and :mod:`launchcard.atomicfile`) only: source adapters ask :func:`snapshot_of` for every corpus
folder they read, so it must cost nothing when the folder was not synced.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from launchcard import atomicfile

MANIFEST = ".launchcard-snapshot.json"


@dataclass(frozen=True)
class FileAt:
    """One file of a snapshot: its path upstream, permalink, commit and commit time."""

    path: str
    url: str | None
    revision: str | None
    committed_at: datetime | None


@dataclass(frozen=True)
class Snapshot:
    source: str
    root: Path  # the snapshot folder (holding the manifest)
    prefix: str  # the corpus folder's path inside the snapshot ("" = the snapshot itself)
    web: str | None  # e.g. https://github.com/vllm-project/recipes
    commit: str | None
    committed_at: datetime | None
    files: Mapping[str, FileAt] = field(default_factory=dict)  # per-file entries (Hub files), by snapshot path

    def file(self, rel: str) -> FileAt:
        """Where ``rel`` (a path inside the corpus folder) came from."""
        path = f"{self.prefix}/{rel}" if self.prefix else rel
        if path in self.files:
            return self.files[path]
        url = f"{self.web}/blob/{self.commit}/{path}" if self.web and self.commit else None
        return FileAt(path=path, url=url, revision=self.commit, committed_at=self.committed_at)


def _time(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value)) if value else None
    except ValueError:
        return None


@lru_cache(maxsize=64)
def _read(root: str) -> dict[str, Any] | None:
    try:
        data = json.loads((Path(root) / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def snapshot_of(folder: Path) -> Snapshot | None:
    """The snapshot a corpus folder is (or lies in), None when it was not written by ``sync``."""
    try:
        real = folder.resolve()
    except OSError:
        return None
    for root in (real, *list(real.parents)[:4]):
        data = _read(str(root))
        if data is None:
            continue
        files = {str(k): FileAt(path=str(k), url=v.get("url"), revision=v.get("revision"),
                                committed_at=_time(v.get("committed_at")))
                 for k, v in (data.get("files") or {}).items() if isinstance(v, dict)}
        return Snapshot(
            source=str(data.get("source")),
            root=root,
            prefix="" if real == root else real.relative_to(root).as_posix(),
            web=data.get("web"),
            commit=data.get("commit"),
            committed_at=_time(data.get("committed_at")),
            files=files,
        )
    return None


def write_json(path: Path, data: Any) -> None:
    """Write-then-rename (:func:`launchcard.atomicfile.write_text`): a reader sees the old file or the new one,
    never half of one."""
    atomicfile.write_text(path, json.dumps(data, indent=1, sort_keys=True) + "\n")


def point(link: Path, target: Path) -> None:
    """Make ``link`` a symlink to ``target`` (relative), replacing what was there in one rename."""
    link.parent.mkdir(parents=True, exist_ok=True)
    rel = os.path.relpath(target, link.parent)
    tmp = link.with_name(f".{link.name}.{os.getpid()}.link")
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    tmp.symlink_to(rel, target_is_directory=True)
    os.replace(tmp, link)
