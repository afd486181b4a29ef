"""The one way commands make a rich console: nothing wraps off a terminal.

On a terminal rich fits output to the window.  Off one (a pipe, a file) it
would fold at 80 columns and cut URLs, paths and hashes mid-word, so there the
console is as wide as any line and soft-wraps (never inserts a newline).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

# wider than any line launchcard prints: rich lays tables out to their content, never to this width
UNWRAPPED_WIDTH = 100_000


def console(*, stderr: bool = False) -> Console:
    from rich.console import Console

    probe = Console(stderr=stderr)
    if probe.is_terminal:
        return probe
    return Console(stderr=stderr, width=UNWRAPPED_WIDTH, soft_wrap=True)
