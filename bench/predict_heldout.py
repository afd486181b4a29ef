"""Score ``launchcard predict`` on held-out published serving runs (never fitted on).

The runs are in ``tests/fixtures/predict_heldout.json`` (each with its source: repository, commit,
path and line; how they were chosen is in the file's header; ``bench/heldout_extract.py`` made
them).  None is a row of aiconfigurator-core 0.12.0's ``silicon_sample.csv`` (the calibration
data) or a page of ../shared/corpus.  Every run is predicted through the same library calls
``launchcard predict --config ... --gpu ...`` makes (``check_context``, ``serving_facts``,
``predict``) with the plan its serving command states and the workload its result block
printed (mean prompt and output lengths, request count, concurrency).  Nothing is fitted here.

    python bench/predict_heldout.py                 # tables (markdown)
    python bench/predict_heldout.py --json          # every row's prediction and errors
    python bench/predict_heldout.py --limit 5       # first rows only (the test's quick run)

The model configs are the fixture's own copies (``tests/fixtures/predict_heldout_configs/``, each
with its source in the fixture's ``configs``): no download, no network.
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from predict_accuracy import pct, roofline_sets, spearman  # noqa: E402

from launchcard.errors import LaunchcardError  # noqa: E402
from launchcard.hardware import find  # noqa: E402
from launchcard.memory import Settings  # noqa: E402
from launchcard.predict import Coefficients, Workload, check_context, predict, serving_facts  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "predict_heldout.json"
CONFIGS = ROOT / "tests" / "fixtures" / "predict_heldout_configs"
METRICS = (("tpot", "tpot_ms_mean", "tpot_ms_mean"), ("ttft", "ttft_ms_mean", "ttft_ms_mean"),
           ("tput", "output_tok_per_s", "output_tok_per_s"))


def load(path: Path = FIXTURE) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return doc


def settings(row: dict[str, Any]) -> Settings:
    """The plan the serving command states, as ``launchcard predict``'s options would give it."""
    p = row["plan"]
    over = {k: p[k] for k in ("quantization", "kv_cache_dtype", "max_num_seqs", "max_num_batched_tokens",
                              "max_model_len", "gpu_memory_utilization") if p.get(k) is not None}
    return Settings(tp=p["tp"], pp=p["pp"], dp=p["dp"], expert_parallel=bool(p["ep"]),
                    enforce_eager=bool(p.get("enforce_eager")),
                    vllm_version=row["engine_version"] if row["engine"] == "vllm" else None, **over)


def predict_row(row: dict[str, Any], configs: Path = CONFIGS, coef: Coefficients | None = None, *,
                sglang_reader: bool = False) -> dict[str, Any]:
    """One run predicted: measured and predicted figures, errors (signed, relative), or the one-line refusal.
    ``coef``: None = the shipped set of the row's engine (what ``launchcard predict`` uses).
    ``sglang_reader``: an SGLang row's plan is its server command read by ``predict.sglang_plan`` (SGLang's own
    memory and batching defaults) instead of the options ``launchcard predict`` takes."""
    cfg = configs / row["config"]["file"]
    w = row["workload"]
    isl, osl = max(1, round(w["isl_mean"])), max(2, round(w["osl_mean"]))
    out: dict[str, Any] = {"id": row["id"], "url": row["source"]["url"], "model": row["model"], "gpu": row["gpu"],
                           "engine": row["engine"], "source": row["id"].split(":", 1)[0],
                           "plain": not row["unmodelled_flags"], "concurrency": w["concurrency"], "isl": isl,
                           "osl": osl, "requests": w["requests"]}
    s = settings(row)
    try:
        check_context(cfg, s.max_model_len, isl + osl, s.vllm_version, name=row["model"])
        if sglang_reader and row["engine"] == "sglang":
            from launchcard.hardware import find
            from launchcard.predict import sglang_plan, sglang_serving_facts

            plan = sglang_plan(shlex.split(row["serve_command"]), gpu_memory_gib=find(row["gpu"]).memory_gib,
                               version=row["engine_version"])
            facts = sglang_serving_facts(cfg, plan, gpu=row["gpu"], model=row["model"])
        else:
            facts = serving_facts(cfg, s.validate(), gpu=row["gpu"], engine=row["engine"], model=row["model"])
        p = predict(facts, Workload(isl=isl, osl=osl, concurrency=w["concurrency"], num_requests=w["requests"]),
                    coef)
    except LaunchcardError as exc:
        out["error"] = exc.one_line()
        return out
    pred = {"tpot_ms_mean": p.tpot_ms_mean, "ttft_ms_mean": p.ttft_ms_mean, "output_tok_per_s": p.output_tok_per_s}
    meas = row["measured"]
    out["measured"] = {k: meas[k] for _, k, _ in METRICS}
    out["predicted"] = {k: round(v, 3) for k, v in pred.items()}
    for key, mk, pk in METRICS:
        if meas.get(mk):
            out[key] = (pred[pk] - meas[mk]) / meas[mk]  # signed: + = predicted slower/more
    return out


def _abs(rows: list[dict[str, Any]], key: str) -> list[float]:
    return [abs(r[key]) for r in rows if key in r]


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [r for r in rows if "error" not in r]
    res: dict[str, Any] = {"rows": len(ok), "refused": len(rows) - len(ok),
                           "tpot_median": pct(_abs(ok, "tpot"), 0.5), "tpot_p90": pct(_abs(ok, "tpot"), 0.9),
                           "ttft_median": pct(_abs(ok, "ttft"), 0.5), "tput_median": pct(_abs(ok, "tput"), 0.5)}
    for key in ("tpot", "ttft", "tput"):
        xs = [r[key] for r in ok if key in r]
        res[f"{key}_signed_median"] = statistics.median(xs) if xs else math.nan
    return res


