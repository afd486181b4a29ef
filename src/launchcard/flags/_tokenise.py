"""The engine's argparse, rebuilt from a captured spec, reading a command's words (no values judged here).

Every engine action is replaced by a recorder, so which word is a flag, which is its value and which is
left over is decided exactly as the engine's parser decides it; ``_check`` then judges the recorded values.
A command is read once per parser shape (see :func:`parse_words`), not once per captured release.
"""

from __future__ import annotations

import argparse
import bisect
import re
from dataclasses import dataclass
from typing import Any, NoReturn

from launchcard.flagspec import FlagSpec
from launchcard.idmemo import IdMemo

# Any in this module: what argparse records (strings, lists of strings, consts from the spec JSON).


class _Stop(Exception):
    """argparse hit a structural error (it would exit here)."""

    def __init__(self, message: str, flag: str) -> None:
        super().__init__(message)
        self.message = message
        self.flag = flag


class _Parser(argparse.ArgumentParser):
    """argparse as the engine has it, noting each abbreviation it expands."""

    expanded: list[tuple[str, str]]  # (as given, full option string); reset per parse

    def error(self, message: str) -> NoReturn:  # argparse would exit here; we stop the parse instead
        raise _Stop(message, "")

    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse makes a formatter for every add_argument (to check nargs), and the default one asks the
        # terminal for its size each time (environment look-ups: a measurable share of a cold card build);
        # this parser never prints help, so any width will do
        return argparse.HelpFormatter(self.prog, width=80)

    # Any: stdlib private API (stable 3.9-3.13) whose tuple shape differs between Python versions
    def _get_option_tuples(self, option_string: str) -> Any:
        tuples = super()._get_option_tuples(option_string)
        if len(tuples) == 1:
            given, full = option_string.split("=", 1)[0], tuples[0][1]
            if full != given and full.startswith(given):
                self.expanded.append((given, full))
        return tuples


class _Record(argparse.Action):
    """Stands in for every engine action: remembers what argparse gave it."""

    def __call__(
        # Any: whatever argparse produced (a string, a list of strings, a const) -- argparse's own typing
        self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
        option_string: str | None = None,
    ) -> None:
        namespace.__dict__.setdefault("_lc_seen", []).append((self.dest, option_string, values))


ZERO_ARG = {"store_true", "store_false", "store_const", "bool_pair", "count", "help", "version", "append_const"}


def _argparser(spec: FlagSpec, options: tuple[int, ...] | None = None) -> _Parser:
    """The engine's parser rebuilt from ``spec``: its positionals and the options at ``options`` (None: all)."""
    p = _Parser(prog=spec.engine, add_help=False, prefix_chars=spec.prefix_chars, allow_abbrev=spec.allow_abbrev,
                exit_on_error=False)
    p.expanded = []
    for o in spec.positionals:
        p.add_argument(o.dest, nargs=o.nargs, action=_Record, default=argparse.SUPPRESS)
    for o in spec.options if options is None else (spec.options[i] for i in options):
        nargs = 0 if o.action in ZERO_ARG else o.nargs
        p.add_argument(*o.flags, dest=o.dest, nargs=nargs, action=_Record, default=argparse.SUPPRESS)
    return p


_NEGATIVE = re.compile(r"^-\.?\d")  # covers argparse's negative-number rule of every Python version


class _Flags:
    """A spec's option strings, sorted, with the position of each one's option: which options a word can meet."""

    def __init__(self, spec: FlagSpec) -> None:
        self.spec = spec
        pairs = sorted((f, i) for i, o in enumerate(spec.options) for f in o.flags)
        self.flags = [f for f, _ in pairs]
        self.where = [i for _, i in pairs]
        # options spelled like negative numbers change how argparse reads "-5" (kept in every cut-down parser)
        self.always = frozenset(i for f, i in pairs if _NEGATIVE.match(f))
        self.positionals = tuple((o.dest, o.nargs) for o in spec.positionals)

    def options_met(self, args: list[str]) -> tuple[int, ...]:
        """Every option argparse could match one of ``args`` to: the word's exact string, the part before ``=``,
        an option that word abbreviates (starts with it) and, for ``-xVALUE``, the short option ``-x``."""
        met = set(self.always)
        chars = self.spec.prefix_chars
        for word in args:
            if len(word) < 2 or word[0] not in chars:
                continue
            head = word.split("=", 1)[0]
            i = bisect.bisect_left(self.flags, head)
            while i < len(self.flags) and self.flags[i].startswith(head):
                met.add(self.where[i])
                i += 1
            i = bisect.bisect_left(self.flags, word[:2])
            if i < len(self.flags) and self.flags[i] == word[:2]:
                met.add(self.where[i])
        return tuple(sorted(met))


@dataclass(frozen=True, slots=True)
class _Parsed:
    """What argparse made of the words: each recorded action, the words left over, the abbreviations it
    expanded, and the (flag, message) it stopped at."""

    seen: tuple[tuple[str, str | None, Any], ...]
    extras: tuple[str, ...]
    expanded: tuple[tuple[str, str], ...]
    stopped: tuple[str, str] | None


_FLAGS: IdMemo[FlagSpec, _Flags] = IdMemo(257)  # up to 257 tables, as when it cleared above 256
_PARSED: dict[tuple[Any, ...], _Parsed] = {}


def parse_words(spec: FlagSpec, args: list[str]) -> _Parsed:
    """``args`` read by the engine's parser, computed once per command and parser shape.

    argparse decides each word from the option strings that match it (exactly, before ``=``, as an
    abbreviation, or as ``-x`` with its value attached), so a parser holding only the options some word can
    meet reads ``args`` exactly as the engine's full parser does.  Those options' shapes (strings, arity, dest)
    are usually the same in every captured release, so one command is tokenised once, not once per release;
    and the cut-down parser is a handful of options, not hundreds.
    """
    table = _FLAGS.get(spec, _Flags)
    met = table.options_met(args)
    shape = tuple((o.flags, 0 if o.action in ZERO_ARG else o.nargs, o.dest) for o in (spec.options[i] for i in met))
    key = (spec.engine, spec.prefix_chars, spec.allow_abbrev, table.positionals, shape, tuple(args))
    done = _PARSED.get(key)
    if done is not None:
        return done
    parser = _argparser(spec, met)
    ns = argparse.Namespace()
    stopped = None
    try:
        _, extras = parser.parse_known_args(args, ns)
    except (_Stop, argparse.ArgumentError) as exc:
        flag = getattr(exc, "argument_name", None) or getattr(exc, "flag", "") or "argv"
        stopped = (flag, getattr(exc, "message", str(exc)))
        extras = []
    done = _Parsed(tuple(ns.__dict__.get("_lc_seen", ())), tuple(extras), tuple(parser.expanded), stopped)
    if len(_PARSED) > 50000:
        _PARSED.clear()
    _PARSED[key] = done
    return done
