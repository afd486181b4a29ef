"""`launchcard predict --engine-version` is the release of the engine timed: an SGLang or TensorRT-LLM release is
never read as a vLLM release (the memory planner's accounting, its findings), and an unreadable one is bad input
named for its engine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpers import run_cli

QWEN = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"
BASE = ["predict", "--config", str(QWEN), "--gpu", "h100", "--isl", "1024", "--osl", "256", "--concurrency", "64",
        "--json"]


def _json(*extra: str) -> dict[str, Any]:
    res = run_cli(*BASE, *extra)
    assert res.returncode == 0, res.stderr
    out: dict[str, Any] = json.loads(res.stdout)
    return out


@pytest.mark.parametrize("release", ["1.0.0", "1.0.0rc3", "1.2.0rc5"])
def test_a_tensorrt_llm_release_is_not_read_as_a_vllm_release(release: str) -> None:
    """`--engine trtllm --engine-version 0.10.2` planned the KV pool with vLLM 0.10's activation accounting (378,182
    tokens against 400,215 without a release; 0.10.2 is now below TensorRT-LLM's floor and refused), and `1.0.0` was
    said as 'vLLM 1.0.0: newer than the newest release the memory planner reads'."""
    plain, given = _json("--engine", "trtllm"), _json("--engine", "trtllm", "--engine-version", release)
    assert given["kv_cache_tokens_per_replica"] == plain["kv_cache_tokens_per_replica"]
    assert not any(f"vLLM {release}" in f["message"] for f in given["findings"]), given["findings"]
    # a release at or past the calibrated 1.0.0rc3 is within the domain: no domain finding names it


@pytest.mark.parametrize("engine,name", [("trtllm", "TensorRT-LLM"), ("sglang", "SGLang")])
def test_an_unreadable_release_is_named_for_its_engine(engine: str, name: str) -> None:
    """`--engine trtllm --engine-version banana` said 'unreadable vLLM version'; SGLang's was predicted (exit 0)."""
    res = run_cli(*BASE, "--engine", engine, "--engine-version", "banana")
    line = res.stderr.strip()
    assert res.returncode == 2 and "\n" not in line and not res.stdout, res.stdout + res.stderr
    assert line.startswith("launchcard: error: --engine-version: ") and f"unreadable {name} version" in line, line
