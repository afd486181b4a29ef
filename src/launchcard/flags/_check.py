"""Check a launch command against a captured flag spec, offline.

Tokenisation is done by the standard library's argparse, rebuilt from the
spec (same option strings, nargs, prefix chars and abbreviation rule as the
engine's parser), with every action replaced by a recorder.  So which token
is a flag, which is its value and which is left over is decided exactly as
the engine's argparse decides it; the recorded values are then judged
against the captured types, choices, JSON schemas and parser registries.
Unlike argparse, which stops at the first problem, every finding is kept.
"""

from __future__ import annotations

import argparse
import functools
import json
import re
from dataclasses import dataclass
from typing import Any

from launchcard.flags._dialect import human_readable_int, human_readable_int_or_auto, rewrite
from launchcard.flags._spec import FlagSpec, Option, shipped_index, shipped_spec, version_key

ERROR, WARNING = "error", "warning"


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem with one flag: the rule it breaks and how to fix it."""

    severity: str  # "error" | "warning"
    rule: str  # unknown-flag, removed-flag, bad-choice, bad-json, bad-type, duplicate, ...
    flag: str
    message: str
    fix: str

    def one_line(self) -> str:
        return format_finding(self)


def format_finding(f: Finding) -> str:
    """``error: --flag: rule text [rule-id]; fix`` on one line."""
    text = f"{f.severity}: {f.flag}: {f.message} [{f.rule}]"
    if f.fix:
        text += f"; {f.fix}"
    return " ".join(text.split())


class _Stop(Exception):
    """argparse hit a structural error (it would exit here)."""

    def __init__(self, message: str, flag: str) -> None:
        super().__init__(message)
        self.flag = flag


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # type: ignore[override]
        raise _Stop(message, "")


class _Record(argparse.Action):
    """Stands in for every engine action: remembers what argparse gave it."""

    def __call__(self, parser, namespace, values, option_string=None):  # noqa: ANN001
        namespace.__dict__.setdefault("_lc_seen", []).append((self.dest, option_string, values))


_ZERO_ARG = {"store_true", "store_false", "store_const", "bool_pair", "count", "help", "version", "append_const"}


@functools.lru_cache(maxsize=16)
def _argparser(spec: FlagSpec) -> argparse.ArgumentParser:
    p = _Parser(prog=spec.engine, add_help=False, prefix_chars=spec.prefix_chars, allow_abbrev=spec.allow_abbrev, exit_on_error=False)
    for o in spec.positionals:
        p.add_argument(o.dest, nargs=o.nargs, action=_Record, default=argparse.SUPPRESS)
    for o in spec.options:
        nargs = 0 if o.action in _ZERO_ARG else o.nargs
        p.add_argument(*o.flags, dest=o.dest, nargs=nargs, action=_Record, default=argparse.SUPPRESS)
    return p


def split_command(argv: list[str], spec: FlagSpec) -> tuple[str, list[str]]:
    """("server" | "wrapper" | "other", the args after the launcher prefix).

    The entry point is read by ``launchcard.argv`` (one reading for every module);
    a wrapper (``python -m dynamo.vllm``) hands the engine's own flags through,
    plus flags of its own whose parser we have not captured.
    """
    from launchcard.argv import split_entry

    _, engine, _, kind, rest = split_entry(argv, engine=spec.engine)
    if kind == "bare" and rest:
        return "server", rest  # bare flags: assume the server's
    if engine != spec.engine or kind not in ("serve", "module", "wrapper"):
        return "other", rest
    return ("wrapper" if kind == "wrapper" else "server"), rest


# ---------------------------------------------------------------- values


def _convert(o: Option, raw: Any, spec: FlagSpec) -> tuple[Any, list[tuple[str, str]]]:
    """(converted value, [(message, fix)]) for one raw string, as the engine's type would."""
    if not isinstance(raw, str):
        return raw, []
    if o.optional and raw in ("", "None"):
        return None, []
    kind = o.type
    try:
        if kind == "int":
            return int(raw), []
        if kind == "float":
            return float(raw), []
        if kind == "human_int":
            return human_readable_int(raw), []
        if kind == "human_int_or_auto":
            return human_readable_int_or_auto(raw), []
    except ValueError:
        hint = "substitute the shell variable before launch" if raw.startswith("$") else "give a number"
        return raw, [(f"expects {kind.replace('_', ' ')}, got {raw!r}", hint)]
    if kind == "json" or (kind == "json_or_str" and re.match(r"(?s)^\s*{.*}\s*$", raw)):
        text = raw
        if o.json_class:
            from launchcard.flags._jsonval import expand_human_numbers

            try:
                text = expand_human_numbers(raw)
            except ValueError:
                pass
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            return raw, [(f"value is not valid JSON ({exc.msg} at column {exc.colno})", "quote the whole JSON object as one argument")]
        if o.json_class:
            from launchcard.flags._jsonval import validate_object

            problems = validate_object(value, o.json_class, spec.json_classes, o.name)
            return value, [(f"{where}: {msg}", fix) for where, msg, fix in problems]
        return value, []
    if o.normalize == "lower_underscore":
        return raw.lower().replace("-", "_"), []
    return raw, []


