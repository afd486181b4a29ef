"""Read the SGLang cookbook's published benchmark runs (../shared/corpus/sglang-cookbook): TEST data.

Each ``Serving Benchmark Result`` block of a page is one run. Its plan is the page's own server command
(the nearest ``sglang.launch_server`` / ``sglang serve`` block above the run's bench command), read by
:func:`launchcard.predict.sglang_plan` with SGLang's defaults filled; its workload is the bench command
(``sglang.bench_serving``, read with that tool's own option names and defaults) checked against what the
result block printed. Lengths are the run's measured means (total tokens / requests): the random and
ShareGPT datasets vary them per request, the step model predicts fixed lengths (each row says which).

These rows are scored, never fitted (bench/predict_accuracy.py).
"""

from __future__ import annotations

import argparse
import math
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"

_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.DOTALL | re.MULTILINE)
_FIELD = re.compile(r"^([^:\n]+):\s+(\S+)\s*$", re.MULTILINE)
_HW = re.compile(r"Hardware:\s*NVIDIA\s+(\S+)\s+GPU\s*\((\d+)x\)", re.IGNORECASE)
_VERSION = re.compile(r"sglang version:\s*`?v?([0-9][0-9a-z.]*)", re.IGNORECASE)
_SERVER = re.compile(r"(?:python3?\s+-m\s+sglang\.launch_server|sglang\s+serve)\b")
_BENCH = re.compile(r"python3?\s+-m\s+sglang\.bench_serving\b")

# sglang.bench_serving's options that shape the workload, with the tool's defaults (SGLang 0.5.6.post2
# python/sglang/bench_serving.py:2612-2727; the same in 0.5.6); argparse's prefix matching is the tool's too
# (the gpt-oss page writes --num-prompt)
_BENCH_ARGS = argparse.ArgumentParser(add_help=False, allow_abbrev=True)
_BENCH_ARGS.add_argument("--dataset-name", default="sharegpt")
_BENCH_ARGS.add_argument("--num-prompts", type=int, default=1000)
_BENCH_ARGS.add_argument("--sharegpt-output-len", type=int, default=None)
_BENCH_ARGS.add_argument("--random-input-len", type=int, default=1024)
_BENCH_ARGS.add_argument("--random-output-len", type=int, default=1024)
_BENCH_ARGS.add_argument("--random-range-ratio", type=float, default=0.0)
_BENCH_ARGS.add_argument("--request-rate", type=float, default=math.inf)
_BENCH_ARGS.add_argument("--max-concurrency", type=int, default=None)
_BENCH_ARGS.add_argument("--model", default=None)
_BENCH_ARGS.add_argument("--image-count", type=int, default=1)
_BENCH_ARGS.add_argument("--image-resolution", default="1080p")

# Pages whose runs the step model cannot be compared with, and the page's own evidence (scored and shown,
# never in the comparable medians). Judged from the pages and the engine releases they name, not from the error.
NOT_COMPARABLE = {
    "sglang-cookbook/Kimi-K2.5/Kimi-K2.5.mdx": (
        "engine build unknown: the page names SGLang 0.5.6.post2, whose wheel registers no model for "
        "KimiK25ForConditionalGeneration (sglang/srt/models/ has no kimi_k25; added in 0.5.9, "
        "sglang/srt/models/kimi_k25.py), so that release's loader takes the Transformers fallback "
        "(sglang/srt/model_loader/utils.py:99-105, 68-80), which runs no MLA; and the page's own runs show a cost "
        "no GPU step of the native path has: at one client the 8K/1K and 1K/1K runs generate the same 4,220 tokens "
        "and TPOT goes 9.22 -> 24.95 ms for +3,584 prompt tokens (4.4 us per context token per step, ~300x the "
        "70 KB MLA latent read at H200 bandwidth); from 16 to 100 clients output throughput stays 253-258 tok/s "
        "while the same runs print peaks of 1,103-1,199 tok/s"),
}


@dataclass
class BenchPoint:
    """One published run: where it is, the plan's command, the workload, what was measured."""

    where: str  # page#Lline of the result block
    page: str
    model: str
    gpu: str
    gpu_count: int
    release: str | None
    server: tuple[str, ...]
    bench: tuple[str, ...]
    dataset: str
    lengths: str  # how the tool drew the lengths
    isl: int  # measured means
    osl: int
    concurrency: int | None  # bench --max-concurrency (a closed loop when rate is None), else None
    rate: float | None  # Poisson requests/s (inf with no concurrency: every request at once), None: closed loop
    requests: int
    ttft_ms: float
    tpot_ms: float
    itl_ms: float | None
    out_tok_s: float
    peak_out_tok_s: float | None
    accept_length: float | None
    problems: list[str] = field(default_factory=list)  # where the result does not match its command
    not_comparable: str | None = None
    # the tool's uniform draw [lo, hi] as the predictor's range ratio around the measured means (vllm bench
    # serve's form, [L(1-r), L(1+r)]: r = (hi - lo) / (hi + lo), the wider of prompt and output); 0: exact means
    range_ratio: float = 0.0


