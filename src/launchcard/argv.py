"""One model of a launch command's argv, read the way the engine reads it.

``parse_command`` turns ``vllm serve MODEL ...``, ``python -m
vllm.entrypoints.openai.api_server ...``, ``sglang serve ...``, ``python -m
sglang.launch_server ...`` (the Dynamo wrappers ``python -m dynamo.vllm`` /
``dynamo.sglang`` too, and leading ``VAR=value`` words) into a frozen
:class:`ParsedCommand`: engine, entry point, positional model, env prefix and
every option under its canonical dest name.  Every module that reads a flag
off a command goes through it, so all of them agree on what a command says.

The rules are argparse's, plus vLLM's ``FlexibleArgumentParser`` rewriting:

* the captured parser spec of the engine (``data/flags/<engine>-<version>.json``;
  the newest captured one when the version is unknown or not captured) says
  which spellings are aliases (``-tp``), which options take a value, several
  values (``nargs='+'``), none (``store_true``, ``--x/--no-x`` pairs) or
  accumulate (``append``), and which ints are human-readable (``32k``);
* ``--flag=value`` equals ``--flag value``; unique prefixes of long options
  are accepted where the parser allows abbreviations;
* vLLM only: ``_`` and ``-`` are the same in a flag name, ``-O3`` is
  ``--optimization-level 3``, ``vllm serve --model M`` makes ``M`` the
  positional model, and dotted keys ``--x.y v`` (``--x.y+ v`` for lists) build
  one JSON object for ``--x`` that vLLM appends after every other flag, so it
  replaces a ``--x '{...}'`` given anywhere;
* the last occurrence of a flag wins (append options accumulate).

Flags the spec does not know (wrapper flags, engines without a captured spec,
flags of other versions) are read by a conservative rule: ``--f=v`` has a
value; ``--f v`` has one when the next word does not look like a flag;
otherwise ``--f`` is a switch, and ``--no-f`` switches ``f`` off.  Their dest
is the name without dashes, ``-`` as ``_``.  The checker (``launchcard check``)
is where a flag the engine would reject is reported; readers here are lenient.

Standard library only (no pydantic), so ``launchcard resolve`` stays fast.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from launchcard.errors import ArgvError
from launchcard.flagspec import (
    FlagSpec,
    Option,
    human_readable_int,
    human_readable_int_or_auto,
    merge_json,
    shipped_index,
    shipped_spec,
)

# A value as the engine's parser stores it before its type conversion: the raw
# string, True/False for a switch, a tuple for nargs='+' or append options, None
# for an option whose value is missing.
Value = str | bool | tuple[str, ...] | None

_ENV_WORD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_NEGATIVE = re.compile(r"^-\d+$|^-\d*\.\d+$")
_PYTHON = re.compile(r"^(.*/)?python[0-9.]*$")
# module -> (engine, kind); "cli" modules take a `serve` subcommand first
_MODULES = {
    "vllm.entrypoints.openai.api_server": ("vllm", "module"),
    "vllm.entrypoints.cli.main": ("vllm", "cli"),
    "sglang.launch_server": ("sglang", "module"),
    "sglang.cli.main": ("sglang", "cli"),
    "dynamo.vllm": ("vllm", "wrapper"),
    "dynamo.sglang": ("sglang", "wrapper"),
}
_ZERO_ARG = frozenset({"store_true", "store_false", "store_const", "bool_pair", "count", "help", "version",
                       "append_const"})
# the flags that size a process's parallel layout, in every engine's spelling
TP_FLAGS = ("--tensor-parallel-size", "-tp", "--tp-size", "--tp")
PP_FLAGS = ("--pipeline-parallel-size", "-pp", "--pp-size")
DP_FLAGS = ("--data-parallel-size", "-dp")


@dataclass(frozen=True, slots=True)
class Occurrence:
    """One option as written in the command."""

    dest: str  # canonical dest name, e.g. "tensor_parallel_size"
    flag: str  # canonical spelling for this occurrence ("--no-x" for a switched-off pair)
    written: str  # the flag as written, without "=value" (the first dotted key for a merged one)
    value: Value
    index: int  # position of the flag word in the argv given to parse_command
    known: bool  # matched an option of the engine's captured spec
    parts: tuple[str, ...] = ()  # dotted keys merged into this value (vLLM's --x.y v)


@dataclass(frozen=True)
class ParsedCommand:
    """A launch command as its engine's parser reads it."""

    argv: tuple[str, ...]
    engine: str | None  # "vllm" | "sglang" | another program's name | None
    entry: tuple[str, ...]  # ("vllm", "serve"), ("python3", "-m", "sglang.launch_server"), () for bare flags
    entry_kind: str  # "serve" | "module" | "wrapper" | "bare" | "other"
    model: str | None  # the positional model (vllm serve), or None
    env: tuple[tuple[str, str], ...]  # leading VAR=value words
    occurrences: tuple[Occurrence, ...]  # in the order the engine applies them
    positionals: tuple[str, ...] = ()  # words that are neither the model nor an option's value
    spec_version: str | None = None  # the captured spec used; None: the heuristic alone
    model_index: int | None = None  # where the model word (or --model's value) is in argv
    problems: tuple[str, ...] = ()  # what the engine's parser would stop at (a flag without its value ...)
    _spec: FlagSpec | None = field(default=None, repr=False, compare=False)

    @functools.cached_property
    def options(self) -> Mapping[str, Value]:
        """dest -> final value: the last occurrence wins, append options accumulate."""
        out: dict[str, Value] = {}
        for occ in self.occurrences:
            if self._is_append(occ.dest):
                prev = out.get(occ.dest)
                out[occ.dest] = (*(prev if isinstance(prev, tuple) else ()), *_as_tuple(occ.value))
            else:
                out[occ.dest] = occ.value
        return MappingProxyType(out)

    def model_path(self) -> str | None:
        """The model the server loads: the positional, else ``--model`` / ``--model-path``."""
        return self.model or self.get_str("--model", "--model-path")

    # --- lookup -------------------------------------------------------------

    def dest_of(self, flag: str) -> str:
        """The dest a spelling of a flag sets, as this command's engine reads it."""
        return resolve_flag(flag, self._spec, self._dialect)[0]

    @functools.cached_property
    def _last_of(self) -> Mapping[str, tuple[int, Occurrence]]:
        """dest -> (position, occurrence) of its last occurrence: one pass, then every lookup is a dict hit
        (a plan search asks ~20 flags of each of thousands of commands)."""
        return {o.dest: (i, o) for i, o in enumerate(self.occurrences)}

    def last(self, *flags: str) -> Occurrence | None:
        """The occurrence that decides the value of any of ``flags`` (several spellings, one meaning)."""
        index = self._last_of
        best: tuple[int, Occurrence] | None = None
        for dest in _dests(flags, self._spec, self._dialect):
            hit = index.get(dest)
            if hit is not None and (best is None or hit[0] > best[0]):
                best = hit
        return best[1] if best is not None else None

    def has(self, *flags: str) -> bool:
        return self.last(*flags) is not None

    def get(self, *flags: str) -> Value:
        occ = self.last(*flags)
        return None if occ is None else self.options[occ.dest]

    def get_str(self, *flags: str, default: str | None = None) -> str | None:
        """The string value; the first one of a multi-value option (vLLM serves under the first name).

        A flag written without a value (a switch, or a value-taking flag at the
        end) reads as absent.
        """
        value = self.get(*flags)
        if isinstance(value, tuple):
            return value[0] if value else default
        return value if isinstance(value, str) else default

    def get_list(self, *flags: str) -> tuple[str, ...]:
        value = self.get(*flags)
        if isinstance(value, str):
            return (value,)
        return value if isinstance(value, tuple) else ()

    def get_int(self, *flags: str, default: int | None = None) -> int | None:
        """The integer value; ``32k``-style where the engine's parser takes human-readable ints."""
        occ, raw = self._scalar(flags, "an integer")
        if occ is None or raw is None:
            return default
        kind = self._option_type(occ.dest)
        try:
            if kind in ("human_int", "human_int_or_auto"):
                return (human_readable_int_or_auto if kind == "human_int_or_auto" else human_readable_int)(raw)
            return int(raw.strip())
        except ValueError:
            raise ArgvError(f"expects an integer ({raw!r})", where=f"argv {occ.written}",
                            fix="give a whole number" + (" such as 32768 or 32k" if kind.startswith("human") else ""),
                            ) from None

    def try_int(self, *flags: str) -> int | None:
        """Like ``get_int``, but None for a value that is not an integer (a document's ``$TP``)."""
        try:
            return self.get_int(*flags)
        except ArgvError:
            return None

    def get_float(self, *flags: str, default: float | None = None) -> float | None:
        occ, raw = self._scalar(flags, "a number")
        if occ is None or raw is None:
            return default
        try:
            return float(raw)
        except ValueError:
            raise ArgvError(f"expects a number ({raw!r})", where=f"argv {occ.written}",
                            fix="give a number such as 0.9") from None

    def get_bool(self, *flags: str, default: bool | None = None) -> bool | None:
        """A switch: True for ``--x``, False for ``--no-x``; ``--x true|false`` where the option takes a value."""
        occ = self.last(*flags)
        if occ is None:
            return default
        value = self.options[occ.dest]
        if isinstance(value, bool):
            return value
        text = value[-1] if isinstance(value, tuple) and value else value
        if isinstance(text, str) and text.lower() in ("true", "1", "yes", "on"):
            return True
        if isinstance(text, str) and text.lower() in ("false", "0", "no", "off"):
            return False
        raise ArgvError(f"expects a switch or true/false ({text!r})", where=f"argv {occ.written}",
                        fix=f"write {occ.flag} alone, or give true or false")

    def get_json(self, *flags: str) -> Any:  # Any: a JSON value is whatever the document holds
        """The parsed JSON value (dotted keys already merged, as vLLM merges them)."""
        occ, raw = self._scalar(flags, "a JSON value")
        if occ is None or raw is None:
            return None
        try:
            return json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ArgvError(f"expects JSON ({raw!r}: {exc.msg} at column {exc.colno})", where=f"argv {occ.written}",
                            fix="quote the whole JSON object as one argument") from None

    # --- helpers ------------------------------------------------------------

    @property
    def _dialect(self) -> str:
        if self._spec is not None:
            return self._spec.dialect
        return "vllm-flexible" if self.engine == "vllm" else "argparse"

    def _is_append(self, dest: str) -> bool:
        o = self._spec.by_dest.get(dest) if self._spec is not None else None
        return o is not None and o.action in ("append", "extend")

    def _option_type(self, dest: str) -> str:
        o = self._spec.by_dest.get(dest) if self._spec is not None else None
        return o.type if o is not None else "str"

    def _scalar(self, flags: Sequence[str], what: str) -> tuple[Occurrence | None, str | None]:
        occ = self.last(*flags)
        if occ is None:
            return None, None
        value = self.options[occ.dest]
        if isinstance(value, tuple):
            value = value[-1] if value else None
        if not isinstance(value, str):
            raise ArgvError(f"expects {what} (no value given)", where=f"argv {occ.written}",
                            fix=f"give {occ.flag} a value")
        return occ, value


