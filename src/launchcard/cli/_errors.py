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


def name_too_long_line(exc: OSError, argv: Sequence[str] = ()) -> str:
    """A path typed with a part longer than the file system takes (ENAMETOOLONG), wherever it was first looked at
    (``Path.is_file`` and friends raise it rather than answer False): bad input, named by the option that gave it."""
    import os

    path = str(exc.filename or "")
    part = max(path.split(os.sep), key=len, default="")
    typed = max((a for a in argv if a and a in path), key=len, default=None)
    where = path
    if typed is not None:
        i = list(argv).index(typed)
        where = f"{argv[i - 1]} {typed}" if i and argv[i - 1].startswith("-") else typed
    near = os.path.dirname(os.path.abspath(path))
    while not os.path.isdir(near) and os.path.dirname(near) != near:
        near = os.path.dirname(near)
    try:  # the limit of the file system the path would be on (NAME_MAX, 255 bytes on ext4 / xfs / btrfs)
        limit = f"this file system takes {os.pathconf(near, 'PC_NAME_MAX')} at most"
    except (OSError, ValueError):
        limit = "more than this file system takes"
    return (f"launchcard: error: {where}: file name too long (a part of {len(part.encode())} bytes; {limit}); "
            "give a shorter path")


def unexpected_line(exc: BaseException) -> str:
    """Last resort: a failure no boundary turned into a launchcard error (a bug to report, not a traceback)."""
    text = " ".join(str(exc).split()) or "no message"
    return (f"launchcard: internal error: {type(exc).__name__}: {text}; this is a bug — please report it "
            f"with the command line (set LAUNCHCARD_DEBUG=1 for the traceback)")


def print_line(line: str) -> None:
    print(line, file=sys.stderr)
