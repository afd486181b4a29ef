"""A bounded, thread-safe, compute-once cache for what the web catalog builds on first request.

The server answers requests from a thread pool.  Pages and builder results are
built on first request and kept; two requests for the same cold key must not
build it twice (50 users opening one new model page would otherwise each pay
the full build, one after the other under the GIL), and no request may see a
half-updated cache.  Each key gets its own lock while it is built: the first
request builds, the others wait for its result (or its error, which is not
cached, so a later request tries again).  Builds may nest (a rendered page waits for its builder data),
always in the same order, so gates never wait on each other in a circle; no lock is held across builds of
different keys (a process-wide build lock held while waiting for a nested key deadlocked two requests).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, Generic, TypeVar

V = TypeVar("V")



class OnceCache(Generic[V]):
    """Least-recently-used cache of at most ``size`` values, each built once by ``get``'s ``build``."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._values: OrderedDict[Hashable, V] = OrderedDict()
        self._building: dict[Hashable, threading.Lock] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._values)

    def get(self, key: Hashable, build: Callable[[], V]) -> V:
        while True:
            with self._lock:
                if key in self._values:
                    self._values.move_to_end(key)
                    return self._values[key]
                gate = self._building.get(key)
                mine = gate is None
                if mine:
                    gate = self._building[key] = threading.Lock()
                    gate.acquire()
            assert gate is not None
            if not mine:  # another request is building it: wait, then read what it stored
                with gate:
                    pass
                with self._lock:
                    if key in self._values:
                        self._values.move_to_end(key)
                        return self._values[key]
                continue  # its build failed: try ourselves
            try:
                value = build()
                with self._lock:
                    self._values[key] = value
                    while len(self._values) > self._size:
                        self._values.popitem(last=False)
                return value
            finally:
                with self._lock:
                    del self._building[key]
                gate.release()


# Any below: ASGI scope and message dicts.
Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]
ASGIApp = Callable[[dict[str, Any], Receive, Send], Awaitable[None]]


class ResponseCache:
    """ASGI middleware: a page already rendered is answered from memory, on the event loop.

    Every GET page of the catalog is a pure function of its URL and the catalog snapshot, so a
    successful response (200, at most ``max_body`` bytes) is kept by exact path and query string
    and sent again without a thread hop or a template render.  ``stale`` (cheap: at most one stat
    a second) is asked before each lookup; when it says the catalog changed, ``reload`` runs in a
    worker thread and, when it swapped a new snapshot in, everything kept is dropped.
    Static files, HEAD and non-GET requests pass through untouched.
    """

    def __init__(self, app: ASGIApp, *, stale: Callable[[], bool], reload: Callable[[], bool], size: int = 4096,
                 max_body: int = 2 << 20, max_total: int = 64 << 20, skip: tuple[str, ...] = ("/static/",)) -> None:
        self.app = app
        self._stale = stale
        self._reload = reload
        self._size = size
        self._max_body = max_body
        self._max_total = max_total  # bytes kept at most: endless distinct query strings cannot fill memory
        self._total = 0
        self._skip = skip
        self._kept: OrderedDict[tuple[str, bytes], tuple[int, list[tuple[bytes, bytes]], bytes]] = OrderedDict()

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "GET" or scope["path"].startswith(self._skip):
            await self.app(scope, receive, send)
            return
        if self._stale():
            import anyio.to_thread

            if await anyio.to_thread.run_sync(self._reload):
                self._kept.clear()
                self._total = 0
        key = (scope["path"], scope.get("query_string", b""))
        hit = self._kept.get(key)
        if hit is not None:
            self._kept.move_to_end(key)
            status, headers, body = hit
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        start: dict[str, Any] = {}
        chunks: list[bytes] = []

        async def capture(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
                if not message.get("more_body") and start.get("status") == 200:
                    body = b"".join(chunks)
                    if len(body) <= self._max_body and key not in self._kept:
                        self._kept[key] = (200, list(start.get("headers") or []), body)
                        self._total += len(body)
                        while len(self._kept) > self._size or self._total > self._max_total:
                            self._total -= len(self._kept.popitem(last=False)[1][2])
            await send(message)

        await self.app(scope, receive, capture)
