"""CPU time of processes around a piece of work: the one loop the host-cost benches share
(bench/measure_host_stream.py's bursts, bench/measure_chat_request.py's closed loops)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    """User + system seconds of every thread of ``pid`` so far (``/proc/PID/stat`` utime + stime)."""
    st = Path(f"/proc/{pid}/stat").read_text()
    f = st[st.rindex(")") + 2:].split()
    return (int(f[11]) + int(f[12])) / TICK


def cpu_during(pids: dict[str, int], work: Callable[[], T]) -> tuple[T, float, dict[str, float]]:
    """Run ``work``: its result, the wall seconds it took and the CPU seconds each of ``pids`` spent meanwhile."""
    c0 = {k: cpu_s(p) for k, p in pids.items()}
    t0 = time.monotonic()
    out = work()
    wall = time.monotonic() - t0
    return out, wall, {k: cpu_s(p) - c0[k] for k, p in pids.items()}
