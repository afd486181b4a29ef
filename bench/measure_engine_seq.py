"""The engine's CPU time per running request per step, measured inside vLLM's own server processes.

vLLM V1 spends host time on every running request in every step, outside the model's kernels: the engine core's
``Scheduler.schedule()`` and ``update_from_output()`` (stop checks, the EngineCoreOutputs), the msgpack encoding of
those outputs for the API server (the engine core's output thread), and the model runner's own per-request work in
``execute_model()`` / ``sample_tokens()`` (state updates, input preparation, bookkeeping of the sampled tokens).
Without async scheduling all of it runs between two forwards, in series with the GPU.

Method.  The real vLLM CPU server (``bench/predict_cpu.py``'s launch, ``--no-async-scheduling`` so every step is
serial, ``--max-num-seqs`` the largest batch) serves a random-weight Llama of width 64 and one layer
(``bench/compare_vllm_bench.py``'s builder), so that the forward is small.  A ``sitecustomize`` module on the
server's ``PYTHONPATH`` (only when ``LAUNCHCARD_SEQ_OUT`` is set) wraps those vLLM functions as they are imported
and adds each call's CPU time (``time.thread_time()``: the calling thread only, so neither the worker's compute
threads nor a polling wait elsewhere count) to a per-process total; the model runner's ``_model_forward``,
``LogitsProcessor.forward`` (the lm_head) and ``_sample`` (the sampler) are timed on their own and subtracted from
``execute_model`` + ``sample_tokens``: what stays is the runner's host work.  The shared-memory queue between the
engine core and its worker (``MessageQueue.enqueue``, and ``pickle.loads`` in its dequeue) is timed apart: vLLM uses
it for multi-process executors (tensor/pipeline parallel on GPUs; every CPU server); one GPU runs the model runner
in the engine core's process.  Each process appends one line per step (requests and tokens scheduled, the CPU
seconds of each part since its previous line).  ``vllm bench serve`` (greedy, ``--ignore-eos``) sends bursts of
``B`` requests of 16 prompt tokens; the decode-only steps of at least 90% of ``B`` requests (or of the most that
were in at once) give the medians, in microseconds per request per step.  Batches are interleaved over
``--repeats``; this machine's host op time (``bench/measure_cpu.py``'s tiny kernel call, the speed launchcard's host
terms are stated in) is measured before and after.  ``--write`` records each batch's per-request cost without the
part every step pays whatever its batch (:func:`marginal`) as ``gpu:vllm``'s measured ``seq_us`` ("engine_seq"), and
that part (:func:`intercept`) as its ``step_us`` ("engine_seq" "step").

    .venv/bin/python bench/measure_engine_seq.py [--batches 64,256,1000] [--osl 128] [--repeats 2] [--json] [--write]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from measure_host_stream import COEFFICIENTS, Client, _cpu_model, _vllm_version, host_op_us, write_section  # noqa: E402
from predict_cpu import MAX_MODEL_LEN, VLLM_PY, stop  # noqa: E402

SHAPE = "64x1"  # width 64 (one head of 64), one layer: the forward is small beside the host work
ISL = 16

# Loaded by the server's interpreters (sitecustomize on PYTHONPATH); does nothing unless LAUNCHCARD_SEQ_OUT is set.
HOOK = '''\
import importlib.abc, importlib.machinery, json, os, pickle, sys, time

_OUT = os.environ.get("LAUNCHCARD_SEQ_OUT")
_acc = {}
_last = {}
_now = {}
_buf = []


def _add(key, dt):
    _acc[key] = _acc.get(key, 0.0) + dt


def _emit(role):
    rec = {"role": role, **_now}
    for k, v in list(_acc.items()):
        rec[k] = v - _last.get(k, 0.0)
        _last[k] = v
    if not _buf or _buf[0] != os.getpid():  # one file per process (a forked child opens its own)
        _buf[:] = [os.getpid(), open(os.path.join(_OUT, f"{os.getpid()}.jsonl"), "a", buffering=1)]
    _buf[1].write(json.dumps(rec) + "\\n")


def _wrap(cls, name, key, before=None, after=None):
    fn = getattr(cls, name)

    def wrapped(*a, **k):
        if before is not None:
            before(a)
        t = time.thread_time()
        try:
            return fn(*a, **k)
        finally:
            _add(key, time.thread_time() - t)
            if after is not None:
                after(a)
    wrapped.__wrapped__ = fn
    setattr(cls, name, wrapped)


def _sizes(so):
    _now["n"] = len(so.num_scheduled_tokens)
    _now["tok"] = int(so.total_num_scheduled_tokens)


def _sched(m):
    s = m.Scheduler
    fn = s.schedule

    def schedule(*a, **k):
        t = time.thread_time()
        so = fn(*a, **k)
        _add("schedule", time.thread_time() - t)
        _sizes(so)
        return so
    s.schedule = schedule
    _wrap(s, "update_from_output", "update", after=lambda a: _emit("core"))


def _runner(m):
    r = m.GPUModelRunner
    _wrap(r, "execute_model", "execute", before=lambda a: _sizes(a[1]))
    _wrap(r, "sample_tokens", "sample_tokens", after=lambda a: _emit("worker"))
    _wrap(r, "_model_forward", "forward")
    _wrap(r, "_sample", "sampler")


def _logits(m):
    _wrap(m.LogitsProcessor, "forward", "logits")


def _serial(m):
    e = m.MsgpackEncoder
    fn = e.encode_into

    def encode_into(self, obj, buf):
        t = time.thread_time()
        try:
            return fn(self, obj, buf)
        finally:
            _add("encode", time.thread_time() - t)
            _add("encoded", float(len(getattr(obj, "outputs", None) or ())))
    e.encode_into = encode_into


class _Pickle:
    def __getattr__(self, name):
        return getattr(pickle, name)

    @staticmethod
    def loads(*a, **k):
        t = time.thread_time()
        try:
            return pickle.loads(*a, **k)
        finally:
            _add("mq_loads", time.thread_time() - t)


def _shm(m):
    _wrap(m.MessageQueue, "enqueue", "mq_enqueue")
    m.pickle = _Pickle()


_TARGETS = {"vllm.v1.core.sched.scheduler": _sched, "vllm.v1.worker.gpu_model_runner": _runner,
            "vllm.model_executor.layers.logits_processor": _logits, "vllm.v1.serial_utils": _serial,
            "vllm.distributed.device_communicators.shm_broadcast": _shm}


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name not in _TARGETS:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module, _run=run, _name=name):
            _run(module)
            _TARGETS[_name](module)
        spec.loader.exec_module = exec_module
        return spec


if _OUT:
    sys.meta_path.insert(0, _Finder())
'''

# the parts of a step, as the hook names them: (what a GPU host spends in series with the forward)
CORE = ("schedule", "update", "encode")
RUNNER_OUT = ("forward", "logits", "sampler")  # kernels on a GPU: subtracted from the runner's calls
IPC = ("mq_enqueue", "mq_loads")


def serve(model_dir: Path, port: int, state: Path, log: Path, hook: Path, out: Path, batch: int) -> str:
    argv = [sys.executable, "-m", "launchcard.cli", "up", "--detach", "--no-record", "--state", str(state),
            "--log", str(log), "--timeout", "900", "--env", "VLLM_CPU_KVCACHE_SPACE=1",
            "--env", f"PYTHONPATH={hook}", "--env", f"LAUNCHCARD_SEQ_OUT={out}", "--",
            str(VLLM_PY), "-m", "vllm.entrypoints.openai.api_server", "--model", str(model_dir),
            "--served-model-name", "m", "--port", str(port), "--max-model-len", str(MAX_MODEL_LEN), "--dtype",
            "float32", "--enforce-eager", "--no-async-scheduling", "--max-num-seqs", str(batch),
            "--max-num-batched-tokens", str(max(2048, batch * ISL))]
    subprocess.run(argv, check=True, stdout=sys.stderr, env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    return f"http://127.0.0.1:{port}"


def lines(out: Path) -> dict[str, int]:
    """Complete lines so far in each process's record file."""
    return {f.name: f.read_text().count("\n") for f in out.glob("*.jsonl")}


