"""Capture an engine's server-argument parser as a JSON flag specification.

Runs INSIDE the engine's environment (``<venv>/bin/python -m
launchcard.flags.capture --engine vllm``) and therefore imports only the
standard library and the engine: launchcard's own dependencies need not be
installed there.  The spec it writes is what ``launchcard check`` reads; the
engine is never imported at check time.

The parser is introspected, not re-declared: every ``argparse.Action`` of the
engine's own server parser becomes one option entry (option strings, action
kind, nargs, const, default, type, choices, first help line).  Type callables
are decoded where vLLM's helpers are recognisable (``optional_type``,
``parse_type``, ``parse_dataclass``, ``human_readable_int``...) and probed
otherwise.  JSON-valued config flags carry the field schema of their config
dataclass so dotted sub-keys (``--speculative-config.method``) and JSON keys
can be checked offline.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import enum
import json
import math
import re
import sys
import types
import typing
from collections.abc import Iterable
from typing import Any

from launchcard.flagspec import SCHEMA  # stdlib-only module

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


class _Schemas:
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


def _closure(fn: Any, name: str) -> Any:
    code = getattr(fn, "__code__", None)
    if code is None or not fn.__closure__:
        return None
    try:
        return fn.__closure__[code.co_freevars.index(name)].cell_contents
    except (ValueError, IndexError):
        return None


def describe_type(fn: Any, schemas: _Schemas) -> dict[str, Any]:
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
        inner = describe_type(_closure(fn, "return_type"), schemas)
        return {**inner, "optional": True}
    if qual.endswith("_parse_type"):
        return describe_type(_closure(fn, "return_type"), schemas)
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


# --------------------------------------------------------------------------
# Actions


_KINDS = {
    "_StoreAction": "store",
    "_StoreTrueAction": "store_true",
    "_StoreFalseAction": "store_false",
    "_StoreConstAction": "store_const",
    "BooleanOptionalAction": "bool_pair",
    "_AppendAction": "append",
    "_AppendConstAction": "append_const",
    "_CountAction": "count",
    "_HelpAction": "help",
    "_VersionAction": "version",
    "_ExtendAction": "extend",
}


def _kind(action: argparse.Action) -> str:
    for klass in type(action).__mro__:
        if klass.__name__ in _KINDS:
            return _KINDS[klass.__name__]
    return "store"


def _judges_more(schema: dict[str, Any], entry: dict[str, Any]) -> bool:
    """Whether a config field's schema checks something argparse did not."""
    kind = schema.get("t")
    if kind == "union":
        members = schema.get("of", [])
        if any(k in schema for k in _BOUND_KEYS):
            return True
        # a str or unjudged member takes any command-line string: nothing more to check
        open_ended = any(m.get("t") in ("str", "any") for m in members)
        return not open_ended and any(_judges_more(m, entry) for m in members)
    if any(k in schema for k in _BOUND_KEYS):
        return True
    if kind in ("literal", "enum"):
        return entry.get("choices") is None
    if kind == "object":
        return entry.get("json_class") is None and entry.get("type") in ("json", "json_or_str")
    return False


_BOUND_KEYS = ("gt", "ge", "lt", "le")


def describe_action(
    action: argparse.Action, schemas: _Schemas, deprecated: bool, hidden: list[str] | None = None
) -> dict[str, Any]:
    """One option; ``hidden``: option strings the parser still accepts but leaves out of help."""
    entry: dict[str, Any] = {
        "flags": [*action.option_strings, *(hidden or [])],
        "dest": action.dest,
        "action": _kind(action),
    }
    if type(action).__name__ not in _KINDS:
        entry["action_class"] = type(action).__name__
    if action.nargs is not None:
        entry["nargs"] = action.nargs
    if action.const is not None:
        entry["const"] = jsonable(action.const)
    entry["default"] = jsonable(action.default)
    if entry["action"] in ("store", "append", "extend"):
        entry.update(describe_type(action.type, schemas))
    if action.choices is not None:
        entry["choices"] = [jsonable(c) for c in action.choices]
    if entry.get("type") in ("json", "json_or_str"):
        entry["json"] = True
    if hidden:
        entry["hidden"] = list(hidden)
    if entry["action"] == "bool_pair":
        negative = getattr(action, "negative_option_strings", None)  # vLLM's --enable-x/--disable-x pairs
        # "--no-x" spellings first: the one older releases accept too (what a canonical rendering should use)
        entry["negation"] = (sorted(negative, key=lambda f: (not f.startswith("--no-"), f)) if negative
                             else [f for f in action.option_strings if f.startswith("--no-")])
    if deprecated or getattr(action, "deprecated", False) is True:  # Python 3.13+ argparse attribute
        entry["deprecated"] = True
    entry["help"] = first_help_line(action.help)
    return entry


