"""``launchcard.limits._sglang``: the TP size SGLang's attention layers split the heads over, by architecture and
release, with the rule cited by release, file and line."""

from __future__ import annotations

import pytest

from launchcard.limits import ATTENTION_TP_RULE, SGLANG_HEADS_RULE, attention_tp, dp_attention_release


@pytest.mark.parametrize(("tp", "dp", "dpa", "arch", "version", "want"), [
    (8, 2, True, "Qwen3ForCausalLM", None, 4),  # its attention reads get_attention_tp_size: TP / DP
    (8, 2, False, "Qwen3ForCausalLM", None, 8),  # plain --dp-size replicas: each its own whole TP group
    (8, 1, True, "Qwen3ForCausalLM", None, 8),  # DP attention is off at one rank
    (8, 3, True, "Qwen3ForCausalLM", None, 8),  # SGLang refuses the split itself: no attention TP of 8 / 3
    (8, 2, True, "LlamaForCausalLM", None, 8),  # LlamaAttention asserts over the whole TP group
    (8, 2, True, "Qwen3_5MoeForConditionalGeneration", "0.5.6.post2", 8),  # not yet split in that release
    (8, 2, True, "Qwen3_5MoeForConditionalGeneration", "0.5.23", 4),
])
def test_attention_tp_is_tp_over_dp_only_where_sglangs_model_code_splits_attention(
        tp: int, dp: int, dpa: bool, arch: str, version: str | None, want: int) -> None:
    assert attention_tp(tp, dp, dpa, arch, version) == want


def test_the_rules_cite_both_releases_read() -> None:
    assert dp_attention_release("0.5.23") == "0.5.12.post1" and dp_attention_release("0.5.6.post2") == "0.5.6.post2"
    assert "0.5.6.post2 python/sglang/srt/layers/dp_attention.py L227-235" in ATTENTION_TP_RULE
    assert "0.5.23 runtime_context.py L73-76" in ATTENTION_TP_RULE
    assert "qwen3.py L69-71" in SGLANG_HEADS_RULE and "llama.py L127-129" in SGLANG_HEADS_RULE
    assert "0.5.23 qwen3.py L164-176" in SGLANG_HEADS_RULE


def test_eagle_without_a_draft_path_drafts_with_the_checkpoints_own_mtp_layers_or_is_refused() -> None:
    """SGLang sets the draft path itself only for its MTP architectures (server_args.py L1767-1786) and a draft
    worker without one loads --model-path (model_config.py L235): a checkpoint without MTP layers has no drafter
    launchcard can time."""
    from launchcard.limits import DRAFT_SELF_RULE, draft_self_refusal, mtp_layer_count

    assert "L1767-1786" in DRAFT_SELF_RULE and "model_config.py L235" in DRAFT_SELF_RULE
    for algo in ("EAGLE", "eagle", "NEXTN"):
        refused = draft_self_refusal(algo, None, 0)
        assert refused is not None and refused[0].startswith(f"{algo} without --speculative-draft-model-path")
        assert "--speculative-draft-model-path" in refused[1] and "--speculative-algorithm" in refused[1]
    assert draft_self_refusal("EAGLE", None, 1) is None  # the checkpoint's MTP layers draft
    assert draft_self_refusal("EAGLE", "acme/eagle-draft", 0) is None  # a draft checkpoint named
    assert draft_self_refusal("EAGLE3", None, 0) is None and draft_self_refusal("NGRAM", None, 0) is None
    assert draft_self_refusal(None, None, 0) is None
    assert mtp_layer_count({"num_nextn_predict_layers": 1}) == 1
    assert mtp_layer_count({"text_config": {"num_hidden_layers": 4, "mtp_num_hidden_layers": 2}}) == 2
    assert mtp_layer_count({"num_hidden_layers": 4, "num_nextn_predict_layers": 0}) == 0
    assert mtp_layer_count({"num_mtp_layers": True}) == 0 and mtp_layer_count([]) == 0


