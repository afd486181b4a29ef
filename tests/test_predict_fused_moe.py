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
from launchcard.predict._fused_moe import (
    DEFAULT_BLOCKS,
    BlockRule,
    block_finding,
    block_rule,
    is_triton_source,
    row_block,
    stand_in_finding,
    stand_in_ratio,
)
from launchcard.predict._kernels import facts_kernels
from launchcard.predict._marlin import padded_random

CONFIGS = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs"


def facts(name: str, gpu: str, *, engine: str = "vllm", tp: int = 1) -> ServingFacts:
    arch = arch_from_config(json.loads((CONFIGS / name).read_text()))
    s = Settings(tp=tp, max_model_len=32768, vllm_version="0.11.0")
    acc = find(gpu)
    return facts_from_memory_plan(arch, s, plan_memory(arch, s, gpu=acc), HardwareFigures.from_accelerator(acc),
                                  engine=engine)


def test_default_rules_follow_get_default_config_by_release() -> None:
    # vLLM to 0.16 and SGLang: 16-bit 16 rows while M <= E else 64, block FP8 64 always
    assert DEFAULT_BLOCKS["bfloat16"] == (16, 64) and DEFAULT_BLOCKS["fp8_block"] == (64, 64)
    old = BlockRule("bfloat16", "e")
    assert row_block(128, 128, old) == 16 and row_block(129, 128, old) == 64
    assert row_block(1, 256, BlockRule("fp8_block", "e")) == 64
    # vLLM 0.18 on: by M alone
    new = BlockRule("bfloat16", "m")
    assert [row_block(m, 128, new) for m in (32, 33, 96, 97, 512, 513)] == [16, 32, 32, 64, 64, 128]
    assert [row_block(m, 256, BlockRule("fp8_block", "m")) for m in (64, 65)] == [16, 64]


def test_a_tuned_file_sets_the_block_at_the_entry_nearest_m() -> None:
    rule = BlockRule("bfloat16", "e", ((16, 16), (128, 16), (256, 32), (512, 64)))
    assert row_block(1, 128, rule) == 16  # nearest key 16, not the default's
    assert row_block(200, 128, rule) == 32  # 256 is nearer than 128
    assert row_block(192, 128, rule) == 16  # a tie takes the smaller key (min over ascending keys)
    assert row_block(100_000, 128, rule) == 64  # past the last key: the last entry


def test_the_data_file_holds_the_releases_tuned_files() -> None:
    # vLLM 0.11.0 ships E=128,N=192 for the A100 (Qwen3-235B BF16 at TP8): 16 rows to M = 128, 32 at 256
    r = block_rule("vllm", "0.11.0", "a100_80gb", 128, 192, "bfloat16")
    assert r.path.endswith("configs/E=128,N=192,device_name=NVIDIA_A100-SXM4-80GB.json") and r.release == "0.11.0"
    assert row_block(256, 128, r) == 32 and row_block(129, 128, r) == 16  # the default would say 64
    assert not r.note
    # a release between two read: the older one's files, said so
    r = block_rule("vllm", "0.13.0", "a100_80gb", 128, 192, "bfloat16")
    assert r.release == "0.12.0" and "0.13.0" in r.note
    # no file for the shape: the release's default rule
    r = block_rule("vllm", "0.24.0", "h100", 128, 1536, "bfloat16")
    assert not r.tuned and r.default == "m" and row_block(100, 128, r) == 64


def test_an_unknown_gpu_or_release_takes_the_default_or_newest_and_says_so() -> None:
    r = block_rule("vllm", "0.11.0", "b200", 128, 192, "bfloat16")
    assert not r.tuned and r.default == "e" and "b200" in r.note
    f = block_finding("vLLM", r, 128, 192)
    assert f.severity == "assumed" and f.code == "fused-moe-blocks" and "get_default_config" in f.message
    r = block_rule("sglang", None, "h200", 256, 256, "fp8_block")
    assert r.release == "0.5.14" and "not stated" in r.note and r.tuned
    assert "tuned file" in block_finding("SGLang", r, 256, 256).message
    known = block_rule("vllm", "0.11.0", "a100_80gb", 128, 192, "bfloat16")
    assert block_finding("vLLM", known, 128, 192).severity == "info"


