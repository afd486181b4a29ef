"""Shared helpers for the live tests: the tiny model served by vLLM on the CPU.

Built by scripts/setup.d/50-vllm-env.sh.  Without it the live tests skip,
unless LAUNCHCARD_REQUIRE_LIVE is set (CI), where they fail instead.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VLLM_PY = ROOT / ".cache" / "vllm-venv" / "bin" / "python"
TINY = ROOT / ".cache" / "tiny-model" / "model"


def require_live() -> None:
    missing = [str(p) for p in (VLLM_PY, TINY / "config.json") if not p.exists()]
    if not missing:
        return
    why = f"vLLM test server environment missing ({', '.join(missing)}); run scripts/setup.d/50-vllm-env.sh"
    if os.environ.get("LAUNCHCARD_REQUIRE_LIVE"):
        pytest.fail(why + " (LAUNCHCARD_REQUIRE_LIVE is set)")
    pytest.skip(why)


def free_port() -> int:
    """A free loopback port in 18000-18099 (the range set aside for test servers)."""
    for port in range(18000, 18100):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    pytest.fail("no free port in 18000-18099 for the test server")


def cli(*args: str, timeout: float = 900, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "launchcard.cli", *args], check=False, capture_output=True, text=True,
                          timeout=timeout, cwd=cwd)


@dataclass
class Live:
    endpoint: str
    state: Path
    log: Path
    catalog: Path
    card: str
    up_output: str


def serve_argv(port: int, *, parsers: bool) -> list[str]:
    argv = [str(VLLM_PY), "-m", "vllm.entrypoints.openai.api_server", "--model", str(TINY),
            "--served-model-name", "tiny", "--port", str(port), "--max-model-len", "512", "--dtype", "float32",
            "--enforce-eager"]
    if parsers:
        argv += ["--enable-auto-tool-choice", "--tool-call-parser", "hermes", "--reasoning-parser", "deepseek_r1"]
    return argv


def start(tmp: Path, *, parsers: bool) -> Live:
    port = free_port()
    state, log, catalog = tmp / "up.json", tmp / "server.log", tmp / "catalog.sqlite3"
    card = "launchcard-test/tiny"
    res = cli("up", "--detach", "--state", str(state), "--log", str(log), "--catalog", str(catalog),
              "--card", card, "--timeout", "600", "--env", "VLLM_CPU_KVCACHE_SPACE=1",
              "--", *serve_argv(port, parsers=parsers))
    if res.returncode != 0:
        tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
        pytest.fail(f"launchcard up failed ({res.returncode}): {res.stderr}\n--- log tail ---\n{tail}")
    return Live(endpoint=f"http://127.0.0.1:{port}", state=state, log=log, catalog=catalog, card=card,
                up_output=res.stdout + res.stderr)


def stop(live: Live) -> subprocess.CompletedProcess[str]:
    return cli("down", "--state", str(live.state), timeout=120)
