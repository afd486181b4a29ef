"""The held-out rows of dennislee22/vLLM-benchmarking (bench/heldout_extract.py's third source): vLLM 0.10.1.1 on
A100 80GB, each test's plan read from the ``non-default args`` line of the start-up log it links."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from heldout_page import _FIELD, _RESULT, FIELDS, PLAN_KEYS, _git, hardware

DL_REPO = "dennislee22/vLLM-benchmarking"
# the README's first paragraph names the machine: "tested on a system equipped with NVIDIA A100 80GB GPU"
DL_GPU_LINE = re.compile(r"NVIDIA A100 80GB GPU")
# what the write-up states that the prediction has no term for, kept with each row
DL_NOTES = ["prefix caching on (vLLM 0.10 default): the runs repeat one random seed, and the engine log under the "
            "results shows cumulative prefix-cache hits"]
# the TP 2 runs' start-up logs (one node, vLLM's multiprocessing workers VllmWorker TP0/TP1): vLLM 0.10.1.1's
# custom_all_reduce.py:35 takes the driver's peer-to-peer report (VLLM_SKIP_P2P_CHECK) and :147 disables its
# all-reduce when the GPUs have no P2P access; GPUs joined by NVLink have it, so the all-reduce ran over NCCL without
# peer access, not over the catalog's NVLink 3 (600 GB/s), at a bandwidth nothing here states
DL_P2P = re.compile(r"Custom allreduce is disabled because your platform lacks GPU")
DL_PODS = ["TP 2 on one node without GPU peer-to-peer access (start-up log: vLLM's custom all-reduce disabled, "
           "'your platform lacks GPU P2P capability'; 'vLLM is using nccl==2.26.2'): predicted with --no-gpu-p2p "
           "(NCCL's SHM transport through host memory over each GPU's PCIe Gen4 x16 host link, timed by NCCL "
           "2.26.2's own tuning model at the SHM share of NVIDIA/nccl issue #384); the host's CPU and the GPUs' "
           "sockets are not stated, nor the latency of one all-reduce over that path (NCCL's model's)"]
DL_FORM = ("the write-up names the GPU as 'NVIDIA A100 80GB' without its board (SXM4 or PCIe), and shows no nvidia-smi "
           "output, topology or MIG setting: the catalog's a100_80gb (SXM4 figures: 2,039 GB/s, NVLink 3) kept; a PCIe "
           "board has 1,935 GB/s. Both boards' host link is PCIe Gen4 x16 (64 GB/s, A100 datasheet), the path of "
           "the TP 2 runs' all-reduce (no peer access). The start-up log's own figures fit an 80 GB board whichever "
           "it is: the TP 1 logs' 'Model loading took 14.2488 GiB' and 'Available KV cache memory: 24.83 GiB' at "
           "--gpu-memory-utilization 0.5 (5.01 GiB at 0.25) leave 0.55 GiB of activations and other memory under "
           "0.5 x 79.25 GiB")
# what each start-up log prints of the engine's own settings (vLLM 0.10.1.1): the token budget (scheduler.py:222),
# the CUDA graph mode and capture sizes (core.py:74 config line), and the model's generation-config sampling
# defaults (serving_completion.py:77: used only for fields a request leaves out)
DL_BUDGET = re.compile(r"Chunked prefill is enabled with max_num_batched_tokens=(\d+)")
DL_GRAPHS = re.compile(r'"cudagraph_mode":(\d+).*?"max_capture_size":(\d+)', re.DOTALL)
DL_SAMPLING = re.compile(r"Using default completion sampling params from model: (\{[^}]*\})", re.DOTALL)
# the sampler the engine runs: vLLM 0.10.1.1 vllm/v1/sample/ops/topk_topp_sampler.py:33-51 takes FlashInfer's
# top-k/top-p kernel when the flashinfer package imports (an extra of the 0.10.1.1 wheel: its METADATA lists
# flashinfer-python==0.2.11 under extra "flashinfer") and says so at :51; the start-up profile's sampler pass peaks
# lower on that path (memory._model.SAMPLER_COPIES_FLASHINFER), so the memory plan needs it
DL_SAMPLER = re.compile(r"Using FlashInfer for top-p & top-k sampling")
# the client: `benchmark_serving.py --backend vllm` posts to /v1/completions with vLLM's benchmarks/
# backend_request_func.py async_request_openai_completions, whose payload sets "temperature": 0.0 and
# "repetition_penalty": 1.0 (every version read: vllm-project/vllm 0118413 and e7dffa68): greedy sampling without
# penalties, so the model's defaults (temperature 0.7, top_k 20, top_p 0.8, repetition_penalty 1.05) do not apply
DL_CLIENT = ("greedy: benchmark_serving.py --backend vllm sends temperature 0.0 and repetition_penalty 1.0 "
             "(vllm-project/vllm benchmarks/backend_request_func.py async_request_openai_completions, versions "
             "0118413 and e7dffa68), so the server's generation-config defaults logged below do not apply")
DL_CLIENT_URL = ("https://github.com/vllm-project/vllm/blob/e7dffa683de59f5592d75896a56283e778c084f5/benchmarks/"
                 "backend_request_func.py")
_DL_TEST = re.compile(r"^#+ .*Test (\d+): (.*)$")
_DL_LOG = re.compile(r"Startup\.?\s*log:\s*\[[^\]]*\]\((log/[^)]+)\)", re.IGNORECASE)


def dl_engine_log(text: str, url: str) -> dict[str, Any]:
    """What a start-up log prints of the engine's own settings, each with its line, and what the client sent."""
    def line_of(m: re.Match[str] | None) -> str | None:
        return f"{url}#L{text.count(chr(10), 0, m.start()) + 1}" if m else None

    budget, graphs, samp = DL_BUDGET.search(text), DL_GRAPHS.search(text), DL_SAMPLING.search(text)
    flashinfer = DL_SAMPLER.search(text)
    mode = {"0": "NONE", "1": "PIECEWISE", "2": "FULL"}  # vLLM 0.10's CUDAGraphMode values
    return {"max_num_batched_tokens": int(budget.group(1)) if budget else None, "max_num_batched_tokens_url":
            line_of(budget),
            "cuda_graphs": (f"cudagraph_mode {graphs.group(1)} ({mode.get(graphs.group(1), '?')}: attention "
                            f"outside the captured pieces), captured up to {graphs.group(2)} tokens")
            if graphs else None, "cuda_graphs_url": line_of(graphs),
            "sampling_defaults": " ".join(samp.group(1).split()) if samp else None,
            "sampling_defaults_url": line_of(samp),
            # True where the log says vLLM samples with FlashInfer's kernel; None: not shown
            "flashinfer_sampler": True if flashinfer else None, "flashinfer_sampler_url": line_of(flashinfer),
            "client_sampling": DL_CLIENT,
            "client_sampling_url": DL_CLIENT_URL}