def _as_tuple(value: Value) -> tuple[str, ...]:
    if isinstance(value, tuple):
        return value
    return (value,) if isinstance(value, str) else ()


# --- specs ---------------------------------------------------------------------


@functools.lru_cache(maxsize=16)
def spec_for(engine: str | None, version: str | None = None) -> FlagSpec | None:
    """The captured spec of ``engine`` at ``version``; the newest captured when that one is not; None without any."""
    if not engine:
        return None
    versions = shipped_index().get(engine)
    if not versions:
        return None
    return shipped_spec(engine, version if version in versions else None)  # None: flagspec.default_release


def _normalise(name: str, dialect: str) -> str:
    """vLLM writes ``_`` as ``-`` in a flag name up to its first dot."""
    if dialect != "vllm-flexible" or not name.startswith("--"):
        return name
    head, dot, tail = name[2:].partition(".")
    return "--" + head.replace("_", "-") + dot + tail


def _heuristic_dest(name: str) -> str:
    return name.lstrip("-").replace("-", "_")


def resolve_flag(flag: str, spec: FlagSpec | None, dialect: str | None = None) -> tuple[str, Option | None, str]:
    """(dest, spec option or None, canonical spelling) for a flag name (no ``=value``), as the engine reads it.

    Aliases (``-tp``), negations (``--no-x``), unique prefixes of long options where
    the parser allows abbreviations, and vLLM's ``_`` for ``-``; ``dialect`` defaults
    to the spec's (argparse without a spec).  Answers are kept per spec (a corpus build asks ~40,000 times).
    """
    key = (flag, id(spec), dialect)
    hit = _RESOLVED.get(key)
    if hit is not None and hit[0] is spec:
        return hit[1]
    out = _resolve_flag(flag, spec, dialect)
    if len(_RESOLVED) > 50000:
        _RESOLVED.clear()
    _RESOLVED[key] = (spec, out)
    return out


