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
