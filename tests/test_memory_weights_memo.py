"""memory._weights remembers its splits across batch limits (a plan search plans one model at each limit): the
remembered value is the one computed for the same settings, also when threads (the web server's) interleave."""

from __future__ import annotations

import sys
import threading
from dataclasses import replace

from launchcard.memory import Settings
from launchcard.memory._weights import without_batch_limit


def test_the_limit_free_copy_is_of_the_settings_asked_under_threads() -> None:
    settings = [replace(Settings(), tp=tp, max_num_seqs=seqs) for tp in (1, 2, 4, 8) for seqs in (16, 256)]
    wrong: list[tuple[Settings, Settings]] = []

    def ask(s: Settings) -> None:
        for _ in range(3000):
            got = without_batch_limit(s)
            if got != replace(s, max_num_seqs=None):
                wrong.append((s, got))
                return

    threads = [threading.Thread(target=ask, args=(s,)) for s in settings]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads between almost every bytecode: the window is two of them
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert not wrong


def test_the_same_settings_asked_twice_give_one_copy() -> None:
    s = replace(Settings(), tp=2, max_num_seqs=64)
    assert without_batch_limit(s) is without_batch_limit(s)
    assert without_batch_limit(s).max_num_seqs is None and without_batch_limit(s).tp == 2
