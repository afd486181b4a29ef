"""Thin command line over the library.  The library never prints; this does.

Each command lives in its own module and registers itself on ``app``.  Heavy
libraries are imported inside commands, never here, so ``--help`` is instant.
"""

from __future__ import annotations

import sys

from launchcard.cli._app import app
from launchcard.cli import _facts, _resolve, _schema  # noqa: F401  (registration)
from launchcard.cli import _card, _diff, _ingest  # noqa: F401  (registration: multi-source cards)
from launchcard.cli import _emit  # noqa: F401  (registration)
from launchcard.cli import _memory  # noqa: F401  (registration: memory planner)
from launchcard.cli import _live  # noqa: F401  (registration: up, down, verify, bench)
from launchcard.cli import _check, _flags  # noqa: F401  (registration: flag checking)
from launchcard.cli import _page, _serve  # noqa: F401  (registration: recipe index page, web catalog)


def main(argv: list[str] | None = None) -> int:
    """Console entry point: bad input becomes one line on stderr, exit code 2."""
    from launchcard.errors import LaunchcardError

    try:
        app(args=argv, prog_name="launchcard")
    except LaunchcardError as exc:
        print(f"launchcard: error: {exc.one_line()}", file=sys.stderr)
        return exc.exit_code
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except KeyboardInterrupt:
        print("launchcard: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
