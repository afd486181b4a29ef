"""vLLM's attention backend for a model whose attention layers carry learnable sinks (gpt-oss), per release and GPU,
and the share of FlashAttention's prefill FLOP/s the kernel it runs reaches."""

from __future__ import annotations

from launchcard.predict._table import coefficient_table as _table
from launchcard.predict._types import Finding

# model_type whose attention layers pass learnable sinks to vLLM's attention (vllm/model_executor/models/gpt_oss.py
# OAIAttention: Attention(..., sinks=self.sinks)), which the backend selector reads as has_sink
SINK_MODELS = ("gpt_oss",)
# vLLM 0.11.0 vllm/platforms/cuda.py get_attn_backend_cls L358-362: on SM80+ a model with sinks runs
# TRITON_ATTN_VLLM_V1 (the Triton unified attention) unless the GPU is SM90 (FlashAttention 3 takes sinks); SM100
# returns FlashInfer before that check.  Both tests are is_device_capability, an exact match (vllm/platforms/
# interface.py L234-255: to_int() == 90 / 100), so SM 10.3 (B300, GB300) takes Triton too.  Releases read: 0.11
# only (later ones moved to per-backend supports_sink lists, and FlashAttention's later took sinks on older GPUs
# too: not read per release here)
TRITON_FOR_SINKS = ((0, 11),)
# the compute capabilities vLLM 0.11 runs sinks on FlashAttention 3 (9.0) or FlashInfer (10.0), exactly
NOT_TRITON_CC = ((9, 0), (10, 0))
TRITON = "triton"


def triton_attn_share() -> tuple[float, str] | None:
    """The share of FlashAttention-2's prefill FLOP/s vLLM's Triton unified attention reaches (kernel tables'
    "kernels" -> "triton_attn", fitted by bench/predict_kernels.py) and where it was measured; None: not recorded."""
    rec = (_table().get("kernels") or {}).get("triton_attn") or {}
    share = rec.get("share")
    if not isinstance(share, (int, float)) or not 0 < share <= 1:
        return None
    gpus = ", ".join(f"{g} {v['share']:.2f}" for g, v in (rec.get("gpus") or {}).items())
    return float(share), f"vLLM 0.24.0 kernel tables ({gpus})"


def vllm_sink_attention(model_type: str, hw_kind: str, cc: tuple[int, int] | None,
                        release: tuple[int, int] | None, out: list[Finding]) -> str:
    """``TRITON`` where vLLM of ``release`` runs a sink model's attention with its Triton unified attention on a GPU
    of compute capability ``cc`` (prefill attention then timed at :func:`triton_attn_share` of the GPU's FlashAttention
    share); "" where it runs FlashAttention / FlashInfer, or the release's rule is not read (said as assumed)."""
    if model_type not in SINK_MODELS or hw_kind != "gpu" or cc is None or cc < (8, 0) or cc in NOT_TRITON_CC:
        return ""
    if release is None or release[:2] not in TRITON_FOR_SINKS:
        told = "not stated" if release is None else f"{release[0]}.{release[1]}, whose rule is not read"
        out.append(Finding("assumed", "attention-backend",
                           f"attention sinks on compute capability {cc[0]}.{cc[1]}: vLLM 0.11 runs them on its Triton "
                           f"attention here (vllm/platforms/cuda.py L358-362); the release is {told}: timed as "
                           "FlashAttention"))
        return ""
    got = triton_attn_share()
    if got is None:
        out.append(Finding("assumed", "attention-backend",
                           "vLLM 0.11 runs attention sinks on its Triton attention on this GPU (vllm/platforms/"
                           "cuda.py L358-362); its speed is not recorded: timed as FlashAttention"))
        return ""
    share, where = got
    out.append(Finding("info", "attention-backend",
                       f"vLLM {release[0]}.{release[1]} runs a model with attention sinks on its Triton unified "
                       f"attention on compute capability {cc[0]}.{cc[1]} (not SM90/SM100: vllm/platforms/cuda.py "
                       f"L358-362): prefill attention timed at {share:.2f} of FlashAttention-2's FLOP/s share ({where}:"
                       " FA2's latency over Triton's on long prompts; decode attention keeps FlashAttention's)"))
    return TRITON
