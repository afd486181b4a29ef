"""Whole-process latency of the everyday commands (issue 23, item 1).

Each command runs as a fresh ``launchcard`` process: one warm-up run, then ``--runs`` timed runs
(default 5). For each it prints the median wall time and the median CPU time (user + sys of the
child, from ``os.wait4``), against the issue's target. CPU time is the steadier figure when other
work shares the machine; the load average before and after is printed so a reader can tell.

    .venv/bin/python bench/cli_latency.py [--corpus ../shared/corpus] [--runs 5] [--only card,page]
                                          [--json out.json]

Commands that build cards from the corpus run twice: "cold" with an empty build cache (a private cache
folder emptied before every run: every document parsed, every card merged and stored, as on the first run
after the corpus changed everywhere) and warm (a private cache the warm-up filled: what a second run on
unchanged sources does).  The commands run with bytecode caching on (``PYTHONDONTWRITEBYTECODE`` is
dropped from their environment): an installed package has its ``__pycache__``, and compiling ~300
modules on every run would be timed otherwise.
``ingest`` is timed into a fresh catalog each run (every card stored) and into a catalog that already
holds the corpus (nothing changed: 0 captures). A median is judged against its target on wall time
(``--judge cpu``: on CPU time, the fairer figure on a shared machine). Exit 1 when one misses.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CLI = ROOT / ".venv" / "bin" / "launchcard"


@dataclass(frozen=True)
class Case:
    name: str
    argv: list[str]
    target_s: float
    fresh_catalog: bool = False  # each run gets an empty catalog (delete before the run)
    cold: bool = False  # an empty build cache: nothing from an earlier run is reused


def run_once(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall s, cpu s) of one whole process; a non-zero exit other than 1 (a failed check) is an error."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"cli_latency: error: {' '.join(argv)} exited {proc.returncode}: "
                         f"{err.decode(errors='replace').strip()[-400:]}")
    return wall, usage.ru_utime + usage.ru_stime


def cases(corpus: Path, catalog: Path) -> list[Case]:
    recipes = str(corpus / "vllm-recipes")
    c = str(corpus)
    cli = str(CLI)
    oss = str(corpus / "hf" / "openai" / "gpt-oss-120b" / "config.json")
    out = [
        Case("--help", [cli, "--help"], 0.25),
        Case("resolve zai-org/GLM-5.3-Flash --hardware h100",
             [cli, "resolve", "zai-org/GLM-5.3-Flash", "--recipes", recipes, "--hardware", "h100"], 0.25),
        Case("resolve openai/gpt-oss-120b --hardware h100 (memory judged)",
             [cli, "resolve", "openai/gpt-oss-120b", "--recipes", recipes, "--hardware", "h100"], 0.35),
        Case("facts zai-org/GLM-5.3-Flash", [cli, "facts", "zai-org/GLM-5.3-Flash", "--recipes", recipes], 0.25),
        # predict, memory and plan: the hardware catalog, the planner and (plan) the search on every run
        Case("predict --config gpt-oss-120b --gpu h100 --tp 2 (1k/256, 8 clients)",
             [cli, "predict", "--config", oss, "--gpu", "h100", "--tp", "2", "--isl", "1024", "--osl", "256",
              "--concurrency", "8"], 0.35),
        Case("memory --config gpt-oss-120b --gpu h100 --tp 2 --json",
             [cli, "memory", "--config", oss, "--gpu", "h100", "--tp", "2", "--json"], 0.35),
        Case("plan openai/gpt-oss-120b --gpu h100 --gpus 8 (1k/256, 64 clients)",
             [cli, "plan", "openai/gpt-oss-120b", "--config", oss, "--gpu", "h100", "--gpus", "8", "--slo",
              "ttft=2000,tpot=40", "--concurrency", "64", "--no-progress"], 1.0),
    ]
    for cold in (True, False):
        tag = " [cold]" if cold else ""
        out += [
            Case(f"card openai/gpt-oss-120b --corpus{tag}", [cli, "card", "openai/gpt-oss-120b", "--corpus", c],
                 0.5, cold=cold),
            Case(f"page zai-org/GLM-5.3-Flash --corpus{tag}", [cli, "page", "zai-org/GLM-5.3-Flash", "--corpus", c],
                 0.5, cold=cold),
            Case(f"drift --engine vllm --corpus{tag}", [cli, "drift", "--engine", "vllm", "--corpus", c], 3.0,
                 cold=cold),
            Case(f"ingest --corpus, fresh catalog{tag}",
                 [cli, "ingest", "--corpus", c, "--catalog", str(catalog), "--quiet"], 2.0, fresh_catalog=True,
                 cold=cold),
        ]
    out.append(Case("ingest --corpus, unchanged", [cli, "ingest", "--corpus", c, "--catalog", str(catalog),
                                                   "--quiet"], 0.5))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench/cli_latency.py")
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", default="", help="comma-separated words; run the cases whose name holds one")
    ap.add_argument("--judge", choices=("wall", "cpu"), default="wall")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = ap.parse_args(argv)
    if not args.corpus.is_dir():
        print(f"cli_latency: error: --corpus {args.corpus} is not a folder", file=sys.stderr)
        return 2
    if not CLI.exists():
        print(f"cli_latency: error: {CLI} missing; run scripts/main.sh first", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="lc-latency-"))
    base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    warm = {**base, "LAUNCHCARD_BUILD_CACHE": str(tmp / "build-cache")}  # private: the warm-up fills it
    cold_cache = tmp / "cold-cache"
    cold = {**base, "LAUNCHCARD_BUILD_CACHE": str(cold_cache)}  # emptied before every run
    catalog = tmp / "catalog.sqlite3"
    words = [w for w in args.only.split(",") if w]
    rows: list[dict[str, Any]] = []
    load_before = os.getloadavg()
    try:
        for case in cases(args.corpus, catalog):
            if words and not any(w in case.name for w in words):
                continue
            walls, cpus = [], []
            for i in range(args.runs + 1):
                if case.fresh_catalog:
                    for p in tmp.glob("catalog.sqlite3*"):
                        p.unlink()
                if case.cold:
                    shutil.rmtree(cold_cache, ignore_errors=True)
                wall, cpu = run_once(case.argv, cold if case.cold else warm)
                if i:  # run 0 is the warm-up
                    walls.append(wall)
                    cpus.append(cpu)
            rows.append({"command": case.name, "wall_median_s": round(statistics.median(walls), 3),
                         "cpu_median_s": round(statistics.median(cpus), 3), "wall_min_s": round(min(walls), 3),
                         "target_s": case.target_s})
            r = rows[-1]
            print(f"{r['command']:64} wall {r['wall_median_s']:6.2f}  cpu {r['cpu_median_s']:6.2f}  "
                  f"(min {r['wall_min_s']:.2f})  target {case.target_s:.2f}", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    load_after = os.getloadavg()
    key = "wall_median_s" if args.judge == "wall" else "cpu_median_s"
    ok_all = all(r[key] <= r["target_s"] for r in rows)
    print(f"\n{len(rows)} command(s), median of {args.runs} after a warm-up; {os.cpu_count()} CPUs; "
          f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after; "
          f"judged on {args.judge}: {'all within target' if ok_all else 'SOME OVER TARGET'}")
    for r in rows:
        if r[key] > r["target_s"]:
            print(f"  over: {r['command']} {r[key]:.2f} s > {r['target_s']:.2f} s")
    if args.json:
        args.json.write_text(json.dumps({"runs": args.runs, "cpus": os.cpu_count(), "load_before": load_before,
                                         "load_after": load_after, "rows": rows}, indent=2) + "\n")
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
