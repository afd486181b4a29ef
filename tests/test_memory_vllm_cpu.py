"""Planner vs. real vLLM on this CPU: the KV cache size vLLM prints at start-up.

bench/memory_vllm_cpu.py (run with the vLLM venv's python) generates tiny
random-weight models (GQA, MHA, sliding-window hybrid, MoE, MLA, a PaliGemma
with a SigLIP vision tower, and the GQA model with an EAGLE-1 draft head),
starts ``vllm.LLM`` on each with ``VLLM_CPU_KVCACHE_SPACE=1`` and reads the
``KV cache size: N tokens`` line.  On CPU the pool is exactly that space, so
this checks the planner's KV bytes per token, block and group accounting
(the EAGLE row: the draft layer's KV in the target's group).

vLLM 0.32's CPU backend takes EAGLE (``vllm/v1/worker/cpu_model_runner.py``:
"speculative decoding is now supported on CPU with C++ native impls"), so the
draft row is required.  Multimodal towers whose vLLM module or processor needs
torchvision (LLaVA, Qwen2-VL family, Gemma 3, Mistral 3) cannot start in the
CPU venv, which lacks it; PaliGemma can.

The CPU runner prints no "Model loading took" line, so the bench prints the
parameter bytes of each model vLLM builds (after loading, before the CPU
backend repacks linear weights).  The planner's weights (vision tower and
projector, EAGLE head, and every text shape) must match within 1%: it leaves
out only norm weights and the tower's patch bias / final norm, O(hidden)
against O(hidden^2) per layer (0.07-0.19% on these models).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from launchcard.memory import Settings, load_arch, plan_memory
from launchcard.memory._weights import weight_bytes_per_gpu

ROOT = Path(__file__).resolve().parents[1]
VENV_PY = ROOT / ".cache" / "vllm-venv" / "bin" / "python"
# the CPU backend must take these; moe / mla count when it starts them
REQUIRED = ("gqa", "mha", "sliding", "vl", "eagle")
WEIGHT_ROWS_REQUIRED = ("gqa", "mha", "sliding", "vl", "eagle")  # weights compared on every row that started

pytestmark = pytest.mark.live


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> dict:
    if not VENV_PY.exists():
        if os.environ.get("LAUNCHCARD_REQUIRE_LIVE"):
            pytest.fail(f"{VENV_PY} missing: run scripts/setup.d/50-vllm-env.sh")
        pytest.skip("vLLM CPU venv missing (scripts/setup.d/50-vllm-env.sh builds it)")
    out = tmp_path_factory.mktemp("vllm-cpu") / "measured.json"
    proc = subprocess.run([str(VENV_PY), str(ROOT / "bench" / "memory_vllm_cpu.py"), "--out", str(out)],
                          capture_output=True, text=True, timeout=900, cwd=str(ROOT))
    assert out.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(out.read_text())


def _settings(m: dict) -> Settings:
    return Settings(device="cpu", cpu_kvcache_space_gib=m["kv_gib"], max_model_len=m["max_model_len"],
                    dtype=m["dtype"], max_num_seqs=m["max_num_seqs"],
                    max_num_batched_tokens=m["max_num_batched_tokens"], enforce_eager=True,
                    speculative_method=m.get("speculative_method"),
                    num_speculative_tokens=m.get("num_speculative_tokens") or 0)


def _predict(m: dict) -> int:
    return plan_memory(load_arch(m["config"]), _settings(m)).kv_cache_tokens


def _rows(measured: dict) -> dict:
    return {k: v for k, v in measured.items() if not k.startswith("_")}


def test_kv_tokens_within_one_percent(measured: dict) -> None:
    rows = _rows(measured)
    started = {k: v for k, v in rows.items() if v["tokens"]}
    for name in REQUIRED:
        assert name in started, f"vLLM did not start the {name} model:\n{rows.get(name, {}).get('log', '')}"
    assert len(started) >= len(REQUIRED) + 1, {k: v["log"][-800:] for k, v in rows.items() if not v["tokens"]}
    errors = {}
    for name, m in started.items():
        pred = _predict(m)
        errors[name] = (pred, m["tokens"], abs(pred - m["tokens"]) / m["tokens"])
    assert all(e <= 0.01 for _, _, e in errors.values()), errors


def test_weights_within_one_percent(measured: dict) -> None:
    """Target plus drafter bytes (the drafter's own embedding is dropped for the target's:
    ``llm_base_proposer._maybe_share_embeddings``), and the vision tower with its projector."""
    rows = {k: v for k, v in _rows(measured).items() if v["tokens"]}
    errors = {}
    for name in WEIGHT_ROWS_REQUIRED:
        assert rows.get(name, {}).get("weights"), f"no LAUNCHCARD_WEIGHTS line for {name}"
    for name, m in rows.items():
        target, *drafts = m["weights"]
        got = target["total"] + sum(d["total"] - d["embed"] for d in drafts)
        arch, s = load_arch(m["config"]), _settings(m)
        pred, _ = weight_bytes_per_gpu(arch, s)
        errors[name] = (pred, got, abs(pred - got) / got)
        if target["vision"]:
            vis = arch.vision_params * (4 if m["dtype"] == "float32" else 2)
            errors[f"{name}/vision"] = (vis, target["vision"], abs(vis - target["vision"]) / target["vision"])
    assert "vl/vision" in errors and len(rows["eagle"]["weights"]) == 2, errors
    assert all(e <= 0.01 for _, _, e in errors.values()), errors
