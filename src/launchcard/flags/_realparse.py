"""Run an engine's OWN argument parser over many argvs, in one process.

This is the authority the checker is measured against.  It runs inside the
engine's environment (``.cache/vllm-venv/bin/python -m
launchcard.flags._realparse``) and imports only the standard library and the
engine, so launchcard's own dependencies need not be installed there.

Input on stdin: one JSON list of strings per line, the argv AFTER ``vllm
serve`` (model first).  Output on stdout: one JSON object per input line,
``{"ok": bool, "error": str}``.  ``error`` is the parser's own message.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys


def _vllm_serve_parser():
    # Build the tree exactly as `vllm serve` does (vllm.entrypoints.cli.main):
    # a top-level FlexibleArgumentParser whose "serve" sub-parser is made by
    # the serve subcommand itself.  Top-level parse_args does the
    # underscore/dotted-key rewriting, so we must parse through it.
    from vllm.entrypoints.cli.serve import ServeSubcommand
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    top = FlexibleArgumentParser(prog="vllm")
    subparsers = top.add_subparsers(required=False, dest="subparser")
    cmd = ServeSubcommand()
    cmd.subparser_init(subparsers).set_defaults(dispatch_function=cmd.cmd)
    return top


def _registry_problem(args) -> str:
    """The pre-launch checks vLLM applies to parser names and tool choice.

    Same rules as vllm.entrypoints.launchers.cli_args.validate_parsed_serve_args
    (auto tool choice needs a parser) and launcher.validate_api_server_args
    (names must be registered unless a plugin file may register them), using
    vLLM's own registries.  The chat-template file check is left out: it
    depends on files inside the serving image, not on the flags.
    """
    from vllm.reasoning import ReasoningParserManager
    from vllm.tool_parsers import ToolParserManager

    if args.enable_auto_tool_choice and not args.tool_call_parser:
        return "Error: --enable-auto-tool-choice requires --tool-call-parser"
    if (
        args.enable_auto_tool_choice
        and not args.tool_parser_plugin
        and args.tool_call_parser not in ToolParserManager.list_registered()
    ):
        return f"invalid tool call parser: {args.tool_call_parser}"
    if (
        args.reasoning_parser
        and not args.reasoning_parser_plugin
        and args.reasoning_parser not in ReasoningParserManager.list_registered()
    ):
        return f"invalid reasoning parser: {args.reasoning_parser}"
    return ""


def parse_one(top, argv: list[str]) -> dict:
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
    except Exception as exc:  # the parser raises ValueError for some misuse
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}".splitlines()[0]}
    problem = _registry_problem(args)
    if problem:
        return {"ok": False, "error": "registry: " + problem, "stage": "registry"}
    return {"ok": True, "error": ""}


def main() -> int:
    import logging

    logging.disable(logging.WARNING)
    top = _vllm_serve_parser()
    out = sys.stdout
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        out.write(json.dumps(parse_one(top, json.loads(line))) + "\n")
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
