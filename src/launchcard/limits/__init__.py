"""Start-up refusals vLLM makes from the model's config.json, the flags and the GPU alone (knowable offline).

Every rule follows the engine's own code of the captured release and quotes its sentence as
evidence (file and line of vLLM 0.32.0; ``scripts/capture_engine_limits.py`` reads the values
and the wording from the engine into ``data/engine_limits/``; ``tests/test_limits*.py`` ask the
engine):

* length (``_length``): ``--max-model-len`` above the length vLLM derives from the config;
* heads (``_length``): TP not dividing the attention heads, KV heads not splittable over TP; SGLang's own
  split (``_sglang``: the attention TP size under DP attention);
* quantization (``_length``): ``--dtype`` and GPU compute capability vs the method; (``_engine``) the
  method vs the platform's ``supported_quantization`` list (ROCm, XPU);
* KV-cache dtype (``_kv``): no attention backend the platform tries takes ``--kv-cache-dtype``;
* scheduler, parallel, bfloat16 (``_engine``): ``SchedulerConfig`` and ``ParallelConfig``
  validators, ``--dtype bfloat16`` below compute capability 8.0.

``check`` (commands and plans), ``resolve``/``emit`` (plan verdict) and ``memory`` all call these;
advice is filtered through the same functions.  Standard library only.
"""

from __future__ import annotations

from launchcard.limits._data import compute_capability, quote, rule, source, table, text_config
from launchcard.limits._engine import (
    PP_LAYERS_RULE,
    Parallel,
    QuantVerdict,
    Refusal,
    Scheduling,
    bfloat16_refusal,
    checkpoint_quant_method,
    dcp_model_refusal,
    parallel_refusals,
    platform_quant_verdict,
    pp_layers_refusal,
    pp_refusal,
    quant_platform_of,
    scheduler_refusals,
)
from launchcard.limits._experts import (
    SGLANG_EP_RULE,
    TRTLLM_EP_RULE,
    VLLM_DENSE_EP_RULE,
    VLLM_EP_RULE,
    VLLM_EPLB_RULE,
    dense_ep_refusal,
    ep_experts_refusal,
    eplb_uneven_refusal,
    experts_per_rank,
    sglang_ep_size,
    uneven_ep_note,
)
from launchcard.limits._kv import (
    KvVerdict,
    attention_fields,
    attention_kind,
    kv_dtype_verdict,
    kv_dtypes_accepted,
    own_backends,
    platform_of,
)
from launchcard.limits._length import (
    ALLOW_LONG,
    CAPABILITY_RULE,
    DTYPE_RULE,
    HEADS_RULE,
    KV_HEADS_RULE,
    LENGTH_RULE,
    SOURCE,
    TRTLLM_HEADS_RULE,
    MaxLen,
    allows_long,
    heads_refusal,
    kv_heads_refusal,
    length_fields,
    length_refusal,
    max_len,
    quant_capability_refusal,
    quant_dtype_refusal,
    tp_refusal,
)
from launchcard.limits._quant_verify import QuantOverride, sglang_quant_override, vllm_quant_override
from launchcard.limits._sglang import (
    ATTENTION_TP_RULE,
    ATTN_DP_RULE,
    DENSE_TP_RULE,
    DRAFT_SELF_RULE,
    RANK_FLAGS,
    RANKS_RULE,
    SGLANG_HEADS_RULE,
    TRITON_KERNEL_EP_RULE,
    attention_tp,
    dense_tp_refusal,
    dp_attention_flags,
    dp_attention_release,
    dp_attention_serves,
    dp_attention_split,
    draft_self_refusal,
    forced_flashinfer_mxfp4,
    mtp_layer_count,
    rank_refusal,
    sglang_blackwell,
    sglang_release,
    triton_kernel_ep_refusal,
)

__all__ = ["ALLOW_LONG", "ATTENTION_TP_RULE", "ATTN_DP_RULE", "CAPABILITY_RULE", "DENSE_TP_RULE", "DRAFT_SELF_RULE",
           "DTYPE_RULE", "HEADS_RULE", "KV_HEADS_RULE", "LENGTH_RULE", "PP_LAYERS_RULE", "RANKS_RULE", "RANK_FLAGS",
           "SGLANG_EP_RULE", "SGLANG_HEADS_RULE", "SOURCE", "TRITON_KERNEL_EP_RULE", "TRTLLM_EP_RULE",
           "TRTLLM_HEADS_RULE", "VLLM_DENSE_EP_RULE", "VLLM_EPLB_RULE", "VLLM_EP_RULE", "KvVerdict", "MaxLen",
           "Parallel", "QuantOverride", "QuantVerdict", "Refusal", "Scheduling", "allows_long", "attention_fields",
           "attention_kind", "attention_tp", "bfloat16_refusal", "checkpoint_quant_method", "compute_capability",
           "dcp_model_refusal", "dense_ep_refusal", "dense_tp_refusal", "dp_attention_flags", "dp_attention_release",
           "dp_attention_serves", "dp_attention_split", "draft_self_refusal", "ep_experts_refusal",
           "eplb_uneven_refusal", "experts_per_rank", "forced_flashinfer_mxfp4", "heads_refusal", "kv_dtype_verdict",
           "kv_dtypes_accepted", "kv_heads_refusal", "length_fields", "length_refusal", "max_len", "mtp_layer_count",
           "own_backends", "parallel_refusals", "platform_of", "platform_quant_verdict", "pp_layers_refusal",
           "pp_refusal", "quant_capability_refusal", "quant_dtype_refusal", "quant_platform_of", "quote",
           "rank_refusal", "rule", "scheduler_refusals", "sglang_blackwell", "sglang_ep_size", "sglang_quant_override",
           "sglang_release", "source", "table", "text_config", "tp_refusal", "triton_kernel_ep_refusal",
           "uneven_ep_note", "vllm_quant_override"]