def test_triton_sources_are_the_fused_moe_kernels_not_flashinfer_or_marlin() -> None:
    assert is_triton_source("vllm_fused_moe") and is_triton_source("sglang_fused_moe_triton")
    assert is_triton_source("vllm_unquantizedfusedmoe_triton_tritonexperts")
    assert not is_triton_source("vllm_unquantizedfusedmoe_flashinfer_trtllm_trtllmbf16experts")
    assert not is_triton_source("sglang_marlin_moe") and not is_triton_source("vllm_fused_moe_marlin")


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_a_triton_record_pads_the_steps_expert_rows_by_the_default_block(engine: str) -> None:
    f = facts("Qwen--Qwen3-235B-A22B_config.json", "h200", engine=engine, tp=8)
    k = facts_kernels(f)
    assert k.x_blocks == (16, 64) and f.moe_n == 192
    rule = block_rule(engine, f.release, "h200", 128, 192, "bfloat16")
    p = f.experts_per_token / f.experts
    for tokens in (64, 512):
        block = row_block(tokens, 128, rule)
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


@pytest.mark.parametrize(("extra", "shape"), [
    ((), (256, 256)),  # plain TP8: every expert, its intermediate size over 8
    (("--dp-size", "8", "--enable-dp-attention"), (256, 256)),  # the MoE stays TP8 under DP attention
    (("--dp-size", "8", "--enable-dp-attention", "--ep-size", "8"), (32, 2048)),  # experts over 8, each whole
    (("--ep-size", "2"), (128, 512)),  # experts over 2, each over the other 4
])
def test_sglang_kernel_shape_follows_its_moe_split(extra: tuple[str, ...], shape: tuple[int, int]) -> None:
    """SGLang's fused MoE holds E / --ep-size experts of intermediate size / (--tp-size / --ep-size) on a rank
    (parallel_state.py L1636-1637), under DP attention too, whose memory plan splits the experts over the group:
    the tuned file (E=256, N=256 on H200 for DeepSeek at TP8) is looked up by that shape."""
    from launchcard.predict import sglang_plan, sglang_serving_facts

    plan = sglang_plan(["python3", "-m", "sglang.launch_server", "--model-path", "x", "--tp-size", "8", *extra],
                       gpu_memory_gib=find("h200").memory_gib, version="0.5.6.post2",
                       architecture="DeepseekV3ForCausalLM")
    f = sglang_serving_facts(CONFIGS / "deepseek-ai--DeepSeek-R1_config.json", plan, gpu="h200")
    assert (f.moe_e, f.moe_n) == shape
    k = facts_kernels(f)
    assert k.x_blocks[0]  # the H200 SGLang FP8 record is the Triton kernel's, padded
    rule = block_rule("sglang", f.release, "h200", f.moe_e, f.moe_n, "fp8_block")
    assert bool(rule.tuned) == (shape == (256, 256))
    if extra[:1] == ("--dp-size",) and shape == (256, 256):
        # the step pads by the tuned file's block (16 rows at M = 16 gathered tokens), not the default's 64
        tuned, planned = (step_work(g, 2, 2000.0, 0, 0.0, 0.0) for g in (f, replace(f, moe_e=0, moe_n=2048)))
        assert tuned.moe_flop < planned.moe_flop


def _facts_with(name: str, gpu: str, quantization: str | None, tp: int) -> ServingFacts:
    arch = arch_from_config(json.loads((CONFIGS / name).read_text()))
    s = Settings(tp=tp, max_model_len=32768, vllm_version="0.11.0", quantization=quantization)
    acc = find(gpu)
    return facts_from_memory_plan(arch, s, plan_memory(arch, s, gpu=acc), HardwareFigures.from_accelerator(acc),
                                  engine="vllm")


