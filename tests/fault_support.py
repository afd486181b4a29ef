"""Misbehaving endpoints on real loopback sockets, for the bounded-time tests.

Each mode is one way a server fails in the field:

- ``hang``: accepts the connection and never answers anything;
- ``reset``: reads the request, then resets the connection (RST);
- ``not_http``: answers every request with bytes that are not HTTP;
- ``post_hang``: answers GETs like vLLM, never answers a POST;
- ``garbage_sse``: answers GETs like vLLM, POSTs with 200 and a garbage event stream;
- ``http500``: answers GETs like vLLM, POSTs with HTTP 500;
- ``timed_sse``: a well-behaved stream with known timing: first token after
  0.2 s, the second 0.1 s later, then the usage chunk, then 0.3 s before
  ``[DONE]`` (which is not latency).

``refused_endpoint()`` is a port where nothing listens.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress

MODELS = json.dumps({"data": [{"id": "tiny", "max_model_len": 512}]}).encode()


def refused_endpoint() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"  # closed again: connecting is refused


def _read_request(conn: socket.socket) -> tuple[str, str] | None:
    """(method, path) of the next request on conn, its body consumed; None at EOF."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        data = conn.recv(65536)
        if not data:
            return None
        buf += data
    head, _, body = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, path = lines[0].split(" ")[:2]
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    while len(body) < length:
        data = conn.recv(65536)
        if not data:
            return None
        body += data
    return method, path


def _answer(status: int, body: bytes, ctype: str = "application/json") -> bytes:
    return (f"HTTP/1.1 {status} X\r\ncontent-type: {ctype}\r\ncontent-length: {len(body)}\r\n\r\n").encode() + body


def _chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


class FaultServer:
    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.2)
        self.endpoint = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.conns: list[socket.socket] = []
        self.accepted = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.conns.append(conn)
            self.accepted += 1
            if self.mode != "hang":
                threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            while not self.stop.is_set():
                req = _read_request(conn)
                if req is None:
                    return
                method, path = req
                if self.mode == "reset":
                    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    conn.close()
                    return
                if self.mode == "not_http":
                    conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n\r\ngarbage\r\n")
                    conn.close()
                    return
                if method == "GET":
                    body = MODELS if path == "/v1/models" else b'{"version": "0.32.0"}' if path == "/version" else b""
                    conn.sendall(_answer(200, body))
                    continue
                if path == "/tokenize":
                    conn.sendall(_answer(404, b'{"detail": "Not Found"}'))
                    continue
                if self.mode == "post_hang":
                    self.stop.wait()
                    return
                if self.mode == "http500":
                    conn.sendall(_answer(500, b'{"error": "engine dead"}'))
                    continue
                if self.mode == "timed_sse":
                    conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                                 b"transfer-encoding: chunked\r\n\r\n")
                    time.sleep(0.2)
                    conn.sendall(_chunk(b'data: {"choices": [{"text": "a"}]}\n\n'))
                    time.sleep(0.1)
                    conn.sendall(_chunk(b'data: {"choices": [{"text": "b"}]}\n\n')
                                 + _chunk(b'data: {"choices": [], "usage": {"prompt_tokens": 8, '
                                          b'"completion_tokens": 2}}\n\n'))
                    time.sleep(0.3)
                    conn.sendall(_chunk(b"data: [DONE]\n\n") + _chunk(b""))
                    continue
                # garbage_sse
                conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
                             + _chunk(b"data: {\"choices\": [{\"text\": \"a\"}]}\n\n") + _chunk(b"nonsense {{{\n\n")
                             + _chunk(b""))
        except OSError:
            return

    def close(self) -> None:
        self.stop.set()
        self.thread.join(2)
        for c in self.conns:
            with suppress(OSError):
                c.close()
        self.sock.close()


@contextmanager
def fault_server(mode: str) -> Iterator[str]:
    with running(mode) as srv:
        yield srv.endpoint


@contextmanager
def running(mode: str) -> Iterator[FaultServer]:
    srv = FaultServer(mode)
    try:
        yield srv
    finally:
        srv.close()
