"""Measure this machine's memory bandwidth and fp32 GEMM FLOP/s, the figures ``launchcard predict`` times
the vLLM CPU backend against (``--hardware-figures FILE``).

Runs in the vLLM CPU venv (``.cache/vllm-venv``) so it measures the same torch build and thread count
the server uses: read bandwidth = bytes of a large fp32 tensor reduced per second (``torch.sum`` over
256 MiB, far beyond the caches), GEMM FLOP/s = ``torch.mm`` of the shapes one decode step of the
bench model runs (a few tokens x 1024 x 3072) and of a prefill (512 tokens).  Medians of repeated runs.

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
import json, os, statistics, time, torch
threads = int(os.environ.get("THREADS") or torch.get_num_threads())
torch.set_num_threads(threads)
x = torch.ones(64 * 1024 * 1024, dtype=torch.float32)  # 256 MiB
bw = []
for _ in range(7):
    t = time.perf_counter(); float(x.sum()); bw.append(x.numel() * 4 / (time.perf_counter() - t))
def gemm(m, k, n, reps):
    a, b = torch.randn(m, k), torch.randn(k, n)
    torch.mm(a, b)
    out = []
    for _ in range(reps):
        t = time.perf_counter(); torch.mm(a, b); out.append(2 * m * k * n / (time.perf_counter() - t))
    return statistics.median(out)
prefill = gemm(512, 1024, 3072, 7)
decode = gemm(8, 1024, 3072, 21)
print(json.dumps({"threads": threads, "bw": sorted(bw), "gemm_prefill": prefill, "gemm_decode": decode}))
"""


def measure(python: Path = VLLM_PY, threads: int | None = None) -> dict[str, object]:
    env = {"THREADS": str(threads)} if threads else {}
    import os

    out = subprocess.run([str(python), "-c", _PROBE], check=True, capture_output=True, text=True,
                         env={**os.environ, **env}, timeout=300)
    raw = json.loads(out.stdout.strip().splitlines()[-1])
    bw = raw["bw"]
    med = bw[len(bw) // 2]
    return {
        "id": "this-machine-cpu",
        "kind": "cpu",
        "bandwidth_gbs": round(med / 1e9, 3),
        "tflops": {"fp32": round(raw["gemm_prefill"] / 1e12, 4)},
        "method": (f"bench/measure_cpu.py: torch.sum over 256 MiB fp32 (median of 7: {med / 1e9:.2f} GB/s, "
                   f"range {bw[0] / 1e9:.2f}-{bw[-1] / 1e9:.2f}); torch.mm 512x1024x3072 fp32 "
                   f"{raw['gemm_prefill'] / 1e9:.1f} GFLOP/s (8-row decode GEMM {raw['gemm_decode'] / 1e9:.1f}); "
                   f"{raw['threads']} torch threads; shared, loaded machine"),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / ".cache" / "cpu-figures.json")
    ap.add_argument("--threads", type=int, default=None)
    args = ap.parse_args(argv)
    fig = measure(threads=args.threads)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(fig, indent=2) + "\n")
    tmp.replace(args.out)
    print(json.dumps(fig, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
