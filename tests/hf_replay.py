"""A local HTTP server replaying recorded Hugging Face Hub responses (tests/fixtures/hf/).

The real ``huggingface_hub`` client talks to it over real HTTP on 127.0.0.1
with ``HF_ENDPOINT``/``endpoint=`` pointed at it.  Special repos make errors:
``err/http-500`` answers 500, ``err/missing-sha`` answers model info without
``sha``, ``err/no-siblings`` without ``siblings``.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures" / "hf"
CORPUS_HF = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "hf"

_API = re.compile(r"^/api/models/([^/]+/[^/?]+)(?:/revision/[^?]+)?(?:\?.*)?$")
_RESOLVE = re.compile(r"^/([^/]+/[^/]+)/resolve/([^/]+)/(.+?)(?:\?.*)?$")


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:  # keep test output clean
        pass

    def _send(self, status: int, body: bytes, ctype: str = "application/json", headers: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _error(self, status: int, message: str, code: str | None = None) -> None:
        headers = {"X-Error-Message": message}
        if code:
            headers["X-Error-Code"] = code
        self._send(status, json.dumps({"error": message}).encode(), headers=headers)

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        m = _API.match(self.path)
        if m:
            repo = m.group(1)
            if repo == "err/http-500":
                return self._error(500, "Internal Error")
            info_file = FIXTURES / repo / "model_info.json"
            if repo.startswith("err/"):
                info = json.loads((FIXTURES / "zai-org/GLM-5.3-Flash/model_info.json").read_text())
                info["id"] = repo
                if repo == "err/missing-sha":
                    info.pop("sha")
                if repo == "err/no-siblings":
                    info.pop("siblings")
                return self._send(200, json.dumps(info).encode())
            if not info_file.is_file():
                return self._error(404, "Repository not found", "RepoNotFound")
            return self._send(200, info_file.read_bytes())
        m = _RESOLVE.match(self.path)
        if m:
            repo, _rev, name = m.groups()
            for base in (FIXTURES, CORPUS_HF):
                f = base / repo / name
                if f.is_file():
                    return self._send(200, f.read_bytes(), headers={"X-Repo-Commit": _rev, "ETag": '"fixture"'})
            return self._error(404, "Entry not found", "EntryNotFound")
        return self._error(404, "Not found")


class ReplayServer:
    def __init__(self) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> ReplayServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
