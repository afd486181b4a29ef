"""Hardware needs of merged cards: memory from the planner, the smallest serving deployment, the TP rule."""

import hashlib
import json
import math
from pathlib import Path

import jsonschema
import pytest

from launchcard.card import EngineEnv, Evidence, SourceRef, card_json_schema
from launchcard.merge import build_corpus
from launchcard.merge._hardware import ModelConfig, deployments, plan_figures
from tests.helpers import run_cli

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
FOUR = ["deepseek-ai/DeepSeek-V4-Flash", "moonshotai/Kimi-K2.5", "openai/gpt-oss-120b", "zai-org/GLM-5.3-Flash"]
MEM_FIELDS = ("hardware.min_vram_per_gpu_gib", "hardware.min_total_vram_gib")


@pytest.fixture(scope="module")
def cards():
    if not CORPUS.is_dir():
        pytest.skip(f"corpus not found at {CORPUS}")
    return build_corpus(CORPUS, models=FOUR).cards


def _fact(card, name):
    return next(f for f in card.facts if f.name == name)


def _cli_figures(config: Path, gpu: str, *extra: str) -> tuple[float, int]:
    """Per-GPU minimum computed from `launchcard memory --json`, the same way the card defines it."""
    res = run_cli("memory", "--config", str(config), "--gpu", gpu, *extra, "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    b = out["breakdown"]
    kv_one = out["kv_cache_gib_per_gpu"] * out["max_model_len"] / out["kv_cache_tokens"]
    per_gpu = b["weights_gib"] + b["activation_peak_gib"] + b["non_torch_gib"] + b["cuda_graph_gib"] + kv_one
    return per_gpu, out["gpu_count"]


# no --hardware: the card plans the command `resolve` picks by default (h200; gpt-oss-120b at tp 1)
@pytest.mark.parametrize("model, gpu, tp", [("openai/gpt-oss-120b", "h200", 1), ("moonshotai/Kimi-K2.5", "h200", 8)])
def test_min_vram_matches_the_memory_command(cards, model, gpu, tp):
    card = cards[model]
    config = CORPUS / "hf" / model / "config.json"
    # the card plans the recipe's command (an EAGLE3 drafter included): plan the same arguments
    per_gpu, n = _cli_figures(config, gpu, *_fact(card, "memory_plan").value["reproduce"][6:])
    assert n == tp
    assert card.hardware.min_vram_per_gpu_gib == pytest.approx(math.ceil(per_gpu * 100) / 100, abs=0.011)
    assert card.hardware.min_total_vram_gib == pytest.approx(per_gpu * n, abs=0.02)
    assert not any(g.field in MEM_FIELDS for g in card.gaps)
    # the figure rests on the config document (path + sha256) and the recipe command it planned
    total = _fact(card, "min_total_vram_gib")
    assert total.classification == "derived" and total.unit == "GiB"
    assert total.evidence.kind == "hf-config" and total.evidence.path == f"hf/{model}/config.json"
    assert total.evidence.sha256 == hashlib.sha256(config.read_bytes()).hexdigest()
    assert f"{n}x {gpu}" in total.scope and "one request of" in total.scope
    plan = _fact(card, "memory_plan")
    assert plan.evidence.kind == "vllm-recipes" and plan.evidence.path == f"models/{model}.yaml"
    assert plan.value["command"].startswith(f"vllm serve {model}") and "ONE request" in plan.value["definition"]
    # the stored reproduce line gives the same figures
    per_gpu2, _ = _cli_figures(config, gpu, *plan.value["reproduce"][6:])
    assert per_gpu2 == pytest.approx(per_gpu, abs=1e-6)


def test_deepseek_plans_the_variant_whose_config_is_at_hand(cards):
    card = cards["deepseek-ai/DeepSeek-V4-Flash"]
    plan = _fact(card, "memory_plan").value
    # the default variant loads -0731, which has no config here; the fp8 variant loads the configured repo
    assert plan["checkpoint"] == "deepseek-ai/DeepSeek-V4-Flash" and "variant fp8" in plan["recipe_choice"]
    assert card.hardware.min_total_vram_gib == pytest.approx(card.hardware.min_vram_per_gpu_gib * 8, abs=0.05)
    assert all(e.checkpoint == "deepseek-ai/DeepSeek-V4-Flash-0731"
               for e in card.envs if e.source.kind == "vllm-recipes")


def test_glm_keeps_the_gap_and_min_gpus_is_a_whole_deployment(cards):
    card = cards["zai-org/GLM-5.3-Flash"]
    assert card.hardware.min_total_vram_gib is None and card.hardware.min_vram_per_gpu_gib is None
    gap = next(g for g in card.gaps if g.field == "hardware.min_total_vram_gib")
    assert "no config.json" in gap.why and "zai-org/GLM-5.3-Flash" in gap.why
    # a 2-GPU prefill worker cannot serve alone: its prefill+decode set needs 4
    assert card.hardware.min_gpus == 4
    assert _fact(card, "min_gpus").classification == "derived"
    rule = card.hardware.tp_rule
    assert "narrowest published TP 2" in rule and "widest published TP 8" in rule and "vllm-recipes" in rule


def test_every_card_validates_against_the_schema(cards):
    for card in cards.values():
        jsonschema.validate(card.model_dump(mode="json", by_alias=True), card_json_schema())


def test_command_that_does_not_fit_still_gets_its_minimum():
    # the recipe's 8-GPU EP command fits on H100s now that FP4 experts (expert_dtype) are planned as FP4;
    # the same checkpoint on two H100s does not, and still gets its minimum
    model = "deepseek-ai/DeepSeek-V4-Flash"
    cfg_path = CORPUS / "hf" / model / "config.json"
    cfg = ModelConfig(repo=model, config=json.loads(cfg_path.read_text()),
                      evidence=Evidence(kind="hf-config", path=f"hf/{model}/config.json"))
    env = EngineEnv(engine="vllm", hardware="h100", checkpoint=model,
                    argv=("vllm", "serve", model, "--tensor-parallel-size", "2", "--kv-cache-dtype", "fp8"),
                    source=SourceRef(kind="vllm-recipes", path=f"models/{model}.yaml"))
    plan = plan_figures(env, cfg)
    assert plan["gpu"] == "h100" and plan["fits_on_named_gpu"] is False and plan["problems"]
    assert plan["per_gpu_gib"] > plan["gpu_memory_gib"]
    card = build_corpus(CORPUS, models=[model], hardware="h100").cards[model]
    assert _fact(card, "memory_plan").value["fits_on_named_gpu"] is True


def test_no_room_for_kv_at_all_is_planned_again_for_one_request():
    cfg_path = CORPUS / "hf" / "openai" / "gpt-oss-120b" / "config.json"
    cfg = ModelConfig(repo="openai/gpt-oss-120b", config=json.loads(cfg_path.read_text()),
                      evidence=Evidence(kind="hf-config", path="hf/openai/gpt-oss-120b/config.json"))
    argv = ("vllm", "serve", "openai/gpt-oss-120b", "--tensor-parallel-size", "1")
    env = lambda hw, *a: EngineEnv(engine="vllm", hardware=hw, argv=argv + a, checkpoint="openai/gpt-oss-120b",  # noqa: E731
                                   source=SourceRef(kind="vllm-recipes", path="models/openai/gpt-oss-120b.yaml"))
    # weights alone exceed an L4; its engine defaults (256 seqs, 2048 batched tokens) size the sliding window
    small = plan_figures(env("l4"), cfg)
    # (on one H100 the padded MXFP4 experts, 65.8 GiB, leave too little: vllm#23278 saw -2.14 GiB)
    big = plan_figures(env("h200", "--max-num-seqs", "256", "--max-num-batched-tokens", "2048"), cfg)
    assert small["fits_on_named_gpu"] is False and big["fits_on_named_gpu"] is True
    assert small["kv_one_request_gib"] == pytest.approx(big["kv_one_request_gib"], rel=0.01)
    assert small["per_gpu_gib"] > small["gpu_memory_gib"]


def _env(role, gpus, argv=(), notes="PD on 4x GB300 (single node) / x", kind="sglang-cookbook"):
    return EngineEnv(engine="sglang", role=role, gpus=gpus, argv=tuple(argv), notes=notes, checkpoint="m/x",
                     source=SourceRef(kind=kind, path="p.md"))


def test_disaggregated_sets_count_all_their_gpus():
    pd = [_env("prefill", 2, ["--tp-size", "2"]), _env("decode", 2, ["--tp-size", "2", "--base-gpu-id", "2"]),
          _env("router", None)]
    assert [d.gpus for d in deployments(pd)] == [4]
    # same GPUs on one stated node: the union, not the sum
    shared = [_env("prefill", 2), _env("decode", 2)]
    assert [d.gpus for d in deployments(shared)] == [2]
    # on separate nodes (no single-node statement) each role has its own GPUs
    apart = [_env("prefill", 2, notes="PD / a"), _env("decode", 2, notes="PD / b")]
    assert [d.gpus for d in deployments(apart)] == [4]
    # half a set, encoders and frontends serve nothing on their own
    assert deployments([_env("prefill", 2), _env("encoder", 4), _env("frontend", None)]) == []