# (flag, id(spec), dialect) -> (the spec itself, so a recycled id never answers, the result)
_RESOLVED: dict[tuple[str, int, str | None], tuple[FlagSpec | None, tuple[str, Option | None, str]]] = {}
# (spellings, spec id, dialect) -> (spec, the dest of each): a rule asks for the same few spellings of every command
_DESTS: dict[tuple[tuple[str, ...], int, str], tuple[FlagSpec | None, tuple[str, ...]]] = {}


def _dests(flags: tuple[str, ...], spec: FlagSpec | None, dialect: str) -> tuple[str, ...]:
    """The dest each of ``flags`` sets (:func:`resolve_flag`), as a command of ``spec`` and ``dialect`` reads it."""
    key = (flags, id(spec), dialect)
    hit = _DESTS.get(key)
    if hit is not None and hit[0] is spec:
        return hit[1]
    out = tuple(resolve_flag(f, spec, dialect)[0] for f in flags)
    if len(_DESTS) > 50000:
        _DESTS.clear()
    _DESTS[key] = (spec, out)
    return out


def _resolve_flag(flag: str, spec: FlagSpec | None, dialect: str | None = None) -> tuple[str, Option | None, str]:
    """:func:`resolve_flag`, computed."""
    if dialect is None:
        dialect = spec.dialect if spec is not None else "argparse"
    name = _normalise(flag, dialect)
    if spec is not None:
        o = spec.by_flag.get(name)
        if o is None and spec.allow_abbrev and name.startswith("--") and len(name) > 2:
            # argparse takes a unique prefix of a long option
            o = spec.abbreviated(name)
        if o is not None:
            negated = name in o.negation or (o.action == "bool_pair" and name.startswith("--no-"))
            canonical = (o.negation[0] if o.negation else name) if negated else o.name
            return o.dest, o, canonical
    if name.startswith("--no-") and len(name) > 5:
        return _heuristic_dest(name[5:]), None, name
    return _heuristic_dest(name), None, name


