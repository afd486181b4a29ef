"""Offline check of a JSON config value against a captured config-class schema.

vLLM turns ``--attention-config '{...}'`` (and the dotted form) into its config
dataclass with pydantic (``TypeAdapter(cls).validate_json``, extra keys
forbidden).  We cannot import pydantic's view of vLLM here, so the capture
recorded each class's fields and simplified types; this applies pydantic's
lax-mode rules for those simple types and judges nothing it cannot be sure of
(enums, custom types and fields behind 'before' validators are ``any``).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# Any in this module: the values judged are JSON values from the command line, and the schemas
# (tinfo, classes) are JSON documents from the captured spec.

# pydantic v2 lax-mode strings accepted for a bool
_BOOL_STR = {"0", "off", "f", "false", "n", "no", "1", "on", "t", "true", "y", "yes"}
_NUM_IN_JSON = re.compile(r"\b\d+(?:\.\d+)?[kKmMgGtT]\b")
_QUOTED = re.compile(r'("(?:[^"\\]|\\.)*")')


def expand_human_numbers(text: str) -> str:
    """vLLM's ``_expand_json_human_readable_numbers``: bare ``80m`` -> 80000000."""
    from launchcard.flagspec import human_readable_int

    parts = _QUOTED.split(text)
    for i in range(0, len(parts), 2):
        parts[i] = _NUM_IN_JSON.sub(lambda m: str(human_readable_int(m.group())), parts[i])
    return "".join(parts)


def _show(value: object) -> str:
    import json

    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass(frozen=True, slots=True)
class JsonProblem:
    """One value pydantic would reject: where, the rule broken, the fix, and which declared type says so."""

    path: str  # --compilation-config.cudagraph_mode
    message: str
    fix: str
    value: str  # the bad value, shown as JSON
    evidence: str  # CompilationConfig.cudagraph_mode (enum CUDAGraphMode)


_BOUND_TEXT = {"gt": ">", "ge": ">=", "lt": "<", "le": "<="}


def _number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def bounds_text(tinfo: dict[str, Any]) -> str:
    """'gt=0, le=1' as declared, for evidence."""
    return ", ".join(f"{k}={tinfo[k]}" for k in _BOUND_TEXT if k in tinfo)


def _range(tinfo: dict[str, Any]) -> str:
    lo = next((k for k in ("gt", "ge") if k in tinfo), None)
    hi = next((k for k in ("lt", "le") if k in tinfo), None)
    if lo and hi:
        return f"{'(' if lo == 'gt' else '['}{tinfo[lo]}, {tinfo[hi]}{')' if hi == 'lt' else ']'}"
    key = lo or hi or ""
    return f"{_BOUND_TEXT[key]} {tinfo[key]}" if key else ""


def check_bounds(value: Any, tinfo: dict[str, Any]) -> str | None:
    """The broken bound's text ("must be > 0 and <= 1"), or None when inside or not numeric."""
    number = _number(value)
    if number is None or not any(k in tinfo for k in _BOUND_TEXT):
        return None
    ok = (
        ("gt" not in tinfo or number > tinfo["gt"])
        and ("ge" not in tinfo or number >= tinfo["ge"])
        and ("lt" not in tinfo or number < tinfo["lt"])
        and ("le" not in tinfo or number <= tinfo["le"])
    )
    if ok:
        return None
    return "must be " + " and ".join(f"{_BOUND_TEXT[k]} {tinfo[k]}" for k in _BOUND_TEXT if k in tinfo)


def _range_fix(tinfo: dict[str, Any]) -> str:
    text = _range(tinfo)
    return f"use a value in {text}" if text.startswith(("(", "[")) else f"use a value {text}"


def validate(
    value: Any, tinfo: dict[str, Any], classes: dict[str, Any], path: str, evidence: str = ""
) -> list[JsonProblem]:
    """What pydantic would reject in ``value`` for declared type ``tinfo``; empty when it would accept."""
    problems = _validate_type(value, tinfo, classes, path, evidence)
    if not problems:
        broken = check_bounds(value, tinfo)
        if broken:
            where = f"{evidence} ({bounds_text(tinfo)})" if evidence else bounds_text(tinfo)
            problems = [JsonProblem(path, f"{_show(value)} is out of range: {broken}", _range_fix(tinfo), _show(value),
                                    where)]
    return problems


def _problem(path: str, message: str, fix: str, value: Any, evidence: str, tinfo: dict[str, Any]) -> JsonProblem:
    kind = tinfo.get("t", "any")
    declared = f"{kind} {tinfo['class']}" if kind in ("enum", "object") and "class" in tinfo else kind
    return JsonProblem(path, message, fix, _show(value), f"{evidence} ({declared})" if evidence else declared)


