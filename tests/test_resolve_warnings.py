"""Where a reference quirk fires, --explain says so."""

from __future__ import annotations

from launchcard.resolve import Choice, resolve


def _warnings(repo, **kw):
    return " | ".join(resolve(repo, Choice(**kw)).warnings)


def test_strategy_override_wipes_hardware_block(recipe_repo):
    text = _warnings(recipe_repo, model="moonshotai/Kimi-K3", hardware="b200", strategy="pd_cluster")
    assert "replaces hardware_overrides.blackwell entirely" in text


def test_pd_layout_strips_env(recipe_repo):
    text = _warnings(recipe_repo, model="zai-org/GLM-5.3-Flash", hardware="h100", strategy="pd_cluster")
    assert "removes" in text and "UCX_NET_DEVICES" in text
    assert "removes" not in _warnings(recipe_repo, model="zai-org/GLM-5.3-Flash", hardware="gb200",
                                      strategy="pd_cluster")


def test_variant_tp_ignored_by_strategy(recipe_repo):
    text = _warnings(recipe_repo, model="Qwen/Qwen3-235B-A22B-Instruct-2507", variant="fp8", hardware="h200",
                     strategy="single_node_tep")
    assert "variants.fp8.tp is ignored" in text
    plan = resolve(recipe_repo, Choice(model="Qwen/Qwen3-235B-A22B-Instruct-2507", variant="fp8", hardware="h200",
                                       strategy="single_node_tp"))
    assert "--tensor-parallel-size" in plan.commands[0].argv
    assert plan.commands[0].argv[plan.commands[0].argv.index("--tensor-parallel-size") + 1] == "4"


def test_variant_extra_args_tp_overridden(recipe_repo):
    text = _warnings(recipe_repo, model="ByteDance-Seed/Seed-OSS-36B-Instruct", hardware="h100")
    assert "extra_args sets --tensor-parallel-size" in text


def test_undefined_hardware_id(recipe_repo):
    text = _warnings(recipe_repo, model="zai-org/GLM-5.3-Flash", hardware="h100")
    assert "'ascend_950pr_8x'" in text and "'mi350x'" in text


def test_defaults_follow_the_builder(recipe_repo):
    plan = resolve(recipe_repo, Choice(model="zai-org/GLM-5.3-Flash"))
    assert plan.hardware == "h200" and plan.strategy == "single_node_tp"
    assert plan.features == ("tool_calling", "reasoning")
    nv = resolve(recipe_repo, Choice(model="zai-org/GLM-5.3-Flash", variant="nvfp4"))
    assert nv.hardware == "b200" and nv.model_id == "RedHatAI/GLM-5.3-Flash-NVFP4"


def test_override_chain_is_recorded(recipe_repo):
    # GLM on B200 PD: the Mooncake-free role args keep the strategy's kv-transfer-config; on H100 the hopper
    # override is additive; an explicit advanced preset overrides the recipe's value and records it.
    plan = resolve(recipe_repo, Choice(model="zai-org/GLM-5.3-Flash", hardware="mi355x",
                                       advanced=("max_num_seqs_256",)))
    unit = next(u for u in plan.commands[0].units if u.flag == "--max-num-seqs")
    assert unit.value == "256" and unit.origin.layer == "advanced"
    assert [o.layer for o in unit.overrides] == ["hardware_override"]
    assert unit.overrides[0].evidence.line == 148  # the replaced value (its "512"), not the flag line
