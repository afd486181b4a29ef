"""SGLang DP attention's collectives around the parts spanning the whole TP group (predict._cost.dp_gather_fn,
_sglang_layout.dp_gather_parts) and the busiest prefilling rank's attention projections (_cost.projection_s, _clock)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from launchcard.hardware import find
from launchcard.predict import coefficients, lockstep_group, sglang_plan, sglang_serving_facts
from launchcard.predict._clock import _Clock
from launchcard.predict._cost import dp_gather_fn, projection_s, split_fn
from launchcard.predict._facts import ServingFacts

R1 = Path(__file__).parent / "fixtures" / "predict_heldout_configs" / "deepseek-ai--DeepSeek-R1_config.json"
SERVE = ["python3", "-m", "sglang.launch_server", "--model-path", "deepseek-ai/DeepSeek-R1"]
HIDDEN, VOCAB = 7168, 129280


def facts(*args: str) -> ServingFacts:
    plan = sglang_plan([*SERVE, "--tp-size", "8", *args], gpu_memory_gib=find("h200").memory_gib,
                       version="0.5.6.post2", architecture="DeepseekV3ForCausalLM")
    return sglang_serving_facts(R1, plan, gpu="h200")


def test_the_gathered_parts_follow_the_command() -> None:
    dp8 = facts("--dp-size", "8", "--enable-dp-attention")
    assert (dp8.dp_gather_layers, dp8.dp_gather_moe, dp8.dp_gather_vocab) == (61, True, VOCAB)
    # an all-to-all backend dispatches the MoE layers' tokens (ScatterMode.SCATTERED): only the 3 dense layers gather
    a2a = facts("--dp-size", "8", "--enable-dp-attention", "--moe-a2a-backend", "deepep")
    assert (a2a.dp_gather_layers, a2a.dp_gather_moe) == (3, False)
    whole = facts("--dp-size", "8", "--enable-dp-attention", "--moe-dense-tp-size", "1")  # dense MLPs whole
    assert (whole.dp_gather_layers, whole.dp_gather_moe) == (58, True)
    assert facts("--dp-size", "8", "--enable-dp-attention", "--enable-dp-lm-head").dp_gather_vocab == 0
    plain = facts()
    assert (plain.dp_gather_layers, plain.dp_gather_vocab) == (0, 0) and dp_gather_fn(plain) is None


def test_bytes_a_step_moves_by_its_padding_mode() -> None:
    f = facts("--dp-size", "8", "--enable-dp-attention")
    gather = dp_gather_fn(f)
    assert gather is not None
    link, row = f.hardware.link_bps, HIDDEN * 2  # bf16 activations
    assert link
    # decode (MAX_LEN): every rank padded to the busiest's 9 rows (65 over 8 ranks); all-gather in and
    # reduce-scatter out of the 8 x 9-row buffer, 7/8 of it over the link each, in every one of the 61 layers;
    # the LM head all-reduces the 65 sampled rows and all-gathers their logits
    sec, calls = gather(65, 0)
    layers = 61 * 2 * 7 / 8 * 8 * 9 * row / link
    head = 2 * 7 / 8 * 65 * row / link + 7 / 8 * 65 * VOCAB * 2 / link
    assert sec == pytest.approx(layers + head) and calls == 61 * 2 + 2
    # a step with a prefill anywhere (SUM_LEN): the summed buffer all-reduced in and out of every layer
    sec, calls = gather(64, 4096)
    layers = 61 * 2 * (2 * 7 / 8 * (64 + 4096) * row / link)
    head = 2 * 7 / 8 * 65 * row / link + 7 / 8 * 65 * VOCAB * 2 / link
    assert sec == pytest.approx(layers + head) and calls == 61 * 2 + 2
    # attention TP over 2 GPUs (TP8 DP4): the rank's rows reduce-scattered and all-gathered inside it too
    f4 = facts("--dp-size", "4", "--enable-dp-attention")
    g4 = dp_gather_fn(f4)
    assert g4 is not None and f4.tp == 2
    sec4, calls4 = g4(64, 0)
    layers = 61 * 2 * (7 / 8 * 4 * 16 * row + 1 / 2 * 16 * row) / link
    head = 2 * 7 / 8 * 64 * row / link + 7 / 8 * 64 * VOCAB * 2 / link
    assert sec4 == pytest.approx(layers + head) and calls4 == 61 * 4 + 2


def test_the_gather_replaces_the_all_to_all_and_the_attention_all_reduce() -> None:
    """No double count: the gathered MoE layers exchange no tokens (the EP all-to-all the plan would otherwise
    charge), and a gathered layer's attention reduction rides in the gather (no attention-TP all-reduce)."""
    for dp in ("8", "4"):
        f = facts("--dp-size", dp, "--enable-dp-attention")
        token, _ = split_fn(f)
        w = token(16, 0)
        assert (w.comm, w.collectives) == (0.0, 0)
        before = replace(f, dp_gather_layers=0, dp_gather_moe=False, dp_gather_vocab=0)  # the plan before
        assert split_fn(before)[0](16, 0).comm > 0.0
    # with an all-to-all backend the MoE layers still dispatch and combine; the 58 layers not gathered reduce
    # their attention over the attention TP group (TP8 DP4: 2 GPUs) in two calls each
    a2a = facts("--dp-size", "4", "--enable-dp-attention", "--moe-a2a-backend", "deepep")
    w = split_fn(a2a)[0](16, 0)
    assert w.comm > 0.0 and w.collectives == 2 * 58 + 2 * 58


def test_a_group_step_carries_the_gather() -> None:
    group, _ = lockstep_group(facts("--dp-size", "8", "--enable-dp-attention"))
    c = coefficients("gpu", "sglang")
    clock = _Clock(group, c, 1.0)
    gather = dp_gather_fn(group)
    assert gather is not None
    w = clock.token(64, 0)
    assert (w.comm, w.collectives) == gather(64, 0)


def test_the_busiest_prefilling_rank_projects_its_own_tokens() -> None:
    """The attention projections run per rank on its own tokens: a step whose 2,048 prefill tokens are one
    request's (one rank's) takes the projections of its tokens beyond the even 256 the token part times (the rank's
    chunk budget, chunked_prefill_size // 8, caps them); spread over the 8 ranks, none."""
    group, _ = lockstep_group(facts("--dp-size", "8", "--enable-dp-attention"))
    c = coefficients("gpu", "sglang")
    bare = replace(group, attn_params=0.0)
    per_token = projection_s(group) / c.flops_eff
    assert per_token > 0.0 and projection_s(bare) == 0.0
    pairs = 2048 * 1024.5
    alone, spread = (_Clock(group, c, 1.0)._cost(0, 0.0, 2048, pairs, 0, n) for n in (1, 8))
    alone0, spread0 = (_Clock(bare, c, 1.0)._cost(0, 0.0, 2048, pairs, 0, n) for n in (1, 8))
    rank = group.max_num_batched_tokens // 8
    assert rank < 2048
    assert alone[2] - alone0[2] == pytest.approx(per_token * (rank - 256))
    assert spread[2] == spread0[2]
