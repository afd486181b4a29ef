"""launchcard.predict._prefix: the tokens a prefix-cache hit spares, at each engine's reuse granularity."""

from __future__ import annotations

from pathlib import Path

import pytest

from config_support import LLAMA8B
from helpers import run_cli
from launchcard.hardware import find
from launchcard.memory import Settings, arch_from_config, plan_memory
from launchcard.predict import (
    HardwareFigures,
    ServingFacts,
    Workload,
    coefficients,
    facts_from_memory_plan,
    facts_with,
    predict,
)
from launchcard.predict._arrivals import new_requests
from launchcard.predict._prefix import cached_prefix, prefix_finding, sglang_page, sglang_run_page


def test_a_hit_is_floored_to_whole_blocks_and_never_the_whole_prompt() -> None:
    # vLLM: max_cache_hit_length = num_tokens - 1, then max_length // block_size full blocks
    assert cached_prefix(1000, 0.5, 16) == 496
    assert cached_prefix(1000, 0.999, 16) == 992  # the hit of 999 = prompt - 1, floored
    assert cached_prefix(1024, 0.9999, 16) == 1008  # a 1,023-token hit keeps a whole block to compute
    assert cached_prefix(15, 0.99, 16) == 0  # under one block: nothing reused
    # token granularity (SGLang page 1, TensorRT-LLM partial reuse): the hit itself, still at most prompt - 1
    assert cached_prefix(1000, 0.5, 1) == 500
    assert cached_prefix(100, 0.995, 1) == 99
    assert cached_prefix(1000, 0.0, 16) == 0


def test_sglang_page_from_the_command_or_the_backend_that_forces_one() -> None:
    assert sglang_page(None, None) == 1
    assert sglang_page(None, "fa3") == 1
    assert sglang_page(8, None) == 8
    assert sglang_page(32, "trtllm_mla") == 32  # 32 or 64 kept
    assert sglang_page(16, "trtllm_mla") == 64  # else 64
    assert sglang_page(None, "flashmla") == 64
    assert sglang_page(16, "cutlass_mla") == 128
    assert sglang_page(16, "trtllm_mha") == 16 and sglang_page(8, "trtllm_mha") == 64  # 16, 32 or 64 kept
    assert sglang_page(1, "fa3", nsa=True) == 64  # a DeepSeek NSA model's page, whatever the command


DSV3 = ("DeepseekV3ForCausalLM",)


def test_sglang_own_pick_of_an_mla_backend_gives_its_page() -> None:
    """The backend the extend rule reads (_sglang_mla.mla_backend) sets the page: trtllm_mla on capability 10 for
    DeepseekV3 (64), flashinfer there for other MLA models and fa3 on Hopper (1, or --page-size)."""
    run = sglang_run_page
    assert run(None, None, "10.0", DSV3, mla=True, nsa=False, eagle_topk=None) == (64, True)
    assert run(32, None, "10.0", DSV3, mla=True, nsa=False, eagle_topk=None) == (32, True)
    assert run(None, None, "10.0", ("DeepseekV2ForCausalLM",), mla=True, nsa=False, eagle_topk=None) == (1, True)
    assert run(None, None, "9.0", DSV3, mla=True, nsa=False, eagle_topk=None) == (1, True)
    assert run(16, None, "9.0", DSV3, mla=True, nsa=False, eagle_topk=None) == (16, True)
    assert run(None, None, "9.0", DSV3, mla=True, nsa=True, eagle_topk=None) == (64, True)
    assert run(None, "flashmla", "9.0", DSV3, mla=True, nsa=False, eagle_topk=None) == (64, True)
    assert run(None, None, "", DSV3, mla=True, nsa=False, eagle_topk=None) == (1, False)  # not CUDA: not read


