"""Check a launch command against a captured flag spec, offline.

Tokenisation is done by the standard library's argparse, rebuilt from the
spec (``_tokenise``: same option strings, nargs, prefix chars and abbreviation
rule as the engine's parser), with every action replaced by a recorder.  So which token
is a flag, which is its value and which is left over is decided exactly as
the engine's argparse decides it; the recorded values are then judged
against the captured types, choices, JSON schemas and parser registries.
Unlike argparse, which stops at the first problem, every finding is kept.

Two stages are judged, and every finding says which:

* ``argparse``: what the engine's parser (and the launcher's parser-name
  checks that run with it) rejects; comparable one to one with the real
  parser (``tests/test_flags_live.py``).
* ``startup``: what the engine rejects after parsing, when it builds its
  config classes (field bounds such as ``gt=0, le=1``, Literal/enum values,
  JSON config keys and types), from the ``startup`` field types the capture
  recorded per option.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import re
from dataclasses import dataclass
from typing import Any

from launchcard.argv import parse_command, split_entry, split_env
from launchcard.flags._close import closest
from launchcard.flags._successors import no_successor, successor
from launchcard.flags._tokenise import ZERO_ARG, parse_words
from launchcard.flagspec import (
    FlagSpec,
    Option,
    Rewritten,
    human_readable_int,
    human_readable_int_or_auto,
    rewrite,
    shipped_index,
    shipped_spec,
    shipped_specs,
    version_key,
)

# Any in this module: option values as argparse and the engine's types produce them (strings,
# numbers, JSON values, consts from the spec JSON).

ERROR, WARNING, INFO = "error", "warning", "info"
ARGPARSE, STARTUP, RECIPE, ENV = "argparse", "startup", "recipe", "env"

History = dict[str, tuple[str, str, "str | None"]]


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem with one flag: the rule it breaks, the bad value, the evidence and how to fix it."""

    severity: str  # "error" | "warning" | "info"
    rule: str  # unknown-flag, removed-flag, bad-choice, bad-json, bad-type, out-of-range, abbreviation, ...
    flag: str
    message: str
    fix: str
    stage: str = ARGPARSE  # "argparse" | "startup" | "recipe" (engine version rules) | "env" (environment variables)
    value: str | None = None  # the bad value as given (None when the flag itself is the problem)
    evidence: str = ""  # "vllm 0.32.0 spec: CacheConfig.gpu_memory_utilization (gt=0, le=1)"

    @property
    def code(self) -> str:
        """The rule id (the name the plan-verdict findings use)."""
        return self.rule

    def one_line(self) -> str:
        return format_finding(self)


def format_finding(f: Finding) -> str:
    """``error: --flag: what is wrong [rule-id]; fix (evidence: ...)`` on one line."""
    stage = "" if f.stage == ARGPARSE else f", {f.stage}"
    text = f"{f.severity}: {f.flag}: {f.message} [{f.rule}{stage}]"
    if f.fix:
        text += f"; {f.fix}"
    if f.evidence:
        text += f" (evidence: {f.evidence})"
    return " ".join(text.split())


def _ev(spec: FlagSpec, detail: str) -> str:
    return f"{spec.engine} {spec.version} spec: {detail}"


# Flags that hand `vllm serve` to another project's entry point with its own
# parser (vllm-omni's `vllm serve MODEL --omni`): flag -> that entry point.
# Checked against its captured spec when one is shipped, else not checked.
_ENTRY_POINT_FLAGS = {"vllm": {"--omni": "vllm-omni"}}
# Their console scripts: `vllm-omni serve` without --omni falls through to stock `vllm serve`.
_ENTRY_POINT_SCRIPTS = {"vllm": ("vllm-omni",)}


def split_command(argv: list[str], spec: FlagSpec) -> tuple[str, list[str]]:
    """("server" | "wrapper" | "other", the args after the launcher prefix).

    The entry point is read by ``launchcard.argv`` (one reading for every module);
    a wrapper (``python -m dynamo.vllm``) hands the engine's own flags through,
    plus flags of its own whose parser we have not captured.
    """
    _, engine, _, kind, rest = split_entry(argv, engine=spec.engine)
    if kind == "bare" and rest:
        return "server", rest  # bare flags: assume the server's
    if engine in _ENTRY_POINT_SCRIPTS.get(spec.engine, ()) and rest[:1] == ["serve"]:
        return "server", rest[1:]
    if engine != spec.engine or kind not in ("serve", "module", "wrapper"):
        return "other", rest
    return ("wrapper" if kind == "wrapper" else "server"), rest


# ---------------------------------------------------------------- values


