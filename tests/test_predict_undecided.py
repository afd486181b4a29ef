"""What a vLLM plan cannot decide offline (whether it fits, whether vLLM starts) is one fact, stated by the
prediction and by the plan search from ``predict.undecided_findings``; never for another engine."""

from __future__ import annotations

from pathlib import Path

from launchcard.hardware import find
from launchcard.memory import Settings, load_arch, plan_memory
from launchcard.predict import serving_facts, undecided_findings

QWEN3_8B = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"


def test_an_fp8_kv_cache_on_a_platform_whose_backends_were_not_captured_is_said_by_predict() -> None:
    # before: the plan search said "cannot decide whether vLLM starts" (from the memory plan's warnings, by their
    # text) and predict's findings did not
    s = Settings(kv_cache_dtype="fp8")
    plan = plan_memory(load_arch(QWEN3_8B), s, gpu=find("gaudi3"))
    assert plan.startup_undecided and set(plan.startup_undecided) <= set(plan.warnings)
    said = undecided_findings(plan, "vllm")
    assert [f.code for f in said] == ["startup-undecided"] and said[0].severity == "assumed"
    facts = serving_facts(QWEN3_8B, s, gpu="gaudi3")
    got = [f for f in facts.findings if f.code == "startup-undecided"]
    assert [f.message for f in got] == [f.message for f in said]
    # another engine: vLLM's start-up rules are not its verdict
    assert undecided_findings(plan, "sglang") == () and undecided_findings(plan, "trtllm") == ()
    other = serving_facts(QWEN3_8B, s, gpu="gaudi3", engine="sglang")
    assert not [f for f in other.findings if f.code in ("startup-undecided", "memory-undecided")]


def test_a_plan_vllm_decides_has_no_undecided_findings() -> None:
    plan = plan_memory(load_arch(QWEN3_8B), Settings(), gpu=find("h100"))
    assert plan.startup_undecided == () and undecided_findings(plan, "vllm") == ()


def test_an_architecture_vllms_registry_does_not_hold_is_undecided_not_timed_silently(tmp_path: Path) -> None:
    """`predict --config` of a config whose architecture vLLM's model registry (captured whole) does not hold
    printed figures with no finding: vLLM serves such a class only through its Transformers backend, where
    transformers has it, else refuses to start ('Model architectures [...] are not supported for now').  It is
    now a start-up it cannot decide: memory's warning, predict's assumed finding, an undecided plan in the search."""
    import json

    raw = json.loads(QWEN3_8B.read_text())
    raw.update(architectures=["FooBarForCausalLM"], model_type="foobar")
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(raw))
    plan = plan_memory(load_arch(cfg), Settings(), gpu=find("h100"))
    assert plan.fits and len(plan.startup_undecided) == 1 and "FooBarForCausalLM" in plan.startup_undecided[0]
    assert "Transformers backend" in plan.startup_undecided[0] and "not supported for now" in plan.startup_undecided[0]
    facts = serving_facts(cfg, Settings(), gpu="h100")
    assert [f.code for f in facts.findings if "FooBarForCausalLM" in f.message] == ["startup-undecided"]
    # a registered class (the checkpoint as published) is decided
    assert plan_memory(load_arch(QWEN3_8B), Settings(), gpu=find("h100")).startup_undecided == ()