def test_one_mtp_layer_count_for_sglang_and_the_memory_planner_on_odd_configs() -> None:
    """``limits.mtp_layer_count`` is the one count: ``Arch.mtp_layers`` (vLLM, plan's speculative offers) reads it,
    so an odd config gets the same answer on every engine.  Each engine reads one key per architecture, so a 0
    under one key does not cancel another key's positive count; an integral float is the integer; the language
    model's config stands over the top level."""
    from launchcard.limits import mtp_layer_count
    from launchcard.memory import arch_from_config

    base = {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "num_hidden_layers": 4,
            "hidden_size": 256, "num_attention_heads": 4, "num_key_value_heads": 4, "vocab_size": 1000,
            "intermediate_size": 512, "torch_dtype": "bfloat16"}
    cases = [
        ({"num_nextn_predict_layers": 0, "mtp_num_hidden_layers": 2}, 2),
        ({"num_nextn_predict_layers": 1.0}, 1),
        ({"num_nextn_predict_layers": 3}, 3),
        ({"num_nextn_predict_layers": 0}, 0),
        ({"num_mtp_layers": -1}, 0),
        ({"mtp_num_hidden_layers": 1.5}, 0),
    ]
    for extra, want in cases:
        cfg = {**base, **extra}
        assert mtp_layer_count(cfg) == want, extra
        assert arch_from_config(cfg).mtp_layers == want, extra
    nested = {"architectures": ["Qwen3_5ForConditionalGeneration"], "mtp_num_hidden_layers": 2,
              "text_config": {**{k: v for k, v in base.items() if k != "architectures"}, "mtp_num_hidden_layers": 0}}
    assert mtp_layer_count(nested) == 0 == arch_from_config(nested).mtp_layers


@pytest.mark.parametrize(("arch", "runner", "ep", "version", "mxfp4", "cc", "known", "refused"), [
    ("GptOssForCausalLM", "triton_kernel", 8, None, True, "9.0", True, True),  # the newest read: asserted
    ("GptOssForCausalLM", "triton_kernel", 8, "0.5.6.post2", True, None, False, True),  # no GPU needed from 0.5.5
    ("GptOssForCausalLM", "triton_kernel", 1, None, True, "9.0", True, False),
    ("GptOssForCausalLM", None, 8, None, True, "9.0", True, False),  # SGLang's own pick keeps "auto" at EP > 1
    ("Qwen3MoeForCausalLM", "triton_kernel", 8, None, False, "9.0", True, False),  # the assert is gpt-oss's branch
    ("GptOssForCausalLM", "triton_kernel", 8, "0.5.4.post2", True, "10.0", True, False),  # FlashInfer forced first
    ("GptOssForCausalLM", "triton_kernel", 8, "0.5.4.post2", True, "9.0", True, True),
    ("GptOssForCausalLM", "triton_kernel", 8, "0.5.4.post2", True, None, False, False),  # GPU not known: not judged
    ("GptOssForCausalLM", "triton_kernel", 8, "0.5.4.post2", False, None, False, True),  # BF16 checkpoint: asserted
    ("GptOssForCausalLM", "triton_kernel", 8, "0.5.3", True, "12.0", True, True),  # 0.5.3's test is SM100 only
    ("GptOssForCausalLM", "triton_kernel", 8, "0.5.2", True, "9.0", True, False),  # not read
])
def test_sglang_asserts_triton_kernel_at_ep_1_for_gpt_oss(arch: str, runner: str | None, ep: int,
                                                          version: str | None, mxfp4: bool, cc: str | None,
                                                          known: bool, refused: bool) -> None:
    from launchcard.limits import TRITON_KERNEL_EP_RULE, triton_kernel_ep_refusal

    got = triton_kernel_ep_refusal(arch, runner, ep, version, mxfp4=mxfp4, capability=cc, gpu_known=known)
    assert (got is not None) == refused, got
    if got:
        assert got[0].startswith(f"--moe-runner-backend triton_kernel with --ep-size {ep}: SGLang asserts"), got
        assert "--ep-size 1" in got[1]
    assert "0.5.6.post2 L1172-1175" in TRITON_KERNEL_EP_RULE and "model_hook.py L567-571" in TRITON_KERNEL_EP_RULE
