"""Server-sent events as OpenAI-compatible servers send them.

Only ``data:`` fields carry payload; comments (``:``) and the other SSE fields
are legal and ignored.  Anything else, or a data payload that is not JSON, is a
malformed stream and raises, naming the offending line.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from launchcard.errors import EndpointError

DONE = object()  # sentinel yielded for ``data: [DONE]``
_OTHER_FIELDS = ("event:", "id:", "retry:", ":")


def sse_event(raw: str, n: int = 1, *, where: str = "stream") -> dict[str, Any] | object | None:
    """One SSE line: its JSON event, DONE, or None for lines that carry no data."""
    line = raw.rstrip("\r\n")
    if not line or line.startswith(_OTHER_FIELDS):
        return None
    if not line.startswith("data:"):
        raise EndpointError(f"malformed SSE line {n}: not a 'data:' field ({line[:80]!r})", where=where,
                            fix="the server must send text/event-stream lines")
    payload = line[5:].strip()
    if payload == "[DONE]":
        return DONE
    try:
        event = json.loads(payload)
    except ValueError:
        raise EndpointError(f"malformed SSE line {n}: data is not JSON ({payload[:80]!r})", where=where,
                            fix="the server must send one JSON object per data line") from None
    if not isinstance(event, dict):
        raise EndpointError(f"malformed SSE line {n}: data is not a JSON object", where=where,
                            fix="the server must send one JSON object per data line")
    return event


def parse_sse(lines: Iterable[str], *, where: str = "stream") -> Iterator[dict[str, Any] | object]:
    """Yield each JSON event, then DONE if the server sent ``[DONE]``."""
    for n, raw in enumerate(lines, start=1):
        event = sse_event(raw, n, where=where)
        if event is not None:
            yield event