def rankings(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Spearman of predicted vs measured output tokens/s per GPU: (a) among every run of one model on one GPU
    type, (b) among configurations of one model on one GPU type at one workload (same lengths and load)."""
    out: dict[str, Any] = {}
    for name, key in (("model x gpu", lambda r: (r["model"], r["gpu"])),
                      ("model x gpu, closed-loop runs", lambda r: (r["model"], r["gpu"])
                       if r["concurrency"] < r["requests"] else None),
                      ("model x gpu x workload", lambda r: (r["model"], r["gpu"], r["isl"], r["osl"],
                                                           r["concurrency"]))):
        groups: dict[Any, list[dict[str, Any]]] = {}
        for r in rows:
            if "error" not in r and key(r) is not None:
                groups.setdefault(key(r), []).append(r)
        per = {}
        for k, g in groups.items():
            if len(g) >= 3:
                rho = spearman([x["predicted"]["output_tok_per_s"] / 1.0 for x in g],
                               [x["measured"]["output_tok_per_s"] for x in g])
                if not math.isnan(rho):
                    per["|".join(str(x) for x in k)] = {"rows": len(g), "spearman": rho}
        vals = [v["spearman"] for v in per.values()]
        out[name] = {"groups": per, "median": statistics.median(vals) if vals else math.nan,
                     "share_ge_0.9": sum(v >= 0.9 for v in vals) / len(vals) if vals else math.nan}
    return out


def regimes(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    def load(r: dict[str, Any]) -> str:
        c = r["concurrency"]
        if c < r["requests"]:
            load = "closed loop c<=8" if c <= 8 else "closed loop c9-64" if c <= 64 else "closed loop c>64"
        else:
            load = "all sent at once, <=256" if c <= 256 else "all sent at once, >256"
        return load

    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        arrivals = "all sent at once" if r["concurrency"] >= r["requests"] else "closed loop"
        vendor = find(r["gpu"]).vendor
        isl = "isl<=512" if r["isl"] <= 512 else "isl<=4k" if r["isl"] <= 4096 else "isl>4k"
        for k in (f"engine {r['engine']}", f"source {r['source']}", f"gpu {r['gpu']}", load(r), f"{load(r)}, {isl}",
                  arrivals, f"{arrivals}, {vendor} GPUs",
                  "plain commands" if r["plain"] else "commands with unmodelled flags"):
            groups.setdefault(k, []).append(r)
    return {k: summarize(v) for k, v in sorted(groups.items())}


def fmt(x: float, signed: bool = False) -> str:
    if math.isnan(x):
        return "n/a"
    return f"{x * 100:+.0f}%" if signed else f"{x * 100:.1f}%"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fixture", type=Path, default=FIXTURE)
    ap.add_argument("--limit", type=int, default=None, help="first N rows only")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    doc = load(args.fixture)
    rows = doc["rows"][: args.limit] if args.limit else doc["rows"]
    t0, c0 = time.perf_counter(), time.process_time()
    configs = args.fixture.parent / CONFIGS.name
    scored = [predict_row(r, configs) for r in rows]
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    plain = roofline_sets()
    roofline = summarize([predict_row(r, configs, plain[r["engine"]]) for r in rows])
    sglang_read = summarize([predict_row(r, configs, sglang_reader=True) for r in rows if r["engine"] == "sglang"])
    result: dict[str, Any] = {"rows": len(rows), "all": summarize(scored), "plain_roofline": roofline,
                              "sglang_plan_reader": sglang_read,
                              "regimes": regimes(scored),
                              "ranking": rankings(scored), "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
                              "scored": scored}
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    print(f"{len(rows)} held-out runs from {args.fixture.name} ({wall:.1f} s wall, {cpu:.1f} s CPU)\n")
    print("| rows | TPOT median / p90 | TTFT median | throughput median | signed median TPOT / TTFT / throughput "
          "| refused |")
    print("|---|---|---|---|---|---|")
    print(_line("all", result["all"]))
    print(_line("plain roofline (datasheet figures only, same simulation)", roofline))
    print(_line("SGLang rows, command read by predict.sglang_plan", sglang_read))
    for k, s in result["regimes"].items():
        print(_line(k, s))
    for name, r in result["ranking"].items():
        print(f"\nSpearman, {name}: median {r['median']:.2f} over {len(r['groups'])} groups of >= 3 "
              f"({fmt(r['share_ge_0.9'])} of groups >= 0.9)")
    bad = [r for r in scored if "error" in r]
    for r in bad:
        print(f"refused {r['id']}: {r['error']}")
    return 0


def _line(name: str, s: dict[str, Any]) -> str:
    return (f"| {name} ({s['rows']}) | {fmt(s['tpot_median'])} / {fmt(s['tpot_p90'])} | {fmt(s['ttft_median'])} | "
            f"{fmt(s['tput_median'])} | {fmt(s['tpot_signed_median'], True)} / {fmt(s['ttft_signed_median'], True)}"
            f" / {fmt(s['tput_signed_median'], True)} | {s['refused']} |")


if __name__ == "__main__":
    sys.exit(main())
