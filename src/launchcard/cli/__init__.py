"""Thin command line over the library.  The library never prints; this does.

Each command lives in its own module and registers itself on ``app`` when imported.  A run imports only the
module of the command it names (``COMMANDS``); ``app`` itself (``from launchcard.cli import app``), ``--help``
and anything that names no command load them all.  Heavy libraries are imported inside commands, never here,
so ``--help`` is instant.
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import typer

# command (or command group) -> the module that registers it; tests check it against the registrations
COMMANDS: dict[str, str] = {
    "bench": "_live", "card": "_card", "check": "_check", "diff": "_diff", "down": "_live", "drift": "_drift",
    "emit": "_emit", "facts": "_facts", "flags": "_flags", "ingest": "_ingest", "memory": "_memory",
    "page": "_page", "plan": "_plan", "predict": "_predict", "resolve": "_resolve", "schema": "_schema",
    "serve": "_serve", "sweep": "_sweep", "sync": "_sync", "up": "_live", "verify": "_live",
}


def _whole_app() -> typer.Typer:
    """``app`` with every command registered, listed by module name then as each module declares them (the
    same order whichever command an earlier run in this process loaded first)."""
    import copy

    modules = sorted(set(COMMANDS.values()))
    for module in modules:
        importlib.import_module(f"launchcard.cli.{module}")
    from launchcard.cli._app import app

    whole = copy.copy(app)
    whole.registered_commands = sorted(  # stable: a module's commands keep their order
        app.registered_commands, key=lambda c: modules.index(c.callback.__module__.rsplit(".", 1)[1])
        if c.callback is not None else len(modules))
    return whole


def __getattr__(name: str) -> Any:  # PEP 562: ``launchcard.cli.app`` is the whole application
    if name == "app":
        return _whole_app()
    raise AttributeError(f"module 'launchcard.cli' has no attribute {name!r}")


# Commands that build one model's card and end: their cyclic garbage is a few thousand objects in all (4,430
# in a cold `page`), while the collector's passes over the ~10^5 objects they keep alive cost ~40 ms, 8-10 %
# of a cold run; they run with the cyclic collector off (refcounting still frees everything acyclic at once).
# predict, memory and plan leave ~400 cyclic objects (argument parsing; a plan search itself none:
# plansearch.search pauses the collector too). Commands that walk a corpus, a batch or serve keep it on.
_NO_CYCLIC_GC = frozenset({"card", "page", "predict", "memory", "plan"})


def main(argv: list[str] | None = None) -> int:
    """Console entry point: every failure is one line on stderr; exit 2 bad input, 1 failed check or bug."""
    import gc

    words = argv if argv is not None else sys.argv[1:]
    options = sys.modules.get("launchcard.cli._options")  # loaded by an earlier command of this process
    if options is not None:
        options.WARNED.clear()  # each command says its warnings once, and every command says them
    off = bool(words) and words[0] in _NO_CYCLIC_GC and gc.isenabled()
    if off:
        gc.disable()
    try:
        return _main(argv)
    finally:
        if off:  # a caller in the same process (tests, an embedding program) gets its collector back
            gc.enable()


def _main(argv: list[str] | None) -> int:
    import errno
    import gc
    import os

    # A command allocates tens of thousands of container objects that live to its end (parsed documents,
    # flag specs, cards): at CPython's default (700) the cyclic collector ran ~190 times over them in a cold
    # `card`, ~20 ms; refcounting still frees everything acyclic at once, so memory stays flat.
    gc.set_threshold(10_000, 10, 10)

    import click

    from launchcard.cli._errors import error_line, name_too_long_line, print_line, unexpected_line, usage_line
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
        # the whole path of a subcommand (`flags capture`), whose help `launchcard capture --help` is not
        path = " ".join(exc.ctx.command_path.split()[1:]) if exc.ctx and exc.ctx.parent else None
        print_line(usage_line(exc.format_message(), path or None))
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
        if isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG:  # a path typed too long: bad input
            print_line(name_too_long_line(exc, sys.argv[1:] if argv is None else argv))
            return 2
        if os.environ.get("LAUNCHCARD_DEBUG"):
            raise
        print_line(unexpected_line(exc))
        return 1
    # standalone_mode=False: click returns a command's exit code (typer.Exit) instead of exiting
    if result == 130:  # typer turns Ctrl-C (KeyboardInterrupt) into a silent Exit(130); no command exits 130
        print_line("launchcard: interrupted")
    return result if isinstance(result, int) else 0


def only_named(argv: list[str]) -> typer.Typer:
    """The application holding only the command ``argv`` names (the whole app when it names none exactly).

    Only that command's module is imported, and typer turns only that command into a click command (it
    converts every registered one on each run: ~40 ms for 23 commands, of which a run uses one).  The group
    keeps its callback, so usage lines, ``COMMAND --help`` and errors read as with the whole app; ``--help``
    and typos get the whole app.
    """
    import copy

    from typer.main import get_command_name

    name = argv[0] if argv and not argv[0].startswith("-") else None
    module = COMMANDS.get(name or "")
    if module is None:
        return _whole_app()
    importlib.import_module(f"launchcard.cli.{module}")
    from launchcard.cli._app import app

    commands = [c for c in app.registered_commands
                if (c.name or get_command_name(c.callback.__name__ if c.callback else "")) == name]
    groups = [g for g in app.registered_groups if g.name == name]
    if len(commands) + len(groups) != 1:
        return _whole_app()
    one = copy.copy(app)
    one.registered_commands, one.registered_groups = commands, groups
    return one


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