def _convert(o: Option, raw: Any, spec: FlagSpec, label: str) -> tuple[Any, list[Finding]]:
    """(converted value, findings) for one raw string, as the engine's type would convert it."""
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
        return raw, [Finding(ERROR, "bad-type", label, f"expects {kind.replace('_', ' ')}, got {raw!r}", hint,
                             value=raw, evidence=_ev(spec, f"option {o.name} type={kind}"))]
    if kind == "json" or (kind == "json_or_str" and re.match(r"(?s)^\s*{.*}\s*$", raw)):
        text = raw
        if o.json_class:
            from launchcard.flags._jsonval import expand_human_numbers

            with contextlib.suppress(ValueError):
                text = expand_human_numbers(raw)
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            return raw, [Finding(ERROR, "bad-json", label, f"value is not valid JSON ({exc.msg} at column {exc.colno})",
                                 "quote the whole JSON object as one argument", value=raw,
                                 evidence=_ev(spec, f"option {o.name} type={kind}"))]
        if o.json_class:
            # the engine's argparse type builds the config class: its rejections are argparse errors
            from launchcard.flags._jsonval import validate_object

            problems = validate_object(value, o.json_class, spec.json_classes, o.name)
            return value, [Finding(ERROR, "bad-json", p.path, p.message, p.fix, value=p.value,
                                   evidence=_ev(spec, p.evidence)) for p in problems]
        return value, []
    if o.normalize == "lower_underscore":
        return raw.lower().replace("-", "_"), []
    return raw, []


def _check_choice(o: Option, value: Any, spec: FlagSpec, label: str) -> Finding | None:
    if o.choices is None or value in o.choices:
        return None
    shown = [c for c in o.choices if c is not None]
    close = closest(str(value), [str(c) for c in shown])
    fix = (f"did you mean {close!r}? " if close else "") + "choose from: " + ", ".join(map(str, shown))
    return Finding(ERROR, "bad-choice", label, f"{value!r} is not a valid choice", fix, value=str(value),
                   evidence=_ev(spec, f"option {o.name} choices"))


def _startup(o: Option, value: Any, spec: FlagSpec, label: str, given: str) -> list[Finding]:
    """What the engine's config class rejects after argparse (bounds, Literal/enum values, object keys)."""
    if o.startup is None or value is None:
        return []
    from launchcard.flags._jsonval import validate, validate_object

    tinfo: dict[str, Any] = o.startup  # the spec's JSON type description
    objects = [m for m in (tinfo, *tinfo.get("of", ())) if m.get("t") == "object"]
    if objects and isinstance(value, dict):
        # vLLM turns "-" into "_" in these keys before building the class, so dashes are never reported
        problems = validate_object(value, objects[0]["class"], spec.json_classes, o.name, dash_keys=True)
    else:
        problems = validate(value, tinfo, spec.json_classes, o.name if objects else label, o.config_field or "")
    out = []
    for p in problems:
        rule = "out-of-range" if "out of range" in p.message else (
            "bad-config-key" if p.message.startswith("unknown key") else "bad-config-value")
        whole = p.path in (o.name, label)  # the flag's own value, not a key inside it: show it as given
        message = p.message.replace(p.value, given, 1) if whole and not isinstance(value, str) else p.message
        out.append(Finding(ERROR, rule, label if whole else p.path, message, p.fix, stage=STARTUP,
                           value=given if whole else p.value,
                           evidence=_ev(spec, p.evidence)))
    return out


# ---------------------------------------------------------------- flags


def _suggest(flag: str, spec: FlagSpec, fuzzy: bool = True) -> str | None:
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
    if not fuzzy:
        return None
    return closest(name, (f for f in spec.by_flag if f.startswith("--")))


def derive_history(specs: list[FlagSpec]) -> History:
    """flag -> (change, version, replacement), by diffing consecutive captured specs.

    change is "removed", "renamed" or "added".  A removed flag counts as
    renamed only when the next version stores into the same dest with the same
    action (the engine kept the field and renamed its flag); a similar name or
    help line is no evidence.
    """
    ordered = sorted(specs, key=lambda s: version_key(s.version))
    history: History = {}
    for old, new in itertools.pairwise(ordered):
        added = [f for f in new.by_flag if f not in old.by_flag]
        for flag, o in old.by_flag.items():
            if flag in new.by_flag:
                continue
            target = None
            same = new.by_dest.get(o.dest)
            if same is not None and flag not in same.flags and same.action == o.action and same.type == o.type:
                target = same.name if not _negative(o, flag) else next(
                    (f for f in same.flags if _negative(same, f)), None)
            history[flag] = ("renamed", new.version, target) if target else ("removed", new.version, None)
        for flag in added:
            # a flag that comes back after a removal is simply available again
            history[flag] = ("added", new.version, None)
    return history


