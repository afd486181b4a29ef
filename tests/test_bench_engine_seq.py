"""bench/measure_engine_seq.py's reading of the hook's per-step records (no server: synthetic records)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def seq() -> Any:
    sys.path.insert(0, str(ROOT / "bench"))
    import measure_engine_seq

    return measure_engine_seq


def _steps(n: int, per_req_us: float, fixed_us: float, forward_us: float, count: int = 5) -> list[dict[str, Any]]:
    """Records of ``count`` decode-only steps of ``n`` requests: the engine's host time is ``fixed_us`` a step plus
    ``per_req_us`` a request (split between scheduler and runner); the forward, lm_head and sampler on top."""
    host = (fixed_us + per_req_us * n) * 1e-6
    fwd = forward_us * n * 1e-6
    out = []
    for _ in range(count):
        out.append({"role": "core", "n": n, "tok": n, "schedule": host * 0.4, "update": host * 0.1,
                    "encode": 0.0, "encoded": float(n), "mq_enqueue": 1e-5, "mq_loads": 1e-5})
        out.append({"role": "worker", "n": n, "tok": n, "execute": host * 0.5 + fwd * 3, "sample_tokens": 0.0,
                    "forward": fwd, "logits": fwd, "sampler": fwd, "mq_enqueue": 1e-5, "mq_loads": 1e-5})
    return out


def test_the_forward_lm_head_and_sampler_are_taken_out(seq: Any) -> None:
    got = seq.per_request(_steps(256, 15.0, 0.0, 40.0), 256)
    us = got["us_per_request_step"]
    assert us["engine"] == pytest.approx(15.0) and us["forward"] == pytest.approx(40.0)
    assert got["steps"] == 5 and got["step_us"] == pytest.approx(15.0 * 256) and got["requests"] == 256


def test_only_decode_steps_of_nearly_the_whole_burst_count(seq: Any) -> None:
    recs = _steps(256, 15.0, 0.0, 1.0) + _steps(100, 99.0, 0.0, 1.0)  # a ramp: too few requests
    prefill = [dict(r, tok=r["n"] + 16) for r in _steps(256, 99.0, 0.0, 1.0)]  # a prompt in the step
    got = seq.per_request(recs + prefill, 256)
    assert got["steps"] == 5 and got["us_per_request_step"]["engine"] == pytest.approx(15.0)
    # a loaded API server let at most 50 of 64 in at once: those steps, with the requests they held
    got = seq.per_request(_steps(50, 15.0, 0.0, 1.0) + _steps(20, 99.0, 0.0, 1.0), 64)
    assert got["steps"] == 5 and got["requests"] == 50 and got["us_per_request_step"]["engine"] == pytest.approx(15.0)


def test_the_per_step_part_is_left_out_of_seq_us(seq: Any) -> None:
    """The host time every step pays (the intercept through the two smallest batches) is not per request."""
    pts = [seq.per_request(_steps(n, 15.0 + (5.0 if n == 1000 else 0.0), 800.0, 1.0), n) for n in (64, 256, 1000)]
    pts = [{"batch": p["batch"], "requests": p["requests"], "step_us": p["step_us"],
            "us": p["us_per_request_step"]} for p in pts]
    got = seq.marginal(pts)
    assert got == pytest.approx([15.0, 15.0, 20.0])
    assert pts[0]["us"]["engine"] == pytest.approx(15.0 + 800.0 / 64)  # the plain ratio would count it
    assert seq.intercept(pts) == pytest.approx(800.0) and seq.intercept(pts[:1]) is None


def test_write_records_the_per_step_part_apart(seq: Any, tmp_path: Path) -> None:
    """--write keeps seq_us per request and records the intercept as the "step" of "engine_seq" (gpu:vllm's held
    step_us), at the run's host op time."""
    pts = [seq.per_request(_steps(n, 15.0, 800.0, 1.0), n) for n in (64, 256)]
    res = {"machine": {"cpu": "x", "cores": 2, "host_op_us": 7.0, "load_1min": 1.0}, "vllm": "0.0", "model": "m",
           "isl": 16, "osl": 8, "repeats": 1,
           "points": [{"batch": p["batch"], "steps": p["steps"], "requests": p["requests"], "step_us": p["step_us"],
                       "us": p["us_per_request_step"], "engine_runs": []} for p in pts]}
    path = tmp_path / "coef.json"
    path.write_text(json.dumps({"sets": {}}))
    sec = seq.write(res, path)
    assert [p["seq_us"]["vllm"] for p in sec["points"]] == pytest.approx([15.0, 15.0])
    assert sec["step"]["step_us"]["vllm"] == pytest.approx(800.0) and sec["step"]["host_op_us"] == 7.0
    assert json.loads(path.read_text())["engine_seq"] == sec