# (argument-group title, dest) -> the config class that receives the value
FieldOf = typing.Callable[[str, str], "type | None"]


def describe_parser(
    parser: argparse.ArgumentParser, schemas: _Schemas, field_of: FieldOf | None = None
) -> dict[str, Any]:
    """Options and positionals of ``parser``.

    With ``field_of``, an option whose value the engine later passes to a
    config class field (found through its argument group's title) records
    that field as ``config_field`` and, when the field's declared type checks
    more than argparse did (bounds, Literal/enum values, an object's keys),
    that type as ``startup``: what the engine validates at start-up.
    """
    deprecated_set: set[argparse.Action] = getattr(parser, "_deprecated", set()) or set()
    group_of = {id(a): g.title or "" for g in parser._action_groups for a in g._group_actions}
    options: list[dict[str, Any]] = []
    positionals: list[dict[str, Any]] = []
    registered: dict[int, list[str]] = {}
    for string, owner_action in parser._option_string_actions.items():
        if string not in owner_action.option_strings:
            registered.setdefault(id(owner_action), []).append(string)
    for action in parser._actions:
        desc = describe_action(action, schemas, action in deprecated_set, sorted(registered.get(id(action), [])))
        cls = field_of(group_of.get(id(action), ""), action.dest) if field_of and action.option_strings else None
        if cls is not None:
            owner = schemas.add(cls)
            schema = schemas.classes[owner]["fields"].get(action.dest)
            if schema is not None:
                desc["config_field"] = f"{owner}.{action.dest}"
                if _judges_more(schema, desc):
                    desc["startup"] = schema
        (options if action.option_strings else positionals).append(desc)
    options.sort(key=lambda o: (o["flags"][-1] if o["flags"] else "", o["dest"]))
    return {
        "prefix_chars": parser.prefix_chars,
        "allow_abbrev": parser.allow_abbrev,
        "positionals": positionals,
        "options": options,
    }


def _split_version(raw: str) -> tuple[str, bool]:
    public = raw.split("+", 1)[0]
    nightly = bool(re.search(r"(dev|rc|a\d|b\d)", public))
    return public, nightly


# --------------------------------------------------------------------------
# Engines


