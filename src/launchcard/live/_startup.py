"""Read a vLLM start-up log into measured facts.

The engine prints how much memory the weights took, how many tokens the KV
cache holds and how many requests of a given context fit at once.  Those lines
are the ground truth the memory planner is compared with, so each becomes a
measured Fact whose evidence points at the log line.
"""

from __future__ import annotations

import re
from pathlib import Path

from launchcard.card import Conditions, Evidence, Fact

_NUM = r"([0-9][0-9,]*(?:\.[0-9]+)?)"

# (fact name, unit, pattern, group holding the value); first match wins.
_PATTERNS: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    ("weights_memory_gib", "GiB", re.compile(r"Model loading took " + _NUM + r" ?GiB")),
    ("model_load_seconds", "s", re.compile(r"Model loading took .*? and " + _NUM + r" ?s(?:econds)?")),
    ("available_kv_cache_gib", "GiB", re.compile(r"Available KV cache memory: " + _NUM + r" ?GiB")),
    ("kv_cache_tokens", "tokens", re.compile(r"KV cache size: " + _NUM + r" tokens")),
    ("engine_init_seconds", "s", re.compile(r"init engine \(.*?\) took " + _NUM + r" ?s")),
)
_CONCURRENCY = re.compile(r"Maximum concurrency for " + _NUM + r" tokens per request: " + _NUM + r"x")


def _number(raw: str) -> int | float:
    raw = raw.replace(",", "")
    return float(raw) if "." in raw else int(raw)


def parse_startup_log(text: str, *, log_path: str | None = None,
                      conditions: Conditions | None = None) -> tuple[Fact, ...]:
    """Measured facts found in a start-up log; absent lines give no fact."""
    found: dict[str, Fact] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        ev = Evidence(kind="endpoint", path=log_path, line=lineno)
        for name, unit, pattern in _PATTERNS:
            if name in found:
                continue
            m = pattern.search(line)
            if m:
                found[name] = Fact(name=name, value=_number(m.group(1)), classification="measured",
                                   evidence=ev, conditions=conditions, unit=unit)
        m = _CONCURRENCY.search(line)
        if m and "max_concurrency" not in found:
            ctx = int(_number(m.group(1)))
            cond = (conditions or Conditions()).model_copy(update={"input_tokens": ctx})
            found["max_concurrency"] = Fact(
                name="max_concurrency", value=_number(m.group(2)), classification="measured",
                evidence=ev, conditions=cond, unit=f"requests of {ctx} tokens")
    return tuple(found.values())


def read_startup_facts(log: Path, conditions: Conditions | None = None) -> tuple[Fact, ...]:
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ()
    return parse_startup_log(text, log_path=str(log), conditions=conditions)