def dennislee(repo: Path, skipped: dict[str, int]) -> tuple[list[dict[str, Any]], str]:
    """The vLLM-benchmarking write-up (github.com/dennislee22/vLLM-benchmarking): each test section links the
    server's start-up log, whose ``non-default args`` line is the plan and whose first line names the vLLM
    release; each fenced block under it holds one ``benchmark_serving.py`` command and its result."""
    import ast

    commit = _git(repo, "rev-parse", "HEAD").strip()
    text = _git(repo, "show", f"{commit}:README.md")
    lines = text.split("\n")
    gpu_line = next((i + 1 for i, ln in enumerate(lines) if DL_GPU_LINE.search(ln)), 0)
    said = DL_GPU_LINE.search(lines[gpu_line - 1]) if gpu_line else None
    gpu_words = said.group(0) if said else ""
    rows: list[dict[str, Any]] = []

    def skip(why: str, n: int = 1) -> None:
        skipped[why] = skipped.get(why, 0) + n

    sections = [(i, m) for i, ln in enumerate(lines) if (m := _DL_TEST.match(ln))]
    for k, (start, m) in enumerate(sections):
        end = sections[k + 1][0] if k + 1 < len(sections) else len(lines)
        body = lines[start:end]
        n_results = sum(1 for ln in body if _RESULT.search(ln))
        log = next((g.group(1) for ln in body if (g := _DL_LOG.search(ln))), None)
        if "different nodes" in m.group(2):
            skip("tensor parallel across nodes over Ray (not modelled)", n_results)
            continue
        if log is None:
            skip("test section without its server's start-up log (plan not stated)", n_results)
            continue
        log_text = _git(repo, "show", f"{commit}:{log}")
        log_lines = log_text.split("\n")
        arg_at = next(i for i, ln in enumerate(log_lines) if "non-default args:" in ln)
        p2p_at = next((i for i, ln in enumerate(log_lines) if DL_P2P.search(ln)), None)
        raw = log_text.split("non-default args:", 1)[1]
        args = ast.literal_eval(raw[: raw.index("}") + 1].replace("\n", ""))
        ver = re.search(r"vLLM API server version (\S+)", log_text)
        engine_log = dl_engine_log(log_text, f"https://github.com/{DL_REPO}/blob/{commit}/{log}")
        plan = {"tp": int(args.get("tensor_parallel_size", 1)), "pp": int(args.get("pipeline_parallel_size", 1)),
                "dp": int(args.get("data_parallel_size", 1)), "ep": bool(args.get("enable_expert_parallel", False)),
                **{k2: args.get(k2) for k2 in PLAN_KEYS[4:]}, "dp_attention": False}
        cmd = "vllm serve " + str(args["model"]) + "".join(
            f" --{k2.replace('_', '-')} {v}" for k2, v in args.items() if k2 not in ("model_tag", "model", "port"))
        i = 0
        while i < len(body):
            if not _RESULT.search(body[i]):
                i += 1
                continue
            fence = max(j for j in range(i) if body[j].startswith("```"))
            bench = " ".join(x.rstrip("\\ ") for x in body[fence + 1:i])
            got: dict[str, float] = {}
            j = i + 1
            while j < len(body) and not re.match(r"^\s*=+\s*$", body[j]):
                fm = _FIELD.match(body[j])
                if fm and fm.group(1).strip() in FIELDS:
                    got[FIELDS[fm.group(1).strip()]] = float(fm.group(2))
                j += 1
            line = start + i + 1
            i = j
            n = int(got.get("requests", 0))
            conc_m = re.search(r"--max-concurrency[= ](\d+)", bench)
            if re.search(r"--request-rate[= ](?!inf)", bench) or not n or "tpot_ms_mean" not in got:
                skip("finite request rate, or a result without requests or TPOT")
                continue
            conc = int(conc_m.group(1)) if conc_m else n
            url = f"https://github.com/{DL_REPO}/blob/{commit}/README.md"
            rows.append({
                "id": f"dennislee:README.md#L{line}",
                "source": {"repo": DL_REPO, "commit": commit, "path": "README.md", "line": line,
                           "url": f"{url}#L{line}",
                           "command_url": f"https://github.com/{DL_REPO}/blob/{commit}/{log}#L{arg_at + 1}",
                           "label": f"Test {m.group(1)}; GPU: README.md#L{gpu_line}"},
                "model": "Qwen/Qwen2-7B-Instruct" if "Qwen2-7B-Instruct" in str(args["model"]) else str(args["model"]),
                "config": {"file": "Qwen--Qwen2-7B-Instruct_config.json", "note": None},
                "gpu": "a100_80gb", "gpus": plan["tp"] * plan["pp"] * plan["dp"], "engine": "vllm",
                "engine_version": ver.group(1) if ver else None, "serve_command": cmd, "plan": plan,
                "unmodelled_flags": DL_NOTES + (DL_PODS if plan["tp"] > 1 else []),
                "hardware": hardware(
                    gpu_words, f"{url}#L{gpu_line}",
                    link=("no GPU peer-to-peer access: vLLM's custom all-reduce disabled ('your platform lacks GPU "
                          "P2P capability or P2P test failed'), so not NVLink" if p2p_at is not None else None),
                    link_url=(f"https://github.com/{DL_REPO}/blob/{commit}/{log}#L{p2p_at + 1}"
                              if p2p_at is not None else None), note=DL_FORM,
                    p2p=False if p2p_at is not None else None),
                "engine_log": engine_log,
                "workload": {"requests": n, "concurrency": conc, "request_rate": None,
                             "arrivals": "closed loop" if conc < n else "all at once (rate inf, no concurrency cap)",
                             "isl_mean": round(got["input_tokens"] / n, 1),
                             "osl_mean": round(got["output_tokens"] / n, 1), "dataset": "random"},
                "measured": {k2: got.get(k2) for k2 in ("ttft_ms_mean", "ttft_ms_median", "tpot_ms_mean",
                                                        "tpot_ms_median", "itl_ms_mean", "output_tok_per_s",
                                                        "request_per_s", "duration_s")},
            })
    return rows, commit
