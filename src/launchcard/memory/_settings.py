"""Engine settings that move memory, and how to read them off a vLLM argv.

The resolved ``vllm serve`` command is the source of truth: planning from its
own argv means the plan describes exactly what will be launched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from launchcard.errors import InputError

LATEST_VLLM = (0, 32)


@dataclass(frozen=True)
class Settings:
    tp: int = 1
    pp: int = 1
    dp: int = 1
    expert_parallel: bool = False
    dcp: int = 1
    max_model_len: int | None = None  # None = the model's max_position_embeddings
    kv_cache_dtype: str = "auto"
    gpu_memory_utilization: float = 0.9
    max_num_seqs: int | None = None  # None = vLLM's default for the GPU
    max_num_batched_tokens: int | None = None
    enforce_eager: bool = False
    speculative_method: str | None = None
    num_speculative_tokens: int = 0
    quantization: str | None = None  # runtime --quantization
    dtype: str = "auto"
    block_size: int | None = None
    enable_prefix_caching: bool | None = None
    language_model_only: bool = False
    vllm_version: str | None = None
    device: str = "cuda"  # "cpu": the KV pool is VLLM_CPU_KVCACHE_SPACE
    cpu_kvcache_space_gib: float | None = None

    def validate(self) -> Settings:
        for name in ("tp", "pp", "dp", "dcp"):
            if getattr(self, name) < 1:
                raise InputError(f"{name} must be >= 1 ({getattr(self, name)})", where=f"--{name}", fix="use a positive integer")
        if not 0 < self.gpu_memory_utilization <= 1:
            raise InputError(
                f"gpu-memory-utilization must be in (0, 1] ({self.gpu_memory_utilization})",
                where="--gpu-memory-utilization", fix="pass a fraction such as 0.9",
            )
        if self.max_model_len is not None and self.max_model_len < 1:
            raise InputError(f"max-model-len must be >= 1 ({self.max_model_len})", where="--max-model-len", fix="pass a token count")
        return self

    @property
    def version(self) -> tuple[int, int]:
        return parse_version(self.vllm_version)


def parse_version(text: str | None) -> tuple[int, int]:
    """``v0.20.0`` / ``0.26.1rc1.dev608+g99a10304d`` -> (0, 20) / (0, 26)."""
    if not text:
        return LATEST_VLLM
    m = re.match(r"v?(\d+)\.(\d+)", str(text).strip())
    if not m:
        raise InputError(f"unreadable vLLM version ({text!r})", where="--vllm-version", fix="use a form like 0.19.0")
    return int(m.group(1)), int(m.group(2))


# Settings field -> the flags that set it, in every spelling readers meet (vLLM's own
# aliases come from its captured parser; --tp/--pp/--dp are launchcard memory's).
_INT = {"tp": ("--tensor-parallel-size", "-tp", "--tp"), "pp": ("--pipeline-parallel-size", "-pp", "--pp"),
        "dp": ("--data-parallel-size", "-dp", "--dp"), "dcp": ("--decode-context-parallel-size", "-dcp", "--dcp"),
        "max_num_seqs": ("--max-num-seqs",), "max_num_batched_tokens": ("--max-num-batched-tokens",),
        "block_size": ("--block-size",)}
_STR = {"kv_cache_dtype": ("--kv-cache-dtype",), "quantization": ("--quantization", "-q"), "dtype": ("--dtype",)}
_BOOL = {"expert_parallel": ("--enable-expert-parallel",), "enforce_eager": ("--enforce-eager",),
         "enable_prefix_caching": ("--enable-prefix-caching",), "language_model_only": ("--language-model-only",)}


def _len_value(raw: str, opt: str) -> int:
    # Memory's token counts read k/M as 1024/1024**2 whatever the case (vLLM reads
    # lower case as 1000); kept as it was: plans and their tests rest on it.
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([kKmM]?)", raw.strip())
    if not m:
        raise InputError(f"not a token count ({raw!r})", where=f"argv {opt}", fix="use an integer such as 32768")
    mult = {"": 1, "k": 1024, "m": 1024 * 1024}[m.group(2).lower()]
    return int(float(m.group(1)) * mult)


def settings_from_argv(argv: list[str] | tuple[str, ...], base: Settings | None = None) -> Settings:
    """The memory-relevant settings of a resolved ``vllm serve`` argv (bare flags are read as vLLM's).

    Read through the shared argv model (last occurrence wins, ``_``/``-`` and
    aliases as vLLM reads them).  Flags that do not touch memory are ignored;
    a bad value of one that does raises.
    """
    from launchcard.argv import parse_command

    s = base or Settings()
    cmd = parse_command(argv, engine="vllm")
    updates: dict[str, Any] = {}  # Any: values of several Settings fields
    for name, flags in _INT.items():
        value = cmd.get_int(*flags)
        if value is not None:
            updates[name] = value
    for name, flags in _STR.items():
        occ = cmd.last(*flags)
        text = cmd.get_str(*flags)
        if occ is not None and text is None:
            raise InputError("flag has no value", where=f"argv {occ.written}", fix="give the flag a value")
        if text is not None:
            updates[name] = text
    for name, flags in _BOOL.items():
        flag = cmd.get_bool(*flags)
        if flag is not None:
            updates[name] = flag
    occ = cmd.last("--max-model-len")
    if occ is not None:
        raw = cmd.get_str("--max-model-len")
        if raw is None:
            raise InputError("flag has no value", where=f"argv {occ.written}", fix="give the flag a value")
        updates["max_model_len"] = _len_value(raw, occ.written)
    util = cmd.get_float("--gpu-memory-utilization")
    if util is not None:
        updates["gpu_memory_utilization"] = util
    spec = cmd.get_json("--speculative-config")
    spec_occ = cmd.last("--speculative-config")
    if spec is not None and spec_occ is not None:
        where = f"argv {spec_occ.written}"
        if not isinstance(spec, dict):
            raise InputError(f"bad value ({spec!r}: not an object)", where=where, fix="fix the flag's value")
        try:
            updates["speculative_method"] = str(spec.get("method") or spec.get("model") or "draft")
            updates["num_speculative_tokens"] = int(spec.get("num_speculative_tokens") or 1)
        except (TypeError, ValueError) as exc:
            raise InputError(f"bad value ({spec!r}: {exc})", where=where, fix="fix the flag's value") from None
    return replace(s, **updates).validate()