def test_per_tensor_fp8_experts_look_up_their_own_files_and_the_16_bit_default() -> None:
    """vLLM names a per-tensor FP8 call's file dtype=fp8_w8a8 with no block_shape and its get_default_config takes
    the 16-bit branch (0.32.0 config.py L42-55, fused_moe.py L1093-1104, L1317, L1370-1381): neither the block FP8
    maps nor their default, whatever record (the block-scaled fit) times the experts."""
    from launchcard.predict._fused_moe import moe_dtype

    assert (moe_dtype("bf16", False), moe_dtype("fp8", True), moe_dtype("fp8", False)) == \
        ("bfloat16", "fp8_block", "fp8")
    for default in ("e", "m"):
        for tokens in (8, 64, 100, 200, 600):
            assert row_block(tokens, 128, BlockRule("fp8", default)) == \
                row_block(tokens, 128, BlockRule("bfloat16", default))
    assert row_block(8, 128, BlockRule("fp8", "e")) == 16 != row_block(8, 128, BlockRule("fp8_block", "e"))
    block = _facts_with("Qwen--Qwen3-235B-A22B-FP8_config.json", "h100", None, 4)  # weight_block_size [128, 128]
    tensor = _facts_with("Qwen--Qwen3-235B-A22B_config.json", "h100", "fp8", 4)  # online FP8: per-tensor W8A8
    bf16 = _facts_with("Qwen--Qwen3-235B-A22B_config.json", "h100", None, 4)
    assert (block.moe_dtype, tensor.moe_dtype, bf16.moe_dtype) == ("fp8_block", "fp8", "bfloat16")
    assert facts_kernels(tensor).x_blocks == facts_kernels(block).x_blocks == DEFAULT_BLOCKS["fp8_block"]
    rule = block_rule("vllm", "0.11.0", "h100", 128, tensor.moe_n, "fp8")
    assert not rule.tuned and not rule.read and "per-tensor FP8 files (dtype=fp8_w8a8)" in rule.note
    found = block_finding("vLLM", rule, 128, tensor.moe_n)
    assert found.severity == "assumed" and "per-tensor FP8's as 16-bit experts'" in found.message
    assert "ships no tuned file" not in found.message  # the per-tensor files were not read: not said to be absent
    # the step pads a decode of 8 tokens to 16-row blocks, not the block FP8 default's 64
    p = tensor.experts_per_token / tensor.experts
    k = facts_kernels(tensor)
    w = step_work(tensor, 0, 0.0, 8, 8 * 4.0)
    rows = w.moe_flop * tensor.expert_flops_per_s * k.x_comp / (2.0 * tensor.expert_params * p)
    assert rows == pytest.approx(8 * padded_random(8, p, 16), rel=1e-9)
    as_block = replace(tensor, moe_dtype="fp8_block")
    rows_block = (step_work(as_block, 0, 0.0, 8, 8 * 4.0).moe_flop * as_block.expert_flops_per_s * k.x_comp
                  / (2.0 * as_block.expert_params * p))
    assert rows_block == pytest.approx(8 * padded_random(8, p, 64), rel=1e-9) and rows_block > rows


def test_the_finding_names_the_e_the_step_model_pads_by_under_uneven_ep() -> None:
    """128 experts over an expert-parallel group of 6 (TP 2 x 3 replicas): vLLM's heaviest rank holds 22
    (limits.experts_per_rank); the step model pads by E=22's rule, so the fused-moe-blocks finding names E=22 (it
    said round(128 / 6) = 21, another shape than the one timed)."""
    from launchcard.predict._coef import coefficients
    from launchcard.predict._domain import domain_findings

    f = replace(facts("Qwen--Qwen3-235B-A22B_config.json", "h200", tp=8), ep=True, tp=2, replicas=3)
    (said,) = [x for x in domain_findings(f, (128, 128), (128, 128), 1, coefficients("gpu", "vllm"))
               if x.code == "fused-moe-blocks"]
    assert "(E=22, N=192)" in said.message, said.message