# --- parsing --------------------------------------------------------------------


def split_env(argv: Sequence[str]) -> tuple[dict[str, str], list[str]]:
    """Leading ``VAR=value`` words as environment entries, and the rest of the command."""
    env: dict[str, str] = {}
    rest = [str(a) for a in argv]
    while rest and _ENV_WORD.match(rest[0]):
        key, value = rest.pop(0).split("=", 1)
        env[key] = value
    return env, rest


def _entry(words: list[str], engine: str | None) -> tuple[str | None, tuple[str, ...], str]:
    """(engine, entry words, kind) of a command without its env prefix."""
    if not words:
        return engine, (), "bare"
    head = words[0].rsplit("/", 1)[-1]
    if head in ("vllm", "sglang"):
        return head, tuple(words[:2]), ("serve" if words[1:2] == ["serve"] else "other")
    if _PYTHON.match(words[0]) and len(words) > 2 and words[1] == "-m":
        found, kind = _MODULES.get(words[2], (None, "other"))
        if kind == "cli":
            return found, tuple(words[:4]), ("serve" if words[3:4] == ["serve"] else "other")
        return found, tuple(words[:3]), kind
    if words[0].startswith("-"):
        return engine, (), "bare"
    return head, (words[0],), "other"


def split_entry(argv: Sequence[str], engine: str | None = None) -> tuple[dict[str, str], str | None, tuple[str, ...],
                                                                      str, list[str]]:
    """(env prefix, engine, entry words, entry kind, the words after the entry) of a command.

    Kinds: "serve" (``vllm serve``, ``python -m vllm.entrypoints.cli.main serve``), "module"
    (``python -m vllm.entrypoints.openai.api_server`` / ``sglang.launch_server``), "wrapper"
    (``python -m dynamo.vllm``), "bare" (flags only: ``engine`` is the caller's), "other".
    """
    env, words = split_env(argv)
    found, entry, kind = _entry(words, engine)
    return env, found, entry, kind, words[len(entry):]


