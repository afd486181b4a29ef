"""Hugging Face Hub files (config.json) and their commit, through ``huggingface_hub``.

The token is whatever ``huggingface_hub`` finds (``HF_TOKEN``, its login); it is
sent to the endpoint and never written anywhere.  A model that fails keeps the
file of the previous snapshot, and the failure is reported.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from launchcard import atomicfile
from launchcard.errors import SyncError
from launchcard.snapshot import MANIFEST, snapshot_of, write_json
from launchcard.sync._config import HubSource

Tick = Callable[[str, int, int], None]


def _download(repo_id: str, hub: HubSource) -> tuple[str, datetime | None, dict[str, bytes]]:
    """(commit, its time, name -> content) of ``hub.files`` of ``repo_id``; SyncError naming the URL on failure."""
    from launchcard.errors import SourceError
    from launchcard.sources.hf_hub import hub_files

    try:
        got = hub_files(repo_id, hub.files, endpoint=hub.endpoint, token=None, timeout=hub.timeout_s)
    except SourceError as exc:
        raise SyncError(exc.rule, where=exc.where, fix=exc.fix) from exc
    return got.sha, got.info.last_modified, got.files


def sync_hub(cache: Path, hub: HubSource, models: Sequence[str], *, tick: Tick | None = None
             ) -> tuple[Path | None, list[str]]:
    """A new Hub snapshot folder for ``models`` (None when nothing could be fetched) and one line per failure."""
    previous = snapshot_of(cache / "corpus" / hub.folder) if (cache / "corpus" / hub.folder).exists() else None
    files: dict[str, dict[str, Any]] = {}
    blobs: dict[str, bytes] = {}
    failures: list[str] = []
    for i, repo_id in enumerate(models, 1):
        if tick:
            tick(repo_id, i - 1, len(models))
        try:
            sha, modified, got = _download(repo_id, hub)
        except SyncError as exc:
            failures.append(exc.one_line())
            if previous is not None:  # keep what the previous snapshot had for this model
                for name in hub.files:
                    rel = f"{repo_id}/{name}"
                    old = previous.root / rel
                    if old.is_file():
                        blobs[rel] = old.read_bytes()
                        fa = previous.files.get(rel)
                        files[rel] = {"url": fa.url if fa else None, "revision": fa.revision if fa else None,
                                      "committed_at": fa.committed_at.isoformat() if fa and fa.committed_at else None}
            continue
        for name, raw in got.items():
            rel = f"{repo_id}/{name}"
            blobs[rel] = raw
            files[rel] = {"url": f"https://huggingface.co/{repo_id}/blob/{sha}/{name}", "revision": sha,
                          "committed_at": modified.astimezone(UTC).isoformat() if modified else None,
                          "sha256": hashlib.sha256(raw).hexdigest()}
    if tick:
        tick("", len(models), len(models))
    if not blobs:
        return None, failures
    key = hashlib.sha256("\n".join(f"{k} {files[k].get('revision')} {hashlib.sha256(blobs[k]).hexdigest()}"
                                   for k in sorted(blobs)).encode()).hexdigest()[:20]
    final = cache / "snapshots" / hub.name / key
    if not (final / MANIFEST).is_file():
        final.parent.mkdir(parents=True, exist_ok=True)
        with atomicfile.staged_folder(final) as tmp:  # another process that finished it first keeps its folder
            for rel, raw in blobs.items():
                (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
                (tmp / rel).write_bytes(raw)
            write_json(tmp / MANIFEST, {"source": hub.name, "kind": "hub", "web": "https://huggingface.co",
                                        "endpoint": hub.endpoint, "files": files,
                                        "materialised_at": datetime.now(UTC).replace(microsecond=0).isoformat()})
    return final, failures
