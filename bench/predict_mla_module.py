"""The MLA attention module's latency beyond the step model's kernel terms, from aiconfigurator's measured module
tables (calibration data: never the held-out runs).  A report: nothing here enters the step model (see below).

aiconfigurator-core 0.12.0 ships ``mla_generation_module_perf`` tables for vLLM 0.24.0 and TensorRT-LLM 1.3.0rc20:
one DeepSeek-V3 ``self_attn`` forward (the q/kv down projections, their norms, rope, the q and kv up projections or
their absorbed batched matmuls, the latent decode attention and the output projection) per (GPU, GEMM dtype, KV
dtype, heads per rank, batch, context), replayed from a CUDA graph (aiconfigurator collector/vllm/
collect_mla_module.py at ai-dynamo/aiconfigurator 0e741b2e: ``use_cuda_graph = not (attn_type == "dsa" and
is_context)``; the vLLM tables' collection_meta.yaml says "provenance: legacy" and does not name the collector
revision that measured them).  For each (GPU, engine, GEMM dtype, KV dtype, heads per rank) this prints ``t0``: the
median over the few-sequence rows (batch <= 8, context <= 2048) of the measured latency minus what the step model's
kernel terms give the same module (its weights and latent cache over the datasheet bandwidth, or its FLOPs at the
GPU's measured GEMM and attention shares and GEMM tile height, launchcard.predict._kernels.kernel_eff, the longer of
each).  At 8-16 heads a rank: vLLM 78-113 us a layer on H100/H200 and 70-95 us on B300/GB200/GB300 but 25-45 us on
B200; TensorRT-LLM 21-46 us everywhere.

Why it is not in the model: added to every MLA layer of a step (branch ``mla-wip``), the calibration runs of
Kimi-K2.5 on vLLM (H200 0.16.0, B200 0.15.1/0.17.0, B300 0.17.0/0.19.0; 61 MLA layers, 8-16 heads a rank), which
the step model matches without it (median signed TPOT +0..+12% per GPU and dtype), come out +9..+74% slow (H200
BF16: +8% -> +31%), and leave-one-family-out went 12.7% / 37.2% -> 14.4% / 44.4% TPOT (kimi fold 8.2% -> 26.7%).
A served vLLM step has no room for the module latency these isolated replays measure: Kimi on H200 at 4 clients
measures 10.5-11.8 ms a step for 61 layers, which the model matches without it; the H200 table's 78 us a layer would
add 4.8 ms.  The vLLM tables also disagree with themselves: B200 25-45 us, GB200 (the same chip) 72-95 us.

    python bench/predict_mla_module.py
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from predict_accuracy import wheel  # noqa: E402
from predict_kernels import DATA, KERNEL_SYSTEMS, hw_figures, read_all  # noqa: E402

from launchcard.predict._kernels import KernelEff, kernel_eff  # noqa: E402

TABLES = {"vllm": "0.24.0", "trtllm": "1.3.0rc20"}  # the releases whose module tables the wheel has
TABLE = "mla_generation_module_perf"
# DeepSeek-V3's MLA shapes (the tables' model, aiconfigurator_core/model_configs deepseek-ai--DeepSeek-V3_config.json)
HIDDEN, Q_RANK, KV_RANK, ROPE, NOPE, V_DIM = 7168, 1536, 512, 64, 128, 128
GEMM_BYTES = {"bfloat16": 2.0, "fp8_block": 1.0, "nvfp4": 0.5625}  # NVFP4: 4 bits + an FP8 scale per 16 weights
GEMM_FLOPS = {"bfloat16": "bf16", "fp8_block": "fp8", "nvfp4": "fp4"}
KV_BYTES = {"bfloat16": 2.0, "fp8": 1.0}
FEW_SEQS, FEW_CTX = 8, 2048  # the rows whose time is latency: a few sequences of short context


def module_params(heads: int) -> float:
    """Weights of one MLA module at ``heads`` query heads on the rank: q_a and kv_a (replicated), q_b, kv_b and o
    (split by head)."""
    return (HIDDEN * Q_RANK + HIDDEN * (KV_RANK + ROPE) + Q_RANK * heads * (NOPE + ROPE)
            + KV_RANK * heads * (NOPE + V_DIM) + heads * V_DIM * HIDDEN)


def points(rows: list[dict[str, Any]], bw: float, flops: dict[str, float], gemm: str, kv: str, k: KernelEff
           ) -> list[tuple[float, int, int, float]]:
    """(what the step model's kernel terms give the module, s; batch; context) per row: its GEMMs' weights over the
    bandwidth or their FLOPs at the GPU's measured GEMM share (``k``: tiles of ``g_half`` rows, as
    launchcard.predict._cost times them), the longer; plus its latent decode attention's cache (kv_lora_rank + rope
    a token) over the bandwidth or its FLOPs (rank + rope, then rank, per head and context token) at the measured
    attention share, the longer."""
    out = []
    for r in rows:
        h, b, s = int(r["num_heads"]), int(r["batch_size"]), int(r["step"])
        g_mem = module_params(h) * GEMM_BYTES[gemm] / bw
        g_comp = 2.0 * module_params(h) * max(b, k.g_half) / (flops[GEMM_FLOPS[gemm]] * k.g_comp)
        a_mem = b * s * (KV_RANK + ROPE) * KV_BYTES[kv] / bw
        a_comp = 2.0 * h * (2 * KV_RANK + ROPE) * b * s / (flops["bf16"] * k.ap_comp)
        out.append((max(g_mem, g_comp) + max(a_mem, a_comp), b, s, float(r["latency"]) * 1e-3))
    return out


def module_t0(pts: list[tuple[float, int, int, float]]) -> tuple[float, float, int]:
    """(t0 us, the few-sequence rows' median kernel-term time us, their count): the median over rows of at most
    FEW_SEQS sequences and FEW_CTX context tokens of the measured latency minus what the step model's kernel terms
    give the module (:func:`points`): what the module takes beyond them, its kernels' launch and tail latency."""
    few = [p for p in pts if p[1] <= FEW_SEQS and p[2] <= FEW_CTX]
    if not few:
        return 0.0, 0.0, 0
    t0 = statistics.median(p[3] - p[0] for p in few)
    return round(t0 * 1e6, 2), round(statistics.median(p[0] for p in few) * 1e6, 2), len(few)


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args(argv)
    try:
        import pyarrow  # noqa: F401  (read_all's table reader: the calibrate extra)
    except ImportError:
        print("bench/predict_mla_module.py reads the wheel's parquet tables with pyarrow, which is not installed: "
              "pip install -e .[calibrate]", file=sys.stderr)
        return 2
    whl = wheel()
    z = zipfile.ZipFile(whl)
    names = set(z.namelist())
    print(f"MLA module latency beyond the step model's kernel terms, a layer ({whl.name}, sha256 "
          f"{hashlib.sha256(whl.read_bytes()).hexdigest()[:12]}; rows of <= {FEW_SEQS} sequences, <= {FEW_CTX} "
          "context tokens)")
    for system, hw_id in KERNEL_SYSTEMS.items():
        bw, flops, _ = hw_figures(system)
        for engine, ver in TABLES.items():
            name = f"{DATA}{system}/mla/{engine}/{ver}/{TABLE}.parquet"
            if name not in names:
                continue
            rows = [r for r in read_all(z, name) if str(r.get("model")) == "deepseek-ai/DeepSeek-V3"]
            print(f"  {name[len('aiconfigurator_core/'):]}")
            groups: dict[tuple[str, str, int, str], list[dict[str, Any]]] = {}
            for r in rows:
                key = (str(r["gemm_type"]), str(r["kv_cache_dtype"]), int(r["num_heads"]), str(r["kernel_source"]))
                groups.setdefault(key, []).append(r)
            for (gemm, kv, heads, src), grp in sorted(groups.items()):
                if gemm not in GEMM_BYTES or GEMM_FLOPS[gemm] not in flops or kv not in KV_BYTES:
                    continue
                dt = GEMM_FLOPS[gemm]
                k = kernel_eff(hw_id, "gpu", engine, dt, dt, block=gemm == "fp8_block")
                pts = points(grp, bw, flops, gemm, kv, k)
                if len(pts) < 20:
                    continue
                t0, roof, n = module_t0(pts)
                if not n:
                    continue
                print(f"{hw_id:6s} {engine:6s} {gemm:9s} kv {kv:8s} heads {heads:3d} {src:14s}: t0 {t0:6.1f} us "
                      f"(kernel terms {roof:5.1f} us; {n} rows)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
