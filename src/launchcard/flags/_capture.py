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

The pieces beside it: ``_capture_types`` (type callables and config schemas), ``_capture_stubs`` (the
import environment), ``_capture_envs`` (environment-variable registries).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
import typing
from typing import Any

from launchcard.flags._capture_envs import capture_sglang_envs, capture_vllm_envs
from launchcard.flags._capture_stubs import captured_by, install_stubs
from launchcard.flags._capture_types import Schemas, describe_type, first_help_line, jsonable
from launchcard.flagspec import SCHEMA  # stdlib-only module

# Any in this module: it runs inside the engine's environment and duck-types the engine's own objects,
# and what it builds is the flag spec, a JSON document.


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
    action: argparse.Action, schemas: Schemas, deprecated: bool, hidden: list[str] | None = None
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
    parser: argparse.ArgumentParser, schemas: Schemas, field_of: FieldOf | None = None
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
    schemas = Schemas()

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
    schemas = Schemas()
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
        from launchcard import atomicfile  # stdlib-only, like this module

        atomicfile.write_text(args.out, text, mode=0o644)  # never a partial write
    else:
        sys.stdout.write(text)
    return 0
