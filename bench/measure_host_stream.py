"""The host's CPU time per streamed token at high concurrency, measured on vLLM's own code.

vLLM V1 runs the API server (HTTP, tokenizing, the OutputProcessor's detokenizing and RequestOutputs, one SSE
chunk per request per step) in a process of its own beside the engine core (scheduler) and the model's worker;
``vllm bench serve`` reads every stream in one asyncio process.  At a burst of hundreds of requests each of these
Python processes handles one token per running request per step, so each has a ceiling in request-tokens per
second of its core.  This script measures that cost where it can be measured without a GPU: it starts the real
vLLM CPU server (the random-weight bench model, ``bench/predict_cpu.py``'s launch) and sends bursts of ``B``
requests with ``vllm bench serve`` (``vllm.benchmarks.serve``, run in one long-lived process of the vLLM venv)
at two output lengths, and reads each process's CPU time (user + system, all threads: ``/proc/PID/stat``)
around every burst.  The difference between the two lengths over ``B x`` the extra tokens is the CPU time per
request-token of each process (what a request costs once, prompt and connection, cancels out).

Each pair of bursts is repeated ``--repeats`` times, interleaved; medians are printed with the spread, and the
machine's host op time (``bench/measure_cpu.py``'s tiny-kernel call, the speed launchcard's host terms are
stated in) is measured before and after on the API server's core.

    .venv/bin/python bench/measure_host_stream.py [--burst 256] [--osl 16,80] [--repeats 3] [--json]

The engine core's CPU time is printed too but is not a per-token figure of its Python alone: on the CPU backend
it also waits for the worker in a polling loop.  ``--scheduler`` times the engine core's own per-request work
instead, in one process without a server: vLLM's ``Scheduler`` with ``B`` requests decoding, each step its
``schedule()``, ``update_from_output()`` with one sampled token per request (a stand-in for the model's output),
the msgpack encoding of the EngineCoreOutputs the engine core sends the API server, and the pickling of the
SchedulerOutput a multi-process executor broadcasts to its workers (CPU time per request per step, medians over
the steps).  The model runner's own per-request work (input preparation, sampler bookkeeping) is not in it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from compare_vllm_bench import _WORKER  # noqa: E402  (one long-lived vllm bench process: argv as JSON per line)
from cpu_time import cpu_during  # noqa: E402
from predict_cpu import FIT_SHAPE, KV_SPACE_GIB, MAX_MODEL_LEN, VLLM_PY, _engine_pids, stop  # noqa: E402


def serve(model_dir: Path, port: int, state: Path, log: Path, extra: list[str]) -> str:
    """``bench/predict_cpu.py``'s launch of the vLLM CPU server, with ``extra`` flags."""
    argv = [sys.executable, "-m", "launchcard.cli", "up", "--detach", "--no-record", "--state", str(state),
            "--log", str(log), "--timeout", "900", "--env", f"VLLM_CPU_KVCACHE_SPACE={KV_SPACE_GIB}", "--",
            str(VLLM_PY), "-m", "vllm.entrypoints.openai.api_server", "--model", str(model_dir),
            "--served-model-name", "m", "--port", str(port), "--max-model-len", str(MAX_MODEL_LEN), "--dtype",
            "float32", "--enforce-eager", *extra]
    subprocess.run(argv, check=True, stdout=sys.stderr, env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    return f"http://127.0.0.1:{port}"


def host_op_us() -> float:
    """This machine's host op time (``bench/measure_cpu.py``: one tiny kernel call from Python, CPU time)."""
    from measure_cpu import measure

    return float(measure(threads=1, reps=3, weight_mb=32.0)["op_us"])  # type: ignore[arg-type]


_SCHEDULER = """\
import json, pickle, statistics, sys, time
import torch
from vllm.config import CacheConfig, ModelConfig, SchedulerConfig, VllmConfig
from vllm.sampling_params import RequestOutputKind, SamplingParams
from vllm.utils.hashing import sha256
from vllm.v1.core.kv_cache_utils import get_request_block_hasher, init_none_hash
from vllm.v1.core.sched.scheduler import Scheduler
from vllm.v1.kv_cache_interface import FullAttentionSpec, KVCacheConfig, KVCacheGroupSpec
from vllm.v1.outputs import ModelRunnerOutput
from vllm.v1.request import Request
from vllm.v1.serial_utils import MsgpackEncoder
from vllm.v1.structured_output import StructuredOutputManager

model, B, steps, isl, bs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), 200, 16
sc = SchedulerConfig(max_num_seqs=B, max_num_batched_tokens=max(8192, B * isl), max_model_len=4096,
                     is_encoder_decoder=False, enable_chunked_prefill=True)
cc = CacheConfig(block_size=bs, cache_dtype="auto", enable_prefix_caching=True)
vc = VllmConfig(scheduler_config=sc, model_config=ModelConfig(model=model, dtype="float32", seed=0), cache_config=cc)
blocks = B * 64 + 10
cc.num_gpu_blocks = blocks
kv = KVCacheConfig(num_blocks=blocks, kv_cache_tensors=[], kv_cache_groups=[KVCacheGroupSpec(
    ["layer"], FullAttentionSpec(block_size=bs, num_kv_heads=1, head_size=1, dtype=torch.float32))])
s = Scheduler(vllm_config=vc, kv_cache_config=kv, structured_output_manager=StructuredOutputManager(vc),
              block_size=bs, log_stats=True)
init_none_hash(sha256)
hasher = get_request_block_hasher(bs, sha256)
sp = SamplingParams(max_tokens=10**6, ignore_eos=True, output_kind=RequestOutputKind.DELTA)
for i in range(B):
    s.add_request(Request(request_id=f"r{i}", prompt_token_ids=[(i * 7 + j) % 1000 + 1 for j in range(isl)],
                          sampling_params=sp, pooling_params=None, block_hasher=hasher))
enc = MsgpackEncoder()

def step():
    t0 = time.process_time()
    so = s.schedule()
    t1 = time.process_time()
    ids = list(so.num_scheduled_tokens)
    mro = ModelRunnerOutput(req_ids=ids, req_id_to_index={r: k for k, r in enumerate(ids)},
                            sampled_token_ids=[[(k * 13 + 5) % 1000 + 1] for k in range(len(ids))])
    t2 = time.process_time()
    outs = s.update_from_output(so, mro)
    t3 = time.process_time()
    for o in outs.values():
        enc.encode(o)
    t4 = time.process_time()
    pickle.dumps(so)
    t5 = time.process_time()
    return len(ids), (t1 - t0, t3 - t2, t4 - t3, t5 - t4)

while len(s.running) < B or any(r.num_computed_tokens < isl for r in s.running):  # the prompts (not timed)
    step()
timed = []
for _ in range(steps):
    n, t = step()
    assert n == B, n
    timed.append(t)
names = ("schedule", "update_from_output", "encode_outputs", "pickle_scheduler_output")
per = {k: statistics.median(r[i] for r in timed) / B * 1e6 for i, k in enumerate(names)}
print(json.dumps({"batch": B, "steps": steps, "us_per_request_step": per,
                  "total": statistics.median(sum(r) for r in timed) / B * 1e6}))
"""


def scheduler(batches: tuple[int, ...], steps: int) -> dict[str, Any]:
    """The engine core's own CPU time per request per step at each batch (see the module docstring)."""
    from compare_vllm_bench import bench_model

    model_dir = bench_model(VLLM_PY, FIT_SHAPE)  # only its config is read (the scheduler needs a model config)
    out = []
    for b in batches:
        r = subprocess.run([str(VLLM_PY), "-c", _SCHEDULER, str(model_dir), str(b), str(steps)], check=True,
                           capture_output=True, text=True, timeout=600)
        out.append(json.loads(r.stdout.strip().splitlines()[-1]))
        print(json.dumps(out[-1]), file=sys.stderr)
    return {"machine": {"cpu": _cpu_model(), "cores": os.cpu_count(), "load_1min": os.getloadavg()[0]},
            "vllm": _vllm_version(), "scheduler": out}


class Client:
    def __init__(self) -> None:
        self.proc = subprocess.Popen([str(VLLM_PY), "-c", _WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True)
        assert self.proc.stdout is not None
        if self.proc.stdout.readline().strip() != "ready":
            raise RuntimeError("vllm bench client did not start")

    def burst(self, endpoint: str, model_dir: Path, isl: int, osl: int, n: int, seed: int, chat: bool = False,
              extra: tuple[str, ...] = ()) -> None:
        """``n`` requests sent at once (``extra``: more ``vllm bench serve`` flags, e.g. a concurrency cap)."""
        api = ["--backend", "openai-chat", "--endpoint", "/v1/chat/completions"] if chat else ["--backend", "vllm"]
        argv = [*api, "--base-url", endpoint, "--model", str(model_dir), "--served-model-name", "m",
                "--tokenizer", str(model_dir), "--dataset-name", "random", "--random-input-len", str(isl),
                "--random-output-len", str(osl), "--random-range-ratio", "0", "--num-prompts", str(n),
                "--request-rate", "inf", "--ignore-eos", "--temperature", "0", "--seed", str(seed),
                "--num-warmups", "0", "--disable-tqdm", *extra]
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(argv) + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline().strip()
        if answer != "ok":
            raise RuntimeError(f"vllm bench serve: {answer}")

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


# --chat: the bench model has no chat template; a plain one (each message's content in turn) lets the server's chat
# path run as it does for any model (template rendering, chat stream chunks)
CHAT_TEMPLATE = "{% for m in messages %}{{ m['content'] }}{% endfor %}"


def run(burst: int, osls: tuple[int, int], isl: int, repeats: int, port: int, chat: bool = False) -> dict[str, Any]:
    from compare_vllm_bench import bench_model

    model_dir = bench_model(VLLM_PY, FIT_SHAPE)
    state, log = ROOT / ".cache" / "host-stream-up.json", ROOT / ".cache" / "host-stream-server.log"
    # vLLM's CPU defaults would cap the batch below the burst: every request runs at once, as a GPU's 1024 seqs do
    extra = ["--max-num-seqs", str(burst), "--max-num-batched-tokens", str(max(2048, burst * isl))]
    if chat:
        template = ROOT / ".cache" / "host-stream-chat-template.jinja"
        template.write_text(CHAT_TEMPLATE, encoding="utf-8")
        extra += ["--chat-template", str(template)]
    endpoint = serve(model_dir, port, state, log, extra=extra)
    client = Client()
    op = [host_op_us()]
    rows: list[dict[str, Any]] = []
    try:
        pids = _engine_pids(int(json.loads(state.read_text())["pid"]))
        pids["client"] = client.proc.pid
        client.burst(endpoint, model_dir, isl, 4, min(burst, 32), 99, chat)  # warm-up (not measured)
        for rep in range(repeats):
            row: dict[str, Any] = {"repeat": rep}
            for osl in osls:
                _, row[f"wall_{osl}"], row[f"cpu_{osl}"] = cpu_during(
                    pids, lambda osl=osl, rep=rep: client.burst(endpoint, model_dir, isl, osl, burst, rep, chat))
            extra = burst * (osls[1] - osls[0])
            row["us_per_request_token"] = {k: (row[f"cpu_{osls[1]}"][k] - row[f"cpu_{osls[0]}"][k]) / extra * 1e6
                                           for k in pids}
            rows.append(row)
            print(json.dumps(row), file=sys.stderr)
    finally:
        client.close()
        stop(state)
    op.append(host_op_us())
    keys = rows[0]["us_per_request_token"].keys()
    med = {k: statistics.median(r["us_per_request_token"][k] for r in rows) for k in keys}
    spread = {k: (min(r["us_per_request_token"][k] for r in rows), max(r["us_per_request_token"][k] for r in rows))
              for k in keys}
    return {"machine": {"cpu": _cpu_model(), "cores": os.cpu_count(), "python": platform.python_version(),
                        "host_op_us": statistics.median(op), "load_1min": os.getloadavg()[0]},
            "vllm": _vllm_version(), "endpoint": "/v1/chat/completions" if chat else "/v1/completions",
            "burst": burst, "isl": isl, "osl": list(osls), "repeats": repeats,
            "us_per_request_token": med, "spread": spread, "runs": rows}


def _cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def _vllm_version() -> str:
    out = subprocess.run([str(VLLM_PY), "-c", "import importlib.metadata as m; print(m.version('vllm-cpu'))"],
                         capture_output=True, text=True, check=False)
    return out.stdout.strip() or "unknown"


COEFFICIENTS = ROOT / "src/launchcard/data/predict_coefficients.json"


def write(res: dict[str, Any], path: Path = COEFFICIENTS) -> dict[str, Any]:
    """Record the API server's and the client's medians as a point (its burst size) of the table's "streaming"
    section, replacing a point of the same size (every other key of the file kept; write-then-rename)."""
    m = res["machine"]
    us = res["us_per_request_token"]
    lo, hi = res["osl"]
    runs = "; ".join(f"api {r['us_per_request_token']['api']:.1f} / client {r['us_per_request_token']['client']:.1f}"
                     for r in res["runs"])
    point = {
        "outputs": res["burst"],
        "api_us": {"vllm": round(us["api"], 1)},
        "client_us": round(us["client"], 1),
        "host_op_us": round(m["host_op_us"], 3),
        "measured_on": (f"bench/measure_host_stream.py --burst {res['burst']}: vLLM {res['vllm']} CPU server "
                        f"(vllm-venv) serving the random-weight Llama 512x4 (bench/predict_cpu.py's launch, "
                        f"--max-num-seqs {res['burst']}), bursts of {res['burst']} requests x {res['isl']} prompt "
                        f"tokens at {lo} and {hi} output tokens sent by vllm bench serve (vllm.benchmarks.serve, "
                        f"--request-rate inf, ignore_eos), {res['repeats']} interleaved repeats; CPU time (user + "
                        f"system, /proc/PID/stat) of the API server's process and of the client's over the extra "
                        f"{hi - lo} tokens x {res['burst']} requests, one token per SSE chunk (the CPU engine's "
                        f"steps are far slower than the API server's share of them); per repeat: {runs} us; medians "
                        f"kept; {m['cpu']}, {m['cores']} cores shared with other work (1-min load "
                        f"{m['load_1min']:.1f}), host op {m['host_op_us']:.2f} us (bench/measure_cpu.py's tiny "
                        f"kernel call)"),
    }
    doc = json.loads(path.read_text(encoding="utf-8"))
    old = doc.get("streaming") if isinstance(doc.get("streaming"), dict) else {}
    points = [p for p in old.get("points", []) if p.get("outputs") != point["outputs"]] + [point]
    write_section(path, "streaming", {
        "about": "API server and benchmark client CPU microseconds per request per step with output, per burst "
                 "size measured (predict._coef.streaming: the smallest burst's, growing linearly to the largest's, "
                 "each stated at the first point's host op time); SGLang's and TensorRT-LLM's front ends not "
                 "measured (no API server stage for them; the client's stage applies to every engine)",
        "points": sorted(points, key=lambda p: int(p["outputs"])),
    })
    return point


def write_section(path: Path, key: str, section: dict[str, Any]) -> None:
    """Replace the coefficient table's top-level ``key`` (every other key kept; write-then-rename)."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc[key] = section
    from launchcard import atomicfile

    atomicfile.write_text(path, json.dumps(doc, indent=2) + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--burst", type=int, default=256)
    ap.add_argument("--osl", default="16,80", help="two output lengths (the slope between them is measured)")
    ap.add_argument("--isl", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--port", type=int, default=8093)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--chat", action="store_true", help="stream from /v1/chat/completions (vllm bench serve --backend "
                    "openai-chat) instead of /v1/completions; not recorded by --write (predict's workloads are the "
                    "completions endpoint's)")
    ap.add_argument("--write", action="store_true", help="record the medians in data/predict_coefficients.json")
    ap.add_argument("--from", dest="saved", type=Path, default=None, help="a saved --json result instead of a run")
    ap.add_argument("--scheduler", default=None, metavar="B,B,...",
                    help="time the engine core's scheduler at these batches instead (no server)")
    ap.add_argument("--steps", type=int, default=40, help="--scheduler: decode steps timed per batch")
    a = ap.parse_args(argv)
    if a.scheduler:
        try:
            batches = tuple(int(x) for x in a.scheduler.split(","))
        except ValueError:
            ap.error(f"--scheduler {a.scheduler}: not a comma-separated list of batch sizes; pass e.g. 1,8,64")
        sched = scheduler(batches, a.steps)
        if a.json:
            print(json.dumps(sched, indent=1))
            return 0
        for row in sched["scheduler"]:
            parts = ", ".join(f"{k} {v:.2f}" for k, v in row["us_per_request_step"].items())
            print(f"batch {row['batch']}: {row['total']:.2f} us CPU per request per step ({parts})")
        return 0
    lo, hi = (int(x) for x in a.osl.split(","))
    res = json.loads(a.saved.read_text()) if a.saved else run(a.burst, (lo, hi), a.isl, a.repeats, a.port, a.chat)
    if a.write and res.get("endpoint", "/v1/completions") != "/v1/completions":
        raise SystemExit("--write records the completions endpoint's measurement only")
    if a.write:
        write(res)
    lo, hi = res["osl"]
    if a.json:
        print(json.dumps(res, indent=1))
        return 0
    m = res["machine"]
    print(f"{m['cpu']}, {m['cores']} cores, host op {m['host_op_us']:.2f} us, load {m['load_1min']:.1f}; "
          f"vLLM {res['vllm']}; bursts of {res['burst']} x {res['isl']}/{lo} vs /{hi}, {res['repeats']} repeats")
    for k, v in res["us_per_request_token"].items():
        s = res["spread"][k]
        print(f"  {k:7s} {v:8.1f} us CPU per request-token (min {s[0]:.1f}, max {s[1]:.1f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
