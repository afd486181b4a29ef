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
from typing import Annotated

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
    if python.is_dir() or not os.access(python, os.X_OK):
        raise InputError(f"not an executable file ({python})", where="--python",
                         fix=f"point it at the {engine} environment's python (e.g. .venv/bin/python)")
    if out is not None:  # asked before the engine is imported (seconds), as every --out file is
        from launchcard.cli._outfile import check_out_file

        check_out_file(out, what="spec file")
    src = str(Path(__file__).resolve().parents[2])  # the directory holding the launchcard package
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH", "")) if p)}
    cmd = [str(python), "-m", "launchcard.flags.capture", "--engine", engine]
    if out is not None:
        cmd += ["--out", str(out)]
    try:
        done = subprocess.run(cmd, env=env, check=False)
    except OSError as exc:  # e.g. an executable that is no program this system runs (Exec format error)
        raise InputError(f"cannot run {python} ({exc.strerror})", where="--python",
                         fix=f"point it at the {engine} environment's python") from None
    if done.returncode:
        raise typer.Exit(done.returncode)


@flags_app.command("list")
def list_specs() -> None:
    """List the shipped flag specs (engine and captured versions)."""
    from launchcard.flagspec import shipped_index

    for engine, versions in shipped_index().items():
        typer.echo(f"{engine}: {', '.join(versions)}")


@flags_app.command("range")
def flag_range(
    names: Annotated[list[str], typer.Argument(help="Flags (--x) or environment variables (VLLM_X).")],
    engine: Annotated[str, typer.Option("--engine", help="vllm or sglang")] = "vllm",
) -> None:
    """Which captured releases accept each flag (or read each variable), its deprecation and successor.

    Put flags after `--`: launchcard flags range -- --disable-log-requests VLLM_USE_V1
    """
    from launchcard.errors import InputError
    from launchcard.flags import env_ranges, flag_ranges, no_successor, successor
    from launchcard.flagspec import shipped_index

    if engine not in shipped_index():
        raise InputError(f"no captured flag specs for engine {engine!r}", where="--engine",
                         fix=f"use one of: {', '.join(shipped_index())}")
    for name in names:
        r = (flag_ranges(engine) if name.startswith("-") else env_ranges(engine)).get(name)
        if r is None:
            typer.echo(f"{name}: not in any captured {engine} release ({', '.join(shipped_index()[engine])})")
            continue
        parts = [f"{name}: {engine} {r.span()} ({len(r.versions)} of {len(r.captured)} captured releases)"]
        idx = [r.captured.index(v) for v in r.versions]
        contiguous = idx == list(range(idx[0], idx[-1] + 1))
        if r.first != r.captured[0]:
            parts.append(f"added in {r.first}")
        if r.removed_in:
            parts.append(f"removed in {r.removed_in}")
        if r.deprecated_from:
            parts.append(f"deprecated since {r.deprecated_from}")
        named = successor(engine, name)
        if named is not None and named.use:
            parts.append(f"successor {named.render()} (evidence: {named.quote()})")
        elif named is not None and named.per_value:
            parts.append(f"several replacements, none as the successor: {' | '.join(named.per_value)} "
                         f"(evidence: {named.quote()})")
        elif r.removed_in or r.deprecated_from:
            parts.append(no_successor(engine))
        if not contiguous:
            parts.append("accepted in: " + ", ".join(r.versions))
        typer.echo("; ".join(parts))
