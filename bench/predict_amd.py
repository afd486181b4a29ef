"""Score ``launchcard predict`` on public measured AMD (ROCm) serving runs that are not the SGLang cookbook's, and
fit the ROCm set rocm:sglang on InferenceX's CDNA3 (MI300X, MI325X) runs (--fit).

The runs are in ``tests/fixtures/predict_amd_runs.json``, each with its source (repository, commit, path, line).
Sources: (1) InferenceX (SemiAnalysis), the same harness and database as the calibration's InferenceX rows:
its MI300X SGLang 0.5.9 DeepSeek-R1-0528 FP8 TP8 sweep (run 22469096331, 2026-02-27: 1k/1k, 1k/8k, 8k/1k at 4-64
clients), read from github SemiAnalysisAI/InferenceX-app packages/app/cypress/fixtures/api/benchmarks.json at
3a600f1d (a snapshot of InferenceX's benchmarks API), with the same sweep's H200 rows (run 23552373331,
2026-03-25) as control: those 15 are calibration rows (aiconfigurator-core 0.12.0 silicon_sample.csv
dsr1_h200_sglang_fp8_agg_*_cfg81, TPOT and TTFT equal to the last digit), so the snapshot is InferenceX's own
numbers.  The same snapshot (InferenceX's API rows for DeepSeek-R1 only: no other model, no AMD vLLM run; its
MI355X FP4 rows need amd/DeepSeek-R1-0528-MXFP4's config, which no fixture, corpus or wheel holds) adds the MI325X
sweep of the same run and command and MI355X's (runs 22725876766 and 25281476062, dsr1_fp8_mi355x.sh at 9d39c92ee
and a2180b61c): IX_SERVERS.  Servers: SemiAnalysisAI/InferenceX benchmarks/single_node/dsr1_fp8_mi300x.sh L33-L50
at f267602ff (2026-02-26, image and sweep .github/configs/amd-master.yaml L75-L95) and dsr1_fp8_h200.sh L29-L48
at 1cb92d21d (2026-03-24; nvidia-master.yaml L2023-L2043); client: InferenceX's benchmark_serving,
--random-range-ratio 0.8 (benchmark-tmpl.yml L67), 10 x C prompts, C clients (the scripts' run_benchmark_serving).
(2) dstack's "DeepSeek R1 inference performance: MI300X vs. H200" (dstackai/dstack
docs/blog/posts/h200-mi300x-deepskeek-benchmark.md), whose data is github dstackai/benchmarks
Deepseek-R1/raw_data/online_results.csv at 7f37e669 (every online row there), with the servers' commands and
releases from Deepseek-R1/README.md at the same commit.  The same client (SGLang's bench_serving, 500 prompts,
random tokens, --random-range-ratio 1: exact lengths) measured H200 under the same harness, so the H200 rows are
the same-source control (for both sources): a platform term is only a platform term where the H200 rows of the
same source are predicted right.  The rows are scored with the held-out bench's own replay
(``predict_heldout.predict_row``).

    git -C <dstackai/benchmarks> show 7f37e669:Deepseek-R1/raw_data/online_results.csv > /tmp/online.csv
    python bench/predict_amd.py --extract /tmp/online.csv     # (re)write the fixture's dstack rows from that file
    python bench/predict_amd.py --inferencex TABLE.json         # (re)write its InferenceX rows from a transcription
    python bench/predict_amd.py [--json]                       # score every row with the shipped sets
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import statistics
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from predict_heldout import config_file, facts_for, predict_row, workload  # noqa: E402

from launchcard.hardware import find  # noqa: E402
from launchcard.predict import Coefficients, ServingFacts, Workload, coefficients, predict  # noqa: E402
from launchcard.predict._domain import domain_from_runs  # noqa: E402

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
                "as its control (bench/predict_amd.py). rocm:sglang is fitted on the InferenceX MI300X and MI325X "
                "rows (bench/predict_amd.py --fit); the rest are scored only.",
        "sources": {
            "inferencex": "InferenceX's DeepSeek-R1-0528 FP8 TP8 SGLang 0.5.9 sweeps on MI300X and MI325X (run "
                          "22469096331), MI355X (runs 22725876766 and 25281476062) and H200 (run 23552373331, "
                          "calibration rows), read from github SemiAnalysisAI/InferenceX-app "
                          "packages/app/cypress/fixtures/api/benchmarks.json at 3a600f1d (InferenceX's API rows for "
                          "DeepSeek-R1; each row's source.key names its element, source.server its server); servers "
                          "and client: bench/predict_amd.py IX_SERVERS",
            "dstack": f"dstack blog 'DeepSeek R1 inference performance: MI300X vs. H200' (2025-03-18); data {BLOB}/"
                      f"{CSV_PATH}, commands and releases {BLOB}/{README}"},
        "dstack_client": "SGLang bench_serving (Deepseek-R1/bench_serving.py), --dataset-name random "
                         "--random-input 3200 --random-output 800/1600/3200/6400 --random-range-ratio 1 "
                         "(exact lengths) --num-prompts 500 "
                         "--max-concurrency C (README L300-L331)",
        "left_out": left}, "rows": rows}


IX_APP = ("SemiAnalysisAI/InferenceX-app", "3a600f1d9ce155536d52e2f58f744f27a301aac9",
          "packages/app/cypress/fixtures/api/benchmarks.json")
IX = "https://github.com/SemiAnalysisAI/InferenceX/blob"
# server -> its sweep: the GPU, the run, date and image (the API row's) and the server the script started (the
# script at the commit the run ran, its lines cited).  MI300X and MI325X ran one command (the same image, the same
# aiter MLA flags) in the same run; MI355X's rows come from two runs, each the sweep that merging a changelog entry
# for dsr1-fp8-mi355x-sglang started: 22725876766 (2026-03-05, the 1k/8k rows) after 9d39c92ee (PR #865, fp8 KV,
# --num-continuous-decode-steps 4) and 25281476062 (2026-05-03, 1k/1k and 8k/1k) after a2180b61c (PR #1243, decode
# steps 4 -> 8); both scripts set --cuda-graph-max-bs to the run's clients ({conc}).
_MI355X = ("python3 -m sglang.launch_server --attention-backend aiter --model-path deepseek-ai/DeepSeek-R1-0528 "
           "--tensor-parallel-size 8 --trust-remote-code --chunked-prefill-size 196608 --mem-fraction-static 0.8 "
           "--disable-radix-cache --num-continuous-decode-steps {steps} --max-prefill-tokens 196608 "
           "--kv-cache-dtype fp8_e4m3 --cuda-graph-max-bs {{conc}}")
_MI30X = ("python3 -m sglang.launch_server --model-path=deepseek-ai/DeepSeek-R1-0528 "
          "--trust-remote-code --tensor-parallel-size=8 --mem-fraction-static=0.8 "
          "--cuda-graph-max-bs=128 --chunked-prefill-size=131072 "
          "--num-continuous-decode-steps=4 --max-prefill-tokens=131072 "
          "--kv-cache-dtype fp8_e4m3 --attention-backend aiter --disable-radix-cache")
IX_SERVERS: dict[str, dict[str, Any]] = {
    "mi300x": {"gpu": "mi300x", "run": "22469096331/attempts/1", "date": "2026-02-27",
               "image": "lmsysorg/sglang:v0.5.9-rocm700-mi30x",
               "command_url": f"{IX}/f267602ff7825dc02eaf81f512f50f380d6d39f9/benchmarks/single_node/"
                              "dsr1_fp8_mi300x.sh#L40-L50",
               "env": ["SGLANG_USE_AITER=1", "SGLANG_AITER_MLA_PERSIST=1"], "command": {None: _MI30X}},
    "mi325x": {"gpu": "mi325x", "run": "22469096331/attempts/1", "date": "2026-02-27",
               "image": "lmsysorg/sglang:v0.5.9-rocm700-mi30x",  # amd-master.yaml L97-L117 at f267602ff
               "command_url": f"{IX}/f267602ff7825dc02eaf81f512f50f380d6d39f9/benchmarks/single_node/"
                              "dsr1_fp8_mi325x.sh#L26-L41",
               "env": ["SGLANG_USE_AITER=1", "SGLANG_AITER_MLA_PERSIST=1"], "command": {None: _MI30X}},
    "mi355x@22725876766": {
        "gpu": "mi355x", "run": "22725876766/attempts/2", "date": "2026-03-05",
        "image": "lmsysorg/sglang:v0.5.9-rocm700-mi35x",  # amd-master.yaml L119-L140 at 9d39c92ee
        "command_url": f"{IX}/9d39c92ee2638bd993169e4e5f122335627ddcad/benchmarks/single_node/"
                       "dsr1_fp8_mi355x.sh#L23-L42",
        "env": ["SGLANG_USE_AITER=1", "RCCL_MSCCL_ENABLE=0", "ROCM_QUICK_REDUCE_QUANTIZATION=INT4"],
        "command": {None: _MI355X.format(steps=4)}},
    "mi355x@25281476062": {
        "gpu": "mi355x", "run": "25281476062/attempts/1", "date": "2026-05-03",
        "image": "lmsysorg/sglang:v0.5.9-rocm700-mi35x",  # amd-master.yaml L106-L124 at a2180b61c
        "command_url": f"{IX}/a2180b61cc7d3e9347c6aff92df3eba84d70fdc0/benchmarks/single_node/"
                       "dsr1_fp8_mi355x.sh#L23-L50",
        "env": ["SGLANG_USE_AITER=1", "RCCL_MSCCL_ENABLE=0", "ROCM_QUICK_REDUCE_QUANTIZATION=INT4"],
        "command": {None: _MI355X.format(steps=8)}},
    "h200": {"gpu": "h200", "run": "23552373331/attempts/2", "date": "2026-03-25",
             "image": "lmsysorg/sglang:v0.5.9-cu130",
             "command_url": f"{IX}/1cb92d21d649c91ed589d1facb46d23e168b40a7/benchmarks/single_node/"
                            "dsr1_fp8_h200.sh#L29-L48",
             "env": ["TORCH_CUDA_ARCH_LIST=9.0"],
             "command": {n: "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-R1-0528 "
                            "--trust-remote-code --tensor-parallel-size=8 --data-parallel-size=1 --disable-radix-cache "
                            f"--max-running-requests {n} --cuda-graph-max-bs {n} --chunked-prefill-size 32768 "
                            "--max-prefill-tokens 32768 --mem-fraction-static 0.82 --attention-backend flashinfer "
                            "--stream-interval 10 --decode-log-interval 1" for n in (512, 256)}},
}


def inferencex_row(server: str, isl: int, osl: int, conc: int, m: list[float]) -> dict[str, Any]:
    """One InferenceX sweep point as a fixture row.  ``server``: its IX_SERVERS key; ``m``: the API row's
    mean_tpot, median_tpot, mean_ttft, median_ttft, mean_itl (seconds) and output_tput_per_gpu.  Lengths:
    InferenceX's client draws each uniformly in [int(0.8 L), L] (the label the held-out replay reads); 10 x C
    prompts, C clients."""
    srv = IX_SERVERS[server]
    gpu = srv["gpu"]
    cmd = (srv["command"].get(512 if (isl, osl) == (1024, 1024) else 256) or srv["command"][None]).format(conc=conc)
    repo, commit, path = IX_APP
    lo_i, lo_o = int(isl * 0.8), int(osl * 0.8)
    return {
        "id": f"inferencex:{gpu}-sglang-dsr1-fp8-tp8-{isl}x{osl}-c{conc}",
        "source": {"repo": repo, "commit": commit, "path": path, "line": None, "server": server,
                   "key": {"hardware": gpu, "framework": "sglang", "model": "dsr1", "precision": "fp8", "decode_tp": 8,
                           "isl": isl, "osl": osl, "conc": conc, "date": srv["date"]},
                   "url": f"https://github.com/SemiAnalysisAI/InferenceX/actions/runs/{srv['run']}",
                   "command_url": srv["command_url"],
                   "label": f"random: input uniform {lo_i}..{isl}, output uniform {lo_o}..{osl}"},
        "model": "deepseek-ai/DeepSeek-R1-0528",
        "config": {"file": "deepseek-ai--DeepSeek-R1_config.json",
                   "note": "DeepSeek-R1's config.json stands in for -0528's (same architecture and shapes)"},
        "gpu": gpu, "gpus": 8, "engine": "sglang", "engine_version": "0.5.9", "engine_version_stated": srv["image"],
        "image": srv["image"], "serve_command": cmd,
        "plan": {"tp": 8, "pp": 1, "dp": 1, "ep": False, "quantization": None, "kv_cache_dtype": None,
                 "max_num_seqs": None, "max_num_batched_tokens": None, "max_model_len": None,
                 "gpu_memory_utilization": None, "dp_attention": False},
        "unmodelled_flags": list(srv["env"]),
        "workload": {"requests": 10 * conc, "concurrency": conc, "request_rate": None, "arrivals": "closed loop",
                     "isl_mean": (lo_i + isl) / 2, "osl_mean": (lo_o + osl) / 2, "dataset": None},
        "measured": {"ttft_ms_mean": m[2] * 1e3, "ttft_ms_median": m[3] * 1e3, "tpot_ms_mean": m[0] * 1e3,
                     "tpot_ms_median": m[1] * 1e3, "itl_ms_mean": m[4] * 1e3, "output_tok_per_s": m[5] * 8,
                     "request_per_s": None, "duration_s": None},
    }


def server_of(row: dict[str, Any]) -> str:
    """An InferenceX row's IX_SERVERS key (rows written before the key was recorded ran the GPU's one server)."""
    return str(row["source"].get("server", row["gpu"]))


def with_inferencex(fixture: dict[str, Any], table: dict[str, list[list[float]]]) -> dict[str, Any]:
    """The fixture with the InferenceX rows of ``table``'s servers replaced by ``table``'s:
    {server: [[isl, osl, conc, *metrics], ...]} (``server``: an IX_SERVERS key; other servers' rows stay)."""
    rows = [r for r in fixture["rows"] if not (r["id"].startswith("inferencex:") and server_of(r) in table)]
    rows += [inferencex_row(srv, int(t[0]), int(t[1]), int(t[2]), t[3:]) for srv, pts in table.items() for t in pts]
    return {**fixture, "rows": rows}


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


# The terms the AMD runs are fitted for: the per-layer step overhead (the decode gap is about constant in the batch:
# measured minus predicted 13-16 ms a step at 4-16 clients on 1k/1k) and the share of HBM bandwidth the attention's
# KV reads get (the gap's growth with clients and with context: 8k prompts, 8k outputs).  Every other term is the
# NVIDIA set's (gpu:sglang): bw_eff too (AMD's own block-FP8 GEMM table times DeepSeek-V3's tp8 decode GEMMs at
# parity with H200's, bench/amd_kernel_tables.py; fitted beside these two it took no steadier value: in-sample
# mean |log| 0.106 against 0.042 without it).  Fitted on the InferenceX MI300X rows only: the dstack rows ran SGLang
# 0.4.2 (before every release the sets span) and the same source's H200 rows are 2.3x off as well, so they would
# fit an era, not a platform.  One model at one TP: layer_us cannot be told from a per-step cost (61 layers), and
# attn_eff is MLA decode's (aiter) share: another attention kernel on ROCm is not measured.
FIT_TERMS = ("layer_us", "attn_eff")
# the CDNA3 GPUs' rows (MI300X and MI325X: one image, one command, one run): MI325X's, predicted by the set fitted on
# MI300X's alone, were within 4% (TPOT |err| median; signed +4%), so both pin it.  MI355X (CDNA4, its own image and
# flags) is not fitted: its runs are 2x faster than this set predicts, gpu:sglang predicts them with a median TPOT
# error of 8%, and layer_us/attn_eff fitted on them barely move that (mean |log| 0.083 -> 0.078): the set is taken
# on the architectures its runs measured only (launchcard.predict._coef).
FIT_ROWS = ("inferencex:mi300x-", "inferencex:mi325x-")
# Prefill is not fitted (--fit reports TTFT; --prefill fits extend_layer_us beside them for the record, never
# written).  The runs' mean TTFT is not a prefill cost.  At 4 clients the median TTFT (a request's own prefill) is
# 164 ms at 1k prompts and 495 ms at 8k on MI300X (117 / 428 on MI325X; H200 156 / 320), near what the set predicts
# for the mean (239 / 468), while the means are 2.3-3.7x the medians (H200 1.4-1.7x).  Mean minus median times
# requests over clients (prefill_evidence) is 2.7-7.1 s on MI300X's 1k-prompt runs at 4 clients as at 64 (H200
# 0.9-2.4 s): a one-time stall that the opening burst waits through, not a cost that each prefill pays.  Fitted on
# TPOT and TTFT together (--prefill): extend_layer_us 2,593 us (gpu:sglang 971), attn_eff 0.17 -> 0.27; in-sample
# TTFT mean |log| 0.57 -> 0.27 but TPOT 0.048 -> 0.079; leave-one-shape-out TTFT |err| median 41% -> 30%, TPOT
# 4.2% -> 6.0% (p90 10% -> 20%); the folds' extend_layer_us 1,942-3,461.  Held out (predict_heldout.py): the 10
# MI300X rows' TTFT signed median -48% -> -10%, |err| median 58% -> 54%, but the 4 cookbook rows that show no stall
# (157-318 ms measured) went from +8..+63% to +108..+138%: each extend step was charged the stall.  The medians'
# slope (51 us a prompt token on MI300X, 48 on MI325X, H200 25; the set predicts 35) needs a prefill-only compute
# share, which the step model has no term for (flops_eff moves decode too).
PREFILL_TERMS = ("extend_layer_us",)
# the measures fitted: TPOT (with --prefill, TTFT too)
FIT_METRICS: tuple[str, ...] = ("tpot_ms_mean",)
ROCM_KEY = "rocm:sglang"


def fit_rows(fixture: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in fixture["rows"] if r["id"].startswith(FIT_ROWS)]


def prepared(rows: list[dict[str, Any]]) -> list[tuple[dict[str, Any], ServingFacts, Workload]]:
    """Each row's plan facts and workload, built once (the replay's own: predict_heldout)."""
    out = []
    for r in rows:
        w = workload(r)
        out.append((r, facts_for(r, config_file(r["config"]["file"]), sum(w.longest())), w))
    return out


def loss(prep: list[tuple[dict[str, Any], ServingFacts, Workload]], c: Coefficients,
         metrics: tuple[str, ...] = FIT_METRICS) -> float:
    """Mean |log(predicted / measured)| over the rows and ``metrics`` (an L1 fit of relative error, as
    bench/predict_accuracy.py's)."""
    errs = []
    for r, f, w in prep:
        p = predict(f, w, c)
        errs += [abs(math.log(getattr(p, m) / r["measured"][m])) for m in metrics]
    return statistics.fmean(errs)


def fit(prep: list[tuple[dict[str, Any], ServingFacts, Workload]], base: Coefficients,
        terms: tuple[str, ...] = FIT_TERMS, rounds: int = 4, metrics: tuple[str, ...] = FIT_METRICS) -> Coefficients:
    """Coordinate search from ``base`` over ``terms`` (multiplicative steps that shrink each round; the efficiency
    shares capped at 1)."""
    c, best = base, loss(prep, base, metrics)
    for k in range(rounds):
        step = 2.0 ** (1.0 / (k + 1))
        for t in terms:
            for mult in (step, 1 / step, step * step, 1 / (step * step)):
                v = getattr(c, t) * mult
                if t.endswith("_eff") and v > 1.0:
                    continue
                trial = replace(c, **{t: v})
                got = loss(prep, trial, metrics)
                if got < best:
                    c, best = trial, got
    return c


def folds(rows: list[dict[str, Any]], by: str) -> dict[str, list[dict[str, Any]]]:
    """Rows grouped for leave-one-out: by "shape" (isl x osl), "gpu" or "clients"."""
    out: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        w = r["workload"]
        k = f"{round(w['isl_mean'] / 0.9)}x{round(w['osl_mean'] / 0.9)}" if by == "shape" else \
            r["gpu"] if by == "gpu" else str(w["concurrency"])
        out.setdefault(k, []).append(r)
    return out


def _p90(a: list[float]) -> float:
    a = sorted(a)
    return a[min(len(a) - 1, math.ceil(0.9 * len(a)) - 1)]


def held_out_errors(rows: list[dict[str, Any]], base: Coefficients, by: str,
                    terms: tuple[str, ...] = FIT_TERMS, metrics: tuple[str, ...] = FIT_METRICS) -> dict[str, Any]:
    """Leave-one-``by``-out: each fold's rows predicted with the terms fitted on the other folds (TPOT and TTFT
    errors, signed: + predicted slower)."""
    errs: dict[str, list[float]] = {"tpot": [], "ttft": []}
    per = {}
    for k, held in folds(rows, by).items():
        c = fit(prepared([r for r in rows if r not in held]), base, terms, metrics=metrics)
        e: dict[str, list[float]] = {"tpot": [], "ttft": []}
        for r, f, w in prepared(held):
            p = predict(f, w, c)
            for m in e:
                e[m].append(getattr(p, f"{m}_ms_mean") / r["measured"][f"{m}_ms_mean"] - 1.0)
        for m in e:
            errs[m] += e[m]
        per[k] = {"rows": len(e["tpot"]), **{f"{m}_abs_median": statistics.median(abs(x) for x in e[m]) for m in e},
                  "ttft_signed_median": statistics.median(e["ttft"]),
                  "fitted": {t: round(getattr(c, t), 6) for t in terms}}
    out: dict[str, Any] = {"by": by, "rows": len(errs["tpot"])}
    for m, v in errs.items():
        out[f"{m}_abs_median"] = statistics.median(abs(x) for x in v)
        out[f"{m}_abs_p90"] = _p90([abs(x) for x in v])
    return {**out, "ttft_signed_median": statistics.median(errs["ttft"]), "folds": per}


def prefill_evidence(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """What the runs say of prefill, per GPU: the median TTFT of the fewest clients at each prompt length (a
    request's own prefill: little queueing) and the cost per prompt token between the shortest and longest prompts;
    per row the mean's excess over the median as a one-time stall (mean minus median, times requests over clients:
    the seconds a stall that every request of the opening burst waits through would take, the burst being C of
    the run's N requests)."""
    out: dict[str, Any] = {}
    for gpu in sorted({r["gpu"] for r in rows}):
        mine = [r for r in rows if r["gpu"] == gpu and r["measured"].get("ttft_ms_median")]
        if not mine:
            continue
        low = min(int(r["workload"]["concurrency"]) for r in mine)
        by_isl: dict[float, list[float]] = {}
        for r in mine:
            if int(r["workload"]["concurrency"]) == low:
                by_isl.setdefault(float(r["workload"]["isl_mean"]), []).append(float(r["measured"]["ttft_ms_median"]))
        med = {isl: statistics.median(v) for isl, v in sorted(by_isl.items())}
        lo, hi = min(med), max(med)
        stall = {r["id"]: round((r["measured"]["ttft_ms_mean"] - r["measured"]["ttft_ms_median"]) * 1e-3
                                * r["workload"]["requests"] / r["workload"]["concurrency"], 2) for r in mine}
        out[gpu] = {"clients": low, "median_ttft_ms": {str(round(k)): round(v, 1) for k, v in med.items()},
                    "median_us_per_prompt_token": round((med[hi] - med[lo]) * 1e3 / (hi - lo), 1) if hi > lo else None,
                    "opening_stall_s": stall}
    return out


def rocm_entry(rows: list[dict[str, Any]], c: Coefficients, terms: tuple[str, ...] = FIT_TERMS,
               base_key: str = "gpu:sglang") -> dict[str, Any]:
    """The set as predict_coefficients.json records one: the fitted terms (the rest are read from ``base_key``),
    what it was fitted on, its domain (the runs' span, as bench/predict_accuracy.py records a gpu set's)."""
    runs = []
    for r in rows:
        w = r["workload"]
        lo_i, hi_i = (int(x) for x in r["source"]["label"].split("input uniform ")[1].split(",")[0].split(".."))
        lo_o, hi_o = (int(x) for x in r["source"]["label"].split("output uniform ")[1].split(".."))
        runs.append((int(w["concurrency"]), lo_i, hi_i, lo_o, hi_o, r["engine_version"], r["gpu"],
                     find(r["gpu"]).vendor or ""))
    gpus = "/".join(sorted({r["gpu"].upper() for r in rows}))
    src = (f"the {len(rows)} InferenceX {gpus} SGLang runs of tests/fixtures/predict_amd_runs.json (DeepSeek-R1-0528 "
           "FP8 TP8, SGLang 0.5.9, InferenceX run 22469096331); bench/predict_amd.py --write")
    d = domain_from_runs(runs, src)
    return {"values": {t: round(float(getattr(c, t)), 6) for t in terms},
            "fitted_on": (f"{src}: {', '.join(terms)} fitted on TPOT (mean |log(predicted/measured)|, coordinate "
                          f"search from {base_key}); every other term is {base_key}'s (AMD runs of one model at one "
                          "TP cannot pin it); prefill too (extend_layer_us, flops_eff): the runs' mean TTFT is "
                          "2.3-3.7x their median at 4 clients, a one-time stall of seconds (mean minus median times "
                          "requests over clients, prefill_evidence), not a cost each prefill pays; the runs' H200 "
                          f"counterparts (same sweep, calibration rows) are predicted by {base_key} within 13%"),
            "falls_back_to": base_key, "domain": d.to_json()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--extract", type=Path, help="online_results.csv (git show of it at 7f37e669): rewrite the fixture")
    ap.add_argument("--inferencex", type=Path, help="JSON {server: [[isl, osl, conc, mean_tpot, median_tpot, "
                    "mean_ttft, median_ttft, mean_itl, output_tput_per_gpu], ...]} (server: an IX_SERVERS key): "
                    "rewrite the fixture's InferenceX rows of those servers")
    ap.add_argument("--fit", action="store_true", help="fit the ROCm terms on the InferenceX MI300X rows and print "
                    "leave-one-shape-out and leave-one-clients-out errors")
    ap.add_argument("--write", action="store_true", help="with --fit: add the set as rocm:sglang to "
                    "src/launchcard/data/predict_coefficients.json (no other set is touched)")
    ap.add_argument("--prefill", action="store_true", help="with --fit: fit extend_layer_us beside them, on TPOT and "
                    "TTFT together (report only: never written)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.prefill and args.write:
        ap.error("--prefill with --write: the prefill fit is report only (rocm:sglang fits TPOT's terms; "
                 "FIT_TERMS says why); drop --prefill to write the set")
    if args.extract:
        fx = extract(args.extract.read_text())
        if FIXTURE.exists():  # the InferenceX rows stay
            fx["rows"] += [r for r in json.loads(FIXTURE.read_text())["rows"] if r["id"].startswith("inferencex:")]
        FIXTURE.write_text(json.dumps(fx, indent=1) + "\n")
        print(f"wrote {FIXTURE.relative_to(ROOT)}")
        return 0
    if args.inferencex:
        fx = with_inferencex(json.loads(FIXTURE.read_text()), json.loads(args.inferencex.read_text()))
        FIXTURE.write_text(json.dumps(fx, indent=1) + "\n")
        print(f"wrote {FIXTURE.relative_to(ROOT)}")
        return 0
    if args.fit:
        terms, metrics = (FIT_TERMS + PREFILL_TERMS, FIT_METRICS + ("ttft_ms_mean",)) if args.prefill else \
            (FIT_TERMS, FIT_METRICS)
        return fit_main(json.loads(FIXTURE.read_text()), write=args.write, as_json=args.json, terms=terms,
                        metrics=metrics)
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


def fit_main(fixture: dict[str, Any], *, write: bool, as_json: bool, terms: tuple[str, ...] = FIT_TERMS,
             metrics: tuple[str, ...] = FIT_METRICS) -> int:
    rows = fit_rows(fixture)
    base = coefficients("gpu", "sglang")
    prep = prepared(rows)
    c = fit(prep, base, terms, metrics=metrics)
    res = {"fitted": {t: round(getattr(c, t), 6) for t in terms},
           "base": {t: round(getattr(base, t), 6) for t in terms},
           "in_sample_loss": {m: {"base": loss(prep, base, (m,)), "fitted": loss(prep, c, (m,))}
                              for m in ("tpot_ms_mean", "ttft_ms_mean")},
           "leave_one_out": [held_out_errors(rows, base, by, terms, metrics) for by in ("shape", "clients", "gpu")],
           "prefill_evidence": prefill_evidence(rows)}
    if write:
        path = ROOT / "src" / "launchcard" / "data" / "predict_coefficients.json"
        doc = json.loads(path.read_text())
        doc["sets"][ROCM_KEY] = rocm_entry(rows, c)
        path.write_text(json.dumps(doc, indent=2) + "\n")
        res["wrote"] = f"{path.relative_to(ROOT)} sets.{ROCM_KEY}"
    print(json.dumps(res, indent=1 if as_json else None))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