@functools.lru_cache(maxsize=8)
def flag_history(engine: str) -> History:
    """History of ``engine``'s flags across the shipped specs."""
    return derive_history(list(shipped_specs(engine)))


def _ranged(name: str, spec: FlagSpec, value: str | None = None) -> Finding | None:
    """removed in X (use Y) / not yet in X (added in Z), from the flag's range over the shipped specs.

    A successor is named only where the engine names one (``_successors``), quoting that evidence;
    otherwise the finding says the engine names none.
    """
    from launchcard.flags._ranges import flag_ranges

    r = flag_ranges(spec.engine).get(name)
    if r is None or r.accepted_in(spec.version):
        return None
    e = spec.engine
    ev = f"{e} specs {r.first}..{r.last}: options"
    removed, added = r.where_removed(spec.version), r.where_added(spec.version)
    if removed is not None:
        before = [v for v in r.versions if version_key(v) < version_key(removed)]
        text = f"removed in {e} {removed} (last accepted in {before[-1] if before else r.last}; accepted in {r.span()})"
        s = successor(e, name)
        if value is None and s is not None and s.use and "VALUE" in s.use:
            # given bare: a switch in the release that added it (--guided-decoding-disable-fallback), so on
            first = _option_in(e, name, r.first)
            if first is not None and first.nargs == 0:
                value = "false" if _negative(first, name) else "true"
        if s is not None and s.use:
            fix = f"use {s.render(value)}"
            if s.flag not in spec.by_flag:
                fix += f" (named by {e} {s.evidence.get('release', '')}; not accepted by {e} {spec.version} either)"
            return Finding(ERROR, "renamed-flag", name, text, fix, value=spec.version,
                           evidence=f"{s.quote()}; {ev}")
        if s is not None and s.per_value:
            return Finding(ERROR, "removed-flag", name, text, f"drop it; {s.several(value)}",
                           value=spec.version, evidence=f"{s.quote()}; {ev}")
        return Finding(ERROR, "removed-flag", name, f"{text}; {no_successor(e)}", "drop it",
                       value=spec.version, evidence=ev)
    if added is not None:
        older = _same_switch(name, spec, added)  # the same switch spelled as this release spells it
        return Finding(ERROR, "too-new-flag", name,
                       f"not yet in {e} {spec.version} (added in {added}; accepted in {r.span()})",
                       f"use {e} >= {added}" + (f", or {older} in {spec.version}" if older else " or drop the flag"),
                       value=spec.version, evidence=ev)
    return None


def _option_in(engine: str, name: str, version: str) -> Option | None:
    """``name`` as shipped release ``version`` of ``engine`` parses it (a release of the flag's own range)."""
    from launchcard.flagspec import shipped_spec

    return shipped_spec(engine, version).by_flag.get(name)


def _negative(o: Option, flag: str) -> bool:
    """Whether ``flag`` is the switch's off spelling (``--no-x``, a recorded negation, store_false)."""
    return flag in o.negation or o.action == "store_false" or (
        o.action == "bool_pair" and flag.startswith("--no-") and flag != o.flags[0])


def _same_switch(name: str, spec: FlagSpec, added: str) -> str | None:
    """The spelling in ``spec`` of the option ``name`` sets in release ``added``: same field, same sense."""
    older = _suggest(name, spec, fuzzy=False)
    if older is None:
        return None
    try:
        newer = shipped_spec(spec.engine, added).by_flag.get(name)
    except (OSError, ValueError, KeyError):
        return None
    mine = spec.by_flag[older]
    if newer is None or newer.dest != mine.dest or _negative(newer, name) != _negative(mine, older):
        return None
    return older


