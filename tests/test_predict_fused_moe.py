"""vLLM's and SGLang's Triton fused MoE row blocks (launchcard.predict._fused_moe): get_default_config's
BLOCK_SIZE_M, the kernel records fitted over padded rows, and the step model padding the same way."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from launchcard.hardware import find
from launchcard.memory import Settings, arch_from_config, plan_memory
from launchcard.predict import HardwareFigures, ServingFacts, facts_from_memory_plan, step_work
from launchcard.predict._fused_moe import DEFAULT_BLOCKS, is_triton_source, row_block
from launchcard.predict._kernels import facts_kernels
from launchcard.predict._marlin import padded_random

CONFIGS = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs"


def facts(name: str, gpu: str, *, engine: str = "vllm", tp: int = 1) -> ServingFacts:
    arch = arch_from_config(json.loads((CONFIGS / name).read_text()))
    s = Settings(tp=tp, max_model_len=32768, vllm_version="0.11.0")
    acc = find(gpu)
    return facts_from_memory_plan(arch, s, plan_memory(arch, s, gpu=acc), HardwareFigures.from_accelerator(acc),
                                  engine=engine)


def test_default_block_is_16_rows_up_to_e_tokens_then_64_and_64_for_block_fp8() -> None:
    assert DEFAULT_BLOCKS["bfloat16"] == (16, 64) and DEFAULT_BLOCKS["fp8_block"] == (64, 64)
    assert row_block(128, 128, DEFAULT_BLOCKS["bfloat16"]) == 16
    assert row_block(129, 128, DEFAULT_BLOCKS["bfloat16"]) == 64
    assert row_block(1, 256, DEFAULT_BLOCKS["fp8_block"]) == 64


def test_triton_sources_are_the_fused_moe_kernels_not_flashinfer_or_marlin() -> None:
    assert is_triton_source("vllm_fused_moe") and is_triton_source("sglang_fused_moe_triton")
    assert is_triton_source("vllm_unquantizedfusedmoe_triton_tritonexperts")
    assert not is_triton_source("vllm_unquantizedfusedmoe_flashinfer_trtllm_trtllmbf16experts")
    assert not is_triton_source("sglang_marlin_moe") and not is_triton_source("vllm_fused_moe_marlin")


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_a_triton_record_pads_the_steps_expert_rows_by_the_default_block(engine: str) -> None:
    f = facts("Qwen--Qwen3-235B-A22B_config.json", "h200", engine=engine, tp=8)
    k = facts_kernels(f)
    assert k.x_blocks == (16, 64)
    p = f.experts_per_token / f.experts
    for tokens, block in ((64, 16), (512, 64)):
        w = step_work(f, 0, 0.0, tokens, tokens * tokens / 2.0)
        rows = w.moe_flop * f.expert_flops_per_s * k.x_comp / (2.0 * f.expert_params * p)
        assert rows == pytest.approx(tokens * padded_random(tokens, p, block), rel=1e-9)
        assert rows > tokens  # padding only adds rows


def test_trtllm_and_records_without_the_rule_keep_the_routed_rows() -> None:
    f = facts("Qwen--Qwen3-235B-A22B_config.json", "h200", tp=8)
    p = f.experts_per_token / f.experts
    trt = replace(f, engine="trtllm")
    w = step_work(trt, 0, 0.0, 512, 512 * 256.0)
    rows = w.moe_flop * trt.expert_flops_per_s * facts_kernels(trt).x_comp / (2.0 * trt.expert_params * p)
    assert rows == pytest.approx(512, rel=1e-9)


def test_mxfp4_experts_run_their_own_kernels_and_keep_the_routed_rows() -> None:
    gpt_oss = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "hf" / "openai" / "gpt-oss-120b"
    if not (gpt_oss / "config.json").exists():
        pytest.skip("corpus config not present")
    arch = arch_from_config(json.loads((gpt_oss / "config.json").read_text()))
    s = Settings(tp=2, max_model_len=32768, vllm_version="0.12.0")
    acc = find("h100")
    f = facts_from_memory_plan(arch, s, plan_memory(arch, s, gpu=acc), HardwareFigures.from_accelerator(acc),
                               engine="vllm")
    assert not f.fused_moe and f.marlin == ""
    # the BF16 class times them at its fit over the rows as routed ("routed"), not the padded one
    from launchcard.predict._kernels import _table

    rec = _table()["kernels"]["gpus"]["h100"]["vllm"]["moe"]["bf16"]
    assert facts_kernels(f).x_comp == pytest.approx(rec["routed"]["e_comp"]) != pytest.approx(rec["e_comp"])
    p = f.experts_per_token / f.experts
    w = step_work(f, 0, 0.0, 512, 512 * 256.0)
    rows = w.moe_flop * f.expert_flops_per_s * facts_kernels(f).x_comp / (2.0 * f.expert_params * p)
    assert rows == pytest.approx(512, rel=1e-9)