def _words(block: str) -> list[str]:
    text = re.sub(r"\\\n", " ", block)
    return shlex.split(text, comments=True)


def _numbers(block: str) -> dict[str, str]:
    return {k.strip(): v for k, v in _FIELD.findall(block)}


def _num(f: dict[str, str], key: str) -> float | None:
    try:
        return float(f[key])
    except (KeyError, ValueError):
        return None


def acceptance_from_length(accept_length: float, steps: int) -> float:
    """Per-token acceptance ``a`` of a chain of ``steps`` drafts whose mean tokens per verify step is
    ``accept_length`` (1 + a + ... + a^steps); bisection, clamped to [0, 0.99]."""
    if steps <= 0 or accept_length <= 1.0:
        return 0.0
    if accept_length >= steps + 1:
        return 0.99
    lo, hi = 0.0, 0.99
    for _ in range(60):
        mid = (lo + hi) / 2
        tau = (1 - mid ** (steps + 1)) / (1 - mid)
        lo, hi = (mid, hi) if tau < accept_length else (lo, mid)
    return round((lo + hi) / 2, 4)


def read_page(page: Path, root: Path = CORPUS) -> list[BenchPoint]:
    """Every run of one cookbook page, in page order."""
    text = page.read_text(encoding="utf-8", errors="replace")
    rel = str(page.relative_to(root))
    blocks = [(m.start(), m.group(1)) for m in _FENCE.finditer(text)]
    out: list[BenchPoint] = []
    server: tuple[str, ...] | None = None
    bench: tuple[str, ...] | None = None
    for pos, body in blocks:
        if _SERVER.search(body):
            server, bench = tuple(_words(body[_SERVER.search(body).start():])), None  # type: ignore[union-attr]
            continue
        if _BENCH.search(body):
            bench = tuple(_words(body[_BENCH.search(body).start():]))  # type: ignore[union-attr]
            continue
        if "Serving Benchmark Result" not in body:
            continue
        line = text.count("\n", 0, pos) + 2  # the block's first line (after the fence)
        before = text[:pos]
        hw = list(_HW.finditer(before))
        ver = list(_VERSION.finditer(before))
        f = _numbers(body)
        n = int(_num(f, "Successful requests") or 0)
        if not (server and bench and hw and n and _num(f, "Mean TPOT (ms)") is not None):
            continue
        args, _ = _BENCH_ARGS.parse_known_args(list(bench[3:]))
        problems: list[str] = []
        if n != args.num_prompts:
            problems.append(f"{n} successful requests, the command asked {args.num_prompts}")
        printed_c = f.get("Max request concurrency")
        if printed_c not in (None, "not set") and args.max_concurrency is not None and \
                int(float(printed_c)) != args.max_concurrency:
            problems.append(f"printed concurrency {printed_c}, the command --max-concurrency {args.max_concurrency}")
        printed_rate = _num(f, "Traffic request rate")
        if printed_rate is not None and printed_rate != args.request_rate:
            problems.append(f"printed request rate {printed_rate}, the command {args.request_rate}")
        ratio = 0.0
        if args.dataset_name == "random":
            # compute_random_lens (bench_serving.py:1251-1256): uniform integers in [max(int(L x ratio), 1), L]
            lo = max(int(args.random_input_len * args.random_range_ratio), 1)
            lo_o = max(int(args.random_output_len * args.random_range_ratio), 1)
            lengths = (f"random: input uniform {lo}..{args.random_input_len}, output uniform "
                       f"{lo_o}..{args.random_output_len}")
            ratio = max((args.random_input_len - lo) / (args.random_input_len + lo),
                        (args.random_output_len - lo_o) / (args.random_output_len + lo_o))
        elif args.dataset_name == "image":
            # sample_image_requests draws the text and output lengths by the random dataset's rule (its docstring
            # "Text lengths follow the 'random' dataset sampling rule"; SGLang 0.5.6 bench_serving.py L1441-1463,
            # 0.5.9 L1772, L1799-1808, compute_random_lens L1528-1534) and adds --image-count images (default 1, at
            # --image-resolution default 1080p: 0.5.6 L2613-2621) to every prompt, whose tokens
            # the printed input total counts but the text length does not: only the outputs spread around their
            # mean as the random dataset's do.  0.5.6 draws outputs from [int(L x ratio), L] (0 at ratio 0), 0.5.8
            # on from [max(int(L x ratio), 1), L]: counted from 1 (a 0-token request is 1 in L + 1)
            lo = max(int(args.random_input_len * args.random_range_ratio), 1)
            lo_o = max(int(args.random_output_len * args.random_range_ratio), 1)
            lengths = (f"image: {args.image_count} x {args.image_resolution} images, text uniform {lo}.."
                       f"{args.random_input_len}, output uniform {lo_o}..{args.random_output_len}")
            ratio = (args.random_output_len - lo_o) / (args.random_output_len + lo_o)
        elif args.dataset_name == "sharegpt":
            lengths = "ShareGPT conversations: each request's own lengths" + (
                f", output fixed {args.sharegpt_output_len}" if args.sharegpt_output_len else "")
        else:
            lengths = f"{args.dataset_name} dataset"
        # bench_serving's arrivals in the predictor's terms: --max-concurrency at rate inf is a closed loop; no cap at
        # rate inf sends every request at once (a burst); a finite rate is Poisson, capped by --max-concurrency
        conc: int | None = args.max_concurrency
        rate: float | None = None if conc is not None and math.isinf(args.request_rate) else args.request_rate
        model_word = next((server[i + 1] for i, w in enumerate(server[:-1])
                           if w in ("--model", "--model-path")), None)
        out.append(BenchPoint(
            where=f"{rel}#L{line}", page=rel, model=model_word or (args.model or ""), gpu=hw[-1].group(1).lower(),
            gpu_count=int(hw[-1].group(2)), release=ver[-1].group(1) if ver else None, server=server, bench=bench,
            dataset=args.dataset_name, lengths=lengths,
            isl=max(1, round((_num(f, "Total input tokens") or 0) / n)),
            osl=max(2, round((_num(f, "Total generated tokens") or 0) / n)), concurrency=conc, rate=rate,
            requests=n, ttft_ms=_num(f, "Mean TTFT (ms)") or math.nan, tpot_ms=_num(f, "Mean TPOT (ms)") or math.nan,
            itl_ms=_num(f, "Mean ITL (ms)"), out_tok_s=_num(f, "Output token throughput (tok/s)") or math.nan,
            peak_out_tok_s=_num(f, "Peak output token throughput (tok/s)"), accept_length=_num(f, "Accept length"),
            problems=problems, not_comparable=NOT_COMPARABLE.get(rel), range_ratio=round(ratio, 4)))
    return out