def _is_flag_word(word: str, spec: FlagSpec | None, dialect: str) -> bool:
    """argparse's test: a word starting with '-' is a flag unless it is a negative number or '-' alone."""
    if not word.startswith("-") or word == "-" or _NEGATIVE.match(word):
        return False
    if " " in word:
        # argparse: a spaced word is an option only when the part before '=' names one
        return resolve_flag(word.split("=", 1)[0], spec, dialect)[1] is not None
    return True


def parse_command(argv: Sequence[str], *, engine: str | None = None, version: str | None = None) -> ParsedCommand:
    """Read ``argv`` as its engine would; ``engine`` applies where the command does not name one (bare flags)."""
    return _parse(tuple(str(a) for a in argv), engine, version)


@functools.lru_cache(maxsize=1024)
def _parse(argv: tuple[str, ...], engine: str | None, version: str | None) -> ParsedCommand:
    env, words = split_env(argv)
    offset = len(argv) - len(words)
    found, entry, kind = _entry(words, engine)
    spec = spec_for(found, version) if kind in ("serve", "module", "wrapper", "bare") else None
    dialect = spec.dialect if spec is not None else ("vllm-flexible" if found == "vllm" else "argparse")
    start = offset + len(entry)
    st = _Scan(argv, spec, dialect)
    st.run(start)
    model, model_index = None, None
    occurrences = list(st.occurrences)
    positionals = list(st.positionals)
    if kind == "serve" and found == "vllm":
        # vLLM moves `--model M` to the positional (first one only); else the first positional is the model
        moved = next((o for o in occurrences if o.dest == "model" and isinstance(o.value, str)), None)
        if moved is not None:
            occurrences.remove(moved)
            model, model_index = str(moved.value), moved.index + (0 if "=" in argv[moved.index] else 1)
        elif positionals:
            model_index, model = positionals.pop(0)
    return ParsedCommand(
        argv=argv, engine=found, entry=entry, entry_kind=kind, model=model,
        env=tuple(env.items()), occurrences=tuple(occurrences), positionals=tuple(p for _, p in positionals),
        spec_version=spec.version if spec is not None else None, model_index=model_index,
        problems=tuple(st.problems), _spec=spec)


