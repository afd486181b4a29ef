"""One JSON object read from a file the user named (a config.json, a safetensors index), with one wording for
what is wrong with it on every command: the option, the file and line, the rule, the fix.

``memory``/``predict``/``plan`` (``memory.load_arch``) and ``resolve``/``emit``/``card``/``check``
(``check.load_config``) read the same ``--config``; they said the same fault two ways ("PATH:2: not valid
JSON" and "--config PATH: cannot read config.json (... line 2 column 1 (char 26))").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from launchcard.errors import InputError


def read_object(path: str | Path, what: str, *, field: str | None = None, fix: str | None = None) -> dict[str, Any]:
    """The JSON object in ``path``; InputError (``field``: the input the CLI names, e.g. ``config``) naming
    ``what`` (``config.json``) when the file cannot be read, is not UTF-8, not JSON or not an object.  ``fix``:
    what to pass where the file is missing or unreadable (default: the model's ``what``)."""
    p = Path(path)
    fix = fix or f"pass the model's {what}"
    try:
        text = p.read_text("utf-8")
    except FileNotFoundError:
        raise InputError(f"{what} not found", where=str(p), field=field, fix=fix) from None
    except OSError as exc:
        raise InputError(f"cannot read {what} ({exc.strerror})", where=str(p), field=field, fix=fix) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})",
                         where=str(p), field=field, fix=f"pass the {what} as UTF-8 JSON") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON ({exc.msg}, column {exc.colno})", where=f"{p}:{exc.lineno}",
                         field=field, fix=f"pass a valid {what}") from None
    except ValueError as exc:  # e.g. an integer too long to convert
        raise InputError(f"not valid JSON ({exc})", where=str(p), field=field, fix=f"pass a valid {what}") from None
    if not isinstance(data, dict):
        raise InputError("top level is not a JSON object", where=f"{p}:1", field=field, fix=f"pass a valid {what}")
    return data
