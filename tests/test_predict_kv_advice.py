"""The advice when one request needs more KV cache than a plan holds names an FP8 KV cache only where the engine
takes one on that GPU: SGLang 0.5.6.post2 accepts --kv-cache-dtype fp8_e4m3/fp8_e5m2 on any CUDA GPU
(server_args.py L2318-2322), but on an A100 (SM80) its default attention for MLA models is Triton
(L1374-1404), whose kernels read the FP8 buffer as FP8 (triton_ops/decode_attention.py L121-125 through
memory_pool.py L733-734), a type Triton refuses below SM89 (sgl-project/sglang#38291, on A100)."""

from __future__ import annotations

from pathlib import Path

from helpers import run_cli

QWEN3_32B = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-32B_config.json"
LONG = ("--isl", "38000", "--osl", "100", "--concurrency", "1", "--tp", "1")


def _line(*args: str) -> str:
    res = run_cli("predict", "--config", str(QWEN3_32B), *args, *LONG)
    assert res.returncode == 1 and not res.stdout, res.stderr
    line = res.stderr.strip()
    assert "needs more KV cache than the plan holds" in line and "\n" not in line, line
    return line


def test_sglang_on_an_a100_is_not_advised_an_fp8_kv_cache() -> None:
    line = _line("--engine", "sglang", "--engine-version", "0.5.6.post2", "--gpu", "a100_80gb")
    assert "FP8" not in line and "fp8" not in line, line
    assert "--tp" in line and "shorter workload" in line, line


def test_sglang_on_an_fp8_gpu_is_advised_its_own_fp8_kv_flag() -> None:
    line = _line("--engine", "sglang", "--engine-version", "0.5.6.post2", "--gpu", "h100")
    assert "--kv-cache-dtype fp8_e4m3" in line, line