def check_env(env: dict[str, str], spec: FlagSpec, shipped: bool = True) -> list[Finding]:
    """Environment variables the release does not read (``VLLM_*`` against its captured ``vllm.envs`` registry)."""
    prefix = _ENV_PREFIX.get(spec.engine)
    if prefix is None:
        return []
    from launchcard.flags._ranges import env_ranges

    if not spec.envs:
        return _env_without_registry(env, spec, prefix) if shipped else []

    ranges = env_ranges(spec.engine) if shipped else {}
    out: list[Finding] = []
    for name, value in env.items():
        entry = spec.envs.get(name)
        if entry is not None and entry.get("deprecated"):
            use = entry.get("replaced_by")
            out.append(Finding(WARNING, "deprecated-env", name, f"deprecated in {spec.engine} {spec.version}",
                               f"use {use} instead" if use else "drop it", stage=ENV, value=str(value),
                               evidence=_ev(spec, f"envs.{name}.deprecated")))
            continue
        if entry is not None:
            choices = entry.get("choices")
            if choices and str(value).lower() not in {str(c).lower() for c in choices}:
                out.append(Finding(ERROR, "bad-env-value", name, f"{value!r} is not one of {spec.engine}'s choices",
                                   "choose from: " + ", ".join(map(str, choices)), stage=STARTUP, value=str(value),
                                   evidence=_ev(spec, f"envs.{name}.choices")))
            continue
        if not name.startswith(prefix):
            continue
        r = ranges.get(name)
        removed = r.where_removed(spec.version) if r else None
        added = r.where_added(spec.version) if r else None
        ev = _ev(spec, "envs (vllm.envs.environment_variables)")
        if r is not None and removed is not None:
            s = successor(spec.engine, name)
            use = s.render(str(value)) if s is not None and s.use else None
            fix = f"use {use} instead" if use else f"drop it; {s.several(str(value))}" if s is not None \
                and s.per_value else "drop it"
            if use and s is not None and s.flag and (s.flag not in spec.envs if s.is_env()
                                                     else s.flag not in spec.by_flag):
                fix += (f" (named by {spec.engine} {s.evidence.get('release', '')}; "
                        f"not {'read' if s.is_env() else 'accepted'} by {spec.engine} {spec.version} either)")
            out.append(Finding(WARNING, "removed-env", name,
                               f"{spec.engine} {spec.version} no longer reads it "
                               f"(removed in {removed}; read in {r.span()})"
                               + ("" if use or (s is not None and s.per_value) else f"; {no_successor(spec.engine)}"),
                               fix, stage=ENV, value=str(value),
                               evidence=f"{s.quote()}; {ev}" if s is not None else ev))
        elif r is not None and added is not None:
            out.append(Finding(WARNING, "too-new-env", name,
                               f"not yet read by {spec.engine} {spec.version} (added in {added})",
                               f"use {spec.engine} >= {added} or drop it", stage=ENV, value=str(value), evidence=ev))
        else:
            close = closest(name, spec.envs, cutoff=0.8)
            out.append(Finding(WARNING, "unknown-env", name,
                               f"{spec.engine} {spec.version} does not read this variable "
                               "(not in any captured release)",
                               f"did you mean {close}?" if close else "drop it or check its spelling",
                               stage=ENV, value=str(value), evidence=ev))
    return out


_ENV_PREFIX = {"vllm": "VLLM_", "sglang": "SGLANG_"}


def _env_without_registry(env: dict[str, str], spec: FlagSpec, prefix: str) -> list[Finding]:
    """A release whose variable registry was not captured (SGLang 0.5.23): a variable the captured registries
    stopped reading before it is still reported, with the releases that show it and the gap said."""
    from launchcard.flags._ranges import env_ranges

    ranges = env_ranges(spec.engine)
    out: list[Finding] = []
    for name, value in env.items():
        r = ranges.get(name) if name.startswith(prefix) else None
        if r is None or r.removed_in is None or version_key(r.removed_in) > version_key(spec.version):
            continue
        later = [v for v in r.captured if version_key(v) >= version_key(r.removed_in)]
        s = successor(spec.engine, name)
        use = s.render(str(value)) if s is not None and s.use else None
        seen = f"{later[0]}..{later[-1]}" if len(later) > 1 else later[0]
        out.append(Finding(
            WARNING, "removed-env", name,
            f"{spec.engine} stopped reading it in {r.removed_in} (not read by the captured registries of {seen}; "
            f"read in {r.span()}); {spec.engine} {spec.version}'s registry was not captured"
            + ("" if use or (s is not None and s.per_value) else f"; {no_successor(spec.engine)}"),
            f"use {use} instead" if use else f"drop it; {s.several(str(value))}" if s is not None and s.per_value
            else "drop it", stage=ENV, value=str(value),
            evidence=(f"{s.quote()}; " if s is not None else "") + f"{spec.engine} specs {seen}: envs"))
    return out


_REWRITTEN: dict[tuple[tuple[str, ...], str], Rewritten] = {}
_UNKNOWN: dict[tuple[Any, ...], tuple[FlagSpec, History, Finding]] = {}


def _rewritten(args: list[str], dialect: str) -> Rewritten:
    """``rewrite`` once per command and dialect (not once per release); callers only read the result."""
    key = (tuple(args), dialect)
    done = _REWRITTEN.get(key)
    if done is None:
        if len(_REWRITTEN) > 20000:
            _REWRITTEN.clear()
        done = _REWRITTEN[key] = rewrite(args, dialect)
    return done


