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
from typing import Any

# pydantic v2 lax-mode strings accepted for a bool
_BOOL_STR = {"0", "off", "f", "false", "n", "no", "1", "on", "t", "true", "y", "yes"}
_NUM_IN_JSON = re.compile(r"\b\d+(?:\.\d+)?[kKmMgGtT]\b")
_QUOTED = re.compile(r'("(?:[^"\\]|\\.)*")')


def expand_human_numbers(text: str) -> str:
    """vLLM's ``_expand_json_human_readable_numbers``: bare ``80m`` -> 80000000."""
    from launchcard.flags._dialect import human_readable_int

    parts = _QUOTED.split(text)
    for i in range(0, len(parts), 2):
        parts[i] = _NUM_IN_JSON.sub(lambda m: str(human_readable_int(m.group())), parts[i])
    return "".join(parts)


def _show(value: Any) -> str:
    import json

    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def validate(value: Any, tinfo: dict[str, Any], classes: dict[str, Any], path: str) -> list[tuple[str, str, str]]:
    """Problems as (json path, rule broken, fix); empty when pydantic would accept."""
    kind = tinfo.get("t", "any")
    if kind == "any":
        return []
    if kind == "union":
        # Report the first non-null member's complaint: "must be null" helps nobody.
        report: list[tuple[str, str, str]] = []
        for member in tinfo.get("of", []):
            problems = validate(value, member, classes, path)
            if not problems:
                return []
            if not report and member.get("t") != "null":
                report = problems
        return report
    if kind == "null":
        return [] if value is None else [(path, f"must be null, got {_show(value)}", "remove it")]
    if kind == "bool":
        ok = (
            isinstance(value, bool)
            or (isinstance(value, (int, float)) and value in (0, 1))
            or (isinstance(value, str) and value.strip().lower() in _BOOL_STR)
        )
        return [] if ok else [(path, f"must be a boolean, got {_show(value)}", "use true or false")]
    if kind == "int":
        ok = isinstance(value, bool) or isinstance(value, int) or (isinstance(value, float) and value.is_integer())
        if isinstance(value, str):
            ok = _parses(int, value)
        return [] if ok else [(path, f"must be an integer, got {_show(value)}", "give a whole number")]
    if kind == "float":
        ok = isinstance(value, (bool, int, float)) or (isinstance(value, str) and _parses(float, value))
        return [] if ok else [(path, f"must be a number, got {_show(value)}", "give a number")]
    if kind == "str":
        return [] if isinstance(value, str) else [(path, f"must be a string, got {_show(value)}", "quote the value")]
    if kind == "literal":
        allowed = tinfo.get("values", [])
        if any(type(value) is type(a) and value == a for a in allowed):
            return []
        fix = "use one of: " + ", ".join(map(str, allowed))
        return [(path, f"value {_show(value)} is not allowed", fix)]
    if kind == "list":
        if not isinstance(value, list):
            return [(path, f"must be a list, got {_show(value)}", "give a JSON array")]
        items = tinfo.get("items", {"t": "any"})
        return [p for i, v in enumerate(value) for p in validate(v, items, classes, f"{path}[{i}]")]
    if kind == "dict":
        return [] if isinstance(value, dict) else [(path, f"must be an object, got {_show(value)}", "give a JSON object")]
    if kind == "object":
        return validate_object(value, tinfo["class"], classes, path)
    return []


def validate_object(value: Any, class_name: str, classes: dict[str, Any], path: str) -> list[tuple[str, str, str]]:
    schema = classes.get(class_name)
    if not isinstance(value, dict):
        return [(path, f"must be a JSON object for {class_name}, got {_show(value)}", "give a JSON object")]
    if not schema:
        return []
    fields = schema.get("fields", {})
    problems: list[tuple[str, str, str]] = []
    for key, item in value.items():
        sub = f"{path}.{key}"
        if key not in fields:
            if schema.get("extra") == "forbid" and not schema.get("model_before_validator"):
                close = difflib.get_close_matches(key, list(fields), n=1, cutoff=0.6)
                fix = f"did you mean {close[0]!r}?" if close else f"{class_name} has no such key; remove it"
                problems.append((sub, f"unknown key {key!r} for {class_name}", fix))
            continue
        problems += validate(item, fields[key], classes, sub)
    return problems


def _parses(conv: Any, text: str) -> bool:
    try:
        conv(text.strip())
    except ValueError:
        return False
    return True