def test_sglang_page_of_models_without_mla() -> None:
    """Below capability 10 no backend SGLang picks forces a page (read); on 10 its default trtllm_mha's 64 is
    assumed (model-specific picks not read); elsewhere 1 assumed."""
    run = sglang_run_page
    assert run(None, None, "9.0", ("LlamaForCausalLM",), mla=False, nsa=False, eagle_topk=None) == (1, True)
    assert run(8, None, "8.0", ("LlamaForCausalLM",), mla=False, nsa=False, eagle_topk=None) == (8, True)
    assert run(None, None, "10.0", ("LlamaForCausalLM",), mla=False, nsa=False, eagle_topk=None) == (64, False)
    assert run(32, None, "10.0", ("LlamaForCausalLM",), mla=False, nsa=False, eagle_topk=1) == (32, False)
    assert run(None, None, "10.0", ("LlamaForCausalLM",), mla=False, nsa=False, eagle_topk=4) == (1, False)
    assert run(None, "fa3", "10.0", ("LlamaForCausalLM",), mla=False, nsa=False, eagle_topk=None) == (1, True)
    assert run(None, None, "12.0", ("LlamaForCausalLM",), mla=False, nsa=False, eagle_topk=None) == (1, False)
    assert run(None, None, "gfx942", ("LlamaForCausalLM",), mla=False, nsa=False, eagle_topk=None) == (1, False)


def test_the_finding_states_the_share_and_the_tokens_simulated() -> None:
    f = prefix_finding("vllm", 1000, 0.5, 16, True)
    assert f.severity == "info" and "50% of every prompt" in f.message and "500 of 1,000" in f.message
    assert "496 simulated as reused" in f.message and "16-token blocks" in f.message
    unread = prefix_finding("sglang", 1000, 0.5, 1, False)
    assert unread.severity == "assumed" and "500 simulated" in unread.message
    assert "--attention-backend" in unread.message
    assert "whole 1-token pages" in unread.message
    assert prefix_finding("trtllm", 1000, 0.5, 1, True).severity == "info"


def test_requests_of_different_lengths_each_floor_their_own_hit() -> None:
    out = new_requests(4, 0, 1000, 100, 0.5, 0.5, (), 16)
    assert all(ca % 16 == 0 and ca <= nd + ca - 1 for _, nd, ca, _ in out)
    assert new_requests(3, 0, 1000, 100, 0.0, 0.5, (), 16) == [(3, 504, 496, 100)]


def vllm_facts() -> ServingFacts:
    arch, acc = arch_from_config(dict(LLAMA8B)), find("h100")
    s = Settings(max_model_len=16384)
    return facts_from_memory_plan(arch, s, plan_memory(arch, s, gpu=acc), HardwareFigures.from_accelerator(acc))


def test_vllm_prediction_simulates_the_block_floored_hit() -> None:
    f = vllm_facts()
    assert f.prefix_block == 16  # the memory plan's block size
    w = Workload(isl=8000, osl=16, concurrency=1, num_requests=4, prefix_hit=0.999)
    c = coefficients("gpu", "vllm")
    block, exact = predict(f, w, c), predict(facts_with(f, prefix_block=1), w, c)
    # 7,992 tokens hit: 7,984 reused in whole blocks (16 computed) where the exact-token model computed 8
    assert block.ttft_ms_mean > exact.ttft_ms_mean
    found = next(x for x in block.findings if x.code == "prefix-hit")
    assert "7,984 simulated as reused" in found.message
    # no prefix hit: the same run either way
    plain = Workload(isl=8000, osl=16, concurrency=1, num_requests=4)
    assert predict(f, plain, c).ttft_ms_mean == predict(facts_with(f, prefix_block=1), plain, c).ttft_ms_mean


QWEN8 = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"
LOAD = ["--isl", "2000", "--osl", "32", "--concurrency", "2", "--prefix-hit", "0.5"]


def test_a_plan_without_its_prefix_cache_simulates_no_hit() -> None:
    """vLLM --no-enable-prefix-caching reuses nothing: the facts name the option and predict (a plan search's) runs
    the hit as 0, saying so."""
    arch, acc = arch_from_config(dict(LLAMA8B)), find("h100")
    s = Settings(max_model_len=16384, enable_prefix_caching=False)
    f = facts_from_memory_plan(arch, s, plan_memory(arch, s, gpu=acc), HardwareFigures.from_accelerator(acc))
    assert f.prefix_off == "--no-enable-prefix-caching" and vllm_facts().prefix_off == ""
    w = Workload(isl=8000, osl=16, concurrency=1, num_requests=4, prefix_hit=0.9)
    c = coefficients("gpu", "vllm")
    off, none = predict(f, w, c), predict(f, Workload(isl=8000, osl=16, concurrency=1, num_requests=4), c)
    assert off.ttft_ms_mean == none.ttft_ms_mean > predict(vllm_facts(), w, c).ttft_ms_mean
    said = next(x for x in off.findings if x.code == "prefix-hit")
    assert "none simulated as reused" in said.message and "--no-enable-prefix-caching" in said.message


