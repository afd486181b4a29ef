"""Score ``launchcard predict`` on held-out published serving runs (never fitted on).

The runs are in ``tests/fixtures/predict_heldout.json`` (each with its source: repository, commit,
path and line; how they were chosen is in the file's header; ``bench/heldout_extract.py`` made
them).  None is a row of aiconfigurator-core 0.12.0's ``silicon_sample.csv`` (the calibration
data) or a page of ../shared/corpus.  Every run is predicted through the same library calls
``launchcard predict --config ... --gpu ...`` makes (``check_context``, ``serving_facts``,
``predict``) with the plan its serving command states and the workload its benchmark client
sent (:func:`workload`): the arrivals (all at once, or a closed loop), the request count, and
the lengths (the result block's mean prompt and output lengths; their spread where the client's
command states it).  ``--feed means`` is the earlier feed (every run a closed loop of exact
mean lengths), for a before/after table.  Nothing is fitted here.

    python bench/predict_heldout.py                 # tables (markdown)
    python bench/predict_heldout.py --json          # every row's prediction and errors
    python bench/predict_heldout.py --limit 5       # first rows only (the test's quick run)

The model configs are the fixture's own copies (``tests/fixtures/predict_heldout_configs/``, each
with its source in the fixture's ``configs``), or the corpus' own file where the corpus holds the same bytes
(``corpus`` in that entry: third-party data is read in place): no download, no network.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shlex
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from predict_accuracy import pct, roofline_sets, spearman  # noqa: E402

from launchcard.errors import InputError, LaunchcardError  # noqa: E402
from launchcard.hardware import find  # noqa: E402
from launchcard.memory import Settings, settings_from_argv  # noqa: E402
from launchcard.predict import (  # noqa: E402
    DOMAIN_CODES,
    Coefficients,
    HardwareFigures,
    ServingFacts,
    Workload,
    check_context,
    predict,
    read_serve_command,
    serving_facts,
    sglang_model_traits,
    sglang_plan,
    sglang_serving_facts,
)

FIXTURE = ROOT / "tests" / "fixtures" / "predict_heldout.json"
CONFIGS = ROOT / "tests" / "fixtures" / "predict_heldout_configs"
CORPUS = ROOT.parent / "shared" / "corpus"
METRICS = (("tpot", "tpot_ms_mean", "tpot_ms_mean"), ("ttft", "ttft_ms_mean", "ttft_ms_mean"),
           ("tput", "output_tok_per_s", "output_tok_per_s"))


def load(path: Path = FIXTURE) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return doc


_SOURCES: dict[str, Any] = {}


def config_file(name: str, configs: Path = CONFIGS) -> Path:
    """A row's model config (``row["config"]["file"]``): the corpus' own file where the fixture's ``configs``
    entry names one (the same bytes; read in place), else the fixture's copy."""
    if not _SOURCES:
        _SOURCES.update(load()["configs"])
    corpus = _SOURCES.get(name, {}).get("corpus")
    return CORPUS / corpus if corpus else configs / name


def command_words(row: dict[str, Any]) -> list[str]:
    """The serving command as ``--command`` takes it: from the launcher on (``vllm serve``, ``python -m ...``,
    ``sglang serve``, ``trtllm-serve``); the environment set before it (``export X=1``, ``X=1``) is in the row's
    ``unmodelled_flags``."""
    words = shlex.split(row["serve_command"])
    for i, w in enumerate(words):
        if (w, words[i + 1:i + 2]) in (("vllm", ["serve"]), ("sglang", ["serve"])) or re.fullmatch(r"python3?", w) \
                or w == "trtllm-serve":
            return words[i:]
    return words


# the length distribution SGLang's bench_serving states for its random dataset (bench/sglang_tables.py writes it
# from the page's own command: each length uniform in [max(int(L x range ratio), 1), L])
_UNIFORM = re.compile(r"random: input uniform (\d+)\.\.(\d+), output uniform (\d+)\.\.(\d+)")
# sglang.bench_serving's image dataset: its text and output lengths by the random rule, its images on every prompt
_IMAGE = re.compile(r"image: \d+ x \S+ images, text uniform (\d+)\.\.(\d+), output uniform (\d+)\.\.(\d+)")


