"""Measure this machine's memory bandwidth and fp32 GEMM FLOP/s, the figures ``launchcard predict`` times
the vLLM CPU backend against (``--hardware-figures FILE``).

Runs in the vLLM CPU venv (``.cache/vllm-venv``) so it measures the same torch build and thread count
the server uses: weight-streaming bandwidth = bytes of fp32 weight matrices (the bench model's
1024 x 3072 shape, 252 MiB in all, far beyond the caches) multiplied by one row per second, which is
what a decode step does; GEMM FLOP/s = ``torch.mm`` of a 512-token prefill shape.  Medians of repeats.

    python bench/measure_cpu.py [--out .cache/cpu-figures.json]

The machine is shared (other processes load it); the JSON records the medians and the spread.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VLLM_PY = ROOT / ".cache" / "vllm-venv" / "bin" / "python"

_PROBE = r"""
import json, os, statistics, sys, time, torch
threads = int(os.environ.get("THREADS") or torch.get_num_threads())
torch.set_num_threads(threads)
if os.environ.get("CORE"):
    os.sched_setaffinity(0, {int(os.environ["CORE"])})
reps = int(os.environ.get("REPS") or 5)
# decode streams every weight once per step as x @ W with a few rows: time that over 256 MiB of fp32
# matrices of the bench model's shapes (1024 x 3072), far beyond the caches
mats = [torch.randn(1024, 3072) for _ in range(21)]
x = torch.randn(1, 1024)
nbytes = sum(m.numel() * 4 for m in mats)
for m in mats:
    x @ m
bw = []
for _ in range(reps):
    t = time.perf_counter()
    for m in mats:
        x @ m
    bw.append(nbytes / (time.perf_counter() - t))
a, b = torch.randn(512, 1024), torch.randn(1024, 3072)
torch.mm(a, b)
fl = []
for _ in range(reps):
    t = time.perf_counter(); torch.mm(a, b); fl.append(2 * 512 * 1024 * 3072 / (time.perf_counter() - t))
print(json.dumps({"threads": threads, "bw": sorted(bw), "gemm": statistics.median(fl)}))
"""


def measure(python: Path = VLLM_PY, threads: int | None = None, core: int | None = None,
            reps: int = 5) -> dict[str, object]:
    import os

    env = {"REPS": str(reps)}
    if threads:
        env["THREADS"] = str(threads)
    if core is not None:
        env["CORE"] = str(core)

    out = subprocess.run([str(python), "-c", _PROBE], check=True, capture_output=True, text=True,
                         env={**os.environ, **env}, timeout=300)
    raw = json.loads(out.stdout.strip().splitlines()[-1])
    bw = raw["bw"]
    med = bw[len(bw) // 2]
    return {
        "id": "this-machine-cpu",
        "kind": "cpu",
        "bandwidth_gbs": round(med / 1e9, 3),
        "tflops": {"fp32": round(raw["gemm"] / 1e12, 4)},
        "method": (f"bench/measure_cpu.py: one-row x @ W over 252 MiB of fp32 1024x3072 weights (decode's weight "
                   f"streaming; median of {len(bw)}: {med / 1e9:.2f} GB/s, range {bw[0] / 1e9:.2f}-"
                   f"{bw[-1] / 1e9:.2f}); torch.mm 512x1024x3072 fp32 {raw['gemm'] / 1e9:.1f} GFLOP/s; "
                   f"{raw['threads']} torch thread(s)" + (f" on core {core}" if core is not None else "")),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / ".cache" / "cpu-figures.json")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--core", type=int, default=None, help="pin to this CPU (the vLLM CPU worker's)")
    args = ap.parse_args(argv)
    fig = measure(threads=args.threads, core=args.core)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(fig, indent=2) + "\n")
    tmp.replace(args.out)
    print(json.dumps(fig, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
