"""Bash script rendering shared by the shell and docker targets.

Quoting rule: every literal piece of a value goes through ``shlex.quote``
(single quotes, so ``$``, backticks, newlines and globs stay literal); a
placeholder becomes ``"$NAME"`` so the shell substitutes the address the user
exported.  Adjacent pieces concatenate into one word, so ``shlex.split`` of a
rendered word gives back the plan's token exactly (placeholders included).

The command is a bash array, one flag per line, then ``exec "${args[@]}"`` as
the last statement: no backslash continuations (which shlex does not undo),
and a reader can take the argv as everything between ``args=(`` and the last
three tokens.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from launchcard.emit._common import placeholder_help, placeholders_in, split_placeholders
from launchcard.errors import EmitError

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class Raw(str):
    """A word already written in shell syntax: bash expands it on purpose (never plan data)."""


def word(text: str) -> str:
    """One shell word whose value is ``text``, placeholders expanded from the environment."""
    if isinstance(text, Raw):
        return str(text)
    parts = []
    for is_ph, piece in split_placeholders(text):
        parts.append(f'"${piece}"' if is_ph else shlex.quote(piece))
    return "".join(parts)


def check_env_name(name: str, where: str) -> None:
    if not _ENV_NAME.match(name):
        raise EmitError(f"environment variable name {name!r} is not a valid shell name",
                        where=where, fix="use letters, digits and underscores, not starting with a digit")


def lead(argv: Sequence[str]) -> int:
    """How many leading tokens share the first line (``vllm serve MODEL``)."""
    return min(3, len(argv)) if tuple(argv[:2]) == ("vllm", "serve") else min(1, len(argv))


def group_argv(argv: Sequence[str], lead: int, breaks: frozenset[int] = frozenset()) -> list[list[str]]:
    """Lines of the array: the first ``lead`` tokens, then one line per option with its values."""
    lines: list[list[str]] = [list(argv[:lead])] if lead else []
    for i, tok in enumerate(argv[lead:], start=lead):
        if tok.startswith("-") or not lines or i in breaks:
            lines.append([tok])
        else:
            lines[-1].append(tok)
    return [line for line in lines if line]


def script(header: str, *, env: Sequence[tuple[str, str]], argv: Sequence[str], lead: int,
           comments: Sequence[str] = (), where: str, breaks: frozenset[int] = frozenset()) -> str:
    """A bash script exporting ``env`` then exec'ing ``argv``."""
    texts = [v for _, v in env] + [a for a in argv if not isinstance(a, Raw)]
    lines = ["#!/usr/bin/env bash", header.rstrip("\n")]
    needed = placeholders_in(texts)
    if needed:
        lines.append("# Placeholders: export these before running (the script stops if one is unset):")
        lines.extend(f"#   {name}: {placeholder_help(name)}" for name in needed)
    lines.extend(comments)
    lines.append("set -euo pipefail")
    for name in needed:
        lines.append(f': "${{{name}:?export {name} first: {placeholder_help(name)}}}"')
    for name, value in env:
        check_env_name(name, where)
        lines.append(f"export {name}={word(value)}")
    lines.append("args=(")
    for group in group_argv(argv, lead, breaks):
        lines.append("  " + " ".join(word(t) for t in group))
    lines.append(")")
    lines.append('exec "${args[@]}"')
    return "\n".join(lines) + "\n"
