"""Candidate plans a second of ``launchcard.plansearch.search`` (issue 24 item 5 target: >= 1,000/s).

Each case is searched cold (caches cleared: every memory plan, start-up check, schedule and prediction
computed) and warm (a second search of the same space: a sweep or a web page asking again), REPEATS times;
prints the median wall and CPU (user+sys) candidates/s. The machine is shared: compare CPU figures, and say
how loaded it was.

    python bench/plan_search.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from launchcard.plansearch import SearchSpace, Slo, checkpoint_option, clear_caches, search  # noqa: E402
from launchcard.predict import Workload  # noqa: E402

HF = ROOT.parent / "shared" / "corpus" / "hf"
CASES = [  # (model, config, gpu, gpus, workload, slo)
    ("openai/gpt-oss-120b", HF / "openai/gpt-oss-120b/config.json", "h100", 8,
     Workload(1024, 256, concurrency=64), "ttft=2000,tpot=40"),
    ("openai/gpt-oss-120b", HF / "openai/gpt-oss-120b/config.json", "h200", 16,
     Workload(4096, 512, concurrency=128), "ttft=3000,tpot=30"),
    ("deepseek-ai/DeepSeek-V4-Flash", HF / "deepseek-ai/DeepSeek-V4-Flash/config.json", "b200", 16,
     Workload(2048, 256, rate=8.0), "ttft=2000,tpot=50"),
]


def _one(space: SearchSpace, work: Workload, slo: Slo, cold: bool) -> tuple[int, float, float]:
    if cold:
        clear_caches()
    w0, c0 = time.perf_counter(), time.process_time()  # process_time: user+sys of this process, fine-grained
    r = search(space, work, slo)
    return len(r.outcomes), time.perf_counter() - w0, time.process_time() - c0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    worst = worst_wall = float("inf")
    for model, cfg, gpu, n, work, slo in CASES:
        space = SearchSpace(model=model, gpu=gpu, gpus=n, gpus_per_node=8, options=(checkpoint_option(model, cfg),))
        for cold in (True, False):
            runs = [_one(space, work, Slo.parse(slo), cold) for _ in range(args.repeats)]
            count = runs[0][0]
            wall = statistics.median(r[1] for r in runs)
            cpu = statistics.median(r[2] for r in runs)
            rate = count / cpu if cpu > 0 else float("inf")
            if cold:
                worst = min(worst, rate)
                worst_wall = min(worst_wall, count / wall if wall > 0 else float("inf"))
            print(f"{model} {n} x {gpu} {'cold' if cold else 'warm'}: {count} candidates; median wall {wall:.3f} s "
                  f"({count / wall:,.0f}/s), CPU {cpu:.3f} s ({rate:,.0f}/s)")
    print(f"slowest cold case: {worst:,.0f} candidates per CPU second, {worst_wall:,.0f} per wall second "
          "(target >= 1,000)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