@pytest.mark.parametrize(("command", "off"), [
    ("vllm serve Qwen/Qwen3-8B --no-enable-prefix-caching", "--no-enable-prefix-caching"),
    ("python -m sglang.launch_server --model-path Qwen/Qwen3-8B --disable-radix-cache", "--disable-radix-cache"),
    ("trtllm-serve Qwen/Qwen3-8B --extra_llm_api_options opts.yml", "kv_cache_config.enable_block_reuse: false")])
def test_predict_refuses_a_prefix_hit_the_plan_cannot_reuse(command: str, off: str, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """As --acceptance without speculative decoding: bad input (exit 2), one line naming both options."""
    (tmp_path / "opts.yml").write_text("kv_cache_config:\n  enable_block_reuse: false\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    args = ["predict", "--config", str(QWEN8), "--gpu", "h100", "--command", command, *LOAD]
    res = run_cli(*args)
    assert res.returncode == 2, res.stdout
    line = res.stderr.strip()
    assert "\n" not in line and line.startswith("launchcard: error: --prefix-hit") and off in line, line
    assert "drop --prefix-hit" in line and "TPOT" not in res.stdout
    kept = command.replace(" --no-enable-prefix-caching", "").replace(" --disable-radix-cache", "")
    (tmp_path / "opts.yml").write_text("kv_cache_config:\n  enable_block_reuse: true\n", encoding="utf-8")
    ok = run_cli(*args[:6], kept, *LOAD)
    assert ok.returncode == 0, ok.stderr


def test_the_plan_search_refuses_a_hit_no_plan_can_reuse() -> None:
    from launchcard.plansearch import SearchSpace, checkpoint_option, prefix_cache_off

    opt = checkpoint_option("Qwen/Qwen3-8B", str(QWEN8), ("--no-enable-prefix-caching",))
    space = SearchSpace(model="Qwen/Qwen3-8B", gpu="h100", gpus=1, gpus_per_node=8, options=(opt,))
    assert prefix_cache_off(space, opt) == "--no-enable-prefix-caching"
    assert prefix_cache_off(space, checkpoint_option("Qwen/Qwen3-8B", str(QWEN8))) == ""
    sg = checkpoint_option("Qwen/Qwen3-8B", str(QWEN8), ("--disable-radix-cache",))
    assert prefix_cache_off(SearchSpace(model="Qwen/Qwen3-8B", gpu="h100", gpus=1, gpus_per_node=8, options=(sg,),
                                        engine="sglang"), sg) == "--disable-radix-cache"


def test_one_function_names_the_setting_that_turns_each_engines_prefix_cache_off() -> None:
    """``predict.prefix_off``: the plan facts (vLLM and TensorRT-LLM in facts_from_memory_plan, SGLang in its
    serving facts) and the plan search (prefix_cache_off) all name a plan's cache-off setting by it; each engine
    reads only its own setting."""
    from launchcard.predict import prefix_off

    assert prefix_off("vllm", enable_prefix_caching=False) == "--no-enable-prefix-caching"
    assert prefix_off("vllm") == prefix_off("vllm", enable_prefix_caching=True) == ""
    assert prefix_off("sglang", disable_radix_cache=True) == "--disable-radix-cache"
    assert prefix_off("trtllm", block_reuse=False) == "kv_cache_config.enable_block_reuse: false"
    assert prefix_off("trtllm") == prefix_off("sglang") == ""
    assert prefix_off("vllm", disable_radix_cache=True, block_reuse=False) == ""
    assert prefix_off("sglang", enable_prefix_caching=False, block_reuse=False) == ""
    assert prefix_off("trtllm", enable_prefix_caching=False, disable_radix_cache=True) == ""
