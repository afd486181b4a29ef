"""vLLM's CUTLASS blockwise FP8 GEMM on SM90 (launchcard.predict._cutlass_block): where DeepGEMM cannot run (no
deep_gemm package, VLLM_USE_DEEP_GEMM=0) a block-FP8 checkpoint's dense GEMMs are timed per shape from vLLM PR
#23280's table, not with the DeepGEMM record's shares."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from launchcard.argv import parse_command
from launchcard.errors import InputError
from launchcard.hardware import find
from launchcard.memory import Settings, arch_from_config, plan_memory, settings_from_argv
from launchcard.predict import HardwareFigures, ServingFacts, Workload, facts_from_memory_plan, predict
from launchcard.predict._cutlass_block import SMS, block_gemm_shapes, cutlass_gemm_s

CONFIGS = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs"


def r1_facts(gpu: str = "h200", *, deep_gemm: bool | None = None, engine: str = "vllm") -> ServingFacts:
    arch = arch_from_config(json.loads((CONFIGS / "deepseek-ai--DeepSeek-R1_config.json").read_text()))
    s = Settings(tp=8, max_model_len=8192, vllm_version="0.11.0", deep_gemm=deep_gemm)
    acc = find(gpu)
    return facts_from_memory_plan(arch, s, plan_memory(arch, s, gpu=acc), HardwareFigures.from_accelerator(acc),
                                  engine=engine)


def h100_s(m: int, n: int, k: int) -> float:
    hw = find("h100")
    return cutlass_gemm_s(m, n, k, float(hw.tflops["fp8"]) * 1e12, float(hw.bandwidth_tbps) * 1e12, SMS["h100"])


def test_the_op_time_follows_pr_23280s_table() -> None:
    """N 2112 K 7168 on the H100: 17 tiles keep 17 SMs busy for 56 K steps whatever the rows up to 128 (the table's
    0.893 TFLOP/s at one row = 33.9 us), a second wave of tiles from 1,024 rows (350.6 TFLOP/s = 88.4 us)."""
    one = 2 * 2112 * 7168 / 0.893065e12
    assert h100_s(1, 2112, 7168) == pytest.approx(one, rel=0.05)
    assert h100_s(124, 2112, 7168) == pytest.approx(h100_s(1, 2112, 7168), rel=0.1)  # tile-bound: flat in rows
    assert h100_s(1024, 2112, 7168) == pytest.approx(2 * 1024 * 2112 * 7168 / 350.649020e12, rel=0.08)
    # a shape it was not fitted on (the table's N 576 rows)
    assert h100_s(8192, 576, 7168) == pytest.approx(2 * 8192 * 576 * 7168 / 208.212890e12, rel=0.15)
    assert cutlass_gemm_s(0, 2112, 7168, 1.979e15, 3.35e12, 132) == 0.0


def test_deepseek_r1_block_gemms_as_vllm_builds_them() -> None:
    arch = arch_from_config(json.loads((CONFIGS / "deepseek-ai--DeepSeek-R1_config.json").read_text()))
    shapes = set(block_gemm_shapes(arch, 8))
    assert shapes == {(2112, 7168, 61, False),  # fused_qkv_a: replicated (disable_tp)
                      (3072, 1536, 61, False),  # q_b_proj: 16 heads x 192
                      (4096, 512, 61, True),  # kv_b_proj: prefill only (decode runs W_UK / W_UV absorbed)
                      (7168, 2048, 61, False),  # o_proj
                      (4608, 7168, 3, False), (7168, 2304, 3, False),  # the 3 dense layers' MLP
                      (512, 7168, 58, False), (7168, 256, 58, False)}  # the shared expert, TP-split


def test_vllm_without_deep_gemm_times_cutlass_on_h200() -> None:
    work = Workload(isl=228, osl=213, concurrency=4)
    with_dg, without = r1_facts(), r1_facts(deep_gemm=False)
    assert not with_dg.block_cutlass and without.block_cutlass and without.block_sms == 132
    a, b = predict(with_dg, work), predict(without, work)
    # ~80 us of CUTLASS tiles a MoE layer at 4 rows against DeepGEMM's weight reads: milliseconds a step
    assert b.tpot_ms_mean > a.tpot_ms_mean + 2.0
    said = [f for f in b.findings if f.code == "block-fp8-kernel"]
    assert len(said) == 1 and said[0].severity == "info" and "CUTLASS" in said[0].message
    assert not any("DeepGEMM rows" in f.message for f in b.findings if f.code == "domain-gpu")
    assert not any(f.code == "block-fp8-kernel" for f in a.findings)
    # a long prefill chunk: many waves of tiles, still slower than DeepGEMM's record but not by the decode ratio
    long = Workload(isl=8000, osl=2, concurrency=1)
    ttft_a, ttft_b = predict(with_dg, long).ttft_ms_mean, predict(without, long).ttft_ms_mean
    assert ttft_b > ttft_a and ttft_b / ttft_a < b.tpot_ms_mean / a.tpot_ms_mean


def test_a_gpu_without_the_timing_keeps_the_record_and_says_so() -> None:
    f = r1_facts("b200", deep_gemm=False)  # SM100: another CUTLASS kernel, not timed
    assert not f.block_cutlass
    said = [x for x in f.findings if x.code == "block-fp8-kernel"]
    assert len(said) == 1 and said[0].severity == "assumed" and "b200" in said[0].message
    assert predict(f, Workload(isl=512, osl=64, concurrency=4)).tpot_ms_mean == pytest.approx(
        predict(r1_facts("b200"), Workload(isl=512, osl=64, concurrency=4)).tpot_ms_mean)
    # only vLLM reads it: SGLang and TensorRT-LLM run their own block kernels
    assert not r1_facts(deep_gemm=False, engine="sglang").block_cutlass


def test_vllm_use_deep_gemm_0_in_the_launch_turns_it_off() -> None:
    def read(env: str) -> bool | None:
        cmd = f"{env} vllm serve deepseek-ai/DeepSeek-R1 -tp 8".split()
        return settings_from_argv(cmd, Settings()).deep_gemm

    assert read("VLLM_USE_DEEP_GEMM=0") is False
    assert read("VLLM_USE_DEEP_GEMM=1") is None and read("") is None
    with pytest.raises(InputError, match="VLLM_USE_DEEP_GEMM is not an integer"):
        read("VLLM_USE_DEEP_GEMM=no")
    assert parse_command(["VLLM_USE_DEEP_GEMM=0", "vllm", "serve", "m"]).env  # the parser keeps the environment
    assert math.isfinite(h100_s(3, 7168, 2048))


def test_a_release_other_than_the_wheel_read_is_timed_as_it_and_said_assumed() -> None:
    """The tile configuration is 0.11.0's wheel's: another release (the V3.2 run's 0.13.0) keeps the timing, said."""
    arch = arch_from_config(json.loads((CONFIGS / "deepseek-ai--DeepSeek-R1_config.json").read_text()))
    acc = find("h200")

    def facts(version: str) -> ServingFacts:
        s = Settings(tp=8, max_model_len=8192, vllm_version=version, deep_gemm=False)
        return facts_from_memory_plan(arch, s, plan_memory(arch, s, gpu=acc), HardwareFigures.from_accelerator(acc))

    read, later = facts("0.11.0"), facts("0.13.0")
    assert read.block_cutlass and later.block_cutlass == read.block_cutlass
    said = [f for f in later.findings if f.code == "block-fp8-kernel" and f.severity == "assumed"]
    assert len(said) == 1 and "0.13" in said[0].message and "0.11.0's wheel" in said[0].message
    assert not [f for f in read.findings if f.code == "block-fp8-kernel" and f.severity == "assumed"]
