"""A `vllm serve` flag that changes how a step runs, how big the KV pool is or how many GPUs serve, and that the
prediction does not read, is said (``assumed`` finding ``untimed-flag``), never timed as if it were absent in
silence (each gave figures equal to the bit to the command without it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpers import run_cli
from launchcard.predict._engine_rules import untimed_vllm_flags

QWEN = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"


def _findings(*flags: str) -> list[dict[str, Any]]:
    res = run_cli("predict", "--config", str(QWEN), "--gpu", "h100", "--isl", "4096", "--osl", "256", "--concurrency",
                  "16", "--command", " ".join(["vllm serve Qwen/Qwen3-8B -tp 2", *flags]), "--json")
    assert res.returncode == 0, res.stderr
    found: list[dict[str, Any]] = json.loads(res.stdout)["findings"]
    return found


@pytest.mark.parametrize("flags", [["--cpu-offload-gb", "10"], ["--kv-cache-memory-bytes", "10000000000"],
                                   ["--num-gpu-blocks-override", "1000"], ["-pcp", "2"],
                                   ["--long-prefill-token-threshold", "256"], ["--no-enable-chunked-prefill"],
                                   ["--enable-dbo"], ["--kv-offloading-size", "8"]])
def test_a_flag_the_prediction_does_not_read_is_said(flags: list[str]) -> None:
    said = [f for f in _findings(*flags) if f["code"] == "untimed-flag"]
    assert len(said) == 1 and said[0]["severity"] == "assumed", said
    assert flags[0] in said[0]["message"], said[0]["message"]


def test_defaults_written_out_are_not_said() -> None:
    assert not any(f["code"] == "untimed-flag" for f in _findings("--cpu-offload-gb", "0", "-pcp", "1",
                                                                   "--enable-chunked-prefill", "--no-enable-dbo"))
    assert untimed_vllm_flags(["vllm", "serve", "m", "--tensor-parallel-size", "2"]) == []
