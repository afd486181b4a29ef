"""The ONE place the verdict reads parallelism and memory flags off a ``vllm serve`` argv.

A shared argv model (``launchcard/argv.py``) is on its way; when it lands,
:func:`read_argv` becomes a thin adapter over it and nothing else in this
package changes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

# vLLM's long names and short forms, then SGLang's (``--tp-size`` ...) for commands of other sources.
_INT_FLAGS = {
    "tp": ("--tensor-parallel-size", "-tp", "--tp-size", "--tp"),
    "pp": ("--pipeline-parallel-size", "-pp", "--pp-size"),
    "dp": ("--data-parallel-size", "-dp", "--dp-size", "--dp"),
    "dp_local": ("--data-parallel-size-local", "-dpl"),
    "dcp": ("--decode-context-parallel-size", "-dcp"),
    "nnodes": ("--nnodes",),
    "node_rank": ("--node-rank",),
}
_STR_FLAGS = {
    "max_model_len": ("--max-model-len",),
    "quantization": ("--quantization", "-q"),
    "kv_cache_dtype": ("--kv-cache-dtype",),
    "speculative_config": ("--speculative-config",),
}


@dataclass(frozen=True)
class ArgvView:
    """What the verdict needs from one command; None = the flag is absent (vLLM's default applies)."""

    tp: int = 1
    pp: int = 1
    dp: int = 1
    dp_local: int | None = None
    dcp: int = 1
    nnodes: int = 1
    node_rank: int | None = None
    expert_parallel: bool = False
    headless: bool = False
    max_model_len: str | None = None
    quantization: str | None = None
    kv_cache_dtype: str | None = None
    speculative_config: str | None = None
    unreadable: tuple[str, ...] = ()  # flags whose value is not a number (e.g. "$DP_SIZE")

    @property
    def world(self) -> int:
        """GPUs of one engine replica: TP x PP (across its nodes when --nnodes > 1)."""
        return self.tp * self.pp

    @property
    def local_dp(self) -> int:
        """Data-parallel ranks this process starts on its own node."""
        if self.dp_local is not None:
            return self.dp_local
        return self.dp

    @property
    def gpus_on_node(self) -> int:
        """GPUs this process (with its engine children) occupies on its own node."""
        per_replica = self.world // self.nnodes if self.nnodes > 1 and self.world % self.nnodes == 0 else (
            self.world if self.nnodes <= 1 else -(-self.world // self.nnodes))
        return per_replica * self.local_dp

    @property
    def ep_size(self) -> int:
        """Expert-parallel group size when --enable-expert-parallel is on (vLLM: TP x DP), else 1."""
        return self.tp * self.dp if self.expert_parallel else 1


def _value(argv: Sequence[str], names: Sequence[str]) -> str | None:
    """Last value of any of ``names`` (``--flag v`` or ``--flag=v``; underscores as dashes)."""
    found = None
    for i, raw in enumerate(argv):
        tok = str(raw)
        if not tok.startswith("-"):
            continue
        key, eq, val = tok.partition("=")
        key = key[:2] + key[2:].replace("_", "-") if key.startswith("--") else key
        if key in names:
            if eq:
                found = val
            elif i + 1 < len(argv):
                found = str(argv[i + 1])
    return found


def _switch(argv: Sequence[str], name: str) -> bool:
    on = False
    for raw in argv:
        tok = str(raw).replace("_", "-")
        if tok == name:
            on = True
        elif tok == "--no-" + name[2:]:
            on = False
    return on


def read_argv(argv: Sequence[str]) -> ArgvView:
    """Read the flags of one command; unreadable numbers are listed, never guessed."""
    ints: dict[str, int | None] = {}
    bad: list[str] = []
    for field, names in _INT_FLAGS.items():
        raw = _value(argv, names)
        if raw is None:
            ints[field] = None
        elif re.fullmatch(r"\d+", raw.strip()):
            ints[field] = int(raw)
        else:
            ints[field] = None
            bad.append(f"{names[0]} {raw}")
    strs = {field: _value(argv, names) for field, names in _STR_FLAGS.items()}
    return ArgvView(
        tp=ints["tp"] or 1, pp=ints["pp"] or 1, dp=ints["dp"] or 1, dp_local=ints["dp_local"],
        dcp=ints["dcp"] or 1, nnodes=ints["nnodes"] or 1, node_rank=ints["node_rank"],
        expert_parallel=_switch(argv, "--enable-expert-parallel"), headless=_switch(argv, "--headless"),
        max_model_len=strs["max_model_len"], quantization=strs["quantization"],
        kv_cache_dtype=strs["kv_cache_dtype"], speculative_config=strs["speculative_config"],
        unreadable=tuple(bad),
    )


def speculative_model(view: ArgvView) -> str | None:
    """The separate draft model a ``--speculative-config`` names, if any."""
    if not view.speculative_config:
        return None
    try:
        spec = json.loads(view.speculative_config)
    except ValueError:
        return None
    model = spec.get("model") if isinstance(spec, dict) else None
    return str(model) if model else None