def records(out: Path, since: dict[str, int]) -> list[dict[str, Any]]:
    """Each process's records after its first ``since[file]`` lines."""
    rows: list[dict[str, Any]] = []
    for f in sorted(out.glob("*.jsonl")):
        done = f.read_text().split("\n")[:-1]  # complete lines only
        rows += [json.loads(x) for x in done[since.get(f.name, 0):]]
    return rows


def per_request(recs: list[dict[str, Any]], batch: int) -> dict[str, Any]:
    """Medians, in us per request per step, over the decode-only steps (one token per request) of at least 90% of
    ``batch`` requests (the burst's requests reach the engine over a few steps and end over a few), or of the most
    any decode-only step held where a loaded machine's API server let fewer in at once (``requests`` says)."""
    top = max((r.get("n", 0) for r in recs if r["role"] == "core" and r.get("tok") == r.get("n")), default=0)
    least = 0.9 * min(batch, top)

    def full(r: dict[str, Any], role: str) -> bool:
        return bool(r["role"] == role and r.get("n", 0) >= least and r.get("tok") == r.get("n") and r.get("n"))

    core = [r for r in recs if full(r, "core")]
    work = [r for r in recs if full(r, "worker")]

    def med(rows: list[dict[str, Any]], f: Any) -> float:
        return statistics.median(f(r) / r["n"] for r in rows) * 1e6 if rows else float("nan")

    out = {k: med(core, lambda r, k=k: r.get(k, 0.0)) for k in ("schedule", "update")}
    enc = sum(r.get("encode", 0.0) for r in recs if r["role"] == "core")
    n_enc = sum(r.get("encoded", 0.0) for r in recs if r["role"] == "core")
    out["encode"] = enc / n_enc * 1e6 if n_enc else float("nan")  # per output encoded (output thread)
    out["runner"] = med(work, lambda r: r.get("execute", 0.0) + r.get("sample_tokens", 0.0)
                        - sum(r.get(k, 0.0) for k in RUNNER_OUT))
    for k in RUNNER_OUT:
        out[k] = med(work, lambda r, k=k: r.get(k, 0.0))
    out["ipc"] = med(core, lambda r: sum(r.get(k, 0.0) for k in IPC)) + med(work, lambda r: sum(
        r.get(k, 0.0) for k in IPC))
    out["engine"] = out["schedule"] + out["update"] + out["encode"] + out["runner"]
    # per step: the engine's host microseconds (the same parts; encoding at its per-output cost) and the requests
    n = [r["n"] for r in core]
    step = [(c.get("schedule", 0.0) + c.get("update", 0.0)) * 1e6 + out["encode"] * c["n"] + (
        w.get("execute", 0.0) + w.get("sample_tokens", 0.0) - sum(w.get(k, 0.0) for k in RUNNER_OUT)) * 1e6
        for c, w in zip(core, work, strict=False)]
    return {"batch": batch, "steps": min(len(core), len(work)), "us_per_request_step": out,
            "requests": statistics.median(n) if n else float("nan"),
            "step_us": statistics.median(step) if step else float("nan")}