def corpus_points(root: Path = CORPUS) -> list[BenchPoint]:
    """Every run of every cookbook page under ``root``/sglang-cookbook."""
    out: list[BenchPoint] = []
    for page in sorted((root / "sglang-cookbook").glob("*/*.mdx")):
        out += read_page(page, root)
    return out


# -- the cookbook's per-cell benchmark tables (docs/src/snippets/configs/<org>/<name>-benchmarks.jsx) ----------
# Excerpts fetched from sgl-project/sglang at a pinned commit (tests/fixtures/sglang-benchmarks, each file's header
# names it); every entry is keyed to a deployment-panel cell whose server flags the corpus' *.config-summary.md
# holds. TEST data like the pages: scored, never fitted.
FIXTURES = ROOT / "tests" / "fixtures" / "sglang-benchmarks"
# full configs only: the corpus' hf/ (tests/fixtures/hf holds trimmed test configs, e.g. GLM-5.3-Flash's)
CONFIGS = (CORPUS / "hf",)
_SIM_ACC = re.compile(r"SGLANG_SIMULATE_ACC_LEN=(\d+(?:\.\d+)?)")
_RANGE = re.compile(r"range ratio (\d+(?:\.\d+)?)")
# speculative algorithms the step model has a draft rule for (SGLang's names)
KNOWN_SPEC = frozenset({"EAGLE", "EAGLE3", "NEXTN", "NGRAM", "STANDALONE"})


# rows whose entry says the run differs from its panel cell as the summary has it (the summaries were read at a
# later commit than the tables): (file, entry line) -> (flag, value, the evidence)
CELL_DIFFERS = {
    ("zai-org/glm-5.3-flash-benchmarks.jsx", 27): (
        "--kv-cache-dtype", "bfloat16",
        "BF16 KV + TileLang DSA: the FP8 entry of the same table (line 73) reads '1,227.07 / 2,738.61 / 4,977.02 "
        "aggregate output tok/s ... 2.9-5.7% above BF16 + TileLang across the curve', against this entry's "
        "1,161.22 / 2,660.24 / 4,828.33; the cell (read later) has --kv-cache-dtype fp8_e4m3"),
}