def endpoint(row: dict[str, Any]) -> str:
    """Where the run's client sent its requests, as its page's bench command says: each held-out GPUStack page's
    ``vllm bench serve --backend openai-chat --endpoint /v1/chat/completions`` (all engines; e.g.
    qwen3-8b/h100-latency.md L70 at 47277d79), the SGLang cookbook's image rows' ``--backend sglang-oai-chat``
    (Qwen/Qwen3-VL.md L513/L585/L657 at 7b5bd9c0; its other pages' ``--backend sglang``: the native generate
    endpoint, no chat template), dennislee's ``benchmark_serving.py --backend vllm`` (/v1/completions)."""
    if row["id"].startswith("gpustack:") or row["workload"].get("dataset") == "image":
        return "chat"
    return "completions"


def workload(row: dict[str, Any], feed: str = "client") -> Workload:
    """The workload the run's benchmark client sent (``feed="means"``: the earlier feed, a closed loop of the
    printed concurrency with exact mean lengths).

    Arrivals: ``vllm bench serve`` without --request-rate / --max-concurrency sends every request at once (its
    default rate inf; no GPUStack command sets either): ``rate=inf`` with the run's request count; a printed
    "Maximum request concurrency" is a closed loop of that many clients.  Lengths: the result block's totals over
    its requests give the means; a spread only where the client's command states one (:func:`lengths`)."""
    w = row["workload"]
    isl, osl, n, conc = max(1, round(w["isl_mean"])), max(2, round(w["osl_mean"])), w["requests"], w["concurrency"]
    api = endpoint(row)
    if feed == "means":
        return Workload(isl=isl, osl=osl, concurrency=conc, num_requests=n, endpoint=api)
    ratio, dataset = lengths(row)[0], dataset_of(row)
    if w["arrivals"].startswith("all at once"):
        return Workload(isl=isl, osl=osl, rate=math.inf, num_requests=n, range_ratio=ratio, dataset=dataset,
                        endpoint=api)
    return Workload(isl=isl, osl=osl, concurrency=conc, rate=w["request_rate"], num_requests=n, range_ratio=ratio,
                    dataset=dataset, endpoint=api)


def dataset_of(row: dict[str, Any]) -> str | None:
    """The dataset whose per-request lengths the prediction draws (``Workload.dataset``): "sharegpt" for a ShareGPT
    run (the fixture's ``dataset``, from the block's label or the page's own bench command, ``dataset_evidence``):
    ``vllm bench serve --dataset-name sharegpt`` (gpustack) and ``sglang.bench_serving`` on ShareGPT (the SGLang
    cookbook's "ShareGPT conversations" blocks).  SGLang's sampler keeps other pairs than vLLM's (no 1024 / 2048
    caps, every pair of >= 2 tokens: sglang/bench_serving.py sample_sharegpt_requests, 0.5.6.post2 L1230-1236,
    0.5.7 L1262-1273), so the capped pool scaled to the printed means stands in for its spread (narrower than
    the run's); the printed means alone would send equal requests, which in a closed loop finish and re-enter
    together, so that no prompt ever lands between decode steps (the run's varied requests do)."""
    if row["workload"]["dataset"] == "sharegpt":
        return "sharegpt"
    return None


def lengths(row: dict[str, Any]) -> tuple[float, str]:
    """The range ratio (``vllm bench serve``'s form: uniform in [L(1-r), L(1+r)] around the printed mean L) that
    the run's command states for its lengths, and how they were stated.

    SGLang bench_serving's random dataset draws each length uniformly from [lo, hi] (lo = 1 at its default range
    ratio 0: sglang/bench_serving.py L1207-1216 in SGLang 0.5.5.post3, --random-range-ratio default 0.0 L2501):
    the same shape around the printed mean is r = (hi - lo) / (hi + lo) (both lengths share one ratio in the
    prediction: the wider one's).  vllm bench serve's random dataset at its default --random-range-ratio
    0 has exact prompt lengths (datasets.py L594-622, vLLM 0.11.2); its ShareGPT runs take ShareGPT's per-request
    lengths scaled to the printed means (:func:`dataset_of`); outputs that stop at EOS (no --ignore-eos) vary by a
    distribution no source here states: their printed means, exactly."""
    if dataset_of(row):
        if row["source"]["repo"] != "gpustack/gpustack":
            return 0.0, ("ShareGPT's per-request lengths scaled to the printed means (vllm bench serve's capped "
                         "sampler standing in for sglang.bench_serving's)")
        return 0.0, "ShareGPT's per-request lengths scaled to the printed means (vllm bench serve's sampler)"
    label = row["source"].get("label") or ""
    if (im := _IMAGE.match(label)) is not None:
        lo_o, hi_o = int(im.group(3)), int(im.group(4))
        ratio = (hi_o - lo_o) / (hi_o + lo_o)
        return ratio, (f"uniform outputs around the printed mean (range ratio {ratio:.4f}, from the command; its "
                       "prompts' spread is only their text's, under the images' fixed tokens, and the prediction's "
                       "one ratio widens it)")
    m = _UNIFORM.match(label)
    if m is None:
        return 0.0, "exact mean lengths"
    lo_i, hi_i, lo_o, hi_o = (int(x) for x in m.groups())
    ratio = max((hi_i - lo_i) / (hi_i + lo_i), (hi_o - lo_o) / (hi_o + lo_o))
    return ratio, f"uniform lengths around the printed means (range ratio {ratio:.4f}, from the command)"


