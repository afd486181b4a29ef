"""On-disk cache of a corpus build: what was computed from inputs that have not changed is not computed again.

Two kinds of entry, each a JSON file named by the sha256 of everything its value depends on:

* ``extract``: one source document's :class:`~launchcard.sources.Extract`, keyed by the adapter kind, the
  document's path, URL, revision, times and the sha256 of its bytes (the bytes are read and hashed on every
  build: cheap; parsing them is what is saved);
* ``card``: one model's card, keyed by the keys of every extract it is built from, each per-model source's key
  for the model (the vLLM recipe: its file's sha256, the shared taxonomy/strategy files, the revision, the
  hardware asked for) and the build options.  A model whose per-model source cannot say what it read (the
  live Hub) is never cached; nor is one whose build reported a problem.

Every key also covers the code: entries live under a folder named by a fingerprint of the installed
``launchcard`` package (path, size and mtime of each file, data files included), the Python version and
pydantic's, so an edited resolver, flag spec or hardware table never meets a stale card.  Reads that fail
(missing, truncated, foreign) are misses; writes go to a temporary file renamed into place and never fail a
build.  ``LAUNCHCARD_BUILD_CACHE`` names the folder (default: ``<user cache dir>/launchcard/build``); ``off``
(or ``0``, or empty) turns the cache off.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from launchcard import atomicfile
from launchcard.yamlread import CACHE_ENV, cache_root

__all__ = ["CACHE_ENV", "BuildCache", "cache_root", "code_fingerprint", "key_of"]

_STALE_S = 7 * 24 * 3600  # folders of other code versions unused this long are removed


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """sha256 over the launchcard package's files (relative path, size, mtime), Python's and pydantic's versions."""
    import pydantic

    package = Path(__file__).resolve().parents[1]
    h = hashlib.sha256(f"{sys.version}\0{pydantic.VERSION}\n".encode())
    for folder, subfolders, files in os.walk(package):
        subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".pyc", ".pyo")):
                continue
            path = os.path.join(folder, name)
            st = os.stat(path)
            h.update(f"{os.path.relpath(path, package)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def key_of(*parts: Any) -> str:
    """The sha256 of ``parts`` as canonical JSON (str() for what JSON cannot hold, e.g. datetimes)."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


class BuildCache:
    """``get``/``put`` of text entries by kind and key, under the current code's folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.folder = root / code_fingerprint()[:32]
        self._pruned = False

    @classmethod
    def open(cls) -> BuildCache | None:
        root = cache_root()
        return cls(root) if root is not None else None

    def _path(self, kind: str, key: str) -> Path:
        return self.folder / kind / key[:2] / f"{key}.json"

    def get(self, kind: str, key: str) -> str | None:
        try:
            return self._path(kind, key).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    def put(self, kind: str, key: str, text: str) -> None:
        path = self._path(kind, key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # readers see the old entry or the whole new one, never a part; no fsync: a lost entry is built again
            atomicfile.write_text(path, text, durable=False)
        except OSError:
            return  # a cache that cannot be written is a slower build, not a failed one
        if not self._pruned:
            self._pruned = True
            self._prune()

    def _prune(self) -> None:
        """Remove folders of other code versions that nothing used for a week."""
        now = time.time()
        with contextlib.suppress(OSError):
            for other in self.root.iterdir():
                if other != self.folder and other.is_dir() and now - other.stat().st_mtime > _STALE_S:
                    shutil.rmtree(other, ignore_errors=True)