def _check_choice(o: Option, value: Any) -> tuple[str, str] | None:
    if o.choices is None or value in o.choices:
        return None
    import difflib

    shown = [c for c in o.choices if c is not None]
    close = difflib.get_close_matches(str(value), [str(c) for c in shown], n=1, cutoff=0.6)
    fix = f"did you mean {close[0]!r}? " if close else ""
    return f"{value!r} is not a valid choice", fix + "choose from: " + ", ".join(map(str, shown))


# ---------------------------------------------------------------- flags


def _suggest(flag: str, spec: FlagSpec) -> str | None:
    name = flag.split("=", 1)[0]
    base = name.lstrip(spec.prefix_chars)
    candidates = []
    # negation synonyms first: --disable-x is spelled --no-enable-x by BooleanOptionalAction
    for old, new in (("disable-", "no-enable-"), ("disable-", "no-"), ("no-", "disable-"), ("enable-", "no-disable-"),
                     ("no-", "no-enable-"), ("disable-", "enable-")):
        if base.startswith(old):
            candidates.append("--" + new + base[len(old) :])
    candidates += ["--" + base.replace("_", "-"), "-" + base]  # --tp -> -tp
    for c in candidates:
        if c in spec.by_flag and c != name:
            return c
    import difflib

    longs = [f for f in spec.by_flag if f.startswith("--")]
    close = difflib.get_close_matches(name, longs, n=1, cutoff=0.6)
    return close[0] if close else None


def derive_history(specs: list[FlagSpec]) -> dict[str, tuple[str, str, str | None]]:
    """flag -> (change, version, replacement), by diffing consecutive captured specs.

    change is "removed", "renamed" or "added".  A removed flag counts as
    renamed when the next version has a new flag with the same dest or the
    same first help line.
    """
    ordered = sorted(specs, key=lambda s: version_key(s.version))
    history: dict[str, tuple[str, str, str | None]] = {}
    for old, new in zip(ordered, ordered[1:]):
        added = [f for f in new.by_flag if f not in old.by_flag]
        for flag, o in old.by_flag.items():
            if flag in new.by_flag:
                continue
            target = None
            same = new.by_dest.get(o.dest)
            if same is not None and flag not in same.flags:
                target = same.name
            else:
                target = next((a for a in added if o.help and new.by_flag[a].help == o.help), None)
            history[flag] = ("renamed", new.version, target) if target else ("removed", new.version, None)
        for flag in added:
            # a flag that comes back after a removal is simply available again
            history[flag] = ("added", new.version, None)
    return history


@functools.lru_cache(maxsize=8)
def flag_history(engine: str) -> dict[str, tuple[str, str, str | None]]:
    """History of ``engine``'s flags across the shipped specs."""
    return derive_history([shipped_spec(engine, v) for v in shipped_index().get(engine, ())])


