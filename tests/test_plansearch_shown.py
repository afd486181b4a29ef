"""Every plan a search answer shows carries the whole run's figures, as `predict` gives its command: the best plans,
the Pareto front and the closest misses (the finding says so: 'predicted again on the whole run')."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from helpers import run_cli

QWEN3_8B = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"
WORK = ("--isl", "32000", "--osl", "100", "--concurrency", "64")


def test_closest_misses_carry_the_whole_runs_figures() -> None:
    """Qwen3-8B on 8 x H20, 64 clients of 32,000-token prompts: the closest misses (TP2 PP4, max-num-seqs 32) were
    shown with the 128-request screening run's figures (TPOT 254.1 ms; predict of the command: 276.8 ms on the
    640 requests of the run, 254.1 ms with --num-requests 128)."""
    res = run_cli("plan", "Qwen3-8B", "--config", str(QWEN3_8B), "--gpu", "h20", "--gpus", "8", "--slo", "tpot=200",
                  *WORK, "--top", "3", "--json")
    assert res.returncode in (0, 1), res.stderr
    closest = json.loads(res.stdout)["closest"]
    assert closest
    for row in closest:
        assert row["command"], row["label"]
        out = run_cli("predict", "--config", str(QWEN3_8B), "--gpu", "h20", "--command", shlex.join(row["command"]),
                      *WORK, "--json")
        assert out.returncode == 0, out.stderr
        got = json.loads(out.stdout)
        for key in ("tpot_ms_mean", "ttft_ms_mean", "output_tok_per_s_per_gpu"):
            assert abs(row["figures"][key] - got[key]) <= 1e-3 * got[key], (row["label"], key, row["figures"][key],
                                                                             got[key])
