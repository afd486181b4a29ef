"""Speed of the resolver and the CLI start-up (issue: foundation).

Targets: the whole golden batch in under 10 s wall on the 2-core machine;
``launchcard --help`` and one ``launchcard resolve`` under 0.5 s (median of 10).

    .venv/bin/python bench/resolve_speed.py [--runs 10]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
CLI = str(ROOT / ".venv" / "bin" / "launchcard")


def timed(cmd: list[str], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        out.append(time.perf_counter() - start)
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--batch-runs", type=int, default=3)
    args = parser.parse_args()
    recipes = str(SHARED / "corpus" / "vllm-recipes")
    golden = str(SHARED / "testdata" / "vllm-recipes-golden-sample.jsonl")
    rows = []
    rows.append(("launchcard --help", timed([CLI, "--help"], args.runs), 0.5))
    rows.append(("launchcard resolve GLM-5.3-Flash h100",
                 timed([CLI, "resolve", "zai-org/GLM-5.3-Flash", "--recipes", recipes, "--hardware", "h100"],
                       args.runs), 0.5))
    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp) / "out.jsonl")
        rows.append(("batch: 5,830 golden cases",
                     timed([CLI, "resolve", "--recipes", recipes, "--cases", golden, "--out", out],
                           args.batch_runs), 10.0))
    print(f"{'what':45} {'median s':>9} {'min s':>7} {'max s':>7} {'target s':>9}  ok")
    ok_all = True
    for name, times, target in rows:
        med = statistics.median(times)
        ok = med < target
        ok_all &= ok
        print(f"{name:45} {med:9.3f} {min(times):7.3f} {max(times):7.3f} {target:9.1f}  {'yes' if ok else 'NO'}")
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
