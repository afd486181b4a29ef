"""How a capture describes types: a config dataclass's field schemas and an argparse type callable.

Part of the capture (``_capture``), so it runs inside the engine's environment and imports only the
standard library; the engine's own objects are duck-typed.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import enum
import json
import math
import re
import types
import typing
from collections.abc import Iterable
from typing import Any

_ADDR = re.compile(r" at 0x[0-9a-fA-F]+")

# Any in this module: it runs inside the engine's environment and duck-types the engine's own objects
# (argparse type callables, config classes, typing annotations: getattr, calls, closures), and what it
# builds is the flag spec, a JSON document.


def jsonable(value: object, depth: int = 0) -> Any:
    """A JSON-safe, deterministic rendering of a default or choice value."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, enum.Enum):
        return jsonable(value.value, depth + 1)
    if depth > 4:
        return _ADDR.sub("", repr(value))
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [jsonable(v, depth + 1) for v in value]
        return sorted(items, key=repr) if isinstance(value, (set, frozenset)) else items
    if isinstance(value, dict):
        return {str(k): jsonable(v, depth + 1) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"__class__": type(value).__name__}
    return _ADDR.sub("", repr(value))


def first_help_line(text: str | None) -> str:
    if not text or text == argparse.SUPPRESS:
        return ""
    para = text.replace("%%", "%").strip().split("\n\n", 1)[0]
    return " ".join(para.split())[:240]


# --------------------------------------------------------------------------
# Config dataclass schemas (for JSON-valued flags)


class Schemas:
    """Collects the field schema of every config dataclass reachable from a flag."""

    def __init__(self) -> None:
        self.classes: dict[str, dict[str, Any]] = {}

    def annotation(self, tp: Any) -> dict[str, Any]:
        origin, args = typing.get_origin(tp), typing.get_args(tp)
        if tp is Any or tp is object:
            return {"t": "any"}
        if origin is typing.Annotated:
            return {**self.annotation(args[0]), **bounds(args[1:])}
        if origin in (typing.Union, types.UnionType):
            return {"t": "union", "of": [self.annotation(a) for a in args]}
        if tp is type(None):
            return {"t": "null"}
        if tp is bool:
            return {"t": "bool"}
        if tp is int:
            return {"t": "int"}
        if tp is float:
            return {"t": "float"}
        if tp is str:
            return {"t": "str"}
        if origin is typing.Literal:
            return {"t": "literal", "values": [jsonable(a) for a in args]}
        if origin in (list, tuple, set, frozenset) or tp in (list, tuple, set, frozenset):
            inner = [a for a in args if a is not Ellipsis]
            items = self.annotation(inner[0]) if len(set(map(repr, inner))) == 1 else {"t": "any"}
            return {"t": "list", "items": items}
        if origin is dict or tp is dict or (isinstance(tp, type) and issubclass(tp, dict)):
            return {"t": "dict"}
        if isinstance(tp, type) and dataclasses.is_dataclass(tp):
            self.add(tp)
            return {"t": "object", "class": tp.__name__}
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            # pydantic validates an enum by value; only string values can be
            # judged (other JSON inputs are left to the engine).
            accepts = sorted({m.value for m in tp if isinstance(m.value, str)})
            return {"t": "enum", "class": tp.__name__, "accepts": accepts} if accepts else {"t": "any"}
        # torch dtypes, callables...: pydantic accepts forms we cannot
        # enumerate reliably, so the checker does not judge them.
        return {"t": "any"}

    def add(self, cls: type) -> str:
        name = cls.__name__
        if name in self.classes:
            return name
        self.classes[name] = {}  # placeholder breaks recursion
        config = getattr(cls, "__pydantic_config__", {}) or {}
        lenient: set[str] = set()
        model_before = False
        decorators = getattr(cls, "__pydantic_decorators__", None)
        if decorators is not None:
            # A 'before'/'plain'/'wrap' validator may accept inputs the plain
            # annotation would reject: do not judge those fields (enums are
            # probed through their 'before' validators below).
            for dec in decorators.field_validators.values():
                if dec.info.mode in ("before", "plain", "wrap"):
                    lenient.update(dec.info.fields)
            for dec in decorators.model_validators.values():
                if dec.info.mode in ("before", "wrap"):
                    model_before = True
        fields: dict[str, Any] = {}
        pyd_fields = getattr(cls, "__pydantic_fields__", None)
        if pyd_fields:
            items = [(n, f.annotation, list(f.metadata)) for n, f in pyd_fields.items()]
        else:
            try:
                hints = typing.get_type_hints(cls)
            except Exception:  # noqa: BLE001 - unresolvable forward refs: names only
                hints = {}
            items = [(f.name, hints.get(f.name, Any), []) for f in dataclasses.fields(cls)]
        prober = _field_prober(cls) if any(_enum_of(ann) for n, ann, _ in items if n in lenient) else None
        for fname, ann, meta in items:
            if fname in lenient:
                fields[fname] = probe_enum_field(ann, prober(fname) if prober else None)
            else:
                fields[fname] = {**self.annotation(ann), **bounds(meta)}
        self.classes[name] = {
            "extra": str(config.get("extra") or "ignore"),
            "model_before_validator": model_before,
            "fields": dict(sorted(fields.items())),
        }
        return name


