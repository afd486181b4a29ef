"""bench/run_checks.py: which calibration runs are left out of the fit, and only for a property of the run."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from run_checks import (  # noqa: E402
    RunMeans,
    clients_disagree,
    in_service,
    plan_admits_all,
    recorded_clients,
    sweep_of,
    unserved_clients,
)

LAYOUT = ("gpt-oss-120b|h100|vllm|8192x1024", 8)


def _run(rid: str, clients: int, ttft: float, tpot: float, *, kv: int = 12_000_000, seqs: int = 1024) -> RunMeans:
    return RunMeans(id=rid, layout=LAYOUT, clients=clients, replicas=1, isl=8192, osl=1024, ttft_ms=ttft,
                    tpot_ms=tpot, max_num_seqs=seqs, kv_capacity_tokens=kv)


def test_littles_law_counts_the_clients_a_run_held_in_service() -> None:
    # every client decoding: TTFT small beside 1023 decode steps
    assert in_service(_run("a", 64, 400.0, 14.4)) > 0.9 * 64
    # the silicon_sample row 2026_04_06_..._8192x1024_c512_tp8_ep1_1136: ~96 of 512 in service
    assert round(in_service(_run("b", 512, 19692.0, 4.45))) == 96


def test_the_plan_admits_all_only_within_max_num_seqs_and_kv() -> None:
    assert plan_admits_all(_run("a", 512, 1.0, 1.0))
    assert not plan_admits_all(_run("a", 512, 1.0, 1.0, seqs=256))
    assert not plan_admits_all(_run("a", 512, 1.0, 1.0, kv=512 * 9216 - 1))


def test_a_queued_run_decoding_as_fast_as_a_small_one_is_left_out_with_its_reason() -> None:
    runs = [_run("c8", 8, 170.0, 4.49), _run("c64", 64, 440.0, 14.4), _run("c512", 512, 19692.0, 4.45)]
    out = unserved_clients(runs)
    assert list(out) == ["c512"]
    assert "96 of its 512 clients" in out["c512"] and "c8 at 8 clients" in out["c512"]


def test_a_queue_the_plan_explains_or_a_full_slow_batch_is_kept() -> None:
    # the plan's KV holds fewer than the clients: a queue the model predicts, kept (even if it decodes fast)
    kv_limited = [_run("c8", 8, 170.0, 4.49, kv=1_700_000), _run("c512", 512, 113500.0, 4.0, kv=1_700_000)]
    assert unserved_clients(kv_limited) == {}
    # queued, but decoding slower than every run at a quarter of its clients: a limit the plan misses, kept
    slow = [_run("c8", 8, 170.0, 4.49), _run("c512", 512, 200_000.0, 30.0)]
    assert in_service(slow[1]) < 256
    assert unserved_clients(slow) == {}
    # another layout's fast run is no sibling
    other = RunMeans(id="x", layout=("other", 8), clients=8, replicas=1, isl=8192, osl=1024, ttft_ms=170.0,
                     tpot_ms=9.0, max_num_seqs=1024, kv_capacity_tokens=12_000_000)
    assert unserved_clients([other, _run("c512", 512, 19692.0, 4.45)]) == {}


def test_a_row_whose_columns_contradict_its_recorded_clients_is_named() -> None:
    src = "source_file=2026-04-06.csv; model=DeepSeek-R1; silicon_concurrency=32; measured=2026-01-14T00:00:00.000Z"
    assert recorded_clients(src) == 32
    assert clients_disagree(src, 32, 64) == ("batch_size 32 x attention_dp_size 64 is not the 32 clients its source "
                                             "records (silicon_concurrency)")
    assert clients_disagree(src, 4, 8) is None
    assert clients_disagree("aic-auto-gap-analysis run", 56, 1) is None  # nothing recorded: nothing to contradict


def test_a_run_sweep_is_its_source_file_date_model_gpu_and_engine() -> None:
    src = "source_file=2026-04-06.csv; model=DeepSeek-R1; silicon_concurrency=538; measured=2025-11-17T00:00:00.000Z"
    same = "source_file=2026-04-06.csv; model=DeepSeek-R1; silicon_concurrency=269; measured=2025-11-17T00:00:00.000Z"
    assert sweep_of(src, "deepseek-ai/DeepSeek-R1", "gb200", "trtllm") == (
        "2026-04-06.csv", "2025-11-17", "deepseek-ai/DeepSeek-R1", "gb200", "trtllm")
    assert sweep_of(src, "m", "gb200", "trtllm") == sweep_of(same, "m", "gb200", "trtllm")
    assert sweep_of(src, "m", "gb200", "trtllm") != sweep_of(src.replace("11-17", "11-16"), "m", "gb200", "trtllm")