def capture_vllm() -> dict[str, Any]:
    # vLLM only loads the per-field help text when "--help" is on argv.
    if "--help" not in sys.argv:
        sys.argv.append("--help")
    import logging

    logging.disable(logging.WARNING)
    install_stubs()
    import importlib
    import importlib.util

    import vllm  # engine env only
    import vllm.config as vllm_config  # engine env only
    from vllm.entrypoints.cli.serve import ServeSubcommand  # engine env only

    def first(*paths: str) -> Any:
        """The first importable ``module:attr`` (modules move between releases)."""
        for path in paths:
            mod, _, attr = path.partition(":")
            try:
                return getattr(importlib.import_module(mod), attr)
            except (ImportError, AttributeError):
                continue
        return None

    flexible = first("vllm.utils.argparse_utils:FlexibleArgumentParser", "vllm.utils:FlexibleArgumentParser")
    tools = first("vllm.tool_parsers:ToolParserManager",
                  "vllm.entrypoints.openai.tool_parsers:ToolParserManager")
    reasoning = first("vllm.reasoning:ReasoningParserManager")
    def exists(module: str) -> bool:
        try:
            return importlib.util.find_spec(module) is not None
        except ImportError:
            return False

    launcher = next((m for m in ("vllm.entrypoints.launchers.cli_args", "vllm.entrypoints.openai.cli_args")
                     if exists(m)), "?")

    top = flexible(prog="vllm")
    subparsers = top.add_subparsers(required=False, dest="subparser")
    parser = ServeSubcommand().subparser_init(subparsers)
    schemas = _Schemas()

    def field_of(title: str, dest: str) -> type | None:
        # EngineArgs.add_cli_args titles each group after the config class
        # whose fields it exposes; the value reaches that field at start-up.
        cls = getattr(vllm_config, title, None)
        ok = isinstance(cls, type) and dataclasses.is_dataclass(cls) and dest in getattr(cls, "__pydantic_fields__", {})
        return cls if ok else None

    body = describe_parser(parser, schemas, field_of)
    version, nightly = _split_version(vllm.__version__)
    return {
        "schema": SCHEMA,
        "engine": "vllm",
        "version": version,
        "version_raw": vllm.__version__,
        "nightly": nightly,
        "python": "{}.{}".format(*sys.version_info[:2]),
        "parser": f"vllm serve (vllm.entrypoints.cli.serve.ServeSubcommand -> {launcher}.make_arg_parser)",
        "captured_by": captured_by(vllm),
        "command_prefix": ["vllm", "serve"],
        "dialect": "vllm-flexible",
        **body,
        "json_classes": dict(sorted(schemas.classes.items())),
        "registries": {
            **({"tool_call_parser": _registered(tools, "tool_parsers")} if tools is not None else {}),
            **({"reasoning_parser": _registered(reasoning, "reasoning_parsers")} if reasoning is not None else {}),
        },
        "plugin_flags": {"tool_call_parser": "tool_parser_plugin", "reasoning_parser": "reasoning_parser_plugin"},
        "envs": capture_vllm_envs(),
    }


def capture_sglang() -> dict[str, Any]:
    import logging

    logging.disable(logging.WARNING)
    install_stubs()
    import sglang  # engine env only
    from sglang.srt.server_args import ServerArgs  # engine env only

    # sglang.srt.server_args.prepare_server_args builds exactly this parser.
    parser = argparse.ArgumentParser(prog="sglang serve")
    ServerArgs.add_cli_args(parser)
    schemas = _Schemas()
    body = describe_parser(parser, schemas)
    version, nightly = _split_version(sglang.__version__)
    return {
        "schema": SCHEMA,
        "engine": "sglang",
        "version": version,
        "version_raw": sglang.__version__,
        "nightly": nightly,
        "python": "{}.{}".format(*sys.version_info[:2]),
        "parser": "sglang.srt.server_args.ServerArgs.add_cli_args on argparse.ArgumentParser",
        "captured_by": captured_by(sglang),
        "command_prefix": ["python3", "-m", "sglang.launch_server"],
        "dialect": "argparse",
        **body,
        "json_classes": dict(sorted(schemas.classes.items())),
        "registries": {},
        "plugin_flags": {},
        **({"envs": envs} if (envs := capture_sglang_envs()) else {}),
    }


def _registered(manager: Any, table: str) -> list[str]:
    """Names in a vLLM parser registry (``list_registered()``; before 0.11 the class's dict)."""
    lister = getattr(manager, "list_registered", None)
    return sorted(lister() if lister is not None else getattr(manager, table, {}))