def run(batches: tuple[int, ...], osl: int, repeats: int, port: int) -> dict[str, Any]:
    from compare_vllm_bench import bench_model

    model_dir = bench_model(VLLM_PY, SHAPE)
    cache = ROOT / ".cache"
    hook, out = cache / "seq-hook", cache / "seq-records"
    hook.mkdir(exist_ok=True)
    (hook / "sitecustomize.py").write_text(HOOK, encoding="utf-8")
    out.mkdir(exist_ok=True)
    for f in out.glob("*.jsonl"):
        f.unlink()
    state, log = cache / "seq-up.json", cache / "seq-server.log"
    endpoint = serve(model_dir, port, state, log, hook, out, max(batches))
    client = Client()
    op = [host_op_us()]
    runs: list[dict[str, Any]] = []
    pooled: dict[int, list[dict[str, Any]]] = {}  # every burst's records by its size
    try:
        client.burst(endpoint, model_dir, ISL, 4, 32, 99)  # warm-up (not measured)
        for rep in range(repeats):
            for b in batches:
                time.sleep(1.0)  # the previous burst's last lines flushed
                seen = lines(out)
                t0 = time.monotonic()
                client.burst(endpoint, model_dir, ISL, osl, b, 1000 * rep + b)
                wall = time.monotonic() - t0
                time.sleep(1.0)
                recs = records(out, seen)
                got = per_request(recs, b)
                got.update(repeat=rep, wall_s=round(wall, 2))
                runs.append(got)
                pooled.setdefault(b, []).extend(recs)
                print(json.dumps(got), file=sys.stderr)
    finally:
        client.close()
        stop(state)
    op.append(host_op_us())
    points = []
    for b in batches:  # the medians over every repeat's steps of the size (a repeat may have few or none)
        got = per_request(pooled.get(b, []), b)
        points.append({"batch": b, "steps": got["steps"], "requests": got["requests"],
                       "step_us": round(got["step_us"], 1),
                       "us": {k: round(v, 2) for k, v in got["us_per_request_step"].items()},
                       "engine_runs": [round(r["us_per_request_step"]["engine"], 2) for r in runs
                                       if r["batch"] == b and r["steps"]]})
    return {"machine": {"cpu": _cpu_model(), "cores": os.cpu_count(), "host_op_us": statistics.median(op),
                        "load_1min": os.getloadavg()[0]},
            "vllm": _vllm_version(), "model": SHAPE, "isl": ISL, "osl": osl, "repeats": repeats,
            "points": points, "runs": runs}


