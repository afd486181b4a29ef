"""vLLM --data-parallel-size without --enable-expert-parallel shards a MoE's experts over TP x DP
(memory.moe_split, FusedMoEParallelConfig.make's flatten_tp_across_dp): memory, predict and the rule agree."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from launchcard.hardware import find
from launchcard.memory import Arch, Settings, arch_from_config, moe_split, plan_memory, weight_split
from launchcard.predict import HardwareFigures, ServingFacts, facts_from_memory_plan, step_work

CONFIG = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-235B-A22B_config.json"


def _arch() -> Arch:
    return arch_from_config(json.loads(CONFIG.read_text()))


def _facts(s: Settings) -> ServingFacts:
    arch, acc = _arch(), find("h200")
    return facts_from_memory_plan(arch, s, plan_memory(arch, s, gpu=acc), HardwareFigures.from_accelerator(acc))


def test_the_rule_splits_experts_whole_with_ep_and_their_rows_over_tp_x_dp_without() -> None:
    assert moe_split(Settings(tp=2, dp=4, expert_parallel=True)) == (8, 1)
    assert moe_split(Settings(tp=2, dp=4)) == (1, 8)
    assert moe_split(Settings(tp=2, dp=4, moe_dp_flat=False)) == (1, 2)  # an engine whose rule was not read
    assert moe_split(Settings(tp=8)) == (1, 8)


def test_dp8_without_ep_holds_an_eighth_of_the_experts_and_fits() -> None:
    arch = _arch()
    flat, ep = Settings(dp=8, max_model_len=32768), Settings(dp=8, expert_parallel=True, max_model_len=32768)
    one = weight_split(arch, Settings(max_model_len=32768)).expert_bytes
    assert weight_split(arch, flat).expert_bytes == weight_split(arch, ep).expert_bytes == one / 8
    assert weight_split(arch, replace(flat, moe_dp_flat=False)).expert_bytes == one
    plan = plan_memory(arch, flat, gpu=find("h200"))
    assert plan.fits and plan.kv_cache_tokens > 0


def test_predict_runs_every_dp_ranks_tokens_through_the_moe_and_times_the_gather() -> None:
    flat = _facts(Settings(dp=8, max_model_len=32768, vllm_version="0.11.0"))
    assert flat.moe_dp == 8 and not flat.ep and flat.replicas == 8
    assert flat.moe_n == _arch().moe_intermediate_size // 8
    assert any(x.code == "moe-dp-flat" and "flatten_tp_across_dp" in x.message for x in flat.findings)
    alone = replace(flat, moe_dp=1)
    w, w1 = step_work(flat, 16, 16 * 1000.0, 0, 0.0), step_work(alone, 16, 16 * 1000.0, 0, 0.0)
    assert w.moe_flop > w1.moe_flop  # 8 ranks' tokens reach the rank's experts
    assert w1.comm == 0.0 < w.comm and w.collectives > w1.collectives  # tp 1: only the DP gather/scatter
    ep = _facts(Settings(dp=8, expert_parallel=True, max_model_len=32768, vllm_version="0.11.0"))
    assert ep.moe_dp == 1  # EP keeps its all-to-all


def test_a_dense_model_or_dp1_keeps_no_dp_moe() -> None:
    assert _facts(Settings(tp=8, max_model_len=32768, vllm_version="0.11.0")).moe_dp == 1


def _check_codes(argv: list[str]) -> list[str]:
    from launchcard.check import check_plan
    from launchcard.resolve import Command, ResolvedPlan

    model = "Qwen/Qwen3-235B-A22B"
    cmd = Command(role="single", argv=("vllm", "serve", model, "--max-model-len", "32768", *argv), env={})
    plan = ResolvedPlan(model=model, model_id=model, variant="default", hardware="h200", strategy=None,
                        node_count=1, deploy_type="single_node", docker_image="vllm/vllm-openai:v0.11.0",  # type: ignore[arg-type]
                        brand="NVIDIA", generation="hopper", gpus_per_node=8, commands=(cmd,))
    return [f.code for f in check_plan(plan, config=json.loads(CONFIG.read_text())).findings]


def test_check_agrees_dp8_without_ep_fits_and_one_gpu_does_not() -> None:
    assert "memory-fits" in _check_codes(["--data-parallel-size", "8"])
    assert "memory-does-not-fit" in _check_codes([])
