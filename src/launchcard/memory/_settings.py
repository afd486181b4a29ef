"""Engine settings that move memory, and how to read them off a vLLM argv.

The resolved ``vllm serve`` command is the source of truth: planning from its
own argv means the plan describes exactly what will be launched.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Any

from launchcard.errors import InputError

LATEST_VLLM = (0, 32)

# Accepted values, as vLLM's own argument parser takes them.
# dtype: vllm/config/model.py ModelDType (0.32, unchanged since 0.6).
DTYPES = frozenset({"auto", "half", "float16", "bfloat16", "float", "float32"})
# kv-cache-dtype: vllm/config/cache.py CacheDType (0.32) plus names earlier releases took.
KV_CACHE_DTYPES = frozenset({
    "auto", "float16", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc", "fp8_ds_mla", "nvfp4_ds_mla",
    "turboquant_k8v4", "turboquant_4bit_nc", "turboquant_k3v4_nc", "turboquant_3bit_nc", "ultraquant_4bit",
    "int4_per_token_head", "int8_per_token_head", "fp8_per_token_head", "nvfp4", "nvfp4_4over6",
})
# quantization: vllm/model_executor/layers/quantization/__init__.py QuantizationMethods (0.32)
# plus methods earlier releases accepted (bitsandbytes, gguf, marlin, ... removed since).
QUANTIZATION_METHODS = frozenset({
    "awq", "auto_awq", "fp8", "fbgemm_fp8", "fp_quant", "modelopt", "modelopt_fp4", "modelopt_mxfp8",
    "modelopt_mixed", "auto_gptq", "gptq", "gptq_marlin", "awq_marlin", "humming", "compressed-tensors",
    "experts_int8", "quark", "moe_wna16", "torchao", "inc", "mxfp4", "gpt_oss_mxfp4", "deepseek_v4_fp8", "online",
    "fp8_per_tensor", "fp8_per_block", "fp8_per_channel", "int8_per_channel_weight_only", "nvfp4_per_token", "mxfp8",
    # earlier releases
    "bitsandbytes", "gguf", "marlin", "gptq_marlin_24", "aqlm", "deepspeedfp", "tpu_int8", "ipex", "hqq",
    "ptpc_fp8", "petit_nvfp4", "rtn", "bitblas", "gptq_bitblas", "qqq", "squeezellm", "fp4", "nvfp4",
})


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
        for opt, value, allowed in (("--dtype", self.dtype, DTYPES),
                                    ("--kv-cache-dtype", self.kv_cache_dtype, KV_CACHE_DTYPES)):
            if str(value).lower() not in allowed:
                raise InputError(f"unknown {opt[2:]} ({value!r})", where=opt,
                                 fix=f"use one of {', '.join(sorted(allowed))}")
        if self.quantization is not None and self.quantization.lower() not in QUANTIZATION_METHODS | {"none"}:
            raise InputError(f"unknown quantization method ({self.quantization!r})", where="--quantization",
                             fix="use a vLLM method such as fp8, awq, gptq, compressed-tensors, mxfp4, modelopt")
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


_INT = {"tensor-parallel-size": "tp", "tp": "tp", "pipeline-parallel-size": "pp", "pp": "pp",
        "data-parallel-size": "dp", "dp": "dp", "decode-context-parallel-size": "dcp", "dcp": "dcp",
        "max-model-len": "max_model_len", "max-num-seqs": "max_num_seqs",
        "max-num-batched-tokens": "max_num_batched_tokens", "block-size": "block_size"}
_STR = {"kv-cache-dtype": "kv_cache_dtype", "quantization": "quantization", "q": "quantization", "dtype": "dtype"}
_FLAG = {"enable-expert-parallel": ("expert_parallel", True), "enforce-eager": ("enforce_eager", True),
         "enable-prefix-caching": ("enable_prefix_caching", True),
         "no-enable-prefix-caching": ("enable_prefix_caching", False),
         "language-model-only": ("language_model_only", True)}


def _len_value(raw: str, opt: str) -> int:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([kKmM]?)", raw.strip())
    if not m:
        raise InputError(f"not a token count ({raw!r})", where=f"argv {opt}", fix="use an integer such as 32768")
    mult = {"": 1, "k": 1024, "m": 1024 * 1024}[m.group(2).lower()]
    return int(float(m.group(1)) * mult)


def settings_from_argv(argv: list[str] | tuple[str, ...], base: Settings | None = None) -> Settings:
    """Parse the memory-relevant flags of a resolved ``vllm serve`` argv.

    Unknown flags are skipped (a serve command has dozens that do not touch
    memory); values of known flags are checked and a bad one raises.
    """
    s = base or Settings()
    args = list(argv)
    i = 0
    updates: dict[str, Any] = {}
    while i < len(args):
        tok = str(args[i])
        i += 1
        if not tok.startswith("-"):
            continue
        key, eq, val = tok.lstrip("-").partition("=")
        key = key.replace("_", "-")
        if key in _FLAG:
            field, value = _FLAG[key]
            updates[field] = value
            continue
        if key not in _INT and key not in _STR and key not in ("speculative-config", "gpu-memory-utilization"):
            continue
        if not eq:
            if i >= len(args):
                raise InputError("flag has no value", where=f"argv {tok}", fix="give the flag a value")
            val = str(args[i])
            i += 1
        try:
            if key in _INT:
                updates[_INT[key]] = _len_value(val, tok) if key == "max-model-len" else int(val)
            elif key in _STR:
                updates[_STR[key]] = val
            elif key == "gpu-memory-utilization":
                updates["gpu_memory_utilization"] = float(val)
            else:
                spec = json.loads(val)
                if not isinstance(spec, dict):
                    raise ValueError("not an object")
                updates["speculative_method"] = str(spec.get("method") or spec.get("model") or "draft")
                updates["num_speculative_tokens"] = int(spec.get("num_speculative_tokens") or 1)
        except (ValueError, json.JSONDecodeError) as exc:
            raise InputError(f"bad value ({val!r}: {exc})", where=f"argv {tok}", fix="fix the flag's value") from None
    return replace(s, **updates).validate()