def test_the_a100_stand_in_takes_vllms_measured_ratio_where_vllm_ships_a_tuned_file_sglang_lacks() -> None:
    """The A100's vLLM experts are timed with SGLang 0.5.10's rows (_kernels.MOE_STAND_IN).  At E=128, N=192 vLLM
    (0.11.0 to 0.24.0) ships E=128,N=192,device_name=NVIDIA_A100-SXM4-80GB.json and SGLang 0.5.10 none: the record's
    ratio of the two tables' rows applies, by get_default_config's regime (M <= E, above)."""
    r = stand_in_ratio("vllm", "0.11.0", "a100_80gb", 128, 192, "bfloat16", "sglang")
    assert r is not None and r.measured and r.rows > 100
    assert 0.7 < r.gt < r.le < 1.0  # above E the default config's 64-row tiles lose most
    assert r.at(128, 128) == r.le and r.at(129, 128) == r.gt
    assert "E=128,N=192,device_name=NVIDIA_A100-SXM4-80GB.json" in stand_in_finding(r, 128, 192, "vLLM", "SGLang")
    # the same config on both sides (neither ships a file for N=384 on the A100): measured alike, no factor
    assert stand_in_ratio("vllm", "0.11.0", "a100_80gb", 128, 384, "bfloat16", "sglang") is None
    # no stand-in record for SGLang's own rows, another GPU or 16-bit-only record against FP8 experts
    assert stand_in_ratio("sglang", "0.5.10", "a100_80gb", 128, 192, "bfloat16", "vllm") is None
    assert stand_in_ratio("vllm", "0.11.0", "h200", 128, 192, "bfloat16", "sglang") is None
    assert stand_in_ratio("vllm", "0.11.0", "a100_80gb", 128, 192, "fp8_block", "sglang") is None
    # vLLM 0.24.0's default rule differs from SGLang's at a shape neither ships a file for: a config no table
    # measured against the stand-in's, kept unscaled and said so
    u = stand_in_ratio("vllm", "0.24.0", "a100_80gb", 128, 384, "bfloat16", "sglang")
    assert u is not None and not u.measured and (u.le, u.gt) == (1.0, 1.0)
    assert "unscaled" in stand_in_finding(u, 128, 384, "vLLM", "SGLang")


def test_the_step_model_scales_the_stand_in_experts_time_by_the_regimes_ratio() -> None:
    """Qwen3-235B at TP8 on the A100 (E=128, N=192): vLLM's experts' FLOPs, weight reads and call latency at the
    stand-in's time x the ratio for the step's tokens; SGLang's own rows unscaled."""
    f = facts("Qwen--Qwen3-235B-A22B_config.json", "a100_80gb", tp=8)
    g = facts("Qwen--Qwen3-235B-A22B_config.json", "a100_80gb", engine="sglang", tp=8)
    k = facts_kernels(f)
    assert k.moe_from == "sglang" and f.moe_n == 192 and not facts_kernels(g).moe_from
    r = stand_in_ratio("vllm", f.release, "a100_80gb", 128, 192, "bfloat16", "sglang")
    assert r is not None
    rule = block_rule("vllm", f.release, "a100_80gb", 128, 192, "bfloat16")
    p = f.experts_per_token / f.experts
    for tokens, ratio in ((64, r.le), (2048, r.gt)):
        w = step_work(f, 0, 0.0, tokens, tokens * tokens / 2.0)
        rows = w.moe_flop * f.expert_flops_per_s * k.x_comp / (2.0 * f.expert_params * p)
        assert rows == pytest.approx(tokens * padded_random(tokens, p, row_block(tokens, 128, rule)) * ratio,
                                     rel=1e-9)
        assert w.moe_fixed == pytest.approx(f.moe_layers * k.x_t0 * ratio, rel=1e-9)
        touched = 1.0 - (1.0 - p) ** tokens
        assert w.moe_mem == pytest.approx(f.expert_bytes * touched * ratio / (f.hardware.bandwidth_bps * k.x_read),
                                          rel=1e-9)
