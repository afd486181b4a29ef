"""Every plan a search answer shows carries the whole run's figures, as `predict` gives its command: the best plans,
the Pareto front and the closest misses (the finding says so: 'predicted again on the whole run')."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from helpers import run_cli

QWEN3_8B = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"
WORK = ("--isl", "32000", "--osl", "100", "--concurrency", "64")


def _agrees_with_predict(row: dict[str, Any], work: tuple[str, ...]) -> None:
    """``row`` (a plan --json row) carries the figures `predict` gives its command on the same workload."""
    assert row["command"], row["label"]
    out = run_cli("predict", "--config", str(QWEN3_8B), "--gpu", "h20", "--command",
                  shlex.join(row["command"]), *work, "--json")
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    figures = row["figures"]
    for key in ("tpot_ms_mean", "ttft_ms_mean", "output_tok_per_s_per_gpu"):
        assert abs(figures[key] - got[key]) <= 1e-3 * got[key], (row["label"], key, figures[key], got[key])


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
        _agrees_with_predict(row, WORK)


WORK_4K = ("--isl", "4096", "--osl", "512", "--concurrency", "64")


def test_every_row_top_lists_carries_the_whole_runs_figures() -> None:
    """`--top 30` listed 30 rows but only the best 10 (with the Pareto front and the closest misses) were predicted
    again on the whole run: Qwen3-8B on 8 x H20, 4096/512 at 64 clients, row 21 (TP1 PP4 DP2 kv=fp8) showed TPOT
    13.78 ms, TTFT 1,546.6 ms (the 128-request screening run) where predict of its command gives 15.61 / 611.9 ms
    on the 640 requests. Every row the text lists is now the whole run's (each checked against predict)."""
    res = run_cli("plan", "Qwen3-8B", "--config", str(QWEN3_8B), "--gpu", "h20", "--gpus", "8", "--slo", "tpot=200",
                  *WORK_4K, "--top", "30", "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    ranked = doc["ranked"]
    assert len(ranked) > 30
    assert any("the best 30 meeting the SLO" in f for f in doc["findings"]), doc["findings"]
    for row in ranked[:30]:
        assert row["screening_requests"] is None, row["label"]
    # past the rows listed: --json says per row that its figures are the screening run's
    assert any(row["screening_requests"] == 128 for row in ranked[30:])
    for row in ranked[20:30:3]:
        _agrees_with_predict(row, WORK_4K)


def test_text_marks_a_row_whose_figures_are_the_screening_runs() -> None:
    """A result rendered with more rows than the search predicted again says so on each such row."""
    from launchcard.plansearch import SearchSpace, Slo, derived_option, result_to_text, search
    from launchcard.predict import Workload

    option, _, _ = derived_option("Qwen3-8B", QWEN3_8B, "h20", "vllm", gpus_per_node=8)
    space = SearchSpace(model="Qwen3-8B", gpu="h20", gpus=8, gpus_per_node=8, options=(option,))
    r = search(space, Workload(4096, 512, concurrency=64), Slo.parse("tpot=200"))
    text = result_to_text(r, top=len(r.ranked))
    rows = [line for line in text.splitlines() if line.startswith("  ") and "tok/s/GPU" in line]
    marked = [line for line in rows if "figures of the 128-request screening run" in line]
    assert marked and len(marked) == sum(1 for o in r.ranked if o.screening_requests)
    assert "figures of the" not in result_to_text(r, top=10)
