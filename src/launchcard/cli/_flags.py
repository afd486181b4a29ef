"""``launchcard flags capture``: write an engine's flag spec from its own parser.

The engine lives in its own environment (vLLM's pins must never touch
launchcard's venv), so this command runs that environment's Python on
``launchcard.flags.capture``, which imports only the standard library and
the engine.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import typer

from launchcard.cli._app import app

flags_app = typer.Typer(help="Capture and inspect engine flag specifications.", no_args_is_help=True)
app.add_typer(flags_app, name="flags")

_DEFAULT_VENVS = {"vllm": ".cache/vllm-venv", "sglang": ".cache/sglang-venv"}


@flags_app.command("capture")
def capture(
    engine: str = typer.Option(..., "--engine", help="vllm or sglang"),
    out: Path = typer.Option(None, "--out", help="Spec file to write (default: stdout)."),
    python: Path | None = typer.Option(
        None, "--python", help="Python of the engine's environment (default: .cache/<engine>-venv/bin/python)."
    ),
) -> None:
    """Introspect ENGINE's own server argument parser and write its flag spec (JSON)."""
    from launchcard.errors import InputError

    if engine not in _DEFAULT_VENVS:
        raise InputError(f"unknown engine {engine!r}", where="--engine", fix="use vllm or sglang")
    if python is None:
        candidate = Path(_DEFAULT_VENVS[engine]) / "bin" / "python"
        python = candidate if candidate.exists() else Path(sys.executable)
    if not python.exists():
        raise InputError(f"no such interpreter ({python})", where="--python",
                         fix=f"point it at the {engine} environment's python")
    src = str(Path(__file__).resolve().parents[2])  # the directory holding the launchcard package
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH", "")) if p)}
    cmd = [str(python), "-m", "launchcard.flags.capture", "--engine", engine]
    if out is not None:
        cmd += ["--out", str(out)]
    done = subprocess.run(cmd, env=env, check=False)
    if done.returncode:
        raise typer.Exit(done.returncode)


@flags_app.command("list")
def list_specs() -> None:
    """List the shipped flag specs (engine and captured versions)."""
    from launchcard.flags import shipped_index

    for engine, versions in shipped_index().items():
        typer.echo(f"{engine}: {', '.join(versions)}")