def _unknown(flag: str, spec: FlagSpec, history: dict[str, tuple[str, str, str | None]]) -> Finding:
    name = flag.split("=", 1)[0]
    if " " in name and name.split(" ", 1)[0] in spec.by_flag:
        head = name.split(" ", 1)[0]
        return Finding(ERROR, "one-token", name, "flag and value are one argv item, so the parser sees an unknown positional",
                       f"split it into two items: {head} {name.split(' ', 1)[1]}")
    change = history.get(name)
    if change:
        kind, at, target = change
        if kind == "added" and version_key(at) > version_key(spec.version):
            return Finding(ERROR, "too-new-flag", name, f"only exists from {spec.engine} {at}; {spec.version} rejects it",
                           f"use {spec.engine} >= {at} or drop the flag")
        if kind in ("renamed", "removed") and version_key(at) <= version_key(spec.version):
            if target:
                return Finding(ERROR, "renamed-flag", name, f"renamed in {spec.engine} {at}", f"use {target}")
            return Finding(ERROR, "removed-flag", name, f"removed in {spec.engine} {at}", "drop it")
    suggestion = _suggest(name, spec)
    fix = f"did you mean {suggestion}?" if suggestion else f"see `{' '.join(spec.command_prefix) or spec.engine} --help`"
    return Finding(ERROR, "unknown-flag", name, f"{spec.engine} {spec.version} has no such option", fix)


# ---------------------------------------------------------------- main


def check_with_spec(
    argv: list[str], spec: FlagSpec, history: dict[str, tuple[str, str, str | None]] | None = None
) -> list[Finding]:
    """Findings for ``argv`` against ``spec``; ``history`` defaults to the shipped one."""
    findings: list[Finding] = []
    kind, args = split_command(argv, spec)
    if kind == "other":
        program = " ".join(argv[:3]) if argv else "(empty)"
        return [Finding(WARNING, "not-a-server-command", program, f"not a {spec.engine} server command; not checked",
                        f"check only `{spec.engine} serve`-style commands")]
    rw = rewrite(args, spec.dialect)
    findings += [Finding(ERROR, "parse", flag, msg, fix) for flag, msg, fix in rw.problems]
    if rw.config_file is not None:
        findings.append(Finding(WARNING, "config-file", "--config", f"options in {rw.config_file!r} are not checked", "check that file separately"))
    for key in rw.duplicate_keys:
        if "." in key:
            findings.append(Finding(WARNING, "duplicate", key, "dotted key given twice; the engine keeps the last", "give it once"))
    ns = argparse.Namespace()
    try:
        _, extras = _argparser(spec).parse_known_args(rw.args, ns)
    except (_Stop, argparse.ArgumentError) as exc:
        flag = getattr(exc, "argument_name", None) or getattr(exc, "flag", "") or "argv"
        findings.append(Finding(ERROR, "parse", flag, exc.message if hasattr(exc, "message") else str(exc),
                                "fix this first; later flags were not checked"))
        extras = []
    previous_unknown = False
    for tok in extras:
        if tok.startswith(spec.prefix_chars[0]) and len(tok) > 1 and not re.match(r"^-\d", tok):
            if history is None:
                history = flag_history(spec.engine) if spec.source.startswith("launchcard/data") else {}
            found = _unknown(tok, spec, history)
            if kind == "wrapper" and found.rule == "unknown-flag":
                # e.g. dynamo.vllm adds its own flags; its parser is not captured
                found = Finding(WARNING, "wrapper-flag", found.flag,
                                f"not a {spec.engine} {spec.version} flag; may belong to the wrapper ({argv[2]})", found.fix)
            findings.append(found)
            previous_unknown = True
        elif not previous_unknown:
            findings.append(Finding(ERROR, "extra-positional", tok, "unexpected positional argument", "remove it or attach it to its flag"))
        else:
            previous_unknown = False  # the unknown flag's value; already reported
    findings += _judge_values(ns.__dict__.get("_lc_seen", []), spec, rw.dotted)
    return findings


