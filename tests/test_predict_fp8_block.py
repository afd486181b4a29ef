"""Block-scaled FP8 dense GEMMs (a checkpoint's quantization_config with weight_block_size): the plan facts say so
and the dense GEMMs are timed with the engine's block-scaled kernel's measured shares ("kernels" -> gemm ->
fp8_block, bench/predict_kernels.py), not the per-tensor FP8 kernels'; a GPU without a record takes the median of
those that have one, or the per-tensor share, and says so."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from launchcard.hardware import find
from launchcard.memory import Settings, arch_from_config, plan_memory
from launchcard.predict import HardwareFigures, ServingFacts, Workload, _kernels, facts_from_memory_plan, predict
from launchcard.predict._kernels import NO_KERNELS, _block_gemm, _table, facts_kernels

CONFIG = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-32B-FP8_config.json"


def facts(gpu: str = "h100", engine: str = "trtllm", *, block: bool = True) -> ServingFacts:
    cfg = json.loads(CONFIG.read_text())
    assert cfg["quantization_config"]["weight_block_size"] == [128, 128]
    if not block:
        cfg["quantization_config"].pop("weight_block_size")
    arch = arch_from_config(cfg)
    s = Settings(max_model_len=8192, vllm_version="0.11.0")
    acc = find(gpu)
    return facts_from_memory_plan(arch, s, plan_memory(arch, s, gpu=acc), HardwareFigures.from_accelerator(acc),
                                  engine=engine)


def gemm(gpu: str, engine: str) -> dict[str, Any]:
    return dict(_table()["kernels"]["gpus"][gpu][engine]["gemm"])


def test_the_facts_say_block_scaled_only_where_the_dense_gemms_run_fp8() -> None:
    assert facts().gemm_block and facts().compute_dtype == "fp8"
    assert not facts(block=False).gemm_block  # per-tensor scales: the per-tensor kernels
    a100 = facts("a100_80gb", "vllm")  # no FP8 tensor cores: vLLM's Marlin dequantizes, no block kernel runs
    assert not a100.gemm_block and a100.marlin


@pytest.mark.parametrize("engine", ["trtllm", "sglang", "vllm"])
def test_block_scaled_dense_gemms_take_the_engines_block_kernel_share(engine: str) -> None:
    block, per_tensor = facts_kernels(facts(engine=engine)), facts_kernels(facts(engine=engine, block=False))
    rec = gemm("h100", engine)
    assert block.gemm_block == "own" and "fp8 block (h100)" in block.source
    assert block.g_comp == rec["fp8_block"]["e_comp"] and per_tensor.g_comp == rec["fp8"]["e_comp"]
    assert block.g_comp != per_tensor.g_comp and per_tensor.gemm_block == ""
    assert (block.x_comp, block.w_read, block.ap_comp) == (per_tensor.x_comp, per_tensor.w_read, per_tensor.ap_comp)


def test_vllm_takes_sglangs_deepgemm_rows_where_it_runs_deepgemm() -> None:
    """vLLM's own block rows hold a per-call floor (bench/predict_kernels.py BLOCK_STAND_IN): on SM90/SM100 its record
    is SGLang's DeepGEMM one; on the L40S (SM89: vLLM's Triton block kernel) there is none, so the median."""
    for gpu in ("h100", "h200", "b200"):
        v, s = gemm(gpu, "vllm")["fp8_block"], gemm(gpu, "sglang")["fp8_block"]
        assert v["stand_in"] == "sglang" and v["e_comp"] == s["e_comp"] and "/sglang/" in v["file"]
    assert "fp8_block" not in gemm("l40s", "vllm")
    k = facts_kernels(facts("l40s", "vllm"))
    assert k.gemm_block == "median" and k.g_comp == _table()["kernels"]["gpus"]["default"]["vllm"]["gemm"][
        "fp8_block"]["e_comp"]
    said = [x.message for x in predict(facts("l40s", "vllm"), Workload(isl=1024, osl=64, concurrency=4)).findings
            if x.code == "domain-gpu"]
    assert len(said) == 1 and "no record of vllm's block-scaled FP8 GEMM kernel on l40s" in said[0]



def test_vllm_on_sglangs_deepgemm_rows_says_so() -> None:
    """The stand-in is another engine's measurement: the plan says whose rows its dense GEMMs take (as the MoE
    stand-in does), and an engine timed with its own rows says nothing of it."""
    said = [x.message for x in predict(facts("h100", "vllm"), Workload(isl=1024, osl=64, concurrency=4)).findings
            if x.code == "domain-gpu"]
    assert len(said) == 1 and "sglang's DeepGEMM" in said[0] and "BLOCK_STAND_IN" in said[0], said
    # only where deep_gemm imports (vLLM's wheel does not pull it in): the stand-in is an assumption that says so
    assert "when the deep_gemm package is installed" in said[0] and "CUTLASS" in said[0], said
    own = [x.message for x in predict(facts("h100", "sglang"), Workload(isl=1024, osl=64, concurrency=4)).findings
           if x.code == "domain-gpu"]
    assert not any("block-scaled" in m for m in own), own

def test_an_untabled_gpu_takes_the_median_and_says_so() -> None:
    f = facts("h100_pcie", "sglang")
    k = facts_kernels(f)
    assert k.source.startswith("default/") and k.gemm_block == "median"
    said = [x.message for x in predict(f, Workload(isl=1024, osl=64, concurrency=4)).findings
            if x.code == "domain-gpu"]
    assert len(said) == 1 and "has no measured kernel tables" in said[0] and "block-scaled FP8" in said[0]


def test_without_any_record_the_per_tensor_share_stays(monkeypatch: pytest.MonkeyPatch) -> None:
    k = _kernels.kernel_eff("h100", "gpu", "trtllm", "fp8", "fp8")
    doc = json.loads(json.dumps(_table()))
    for by_engine in doc["kernels"]["gpus"].values():
        by_engine.get("trtllm", {}).get("gemm", {}).pop("fp8_block", None)
    monkeypatch.setattr(_kernels, "_table", lambda: doc)
    got = _block_gemm(k, "h100", "trtllm")
    assert got.gemm_block == "per-tensor" and got.g_comp == k.g_comp and got.source == k.source
    assert _kernels.kernel_eff("h100", "cpu", "trtllm", "fp8", "fp8", block=True) is NO_KERNELS


def test_a_slower_block_kernel_makes_a_prefill_heavy_burst_slower() -> None:
    """TensorRT-LLM's block-scaling GEMM on the H100 reaches a smaller FLOP/s share than its per-tensor FP8 GEMM (its
    tables): a compute-bound prefill burst takes longer with it, by no more than the share ratio."""
    f = facts()
    rec = gemm("h100", "trtllm")
    ratio = rec["fp8"]["e_comp"] / rec["fp8_block"]["e_comp"]
    assert ratio > 1.05
    w = Workload(isl=4096, osl=16, rate=float("inf"), num_requests=64)
    new, old = predict(f, w), predict(replace(f, gemm_block=False), w)
    assert old.ttft_ms_mean < new.ttft_ms_mean <= ratio * old.ttft_ms_mean * 1.001