class _Scan:
    """One pass over the words after the entry point, as argparse consumes them."""

    def __init__(self, argv: tuple[str, ...], spec: FlagSpec | None, dialect: str) -> None:
        self.argv, self.spec, self.dialect = argv, spec, dialect
        self.occurrences: list[Occurrence] = []
        self.positionals: list[tuple[int, str]] = []
        self.problems: list[str] = []
        self.dotted: dict[str, dict[str, Any]] = {}  # Any: JSON built from dotted keys
        self.dotted_at: dict[str, tuple[int, list[str]]] = {}

    def run(self, i: int) -> None:
        argv = self.argv
        while i < len(argv):
            word = argv[i]
            if word == "--":
                self.positionals += [(j, argv[j]) for j in range(i + 1, len(argv))]
                break
            if self.dialect == "vllm-flexible" and word.startswith("-O") and word != "-O":
                # vLLM: -O3 / -O=3 is --optimization-level 3
                self._add(i, "--optimization-level", word, word[3:] if word[2:3] == "=" else word[2:])
                i += 1
                continue
            if (self.dialect == "vllm-flexible" and word == "-O" and i + 1 < len(argv)
                    and argv[i + 1] in {"0", "1", "2", "3"}):
                self._add(i, "--optimization-level", word, argv[i + 1])
                i += 2
                continue
            if not _is_flag_word(word, self.spec, self.dialect):
                self.positionals.append((i, word))
                i += 1
                continue
            name, eq, attached = word.partition("=")
            if self.dialect == "vllm-flexible" and name.startswith("-") and "." in name:
                i = self._dotted(i, name, attached if eq else None)
                continue
            i = self._option(i, name, attached if eq else None)
        for key, (at, parts) in self.dotted_at.items():
            # vLLM appends the merged object after every other flag: it wins over `--x '{...}'`
            self._add(at, key, parts[0], json.dumps(self.dotted[key]), tuple(parts))

    def _add(self, i: int, flag: str, written: str, value: Value, parts: tuple[str, ...] = ()) -> None:
        dest, o, canonical = resolve_flag(flag, self.spec, self.dialect)
        self.occurrences.append(Occurrence(dest, canonical, written, value, i, o is not None, parts))

    def _take(self, i: int) -> str | None:
        nxt = self.argv[i] if i < len(self.argv) else None
        return nxt if nxt is not None and not _is_flag_word(nxt, self.spec, self.dialect) else None

    def _option(self, i: int, name: str, attached: str | None) -> int:
        """Record the option at ``argv[i]``; the index of the next word to read."""
        dest, o, canonical = resolve_flag(name, self.spec, self.dialect)
        used = 0  # words after the flag its value takes
        value: Value
        if o is None:
            if attached is not None:
                value = attached
            elif canonical.startswith("--no-"):
                value = False
            else:
                nxt = self._take(i + 1)
                value, used = (True, 0) if nxt is None else (nxt, 1)
        elif o.action in _ZERO_ARG or o.nargs == 0:
            if attached is not None:
                self.problems.append(f"{name}: takes no value ({attached!r})")
            negated = canonical in o.negation or o.action == "store_false"
            value = not negated
        elif o.nargs in ("+", "*") or isinstance(o.nargs, int):
            values = [attached] if attached is not None else []
            if attached is None:
                limit = o.nargs if isinstance(o.nargs, int) else len(self.argv)
                while len(values) < limit and (nxt := self._take(i + 1 + len(values))) is not None:
                    values.append(nxt)
                used = len(values)
            if not values and o.nargs != "*":
                self.problems.append(f"{name}: expects at least one value")
            value = tuple(values)
        else:  # one value, or nargs='?' (an optional value, else the option's const)
            nxt = attached if attached is not None else self._take(i + 1)
            used = 1 if attached is None and nxt is not None else 0
            if nxt is None and o.nargs != "?":
                self.problems.append(f"{name}: expects a value")
            value = nxt if nxt is not None else (True if o.nargs == "?" else None)
        self.occurrences.append(Occurrence(dest, canonical, name, value, i, o is not None))
        return i + 1 + used

    def _dotted(self, i: int, name: str, attached: str | None) -> int:
        """vLLM's ``--x.y v``: the value always comes from the next word, even one starting with '-'."""
        if attached is None:
            if i + 1 >= len(self.argv):
                self.problems.append(f"{name}: dotted key has no value")
                return i + 1
            raw, nxt = self.argv[i + 1], i + 2
        else:
            raw, nxt = attached, i + 1
        key = _normalise(name, self.dialect)
        if key.endswith("+"):
            key, raw = key[:-1], json.dumps(raw.split(","))
        head, *path = key.split(".")
        parsed: Any  # Any: a JSON value from the command line
        try:
            parsed = json.loads(raw)
        except json.JSONDecodeError:
            try:
                parsed = human_readable_int(raw)
            except ValueError:
                parsed = raw
        for k in reversed(path):
            parsed = {k: parsed}
        merge_json(self.dotted.setdefault(head, {}), parsed)
        self.dotted_at.setdefault(head, (i, []))[1].append(name)
        return nxt


# --- rendering ------------------------------------------------------------------


def _value_words(flag: str, value: Value, spec: FlagSpec | None, dialect: str) -> list[str]:
    if isinstance(value, bool) or value is None:
        return [flag]
    if isinstance(value, tuple):
        if len(value) == 1 and _is_flag_word(value[0], spec, dialect):
            return [f"{flag}={value[0]}"]
        return [flag, *value]
    # a value that looks like a flag must stay attached, or the parser would read it as one;
    # so must the value of an unknown --no-x (the heuristic reads a bare --no-x as a switch)
    attach = _is_flag_word(value, spec, dialect) or value == "--" or flag.startswith("--no-")
    return [f"{flag}={value}"] if attach else [flag, value]