def _unknown_once(flag: str, spec: FlagSpec, history: History, ranges: bool, value: str | None,
                  suggest: bool = True) -> Finding:
    """:func:`_unknown`, kept per spec and history: the same unknown flag recurs across a corpus's commands."""
    key = (flag, id(spec), id(history), ranges, value, suggest)
    hit = _UNKNOWN.get(key)
    if hit is not None and hit[0] is spec and hit[1] is history:
        return hit[2]
    found = _unknown(flag, spec, history, ranges, value, suggest)
    if len(_UNKNOWN) > 20000:
        _UNKNOWN.clear()
    _UNKNOWN[key] = (spec, history, found)
    return found


def _unknown(flag: str, spec: FlagSpec, history: History, ranges: bool = False, value: str | None = None,
             suggest: bool = True) -> Finding:
    name = flag.split("=", 1)[0]
    if " " in name and name.split(" ", 1)[0] in spec.by_flag:
        head, rest = name.split(" ", 1)
        return Finding(ERROR, "one-token", name,
                       "flag and value are one argv item, so the parser sees an unknown positional",
                       f"split it into two items: {head} {rest}", value=rest,
                       evidence=_ev(spec, f"option {head} takes its value as the next item"))
    given = flag.split("=", 1)[1] if "=" in flag else value
    ranged = _ranged(name, spec, given) if ranges else None
    if ranged is not None:
        return ranged
    change = history.get(name)
    if change:
        kind, at, target = change
        if kind == "added" and version_key(at) > version_key(spec.version):
            return Finding(ERROR, "too-new-flag", name,
                           f"only exists from {spec.engine} {at}; {spec.version} rejects it",
                           f"use {spec.engine} >= {at} or drop the flag",
                           evidence=f"{spec.engine} {spec.version} and {at} specs: options")
        if kind in ("renamed", "removed") and version_key(at) <= version_key(spec.version):
            ev = f"{spec.engine} {at} spec vs the one before: options"
            if target:
                return Finding(ERROR, "renamed-flag", name, f"renamed in {spec.engine} {at}", f"use {target}",
                               evidence=ev)
            return Finding(ERROR, "removed-flag", name, f"removed in {spec.engine} {at}", "drop it", evidence=ev)
    # without ``suggest`` (a verdict reads only rule and severity) the closest spelling is not looked for
    suggestion = _suggest(name, spec) if suggest else None
    prefix = " ".join(spec.command_prefix) or spec.engine
    fix = f"did you mean {suggestion}?" if suggestion else f"see `{prefix} --help`"
    return Finding(ERROR, "unknown-flag", name, f"{spec.engine} {spec.version} has no such option", fix,
                   evidence=_ev(spec, "options"))


def _parse_problem(flag: str, message: str) -> tuple[str, str, str]:
    """(flag, message, concrete fix) for a structural argparse error."""
    later = "; later flags were not checked"
    ambiguous = re.match(r"ambiguous option: (\S+?)(?:=\S*)? could match (.+)$", message)
    if ambiguous:
        return ambiguous.group(1), "ambiguous abbreviation" + later, "spell out one of: " + ambiguous.group(2)
    primary = flag.split("/", 1)[0]
    if "expected" in message and "argument" in message:
        return primary, message + later, f"give a value after {primary}"
    return primary, message + later, "fix this argument as the message says, then re-check"


def _entry_point(args: list[str], spec: FlagSpec) -> tuple[str, str] | None:
    """(flag, entry point) when a flag hands the command to another project's parser."""
    for flag, entry in _ENTRY_POINT_FLAGS.get(spec.engine, {}).items():
        if flag not in spec.by_flag and any(a == flag or a.startswith(flag + "=") for a in args):
            return flag, entry
    return None


# ---------------------------------------------------------------- main


def check_with_spec(
    argv: list[str], spec: FlagSpec, history: History | None = None, env: dict[str, str] | None = None,
    suggest: bool = True,
) -> list[Finding]:
    """Findings for ``argv`` against ``spec``.

    Without ``history``, a shipped spec's unknown flags are judged against the
    flags' release ranges over every shipped spec of the engine (removed in X,
    use Y / not yet in X, added in Z).  ``env`` (plus the command's own leading
    ``VAR=value`` words) is checked against the release's environment registry.  ``suggest=False`` leaves
    the closest spelling of an unknown flag out of its fix (same findings otherwise: what a verdict needs).
    """
    key = (tuple(argv), spec.engine, spec.version, spec.source, tuple(sorted((env or {}).items())), suggest)
    # .get, not `in` then [ ]: another thread (the web server's pool) may clear the memo in between
    hit = _MEMO.get(key) if history is None and spec.source.startswith("launchcard/data") else None
    if hit is not None:
        return list(hit)  # shipped specs never change within a process: same command, same findings
    findings = _check_with_spec(argv, spec, history, env, suggest)
    if history is None and spec.source.startswith("launchcard/data"):
        if len(_MEMO) > 20000:
            _MEMO.clear()
        _MEMO[key] = tuple(findings)
    return findings


