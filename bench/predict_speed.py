"""How many predictions a second ``launchcard.predict`` makes (the plan search needs >= 1,000 candidates/s).

Facts are built once per plan (memory planner), then ``predict`` runs over a grid of workloads and
batching limits, as a search does.  Reports the median over repeats of wall and CPU (user+sys) time per
prediction, for the default request count (10 x concurrency) and a search pass (2 x concurrency).

Then vLLM's long prompts at high concurrency, where every step decodes beside a prefill chunk (gpt-oss-120b, TP 8 on
H100, vLLM's defaults, 8192/1024, 10 x C requests): the median CPU time of one ``predict`` at 1,024 and 4,096 clients.

Then the high-concurrency points of a web performance page (DeepSeek-V4-Flash on B200, SGLang, 8192/1024, its
panel command, the page's own launch: ``web._predicted``'s curve that reaches 4,096 clients): the median CPU time
of one ``predict`` at 1, 64, 1,024 and 4,096 clients (10 x C requests each, as the page predicts them).

    python bench/predict_speed.py [--repeats 3]
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
from launchcard.predict import ServingFacts, Workload, predict, serving_facts, with_limits  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus"
CONFIG = CORPUS / "hf" / "openai" / "gpt-oss-120b" / "config.json"
PAGE_MODEL = "deepseek-ai/DeepSeek-V4-Flash"
PAGE_CONCURRENCY = (1, 64, 1024, 4096)
VLLM_CONCURRENCY = (1024, 4096)


def page_facts() -> tuple[ServingFacts, int, int] | None:
    """The facts, prompt and output length of the page's curve that reaches the most clients, as the page builds
    them (its launch recorded from ``web._predicted``'s own call)."""
    import launchcard.predict as lp
    from launchcard.check import corpus_config, synced_config_dirs
    from launchcard.web._memo import CurveMemo
    from launchcard.web._perf import PerfIndex
    from launchcard.web._predicted import prediction_hook

    made: list[tuple[ServingFacts, int, int]] = []
    real = lp.predict_launch

    def launch(cfg: Path, work: Workload, *a: object, **kw: object) -> object:
        facts, r = real(cfg, work, *a, **kw)  # type: ignore[arg-type]
        made.append((facts, work.isl, work.osl))
        return facts, r

    perf = PerfIndex([CORPUS / "sglang-cookbook", ROOT / "tests" / "fixtures" / "sglang-benchmarks"],
                     [CORPUS / "sglang-cookbook"], [PAGE_MODEL])
    groups = [p["conditions"]["concurrency"] for p in perf.published(PAGE_MODEL)]
    if max(groups, default=0) < max(PAGE_CONCURRENCY):
        return None
    hook = prediction_hook(lambda m: [p for p in perf.published(m)
                                      if p["conditions"]["concurrency"] == max(PAGE_CONCURRENCY)],
                           lambda m: corpus_config(m, CORPUS / "vllm-recipes", synced_config_dirs()), CurveMemo(None))
    lp.predict_launch = launch  # type: ignore[assignment]
    try:
        hook(PAGE_MODEL)
    finally:
        lp.predict_launch = real
    return made[0] if made else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    plans = [serving_facts(CONFIG, Settings(tp=tp, max_model_len=16384), gpu="h100") for tp in (1, 2, 4, 8)]
    build = (time.perf_counter() - t0) / len(plans)
    grid = [(with_limits(f, max_num_seqs=s), c, isl) for f in plans for s in (64, 256) for c in (1, 8, 32, 128)
            for isl in (1024, 4096)]
    print(f"serving_facts (memory planner): {build * 1e3:.1f} ms per plan; grid of {len(grid)} predictions")
    for label, mult in (("default (10 x C requests)", 10), ("search pass (2 x C requests)", 2)):
        walls, cpus = [], []
        for _ in range(args.repeats):
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
    vf = serving_facts(CONFIG, Settings(tp=8), gpu="h100")
    for n in VLLM_CONCURRENCY:
        took = []
        for _ in range(args.repeats):
            t0 = time.process_time()
            predict(vf, Workload(isl=8192, osl=1024, concurrency=n))
            took.append(time.process_time() - t0)
        print(f"vLLM gpt-oss-120b TP 8 H100 8192/1024, {n} clients ({10 * n} requests): "
              f"{statistics.median(took) * 1e3:.2f} ms CPU per prediction; load {os.getloadavg()[0]:.1f}")
    page = page_facts()
    if page is None:
        print(f"{PAGE_MODEL}: no performance page point at {max(PAGE_CONCURRENCY)} clients in the corpus")
        return 0
    pf, isl, osl = page
    for n in PAGE_CONCURRENCY:
        took: list[float] = []
        for _ in range(args.repeats if n >= 1024 else 10 * args.repeats):
            t0 = time.process_time()  # finer than os.times' 10 ms ticks
            predict(pf, Workload(isl=isl, osl=osl, concurrency=n))
            took.append(time.process_time() - t0)
        print(f"{PAGE_MODEL} page point {isl}/{osl}, {n} clients ({10 * n} requests): "
              f"{statistics.median(took) * 1e3:.2f} ms CPU per prediction; load {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
