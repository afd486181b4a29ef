"""Fit launchcard.predict._cutlass_block's two constants on the one public table of vLLM's SM90 CUTLASS blockwise FP8
op at served shapes, and print the fit beside the constants the module holds.

Data (public, neither calibration nor held-out data): vLLM PR #23280 "[Perf] Use upstream CUTLASS for SM90 Block FP8
kernel" (https://github.com/vllm-project/vllm/pull/23280, description, 2025-09-10, NVIDIA H100 80GB HBM3),
``benchmarks/kernels/bench_block_fp8_gemm.py``: W8A8BlockFp8LinearOp.apply (pad, per-group activation quantization,
the CUTLASS GEMM) replayed in a CUDA graph (``do_bench_cudagraph``), TFLOP/s = 2 M N K / time, column
``w8a8-block-fp8-cutlass``.  Its "N=2112 K=7168" table (DeepSeek-V3's fused_qkv_a) is fitted; the two rows of the
table before it (N=576 K=7168, the script's first shape) printed with M 8192 / 16384 only are a check.  The kernel
is the one vLLM 0.11.0 ships (its _C.abi3.so's only SM90 blockwise GEMM: KernelTmaWarpSpecializedCooperative
FP8BlockScaledAccum, 128 x 128 x 128 tiles).  H100 SXM figures: the catalog's (3.35 TB/s, FP8 1,979 TFLOP/s), 132 SMs.

    python bench/cutlass_block_fit.py
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from launchcard.hardware import find
from launchcard.predict import _cutlass_block as cb

# (M, TFLOP/s) of w8a8-block-fp8-cutlass, N 2112 K 7168 (the M 16384 row's cutlass figure is cut off in the source)
FIT = ((1, 0.893065), (16, 13.940020), (64, 55.792628), (128, 106.531540), (256, 192.465136), (512, 322.256922),
       (1024, 350.649020), (2048, 426.640953), (4096, 456.931446), (8192, 489.655688))
FIT_NK = (2112, 7168)
CHECK = ((576, 7168, 8192, 208.212890), (576, 7168, 16384, 212.857175))


def seconds(m: int, n: int, k: int, tflops: float) -> float:
    return 2.0 * m * n * k / (tflops * 1e12)


def model(m: int, n: int, k: int, share: float, act: float, fp8: float, bw: float, sms: int) -> float:
    """The module's formula at trial constants (cutlass_gemm_s with TILE_SHARE / ACT_BYTES replaced)."""
    padded = m + 4 - m % 4
    tiles = math.ceil(padded / cb.TILE) * math.ceil(n / cb.TILE)
    step = 2.0 * cb.TILE ** 3 / (fp8 / sms * share)
    return math.ceil(tiles / sms) * math.ceil(k / cb.TILE) * step + padded * k * act / bw


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description="Fit vLLM's SM90 CUTLASS blockwise FP8 op (launchcard.predict._cutlass_block) "
                                        "on vLLM PR #23280's H100 table; exit 1 when the module's constants differ "
                                        "from the fit.").parse_args(argv)
    hw = find("h100")
    fp8, bw, sms = float(hw.tflops["fp8"]) * 1e12, float(hw.bandwidth_tbps) * 1e12, cb.SMS["h100"]
    n, k = FIT_NK
    pts = [(m, seconds(m, n, k, tf)) for m, tf in FIT]
    best: tuple[float, float, float] | None = None
    for si in range(200, 1001):  # share 0.200-1.000 by 0.001, bytes 0-20 by 0.05: least squares in log time
        for ai in range(0, 401):
            share, act = si / 1000, ai / 20
            err = sum(math.log(model(m, n, k, share, act, fp8, bw, sms) / t) ** 2 for m, t in pts)
            if best is None or err < best[0]:
                best = (err, share, act)
    assert best is not None
    err, share, act = best
    print(f"fit on N {n} K {k} ({len(pts)} rows): TILE_SHARE {share:.3f}, ACT_BYTES {act:g}; "
          f"rms log error {math.sqrt(err / len(pts)):.3f}")
    print(f"module: TILE_SHARE {cb.TILE_SHARE}, ACT_BYTES {cb.ACT_BYTES}")
    print("   N     K      M  measured us  model us  error")
    for m, t in pts:
        got = cb.cutlass_gemm_s(m, n, k, fp8, bw, sms)
        print(f"{n:5d} {k:5d} {m:6d} {t * 1e6:11.1f} {got * 1e6:9.1f} {got / t - 1:+6.2f}")
    for cn, ck, m, tf in CHECK:
        t, got = seconds(m, cn, ck, tf), cb.cutlass_gemm_s(m, cn, ck, fp8, bw, sms)
        print(f"{cn:5d} {ck:5d} {m:6d} {t * 1e6:11.1f} {got * 1e6:9.1f} {got / t - 1:+6.2f}  (check, not fitted)")
    return 0 if (round(share, 3), round(act, 2)) == (cb.TILE_SHARE, cb.ACT_BYTES) else 1


if __name__ == "__main__":
    sys.exit(main())
