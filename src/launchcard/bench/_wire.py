"""A lean HTTP/1.1 client for the load generator's streamed POSTs.

Why not httpx here: on the 2-core test machine, against the same vLLM 0.32
server with the same token-id prompts at concurrency 4, httpx's async stack
(httpcore + h11 + anyio, a cancel scope per read, more client CPU per
chunk) got 0.35-0.85x the output tokens/s of aiohttp (what `vllm bench serve`
uses) or of plain asyncio streams in 9 of 10 interleaved rounds, with median
TTFT 160-310 ms where they mostly saw 5-20 ms.  The measuring tool changed
what it measured, so the load generator speaks HTTP/1.1 itself: one write per
request, keep-alive connections reused (at most one per concurrent request,
like vLLM's connector), chunked decoding, nothing else.
httpx stays everywhere else (probes, https, injected test transports).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable
from typing import Any
from urllib.parse import urlsplit

from launchcard.errors import EndpointError

OnData = Callable[[float, bytes], None]
_MAX_HEAD = 100  # header lines; more is not an HTTP server we measure


class StreamClient:
    """POST JSON to one ``http://`` endpoint and hand each body piece to a callback."""

    def __init__(self, endpoint: str, *, max_idle: int) -> None:
        parts = urlsplit(endpoint)
        if parts.scheme != "http" or not parts.hostname:
            raise EndpointError("the lean client speaks plain http only", where=endpoint,
                                fix="use the httpx path for https")
        self.host = parts.hostname
        self.port = parts.port or 80
        self.base = parts.path.rstrip("/")
        self._host_header = parts.netloc
        self._idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
        self._max_idle = max_idle

    async def aclose(self) -> None:
        while self._idle:
            _close(self._idle.pop()[1])

    async def post_stream(self, path: str, body: dict[str, Any], on_data: OnData) -> None:
        """Send one request; on_data(arrival time, decoded body bytes) per piece.

        Raises EndpointError for a non-200 answer or a malformed response, and
        OSError / asyncio.IncompleteReadError when the connection breaks.
        """
        payload = json.dumps(body, separators=(",", ":")).encode()
        request = (f"POST {self.base}{path} HTTP/1.1\r\nHost: {self._host_header}\r\n"
                   f"Content-Type: application/json\r\nAccept: text/event-stream\r\n"
                   f"Content-Length: {len(payload)}\r\n\r\n").encode() + payload
        reader, writer, status = await self._send(request)
        try:
            headers = await _read_headers(reader)
            chunked = "chunked" in headers.get("transfer-encoding", "")
            length = int(headers["content-length"]) if "content-length" in headers else None
            keep = headers.get("connection", "").lower() != "close" and (chunked or length is not None)
            if status != 200:
                text = b"".join([d async for d in _body(reader, chunked, length, limit=4096)])
                keep = False
                raise EndpointError(f"HTTP {status}: {' '.join(text.decode('utf-8', 'replace').split())[:160]}")
            async for data in _body(reader, chunked, length):
                on_data(time.perf_counter(), data)
        except BaseException:
            _close(writer)
            raise
        if keep and len(self._idle) < self._max_idle:
            self._idle.append((reader, writer))
        else:
            _close(writer)

    async def _send(self, request: bytes) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, int]:
        """Write the request and read the status line; a kept-alive connection the
        server has closed meanwhile is retried once on a fresh one."""
        while True:
            reused = bool(self._idle)
            if reused:
                reader, writer = self._idle.pop()
            else:
                reader, writer = await asyncio.open_connection(self.host, self.port)
            try:
                writer.write(request)
                line = await reader.readline()
            except (ConnectionError, OSError):
                _close(writer)
                if reused:
                    continue
                raise
            except BaseException:
                _close(writer)
                raise
            if not line and reused:
                _close(writer)
                continue
            if not line:
                _close(writer)
                raise ConnectionResetError("the server closed the connection without answering")
            parts = line.split(None, 2)
            if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
                _close(writer)
                raise EndpointError(f"not an HTTP/1.1 answer ({line[:60]!r})")
            return reader, writer, int(parts[1])


async def _read_headers(reader: asyncio.StreamReader) -> dict[str, str]:
    headers: dict[str, str] = {}
    for _ in range(_MAX_HEAD):
        line = await reader.readline()
        if not line:
            raise asyncio.IncompleteReadError(b"", None)
        if line in (b"\r\n", b"\n"):
            return headers
        name, sep, value = line.decode("latin-1").partition(":")
        if not sep:
            raise EndpointError(f"malformed HTTP header line ({line[:60]!r})")
        headers[name.strip().lower()] = value.strip()
    raise EndpointError(f"more than {_MAX_HEAD} HTTP header lines")


async def _body(reader: asyncio.StreamReader, chunked: bool, length: int | None,
                limit: int | None = None) -> AsyncIterator[bytes]:
    """Yield body pieces as they arrive (chunked, Content-Length or up to EOF)."""
    got = 0
    if chunked:
        while True:
            size_line = await reader.readline()
            try:
                size = int(size_line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise EndpointError(f"malformed chunk size ({size_line[:40]!r})") from None
            if size == 0:
                while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                    pass
                return
            data = await reader.readexactly(size + 2)
            yield data[:-2]
            got += size
            if limit is not None and got >= limit:
                return
    remaining = length
    while remaining is None or remaining > 0:
        data = await reader.read(65536 if remaining is None else min(65536, remaining))
        if not data:
            if remaining:
                raise asyncio.IncompleteReadError(b"", remaining)
            return
        if remaining is not None:
            remaining -= len(data)
        yield data
        got += len(data)
        if limit is not None and got >= limit:
            return


def _close(writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError, RuntimeError):
        writer.close()
