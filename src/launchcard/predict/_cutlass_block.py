"""vLLM's CUTLASS blockwise FP8 GEMM on SM90: the kernel a block-scaled FP8 checkpoint's dense GEMMs run where the
``deep_gemm`` package does not import (or ``VLLM_USE_DEEP_GEMM=0``), timed per GEMM shape.

Which kernel runs (vLLM 0.11.0): ``apply_w8a8_block_fp8_linear`` calls DeepGEMM's ``fp8_gemm_nt`` only when
``should_use_deepgemm_for_fp8_linear`` holds, which needs ``is_deep_gemm_supported()`` = VLLM_USE_DEEP_GEMM and
``has_deep_gemm()`` (the package imports) and SM90/SM100 (vllm/utils/deep_gemm.py L23-30; the wheel does not require
deep_gemm); otherwise, where CUTLASS's block kernel is supported, it pads the rows to a multiple of 4 on SM90 (4 more
when already one: ``num_pad = 4 - rows % 4``), quantizes the activations per 1 x 128 group and runs CUTLASS
(model_executor/layers/quantization/utils/fp8_utils.py L154-170).  The 0.11.0 wheel's ``_C.abi3.so`` holds one SM90
blockwise configuration: ``cutlass_3x_gemm_fp8_blockwise<bf16, 1, 128, 128, Shape<128,128,128>, Cluster<1,2,1>,
TmaWarpSpecializedCooperative, KernelTmaWarpSpecializedCooperativeFP8BlockScaledAccum>`` (its demangled symbols;
upstream CUTLASS's block-scaled mainloop, vLLM PR #23280): a 128 x 128 output tile per CTA, the whole K loop in it
(no split-K), so a GEMM of M rows and N columns runs ceil(M/128) x ceil(N/128) tiles on the GPU's SMs.

Timing (:func:`cutlass_gemm_s`): waves of tiles x K/128 steps of one 128^3 block-scaled MMA at a share of one SM's
datasheet FP8 rate, plus the activations' pad and quantization streamed at the datasheet bandwidth:

    t = ceil(tiles / SMs) x ceil(K / 128) x 2 x 128^3 / (FP8 FLOP/s / SMs x TILE_SHARE) + M_pad x K x ACT_BYTES / BW

TILE_SHARE and ACT_BYTES are fitted (bench/cutlass_block_fit.py) on the public table of vLLM PR #23280 (H100 SXM,
``benchmarks/kernels/bench_block_fp8_gemm.py``: the whole W8A8BlockFp8LinearOp replayed in a CUDA graph), the only
measurement of this kernel at served shapes: no calibration table holds it (the aiconfigurator wheel's vLLM
CutlassFp8BlockScaledMMKernel rows have K 32/64 only).  A DeepSeek-R1 TP 8 MoE layer's five block GEMMs then take
~80 us at a few decode rows (fused_qkv_a N 2112 and the shared experts' gate_up N 512 keep 17 and 4 SMs busy for a
K of 7168), where DeepGEMM's record reads their weights in ~10 us.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from launchcard.predict._types import Finding

if TYPE_CHECKING:
    from launchcard.memory import Arch
    from launchcard.predict._figures import HardwareFigures

# the fit of bench/cutlass_block_fit.py on vLLM PR #23280's N 2112 K 7168 table (10 rows, M 1-8192, H100 SXM 80GB,
# https://github.com/vllm-project/vllm/pull/23280, description, "Benchmarking DeepSeek-V3, N=2112 K=7168",
# w8a8-block-fp8-cutlass column): rms log error 2.4%; the same table's N 576 K 7168 rows (M 8192, 16384) it was not
# fitted on: -8% / -11%
TILE_SHARE = 0.466  # of one SM's datasheet FP8 rate, per 128^3 block-scaled MMA step
ACT_BYTES = 11.3  # bytes streamed per activation element (the pad copy and the per-group quantization)
TILE = 128
# streaming multiprocessors of the SM90 GPUs this kernel is timed on: H100 SXM5 132 (NVIDIA H100 Tensor Core GPU
# Architecture whitepaper, H100 SXM5 table); the H200 is the same GH100 part (NVIDIA's H200 page: the H100 SXM's
# FP8/BF16 figures, 1,979 / 989 TFLOP/s, with HBM3e); the H100 PCIe has 114 SMs and no SXM FLOP/s figures
SMS = {"h100": 132, "h200": 132}


def cutlass_gemm_s(rows: float, n: int, k: int, fp8_flops: float, bandwidth: float, sms: int) -> float:
    """Seconds the SM90 CUTLASS blockwise op takes for ``rows`` x ``n`` x ``k`` (0 rows: nothing runs)."""
    if rows <= 0:
        return 0.0
    padded = math.ceil(rows) + 4 - math.ceil(rows) % 4  # fp8_utils.py L158-165: 4 - rows % 4 more rows
    tiles = math.ceil(padded / TILE) * math.ceil(n / TILE)
    step = 2.0 * TILE ** 3 / (fp8_flops / sms * TILE_SHARE)
    return math.ceil(tiles / sms) * math.ceil(k / TILE) * step + padded * k * ACT_BYTES / bandwidth


# (N, K, GEMMs a forward pass runs, prefill rows only) of one TP rank
Shape = tuple[int, int, int, bool]


def block_gemm_shapes(arch: Arch, tp: int) -> tuple[Shape, ...]:
    """The block-scaled FP8 dense GEMMs of one forward pass on a TP rank, as vLLM 0.11.0 builds them (models/
    deepseek_v2.py; the Llama/Qwen layers' QKVParallelLinear / MergedColumnParallelLinear / RowParallelLinear): MLA's
    fused_qkv_a (q_lora + kv_lora + rope, replicated: ``disable_tp=True`` L878-884) or kv_a_proj_with_mqa
    (replicated, L886-891) and q_proj, q_b_proj, o_proj; kv_b_proj only in prefill (decode multiplies its absorbed
    W_UK / W_UV in bf16, v1/attention/backends/mla/common.py L1013-1030); GQA/MHA's qkv and o; each dense layer's
    gate_up and down; each MoE layer's shared experts (TP-split DeepseekV2MLP, L207-217).  Routed experts run the
    MoE kernels; the lm_head is unquantized."""
    hidden, heads, per = arch.hidden_size, arch.num_heads, max(1, tp)
    layers, moe = arch.num_layers, (arch.num_layers - arch.dense_layers) if arch.is_moe else 0
    local = max(1, heads // per)
    out: list[Shape] = []
    if arch.kv_lora_rank:
        qk = arch.qk_nope_head_dim + arch.qk_rope_head_dim
        latent = arch.kv_lora_rank + arch.qk_rope_head_dim
        if arch.q_lora_rank:
            out += [(arch.q_lora_rank + latent, hidden, layers, False), (local * qk, arch.q_lora_rank, layers, False)]
        else:
            out += [(latent, hidden, layers, False), (local * qk, hidden, layers, False)]
        out += [(local * (arch.qk_nope_head_dim + arch.v_head_dim), arch.kv_lora_rank, layers, True),
                (hidden, local * arch.v_head_dim, layers, False)]
    else:
        kv = max(1, arch.num_kv_heads // per)
        out += [((local + 2 * kv) * arch.head_dim, hidden, layers, False),
                (hidden, local * arch.head_dim, layers, False)]
    for inter, count in ((arch.intermediate_size, layers - moe), (arch.shared_expert_intermediate, moe)):
        if inter and count:
            out += [(2 * inter // per, hidden, count, False), (hidden, inter // per, count, False)]
    return tuple(out)


def block_gemms_s(shapes: tuple[Shape, ...], tokens: float, prefill_tokens: float, fp8_flops: float,
                  bandwidth: float, sms: int) -> float:
    """Seconds a step of ``tokens`` rows (``prefill_tokens`` of them prompt rows) spends in ``shapes``."""
    return sum(count * cutlass_gemm_s(prefill_tokens if pf else tokens, n, k, fp8_flops, bandwidth, sms)
               for n, k, count, pf in shapes)


# the release whose wheel the tile configuration was read from (its _C.abi3.so symbols)
READ_RELEASE = (0, 11)


def cutlass_plan(arch: Arch, tp: int, hw: HardwareFigures, cc: tuple[int, int] | None,
                 out: list[Finding], release: tuple[int, ...] | None = None) -> tuple[tuple[Shape, ...], int]:
    """The shapes and SM count that time a vLLM plan's block-scaled FP8 dense GEMMs as CUTLASS's blockwise kernel,
    where DeepGEMM cannot run (Settings.deep_gemm False); ((), 0) where this GPU's kernel is not timed (the
    fp8_block record's DeepGEMM shares stay, said in an ``assumed`` finding)."""
    sms = SMS.get(hw.id, 0)
    if cc == (9, 0) and sms and "fp8" in hw.flops:
        out.append(Finding("info", "block-fp8-kernel",
                           "no DeepGEMM (deep_gemm not installed, or VLLM_USE_DEEP_GEMM=0): vLLM runs its block-scaled "
                           "FP8 dense GEMMs with CUTLASS's SM90 blockwise kernel (fp8_utils.py L154-170; one 128 x "
                           "128 tile per CTA, no split-K), timed per GEMM shape: waves of tiles on "
                           f"{sms} SMs x K/128 steps at {TILE_SHARE:.3f} of an SM's FP8 rate, plus the activations' "
                           f"pad and quantization ({ACT_BYTES:g} B an element), fitted on vLLM PR #23280's H100 "
                           "table (bench/cutlass_block_fit.py)"))
        if release is None or tuple(release[:2]) != READ_RELEASE:  # another wheel's configurations are not read
            told = "not stated" if release is None else ".".join(map(str, release[:3]))
            out.append(Finding("assumed", "block-fp8-kernel",
                               f"CUTLASS's SM90 blockwise configuration is read from vLLM 0.11.0's wheel (one 128 x "
                               f"128 x 128 tile, no split-K); the release here is {told}: timed as 0.11.0's"))
        return block_gemm_shapes(arch, tp), sms
    out.append(Finding("assumed", "block-fp8-kernel",
                       f"no DeepGEMM: vLLM runs its block-scaled FP8 dense GEMMs with CUTLASS's blockwise kernel "
                       f"(or Triton), which is timed on SM90 H100/H200 only (vLLM PR #23280's table), not on {hw.id}: "
                       "timed with the fp8_block record's shares"))
    return (), 0
