"""Predicted curves computed once for everything they read, kept in memory and on disk.

A performance page's predicted point is predict's own run of 10 x C requests: a point at 4,096 clients is a
few seconds of simulation, so a page of such curves cost seconds on every first visit (each worker process,
each restart).  A curve's figures are a function of the model id, the checkpoint's config.json, the published
configuration it stands beside (hardware, GPUs, parallelism, engine and release, panel command, workload,
concurrencies), the coefficient tables the predictor reads and the code with its packaged data (hardware
catalog, engine limits, the tables' file); predicting one opens no other file.  So a curve is kept under all
of them:

* in memory, keyed by the config's path, size and mtime (a stat, not a read) with the rest, so an unchanged
  config is never read again and a rewritten one is predicted again;
* on disk in the build cache (``launchcard.merge.BuildCache``, under the fingerprint of the installed code and
  data; ``LAUNCHCARD_BUILD_CACHE=off`` turns it off), keyed by the sha256 of the config's bytes with the rest,
  so another worker process or a restart reads the figures instead of simulating them again.

Both keys hold the digest of the coefficient tables in use (``predict.tables_digest``): a refitted or replaced
set never answers from the old one's figures.  One build per key: threads of one process wait on the build in
progress (``OnceCache``), processes on an advisory lock file beside the entry (where the platform has
``fcntl``); the JSON written is exactly the points computed, so the first visit and every later one show the
same numbers.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from launchcard.web._cache import OnceCache

if TYPE_CHECKING:
    from launchcard.merge import BuildCache

KIND = "predicted-curve"
Points = list[dict[str, Any]]  # Any: JSON point documents (web._perf.Predictions)


class CurveMemo:
    """``get(model, config, group, build)``: the points of one predicted curve, built at most once per key."""

    def __init__(self, disk: BuildCache | Callable[[], BuildCache | None] | None, size: int = 1024) -> None:
        # a callable: the build cache opened on the first curve asked for (its import is not a start-up cost)
        self._disk: BuildCache | None = None if callable(disk) else disk
        self._open = disk if callable(disk) else None
        self._opening = threading.Lock()
        self._mem: OnceCache[Points] = OnceCache(size)
        self.built = 0  # curves computed by ``build`` (not read back): what the tests count

    def get(self, model: str, config: Path, group: tuple[Any, ...], build: Callable[[], Points]) -> Points:
        from launchcard.predict import tables_digest

        try:
            st = config.stat()
        except OSError:  # gone or unreadable since it was found: the build says so (no curve), nothing is kept
            return self._build(build)
        tables = tables_digest()
        key = (model, str(config), st.st_size, st.st_mtime_ns, tables, group)
        return self._mem.get(key, lambda: self._load(model, config, tables, group, build))

    def _load(self, model: str, config: Path, tables: str, group: tuple[Any, ...],
              build: Callable[[], Points]) -> Points:
        if self._open is not None:
            with self._opening:
                if self._open is not None:
                    self._disk, self._open = self._open(), None
        if self._disk is None:
            return self._build(build)
        from launchcard.merge import key_of

        try:
            digest = hashlib.sha256(config.read_bytes()).hexdigest()
        except OSError:  # not readable: nothing to key a disk entry on; the build answers as it would unkept
            return self._build(build)
        key = key_of(KIND, model, digest, tables, group)
        hit = self._read(key)
        if hit is not None:
            return hit
        with self._locked(key):
            hit = self._read(key)  # another process built it while this one waited
            if hit is not None:
                return hit
            value = self._build(build)
            self._disk.put(KIND, key, json.dumps(value))
            return value

    def _build(self, build: Callable[[], Points]) -> Points:
        value = build()
        self.built += 1
        return value

    def _read(self, key: str) -> Points | None:
        assert self._disk is not None
        text = self._disk.get(KIND, key)
        if text is None:
            return None
        try:
            value = json.loads(text)
        except ValueError:
            return None  # a foreign or damaged entry is a miss
        return value if isinstance(value, list) and all(isinstance(p, dict) for p in value) else None

    @contextlib.contextmanager
    def _locked(self, key: str) -> Iterator[None]:
        """Hold the entry's lock file while it is built (no lock where the folder cannot be written, the file
        system refuses locks or the platform has no ``fcntl``: then two processes may both build it, and write the
        same figures).  The lock file stays (empty) beside its entry: removing it while another process waits on
        it would let a third lock a new file and build alongside; it goes with its code version's folder."""
        assert self._disk is not None
        try:
            import fcntl
        except ImportError:  # not POSIX
            yield
            return
        path = self._disk.folder / KIND / key[:2] / f"{key}.lock"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fh = path.open("a")
        except OSError:
            yield
            return
        with fh:
            # released when the file closes, or by the OS if the process dies; OSError (e.g. ENOLCK on a network
            # file system): built unlocked rather than the page failed
            with contextlib.suppress(OSError):
                fcntl.flock(fh, fcntl.LOCK_EX)
            yield
