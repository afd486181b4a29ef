"""predict's KV capacity in its JSON and text: the engine's pool as plan --json gives it, and what was simulated."""

from __future__ import annotations

import json

import pytest

from config_support import LLAMA8B
from helpers import run_cli
from launchcard.hardware import find
from launchcard.memory import Settings, plan_memory
from launchcard.predict import HardwareFigures, Workload, coefficients, facts_from_memory_plan, predict


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_predict_json_and_text_give_the_plans_kv_capacity(tmp_path: object, engine: str) -> None:
    from pathlib import Path

    cfg = Path(str(tmp_path)) / "config.json"
    cfg.write_text(json.dumps(LLAMA8B))
    base = ["predict", "--config", str(cfg), "--gpu", "h100", "--isl", "512", "--osl", "32", "--concurrency", "2",
            "--engine", engine, "--prefix-hit", "0.55"]
    r = run_cli(*base, "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    kv = out["kv_cache_tokens_per_replica"]
    assert isinstance(kv, int) and kv > 0 and out["kv_cache_tokens_simulated"] == kv
    hit = next(x for x in out["findings"] if x["code"] == "prefix-hit")
    # 281 tokens hit: vLLM reuses 17 blocks of 16; SGLang's page 1 (no backend it picks on an H100 forces one)
    assert ("272 simulated" if engine == "vllm" else "281 simulated") in hit["message"]
    assert hit["severity"] == "info"
    if engine == "vllm":  # the memory planner's figure, as `memory --json` gives it: one value, not recomputed
        mem = run_cli("memory", "--config", str(cfg), "--gpu", "h100", "--json")
        assert json.loads(mem.stdout)["kv_cache_tokens"] == kv
    text = run_cli(*base)
    assert text.returncode == 0 and f"{kv:,} tokens per replica" in text.stdout


def test_a_sliding_window_models_simulated_kv_is_named_apart_from_the_engines_pool() -> None:
    from pathlib import Path

    from launchcard.memory import load_arch

    gpt_oss = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "hf" / "openai" / "gpt-oss-120b"
    if not (gpt_oss / "config.json").is_file():
        pytest.skip("the shared corpus's gpt-oss config is not here")
    arch, acc = load_arch(gpt_oss / "config.json"), find("h100")
    s = Settings(max_model_len=16384, tp=2)
    f = facts_from_memory_plan(arch, s, plan_memory(arch, s, gpu=acc), HardwareFigures.from_accelerator(acc))
    assert f.kv_pool_tokens > 0
    p = predict(f, Workload(isl=8000, osl=100, concurrency=2, num_requests=4), coefficients("gpu", "vllm"))
    # the engine's pool, as plan --json gives it, and the window-bounded requests' larger share of it
    assert p.kv_cache_tokens == f.kv_capacity_tokens
    assert p.kv_cache_tokens_simulated > p.kv_cache_tokens
    assert p.to_json()["kv_cache_tokens_simulated"] == p.kv_cache_tokens_simulated