_MEMO: dict[tuple[Any, ...], tuple[Finding, ...]] = {}


def _check_with_spec(
    argv: list[str], spec: FlagSpec, history: History | None, env: dict[str, str] | None, suggest: bool = True
) -> list[Finding]:
    findings: list[Finding] = []
    shipped = spec.source.startswith("launchcard/data")
    use_ranges = history is None and shipped
    kind, args = split_command(argv, spec)
    if kind != "other":
        findings += check_env({**split_env(argv)[0], **(env or {})}, spec, shipped)
    if kind == "other":
        program = " ".join(argv[:3]) if argv else "(empty)"
        return [Finding(WARNING, "not-a-server-command", program, f"not a {spec.engine} server command; not checked",
                        f"check only `{spec.engine} serve`-style commands",
                        evidence=_ev(spec, "command_prefix " + " ".join(spec.command_prefix)))]
    handoff = _entry_point(args, spec) if kind == "server" else None
    if handoff is not None:
        flag, entry = handoff
        if entry in shipped_index():
            return check_with_spec([*spec.command_prefix, *[a for a in args if a != flag]], shipped_spec(entry),
                                   suggest=suggest)
        return [Finding(INFO, "not-checked", flag, f"not checked: {entry} entry point parser not captured "
                        f"({flag} makes `{' '.join(spec.command_prefix)}` run {entry}'s own server)",
                        f"capture {entry}'s parser to check this command, or check it with `vllm serve --omni --help`"
                        if flag == "--omni" else f"capture {entry}'s parser to check this command",
                        evidence=_ev(spec, f"options (no {flag}); no captured {entry} spec"))]
    rw = _rewritten(args, spec.dialect)
    findings += [Finding(ERROR, "parse", flag, msg, fix, evidence=_ev(spec, f"dialect {spec.dialect}"))
                 for flag, msg, fix in rw.problems]
    if rw.config_file is not None:
        findings.append(Finding(WARNING, "config-file", "--config", f"options in {rw.config_file!r} are not checked",
                                "check that file separately", value=rw.config_file,
                                evidence=_ev(spec, f"dialect {spec.dialect}")))
    for key in rw.duplicate_keys:
        if "." in key:
            findings.append(Finding(WARNING, "duplicate", key, "dotted key given twice; the engine keeps the last",
                                    "give it once", evidence=_ev(spec, f"dialect {spec.dialect}")))
    parsed = parse_words(spec, rw.args)
    if parsed.stopped is not None:
        findings.append(Finding(ERROR, "parse", *_parse_problem(*parsed.stopped), evidence=_ev(spec, "options")))
    extras = parsed.extras
    for given, full in dict.fromkeys(parsed.expanded):
        findings.append(Finding(WARNING, "abbreviation", given, f"argparse expands this abbreviation to {full}",
                                f"spell it out: {full} (a future option with the same prefix would make it ambiguous)",
                                evidence=_ev(spec, "allow_abbrev=true")))
    previous_unknown = False
    for tok in extras:
        if tok.startswith(spec.prefix_chars[0]) and len(tok) > 1 and not re.match(r"^-\d", tok):
            if history is None:
                history = flag_history(spec.engine) if spec.source.startswith("launchcard/data") else {}
            at = extras.index(tok)
            after = extras[at + 1] if at + 1 < len(extras) else None
            found = _unknown_once(tok, spec, history, use_ranges,
                                  after if after is not None and not after.startswith(spec.prefix_chars[0]) else None,
                                  suggest)
            if kind == "wrapper" and found.rule == "unknown-flag":
                # e.g. dynamo.vllm adds its own flags; its parser is not captured
                found = Finding(WARNING, "wrapper-flag", found.flag,
                                f"not a {spec.engine} {spec.version} flag; may belong to the wrapper ({argv[2]})",
                                found.fix, evidence=found.evidence)
            findings.append(found)
            previous_unknown = True
        elif not previous_unknown:
            findings.append(Finding(ERROR, "extra-positional", tok, "unexpected positional argument",
                                    "remove it or attach it to its flag", value=tok,
                                    evidence=_ev(spec, "positionals")))
        else:
            previous_unknown = False  # the unknown flag's value; already reported
    findings += _judge_values(list(parsed.seen), spec, rw.dotted)
    return findings