def render(cmd: ParsedCommand, *, env: bool = True, entry: Sequence[str] | None = None,
           model_as_option: bool = False) -> tuple[str, ...]:
    """The command in canonical form: one flag per dest (the winning value), canonical spellings.

    ``entry`` swaps the entry point (e.g. ``python -m vllm.entrypoints.openai.api_server``);
    ``model_as_option`` writes the positional model as ``--model M`` (what that module takes).
    """
    out = [f"{k}={v}" for k, v in cmd.env] if env else []
    out += list(cmd.entry if entry is None else entry)
    if cmd.model is not None:
        out += ["--model", cmd.model] if model_as_option else [cmd.model]
    out += list(cmd.positionals)
    spec, opts = cmd._spec, cmd.options
    done: set[str] = set()
    for occ in cmd.occurrences:
        if occ.dest in done:
            continue
        done.add(occ.dest)
        value = opts[occ.dest]
        if cmd._is_append(occ.dest):
            for v in _as_tuple(value):
                out += _value_words(occ.flag, v, spec, cmd._dialect)
            continue
        winner = next(o for o in reversed(cmd.occurrences) if o.dest == occ.dest)
        out += _value_words(winner.flag, value, spec, cmd._dialect)
    return tuple(out)


def module_argv(argv: Sequence[str], python: str) -> tuple[str, ...]:
    """``vllm serve M ...`` as ``PYTHON -m vllm.entrypoints.openai.api_server --model M ...``.

    Every other word stays as written; commands of any other form come back unchanged.
    """
    cmd = parse_command(argv)
    words = tuple(str(a) for a in argv)
    if cmd.engine != "vllm" or cmd.entry_kind != "serve":
        return words
    env_len = len(words) - len(split_env(words)[1])
    base = env_len + len(cmd.entry)
    rest = list(words[base:])
    model: list[str] = []
    if cmd.model is not None and cmd.model_index is not None:
        at = cmd.model_index - base  # the model word, or the `--model=M` word
        del rest[at - 1 if at > 0 and rest[at - 1] == "--model" else at: at + 1]
        model = ["--model", cmd.model]
    return (*words[:env_len], python, "-m", "vllm.entrypoints.openai.api_server", *model, *rest)


# --- layout ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Parallel:
    """A process's parallel layout as its argv states it (None: the flag is not given)."""

    tp: int | None
    pp: int | None
    dp: int | None
    dp_local: int | None
    nnodes: int | None

    @property
    def stated(self) -> bool:
        """Whether the argv gives any parallel size at all."""
        return any(x is not None for x in (self.tp, self.pp, self.dp, self.dp_local))

    @property
    def world(self) -> int:
        """GPUs of the whole deployment: TP x PP x DP."""
        return (self.tp or 1) * (self.pp or 1) * (self.dp or 1)

    @property
    def per_node(self) -> int:
        """GPUs on this process's node: TP x PP x local DP, else the deployment split over ``--nnodes``."""
        if self.dp_local is not None:
            return (self.tp or 1) * (self.pp or 1) * self.dp_local
        return max(1, self.world // max(1, self.nnodes or 1))


def parallel(cmd: ParsedCommand) -> Parallel:
    """The parallel sizes of a command; raises ArgvError for a size that is not an integer."""
    return Parallel(tp=cmd.get_int(*TP_FLAGS), pp=cmd.get_int(*PP_FLAGS), dp=cmd.get_int(*DP_FLAGS),
                    dp_local=cmd.get_int("--data-parallel-size-local", "-dpl") if cmd.engine == "vllm" else None,
                    nnodes=cmd.get_int("--nnodes"))


__all__ = ["DP_FLAGS", "PP_FLAGS", "TP_FLAGS", "ArgvError", "Occurrence", "Parallel", "ParsedCommand", "Value",
           "module_argv", "parallel", "parse_command", "render", "resolve_flag", "spec_for", "split_entry",
           "split_env"]