def intercept(points: list[dict[str, Any]]) -> float | None:
    """The part of the engine's host time per step T(n) that every step pays whatever its batch: the intercept of
    the line through the two smallest batches' medians (at least 0); None with fewer than two batches."""
    pts = sorted(points, key=lambda p: int(p["batch"]))
    if len(pts) < 2:
        return None
    (n0, t0), (n1, t1) = ((float(p["requests"]), float(p["step_us"])) for p in pts[:2])
    slope = (t1 - t0) / (n1 - n0)
    return max(0.0, t0 - slope * n0)


def marginal(points: list[dict[str, Any]]) -> list[float]:
    """Each point's per-request cost without the per-step part (:func:`intercept`, recorded apart as the set's
    per-step host term), the rest over the requests, (T(n) - intercept) / n."""
    icpt = intercept(points)
    if icpt is None:
        return [float(p["us"]["engine"]) for p in points]
    return [(float(p["step_us"]) - icpt) / float(p["requests"]) for p in points]


def write(res: dict[str, Any], path: Path = COEFFICIENTS) -> dict[str, Any]:
    """Record the points as the table's "engine_seq" section (every other key kept; write-then-rename)."""
    m = res["machine"]
    pts = []
    per_seq = marginal(res["points"])
    for p, seq in zip(res["points"], per_seq, strict=True):
        us = p["us"]
        pts.append({
            "batch": p["batch"], "seq_us": {"vllm": round(seq, 2)}, "step_us": p["step_us"],
            "parts_us": {k: us[k] for k in ("schedule", "update", "encode", "runner", "ipc", "sampler")},
            "host_op_us": round(m["host_op_us"], 3),
            "measured_on": (
                f"bench/measure_engine_seq.py --batches {','.join(str(q['batch']) for q in res['points'])} --osl "
                f"{res['osl']} --repeats {res['repeats']}: vLLM {res['vllm']} CPU server (vllm-venv, "
                f"--no-async-scheduling, "
                f"--max-num-seqs {max(q['batch'] for q in res['points'])}) serving a random-weight Llama "
                f"{res['model']}, bursts of {p['batch']} requests x {res['isl']} prompt tokens, {res['osl']} output "
                f"tokens, sent by vllm bench serve (greedy, ignore_eos), {res['repeats']} interleaved repeats "
                f"(engine per repeat with such steps: {', '.join(str(x) for x in p['engine_runs'])} us); medians "
                f"over {p['steps']} decode-only steps of >= 90% of the burst, all repeats; CPU time of the calling "
                f"thread (time.thread_time) in "
                f"Scheduler.schedule + update_from_output, MsgpackEncoder.encode_into (per output), and the model "
                f"runner's execute_model + sample_tokens less _model_forward, LogitsProcessor.forward and _sample: "
                f"{p['step_us']:.0f} us a step at a median {p['requests']:.0f} requests; seq_us = (that - the "
                f"per-step part, the intercept through the two smallest batches) / requests; parts_us: medians per "
                f"request per step; {m['cpu']}, {m['cores']} cores shared with other work (1-min load "
                f"{m['load_1min']:.1f}), host op {m['host_op_us']:.2f} us (bench/measure_cpu.py's tiny kernel call)"),
        })
    section: dict[str, Any] = {
        "about": "vLLM engine host microseconds per running request per step (engine core's scheduler, output "
                 "building and encoding, the model runner's host work; not the forward, lm_head or sampler), per "
                 "batch measured: seq_us without the part every step pays (step_us's intercept through the two "
                 "smallest batches), predict._coef.engine_seq: the gpu:vllm set's seq_us, held in every fit, "
                 "never fitted; each point stated at its host op time; parts_us: medians of the parts per "
                 "request, ipc the multi-process executor's queue (not in seq_us), sampler the CPU sampler (a "
                 "kernel on GPUs; not in seq_us); \"step\": that intercept, the host time every step pays "
                 "whatever its batch, at the points' host op time (the gpu:vllm set's step_us, held in every fit)",
        "points": sorted(pts, key=lambda q: int(q["batch"])),
    }
    icpt = intercept(res["points"])
    if icpt is not None:
        two = sorted(res["points"], key=lambda q: int(q["batch"]))[:2]
        section["step"] = {"step_us": {"vllm": round(icpt, 1)}, "host_op_us": round(m["host_op_us"], 3),
                           "from": f"the line through the medians of batches {two[0]['batch']} and {two[1]['batch']} "
                                   f"({two[0]['step_us']:.0f} us a step at {two[0]['requests']:.0f} requests, "
                                   f"{two[1]['step_us']:.0f} at {two[1]['requests']:.0f}) at 0 requests"}
    write_section(path, "engine_seq", section)
    return section


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batches", default="64,256,1000")
    ap.add_argument("--osl", type=int, default=128)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--port", type=int, default=8094)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--write", action="store_true", help="record the points in data/predict_coefficients.json")
    ap.add_argument("--from", dest="saved", type=Path, default=None, help="a saved --json result instead of a run")
    a = ap.parse_args(argv)
    res = (json.loads(a.saved.read_text()) if a.saved
           else run(tuple(int(x) for x in a.batches.split(",")), a.osl, a.repeats, a.port))
    if a.write:
        write(res)
    if a.json:
        print(json.dumps(res, indent=1))
        return 0
    m = res["machine"]
    print(f"{m['cpu']}, {m['cores']} cores, host op {m['host_op_us']:.2f} us, load {m['load_1min']:.1f}; "
          f"vLLM {res['vllm']}; model {res['model']}, {res['repeats']} repeats")
    for p in res["points"]:
        parts = ", ".join(f"{k} {v:.2f}" for k, v in p["us"].items())
        print(f"  batch {p['batch']:5d}: {parts} us per request per step ({p['steps']} steps)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
