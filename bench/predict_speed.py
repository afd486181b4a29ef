"""How many predictions a second ``launchcard.predict`` makes (the plan search needs >= 1,000 candidates/s).

Facts are built once per plan (memory planner), then ``predict`` runs over a grid of workloads and
batching limits, as a search does.  Reports the median over repeats of wall and CPU (user+sys) time per
prediction, for the default request count (10 x concurrency) and a search pass (2 x concurrency).

    python bench/predict_speed.py
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

from launchcard.memory import Settings  # noqa: E402
from launchcard.predict import Workload, predict, serving_facts, with_limits  # noqa: E402

CONFIG = ROOT.parent / "shared" / "corpus" / "hf" / "openai" / "gpt-oss-120b" / "config.json"


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args(argv)  # no options: --help only
    t0 = time.perf_counter()
    plans = [serving_facts(CONFIG, Settings(tp=tp, max_model_len=16384), gpu="h100") for tp in (1, 2, 4, 8)]
    build = (time.perf_counter() - t0) / len(plans)
    grid = [(with_limits(f, max_num_seqs=s), c, isl) for f in plans for s in (64, 256) for c in (1, 8, 32, 128)
            for isl in (1024, 4096)]
    print(f"serving_facts (memory planner): {build * 1e3:.1f} ms per plan; grid of {len(grid)} predictions")
    for label, mult in (("default (10 x C requests)", 10), ("search pass (2 x C requests)", 2)):
        walls, cpus = [], []
        for _ in range(3):
            w0, c0 = time.perf_counter(), os.times()
            for f, c, isl in grid:
                predict(f, Workload(isl=isl, osl=256, concurrency=c, num_requests=mult * c))
            c1 = os.times()
            walls.append((time.perf_counter() - w0) / len(grid))
            cpus.append((c1.user - c0.user + c1.system - c0.system) / len(grid))
        w, c = statistics.median(walls), statistics.median(cpus)
        print(f"{label}: {w * 1e3:.2f} ms wall, {c * 1e3:.2f} ms CPU per prediction "
              f"({1 / w:.0f} predictions/s wall, {1 / c if c else float('inf'):.0f}/s CPU); "
              f"load {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
