"""Judge the values a launch command gives its flags, as the engine's parser and config classes would.

argparse's recorded values are converted with the captured types (ints, human-readable numbers, JSON with
its config class), checked against choices, then against the ``startup`` field types the capture recorded
(bounds, Literal values, JSON keys); a flag given twice with different values, a deprecated spelling and
vLLM's parser-registry checks are reported here too.
"""

from __future__ import annotations

import contextlib
import json
import re
from typing import Any

from launchcard.flags._close import closest
from launchcard.flags._finding import ERROR, STARTUP, WARNING, Finding, spec_ev
from launchcard.flags._successors import successor
from launchcard.flags._tokenise import ZERO_ARG
from launchcard.flagspec import FlagSpec, Option, human_readable_int, human_readable_int_or_auto

# Any in this module: option values as argparse and the engine's types produce them (strings,
# numbers, JSON values, consts from the spec JSON).


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
                             value=raw, evidence=spec_ev(spec, f"option {o.name} type={kind}"))]
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
                                 evidence=spec_ev(spec, f"option {o.name} type={kind}"))]
        if o.json_class:
            # the engine's argparse type builds the config class: its rejections are argparse errors
            from launchcard.flags._jsonval import validate_object

            problems = validate_object(value, o.json_class, spec.json_classes, o.name)
            return value, [Finding(ERROR, "bad-json", p.path, p.message, p.fix, value=p.value,
                                   evidence=spec_ev(spec, p.evidence)) for p in problems]
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
                   evidence=spec_ev(spec, f"option {o.name} choices"))


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
                           evidence=spec_ev(spec, p.evidence)))
    return out


def judge_values(seen: list[tuple[str, str | None, Any]], spec: FlagSpec,
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
            findings.append(Finding(WARNING, "deprecated", label, message, fix, evidence=spec_ev(
                spec, f"option {o.name} deprecated (parser attribute or help text)")))
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
                                    evidence=spec_ev(spec, f"option {o.name} action={o.action}")))
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
                           "add --tool-call-parser NAME", evidence=spec_ev(spec, "registries.tool_call_parser")))
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
                           fix, value=str(name), evidence=spec_ev(spec, f"registries.{dest}")))
    return out