def config_for(model: str) -> Path | None:
    """The model's config.json in the corpus' hf/ (names compared case-insensitively)."""
    org, _, name = model.partition("/")
    for base in CONFIGS:
        for d in (base / org).glob("*") if (base / org).is_dir() else ():
            if d.name.lower() == name.lower() and (d / "config.json").is_file():
                return d / "config.json"
    return None


def _set_flag(argv: tuple[str, ...], flag: str, value: str) -> tuple[str, ...]:
    out = list(argv)
    if flag in out:
        out[out.index(flag) + 1] = value
    else:
        out += [flag, value]
    return tuple(out)


def table_points(fixtures: Path = FIXTURES, corpus: Path = CORPUS) -> list[BenchPoint]:
    """Every speed row of the benchmark tables under ``fixtures`` whose entry names its panel cell, as a run:
    the cell's flags are the server command, the row's workload the bench's (nominal lengths)."""
    from launchcard.sources.sglang_benchmarks import load_points, read_benchmark_file

    # every model a table can name: <org>/<stem>-<variant> per entry, else <org>/<stem> (the reader's own rule)
    models: set[str] = set()
    for f in sorted(fixtures.rglob("*-benchmarks.jsx")):
        bf = read_benchmark_file(f)
        for e in bf.entries:
            variant = (e.get("match") or {}).get("variant")
            models.add(f"{bf.org}/{bf.stem}-{variant}" if variant else f"{bf.org}/{bf.stem}")
    out: list[BenchPoint] = []
    for p in load_points([fixtures], sorted(models), [corpus / "sglang-cookbook"]):
        w = dict(p.workload or {})
        if not w or "ttft_ms" not in p.results or not p.flags:
            continue
        isl, osl, conc = int(w.get("isl", 0)), int(w.get("osl", 0)), int(w.get("max_concurrency", 0))
        n = int(w["num_prompts"]) if "num_prompts" in w else 0
        notes = p.notes or ""
        gpus = p.gpus or 1
        # tokens_per_sec_per_gpu is total (input + output) tok/s per GPU: the reader's output figure (output_per_gpu)
        out_tok = float(p.results["output_tokens_per_sec_per_gpu"]) * gpus
        acc = _SIM_ACC.search(notes)
        rr = _RANGE.search(notes)
        cfg = config_for(p.model)  # the checkpoint's own spelling where the corpus has it
        model = f"{p.model.split('/')[0]}/{cfg.parent.name}" if cfg else p.model
        server = ("python", "-m", "sglang.launch_server", *(model if a == "{{MODEL_NAME}}" else a for a in p.flags))
        algo = next((server[i + 1] for i, a in enumerate(server[:-1]) if a == "--speculative-algorithm"), None)
        why = None
        if algo and algo.upper() not in KNOWN_SPEC:
            why = (f"speculative algorithm {algo}: launchcard has no draft rule for it (draft length and cost "
                   "unknown), so the step model cannot time this plan")
        src = p.source_url or ""
        rel = src.split("/configs/")[-1].split("#")[0] if "/configs/" in src else src
        rel = f"tests/fixtures/sglang-benchmarks/{rel}"
        problems = [] if n else [f"number of requests not published: {10 * conc} assumed (10 x concurrency)"]
        if not rr:
            problems.append("length distribution not published: fixed lengths assumed")
        differs = CELL_DIFFERS.get((rel.split("sglang-benchmarks/")[-1], p.line or 0))
        if differs:
            server = _set_flag(server, differs[0], differs[1])
            problems.append(f"run differs from its cell: {differs[0]} {differs[1]} ({differs[2]})")
        out.append(BenchPoint(
            where=f"{rel}#L{p.line}", page=rel, model=model, gpu=str(p.hardware), gpu_count=gpus,
            release=p.engine_version, server=server, bench=(), dataset=str(w.get("dataset", "random")),
            lengths=(f"random, range ratio {rr.group(1)}" if rr else "random, range ratio not published"),
            isl=isl, osl=osl, concurrency=conc, rate=None, requests=n or 10 * conc,
            ttft_ms=float(p.results["ttft_ms"]), tpot_ms=float(p.results["tpot_ms"]), itl_ms=None,
            out_tok_s=out_tok, peak_out_tok_s=None, accept_length=float(acc.group(1)) if acc else None,
            problems=problems, not_comparable=why))
    return out
