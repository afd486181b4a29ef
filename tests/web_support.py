"""A real ``launchcard serve`` process over a freshly ingested corpus catalog, for HTTP and browser tests; and what
the in-process web tests share (the corpus, the benchmark fixtures, the published schemas)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from conftest import ROOT, SHARED

CORPUS = SHARED / "corpus"
BENCHMARKS = ROOT / "tests" / "fixtures" / "sglang-benchmarks"
SCHEMAS = ROOT / "src" / "launchcard" / "data" / "schemas"
GLM = "zai-org/GLM-5.3-Flash"
CHROMIUM = Path("/usr/bin/chromium")


def require_browser() -> None:
    """Skip (fail where CI requires the fixtures) unless Debian's Chromium and Playwright are installed."""
    import pytest

    if CHROMIUM.exists():
        try:
            import playwright  # noqa: F401
        except ImportError:
            pass
        else:
            return
    why = "Debian chromium and playwright are needed (scripts/setup.d installs them)"
    if os.environ.get("LAUNCHCARD_REQUIRE_LIVE"):
        pytest.fail(why)
    pytest.skip(why)


def schema(name: str) -> dict[str, object]:
    """A published JSON schema (``data/schemas/<name>.schema.json``), to validate a JSON twin against."""
    return json.loads((SCHEMAS / f"{name}.schema.json").read_text())


def ingest(catalog: Path, corpus: Path = CORPUS) -> None:
    res = subprocess.run([sys.executable, "-m", "launchcard.cli", "ingest", "--corpus", str(corpus), "--catalog",
                          str(catalog), "--quiet"], capture_output=True, text=True, timeout=300, check=False)
    assert res.returncode == 0, res.stderr


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(catalog: Path, *, corpus: Path | None = CORPUS, extra: Sequence[str] = (),
            log: Path | None = None) -> Iterator[str]:
    """``launchcard serve`` on a free port until the block ends; yields its base URL once it answers."""
    import httpx

    port = free_port()
    argv = [sys.executable, "-m", "launchcard.cli", "serve", "--catalog", str(catalog), "--port", str(port),
            "--benchmarks", str(ROOT / "tests" / "fixtures" / "sglang-benchmarks"), *extra]
    if corpus is not None:
        argv += ["--corpus", str(corpus)]
    out = log.open("w") if log is not None else subprocess.DEVNULL
    proc = subprocess.Popen(argv, stdout=out, stderr=out)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if httpx.get(base + "/index.json", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or proc.poll() is not None:
                why = log.read_text() if log is not None and log.exists() else ""
                raise AssertionError(f"launchcard serve did not come up (exit {proc.poll()}): {why[-2000:]}")
            time.sleep(0.2)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        if log is not None:
            out.close()  # type: ignore[union-attr]