def _judge_values(seen: list[tuple[str, str | None, Any]], spec: FlagSpec,
                  dotted: dict[str, list[str]]) -> list[Finding]:
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
        value: Any
        if o.action in ZERO_ARG:
            value = o.const if o.action != "bool_pair" else (
                option_string not in o.negation if o.negation else not (option_string or "").startswith("--no-"))
            if o.action == "store_false":
                value = False
        else:
            raws = values if isinstance(values, list) else [values]
            converted = []
            rejected = False
            for raw in raws:
                value, problems = _convert(o, raw, spec, label)
                bad = None if problems else _check_choice(o, value, spec, label)
                findings += [*problems, *([bad] if bad else [])]
                rejected = rejected or bool(problems) or bad is not None
                converted.append(value)
            value = converted if isinstance(values, list) else converted[0]
            if not rejected:  # the engine only builds its config from values its parser accepted
                findings += _startup(o, value, spec, label, " ".join(map(str, raws)))
        if o.deprecated and option_string:
            message, fix = _deprecation(o, spec, option_string)
            findings.append(Finding(WARNING, "deprecated", label, message, fix,
                                    evidence=_ev(spec, f"option {o.name} deprecated (parser attribute or help text)")))
        given.setdefault(dest, []).append((label, values))
        final[dest] = value
    for dest, uses in given.items():
        o = by_dest.get(dest)
        if o is None or o.action in ("append", "extend", "count") or len(uses) < 2:
            continue
        distinct = {json.dumps(v, sort_keys=True, default=str) + str(lbl.startswith("--no-")) for lbl, v in uses}
        if len(distinct) > 1:
            shown = ", ".join(f"{lbl} {v}" if not isinstance(v, list) or v else lbl for lbl, v in uses)
            findings.append(Finding(WARNING, "duplicate", o.name,
                                    f"given {len(uses)} times with different values ({shown})",
                                    "give it once; the engine keeps the last",
                                    evidence=_ev(spec, f"option {o.name} action={o.action}")))
    findings += _registry_rules(final, spec)
    return findings


def _deprecation(o: Option, spec: FlagSpec | None = None, given: str = "") -> tuple[str, str]:
    """(message without the flag's own name, with its deprecation window; fix naming the replacement)."""
    text, fix = _deprecation_text(o)
    if spec is not None and spec.source.startswith("launchcard/data") and given:
        from launchcard.flags._ranges import flag_ranges

        r = flag_ranges(spec.engine).get(given)
        if r is not None:
            since = f"deprecated since {spec.engine} {r.deprecated_from}" if r.deprecated_from else "deprecated"
            until = f"removed in {r.removed_in}" if r.removed_in else "still accepted in the newest captured release"
            text += f" ({since}; {until})"
        named = successor(spec.engine, given)
        if fix == "drop it" and named is not None and named.use:  # the release's own help wording comes first
            fix = f"use {named.use} instead"
    return text, fix


def _deprecation_text(o: Option) -> tuple[str, str]:
    """(message without the flag's own name, fix naming the replacement the help gives)."""
    names = "|".join(re.escape(n) for n in sorted(o.flags, key=len, reverse=True))
    text = re.sub(rf"^`?(?:{names})`?\s+", "", o.help).strip() if names else o.help
    if not text or not re.search(r"deprecat", text, re.IGNORECASE):
        text = "deprecated" + (f": {text}" if text else "")
    use = re.search(r"\b[Uu]se\s+(`?--[^\s`=;)]+(?:=[^\s`;)]+)?`?)", o.help)
    fix = f"use {use.group(1).strip('`').rstrip('.')} instead" if use else "drop it"
    return text, fix


