"""Property tests for the memory planner (hypothesis)."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

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


VISION = {"depth": 27, "hidden_size": 1152, "intermediate_size": 4304, "out_hidden_size": 4096}


@settings(max_examples=40, deadline=None)
@given(archs, gpus, st.sampled_from([1, 2, 4]), st.sampled_from([1152, 1280, 1664]), st.sampled_from([12, 27, 32]))
def test_a_vision_tower_never_lowers_weights(arch, gpu, tp, width, depth) -> None:
    from launchcard.memory._arch import _vision_params

    s = Settings(tp=tp, max_model_len=8192)
    with_tower = replace(arch, vision_params=_vision_params({**VISION, "hidden_size": width, "depth": depth}))
    assert plan_memory(with_tower, s, gpu=gpu).weights_gib_per_gpu >= plan_memory(arch, s, gpu=gpu).weights_gib_per_gpu


@settings(max_examples=40, deadline=None)
@given(archs, gpus, st.sampled_from([1, 2, 4]), st.sampled_from(["eagle", "eagle3", "mtp", "ngram", "org/draft-1b"]))
def test_a_draft_model_never_lowers_weights(arch, gpu, tp, method) -> None:
    s = Settings(tp=tp, max_model_len=8192)
    drafted = replace(s, speculative_method=method, num_speculative_tokens=3)
    a = plan_memory(arch, s, gpu=gpu)
    b = plan_memory(arch, drafted, gpu=gpu)
    assert b.weights_gib_per_gpu >= a.weights_gib_per_gpu
    assert b.kv_cache_tokens <= a.kv_cache_tokens or a.max_model_len != b.max_model_len


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([8, 64, 256]), st.sampled_from([512, 1024, 2048]), st.sampled_from([1, 2, 4, 8]),
       st.booleans(), st.sampled_from(["fp8", "none"]))
def test_fp4_experts_never_weigh_more_than_fp8_experts(experts, inter, tp, ep, base_quant) -> None:
    cfg = {**MOE, "num_experts": experts, "moe_intermediate_size": inter}
    if base_quant == "fp8":
        cfg["quantization_config"] = {"quant_method": "fp8", "weight_block_size": [128, 128]}
    s = Settings(tp=tp, expert_parallel=ep, max_model_len=8192)
    w = {d: plan_memory(arch_from_config({**cfg, "expert_dtype": d}), s, gpu="b200").weights_gib_per_gpu
         for d in ("fp4", "nvfp4", "fp8")}
    assert w["fp4"] <= w["fp8"] and w["nvfp4"] <= w["fp8"]
