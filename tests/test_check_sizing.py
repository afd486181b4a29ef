"""Wasteful plans and what a plan rests on (issue 20, items 5 and 6).

Before: ``resolve Qwen/Qwen3-4B --hardware h100 --strategy multi_node_tp --nodes 4 --memory --config ...`` gave
TP 32 on 32 H100s, 0.27 GiB of weights per GPU, verdict ``ok (0 warnings)``; ``--mode spec_decoding=dflash`` on
MI355X silently became MTP; the memory planner's defaults never reached the verdict.
"""

from __future__ import annotations

import pytest

from launchcard.check import check_plan
from launchcard.resolve import Choice, resolve

QWEN3_4B = {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "num_hidden_layers": 36,
            "hidden_size": 2560, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
            "vocab_size": 151936, "intermediate_size": 9728, "max_position_embeddings": 40960,
            "tie_word_embeddings": True, "torch_dtype": "bfloat16"}  # Qwen/Qwen3-4B config.json


def _codes(verdict, code: str) -> list:
    return [f for f in verdict.findings if f.code == code]


def test_tp32_over_four_nodes_for_a_4b_model_is_a_warning_naming_the_smallest_plan(recipe_repo) -> None:
    plan = resolve(recipe_repo, Choice(model="Qwen/Qwen3-4B", hardware="h100", strategy="multi_node_tp",
                                       node_count=4))
    verdict = check_plan(plan, recipes=recipe_repo, config=QWEN3_4B)
    found = _codes(verdict, "oversized-plan")
    assert len(found) == 1 and found[0].severity == "warning" and verdict.status == "warning"
    msg = found[0].message
    assert "smallest plan that fits is TP 1" in msg and "31 GPU(s) more than needed" in msg
    assert "spans 4 nodes where 1 suffices" in msg and "--tensor-parallel-size 1" in found[0].fix


def test_wide_tp_inside_one_node_is_only_an_info(recipe_repo) -> None:
    plan = resolve(recipe_repo, Choice(model="Qwen/Qwen3-4B", hardware="h100", advanced_args=(
        "--tensor-parallel-size", "8")))
    verdict = check_plan(plan, recipes=recipe_repo, config=QWEN3_4B)
    assert not _codes(verdict, "oversized-plan")
    info = _codes(verdict, "smallest-plan")
    assert info and info[0].severity == "info" and "TP 1" in info[0].message


def test_a_plan_at_its_smallest_size_says_nothing_about_size(recipe_repo) -> None:
    plan = resolve(recipe_repo, Choice(model="Qwen/Qwen3-4B", hardware="h100"))
    verdict = check_plan(plan, recipes=recipe_repo, config=QWEN3_4B)
    assert not _codes(verdict, "oversized-plan") and not _codes(verdict, "smallest-plan")


def test_memory_defaults_reach_the_verdict_as_assumed_findings(recipe_repo) -> None:
    plan = resolve(recipe_repo, Choice(model="Qwen/Qwen3-4B", hardware="h100"))
    found = [f.message for f in _codes(check_plan(plan, recipes=recipe_repo, config=QWEN3_4B), "assumed")]
    for what in ("--max-model-len not given", "--kv-cache-dtype auto", "--gpu-memory-utilization not given",
                 "engine defaults"):
        assert any(m.startswith(what) for m in found), (what, found)


def test_a_replaced_mode_is_a_warning_with_the_recipe_line(recipe_repo) -> None:
    plan = resolve(recipe_repo, Choice(model="zai-org/GLM-5.3-Flash", hardware="mi355x",
                                       feature_modes={"spec_decoding": "dflash"}))
    assert '"method":"mtp"' in " ".join(plan.commands[0].argv)  # what the recipes builder renders
    found = _codes(check_plan(plan, recipes=recipe_repo, memory=False), "selection-replaced")
    assert len(found) == 1 and found[0].severity == "warning"
    assert "spec_decoding=dflash" in found[0].message and "mtp was used instead" in found[0].message
    line = int(found[0].evidence.rsplit("#L", 1)[1])
    text = (recipe_repo.root / "models" / "zai-org" / "GLM-5.3-Flash.yaml").read_text().splitlines()[line - 1]
    assert "unsupported" in text


@pytest.mark.parametrize("hw", ["h100", "b200"])
def test_an_honoured_mode_is_not_reported(recipe_repo, hw: str) -> None:
    plan = resolve(recipe_repo, Choice(model="zai-org/GLM-5.3-Flash", hardware=hw,
                                       feature_modes={"spec_decoding": "dflash"}))
    assert not [a for a in plan.assumed if a.code == "selection-replaced"]


def test_a_requested_feature_the_strategy_gates_off_is_reported(recipe_repo) -> None:
    plan = resolve(recipe_repo, Choice(model="moonshotai/Kimi-K3", hardware="b200", strategy="multi_node_tp_pp",
                                       node_count=2, extra_features=("spec_decoding",)))
    assert "--speculative-config" not in " ".join(a for c in plan.commands for a in c.argv)
    found = [a for a in plan.assumed if a.code == "selection-replaced"]
    assert len(found) == 1 and "feature spec_decoding was left out" in found[0].message
    assert found[0].evidence.startswith("models/moonshotai/Kimi-K3.yaml#L")
    kept = resolve(recipe_repo, Choice(model="moonshotai/Kimi-K3", hardware="b200",
                                       extra_features=("spec_decoding",)))
    assert not [a for a in kept.assumed if a.code == "selection-replaced"]
