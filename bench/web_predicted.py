"""Web performance page with predicted curves: first render cold, from the build cache, and in-process.

    .venv/bin/python bench/web_predicted.py [--runs 5] [--model deepseek-ai/DeepSeek-V4-Flash] [--json OUT]

Ingests the corpus into a temporary catalog once, then per run starts two fresh processes (``create_app`` over
that catalog, the corpus recipes and the test fixtures' SGLang benchmark files, in-process through the ASGI test
client, no ``warm``) sharing one empty build-cache folder (``LAUNCHCARD_BUILD_CACHE``):

* ``cold``: the first request of the model's performance page, nothing computed yet (predict's 10 x C run for
  every predicted point: DeepSeek-V4-Flash has points up to 4,096 clients);
* ``twin``: then its JSON twin in the same process (another URL, so the response cache does not answer it:
  the page's data built again, the curves from memory);
* ``disk``: the second process's first request of the page, the curves kept by the first on disk (another
  worker process, or the server restarted with the code and data unchanged);
* ``warm_background`` and ``after_warm``: a third process, its own empty build cache, runs the server's start-up
  ``warm`` and waits for its background thread (the predicted curves of every model with published points);
  then the page's first request.

Reports the median and range over ``--runs`` of each.  Run it on another checkout's code with
``PYTHONPATH=OTHER/src`` to compare (before a change, ``disk`` is a second ``cold``).  The machine is shared:
compare medians taken at one time, not across sessions.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def child(catalog: Path, corpus: Path, benchmarks: Path, model: str, warm: bool) -> dict[str, float]:
    import threading

    from fastapi.testclient import TestClient

    from launchcard.web import create_app

    app = create_app(catalog, corpus / "vllm-recipes", [benchmarks])
    warm_s = 0.0
    if warm:  # what `launchcard serve` does before it answers, then its background curves to their end
        t0 = time.perf_counter()
        app.state.warm()
        for t in threading.enumerate():
            if t.name == "launchcard-predicted-curves":
                t.join()
        warm_s = time.perf_counter() - t0
    with TestClient(app) as client:
        t0 = time.perf_counter()
        page = client.get(f"/{model}/performance")
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        twin = client.get(f"/{model}/performance.json")
        second = time.perf_counter() - t0
    assert page.status_code == 200 and twin.status_code == 200, (page.status_code, twin.status_code)
    return {"first_s": first, "twin_s": second, "warm_s": warm_s, "predicted": len(twin.json()["predicted"])}


def run_child(args: argparse.Namespace, catalog: Path, cache: Path, warm: bool = False) -> dict[str, float]:
    env = {**os.environ, "LAUNCHCARD_BUILD_CACHE": str(cache)}
    res = subprocess.run([sys.executable, __file__, "--child", str(catalog), "--corpus", str(args.corpus),
                          "--benchmarks", str(args.benchmarks), "--model", args.model, *(["--warm"] if warm else [])],
                         capture_output=True, text=True, env=env, check=False)
    if res.returncode != 0:
        raise SystemExit(f"child failed: {res.stderr[-2000:]}")
    out: dict[str, float] = json.loads(res.stdout.strip().splitlines()[-1])
    return out


def summary(values: list[float]) -> dict[str, float]:
    return {"median_s": round(statistics.median(values), 3), "min_s": round(min(values), 3),
            "max_s": round(max(values), 3)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    ap.add_argument("--benchmarks", type=Path, default=ROOT / "tests" / "fixtures" / "sglang-benchmarks")
    ap.add_argument("--model", default="deepseek-ai/DeepSeek-V4-Flash")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--warm", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        print(json.dumps(child(args.child, args.corpus, args.benchmarks, args.model, args.warm)))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        catalog = Path(tmp) / "catalog.sqlite3"
        subprocess.run([sys.executable, "-m", "launchcard.cli", "ingest", "--corpus", str(args.corpus), "--catalog",
                        str(catalog), "--quiet"], check=True, capture_output=True)
        got: dict[str, list[float]] = {k: [] for k in ("cold", "twin", "disk", "warm_background", "after_warm")}
        points = set()
        for i in range(args.runs):
            cache = Path(tmp) / f"build-cache-{i}"  # empty: nothing computed yet
            a = run_child(args, catalog, cache)
            b = run_child(args, catalog, cache)
            c = run_child(args, catalog, Path(tmp) / f"build-cache-warm-{i}", warm=True)
            for k, v in (("cold", a["first_s"]), ("twin", a["twin_s"]), ("disk", b["first_s"]),
                         ("warm_background", c["warm_s"]), ("after_warm", c["first_s"])):
                got[k].append(v)
            points |= {a["predicted"], b["predicted"], c["predicted"]}
            print(f"run {i + 1}: " + ", ".join(f"{k} {v[-1]:.3f} s" for k, v in got.items()), file=sys.stderr)
    report = {"model": args.model, "runs": args.runs, "predicted_points": sorted(points),
              **{k: summary(v) for k, v in got.items()}}
    print(json.dumps(report, indent=2))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
