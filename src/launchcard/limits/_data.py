"""The captured engine table (``data/engine_limits/vllm-<version>.json``) and the engine's wording of a rule."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from launchcard.flagspec import packaged_json

# Any in this module: the captured JSON as read.

CAPTURED = "vllm-0.32.0.json"
# where a multimodal / wrapped config keeps its language model's fields (vLLM's hf_text_config)
NESTED = ("text_config", "llm_config", "language_config", "thinker_config")


_CAPABILITY = re.compile(r"(\d+)\.(\d+)")


def compute_capability(text: str | None) -> tuple[int, int] | None:
    """A CUDA compute capability as the hardware catalog states it ("9.0", "10.3") as (major, minor), to compare as
    a tuple; None for anything else ("" or None: not stated or not CUDA; an AMD arch such as "gfx942").  The one
    parse every rule reading a GPU's capability goes through."""
    m = _CAPABILITY.fullmatch(text or "")
    return (int(m[1]), int(m[2])) if m else None


def text_config(cfg: Mapping[str, Any], *keys: str) -> Mapping[str, Any]:
    """The first nested text config holding any of ``keys`` (truthy), else ``cfg`` itself."""
    for name in NESTED:
        inner = cfg.get(name)
        if isinstance(inner, Mapping) and any(inner.get(k) for k in keys):
            return inner
    return cfg


@functools.cache
def table() -> dict[str, Any]:
    """What ``scripts/capture_engine_limits.py`` read from the engine (empty when the file is missing)."""
    return packaged_json("engine_limits", CAPTURED) or {}


def source() -> str:
    """``vllm 0.32.0``: the release the rules were captured from."""
    return f"vllm {table().get('version', '?')}"


def rule(name: str) -> Mapping[str, Any]:
    """One captured ``raise``: ``where`` (file:line) and ``wording`` (the message with ``{expr}`` placeholders)."""
    got: Mapping[str, Any] = (table().get("rules") or {}).get(name) or {}
    return got


def quote(name: str, **values: object) -> str:
    """The engine's sentence for rule ``name`` with its placeholders filled, as evidence:
    ``vllm 0.32.0 vllm/config/scheduler.py:329: "max_num_batched_tokens (8) must be ..."``.

    ``values`` are keyed by the placeholder's expression with dots as ``__`` (``self__max_num_seqs``)
    or by its last name (``max_num_seqs``); a placeholder not given stays as the engine writes it."""
    got = rule(name)
    text = str(got.get("wording") or name)
    for key, value in values.items():
        expr = key.replace("__", ".")
        text = text.replace("{" + expr + "}", str(value)).replace("{self." + expr + "}", str(value))
    return f'{source()} {got.get("where", "?")}: "{text}"'
