"""Memory planner: weights, KV cache and concurrency per GPU, as vLLM accounts them.

    arch = load_arch("config.json")
    plan = plan_memory(arch, settings_from_argv(argv), gpu="h100")
"""

from __future__ import annotations

from pathlib import Path

from launchcard.memory._advice import fits_with, tp_ok
from launchcard.memory._arch import FULL, MLA, SLIDING, Arch, arch_from_config, load_arch
from launchcard.memory._hardware import Gpu, find_gpu, gpus_per_node, load_catalog
from launchcard.memory._kernels import MEMORY_UNDECIDED, sampler_from_env
from launchcard.memory._limits import STARTUP_REFUSAL, STARTUP_UNDECIDED, pooling_architecture
from launchcard.memory._model import (
    ASSUMED,
    ASSUMED_ENGINE_LIMITS,
    ASSUMED_KV_CACHE_DTYPE,
    ASSUMED_MAX_MODEL_LEN,
    ASSUMED_UTILIZATION,
    ASSUMED_VLLM_RELEASE,
    EngineWords,
    assumption_as,
    context_default_as,
    kv_default_as,
)
from launchcard.memory._plan import Assumed, Breakdown, MemoryPlan, plan_memory
from launchcard.memory._render import plan_to_json, plan_to_text
from launchcard.memory._settings import (
    Settings,
    mtp_refusal,
    parse_version,
    settings_from_argv,
    settings_with,
    spec_mtp_refusal,
    speculative_refusal,
    unknown_method_refusal,
    vllm_flag,
    vllm_flags,
)
from launchcard.memory._sglang_mxfp4 import (
    SGLANG_FLASHINFER_MXFP4_PAD,
    SGLANG_MXFP4_RUNNERS,
    Said,
    sglang_mxfp4_pad,
    sglang_mxfp4_runner,
    sglang_mxfp4_settings,
    sglang_mxfp4_upcast,
)
from launchcard.memory._weights import (
    WeightSplit,
    dsa_fp8_default,
    dtype_bytes,
    index_cache_bytes,
    kv_read_split,
    moe_split,
    mxfp4_experts,
    weight_split,
)

# layer kinds that attend over a per-token KV cache (the others keep a fixed state or none)
ATTENTION_KINDS = (FULL, SLIDING, MLA)


def plan_for_argv(argv: list[str] | tuple[str, ...], config_path: str | Path, *, gpu: str | None = None,
                  gpus_per_node: int | None = None, gpu_memory_gib: float | None = None,
                  safetensors_index: str | Path | None = None, vllm_version: str | None = None) -> MemoryPlan:
    """Plan the exact command that will be launched: its flags come from ``argv``.

    ``gpus_per_node`` is only checked: a plan whose TP exceeds one node is
    still planned per GPU (TP across nodes works, just slower).
    """
    from launchcard.errors import InputError

    settings = settings_from_argv(argv, Settings(vllm_version=vllm_version))
    if gpus_per_node is not None and gpus_per_node < 1:
        raise InputError(f"gpus per node must be >= 1 ({gpus_per_node})", where="gpus_per_node",
                         fix="pass a positive count")
    return plan_memory(load_arch(config_path, safetensors_index), settings, gpu=gpu, gpu_memory_gib=gpu_memory_gib)


__all__ = [
    "ASSUMED",
    "ASSUMED_ENGINE_LIMITS",
    "ASSUMED_KV_CACHE_DTYPE",
    "ASSUMED_MAX_MODEL_LEN",
    "ASSUMED_UTILIZATION",
    "ASSUMED_VLLM_RELEASE",
    "ATTENTION_KINDS",
    "MEMORY_UNDECIDED",
    "SGLANG_FLASHINFER_MXFP4_PAD",
    "SGLANG_MXFP4_RUNNERS",
    "SLIDING",
    "STARTUP_REFUSAL",
    "STARTUP_UNDECIDED",
    "Arch",
    "Assumed",
    "Breakdown",
    "EngineWords",
    "Gpu",
    "MemoryPlan",
    "Said",
    "Settings",
    "WeightSplit",
    "arch_from_config",
    "assumption_as",
    "context_default_as",
    "dsa_fp8_default",
    "dtype_bytes",
    "find_gpu",
    "fits_with",
    "gpus_per_node",
    "index_cache_bytes",
    "kv_default_as",
    "kv_read_split",
    "load_arch",
    "load_catalog",
    "moe_split",
    "mtp_refusal",
    "mxfp4_experts",
    "parse_version",
    "plan_for_argv",
    "plan_memory",
    "plan_to_json",
    "plan_to_text",
    "pooling_architecture",
    "sampler_from_env",
    "settings_from_argv",
    "settings_with",
    "sglang_mxfp4_pad",
    "sglang_mxfp4_runner",
    "sglang_mxfp4_settings",
    "sglang_mxfp4_upcast",
    "spec_mtp_refusal",
    "speculative_refusal",
    "tp_ok",
    "unknown_method_refusal",
    "vllm_flag",
    "vllm_flags",
    "weight_split",
]
