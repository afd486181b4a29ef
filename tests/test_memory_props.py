"""Property tests for the memory planner (hypothesis)."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings, strategies as st

from launchcard.memory import Settings, arch_from_config, plan_memory

BASE = {"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32,
        "num_key_value_heads": 8, "vocab_size": 128256, "intermediate_size": 14336,
        "max_position_embeddings": 131072}
MOE = {**BASE, "model_type": "qwen3_moe", "num_experts": 64, "num_experts_per_tok": 8, "moe_intermediate_size": 1024}
HYBRID = {**BASE, "model_type": "qwen3_next", "full_attention_interval": 4, "linear_num_key_heads": 16,
          "linear_num_value_heads": 32, "linear_key_head_dim": 128, "linear_value_head_dim": 128}
SLIDING = {**BASE, "model_type": "gpt_oss", "layer_types": ["sliding_attention", "full_attention"] * 16,
           "sliding_window": 128}

archs = st.sampled_from([arch_from_config(c) for c in (BASE, MOE, HYBRID, SLIDING)])
gpus = st.sampled_from(["h100", "h200", "b200", "l40s", "mi300x"])


@settings(max_examples=60, deadline=None)
@given(archs, gpus, st.sampled_from([1, 2, 4]), st.sampled_from(["auto", "fp8"]),
       st.sampled_from([None, "0.10.2", "0.19.0"]))
def test_memory_per_gpu_never_grows_with_tp(arch, gpu, tp, kv, ver) -> None:
    s = Settings(tp=tp, kv_cache_dtype=kv, max_model_len=8192, vllm_version=ver)
    a = plan_memory(arch, s, gpu=gpu)
    b = plan_memory(arch, replace(s, tp=tp * 2), gpu=gpu)
    assert b.weights_gib_per_gpu <= a.weights_gib_per_gpu
    assert b.kv_bytes_per_token_per_gpu <= a.kv_bytes_per_token_per_gpu
    used_a = a.weights_gib_per_gpu + a.breakdown.activation_peak_gib
    used_b = b.weights_gib_per_gpu + b.breakdown.activation_peak_gib
    assert used_b <= used_a + 1e-9


@settings(max_examples=60, deadline=None)
@given(archs, gpus, st.floats(0.5, 0.94), st.floats(0.001, 0.05), st.sampled_from([8192, 32768]))
def test_kv_tokens_never_drop_when_utilization_grows(arch, gpu, util, delta, length) -> None:
    s = Settings(gpu_memory_utilization=util, max_model_len=length)
    lo = plan_memory(arch, s, gpu=gpu)
    hi = plan_memory(arch, replace(s, gpu_memory_utilization=min(1.0, util + delta)), gpu=gpu)
    assert hi.kv_cache_tokens >= lo.kv_cache_tokens
    assert hi.kv_cache_gib_per_gpu >= lo.kv_cache_gib_per_gpu


@settings(max_examples=60, deadline=None)
@given(gpus, st.sampled_from([1, 2, 4, 8]), st.sampled_from([4096, 8192, 16384, 32768]), st.sampled_from([2, 4]))
def test_concurrency_inverse_in_max_model_len(gpu, tp, length, factor) -> None:
    arch = arch_from_config(BASE)
    a = plan_memory(arch, Settings(tp=tp, max_model_len=length), gpu=gpu)
    b = plan_memory(arch, Settings(tp=tp, max_model_len=length * factor), gpu=gpu)
    # the pool does not depend on max_model_len (V1), so requests x length is constant
    assert abs(a.max_concurrency / b.max_concurrency - factor) <= 0.01 * factor + 0.02 * factor / b.max_concurrency
