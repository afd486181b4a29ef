"""Thin command line over the library.  The library never prints; this does.

Each command lives in its own module and registers itself on ``app``.  Heavy
libraries are imported inside commands, never here, so ``--help`` is instant.
"""

from __future__ import annotations

import sys

import typer

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
    import gc
    import os

    # A command allocates tens of thousands of container objects that live to its end (parsed documents,
    # flag specs, cards): at CPython's default (700) the cyclic collector ran ~190 times over them in a cold
    # `card`, ~20 ms; refcounting still frees everything acyclic at once, so memory stays flat.
    gc.set_threshold(10_000, 10, 10)

    import click

    from launchcard.cli._errors import error_line, print_line, unexpected_line, usage_line
    from launchcard.errors import LaunchcardError

    try:
        result = only_named(argv if argv is not None else sys.argv[1:])(args=argv, prog_name="launchcard",
                                                                         standalone_mode=False)
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


def only_named(argv: list[str]) -> typer.Typer:
    """``app`` holding only the command ``argv`` names (the whole ``app`` when it names none exactly).

    Typer turns every registered command into a click command (signature, options, help) on each run:
    ~40 ms for 23 commands, of which a run uses one.  The group keeps its callback, so usage lines,
    ``COMMAND --help`` and errors read as with the whole app; ``--help`` and typos get the whole app.
    """
    import copy

    from typer.main import get_command_name

    name = argv[0] if argv and not argv[0].startswith("-") else None
    commands = [c for c in app.registered_commands
                if (c.name or get_command_name(c.callback.__name__ if c.callback else "")) == name]
    groups = [g for g in app.registered_groups if g.name == name]
    if name is None or len(commands) + len(groups) != 1:
        return app
    one = copy.copy(app)
    one.registered_commands, one.registered_groups = commands, groups
    return one


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
