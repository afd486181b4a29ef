"""Score ``launchcard predict`` on public measured AMD (ROCm) serving runs that are not the SGLang cookbook's
(report only: nothing is fitted, no coefficient moves).

The runs are in ``tests/fixtures/predict_amd_runs.json``, each with its source (repository, commit, path, line).
Source so far: dstack's "DeepSeek R1 inference performance: MI300X vs. H200" (dstackai/dstack
docs/blog/posts/h200-mi300x-deepskeek-benchmark.md), whose data is github dstackai/benchmarks
Deepseek-R1/raw_data/online_results.csv at 7f37e669 (every online row there), with the servers' commands and
releases from Deepseek-R1/README.md at the same commit.  The same client (SGLang's bench_serving, 500 prompts,
random tokens, --random-range-ratio 1: exact lengths) measured H200 under the same harness, so the H200 rows are
the same-source control: a platform term is only a platform term where the H200 rows of the same source are
predicted right.  The rows are scored with the held-out bench's own replay (``predict_heldout.predict_row``).

    git -C <dstackai/benchmarks> show 7f37e669:Deepseek-R1/raw_data/online_results.csv > /tmp/online.csv
    python bench/predict_amd.py --extract /tmp/online.csv     # (re)write the fixture from that file
    python bench/predict_amd.py [--json]                       # score every row with the shipped sets
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from predict_heldout import predict_row  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "predict_amd_runs.json"
REPO, COMMIT = "dstackai/benchmarks", "7f37e6697725e58dd09b9ef190b62ce19f01d45e"
CSV_PATH, README = "Deepseek-R1/raw_data/online_results.csv", "Deepseek-R1/README.md"
BLOB = f"https://github.com/{REPO}/blob/{COMMIT}"
# (gpu, backend) -> the server each row ran: README.md at 7f37e669, its "dstack Task" blocks (image, command;
# L155-L180 SGLang, L261-L292 vLLM) and its "Environment" blocks (the release each container reported: L28 SGLang
# 0.4.3.post2 on H200, L63 SGLang 0.4.2.post4 on MI300X, L108 vLLM 0.7.4.dev181+gf35f8e22 on H200, L137 vLLM
# 0.7.3.dev138+g21f6ca217 on MI300X).  The H200 SGLang server ran with --enable-dp-attention, the MI300X one
# without (L160 vs L178): not the same plan.  ``release`` is what the prediction is told (the dev builds' base).
SERVERS: dict[tuple[str, str], dict[str, Any]] = {
    ("mi300x", "sglang"): {
        "line": 178, "release": "0.4.2.post4", "stated": "0.4.2.post4 (README L63)",
        "image": "rocm/sglang-staging:20250212", "env": ["HSA_NO_SCRATCH_RECLAIM=1"],
        "command": "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-R1 --tp 8 "
                   "--trust-remote-code"},
    ("h200", "sglang"): {
        "line": 160, "release": "0.4.3.post2", "stated": "0.4.3.post2 (README L28)",
        "image": "lmsysorg/sglang:latest", "env": [],
        "command": "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-R1 --tp 8 "
                   "--trust-remote-code --enable-dp-attention"},
    ("mi300x", "vllm"): {
        "line": 291, "release": "0.7.3", "stated": "0.7.3.dev138+g21f6ca217 (README L137)",
        "image": "rocm/vllm-dev:vllm-ds3-staging-0217", "env": ["VLLM_FP8_PADDING=0", "VLLM_USE_TRITON_FLASH_ATTN=0"],
        "command": "vllm serve deepseek-ai/DeepSeek-R1 --tensor-parallel-size 8 --trust-remote-code "
                   "--max-model-len 32768"},
    ("h200", "vllm"): {
        "line": 271, "release": "0.7.4", "stated": "0.7.4.dev181+gf35f8e22 (README L108)",
        "image": "vllm/vllm-openai:v0.7.3 + the nightly wheel", "env": ["VLLM_ATTENTION_BACKEND=FLASHMLA"],
        "command": "vllm serve deepseek-ai/DeepSeek-R1 --trust-remote-code --tensor-parallel-size 8"},
}


def extract(csv_text: str) -> dict[str, Any]:
    """The fixture from online_results.csv's text: every ``random`` row of an SGLang or vLLM server (the
    generated-shared-prefix rows test prefix caching, a workload the replay does not model; TensorRT-LLM ran on
    H200 only), its CSV line, the server that README.md states for it."""
    rows, left = [], {"generated-shared-prefix (prefix-cache workload)": 0, "trt-llm (H200 only)": 0}
    for line_no, rec in enumerate(csv.DictReader(csv_text.lstrip("\ufeff").splitlines()), start=2):
        gpu, backend, data = rec["GPU"], rec["backend"], rec["dataset_name"]
        if backend == "trt-llm":
            left["trt-llm (H200 only)"] += 1
            continue
        if data != "random":
            left["generated-shared-prefix (prefix-cache workload)"] += 1
            continue
        srv = SERVERS[(gpu, backend)]
        conc, n = int(rec["max_concurrency"]), int(rec["completed"])
        rows.append({
            "id": f"dstack:{CSV_PATH}#L{line_no}",
            "source": {"repo": REPO, "commit": COMMIT, "path": CSV_PATH, "line": line_no,
                       "url": f"{BLOB}/{CSV_PATH}#L{line_no}", "command_url": f"{BLOB}/{README}#L{srv['line']}",
                       "label": None},
            "model": "deepseek-ai/DeepSeek-R1",
            "config": {"file": "deepseek-ai--DeepSeek-R1_config.json", "note": None},
            "gpu": gpu, "gpus": 8, "engine": backend, "engine_version": srv["release"],
            "engine_version_stated": srv["stated"], "image": srv["image"],
            "serve_command": srv["command"],
            "plan": {"tp": 8, "pp": 1, "dp": 1, "ep": False, "quantization": None, "kv_cache_dtype": None,
                     "max_num_seqs": None, "max_num_batched_tokens": None,
                     "max_model_len": 32768 if "max-model-len" in srv["command"] else None,
                     "gpu_memory_utilization": None, "dp_attention": "--enable-dp-attention" in srv["command"]},
            "unmodelled_flags": list(srv["env"]),
            "workload": {"requests": n, "concurrency": conc, "request_rate": None, "arrivals": "closed loop",
                         "isl_mean": int(rec["total_input_tokens"]) / n,
                         "osl_mean": int(rec["total_output_tokens"]) / n, "dataset": None},
            "measured": {"ttft_ms_mean": float(rec["mean_ttft_ms"]), "ttft_ms_median": float(rec["median_ttft_ms"]),
                         "tpot_ms_mean": float(rec["mean_tpot_ms"]), "tpot_ms_median": float(rec["median_tpot_ms"]),
                         "itl_ms_mean": float(rec["mean_itl_ms"]),
                         "output_tok_per_s": float(rec["output_throughput"]),
                         "request_per_s": float(rec["request_throughput"]), "duration_s": float(rec["duration"])},
        })
    return {"about": {
        "what": "Public measured AMD (ROCm) serving runs outside the SGLang cookbook, with the same source's H200 runs "
                "as its control (bench/predict_amd.py). Report only: no set is fitted on them.",
        "source": f"dstack blog 'DeepSeek R1 inference performance: MI300X vs. H200' (2025-03-18); data {BLOB}/"
                  f"{CSV_PATH}, commands and releases {BLOB}/{README}",
        "client": "SGLang bench_serving (Deepseek-R1/bench_serving.py), --dataset-name random --random-input 3200 "
                  "--random-output 800/1600/3200/6400 --random-range-ratio 1 (exact lengths) --num-prompts 500 "
                  "--max-concurrency C (README L300-L331)",
        "left_out": left}, "rows": rows}


def score(fixture: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for row in fixture["rows"]:
        r = predict_row(row)
        r["engine_version"] = row["engine_version"]
        out.append(r)
    return out


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| gpu | engine | C | osl | TPOT meas | TPOT pred | TPOT err | TTFT meas | TTFT pred | tok/s err |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['gpu']} | {r['engine']} | {r['concurrency']} | {r['osl']} | refused: {r['error']} |")
            continue
        m, p = r["measured"], r["predicted"]
        lines.append(f"| {r['gpu']} | {r['engine']} | {r['concurrency']} | {r['osl']} | {m['tpot_ms_mean']:.1f} | "
                     f"{p['tpot_ms_mean']:.1f} | {r['tpot']:+.0%} | {m['ttft_ms_mean']:.0f} | "
                     f"{p['ttft_ms_mean']:.0f} | {r['tput']:+.0%} |")
    return "\n".join(lines)


def groups(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per (gpu, engine): the median signed TPOT error and the median measured/predicted TPOT ratio."""
    res: dict[str, dict[str, Any]] = {}
    for key in sorted({(r["gpu"], r["engine"]) for r in rows}):
        ok = [r for r in rows if (r["gpu"], r["engine"]) == key and "error" not in r]
        if not ok:
            continue
        ratio = [r["measured"]["tpot_ms_mean"] / r["predicted"]["tpot_ms_mean"] for r in ok]
        res[f"{key[0]}:{key[1]}"] = {"rows": len(ok), "tpot_signed_median": statistics.median(r["tpot"] for r in ok),
                                    "tpot_abs_median": statistics.median(abs(r["tpot"]) for r in ok),
                                    "measured_over_predicted_median": statistics.median(ratio),
                                    "measured_over_predicted_range": [min(ratio), max(ratio)]}
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--extract", type=Path, help="online_results.csv (git show of it at 7f37e669): rewrite the fixture")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.extract:
        FIXTURE.write_text(json.dumps(extract(args.extract.read_text()), indent=1) + "\n")
        print(f"wrote {FIXTURE.relative_to(ROOT)}")
        return 0
    rows = score(json.loads(FIXTURE.read_text()))
    g = groups(rows)
    if args.json:
        print(json.dumps({"rows": rows, "groups": g}, indent=1))
        return 0
    print(table(rows))
    print()
    for k, v in g.items():
        lo, hi = v["measured_over_predicted_range"]
        print(f"{k}: {v['rows']} rows, TPOT signed median {v['tpot_signed_median']:+.0%}, |err| median "
              f"{v['tpot_abs_median']:.0%}, measured/predicted median {v['measured_over_predicted_median']:.2f} "
              f"({lo:.2f}-{hi:.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
