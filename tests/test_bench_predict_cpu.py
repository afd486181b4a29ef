"""bench/predict_cpu.py without a server: the front end's op times from its processes' CPU and run-queue time."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from predict_cpu import front_figures  # noqa: E402


def test_the_request_path_runs_at_the_share_its_processes_got_weighted_by_their_cpu_time() -> None:
    # the client ran 0.4 s and waited 3.6 s on a run queue (a busy loop in its session): 10% of a core; the API
    # server ran 0.2 s and waited 0.2 s: 50%.  The request's path through both: 0.6 s of CPU over 4.4 s = 0.136
    cpu = {"wall_s": 10.0, "api": [0.2, 0.2, 400], "client": [0.4, 3.6, 300], "worker": [7.0, 0.5, 10]}
    got = front_figures(7.0, cpu)
    assert got["client_share"] == pytest.approx(0.1)
    assert got["client_op_us"] == pytest.approx(70.0)
    assert got["request_share"] == pytest.approx(0.6 / 4.4)
    assert got["request_op_us"] == pytest.approx(7.0 * 4.4 / 0.6)
    # a quiet machine: both near a whole core
    quiet = front_figures(7.0, {"api": [0.2, 0.0, 1], "client": [0.4, 0.01, 1]})
    assert quiet["request_op_us"] == pytest.approx(7.0 * 0.61 / 0.6)
    # floored at 5% (a process that never ran reads as 5%, not as an infinite op time)
    assert front_figures(7.0, {"api": [0.0, 1.0, 1], "client": [0.0, 2.0, 1]})["request_op_us"] == pytest.approx(140)
    # the main threads where recorded (the asyncio loops that carry a request), not a pool of threads that sat on a
    # run queue while barely running
    pooled = {"api": [0.17, 17.7, 700], "api_main": [0.15, 0.15, 450], "client": [0.4, 0.4, 300],
              "client_main": [0.4, 0.4, 300]}
    assert front_figures(7.0, pooled)["request_share"] == pytest.approx(0.5)
    # runs recorded before the client was measured: no figures (the API server's share scales the path, as before)
    assert front_figures(7.0, None) == {} and front_figures(7.0, {"api": [0.2, 0.2, 1]}) == {}


def test_every_run_of_a_session_has_its_host_terms_at_the_sessions_median_op_time(tmp_path: Path) -> None:
    from predict_cpu import figures, host_speed, session_op

    # a co-tenant's bimodal probe (CI with a busy loop: 7.2 then 14.5 us for whole runs) against the session's median
    assert session_op([7.2, 7.3, 14.5, 7.25, 14.3]) == pytest.approx(7.3)
    assert session_op([7.0, 14.0]) == pytest.approx(10.5)
    shares = {"worker": 0.8, "api": 0.5, "engine": 0.4}
    got = host_speed(8.0, shares, None)
    assert got == {"op_us": pytest.approx(10.0), "front_op_us": pytest.approx(16.0)}
    probe = {"bandwidth_gbs": 14.0, "tflops": {"fp32": 0.1}, "method": "probe"}
    before, after = {**probe, "op_us": 14.6}, {**probe, "op_us": 14.4}
    import json

    own = json.loads(figures(tmp_path / "own.json", before, after, shares).read_text())
    assert own["op_us"] == pytest.approx(14.5 / 0.8) and "op_us_session" not in own["machine"]
    pinned = json.loads(figures(tmp_path / "s.json", before, after, shares, op_session=7.3).read_text())
    # the run's own reading is kept (and its spread still judges whether the run was steady); the terms use 7.3
    assert pinned["machine"]["op_us"] == pytest.approx(14.5) and pinned["machine"]["op_us_session"] == 7.3
    assert pinned["op_us"] == pytest.approx(7.3 / 0.8) and pinned["front_op_us"] == pytest.approx(7.3 / 0.5)
    assert pinned["bandwidth_gbs"] == own["bandwidth_gbs"] == pytest.approx(14.0 * 0.8)