def cli_argv(row: dict[str, Any], configs: Path = CONFIGS) -> list[str]:
    """The ``launchcard predict`` arguments that predict this row (what the bench computes in-process)."""
    w = workload(row)
    load = ["--concurrency", str(w.concurrency)] if w.concurrency else ["--rate", str(w.rate)]
    load += ["--random-range-ratio", repr(w.range_ratio)] if w.range_ratio else []
    load += ["--endpoint", w.endpoint] if w.endpoint != "completions" else []
    load += ["--dataset", w.dataset] if w.dataset else []
    argv = ["predict", "--config", str(config_file(row["config"]["file"], configs)), "--gpu", row["gpu"],
            "--isl", str(w.isl), "--osl", str(w.osl), *load, "--num-requests", str(w.num_requests), "--json"]
    if row["engine_version"]:
        argv += ["--engine-version", row["engine_version"]]
    if no_p2p(row):
        argv += ["--no-gpu-p2p"]
    if flashinfer_sampler(row):
        argv += ["--flashinfer-sampler"]
    if deep_gemm(row) is False:
        argv += ["--no-deep-gemm"]
    return [*argv, "--command", shlex.join(command_words(row))]


# GPUStack pages whose vLLM runs predate DeepGEMM in GPUStack's runner image: gpustack/runner pack/cuda/Dockerfile
# installed `vllm==${VLLM_VERSION}` alone until 796089a (2025-11-06, "cuda pack ep kernels": VLLM_DEEPGEMM_VERSION
# 2.1.1.post3, its first DeepGEMM build); the vllm wheel does not require deep_gemm.  The page's commits that wrote
# its vLLM blocks (gpustack/gpustack history of the path).  Later pages (qwen3-235b-a22b/h100.md, 2025-11-12) are
# left to the default: which image build they ran is not stated
GPUSTACK_NO_DEEP_GEMM = {
    "docs/performance-lab/deepseek-r1/h200.md": "72aee9dd (2025-10-15) and a5c9fafc (2025-10-31)",
}


def deep_gemm(row: dict[str, Any]) -> bool | None:
    """Whether the run's vLLM could run DeepGEMM: False for a GPUStack page written before its runner image
    installed DeepGEMM (:data:`GPUSTACK_NO_DEEP_GEMM`) and for a launch that sets VLLM_USE_DEEP_GEMM=0 (its
    environment, which :func:`command_words` leaves out: the row's ``unmodelled_flags``), predicted with
    ``--no-deep-gemm``; None: not known (assumed installed)."""
    if row["engine"] != "vllm":
        return None
    if row["source"]["repo"] == "gpustack/gpustack" and row["source"]["path"] in GPUSTACK_NO_DEEP_GEMM:
        return False
    if any(re.fullmatch(r"VLLM_USE_DEEP_GEMM=0+", f) for f in row.get("unmodelled_flags") or ()):
        return False
    return None


def flashinfer_sampler(row: dict[str, Any]) -> bool | None:
    """What the run's own start-up log shows of vLLM's sampler (``engine_log.flashinfer_sampler``: True where it logs
    FlashInfer's top-k/top-p kernel, which a command line does not show): planned with ``--flashinfer-sampler``,
    whose start-up sampler pass peaks lower than the PyTorch path's; None (not shown): the planner's default."""
    return (row.get("engine_log") or {}).get("flashinfer_sampler")


