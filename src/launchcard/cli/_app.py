"""The Typer application object, shared by every command module."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="launchcard",
    help="How exactly to launch an open-weight LLM on your hardware, and why.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """How exactly to launch an open-weight LLM on your hardware, and why."""
