"""`up` and `down` as library calls: start, wait until healthy, record, stop."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from launchcard.card import Frozen
from launchcard.errors import EndpointError, InputError
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
    if log.is_dir():  # unlink would raise IsADirectoryError: bad input, before anything starts
        raise InputError("is a folder, not a file", where=str(log), field="log",
                         fix="name a log file, e.g. --log .launchcard/server.log")
    if log.exists():
        log.unlink()
    started_at = datetime.now(UTC)
    proc: subprocess.Popen[bytes] | None = None
    saved = False
    try:
        with _uninterrupted():  # a Ctrl-C inside the spawn would lose the pid of a running server
            proc = spawn(spec.argv, spec.env, log)
        if on_started is not None:
            on_started(proc.pid)
        ready = wait_healthy(spec.endpoint, timeout_s=spec.ready_timeout_s, proc=proc, log=log, client=client)
        state = ServerState(pid=proc.pid, endpoint=spec.endpoint, argv=spec.argv, env=spec.env, log=str(log),
                            started_at=started_at, ready_seconds=round(ready, 2),
                            facts=read_startup_facts(log))
        if state_path is not None:
            state.save(state_path)
            saved = True
    except BaseException:
        if proc is not None:
            with _uninterrupted():
                stop_group(proc.pid, proc=proc, grace_s=10.0)
                if saved and state_path is not None:
                    state_path.unlink(missing_ok=True)
        raise
    return state


def stop_server(state_path: Path, *, grace_s: float = 20.0) -> ServerState | None:
    """Stop the server a state file describes and delete the file.

    Returns the state, or None when its process had already gone.
    """
    state = ServerState.load(state_path)
    was_running = alive(state.pid) and stop_group(state.pid, grace_s=grace_s)
    state_path.unlink(missing_ok=True)
    return state if was_running else None


class UpResult(Frozen):
    """What `up` did: the server it started, the capture holding its start-up
    facts, and, in the foreground, how it ended."""

    state: ServerState
    capture_id: int | None = None
    detached: bool = False
    exit_code: int | None = None  # the server's own exit status, when it exited by itself
    interrupted: bool = False  # Ctrl-C or SIGTERM stopped it


def check_not_running(state_path: Path) -> None:
    """Refuse to start a second server over the state file of a live one."""
    if not state_path.exists():
        return
    old = ServerState.load(state_path)
    if alive(old.pid):
        raise InputError(f"a server is already running (pid {old.pid}, {old.endpoint})", where=str(state_path),
                         fix="stop it with `launchcard down` or pass another --state")


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def _handled(handler: Callable[[int, FrameType | None], None]) -> Iterator[None]:
    """``handler`` for SIGINT and SIGTERM inside the block, the previous handlers after (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, handler) for s in _STOP_SIGNALS}
    try:
        yield
    finally:
        for s, old in previous.items():
            signal.signal(s, old)


def _interrupts() -> contextlib.AbstractContextManager[None]:
    """Ctrl-C (SIGINT) and SIGTERM raise KeyboardInterrupt while a server of ours runs.

    Installed explicitly, before the server is spawned: a process started from a non-interactive shell in the
    background inherits SIGINT *ignored*, and Python then leaves it ignored, so without this an `up` started
    that way could not be stopped by SIGINT at all.  The server gets default dispositions back at exec.
    """
    return _handled(_raise_interrupt)


@contextmanager
def _uninterrupted() -> Iterator[None]:
    """Hold SIGINT/SIGTERM for a moment that must not be cut short (spawning the server: its pid would be lost;
    stopping it: the group could be left running); a signal that came meanwhile interrupts as usual after it.

    Deferred by a recording handler, not by blocking the signals: a blocked mask would be inherited by the
    server through fork and exec, and it would then ignore our SIGTERM.
    """
    came: list[int] = []

    def note(signum: int, frame: FrameType | None) -> None:
        came.append(signum)

    with _handled(note):
        yield
    if came:
        signal.raise_signal(came[0])  # now to the handler it would have met (ours raises KeyboardInterrupt)


def _stop(pid: int, state_path: Path | None, grace_s: float) -> None:
    with _uninterrupted():
        stop_group(pid, grace_s=grace_s)
        if state_path is not None:
            state_path.unlink(missing_ok=True)


def wait_foreground(state: ServerState, state_path: Path | None, *, grace_s: float = 20.0,
                    on_stopping: Callable[[], None] | None = None) -> tuple[int | None, bool]:
    """Wait for the server (our child); Ctrl-C or SIGTERM stops its whole process
    group.  The group is stopped and the state file removed however it ends.
    Returns (the server's exit status or None, whether it was interrupted)."""
    code: int | None = None
    interrupted = False
    try:
        while True:
            try:
                pid, status = os.waitpid(state.pid, 0)
            except ChildProcessError:
                break
            if pid == state.pid:
                code = os.waitstatus_to_exitcode(status)
                break
    except KeyboardInterrupt:
        interrupted = True
        if on_stopping is not None:
            on_stopping()
    finally:
        _stop(state.pid, state_path, grace_s)
    return code, interrupted


def up(spec: LaunchSpec, *, log: Path, state_path: Path, detach: bool = False, card: str | None = None,
       catalog: Path | str | None = None, on_ready: Callable[[ServerState, int | None], None] | None = None,
       on_stopping: Callable[[], None] | None = None) -> UpResult:
    """`launchcard up`: start, wait until healthy, store the start-up facts on
    ``card`` (when given), then return at once (``detach``) or serve in the
    foreground until the server exits or Ctrl-C / SIGTERM stops it.

    ``on_ready(state, capture_id)`` runs once the server is healthy and its
    facts are stored; ``on_stopping()`` when an interrupt starts the stop.
    """
    from launchcard.live._card import record_facts

    check_not_running(state_path)
    with _interrupts():  # before the spawn: from here on, no moment where a Ctrl-C is lost or orphans the server
        srv = start_server(spec, log=log, state_path=state_path)  # stops the group itself if interrupted
        try:
            cid = record_facts(card, srv.facts, catalog=catalog, captured_by="launchcard up") \
                if card and srv.facts else None
            if on_ready is not None:
                on_ready(srv, cid)
        except KeyboardInterrupt:
            if detach:
                raise  # the server was asked to outlive us
            # interrupted between "healthy" and the wait: the same stop as during the wait
            if on_stopping is not None:
                on_stopping()
            _stop(srv.pid, state_path, 10.0)
            return UpResult(state=srv, interrupted=True)
        except BaseException:
            if not detach:
                _stop(srv.pid, state_path, 10.0)
            raise
        if detach:
            return UpResult(state=srv, capture_id=cid, detached=True)
        code, interrupted = wait_foreground(srv, state_path, on_stopping=on_stopping)
    return UpResult(state=srv, capture_id=cid, exit_code=code, interrupted=interrupted)
