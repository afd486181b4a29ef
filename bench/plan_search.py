"""Candidate plans a second of ``launchcard.plansearch.search`` (issue 24 item 5 target: >= 1,000/s).

Each case is searched cold (caches cleared: every memory plan, start-up check, schedule and prediction
computed) and warm (a second search of the same space: a sweep or a web page asking again), REPEATS times;
prints the median wall and CPU (user+sys) candidates/s. The machine is shared: compare CPU figures, and say
how loaded it was.

    python bench/plan_search.py [--repeats 5]
    python bench/plan_search.py --digest before.json      # every search's answer, to the last bit
    python bench/plan_search.py --compare before.json     # exit 1 if any answer differs from that file

``--digest``/``--compare`` make a speed change provably free of effect on the answers: every outcome (figures at
full float precision, stage, reason), the ranking, the Pareto front, the closest misses and the findings of the
speed cases and of more spaces (SGLang, recipes with speculative decoding, prefix hits, Poisson arrivals), each
searched cold and warm. Take the digest before the change, compare after; the prediction model changing
(coefficients, step costs) changes the answers too, so a digest is only compared within one such model.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from launchcard.plansearch import (  # noqa: E402
    Option,
    SearchResult,
    SearchSpace,
    Slo,
    checkpoint_option,
    clear_caches,
    search,
)
from launchcard.predict import HardwareFigures, Workload  # noqa: E402

SHARED = ROOT.parent / "shared"
HF = SHARED / "corpus" / "hf"
RECIPES = SHARED / "corpus" / "vllm-recipes"
CASES = [  # (model, config, gpu, gpus, workload, slo)
    ("openai/gpt-oss-120b", HF / "openai/gpt-oss-120b/config.json", "h100", 8,
     Workload(1024, 256, concurrency=64), "ttft=2000,tpot=40"),
    ("openai/gpt-oss-120b", HF / "openai/gpt-oss-120b/config.json", "h200", 16,
     Workload(4096, 512, concurrency=128), "ttft=3000,tpot=30"),
    ("deepseek-ai/DeepSeek-V4-Flash", HF / "deepseek-ai/DeepSeek-V4-Flash/config.json", "b200", 16,
     Workload(2048, 256, rate=8.0), "ttft=2000,tpot=50"),
]
# the same searches of SGLang plans (launchcard plan --engine sglang: SGLang's own serving rules, DP attention)
SGLANG_CASES = [(m, cfg, g, n, w, slo) for m, cfg, g, n, w, slo in CASES if n == 16]


def _one(space: SearchSpace, work: Workload, slo: Slo, cold: bool) -> tuple[int, float, float]:
    if cold:
        clear_caches()
    w0, c0 = time.perf_counter(), time.process_time()  # process_time: user+sys of this process, fine-grained
    r = search(space, work, slo)
    return len(r.outcomes), time.perf_counter() - w0, time.process_time() - c0


def _space(model: str, cfg: Path, gpu: str, n: int, **kw: object) -> SearchSpace:
    return SearchSpace(model=model, gpu=gpu, gpus=n, gpus_per_node=8, options=(checkpoint_option(model, cfg),),
                       **kw)  # type: ignore[arg-type]


def _recipe_options(model: str, gpu: str) -> tuple[Option, ...]:
    from launchcard.plansearch import recipe_options
    from launchcard.sources.vllm_recipes import load_recipes

    opts, _, _ = recipe_options(load_recipes(RECIPES), model, gpu, RECIPES)
    return tuple(opts)


def _digest_spaces() -> list[tuple[str, SearchSpace, Workload, str]]:
    """The speed cases and more spaces, each named: what ``--digest`` records."""
    out = [(f"{m} {n}x{g} {w.isl}/{w.osl} concurrency={w.concurrency} rate={w.rate}", _space(m, cfg, g, n), w, slo)
           for m, cfg, g, n, w, slo in CASES]
    oss, dsv = ("openai/gpt-oss-120b", HF / "openai/gpt-oss-120b/config.json"), \
        ("deepseek-ai/DeepSeek-V4-Flash", HF / "deepseek-ai/DeepSeek-V4-Flash/config.json")
    kimi = ("moonshotai/Kimi-K2.5", HF / "moonshotai/Kimi-K2.5/config.json")
    out += [
        ("sglang gpt-oss 8xh100", _space(*oss, "h100", 8, engine="sglang"), Workload(1024, 256, concurrency=64),
         "ttft=2000,tpot=40"),
        ("sglang dsv4 16xb200 rate", _space(*dsv, "b200", 16, engine="sglang"), Workload(2048, 256, rate=8.0),
         "ttft=2000,tpot=50"),
        ("kimi 16xh200 prefix", _space(*kimi, "h200", 16), Workload(2048, 256, concurrency=32, prefix_hit=0.5),
         "ttft=1500,tpot=60"),
        ("dsv4 recipes 8xh100", SearchSpace(model=dsv[0], gpu="h100", gpus=8, gpus_per_node=8,
                                            options=_recipe_options(dsv[0], "h100")),
         Workload(4096, 256, concurrency=64), "tpot=200"),
        ("gpt-oss recipes 16xh100 mml", SearchSpace(model=oss[0], gpu="h100", gpus=16, gpus_per_node=8,
                                                    options=_recipe_options(oss[0], "h100"), max_model_len=8192),
         Workload(2048, 512, concurrency=48, num_requests=200), "ttft=1000,tpot=25"),
        ("gpt-oss 4xh100 small batches", _space(*oss, "h100", 4, max_num_seqs=(4, 8, 12)),
         Workload(8192, 128, concurrency=16, acceptance=0.6), "ttft=5000,tpot=40"),
        # start-up refusals: TP 3 and 6 against 64 heads; MXFP4 on Turing
        ("gpt-oss 12xh100 heads", _space(*oss, "h100", 12), Workload(1024, 128, concurrency=24), "tpot=100"),
        # the catalog gives the T4 no bandwidth (a search without figures is refused before it runs): its datasheet's
        # 320 GB/s and 65 TFLOP/s FP16 (nvidia.com T4 datasheet); no candidate gets past the check to use them
        ("gpt-oss 8xt4 quant", _space(*oss, "t4", 8, disaggregation=False, figures=HardwareFigures(
            id="t4", kind="gpu", bandwidth_bps=320e9, flops={"fp16": 65e12})), Workload(1024, 128, concurrency=8),
         "tpot=100"),
    ]
    return out


def _lines(r: SearchResult) -> list[str]:
    """Everything a search answers, as text with every float to the last bit (``repr``)."""
    out = [f"outcome {o!r}" for o in r.outcomes]
    out += [f"ranked {o.candidate!r}" for o in r.ranked] + [f"pareto {o.candidate!r}" for o in r.pareto]
    out += [f"closest {o.candidate!r}" for o in r.closest] + [f"finding {f}" for f in r.findings]
    out += [f"rejected {k}: {v}" for k, v in r.rejected_by_reason().items()]
    return out


def digest() -> dict[str, list[str]]:
    doc: dict[str, list[str]] = {}
    for name, space, work, slo in _digest_spaces():
        clear_caches()
        cold = _lines(search(space, work, Slo.parse(slo)))
        warm = _lines(search(space, work, Slo.parse(slo)))
        doc[name] = cold
        if warm != cold:
            doc[name + " (warm)"] = warm
    return doc


def compare(path: Path) -> int:
    before = json.loads(path.read_text(encoding="utf-8"))
    now = digest()
    bad = 0
    for name in sorted(set(before) | set(now)):
        a, b = before.get(name), now.get(name)
        if a == b:
            print(f"same: {name} ({len(a or ())} lines, sha256 "
                  f"{hashlib.sha256(json.dumps(a).encode()).hexdigest()[:12]})")
            continue
        bad += 1
        first = next((i for i, (x, y) in enumerate(zip(a or [], b or [], strict=False)) if x != y),
                     min(len(a or []), len(b or [])))
        print(f"DIFFERENT: {name}: first at line {first}:\n  before: {(a or ['-'] * (first + 1))[first:first + 1]}"
              f"\n  now:    {(b or ['-'] * (first + 1))[first:first + 1]}")
    print(f"{len(set(before) | set(now)) - bad} same, {bad} different")
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--digest", type=Path, help="write every search's answer (full precision) to this file")
    ap.add_argument("--compare", type=Path, help="compare every search's answer with a --digest file")
    args = ap.parse_args()
    if args.digest:
        args.digest.write_text(json.dumps(digest(), indent=0), encoding="utf-8")
        return 0
    if args.compare:
        return compare(args.compare)
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    worst = worst_wall = float("inf")
    cases = [(*case, "vllm") for case in CASES] + [(*case, "sglang") for case in SGLANG_CASES]
    for model, cfg, gpu, n, work, slo, engine in cases:
        space = _space(model, cfg, gpu, n, engine=engine)
        for cold in (True, False):
            runs = [_one(space, work, Slo.parse(slo), cold) for _ in range(args.repeats)]
            count = runs[0][0]
            wall = statistics.median(r[1] for r in runs)
            cpu = statistics.median(r[2] for r in runs)
            rate = count / cpu if cpu > 0 else float("inf")
            if cold:
                worst = min(worst, rate)
                worst_wall = min(worst_wall, count / wall if wall > 0 else float("inf"))
            print(f"{model} {n} x {gpu} {engine} {'cold' if cold else 'warm'}: {count} candidates; median wall "
                  f"{wall:.3f} s ({count / wall:,.0f}/s), CPU {cpu:.3f} s ({rate:,.0f}/s)")
    print(f"slowest cold case: {worst:,.0f} candidates per CPU second, {worst_wall:,.0f} per wall second "
          "(target >= 1,000)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
