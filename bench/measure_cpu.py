"""Measure this machine's figures for the vLLM CPU backend, the ones ``launchcard predict`` times a CPU
step against (``--hardware-figures FILE``).

Runs in the vLLM CPU venv (``.cache/vllm-venv``) with the kernel the engine itself runs: vLLM 0.32 sends
every unquantized fp32 linear layer of an x86 CPU to oneDNN with a prepacked weight
(``vllm/model_executor/layers/utils.py`` ``dispatch_cpu_unquantized_gemm`` -> ``_custom_ops.create_onednn_mm``
/ ``onednn_mm``), single-threaded on the worker's core when the machine has two cores (the CPU worker binds
``core ids=[0]`` and reserves the other for the API server).  Three figures, medians of repeats:

* weight-streaming bandwidth: one-row ``onednn_mm`` over fp32 weights of ``--weight-mb`` in all (the model's
  own weight bytes when given: what fits in the caches depends on it), i.e. what a decode step does;
* GEMM FLOP/s: ``onednn_mm`` of a 256-row prefill chunk (1024 x 4096 weights);
* host op time: microseconds of one tiny ``onednn_mm`` call from Python, the per-kernel dispatch an eager
  CPU step pays for every op; the ``cpu:vllm`` host terms are scaled by it.

Each is timed in the probe thread's CPU seconds (``time.thread_time``), not wall seconds: what the work
costs when it has the core.  On a core shared with other jobs the wall time stretches by the share the
probe got (``probe_share``, recorded), which moves from second to second; the engine's own share during a
run is measured separately (bench/predict_cpu.py reads its worker's CPU time).

    python bench/measure_cpu.py [--out .cache/cpu-figures.json] [--core 0] [--weight-mb 400]

Falls back to ``torch.nn.functional.linear`` (said in ``method``) when the venv's vLLM has no oneDNN op.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VLLM_PY = ROOT / ".cache" / "vllm-venv" / "bin" / "python"

_PROBE = r"""
import json, os, statistics, time, torch
threads = int(os.environ.get("THREADS") or torch.get_num_threads())
torch.set_num_threads(threads)
if os.environ.get("CORE"):
    os.sched_setaffinity(0, {int(os.environ["CORE"])})
reps = int(os.environ.get("REPS") or 5)
mb = float(os.environ.get("WEIGHT_MB") or 256)
try:
    from vllm import _custom_ops as ops
    assert ops._supports_onednn
    kernel = "oneDNN onednn_mm (vLLM's fp32 linear on x86)"
    def prep(w):
        return ops.create_onednn_mm(w.t(), 32)
    def mm(h, x):
        return ops.onednn_mm(h, x, None)
except Exception:
    kernel = "torch.nn.functional.linear (no vLLM oneDNN op)"
    def prep(w):
        return w
    def mm(h, x):
        return torch.nn.functional.linear(x, h)
walls = []
def med(fn):
    # CPU seconds of this thread (what the work costs when it has the core) and wall seconds (what it took on
    # a core shared with other work); the figures are the former, the share the ratio of the two
    fn()
    xs, ws = [], []
    for _ in range(reps):
        t, c = time.perf_counter(), time.thread_time(); fn(); ws.append(time.perf_counter() - t)
        xs.append(time.thread_time() - c)
    walls.append((statistics.median(xs), statistics.median(ws)))
    return statistics.median(xs)
K, N = 1024, 4096
count = max(1, round(mb * 1e6 / (K * N * 4)))
ws = [torch.full((N, K), 0.01) for _ in range(count)]  # nn.Linear layout [out, in]
hs = [prep(w) for w in ws]
x1 = torch.full((1, K), 0.5)
nbytes = count * K * N * 4
t_bw = med(lambda: [mm(h, x1) for h in hs])
x256 = torch.full((256, K), 0.5)
few = hs[:4]
t_fl = med(lambda: [mm(h, x256) for h in few])
tiny = prep(torch.full((64, 64), 0.01)); xt = torch.full((1, 64), 0.5)
n = 2000
t_op = med(lambda: [mm(tiny, xt) for _ in range(n)])
print(json.dumps({"threads": threads, "kernel": kernel, "bytes": nbytes, "bw": nbytes / t_bw,
                  "gemm": 2 * 256 * K * N * len(few) / t_fl, "op_us": t_op / n * 1e6,
                  "share": sum(c for c, _ in walls) / sum(w for _, w in walls)}))
"""


def measure(python: Path = VLLM_PY, threads: int | None = None, core: int | None = None, reps: int = 5,
            weight_mb: float = 256.0) -> dict[str, object]:
    env = {"REPS": str(reps), "WEIGHT_MB": str(weight_mb)}
    if threads:
        env["THREADS"] = str(threads)
    if core is not None:
        env["CORE"] = str(core)
    out = subprocess.run([str(python), "-c", _PROBE], check=True, capture_output=True, text=True,
                         env={**os.environ, **env}, timeout=300)
    raw = json.loads(out.stdout.strip().splitlines()[-1])
    return {
        "id": "this-machine-cpu",
        "kind": "cpu",
        "bandwidth_gbs": round(raw["bw"] / 1e9, 3),
        "tflops": {"fp32": round(raw["gemm"] / 1e12, 4)},
        "op_us": round(raw["op_us"], 3),
        "probe_share": round(min(1.0, raw["share"]), 3),
        "method": (f"bench/measure_cpu.py, {raw['kernel']}, {raw['threads']} thread(s)"
                   + (f" on core {core}" if core is not None else "")
                   + f", CPU time (the probe had {min(1.0, raw['share']):.0%} of the core), medians of {reps}: "
                   f"one-row GEMMs over {raw['bytes'] / 1e6:.0f} MB of fp32 weights "
                   f"{raw['bw'] / 1e9:.2f} GB/s; 256-row GEMM {raw['gemm'] / 1e9:.1f} GFLOP/s; one tiny kernel call "
                   f"{raw['op_us']:.2f} us"),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / ".cache" / "cpu-figures.json")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--core", type=int, default=None, help="pin to this CPU (the vLLM CPU worker's)")
    ap.add_argument("--weight-mb", type=float, default=256.0, help="weights streamed per pass (the model's)")
    args = ap.parse_args(argv)
    fig = measure(threads=args.threads, core=args.core, weight_mb=args.weight_mb)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(fig, indent=2) + "\n")
    tmp.replace(args.out)
    print(json.dumps(fig, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
