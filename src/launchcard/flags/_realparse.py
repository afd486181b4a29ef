"""Run an engine's OWN argument parser over many argvs, in one process.

This is the authority the checker is measured against.  It runs inside the
engine's environment (``.cache/vllm-venv/bin/python -m
launchcard.flags._realparse``) and imports only the standard library and the
engine, so launchcard's own dependencies need not be installed there.

Input on stdin: one JSON list of strings per line, the argv AFTER ``vllm
serve`` (model first).  Output on stdout: one JSON object per input line,
``{"ok": bool, "error": str}``.  ``error`` is the parser's own message.

With ``--fields``, each input line is ``{"field": "CacheConfig.x", "value":
v}`` and the answer is whether vLLM's config class accepts that value for
that field: the start-up stage, beyond argparse.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from typing import Any


def _vllm_serve_parser() -> Any:  # Any: vLLM's FlexibleArgumentParser (engine env only, untyped here)
    # Build the tree exactly as `vllm serve` does (vllm.entrypoints.cli.main):
    # a top-level FlexibleArgumentParser whose "serve" sub-parser is made by
    # the serve subcommand itself.  Top-level parse_args does the
    # underscore/dotted-key rewriting, so we must parse through it.
    from vllm.entrypoints.cli.serve import ServeSubcommand  # engine env only

    try:
        from vllm.utils.argparse_utils import FlexibleArgumentParser  # engine env
    except ImportError:  # releases before the module split
        from vllm.utils import FlexibleArgumentParser  # engine env only

    top = FlexibleArgumentParser(prog="vllm")
    subparsers = top.add_subparsers(required=False, dest="subparser")
    cmd = ServeSubcommand()
    cmd.subparser_init(subparsers).set_defaults(dispatch_function=cmd.cmd)
    return top


def _registry_problem(args: argparse.Namespace) -> str:
    """The pre-launch checks vLLM applies to parser names and tool choice.

    Same rules as vllm.entrypoints.launchers.cli_args.validate_parsed_serve_args
    (auto tool choice needs a parser) and launcher.validate_api_server_args
    (names must be registered unless a plugin file may register them), using
    vLLM's own registries.  The chat-template file check is left out: it
    depends on files inside the serving image, not on the flags.
    """
    from vllm.reasoning import ReasoningParserManager  # engine env only
    try:
        from vllm.tool_parsers import ToolParserManager  # engine env only
    except ImportError:  # releases before the move
        from vllm.entrypoints.openai.tool_parsers import (  # engine env
            ToolParserManager,
        )

    if args.enable_auto_tool_choice and not args.tool_call_parser:
        return "Error: --enable-auto-tool-choice requires --tool-call-parser"
    if (
        args.enable_auto_tool_choice
        and not getattr(args, "tool_parser_plugin", None)
        and args.tool_call_parser not in _names(ToolParserManager, "tool_parsers")
    ):
        return f"invalid tool call parser: {args.tool_call_parser}"
    if (
        args.reasoning_parser
        and not getattr(args, "reasoning_parser_plugin", None)
        and args.reasoning_parser not in _names(ReasoningParserManager, "reasoning_parsers")
    ):
        return f"invalid reasoning parser: {args.reasoning_parser}"
    return ""


def _names(manager: Any, table: str) -> list[str]:
    """A vLLM parser registry's names (``list_registered()``; before 0.11 the class's dict)."""
    lister = getattr(manager, "list_registered", None)
    return list(lister() if lister is not None else getattr(manager, table, {}))


def parse_one(top: Any, argv: list[str]) -> dict[str, Any]:  # Any: vLLM's parser; the JSON line written back
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            args = top.parse_args(["serve", *argv])
    except SystemExit as exc:
        text = err.getvalue().strip()
        at = text.find("error:")
        # usage lines first, then "error: ..."; pydantic adds the bad field
        # and a URL on the following lines
        lines = (text[at:] if at >= 0 else text).splitlines()[:3]
        msg = " | ".join(line.strip() for line in lines) or f"exit {exc.code}"
        return {"ok": exc.code in (0, None), "error": msg}
    except Exception as exc:  # noqa: BLE001 - the parser raises ValueError (and KeyError) for some misuse
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}".splitlines()[0]}
    problem = _registry_problem(args)
    if problem:
        return {"ok": False, "error": "registry: " + problem, "stage": "registry"}
    return {"ok": True, "error": ""}


def field_accepts(config_field: str, value: object) -> dict[str, object]:
    """Does vLLM's config class accept ``value`` for one field (the start-up stage)?

    ``config_field`` is "CacheConfig.gpu_memory_utilization".  pydantic's own
    assignment validation on a default instance runs the field's validators
    and declared constraints; a class that needs arguments to exist is judged
    on the field's declared type and constraints alone.
    """
    import copy
    from typing import Annotated

    import vllm.config as vllm_config  # engine env only
    from pydantic import TypeAdapter

    owner, name = config_field.split(".", 1)
    cls = getattr(vllm_config, owner)
    base = _default_instance(cls) if name in _validated_fields(cls) else None
    try:
        if base is not None:
            cls.__pydantic_validator__.validate_assignment(copy.copy(base), name, value)
        else:
            info = cls.__pydantic_fields__[name]
            # the engine field's type, built at run time: no static type to give mypy
            TypeAdapter(Annotated[info.annotation, info]).validate_python(value)  # type: ignore[arg-type]
    except Exception as exc:  # noqa: BLE001 - ValidationError, or KeyError/ValueError from a validator
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}".splitlines()[0]}
    return {"ok": True, "error": ""}


def _validated_fields(cls: type) -> set[str]:
    decorators = getattr(cls, "__pydantic_decorators__", None)
    if decorators is None:
        return set()
    return {f for dec in decorators.field_validators.values() for f in dec.info.fields}


_DEFAULTS: dict[type, object] = {}


def _default_instance(cls: type) -> object:
    """A default instance (to run a field's own validators), or None when the class needs arguments."""
    if cls not in _DEFAULTS:
        try:
            _DEFAULTS[cls] = cls()
        except Exception:  # noqa: BLE001 - engine code: a class that needs arguments
            _DEFAULTS[cls] = None
    return _DEFAULTS[cls]


def main() -> int:
    import logging

    logging.disable(logging.WARNING)
    fields = sys.argv[1:] == ["--fields"]  # input lines: {"field": "Class.name", "value": ...}
    top = None if fields else _vllm_serve_parser()
    out = sys.stdout
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        item = json.loads(line)
        result = field_accepts(item["field"], item["value"]) if top is None else parse_one(top, item)
        out.write(json.dumps(result) + "\n")
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
