"""How the calibration runs were launched and benched: each source's benchmark client (length spread, requests
per client) and the flags InferenceX's launch scripts pass (token budget, TensorRT-LLM KV share, SGLang receive
interval), read from the scripts at the commits cited.  ``bench/predict_accuracy.py`` builds each
silicon_sample run's plan with them."""

from __future__ import annotations


# How each source's benchmark client ran (README "Predict serving performance" cites the files):
# - InferenceX runs (the db-dump rows with config_id/workflow_run_id, and the dated source files naming a model,
#   image and wip flag; measured 2025-10 to 2026-04): SemiAnalysisAI/InferenceX's client (kimbochen/bench_serving,
#   vendored as utils/bench_serving/benchmark_serving.py in d053ae24e) draws every prompt and output length
#   uniformly in [int(0.8 L), L] (sample_random_requests: lower = int(L * ratio), upper = L; random-range-ratio
#   0.8 in .github/workflows/full-sweep-tmpl.yml at ac1998a50 and benchmark-tmpl.yml at 51e31df4a), 10 x C
#   prompts (--num-prompts $((CONC * 10))), 2 x C warm-ups since d053ae24e, --ignore-eos, all C clients at once;
# - aiconfigurator's own runs (aic-auto-gap-analysis files): its generator's bench_run.sh.j2 runs aiperf with
#   --isl-stddev/--osl-stddev 0 (exact lengths, deployment_config.yaml defaults), 20 x C requests, 2 x C warm-ups.
def client(source: str) -> tuple[float, int]:
    """(length spread: lengths uniform in [(1 - spread) L, L], requests per client) of a silicon_sample row's run."""
    if "aic-auto-gap" in source or "gap-analysis" in source:
        return 0.0, 20
    return 0.2, 10


# The token budget per step (vLLM --max-num-batched-tokens, SGLang --chunked-prefill-size, TensorRT-LLM
# --max_num_tokens) InferenceX's launch scripts pass, by (family, engine, GPU); None = the engine's default.
# SemiAnalysisAI/InferenceX benchmarks/ at ac1998a50 (2025-10-28: the Llama-3.1-70B runs, measured 2025-10-29):
# 70b_fp8_h200_slurm.sh:37 / 70b_fp8_b200_docker.sh (vLLM 8192), 70b_fp8_h200_trt_slurm.sh:49 /
# 70b_fp*_b200_trt_slurm.sh (TRT 16384); at 51e31df4a (2026-04-06, the 2026 runs): gptoss_fp4_*.sh (vLLM 8192),
# gptoss_fp4_*_trt.sh (TRT 20000), dsr1_fp*_*_trt.sh (TRT max(8192, C + ISL + 64 rounded up to 64)),
# minimaxm2.5_fp8_b200.sh:51 (vLLM 2 x ISL), dsr1_fp8_h200.sh / dsr1_fp8_b200.sh TP8 (SGLang 32768; TP4 8192),
# dsr1_fp4_b200.sh (16384), qwen3.5_fp8_h200.sh (16384), qwen3.5_fp8_b200.sh (32768), glm5_fp8_b200.sh (32768),
# glm5_fp4_b200.sh (131072); kimik2.5_*.sh, minimaxm2.5_fp8_h100/h200.sh, glm5_fp8_h200.sh pass none; at e6554f8e0
# (2026-04-27, the B300 scripts added 04-16/17): dsr1_fp*_b300.sh as on B200, qwen3.5_fp8_b300.sh 16384,
# qwen3.5_fp4/bf16_b300.sh 32768, glm5_fp*_b300.sh 32768, minimaxm2.5_fp*_b300.sh 2 x ISL.
def inferencex_budget(fam: str, engine: str, gpu: str, quant: str, tp: int, isl: int, conc: int) -> int | None:
    b200 = gpu in ("b200", "b300", "gb200", "gb300")
    if engine == "vllm":
        return {"llama": 8192, "gpt-oss": 8192}.get(fam) or (2 * isl if fam == "minimax" and b200 else None)
    if engine == "trtllm":
        if fam == "deepseek":
            return max(8192, (conc + isl + 64 + 63) // 64 * 64)
        return {"llama": 16384, "gpt-oss": 20000}.get(fam)
    if fam == "deepseek":
        return (16384 if quant == "nvfp4" else 32768 if tp >= 8 else 8192) if b200 else 32768
    if fam == "qwen3.5":
        return 16384 if not b200 or (gpu == "b300" and quant.startswith("fp8")) else 32768
    if fam == "glm" and b200:
        return 131072 if quant == "nvfp4" and gpu != "b300" else 32768
    return None


# TensorRT-LLM's KV share (kv_cache_config.free_gpu_memory_fraction) InferenceX's *_trt.sh write into their
# --extra_llm_api_options files, as read (one stored version of each): dsr1_fp8_b200_trt.sh at 0a919c5f (0.8; 0.7
# at CONC >= 256 for 1k/1k and 1k/8k; 0.75 for 8k/1k at TP 4), dsr1_fp8_h200_trt.sh at 1fc5d73c (0.75),
# dsr1_fp4_b200_trt.sh at 111f0312 (0.8), gptoss_fp4_h200_trt.sh at 111f0312 (0.85); 70b_fp8_h200_trt_slurm.sh at
# 73ef9225 writes none. None: trtllm-serve's default 0.9 (also for the scripts not read: gptoss on B200, and the
# runs that are not InferenceX's)
def inferencex_kv_fraction(fam: str, engine: str, gpu: str, quant: str, tp: int, isl: int, osl: int,
                           conc: int) -> float | None:
    if engine != "trtllm":
        return None
    if fam == "deepseek" and quant.startswith("fp8"):
        if gpu == "h200":
            return 0.75
        if gpu == "b200":
            if isl == 1024 and osl in (1024, 8192) and conc >= 256:
                return 0.7
            return 0.75 if (isl, osl, tp) == (8192, 1024, 4) else 0.8
    if fam == "deepseek" and "fp4" in quant and gpu == "b200":
        return 0.8
    if fam == "gpt-oss" and gpu == "h200":
        return 0.85
    return None


# SGLang --scheduler-recv-interval InferenceX passes: dsr1_fp*_b200*.sh and qwen3.5_*_b200*.sh, 30 when CONC >= 16
# else 10 (dsr1_fp8_b200.sh TP4: 10) at 51e31df4a; dsr1_fp*_b200_docker.sh lines 10-14 / 22-26 alike at ac1998a50;
# dsr1_fp*_b300.sh and qwen3.5_fp4/bf16_b300.sh alike at e6554f8e0 (qwen3.5_fp8_b300.sh none).
# SGLang's receive skipper refuses DP attention (scheduler_recv_skipper.py asserts it off), so those runs have none.
def inferencex_recv_interval(fam: str, engine: str, gpu: str, quant: str, tp: int, dp: int, conc: int) -> int:
    if engine != "sglang" or fam not in ("deepseek", "qwen3.5") or gpu not in ("b200", "b300") or dp > 1:
        return 1
    if fam == "qwen3.5" and gpu == "b300" and quant.startswith("fp8"):
        return 1
    if fam == "deepseek" and tp == 4:
        return 10
    return 30 if conc >= 16 else 10