def _judge_values(seen: list, spec: FlagSpec, dotted: dict[str, list[str]]) -> list[Finding]:
    findings: list[Finding] = []
    final: dict[str, Any] = {}
    given: dict[str, list[tuple[str, Any]]] = {}
    by_dest = {**{o.dest: o for o in spec.positionals}, **spec.by_dest}
    for dest, option_string, values in seen:
        o = by_dest.get(dest)
        if o is None:
            continue
        label = option_string or dest
        if option_string in dotted:
            label = ", ".join(dotted[option_string])
        if o.action in _ZERO_ARG:
            value = o.const if o.action != "bool_pair" else not (option_string or "").startswith("--no-")
            if o.action == "store_false":
                value = False
        else:
            raws = values if isinstance(values, list) else [values]
            converted = []
            for raw in raws:
                value, problems = _convert(o, raw, spec)
                rule = "bad-json" if o.type in ("json", "json_or_str") else "bad-type"
                findings += [Finding(ERROR, rule, label, msg, fix) for msg, fix in problems]
                if not problems:
                    bad = _check_choice(o, value)
                    if bad:
                        findings.append(Finding(ERROR, "bad-choice", label, *bad))
                converted.append(value)
            value = converted if isinstance(values, list) else converted[0]
        if o.deprecated and option_string:
            findings.append(Finding(WARNING, "deprecated", label, o.help or "deprecated", "drop it or use its replacement"))
        given.setdefault(dest, []).append((label, values))
        final[dest] = value
    for dest, uses in given.items():
        o = by_dest.get(dest)
        if o is None or o.action in ("append", "extend", "count") or len(uses) < 2:
            continue
        distinct = {json.dumps(v, sort_keys=True, default=str) + str(lbl.startswith("--no-")) for lbl, v in uses}
        if len(distinct) > 1:
            shown = ", ".join(f"{lbl} {v}" if not isinstance(v, list) or v else lbl for lbl, v in uses)
            findings.append(Finding(WARNING, "duplicate", o.name, f"given {len(uses)} times with different values ({shown})",
                                    "give it once; the engine keeps the last"))
    findings += _registry_rules(final, spec)
    return findings


def _registry_rules(final: dict[str, Any], spec: FlagSpec) -> list[Finding]:
    out: list[Finding] = []
    if spec.engine != "vllm":
        return out
    tool = final.get("tool_call_parser")
    auto = bool(final.get("enable_auto_tool_choice"))
    if auto and not tool:
        out.append(Finding(ERROR, "requires", "--enable-auto-tool-choice", "requires --tool-call-parser", "add --tool-call-parser NAME"))
    for dest, flag in (("tool_call_parser", "--tool-call-parser"), ("reasoning_parser", "--reasoning-parser")):
        name, names = final.get(dest), spec.registries.get(dest)
        if not name or names is None or name in names:
            continue
        if final.get(spec.plugin_flags.get(dest, "")):
            continue  # a plugin file may register it
        import difflib

        close = difflib.get_close_matches(str(name), list(names), n=1, cutoff=0.6)
        fix = (f"did you mean {close[0]!r}? " if close else "") + f"built-in: {', '.join(names)}"
        # vLLM only validates the tool parser when --enable-auto-tool-choice is on
        severity = ERROR if (dest != "tool_call_parser" or auto) else WARNING
        out.append(Finding(severity, "unknown-parser", flag, f"{name!r} is not a registered {dest.replace('_', ' ')}", fix))
    return out


def check_argv(
    argv: list[str],
    engine: str = "vllm",
    version: str | None = "0.32.0",
    min_version: str | None = None,
    nightly_required: bool = False,
) -> list[Finding]:
    """Findings for one launch command against the shipped spec of engine+version.

    ``argv`` may include the launcher prefix (``vllm serve``).  ``min_version``
    is the recipe's minimum engine version; ``nightly_required`` marks a recipe
    that needs a nightly build.  Raises InputError for an uncaptured version.
    """
    spec = shipped_spec(engine, version)
    findings = check_with_spec(argv, spec)
    if min_version and version_key(spec.version) < version_key(min_version):
        findings.insert(0, Finding(ERROR, "engine-too-old", f"{engine} {spec.version}",
                                   f"below the recipe's minimum {min_version}", f"use {engine} >= {min_version}"))
    if nightly_required and not spec.nightly:
        findings.insert(0, Finding(ERROR, "needs-nightly", f"{engine} {spec.version}",
                                   "the recipe needs a nightly build but this is a release", "use the nightly image/wheel"))
    return findings


def has_errors(findings: list[Finding]) -> bool:
    return any(f.severity == ERROR for f in findings)


def verdict(findings: list[Finding]) -> str:
    """"fail" on any error, "n/a" when the command is not the engine's server, else "pass"."""
    if has_errors(findings):
        return "fail"
    if any(f.rule == "not-a-server-command" for f in findings):
        return "n/a"
    return "pass"


def verdicts(env_argv: list[str], engine: str) -> dict[str, str]:
    """version -> "pass" | "fail" | "n/a" for every captured version of ``engine``.

    Empty when no spec of ``engine`` was captured (e.g. trtllm).  "n/a" marks
    a command that is not the engine's server (a router, a benchmark...).
    """
    return {v: verdict(check_argv(list(env_argv), engine, v)) for v in shipped_index().get(engine, ())}