def _validate_type(
    value: Any, tinfo: dict[str, Any], classes: dict[str, Any], path: str, evidence: str
) -> list[JsonProblem]:
    kind = tinfo.get("t", "any")
    if kind == "any":
        return []
    if kind == "union":
        # Report the first non-null member's complaint: "must be null" helps nobody.
        report: list[JsonProblem] = []
        for member in tinfo.get("of", []):
            problems = validate(value, member, classes, path, evidence)
            if not problems:
                return []
            if not report and member.get("t") != "null":
                report = problems
        return report
    if kind == "null":
        return [] if value is None else [_problem(path, f"must be null, got {_show(value)}", "remove it", value,
                                                  evidence, tinfo)]
    if kind == "bool":
        ok = (
            isinstance(value, bool)
            or (isinstance(value, (int, float)) and value in (0, 1))
            or (isinstance(value, str) and value.strip().lower() in _BOOL_STR)
        )
        return [] if ok else [_problem(path, f"must be a boolean, got {_show(value)}", "use true or false", value,
                                       evidence, tinfo)]
    if kind == "int":
        ok = isinstance(value, (bool, int)) or (isinstance(value, float) and value.is_integer())
        if isinstance(value, str):
            ok = _parses(int, value)
        return [] if ok else [_problem(path, f"must be an integer, got {_show(value)}", "give a whole number", value,
                                       evidence, tinfo)]
    if kind == "float":
        ok = isinstance(value, (bool, int, float)) or (isinstance(value, str) and _parses(float, value))
        return [] if ok else [_problem(path, f"must be a number, got {_show(value)}", "give a number", value,
                                       evidence, tinfo)]
    if kind == "str":
        return [] if isinstance(value, str) else [_problem(path, f"must be a string, got {_show(value)}",
                                                           "quote the value", value, evidence, tinfo)]
    if kind == "literal":
        allowed = tinfo.get("values", [])
        if any(type(value) is type(a) and value == a for a in allowed):
            return []
        return [_problem(path, f"value {_show(value)} is not allowed", _one_of(value, allowed), value, evidence,
                         tinfo)]
    if kind == "enum":
        # Only strings are judged: other JSON inputs may match an enum value.
        if not isinstance(value, str):
            return []
        accepts = tinfo.get("accepts", [])
        probe = value.upper() if tinfo.get("fold_case") else value
        if probe in accepts:
            return []
        return [_problem(path, f"value {_show(value)} is not a {tinfo.get('class', 'enum')} member",
                         _one_of(probe, accepts) + (" (any case)" if tinfo.get("fold_case") else ""), value,
                         evidence, tinfo)]
    if kind == "list":
        if not isinstance(value, list):
            return [_problem(path, f"must be a list, got {_show(value)}", "give a JSON array", value, evidence, tinfo)]
        items = tinfo.get("items", {"t": "any"})
        return [p for i, v in enumerate(value) for p in validate(v, items, classes, f"{path}[{i}]", evidence)]
    if kind == "dict":
        return [] if isinstance(value, dict) else [_problem(path, f"must be an object, got {_show(value)}",
                                                            "give a JSON object", value, evidence, tinfo)]
    if kind == "object":
        return validate_object(value, tinfo["class"], classes, path)
    return []


def _one_of(value: Any, allowed: list[Any]) -> str:
    close = difflib.get_close_matches(str(value), [str(a) for a in allowed], n=1, cutoff=0.6)
    return (f"did you mean {close[0]!r}? " if close else "") + "use one of: " + ", ".join(map(str, allowed))


def validate_object(
    value: Any, class_name: str, classes: dict[str, Any], path: str, dash_keys: bool = False
) -> list[JsonProblem]:
    """Unknown keys and bad values of a JSON object for config class ``class_name``.

    ``dash_keys``: the engine turns "-" into "_" in the top-level keys before
    building the class (vLLM does so for --speculative-config).
    """
    schema = classes.get(class_name)
    if not isinstance(value, dict):
        return [JsonProblem(path, f"must be a JSON object for {class_name}, got {_show(value)}", "give a JSON object",
                            _show(value), class_name)]
    if not schema:
        return []
    fields = schema.get("fields", {})
    problems: list[JsonProblem] = []
    for key, item in value.items():
        sub = f"{path}.{key}"
        name = key.replace("-", "_") if dash_keys else key
        if name not in fields:
            if schema.get("extra") == "forbid" and not schema.get("model_before_validator"):
                close = difflib.get_close_matches(name, list(fields), n=1, cutoff=0.6)
                fix = f"did you mean {close[0]!r}?" if close else f"{class_name} has no such key; remove it"
                problems.append(JsonProblem(sub, f"unknown key {key!r} for {class_name}", fix, _show(item),
                                            f"{class_name} fields (extra keys forbidden)"))
            continue
        problems += validate(item, fields[name], classes, sub, f"{class_name}.{name}")
    return problems


def _parses(conv: Callable[[str], object], text: str) -> bool:
    try:
        conv(text.strip())
    except ValueError:
        return False
    return True
