"""How long ``launchcard drift --engine vllm`` takes over the corpus (target: under 30 s).

Runs the real command (a fresh process each time, so spec loading, card
building and every check are counted) and prints wall time per run, the
median, and the split between building the cards and the drift itself.

    .venv/bin/python bench/drift_speed.py [--corpus ../shared/corpus] [--runs 3] [--engine vllm]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench/drift_speed.py")
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    ap.add_argument("--engine", default="vllm")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    if not args.corpus.is_dir():
        print(f"drift_speed: error: --corpus {args.corpus} is not a folder", file=sys.stderr)
        return 2
    cmd = [sys.executable, "-m", "launchcard", "drift", "--corpus", str(args.corpus), "--engine", args.engine,
           "--format", "json"]
    walls: list[float] = []
    last: dict[str, object] = {}
    for _ in range(args.runs):
        t = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=ROOT)
        walls.append(time.perf_counter() - t)
        if done.returncode not in (0, 1):
            print(f"drift_speed: error: drift exited {done.returncode}: {done.stderr.strip()[-500:]}", file=sys.stderr)
            return 1
        last = json.loads(done.stdout)
    commands = last.get("commands") or []
    releases = last.get("releases") or []
    print(f"{len(commands)} commands x {len(releases)} {args.engine} releases "  # type: ignore[arg-type]
          f"= {len(commands) * len(releases)} checks")  # type: ignore[arg-type]
    print("wall per run (s): " + ", ".join(f"{w:.1f}" for w in walls))
    print(f"median {statistics.median(walls):.1f} s (target < 30 s); in-process (cards + drift) "
          f"{last.get('seconds')} s of the last run")
    return 0 if statistics.median(walls) < 30 else 1


if __name__ == "__main__":
    sys.exit(main())