def captured_by(module: Any) -> dict[str, Any]:
    """How this spec was obtained: the engine's real parser, in which environment, with which stubs.

    ``method`` is "real parser in full env" when the engine is installed in the
    running environment, else "real parser, release source over a borrowed env"
    (the release's Python files from its wheel, on PYTHONPATH over another
    environment's dependencies: ``LAUNCHCARD_CAPTURE_HOST`` names it), and
    "... with stubbed imports" when ``LAUNCHCARD_CAPTURE_STUBS`` stubbed modules.
    """
    import os

    where = os.path.realpath(os.path.dirname(getattr(module, "__file__", "") or ""))
    full = where.startswith(os.path.realpath(sys.prefix) + os.sep)
    # only the stubs the engine really imported and the shims it really called
    stubs = sorted(u[5:] for u in _USED if u.startswith("stub:"))
    out: dict[str, Any] = {
        "method": "real parser in full env" if full else "real parser, release source over a borrowed env"
    }
    if not full:
        out["host_env"] = os.environ.get("LAUNCHCARD_CAPTURE_HOST", "unknown")
    shims = sorted(u[5:] for u in _USED if u.startswith("shim:"))
    if stubs or shims:
        out["method"] += " with stubbed imports"
    if stubs:
        out["stubbed"] = stubs
    if shims:
        out["shimmed"] = shims
    return out


_USED: set[str] = set()  # "stub:NAME" / "shim:SPEC" that the engine actually used during this capture


class _Stub(types.ModuleType):
    """A module that hands out a permissive placeholder for every attribute."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.__path__: list[str] = []

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return type(name, (), {"__init__": lambda self, *a, **k: None, "__call__": lambda self, *a, **k: None,
                                "__getattr__": lambda self, n: None})


def install_stubs() -> None:
    """Stub the modules named in ``LAUNCHCARD_CAPTURE_STUBS`` (comma-separated; a name covers its submodules).

    Only for imports the parser never uses (GPU kernels, optional integrations)
    that a borrowed environment lacks; ``captured_by`` records them.
    """
    import importlib.abc
    import importlib.machinery
    import os

    for shim in (s for s in os.environ.get("LAUNCHCARD_CAPTURE_SHIMS", "").split(",") if s):
        # "torch._C._cpu:_is_avx512_supported=false": a function the borrowed env's library lacks,
        # returning that JSON value (only set when missing)
        import importlib

        target, _, value = shim.partition("=")
        mod, _, attr = target.partition(":")
        owner = importlib.import_module(mod)
        if not hasattr(owner, attr):
            result = json.loads(value or "null")

            def shimmed(*a: Any, _r: Any = result, _s: str = shim, **k: Any) -> Any:
                _USED.add("shim:" + _s)
                return _r

            setattr(owner, attr, shimmed)
    names = tuple(s for s in os.environ.get("LAUNCHCARD_CAPTURE_STUBS", "").split(",") if s)
    if not names:
        return

    class Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
            if any(fullname == n or fullname.startswith(n + ".") for n in names):
                return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
            return None

        def create_module(self, spec: Any) -> Any:
            _USED.add("stub:" + next(n for n in names if spec.name == n or spec.name.startswith(n + ".")))
            return _Stub(spec.name)

        def exec_module(self, module: Any) -> None:
            return None

    sys.meta_path.insert(0, Finder())


def machine_free(value: Any) -> Any:
    """A default with this machine's home and temp directories written as ``~`` and ``$TMPDIR``."""
    import os
    import tempfile

    home, tmp = os.path.expanduser("~"), tempfile.gettempdir()
    if isinstance(value, str):
        value = value.replace(home, "~") if home not in ("", "/") else value
        value = value.replace(tmp, "$TMPDIR") if tmp not in ("", "/") else value
    return value