def _registry_rules(final: dict[str, Any], spec: FlagSpec) -> list[Finding]:
    """vLLM's pre-launch parser-name checks (run with argparse; the live test's real parser applies them too)."""
    out: list[Finding] = []
    if spec.engine != "vllm":
        return out
    tool = final.get("tool_call_parser")
    auto = bool(final.get("enable_auto_tool_choice"))
    if auto and not tool:
        out.append(Finding(ERROR, "requires", "--enable-auto-tool-choice", "requires --tool-call-parser",
                           "add --tool-call-parser NAME", evidence=_ev(spec, "registries.tool_call_parser")))
    for dest, flag in (("tool_call_parser", "--tool-call-parser"), ("reasoning_parser", "--reasoning-parser")):
        name, names = final.get(dest), spec.registries.get(dest)
        if not name or names is None or name in names:
            continue
        if spec.by_dest.get(dest) is not None and spec.by_dest[dest].choices is not None:
            continue  # the parser's own choices already rejected it (older releases)
        if final.get(spec.plugin_flags.get(dest, "")):
            continue  # a plugin file may register it
        close = closest(str(name), names)
        fix = (f"did you mean {close!r}? " if close else "") + f"built-in: {', '.join(names)}"
        # vLLM only validates the tool parser when --enable-auto-tool-choice is on
        severity = ERROR if (dest != "tool_call_parser" or auto) else WARNING
        out.append(Finding(severity, "unknown-parser", flag, f"{name!r} is not a registered {dest.replace('_', ' ')}",
                           fix, value=str(name), evidence=_ev(spec, f"registries.{dest}")))
    return out


def check_argv(
    argv: list[str],
    engine: str = "vllm",
    version: str | None = "0.32.0",
    min_version: str | None = None,
    nightly_required: bool = False,
    env: dict[str, str] | None = None,
    suggest: bool = True,
) -> list[Finding]:
    """Findings for one launch command against the shipped spec of engine+version.

    ``argv`` may include the launcher prefix (``vllm serve``).  ``min_version``
    is the recipe's minimum engine version; ``nightly_required`` marks a recipe
    that needs a nightly build.  Raises InputError for an uncaptured version.
    """
    spec = shipped_spec(engine, version)
    findings = check_with_spec(argv, spec, env=env, suggest=suggest)
    if min_version:
        findings += min_version_findings(argv, engine, min_version)
    if min_version and version_key(spec.version) < version_key(min_version):
        findings.insert(0, Finding(ERROR, "engine-too-old", f"{engine} {spec.version}",
                                   f"below the recipe's minimum {min_version}", f"use {engine} >= {min_version}",
                                   stage=RECIPE, value=spec.version, evidence=_ev(spec, "version")))
    if nightly_required and not spec.nightly:
        findings.insert(0, Finding(ERROR, "needs-nightly", f"{engine} {spec.version}",
                                   "the recipe needs a nightly build but this is a release",
                                   "use the nightly image/wheel", stage=RECIPE, value=spec.version,
                                   evidence=_ev(spec, "nightly=false")))
    return findings


def min_version_findings(argv: list[str], engine: str, min_version: str) -> list[Finding]:
    """A flag added after the recipe's declared minimum (the first captured release at or above it lacks it)."""
    from launchcard.flags._ranges import flag_ranges

    if not re.match(r"^v?\d", min_version):
        return []  # "nightly" and the like: no release to compare with
    captured = [v for v in shipped_index().get(engine, ()) if version_key(v) >= version_key(min_version)]
    if not captured:
        return []
    base, ranges = captured[0], flag_ranges(engine)
    out: list[Finding] = []
    written = (occ.written for occ in parse_command(argv, engine=engine, version=base).occurrences)
    for word in dict.fromkeys(w for w in written if w.startswith("--")):
        r = ranges.get(word)
        added = r.where_added(base) if r is not None and not r.accepted_in(base) else None
        if r is None or added is None:
            continue
        out.append(Finding(WARNING, "min-version-too-low", word,
                           f"only accepted from {engine} {added}, but the recipe's minimum is {min_version} "
                           f"({base} rejects it)", f"raise the minimum to {added}", stage=RECIPE, value=min_version,
                           evidence=f"{engine} specs {base} and {added}: options"))
    return out


def has_errors(findings: list[Finding], stage: str | None = None) -> bool:
    """Any error (of ``stage`` only, when given: "argparse" is what the engine's parser itself rejects)."""
    return any(f.severity == ERROR and (stage is None or f.stage == stage) for f in findings)


def verdict(findings: list[Finding], stage: str | None = None) -> str:
    """"fail" on any error, "n/a" when the command is not the engine's server or not checked, else "pass"."""
    if has_errors(findings, stage):
        return "fail"
    if any(f.rule in ("not-a-server-command", "not-checked") for f in findings):
        return "n/a"
    return "pass"


def verdicts(env_argv: list[str], engine: str) -> dict[str, str]:
    """version -> "pass" | "fail" | "n/a" for every captured version of ``engine``.

    Empty when no spec of ``engine`` was captured (e.g. trtllm).  "n/a" marks
    a command that is not the engine's server (a router, a benchmark...) or
    one handed to an entry point whose parser is not captured (vllm-omni).
    """
    return {s.version: verdict(check_argv(list(env_argv), engine, s.version, suggest=False))
            for s in shipped_specs(engine)}
