"""Start a server as its own process group; stop the whole group.

vLLM forks engine-core and worker processes.  Killing only the parent leaves
them holding memory and the port, so the server runs in a new session and is
stopped with killpg: SIGTERM first (vLLM shuts its children down cleanly),
SIGKILL for whatever is left after the grace period.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

from launchcard.errors import EndpointError, InputError


def spawn(argv: tuple[str, ...], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """Start argv with env added to ours, stdout+stderr appended to log."""
    if not argv:
        raise InputError("no command to launch", where="launchcard up",
                         fix="pass resolve options or `-- COMMAND ...`")
    try:
        log.parent.mkdir(parents=True, exist_ok=True)
        fh = open(log, "ab")  # noqa: SIM115 (closed by the with below)
    except OSError as exc:  # before anything starts: a log path under a file, a folder, no permission
        raise InputError(f"cannot write the server log ({exc.strerror})", where=str(log), field="log",
                         fix="give a log file in a writable folder") from None
    full_env = {**os.environ, **env, "PYTHONUNBUFFERED": "1"}
    with fh:
        try:
            return subprocess.Popen(list(argv), env=full_env, stdout=fh, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as exc:
            raise InputError(f"cannot start the server ({exc.strerror})", where=f"argv[0]={argv[0]!r}",
                             fix="check the command exists and is executable") from None


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def group_members(pgid: int) -> list[int] | None:
    """Live (non-zombie) members of a process group, from /proc; None where there is no /proc."""
    proc_dir = Path("/proc")
    if not proc_dir.is_dir():
        return None
    out = []
    for entry in proc_dir.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            out.append(int(entry.name))
    return out


def _group_alive(pgid: int) -> bool:
    """Any non-zombie member left?  (A zombie leader whose parent is gone may
    never be reaped in a container, so kill(0) alone would wait forever.)"""
    members = group_members(pgid)
    if members is not None:
        return bool(members)
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stop_group(pid: int, *, grace_s: float = 20.0, proc: subprocess.Popen[bytes] | None = None) -> bool:
    """Stop the process group led by pid; True when something was running."""
    try:
        pgid = os.getpgid(pid)
    except ProcessLookupError:
        # The leader is gone; its children may still be running in its group
        # (we started it as a session leader, so the group id is its pid).
        pgid = pid
        if not _group_alive(pgid):
            return False
    if pgid != pid:
        # Never signal a group we did not create (it could be our own shell's).
        raise EndpointError("process is not the leader of its own group", where=f"pid {pid}",
                            fix="stop it by hand; launchcard only stops servers it started")
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        if proc is not None:
            proc.poll()
        if not _group_alive(pgid):
            break
        time.sleep(0.2)
    else:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
    if proc is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)
    return True
