"""New-user trial of issue 20 (items 3 and 5) on models and hardware outside the examples.

Each test failed before its fix: Jamba (Mamba-1 layers, attention every 8th layer, experts every other
layer) was planned as 32 full-attention MoE layers, and a TPU / Gaudi HPU was planned as a CUDA GPU
without a word.
"""

from __future__ import annotations

from launchcard.memory import Settings, arch_from_config, plan_memory

# ai21labs/Jamba-v0.1 config.json (published shape)
JAMBA = {"architectures": ["JambaForCausalLM"], "model_type": "jamba", "hidden_size": 4096,
         "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 32,
         "num_experts": 16, "num_experts_per_tok": 2, "expert_layer_period": 2, "expert_layer_offset": 1,
         "attn_layer_period": 8, "attn_layer_offset": 4, "mamba_d_conv": 4, "mamba_d_state": 16,
         "mamba_expand": 2, "mamba_dt_rank": 256, "vocab_size": 65536, "max_position_embeddings": 262144,
         "torch_dtype": "bfloat16"}
MIXTRAL = {"architectures": ["MixtralForCausalLM"], "model_type": "mixtral", "hidden_size": 4096,
           "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 32,
           "num_local_experts": 8, "num_experts_per_tok": 2, "vocab_size": 32000, "max_position_embeddings": 32768,
           "torch_dtype": "bfloat16"}


def test_jamba_layers_are_read_from_its_periods() -> None:
    a = arch_from_config(JAMBA)
    assert a.layer_kinds.count("linear") == 28 and len(a.layer_kinds) - a.layer_kinds.count("linear") == 4
    assert a.linear_attn is not None and a.linear_attn.kind == "mamba1" and a.linear_attn.num_v_heads == 8192
    plan = plan_memory(a, Settings(max_model_len=8192), gpu="h200")
    # 51.6B parameters in bf16 (the model card's count): about 96 GiB, not the 170 GiB of 32 MoE layers
    assert 94 <= plan.breakdown.weights_gib <= 98, plan.breakdown.weights_gib


def test_a_plugin_platform_is_planned_with_its_assumption_said() -> None:
    for gpu, kind in (("gaudi3", "HPU"), ("tpu_v5e", "TPU")):
        plan = plan_memory(arch_from_config(MIXTRAL), Settings(tp=8, max_model_len=8192), gpu=gpu)
        low = [x for x in plan.assumed if x.confidence == "low"]
        assert low and f"is a{'n' if kind == 'HPU' else ''} {kind}" in low[0].what, plan.assumed
        assert "planned as a CUDA GPU" in low[0].what
    plan = plan_memory(arch_from_config(MIXTRAL), Settings(tp=8, max_model_len=8192), gpu="h100")
    assert not [x for x in plan.assumed if "platform plugin" in x.what]


def test_a_zero_size_is_named_as_such_not_as_missing() -> None:
    import pytest

    from launchcard.errors import InputError

    with pytest.raises(InputError) as exc:
        arch_from_config({**MIXTRAL, "num_attention_heads": 0})
    assert "num_attention_heads = 0 must be positive" in str(exc.value) and exc.value.exit_code == 2


def test_a_feature_the_recipe_marks_unsupported_here_is_a_warning(recipe_repo) -> None:  # type: ignore[no-untyped-def]
    """Muse-Glimmer-30B's spec_decoding says ``hardware: {rtx_5090: unsupported}`` (DFlash OOMs on one RTX
    5090); the builder still renders its args, and resolve now says so instead of dropping the mark."""
    from launchcard.resolve import Choice, resolve

    model = "meta-models/Muse-Glimmer-30B"
    plan = resolve(recipe_repo, Choice(model=model, hardware="rtx_5090", extra_features=("spec_decoding",)))
    (note,) = [a for a in plan.assumed if "marks it unsupported on rtx_5090" in a.message]
    assert note.code == "selection-replaced" and note.evidence.endswith(f"{model}.yaml#L83")
    plan = resolve(recipe_repo, Choice(model=model, hardware="rtx_5090"))
    assert not [a for a in plan.assumed if "marks it unsupported" in a.message]