def no_p2p(row: dict[str, Any]) -> bool:
    """Whether the run's own log shows its GPUs without peer-to-peer access (``hardware.gpu_p2p`` false): predicted
    with ``--no-gpu-p2p``."""
    return (row.get("hardware") or {}).get("gpu_p2p") is False


def facts_for(row: dict[str, Any], cfg: Path, need: int) -> ServingFacts:
    """The plan facts ``launchcard predict --command`` builds: a vLLM command read as vLLM's flags, an SGLang
    command with SGLang's own defaults (``predict.sglang_plan``), a trtllm-serve command as its options set it
    (``predict.read_serve_command``); a run whose
    GPUs had no peer-to-peer access with the host-link figures (``--no-gpu-p2p``)."""
    version = row["engine_version"]
    hw = HardwareFigures.from_accelerator(find(row["gpu"])).without_p2p() if no_p2p(row) else None
    if row["engine"] == "vllm":
        s = settings_from_argv(command_words(row), Settings(vllm_version=version,
                                                            flashinfer_sampler=flashinfer_sampler(row),
                                                            deep_gemm=deep_gemm(row)))
        check_context(cfg, s.max_model_len, need, version, name=str(cfg))
        return serving_facts(cfg, s.validate(), gpu=row["gpu"], engine="vllm", hardware=hw)
    if row["engine"] == "sglang":
        arch, vision = sglang_model_traits(cfg)
        plan = sglang_plan(command_words(row), gpu_memory_gib=find(row["gpu"]).memory_gib, version=version,
                           vision=vision, architecture=arch)
        facts = sglang_serving_facts(cfg, plan, gpu=row["gpu"], hardware=hw)
        if need > facts.max_model_len:
            raise InputError(f"the workload needs {need} tokens of context, more than the plan's "
                             f"{facts.max_model_len}", where="--isl", fix="a longer --context-length")
        return facts
    # a trtllm-serve command: its options as the memory planner's settings, the rest (KV fraction, chunked
    # prefill, an options file named) as the launch's own (predict.read_serve_command)
    over, launch = read_serve_command(command_words(row))
    s = replace(Settings(), **over)
    check_context(cfg, s.max_model_len, need, None, name=str(cfg))
    # the release the page states (the CLI's --engine-version): what the prediction's domain findings compare and
    # the release rules read (TrtllmLaunch.release)
    return serving_facts(cfg, s.validate(), gpu=row["gpu"], engine=row["engine"], hardware=hw,
                         trtllm=replace(launch, release=version))


def predict_row(row: dict[str, Any], configs: Path = CONFIGS, coef: Coefficients | None = None, *,
                feed: str = "client") -> dict[str, Any]:
    """One run predicted: measured and predicted figures, errors (signed, relative), or the one-line refusal.
    ``coef``: None = the shipped set of the row's engine (what ``launchcard predict`` uses); ``feed``: see
    :func:`workload`."""
    cfg = config_file(row["config"]["file"], configs)
    w = workload(row, feed)
    out: dict[str, Any] = {"id": row["id"], "url": row["source"]["url"], "model": row["model"], "gpu": row["gpu"],
                           "engine": row["engine"], "source": row["id"].split(":", 1)[0],
                           "plain": not row["unmodelled_flags"], "concurrency": row["workload"]["concurrency"],
                           "isl": w.isl, "osl": w.osl, "requests": w.num_requests, "arrivals": w.arrivals,
                           "lengths": lengths(row)[1], "feed": feed, "dataset": row["workload"]["dataset"],
                           "cli": "launchcard " + shlex.join(cli_argv(row, configs)),
                           "one_gpu": row["plan"]["tp"] * row["plan"]["pp"] * (
                               1 if row["plan"].get("dp_attention") else row["plan"]["dp"]) == 1}
    try:
        p = predict(facts_for(row, cfg, sum(w.longest())), w, coef)
    except LaunchcardError as exc:
        out["error"] = exc.one_line()
        return out
    pred = {"tpot_ms_mean": p.tpot_ms_mean, "ttft_ms_mean": p.ttft_ms_mean, "output_tok_per_s": p.output_tok_per_s}
    # where the run stands outside the runs the coefficient set was fitted on (the prediction's own findings)
    out["outside"] = sorted({f.code for f in p.findings if f.code in DOMAIN_CODES})
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


