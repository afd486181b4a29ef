"""SGLang's DeepSeek extend forms and the kv_b_proj its 0.5.5.post2-0.5.6.post2 MHA form runs twice
(predict/_sglang_mla.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from launchcard.hardware import find
from launchcard.memory import load_arch
from launchcard.predict import sglang_plan, sglang_serving_facts
from launchcard.predict._cost import step_work
from launchcard.predict._facts import ServingFacts
from launchcard.predict._sglang_mla import PREFIX_THRESHOLD, extend_rule, kvb_flops, kvb_twice, mha_form
from launchcard.predict._types import Finding

CONFIGS = Path(__file__).parent / "fixtures" / "predict_heldout_configs"
V32 = CONFIGS / "deepseek-ai--DeepSeek-V3.2_config.json"
R1 = CONFIGS / "deepseek-ai--DeepSeek-R1_config.json"
V3 = ("DeepseekV3ForCausalLM",)


def facts(config: Path, gpu: str, version: str, *args: str, arch: str = "DeepseekV3ForCausalLM") -> ServingFacts:
    argv = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp-size", "8", *args]
    p = sglang_plan(argv, gpu_memory_gib=find(gpu).memory_gib, version=version, architecture=arch)
    return sglang_serving_facts(config, p, gpu=gpu)


def test_the_extend_form_rule_follows_sglangs_backend_pick() -> None:
    # trtllm_mla on capability 10 for the DeepseekV3 family (server_args.py 0.5.6.post2 L1069-1075): every extend
    # is MHA_CHUNKED_KV; fa3 on Hopper and flashinfer on capability 10 otherwise: by the prefix sum; triton elsewhere
    assert extend_rule("10.0", V3, None, nsa=False) == "always"
    assert extend_rule("10.0", ("DeepseekV2ForCausalLM",), None, nsa=False) == "threshold"
    assert extend_rule("9.0", V3, None, nsa=False) == "threshold"
    assert extend_rule("8.0", V3, None, nsa=False) == "fresh"
    assert extend_rule("9.0", V3, None, nsa=True) == "dense"
    # the command's backend wins; one whose handler is not read is no rule; no capability, no rule
    assert extend_rule("10.0", V3, "triton", nsa=False) == "fresh"
    assert extend_rule("9.0", V3, "aiter", nsa=False) == ""
    assert extend_rule("", V3, None, nsa=False) == ""


def test_mha_form_by_the_batchs_prefix_sum() -> None:
    assert mha_form("always", 5000.0)
    assert mha_form("threshold", 0.0) and mha_form("threshold", PREFIX_THRESHOLD)
    assert not mha_form("threshold", PREFIX_THRESHOLD - 1)
    assert mha_form("fresh", 0.0) and not mha_form("fresh", 1.0)
    assert not mha_form("dense", 0.0) and not mha_form("", 0.0)


def test_kv_b_proj_runs_twice_only_from_0_5_5_post2_through_0_5_6_post2() -> None:
    found: list[Finding] = []
    assert kvb_twice((0, 5, 5, 1), "0.5.5.post1", "always", 1.0, found) == 0.0
    assert kvb_twice((0, 5, 7, 0), "0.5.7", "always", 1.0, found) == 0.0
    assert kvb_twice(None, None, "always", 1.0, found) == 0.0  # the newest rules run it once
    assert kvb_twice((0, 5, 6, 2), "0.5.6.post2", "", 1.0, found) == 0.0
    assert not found
    assert kvb_twice((0, 5, 5, 2), "0.5.5.post2", "always", 3.0, found) == 3.0
    assert kvb_twice((0, 5, 6, 1), "0.5.6.post1", "threshold", 3.0, found) == 3.0
    assert [f.code for f in found] == ["sglang-mla-extend"] * 2


def test_kv_b_flops_per_token_of_one_rank() -> None:
    arch = load_arch(R1)  # 128 heads, latent 512, nope 128 + v 128, 61 MLA layers
    assert kvb_flops(arch, 128 / 8, 61) == 2.0 * 512 * 16 * 256 * 61


def test_blackwell_r1_prefill_pays_one_more_gemm_on_0_5_6_and_decode_does_not() -> None:
    old, new = facts(R1, "b200", "0.5.6.post1"), facts(R1, "b200", "0.5.7")
    assert old.mha_rule == "always" and old.mha_kvb == pytest.approx(kvb_flops(load_arch(R1), 16, 61))
    assert new.mha_kvb == 0.0
    pf_old, pf_new = step_work(old, 0, 0.0, 4096, 4096 * 2048.0), step_work(new, 0, 0.0, 4096, 4096 * 2048.0)
    assert pf_old.gemm_flop > pf_new.gemm_flop
    assert pf_old.attn_flop == pf_new.attn_flop
    dec_old, dec_new = step_work(old, 64, 64 * 1000.0, 0, 0.0), step_work(new, 64, 64 * 1000.0, 0, 0.0)
    assert dec_old == dec_new


def test_hopper_r1_adds_it_only_where_fa3_takes_the_mha_form() -> None:
    old, new = facts(R1, "h200", "0.5.6.post2"), facts(R1, "h200", "0.5.7")
    assert old.mha_rule == "threshold"

    def diff(read: float) -> float:
        return step_work(old, 0, 0.0, 2048, 2048 * 3000.0, read).attn_flop - \
            step_work(new, 0, 0.0, 2048, 2048 * 3000.0, read).attn_flop

    assert diff(0.0) > 0.0 and diff(float(PREFIX_THRESHOLD)) == pytest.approx(diff(0.0))
    assert diff(4000.0) == 0.0  # 0 < prefixes < 8192: the absorbed MLA form, kv_b_proj not run
    pairs = 2048 * 3000.0
    assert step_work(old, 0, 0.0, 2048, pairs).gemm_flop == step_work(new, 0, 0.0, 2048, pairs).gemm_flop


def test_v32_pays_it_on_its_dense_short_prefill_only() -> None:
    old = facts(V32, "h200", "0.5.6.post2", arch="DeepseekV32ForCausalLM")
    new = facts(V32, "h200", "0.5.7", arch="DeepseekV32ForCausalLM")
    assert old.mha_rule == "dense" and old.mha_kvb > 0.0 and new.mha_kvb == 0.0

    def diff(tokens: int, read: float) -> float:
        pairs = tokens * (read + tokens / 2.0)
        return step_work(old, 0, 0.0, tokens, pairs, read).attn_flop - \
            step_work(new, 0, 0.0, tokens, pairs, read).attn_flop

    assert diff(1024, 0.0) > 0.0  # one 1024-token prompt: dense MHA_ONE_SHOT
    assert diff(4096, 0.0) == 0.0  # one 4096-token prompt: longer than index_topk, the sparse (absorbed) form


def test_disable_chunked_prefix_cache_leaves_mha_to_extends_without_a_prefix() -> None:
    # trtllm_mla: MHA_CHUNKED_KV when `not attn.disable_chunked_prefix_cache or sum_extend_prefix_lens == 0`
    # (deepseek_v2.py 0.5.6.post2 L402-409); fa3/flashinfer/flashmla: the threshold branch needs the flag off
    # (L348-374): with the flag both take MHA only at a prefix sum of 0
    assert extend_rule("10.0", V3, None, nsa=False, no_chunked_prefix=True) == "fresh"
    assert extend_rule("10.0", V3, "trtllm_mla", nsa=False, no_chunked_prefix=True) == "fresh"
    assert extend_rule("9.0", V3, None, nsa=False, no_chunked_prefix=True) == "fresh"
    assert extend_rule("9.0", V3, "flashmla", nsa=False, no_chunked_prefix=True) == "fresh"
    # rules that do not read the flag keep theirs
    assert extend_rule("9.0", V3, None, nsa=True, no_chunked_prefix=True) == "dense"
    assert extend_rule("9.0", V3, "aiter", nsa=False, no_chunked_prefix=True) == ""
    assert not mha_form("fresh", 5000.0) and mha_form("fresh", 0.0)


def test_the_command_flag_reaches_the_extend_rule() -> None:
    # the flag travels on the plan as the attention backend does, and the 0.5.6 line's second kv_b_proj is then
    # timed only on extends without a prefix
    on = facts(R1, "b200", "0.5.6.post1", "--disable-chunked-prefix-cache")
    assert on.mha_rule == "fresh" and facts(R1, "b200", "0.5.6.post1").mha_rule == "always"
    argv = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--disable-chunked-prefix-cache"]
    assert sglang_plan(argv, gpu_memory_gib=80.0).disable_chunked_prefix_cache
    assert not sglang_plan(argv[:-1], gpu_memory_gib=80.0).disable_chunked_prefix_cache


def test_the_backend_pick_sets_the_prefix_cache_page() -> None:
    """The pick the extend rule reads gives SGLang's page (predict._prefix): trtllm_mla on B200 for R1 forces 64,
    read (no longer an assumed page 1); fa3 on Hopper keeps 1; an NSA model's page is 64."""
    b200 = facts(R1, "b200", "0.5.6.post1")
    assert (b200.prefix_block, b200.prefix_read) == (64, True)
    assert (facts(R1, "b200", "0.5.6.post1", "--page-size", "32").prefix_block) == 32
    h200 = facts(R1, "h200", "0.5.6.post2")
    assert (h200.prefix_block, h200.prefix_read) == (1, True)
    assert (facts(V32, "h200", "0.5.6.post2").prefix_block) == 64
