"""The Typer application object, shared by every command module."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="launchcard",
    help="How exactly to launch an open-weight LLM on your hardware, and why.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain help: rich's markdown renderer costs ~0.3 s of start-up on every --help.
    rich_markup_mode=None,
    # click (8.2+) already names the close commands in its "No such command" error; typer's own suggestion
    # repeated them ("Did you mean 'plan'? Did you mean 'plan'?")
    suggest_commands=False,
)


@app.callback()
def _root() -> None:
    """How exactly to launch an open-weight LLM on your hardware, and why."""
