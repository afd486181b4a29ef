"""Decode context parallelism (`--decode-context-parallel-size`): the memory planner counts its sharded KV pool;
predict times the step as the TP plan without it and says so (an ``assumed`` finding), never silently."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import run_cli

DSV3 = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "deepseek-ai--DeepSeek-V3_config.json"


def _run(*extra: str) -> dict[str, object]:
    res = run_cli("predict", "--config", str(DSV3), "--gpu", "h200", "--isl", "8192", "--osl", "256",
                  "--concurrency", "16", "--command", " ".join(["vllm serve deepseek-ai/DeepSeek-V3 -tp 8", *extra]),
                  "--json")
    assert res.returncode == 0, res.stderr
    out: dict[str, object] = json.loads(res.stdout)
    return out


def test_a_dcp_plan_says_its_attention_split_is_not_timed() -> None:
    """`-tp 8 -dcp 8` on an MLA model: the KV pool is 8x the plain TP plan's (vLLM shards it over the ranks along the
    context), while every step was timed as the plain plan's (the same TTFT and TPOT to the bit) with no word said:
    each rank's share of the decode attention and the DCP collectives are not modelled."""
    plain, dcp = _run(), _run("-dcp", "8")
    assert dcp["kv_cache_tokens_per_replica"] > 4 * plain["kv_cache_tokens_per_replica"]  # type: ignore[operator]
    said = [f for f in dcp["findings"] if f["code"] == "dcp"]  # type: ignore[union-attr,index]
    assert len(said) == 1 and said[0]["severity"] == "assumed", dcp["findings"]
    assert "--decode-context-parallel-size 8" in said[0]["message"] and "not timed" in said[0]["message"]
    assert not any(f["code"] == "dcp" for f in plain["findings"])  # type: ignore[union-attr,index]
