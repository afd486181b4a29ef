"""Ops an eager SGLang extend launches, counted from the model's structure (predict/_sglang_ops.py)."""

from __future__ import annotations

import json
from pathlib import Path

from launchcard.memory import Arch, arch_from_config
from launchcard.predict._sglang_ops import extend_ops

CONFIGS = Path(__file__).parent / "fixtures" / "predict_heldout_configs"


def arch(name: str, quant: dict[str, object] | None = None) -> Arch:
    cfg = json.loads((CONFIGS / f"{name}_config.json").read_text())
    if quant is not None:
        cfg["quantization_config"] = quant
    else:
        cfg.pop("quantization_config", None)
    return arch_from_config(cfg, where=name)


BLOCK = {"quant_method": "fp8", "weight_block_size": [128, 128]}


def test_a_qwen3_moe_layer_in_bf16_at_tp8() -> None:
    # per layer: 2 norms + 2 all-reduces + GQA 5 + q/k norm 2 + router 2 + Triton fused MoE 5 = 18
    a = arch("Qwen--Qwen3-235B-A22B")
    assert extend_ops(a, 8, 1, "bfloat16", "bfloat16", "10.0", ep=False) == 18 * 94
    # one GPU: no all-reduce
    assert extend_ops(a, 1, 1, "bfloat16", "bfloat16", "10.0", ep=False) == 16 * 94
    # PP 2: one stage's share, rounded up
    assert extend_ops(a, 8, 2, "bfloat16", "bfloat16", "10.0", ep=False) == 18 * 47


def test_block_fp8_quantizes_before_every_gemm_and_sm100_takes_flashinfer_trtllm() -> None:
    a = arch("Qwen--Qwen3-235B-A22B-FP8", BLOCK)
    # H200: Triton fused MoE, a quant before qkv, o and each grouped GEMM: 18 + 4
    assert extend_ops(a, 8, 1, "fp8", "fp8", "9.0", ep=False) == 22 * 94
    # B200: the routed experts in one flashinfer_trtllm call (no topk, align, act, sum) quantized once: 18 - 5 + 3
    assert extend_ops(a, 8, 1, "fp8", "fp8", "10.0", ep=False) == 16 * 94


def test_deepseek_mla_with_shared_experts_and_dense_layers() -> None:
    a = arch("deepseek-ai--DeepSeek-R1", BLOCK)
    # dense layer: 4 + MLA 11 + MLP 3 + 6 quants (MLA 4, MLP 2) = 24; MoE layer (H200, Triton, EP): 4 + 11 + router
    # 2 + 5 + shared 4 + quants (MLA 4, shared 2, experts 2) = 34
    assert extend_ops(a, 8, 1, "fp8", "fp8", "9.0", ep=True) == 3 * 24 + 58 * 34
    # DeepSeek-V3.2 adds the DSA indexer (12 ops, 2 quantized GEMMs) to every MLA layer; its model class
    # (DeepseekV32ForCausalLM) never fuses the shared expert
    v32 = arch("deepseek-ai--DeepSeek-V3.2", BLOCK)
    assert extend_ops(v32, 8, 1, "fp8", "fp8", "9.0", ep=False) == extend_ops(a, 8, 1, "fp8", "fp8", "9.0",
                                                                                  ep=True) + 61 * 14


def test_deepseek_v3_shared_expert_rides_in_the_routed_moe_without_ep() -> None:
    # 0.5.6.post2 deepseek_v2.py L3272-3312: DeepseekV3ForCausalLM, 256 routed + 1 shared, SM >= 80, EP 1: the
    # shared expert is one more expert of the fused MoE call (no gate_up, act, down, add, nor their 2 quants)
    a = arch("deepseek-ai--DeepSeek-R1", BLOCK)
    assert extend_ops(a, 8, 1, "fp8", "fp8", "9.0", ep=False) == 3 * 24 + 58 * 28
    # on B200 the flashinfer_trtllm runner turns the fusion off (server_args.py L1594-1599): 4 + 11 + 2 + 4 + quants
    # (MLA 4, shared 2, experts 1) = 28
    assert extend_ops(a, 8, 1, "fp8", "fp8", "10.0", ep=False) == 3 * 24 + 58 * 28
    assert extend_ops(a, 8, 1, "fp8", "fp8", "10.0", ep=True) == 3 * 24 + 58 * 28
    # SM75 never fuses
    assert extend_ops(a, 8, 1, "fp8", "fp8", "7.5", ep=False) == 3 * 24 + 58 * 34


def test_llama_has_no_qk_norm_and_minimax_norms_over_tp() -> None:
    llama = arch("Qwen--Qwen2-7B-Instruct")  # a dense GQA model file without q/k norm: 4 + 5 + 3
    assert extend_ops(llama, 2, 1, "bfloat16", "bfloat16", "9.0", ep=False) == 12 * llama.num_layers
    mm = arch("MiniMaxAI--MiniMax-M2.5", BLOCK)
    # RMSNormTP on q and on k: variance, its all-reduce, normalize (6 at TP > 1)
    per = 4 + 5 + 6 + 2 + 5 + 2 + 2
    assert extend_ops(mm, 8, 1, "fp8", "fp8", "9.0", ep=False) == per * mm.num_layers
