"""What an engine does to argv BEFORE argparse sees it.

vLLM's ``FlexibleArgumentParser.parse_args`` rewrites the command line
(underscores to dashes in flag names, ``-O3`` shorthands, ``--model`` moved to
the positional, dotted sub-keys ``--x.y v`` merged into one JSON value for
``--x``).  The checker must see exactly what vLLM's argparse sees, so this is
a faithful port of that rewriting (vLLM 0.32, vllm/utils/argparse_utils.py).
Plain argparse engines (SGLang) get argv unchanged.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

# Any in this module: JSON values given on the command line (dotted keys, --x '{...}').

_UNDERSCORE_PART = re.compile(r"(?<=--)[^\.]*")
_HUMAN = re.compile(r"(\d+(?:\.\d+)?)([kKmMgGtT])")
_DEC = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_BIN = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def _dashes(m: re.Match[str]) -> str:
    return m.group(0).replace("_", "-")


def human_readable_int(value: str) -> int:
    """vLLM's ``human_readable_int``: '1k' -> 1000, '1K' -> 1024, '25.6k'."""
    value = value.strip()
    m = _HUMAN.fullmatch(value)
    if m:
        number, suffix = m.groups()
        if suffix in _DEC:
            return int(float(number) * _DEC[suffix])
        return int(number) * _BIN[suffix]  # ValueError for decimals, as vLLM
    return int(value)


def human_readable_int_or_auto(value: str) -> int:
    value = value.strip()
    if value == "-1" or value.lower() == "auto":
        return -1
    return human_readable_int(value)


@dataclass
class Rewritten:
    """argv after the engine's own rewriting, plus what the rewriting noticed."""

    args: list[str]
    # merged JSON key ("--x") -> the dotted spellings that built it
    dotted: dict[str, list[str]] = field(default_factory=dict)
    duplicate_keys: list[str] = field(default_factory=list)
    problems: list[tuple[str, str, str]] = field(default_factory=list)  # (flag, message, fix)
    config_file: str | None = None


def rewrite(args: list[str], dialect: str) -> Rewritten:
    if dialect != "vllm-flexible":
        return Rewritten(list(args))
    return _vllm_flexible(list(args))


def _vllm_flexible(args: list[str]) -> Rewritten:
    out = Rewritten([])
    # `vllm serve ... --model M` is moved to the positional (vLLM warns).
    for i, arg in enumerate(args):
        if re.match(r"^--model(=.+|$)", arg):
            if arg == "--model":
                if i + 1 >= len(args):
                    out.problems.append(("--model", "expects a value", "give the model id after --model"))
                    break
                model, rest = args[i + 1], i + 2
            else:
                model, rest = arg.removeprefix("--model="), i + 1
            args = [model, *args[:i], *args[rest:]]
            break
    if (
        args
        and args[0].startswith("-")
        and not any(re.match(r"^--config(=.+|$)", a) for a in args)
        and any(re.match(r"^--served[-_]model[-_]name(=.+|$)", a) for a in args)
    ):
        out.problems.append(
            (
                "--served-model-name",
                "vLLM requires the model as the first positional argument when --served-model-name is given",
                "put the model id right after `vllm serve`",
            )
        )
    if "--config" in args:
        # vLLM splices the YAML file's options in here; we cannot read it
        # offline, so its contents go unchecked (the caller warns).
        i = args.index("--config")
        out.config_file = args[i + 1] if i + 1 < len(args) else ""
        args = args[:i] + args[i + 2 :]

    processed: list[str] = []
    for i, arg in enumerate(args):
        if arg.startswith("--help="):
            processed.append("--help")
        elif arg.startswith("--"):
            if "=" in arg:
                key, val = arg.split("=", 1)
                processed.append(_UNDERSCORE_PART.sub(_dashes, key, count=1) + "=" + val)
            else:
                processed.append(_UNDERSCORE_PART.sub(_dashes, arg, count=1))
        elif arg.startswith("-O") and arg != "-O":
            level = arg[3:] if len(arg) > 2 and arg[2] == "=" else arg[2:]
            processed += ["--optimization-level", level]
        elif arg == "-O" and i + 1 < len(args) and args[i + 1] in {"0", "1", "2", "3"}:
            processed.append("--optimization-level")
        else:
            processed.append(arg)

    delete: set[int] = set()
    dict_args: dict[str, dict[str, Any]] = defaultdict(dict)
    seen_regular: set[str] = set()
    for i, arg in enumerate(processed):
        if i in delete:
            continue
        if arg.startswith("--") and "." not in arg:
            name = arg.split("=", 1)[0]
            if name in seen_regular:
                out.duplicate_keys.append(name)
            seen_regular.add(name)
            continue
        if arg.startswith("-") and "." in arg:
            original = arg
            if "=" in arg:
                arg, value_str = arg.split("=", 1)
                if "." not in arg:
                    continue  # the dot was only in the value
            else:
                if i + 1 >= len(processed):
                    # vLLM itself crashes here (IndexError)
                    out.problems.append((arg, "dotted key has no value", f"give a value after {arg}"))
                    delete.add(i)
                    continue
                value_str = processed[i + 1]
                delete.add(i + 1)
            if arg.endswith("+"):
                arg = arg[:-1]
                value_str = json.dumps(list(value_str.split(",")))
            key, *keys = arg.split(".")
            try:
                value: Any = json.loads(value_str)
            except json.JSONDecodeError:
                try:
                    value = human_readable_int(value_str)
                except ValueError:
                    value = value_str
            nested: Any = value
            for k in reversed(keys):
                nested = {k: nested}
            dups = _merge(dict_args[key], nested)
            out.duplicate_keys += [f"{key}.{d}" for d in dups]
            out.dotted.setdefault(key, []).append(original.split("=", 1)[0])
            delete.add(i)
    out.args = [a for i, a in enumerate(processed) if i not in delete]
    for key, merged in dict_args.items():
        out.args += [key, json.dumps(merged)]
    return out


def merge_json(original: dict[str, Any], update: dict[str, Any]) -> set[str]:
    """Merge ``update`` into ``original`` as vLLM merges dotted keys; the keys given twice."""
    return _merge(original, update)


def _merge(original: dict[str, Any], update: dict[str, Any]) -> set[str]:
    duplicates: set[str] = set()
    for k, v in update.items():
        if isinstance(v, dict) and isinstance(original.get(k), dict):
            duplicates |= {f"{k}.{d}" for d in _merge(original[k], v)}
        elif isinstance(v, list) and isinstance(original.get(k), list):
            original[k] += v
        else:
            if k in original:
                duplicates.add(k)
            original[k] = v
    return duplicates
