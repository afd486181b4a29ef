"""bench/heldout_baseline.py: a held-out row whose printed command launchcard refuses at start-up is planned with
the page's fuller baseline command only where the page's summary table files both blocks under one baseline
column; the committed fixture carries the rule's rows and notes."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from heldout_baseline import complete_baselines, summary_columns  # noqa: E402
from heldout_extract import _plan, _planned  # noqa: E402


def _page_row(cmd: str, line: int, cmd_line: int, tpot: float) -> dict[str, Any]:
    url = "https://github.com/gpustack/gpustack/blob/47277d79/docs/performance-lab/qwen3-32b/a100.md"
    return {"serve_command": cmd, "plan": {"max_model_len": _plan(cmd)[0].get("max_model_len")},
            "unmodelled_flags": [], "measured": {"tpot_ms_mean": tpot},
            "source": {"url": f"{url}#L{line}", "line": line, "command_url": f"{url}#L{cmd_line}"}}


def test_a_refused_printed_baseline_is_planned_with_the_pages_fuller_baseline_command() -> None:
    """qwen3-32b/a100.md (gpustack 47277d79) prints ``vllm serve Qwen/Qwen3-32B`` (L346) above its "Other Benchmark
    Cases" baseline blocks, which vLLM 0.11.0 refuses at its 40,960-token default; its summary table's baseline
    column holds them and the engine-choice block run with ``--max-model-len 32768`` (L85): those rows are
    planned with L85's command, and say so."""
    cell = "Total TPS: {}<br>Mean TPOT(ms): {}"
    lines = ["| Benchmark Case | baseline (vLLM without any optimizations) | Optimized |", "|---|---|---|",
             f"| **ShareGPT** | {cell.format(1730.98, 149.67)} | {cell.format(2054.21, 89.01)} |",
             f"| **Very Long** | {cell.format(1798.45, 67.87)} | {cell.format(1580.36, 47.37)} |"]
    columns = summary_columns(lines)
    assert columns[(1798.45, 67.87)] == ("baseline (vLLM without any optimizations)", 4)
    assert columns[(1580.36, 47.37)] == ("Optimized", 4)

    def refused(row: dict[str, Any]) -> str | None:  # launchcard's check: 40,960 tokens do not fit, 32,768 do
        return None if row["plan"]["max_model_len"] else "40,960 tokens do not fit"

    engine_choice = _page_row("vllm serve Qwen/Qwen3-32B --max-model-len 32768", 90, 85, 149.67)
    bare = _page_row("vllm serve Qwen/Qwen3-32B", 352, 346, 67.87)
    optimized = _page_row("vllm serve Qwen/Qwen3-32B", 460, 454, 47.37)
    complete_baselines([(engine_choice, 1730.98), (bare, 1798.45), (optimized, 1580.36)], columns, refused, _planned)
    assert bare["serve_command"] == "vllm serve Qwen/Qwen3-32B --max-model-len 32768"
    assert bare["plan"]["max_model_len"] == 32768 and bare["source"]["command_url"].endswith("#L85")
    for cited in ("(#L346)", "40,960 tokens do not fit", "cell #L4", "#L90 (cell #L3)", "(#L85)"):
        assert cited in bare["plan_note"], cited
    # outside a baseline column, or where the fuller command is refused too, the printed command stays
    assert optimized["serve_command"] == "vllm serve Qwen/Qwen3-32B" and "plan_note" not in optimized
    again = _page_row("vllm serve Qwen/Qwen3-32B", 352, 346, 67.87)
    complete_baselines([(engine_choice, 1730.98), (again, 1798.45)], columns, lambda r: "refused", _planned)
    assert again["serve_command"] == "vllm serve Qwen/Qwen3-32B" and "plan_note" not in again
    rows = json.loads((ROOT / "tests" / "fixtures" / "predict_heldout.json").read_text(encoding="utf-8"))["rows"]
    noted = sorted(r["id"] for r in rows if "plan_note" in r)
    assert noted == [f"gpustack:qwen3-32b/a100.md#L{n}" for n in (352, 377, 402, 427)]
    assert all(r["plan"]["max_model_len"] == 32768 for r in rows if r["id"] in noted)
    # the H100 page shows no fuller baseline command: its five rows stay as printed
    h100 = [r for r in rows if r["id"].startswith("gpustack:qwen3-32b/h100.md") and r["engine"] == "vllm"
            and r["serve_command"] == "vllm serve Qwen/Qwen3-32B"]
    assert len(h100) == 5 and all(r["plan"]["max_model_len"] is None for r in h100)
