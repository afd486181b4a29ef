"""Planner vs. real vLLM on this CPU: the KV cache size vLLM prints at start-up.

bench/memory_vllm_cpu.py (run with the vLLM venv's python) generates tiny
random-weight models (GQA, MHA, sliding-window hybrid, MoE, MLA), starts
``vllm.LLM`` on each with ``VLLM_CPU_KVCACHE_SPACE=1`` and reads the
``KV cache size: N tokens`` line.  On CPU the pool is exactly that space, so
this checks the planner's KV bytes per token, block and group accounting.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from launchcard.memory import Settings, load_arch, plan_memory

ROOT = Path(__file__).resolve().parents[1]
VENV_PY = ROOT / ".cache" / "vllm-venv" / "bin" / "python"
REQUIRED = ("gqa", "mha", "sliding")  # the CPU backend must take these; moe / mla count when it starts them

pytestmark = pytest.mark.live


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> dict:
    if not VENV_PY.exists():
        if os.environ.get("LAUNCHCARD_REQUIRE_LIVE"):
            pytest.fail(f"{VENV_PY} missing: run scripts/setup.d/50-vllm-env.sh")
        pytest.skip("vLLM CPU venv missing (scripts/setup.d/50-vllm-env.sh builds it)")
    out = tmp_path_factory.mktemp("vllm-cpu") / "measured.json"
    proc = subprocess.run([str(VENV_PY), str(ROOT / "bench" / "memory_vllm_cpu.py"), "--out", str(out)],
                          capture_output=True, text=True, timeout=600, cwd=str(ROOT))
    assert out.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(out.read_text())


def _predict(m: dict) -> int:
    arch = load_arch(m["config"])
    s = Settings(device="cpu", cpu_kvcache_space_gib=m["kv_gib"], max_model_len=m["max_model_len"],
                 dtype=m["dtype"], max_num_seqs=m["max_num_seqs"], max_num_batched_tokens=m["max_num_batched_tokens"],
                 enforce_eager=True)
    return plan_memory(arch, s).kv_cache_tokens


def test_kv_tokens_within_one_percent(measured: dict) -> None:
    rows = {k: v for k, v in measured.items() if not k.startswith("_")}
    started = {k: v for k, v in rows.items() if v["tokens"]}
    for name in REQUIRED:
        assert name in started, f"vLLM did not start the {name} model:\n{rows.get(name, {}).get('log', '')}"
    assert len(started) >= 4, {k: v["log"][-800:] for k, v in rows.items() if not v["tokens"]}
    errors = {}
    for name, m in started.items():
        pred = _predict(m)
        errors[name] = (pred, m["tokens"], abs(pred - m["tokens"]) / m["tokens"])
    assert all(e <= 0.01 for _, _, e in errors.values()), errors
