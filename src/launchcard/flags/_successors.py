"""Successors of removed and deprecated flags, only as the engines themselves name them.

``data/flags/successors.json`` is written by ``scripts/engine_successors.py``
from each release's own source (deprecation warnings, config docstrings,
``EngineArgs`` code forwarding a flag into a ``--*-config`` field), its parser
help and its parser's destinations; every successor carries the quoted
evidence (release, file, line, text, wheel sha256).  A flag without an entry,
or with ``use: null``, has no successor: launchcard never guesses one from
name likeness.

Standard library only (``launchcard check`` start-up).
"""

from __future__ import annotations

import functools
import json
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from launchcard.flagspec import ENGINE_NAMES, packaged_json

_CHOICE = re.compile(r"VALUE\{([^}]*)\}")


@dataclass(frozen=True, slots=True)
class Successor:
    """What the engine says to use instead of one flag (or environment variable), with its evidence."""

    name: str
    engine: str
    use: str | None  # full replacement; VALUE stands for the value given with the old flag
    per_value: tuple[str, ...] = ()  # the engine names one replacement per value (none is THE successor)
    evidence: dict[str, Any] = field(default_factory=dict)

    def render(self, value: str | None = None) -> str:
        """The replacement with the user's value in place of its placeholders.

        ``VALUE``: the value given with the old flag or variable (JSON-quoted inside a JSON object);
        ``VALUE{a|b}``: that value where it is one of ``a``, ``b``, else ``<a|b>`` for the user to choose;
        ``BOOL``: a 0/1 variable's value as JSON ``true``/``false``; ``<value>``: the engine names no value,
        the user chooses one."""
        if self.use is None:
            return ""
        use = self.use
        for m in list(_CHOICE.finditer(use)):
            allowed = m.group(1).split("|")
            use = use.replace(m.group(0), "VALUE" if value is not None and value in allowed
                              else "<" + "|".join(allowed) + ">", 1)
        if "BOOL" in use:
            truth = {"1": "true", "true": "true", "0": "false", "false": "false"}
            use = use.replace("BOOL", truth.get((value or "").lower(), "<true|false>"))
        if value is None or "VALUE" not in use:
            return use
        if "'{" in use:  # a field of a JSON option: keep JSON values, quote plain strings
            try:
                json.loads(value)
                shown = value
            except ValueError:
                shown = json.dumps(value)
            return use.replace("VALUE", shown)
        return use.replace("VALUE", shlex.quote(value))

    @property
    def flag(self) -> str | None:
        """The option (or variable) the replacement starts with (``--eplb-config``, ``VLLM_TRITON_USE_TD``)."""
        return self.use.split()[0].split("=")[0] if self.use else None

    def is_env(self) -> bool:
        """Whether the replacement is another environment variable (``VLLM_TRITON_USE_TD=VALUE``)."""
        return bool(self.use) and not str(self.use).startswith("-")

    def several(self, value: str | None = None) -> str:
        """"vLLM names several replacements, none as THE successor: A | B" (one per value or use)."""
        shown = [Successor(self.name, self.engine, u).render(value) for u in self.per_value]
        return f"{ENGINE_NAMES.get(self.engine, self.engine)} names several replacements, none as the " \
               "successor (choose by what it did for you): " + " | ".join(shown)

    def quote(self) -> str:
        """``vllm 0.11.2 vllm/engine/arg_utils.py:1190: "... Please use `--mm-processor-cache-gb 0` instead."``."""
        ev = self.evidence
        if not ev:
            return ""
        where = str(ev.get("file", ""))
        if ev.get("line"):
            where += f":{ev['line']}"
        if ev.get("kind") in ("source", "forward"):
            where = f"{self.engine} {ev.get('release')} {where}"
            if ev.get("sha256"):
                where += f" ({ev.get('wheel')} sha256 {str(ev['sha256'])[:12]})"
        text = str(ev.get("text", ""))
        return f'{where}: "{text}"'


def no_successor(engine: str) -> str:
    return f"{ENGINE_NAMES.get(engine, engine)} names no successor"


@functools.cache
def _table() -> dict[str, Any]:
    engines: dict[str, Any] = (packaged_json("flags", "successors.json") or {}).get("engines", {})
    return engines


def successor(engine: str, name: str) -> Successor | None:
    """The engine-named successor of flag (``--x``) or environment variable ``name``; None when it names none."""
    kind = "flags" if name.startswith("-") else "envs"
    entry = (_table().get(engine) or {}).get(kind, {}).get(name)
    if not entry or not (entry.get("use") or entry.get("ambiguous")):
        return None
    return Successor(name, engine, entry.get("use"), tuple(entry.get("ambiguous") or ()), entry.get("evidence") or {})


def successor_use(engine: str, name: str) -> str | None:
    s = successor(engine, name)
    return s.use if s else None