def capture_vllm_envs() -> dict[str, Any]:
    """vLLM's environment-variable registry (``vllm.envs.environment_variables``): name -> default.

    Each default is what vLLM's own getter returns with no ``VLLM_*`` (nor any
    registered) variable set; the home and temp directories are written as ``~`` and ``$TMPDIR`` so
    the capture does not depend on the machine.  ``choices`` where the getter
    is built by ``env_with_choices``.
    """
    import os

    try:
        import vllm.envs as vllm_envs  # engine env only
    except ImportError:
        return {}
    registry = getattr(vllm_envs, "environment_variables", None)
    if not isinstance(registry, dict):
        return {}
    # Defaults as a bare machine sees them: vLLM derives some from the XDG base directories
    # (VLLM_CACHE_ROOT = $XDG_CACHE_HOME/vllm ...), so those are unset for the capture too.
    saved = {k: v for k, v in os.environ.items()
             if k.startswith(("VLLM_", "XDG_")) or k in registry}
    for k in saved:
        del os.environ[k]
    out: dict[str, Any] = {}
    try:
        import importlib

        # a default drawn once per import (a module-level uuid...) differs in a re-imported registry
        again: dict[str, Any] = getattr(importlib.reload(vllm_envs), "environment_variables", {})
    except Exception:  # noqa: BLE001 - engine code: no second registry, no comparison
        again = {}
    try:
        for name, getter in sorted(registry.items()):
            entry: dict[str, Any] = {}
            try:
                os.environ.pop(name, None)
                value = jsonable(getter())
                os.environ.pop(name, None)  # some getters set the variable to the default they drew
                other = again.get(name)
                if jsonable(getter()) != value or (other is not None and jsonable(other()) != value):
                    # random per call or per import (a fresh uuid...): no fixed default
                    value, entry["default_varies"] = None, True
            except Exception as exc:  # noqa: BLE001 - engine code: record that it has no plain default
                value, entry["default_error"] = None, type(exc).__name__
            os.environ.pop(name, None)
            entry["default"] = machine_free(value)
            choices = _closure(getter, "choices")
            if isinstance(choices, (list, tuple)):
                entry["choices"] = [jsonable(c) for c in choices]
            out[name] = entry
    finally:
        os.environ.update(saved)
    return out


def capture_sglang_envs() -> dict[str, Any]:
    """SGLang's environment-variable registry (``sglang.srt.environ.Envs``, from 0.5.3): name -> default.

    Each ``EnvField`` of the class gives its name and default (a callable
    default is called); ``deprecated_name`` (an alias it still reads) and the
    replacements in ``_DEPRECATED_ENVS`` are recorded as ``replaced_by`` entries.
    """
    try:
        from sglang.srt import environ  # engine env only
    except ImportError:
        return {}
    field = getattr(environ, "EnvField", None)
    envs_class = getattr(environ, "Envs", None)
    if field is None or envs_class is None:
        return {}
    out: dict[str, Any] = {}
    for value in vars(envs_class).values():
        if not isinstance(value, field) or not getattr(value, "name", None):
            continue
        default = value.default
        entry: dict[str, Any] = {}
        try:
            entry["default"] = machine_free(jsonable(default() if callable(default) else default))
        except Exception as exc:  # noqa: BLE001 - engine code: no plain default
            entry["default"], entry["default_error"] = None, type(exc).__name__
        out[value.name] = entry
        alias = getattr(value, "deprecated_name", None)
        if isinstance(alias, str) and alias:
            out.setdefault(alias, {"default": None, "deprecated": True, "replaced_by": value.name})
    for old, dep in (getattr(environ, "_DEPRECATED_ENVS", None) or {}).items():
        replacement = getattr(dep, "replacement", None)
        out.setdefault(old, {"default": None, "deprecated": True,
                             **({"replaced_by": replacement} if replacement else {})})
    return dict(sorted(out.items()))


CAPTURERS = {"vllm": capture_vllm, "sglang": capture_sglang}


def dumps(spec: dict[str, Any]) -> str:
    return json.dumps(spec, indent=1, sort_keys=False, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m launchcard.flags.capture")
    ap.add_argument("--engine", required=True, choices=sorted(CAPTURERS))
    ap.add_argument("--out", help="write here (default: stdout)")
    args = ap.parse_args(argv)
    try:
        spec = CAPTURERS[args.engine]()
    except ImportError as exc:
        print(
            f"launchcard: error: --engine {args.engine}: cannot import the engine ({exc}); "
            "run this with the Python of the environment where it is installed",
            file=sys.stderr,
        )
        return 2
    text = dumps(spec)
    if args.out:
        import os
        import tempfile

        folder = os.path.dirname(os.path.abspath(args.out))
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, args.out)  # never a partial write
    else:
        sys.stdout.write(text)
    return 0
