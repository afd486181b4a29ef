"""`up` and `down` as library calls: start, wait until healthy, record, stop."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from launchcard.errors import EndpointError
from launchcard.live._process import alive, spawn, stop_group
from launchcard.live._spec import LaunchSpec, ServerState
from launchcard.live._startup import read_startup_facts

if TYPE_CHECKING:
    import httpx


def _tail(log: Path, lines: int = 8) -> str:
    try:
        text = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    return " | ".join(line.strip() for line in text[-lines:] if line.strip())


def wait_healthy(endpoint: str, *, timeout_s: float, proc: subprocess.Popen[bytes] | None = None,
                 log: Path | None = None, client: httpx.Client | None = None,
                 poll_s: float = 1.0) -> float:
    """Poll ``/health`` until 200; seconds waited.  Fails fast if the process dies."""
    import httpx

    own = client is None
    http = client or httpx.Client(timeout=5.0)
    began = time.monotonic()
    last = "no answer yet"
    try:
        while True:
            if proc is not None and proc.poll() is not None:
                raise EndpointError(
                    f"server exited with code {proc.returncode} before it was healthy",
                    where=str(log) if log else endpoint,
                    fix=f"read the log; last lines: {_tail(log) if log else '?'}")
            try:
                resp = http.get(f"{endpoint}/health")
                if resp.status_code == 200:
                    return time.monotonic() - began
                last = f"HTTP {resp.status_code}"
            except httpx.HTTPError as exc:
                last = type(exc).__name__
            if time.monotonic() - began > timeout_s:
                raise EndpointError(
                    f"/health not ready within the ready timeout of {timeout_s:g}s (last: {last})",
                    where=f"{endpoint}/health",
                    fix="raise --timeout (or VLLM_ENGINE_READY_TIMEOUT_S in the plan) or read the log"
                        + (f" {log}" if log else ""))
            time.sleep(poll_s)
    finally:
        if own:
            http.close()


def start_server(spec: LaunchSpec, *, log: Path, state_path: Path | None = None,
                 client: httpx.Client | None = None,
                 on_started: Callable[[int], None] | None = None) -> ServerState:
    """Launch spec, wait for health, read start-up facts; the server keeps running.

    Anything that goes wrong before the server is healthy, Ctrl-C included,
    stops the whole process group before the error propagates.
    """
    if log.exists():
        log.unlink()
    started_at = datetime.now(timezone.utc)
    proc = spawn(spec.argv, spec.env, log)
    if on_started is not None:
        on_started(proc.pid)
    try:
        ready = wait_healthy(spec.endpoint, timeout_s=spec.ready_timeout_s, proc=proc, log=log, client=client)
    except BaseException:
        stop_group(proc.pid, proc=proc, grace_s=10.0)
        raise
    state = ServerState(pid=proc.pid, endpoint=spec.endpoint, argv=spec.argv, env=spec.env, log=str(log),
                        started_at=started_at, ready_seconds=round(ready, 2),
                        facts=read_startup_facts(log))
    if state_path is not None:
        state.save(state_path)
    return state


def stop_server(state_path: Path, *, grace_s: float = 20.0) -> ServerState | None:
    """Stop the server a state file describes and delete the file.

    Returns the state, or None when its process had already gone.
    """
    state = ServerState.load(state_path)
    was_running = alive(state.pid) and stop_group(state.pid, grace_s=grace_s)
    state_path.unlink(missing_ok=True)
    return state if was_running else None
