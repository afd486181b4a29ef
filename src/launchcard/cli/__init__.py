"""Thin command line over the library.  The library never prints; this does.

Each command lives in its own module and registers itself on ``app``.  Heavy
libraries are imported inside commands, never here, so ``--help`` is instant.
"""

from __future__ import annotations

import sys

# each command module registers itself on ``app`` when imported
from launchcard.cli import (  # noqa: F401
    _card,
    _check,
    _diff,
    _drift,
    _emit,
    _facts,
    _flags,
    _ingest,
    _live,
    _memory,
    _page,
    _plan,
    _predict,
    _resolve,
    _schema,
    _serve,
    _sweep,
    _sync,
)
from launchcard.cli._app import app


def main(argv: list[str] | None = None) -> int:
    """Console entry point: every failure is one line on stderr; exit 2 bad input, 1 failed check or bug."""
    import os

    import click

    from launchcard.cli._errors import error_line, print_line, unexpected_line, usage_line
    from launchcard.errors import LaunchcardError

    try:
        result = app(args=argv, prog_name="launchcard", standalone_mode=False)
    except LaunchcardError as exc:
        print_line(error_line(exc, sys.argv[1:] if argv is None else argv))
        return exc.exit_code
    except click.exceptions.NoArgsIsHelpError as exc:  # bare `launchcard`: the help, as click prints it
        print(exc.ctx.get_help() if exc.ctx else exc.format_message())
        return 2
    except click.UsageError as exc:
        print_line(usage_line(exc.format_message(), exc.ctx.info_name if exc.ctx and exc.ctx.parent else None))
        return 2
    except click.ClickException as exc:
        print_line(f"launchcard: error: {' '.join(exc.format_message().split())}")
        return exc.exit_code
    except click.exceptions.Abort:
        print_line("launchcard: interrupted")
        return 130
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except KeyboardInterrupt:
        print_line("launchcard: interrupted")
        return 130
    except Exception as exc:  # last resort: one line, never a traceback (LAUNCHCARD_DEBUG shows it)
        if os.environ.get("LAUNCHCARD_DEBUG"):
            raise
        print_line(unexpected_line(exc))
        return 1
    # standalone_mode=False: click returns a command's exit code (typer.Exit) instead of exiting
    return result if isinstance(result, int) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