def bounds(metadata: Iterable[object]) -> dict[str, Any]:
    """Numeric bounds declared with ``Field(gt=..., le=...)`` or ``Annotated[int, Ge(1)]``."""
    out: dict[str, Any] = {}
    for item in metadata:
        for key in ("gt", "ge", "lt", "le"):
            value = getattr(item, key, None)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                out[key] = value
    return out


def _enum_of(ann: object) -> type[enum.Enum] | None:
    """The enum class of ``E`` or ``E | None``, else None."""
    members = [a for a in typing.get_args(ann) if a is not type(None)] or [ann]
    if len(members) == 1 and isinstance(members[0], type) and issubclass(members[0], enum.Enum):
        return members[0]
    return None


def _mixed_case(text: str) -> str:
    return "".join(c.lower() if i % 2 else c.upper() for i, c in enumerate(text))


def probe_enum_field(ann: object, accepted: typing.Callable[[str], bool] | None) -> dict[str, Any]:
    """Which strings an enum field behind its own validators really accepts.

    ``accepted(value)`` runs the config class's own validation of that one
    field (pydantic's assignment validation on a default instance: the
    field's 'before'/'wrap' validators, then the enum).  Every member name
    (as written, lower case) and the string form of every value is tried; the
    accepted ones are recorded, and whether case is folded (an
    alternating-case name is accepted too).  Other fields stay unjudged.
    """
    cls = _enum_of(ann)
    if cls is None or accepted is None:
        return {"t": "any"}
    candidates = {m.name for m in cls} | {m.name.lower() for m in cls} | {str(m.value) for m in cls}
    accepts = sorted(c for c in candidates if accepted(c))
    if not accepts:
        return {"t": "any"}
    entry: dict[str, Any] = {"t": "enum", "class": cls.__name__, "accepts": accepts}
    if all(accepted(_mixed_case(m.name)) for m in cls if m.name in accepts):
        entry["fold_case"] = True
        entry["accepts"] = sorted({a.upper() for a in accepts})
    return entry


def _field_prober(cls: type) -> typing.Callable[[str], typing.Callable[[str], bool]] | None:
    """fname -> (value -> does ``cls`` accept it for that field?), via a default instance."""
    import copy

    validator = getattr(cls, "__pydantic_validator__", None)
    if validator is None:
        return None
    try:
        base = cls()
    except Exception:  # noqa: BLE001 - engine code; needs arguments: cannot probe
        return None

    def for_field(fname: str) -> typing.Callable[[str], bool]:
        def accepted(value: str) -> bool:
            try:
                validator.validate_assignment(copy.copy(base), fname, value)
            except Exception:  # noqa: BLE001 - ValidationError and a validator's KeyError alike: rejected
                return False
            return True

        return accepted

    return for_field


# --------------------------------------------------------------------------
# Type callables


def closure_var(fn: Any, name: str) -> Any:
    code = getattr(fn, "__code__", None)
    if code is None or not fn.__closure__:
        return None
    try:
        return fn.__closure__[code.co_freevars.index(name)].cell_contents
    except (ValueError, IndexError):
        return None


def describe_type(fn: Any, schemas: Schemas) -> dict[str, Any]:
    if fn is None or fn is str:
        return {"type": "str"}
    if fn is int:
        return {"type": "int"}
    if fn is float:
        return {"type": "float"}
    if fn is json.loads:
        return {"type": "json"}
    qual = getattr(fn, "__qualname__", "") or ""
    name = getattr(fn, "__name__", "") or ""
    if qual.endswith("_optional_type"):
        inner = describe_type(closure_var(fn, "return_type"), schemas)
        return {**inner, "optional": True}
    if qual.endswith("_parse_type"):
        return describe_type(closure_var(fn, "return_type"), schemas)
    if name == "parse_dataclass" and fn.__defaults__:
        cls = fn.__defaults__[0]
        return {"type": "json", "json_class": schemas.add(cls)}
    if name == "union_dict_and_str":
        return {"type": "json_or_str"}
    if name == "human_readable_int":
        return {"type": "human_int"}
    if name == "human_readable_int_or_auto":
        return {"type": "human_int_or_auto"}
    if isinstance(fn, type) and issubclass(fn, enum.Enum):
        return {"type": "str", "opaque": qual}
    return _probe(fn, qual or repr(fn))


def _probe(fn: Any, qual: str) -> dict[str, Any]:
    """Classify an opaque type callable by what it does to sample inputs."""
    with contextlib.suppress(Exception):  # engine code may raise anything
        if fn("A-b_C") == "a_b_c":
            return {"type": "str", "normalize": "lower_underscore"}
    results = []
    for sample in ("abc", "1", "0.5", "{}", "x,y", ""):
        try:
            fn(sample)
            results.append(True)
        except Exception:  # noqa: BLE001 - engine code may raise anything: rejected
            results.append(False)
    if all(results):
        return {"type": "str", "opaque": qual}
    if results == [False, True, False, False, False, False]:
        return {"type": "int", "opaque": qual}
    return {"type": "other", "opaque": qual}
