"""Turning every failure into one line on stderr: library errors, click usage errors, and the unexpected.

The library names what was wrong by ``field`` (``corpus``, ``catalog``...) and
where (a path); only here does that become a command-line flag.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from launchcard.errors import LaunchcardError

# which flag (or argument) of the CLI gives each input the library may report as wrong; where commands
# spell one input differently, every spelling (the one the user typed is named, else the first)
FLAGS: dict[str, str | tuple[str, ...]] = {
    "engine": "--engine",
    "engine_version": ("--engine-version", "--version", "--vllm-version"),
    "corpus": "--corpus",
    "catalog": "--catalog",
    "hardware": "--hardware",
    "model": "MODEL",
    "capture": "--from/--to",
    "recipes": "--recipes",
    "out": "--out",
    "cache": "--cache",
    "log": "--log",
    "state": "--state",
    "config": "--config",
    "safetensors_index": "--safetensors-index",
    "sync-config": "--config",
    "sync-remote": "--remote",
    "sync-revision": "--revision",
    "source": "--source",
    "revisions": "--revisions/--since",
    "since": "--since",
    "web_url": "--web-url",
    "driver": "--driver",
    "driver_cmd": "--driver-cmd",
    "gpu": ("--gpu", "--hardware"),  # `predict MODEL --hardware H` names the GPU predicted on with --hardware
    "isl": "--isl",
    "osl": "--osl",
    "concurrency": ("--concurrency", "--max-concurrency"),
    "rate": ("--rate", "--request-rate"),
    "num_requests": ("--num-requests", "--num-prompts"),
    "range_ratio": "--random-range-ratio",
    "dataset": ("--dataset", "--dataset-name"),
    "prefix_hit": "--prefix-hit",
    "endpoint": "--endpoint",
    "acceptance": "--acceptance",
    "hardware_figures": "--hardware-figures",
    # the resolver's feature choices (resolve._features): named as the web's query parameters, spelled here
    "feature": "--feature",
    "no_feature": "--no-feature",
    "mode": "--mode",
    "feature/no_feature": "--feature/--no-feature",
    "mode/no_feature": "--mode/--no-feature",
}


def typed_flag(field: str | None, argv: Sequence[str] = ()) -> str | None:
    """The option that gives ``field``, as the user typed it on this command line (``--engine-version``)."""
    spellings = FLAGS.get(field or "")
    if isinstance(spellings, str) or spellings is None:
        return spellings
    return next((s for s in spellings for a in argv if a == s or a.startswith(s + "=")), spellings[0])


def error_line(exc: LaunchcardError, argv: Sequence[str] = ()) -> str:
    """``launchcard: error: <flag> <where>: <rule>; <fix>`` — the flag only when the error says which input."""
    return f"launchcard: error: {exc.named(typed_flag(exc.field, argv))}"


def usage_line(message: str, command: str | None) -> str:
    """A click usage error on one line, with where to read the help."""
    hint = f"launchcard {command} --help" if command else "launchcard --help"
    return f"launchcard: error: {' '.join(message.split()).rstrip('.')}; see `{hint}`"


def unexpected_line(exc: BaseException) -> str:
    """Last resort: a failure no boundary turned into a launchcard error (a bug to report, not a traceback)."""
    text = " ".join(str(exc).split()) or "no message"
    return (f"launchcard: internal error: {type(exc).__name__}: {text}; this is a bug — please report it "
            f"with the command line (set LAUNCHCARD_DEBUG=1 for the traceback)")


def print_line(line: str) -> None:
    print(line, file=sys.stderr)
