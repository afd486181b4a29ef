"""`memory` (and every command planning a vLLM command's memory) refuses batch limits, block sizes and memory sizes
vLLM would refuse, in one line naming the option (exit 2): a 0 was planned as vLLM's default, a negative token budget
as a smaller one, and a device memory of nan or inf was an internal error."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import run_cli

GPT_OSS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "hf" / "openai" / "gpt-oss-120b" \
    / "config.json"


@pytest.mark.parametrize(("args", "flag"), [
    (("--max-num-seqs", "0"), "--max-num-seqs"),
    (("--max-num-batched-tokens", "-4"), "--max-num-batched-tokens"),
    (("--block-size", "0"), "--block-size"),
    (("--gpu-memory-gib", "nan"), "--gpu-memory-gib"),
    (("--gpu-memory-gib", "inf"), "--gpu-memory-gib"),
    (("--device", "cpu", "--cpu-kvcache-space-gib", "-1"), "--cpu-kvcache-space-gib"),
])
def test_memory_refuses_a_value_vllm_refuses_in_one_line(args: tuple[str, ...], flag: str) -> None:
    out = run_cli("memory", "--config", str(GPT_OSS), "--gpu", "h100", *args)
    assert out.returncode == 2, out.stdout[-400:]
    assert out.stderr.startswith(f"launchcard: error: {flag}:") and out.stderr.count("\n") == 1
    assert "internal error" not in out.stderr and not out.stdout


def test_predict_refuses_a_command_whose_batch_limit_vllm_refuses() -> None:
    out = run_cli("predict", "--config", str(GPT_OSS), "--gpu", "h100", "--concurrency", "1",
                  "--command", "vllm serve openai/gpt-oss-120b --tensor-parallel-size 2 --max-num-seqs 0")
    assert out.returncode == 2 and "--max-num-seqs" in out.stderr and not out.stdout