def test_the_records_are_read_per_process_after_a_mark(seq: Any, tmp_path: Path) -> None:
    a, b = tmp_path / "1.jsonl", tmp_path / "2.jsonl"
    a.write_text(json.dumps({"role": "core", "n": 1}) + "\n")
    b.write_text("")
    mark = seq.lines(tmp_path)
    a.write_text(a.read_text() + json.dumps({"role": "core", "n": 2}) + "\n" + '{"role": "co')  # a line half written
    b.write_text(json.dumps({"role": "worker", "n": 3}) + "\n")
    assert [r["n"] for r in seq.records(tmp_path, mark)] == [2, 3]


_FAKE = {  # the functions the hook wraps, at vLLM's module paths (a stand-in package: no vLLM needed)
    "vllm/v1/core/sched/scheduler.py": (
        "class Out:\n    def __init__(self, n, tok):\n        self.num_scheduled_tokens = {i: 1 for i in range(n)}\n"
        "        self.total_num_scheduled_tokens = tok\n"
        "class Scheduler:\n    def schedule(self, n, tok):\n        return Out(n, tok)\n"
        "    def update_from_output(self, so, out):\n        return {}\n"),
    "vllm/v1/worker/gpu_model_runner.py": (
        "import time\n"
        "def spin(s):\n    t = time.thread_time()\n    while time.thread_time() - t < s:\n        pass\n"
        "class GPUModelRunner:\n    def execute_model(self, so):\n        spin(0.002)\n        self._model_forward()\n"
        "    def _model_forward(self):\n        spin(0.02)\n"
        "    def sample_tokens(self, g):\n        self._sample()\n    def _sample(self):\n        spin(0.005)\n"),
}


def test_the_hook_times_vllms_functions_in_its_processes(seq: Any, tmp_path: Path) -> None:
    import subprocess

    for rel, text in _FAKE.items():
        f = tmp_path / "pkg" / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
    hook, out = tmp_path / "hook", tmp_path / "out"
    hook.mkdir()
    out.mkdir()
    (hook / "sitecustomize.py").write_text(seq.HOOK)
    run = ("from vllm.v1.core.sched.scheduler import Scheduler\n"
           "from vllm.v1.worker.gpu_model_runner import GPUModelRunner\n"
           "s, r = Scheduler(), GPUModelRunner()\n"
           "for _ in range(3):\n    so = s.schedule(8, 8)\n    r.execute_model(so)\n    r.sample_tokens(None)\n"
           "    s.update_from_output(so, None)\n")
    import os

    env = {**os.environ, "PYTHONPATH": f"{hook}{os.pathsep}{tmp_path / 'pkg'}", "LAUNCHCARD_SEQ_OUT": str(out)}
    subprocess.run([sys.executable, "-c", run], check=True, env=env, timeout=60)
    recs = seq.records(out, {})
    work = [r for r in recs if r["role"] == "worker"]
    assert len(work) == 3 and len([r for r in recs if r["role"] == "core"]) == 3
    assert all(r["n"] == 8 and r["tok"] == 8 for r in recs)
    for r in work:  # the runner's own time is what is left after the forward and the sampler
        assert r["forward"] >= 0.02 and r["sampler"] >= 0.005
        assert 0.002 <= r["execute"] + r["sample_tokens"] - r["forward"] - r["sampler"] < 0.02
    got = seq.per_request(recs, 8)
    assert got["steps"] == 3 and 2000 / 8 <= got["us_per_request_step"]["runner"] < 20000 / 8