def domain(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The predicted rows inside their coefficient set's calibrated domain (no ``domain-*`` finding) and outside
    it, all causes together and by cause (a row outside for several causes counts under each)."""
    ok = [r for r in rows if "error" not in r]
    out = {"calibrated domain: inside": summarize([r for r in ok if not r["outside"]]),
           "calibrated domain: outside": summarize([r for r in ok if r["outside"]])}
    for code in DOMAIN_CODES:
        mine = [r for r in ok if code in r["outside"]]
        if mine:
            out[f"calibrated domain: outside ({code.removeprefix('domain-')})"] = summarize(mine)
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
        # what the client states of the lengths: random prompts are exact (vllm bench serve's default range ratio
        # 0; outputs may stop early), SGLang's uniform draws are stated, vllm bench serve's ShareGPT runs take
        # ShareGPT's per-request lengths; SGLang's ShareGPT runs and unlabelled ones keep their means
        stated = ("uniform lengths stated" if r["lengths"].startswith("uniform") else
                  "ShareGPT per-request lengths" if r["lengths"].startswith("ShareGPT") else
                  "random prompts (exact lengths)" if r["dataset"] == "random" else
                  "other datasets or unlabelled (mean lengths)")
        for k in (f"engine {r['engine']}", f"source {r['source']}", f"gpu {r['gpu']}", load(r), f"{load(r)}, {isl}",
                  arrivals, f"{arrivals}, {vendor} GPUs", f"{arrivals}, {stated}",
                  f"source {r['source']}, {'one GPU' if r['one_gpu'] else 'several GPUs'}",
                  "plain commands" if r["plain"] else "commands with unmodelled flags"):
            groups.setdefault(k, []).append(r)
    return {k: summarize(v) for k, v in sorted(groups.items())} | domain(rows)


def fmt(x: float, signed: bool = False) -> str:
    if math.isnan(x):
        return "n/a"
    return f"{x * 100:+.0f}%" if signed else f"{x * 100:.1f}%"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fixture", type=Path, default=FIXTURE)
    ap.add_argument("--limit", type=int, default=None, help="first N rows only")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--readme", action="store_true", help="the README's table and ranking lines")
    ap.add_argument("--feed", choices=("client", "means"), default="client",
                    help="client: each run's own arrivals and stated lengths (default); means: the earlier feed, "
                         "every run a closed loop of exact mean lengths")
    args = ap.parse_args(argv)
    if not args.fixture.is_file():
        ap.error(f"--fixture {args.fixture}: no such file; pass a held-out fixture (default {FIXTURE})")
    doc = load(args.fixture)
    rows = doc["rows"][: args.limit] if args.limit else doc["rows"]
    t0, c0 = time.perf_counter(), time.process_time()
    configs = args.fixture.parent / CONFIGS.name
    scored = [predict_row(r, configs, feed=args.feed) for r in rows]
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    other = "means" if args.feed == "client" else "client"
    before = [predict_row(r, configs, feed=other) for r in rows]
    plain = roofline_sets()
    roofline = summarize([predict_row(r, configs, plain[r["engine"]]) for r in rows])
    result: dict[str, Any] = {"rows": len(rows), "all": summarize(scored), "plain_roofline": roofline,
                              "regimes": regimes(scored),
                              f"feed_{other}": {"all": summarize(before), "regimes": regimes(before)},
                              "domain": domain(scored), "ranking": rankings(scored), "wall_s": round(wall, 2),
                              "cpu_s": round(cpu, 2),
                              "scored": scored}
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    if args.readme:
        print(readme_table(result))
        return 0
    print(f"{len(rows)} held-out runs from {args.fixture.name} ({wall:.1f} s wall, {cpu:.1f} s CPU)\n")
    print("| rows | TPOT median / p90 | TTFT median | throughput median | signed median TPOT / TTFT / throughput "
          "| refused |")
    print("|---|---|---|---|---|---|")
    print(_line("all", result["all"]))
    print(_line("plain roofline (datasheet figures only, same simulation)", roofline))
    for k, s in result["regimes"].items():
        print(_line(k, s))
    print(f"\nThe same rows, feed {other} -> {args.feed} (median |error|, signed median):\n")
    print("| regime (rows) | TPOT | TTFT | throughput | signed TPOT / TTFT / throughput |")
    print("|---|---|---|---|---|")
    was = result[f"feed_{other}"]
    for k in ("all", *(k for k in result["regimes"] if k.startswith(("all sent at once", "closed loop")))):
        a, b = (was["all"], result["all"]) if k == "all" else (was["regimes"][k], result["regimes"][k])
        print(_change(k, a, b))
    for name, r in result["ranking"].items():
        print(f"\nSpearman, {name}: median {r['median']:.2f} over {len(r['groups'])} groups of >= 3 "
              f"({fmt(r['share_ge_0.9'])} of groups >= 0.9)")
    bad = [r for r in scored if "error" in r]
    for r in bad:
        print(f"refused {r['id']}: {r['error']}")
    return 0


# the README's rows: (label, key of result["regimes"]; None = the whole set, "roofline" = the plain roofline)
README_ROWS = (("all", None), ("plain roofline, same rows and simulation", "roofline"),
               ("closed loop, NVIDIA GPUs", "closed loop, NVIDIA GPUs"),
               ("closed loop, 1-8 clients", "closed loop c<=8"),
               ("closed loop, 9-64 clients", "closed loop c9-64"), ("closed loop, over 64 clients", "closed loop c>64"),
               ("closed loop, AMD GPUs", "closed loop, AMD GPUs"), ("all sent at once", "all sent at once"),
               ("vLLM", "engine vllm"), ("SGLang", "engine sglang"), ("TensorRT-LLM", "engine trtllm"),
               ("source gpustack", "source gpustack"), ("source sgl-cookbook", "source sgl-cookbook"),
               ("source dennislee", "source dennislee"),
               ("inside the calibrated domain", "calibrated domain: inside"),
               ("outside the calibrated domain", "calibrated domain: outside"),
               *((f"outside: {c.removeprefix('domain-')}", f"calibrated domain: outside ({c.removeprefix('domain-')})")
                 for c in DOMAIN_CODES))


def readme_table(result: dict[str, Any]) -> str:
    lines = ["| held-out runs (predicted / refused) | TPOT median / p90 | TTFT median | throughput median "
             "| signed median TPOT / TTFT / throughput |", "|---|---|---|---|---|"]
    for label, key in README_ROWS:
        s = result["all"] if key is None else result["plain_roofline"] if key == "roofline" else \
            result["regimes"].get(key)
        if not s:
            continue
        count = "" if key == "roofline" else f" ({s['rows']} / {s['refused']})"
        lines.append(f"| {label}{count} | {fmt(s['tpot_median'])} / {fmt(s['tpot_p90'])} | {fmt(s['ttft_median'])} "
                     f"| {fmt(s['tput_median'])} | {fmt(s['tpot_signed_median'], True)} / "
                     f"{fmt(s['ttft_signed_median'], True)} / {fmt(s['tput_signed_median'], True)} |")
    lines.append("")
    for name, r in result["ranking"].items():
        n = len(r["groups"])
        hi = round(r["share_ge_0.9"] * n) if n else 0
        lines.append(f"- Spearman, {name}: median {r['median']:.2f} over {n} groups ({hi} at 0.9 or more)")
    return "\n".join(lines)


def _change(name: str, a: dict[str, Any], b: dict[str, Any]) -> str:
    def pair(key: str, signed: bool = False) -> str:
        return f"{fmt(a[key], signed)} -> {fmt(b[key], signed)}"

    return (f"| {name} ({b['rows']}) | {pair('tpot_median')} | {pair('ttft_median')} | {pair('tput_median')} | "
            f"{pair('tpot_signed_median', True)} / {pair('ttft_signed_median', True)} / "
            f"{pair('tput_signed_median', True)} |")


def _line(name: str, s: dict[str, Any]) -> str:
    return (f"| {name} ({s['rows']}) | {fmt(s['tpot_median'])} / {fmt(s['tpot_p90'])} | {fmt(s['ttft_median'])} | "
            f"{fmt(s['tput_median'])} | {fmt(s['tpot_signed_median'], True)} / {fmt(s['ttft_signed_median'], True)}"
            f" / {fmt(s['tput_signed_median'], True)} | {s['refused']} |")


if __name__ == "__main__":
    sys.exit(main())
