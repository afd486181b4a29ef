"""The MLA module latency report (bench/predict_mla_module.py): the module's weights at DeepSeek-V3's shapes, what the
step model's kernel terms give one table row, and the latency beyond them.  Synthetic rows only (the wheel's parquet
tables need pyarrow, which CI does not install)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from predict_mla_module import FEW_CTX, FEW_SEQS, module_params, module_t0, points  # noqa: E402

from launchcard.predict._kernels import KernelEff  # noqa: E402


def test_module_weights_are_deepseek_v3s_mla_projections() -> None:
    # q_a 7168x1536 and kv_a 7168x576 on every rank; q_b, kv_b and o split by head (192, 256 and 128 a head)
    assert module_params(1) == 7168 * 1536 + 7168 * 576 + 1536 * 192 + 512 * 256 + 128 * 7168
    assert module_params(16) - module_params(8) == 8 * (1536 * 192 + 512 * 256 + 128 * 7168)


def test_a_row_is_timed_as_the_step_model_times_the_module() -> None:
    row = {"num_heads": 16, "batch_size": 2, "step": 512, "latency": 0.1}  # latency in ms, as the tables write it
    bw, flops = 4.8e12, {"bf16": 989e12, "fp8": 1979e12}
    k = KernelEff(g_comp=0.5, g_half=128.0, ap_comp=0.5)
    (model, b, s, meas), = points([row], bw, flops, "fp8_block", "bfloat16", k)
    gemm = max(module_params(16) / bw, 2.0 * module_params(16) * 128 / (1979e12 * 0.5))  # a 128-row tile
    attn = max(2 * 512 * 576 * 2.0 / bw, 2.0 * 16 * 1088 * 2 * 512 / (989e12 * 0.5))
    assert model == pytest.approx(gemm + attn) and (b, s) == (2, 512) and meas == pytest.approx(1e-4)


def test_t0_is_the_median_excess_of_the_few_sequence_rows_only() -> None:
    pts = [(10e-6, 1, 16, 90e-6), (12e-6, 4, 512, 100e-6), (11e-6, FEW_SEQS, FEW_CTX, 95e-6),
           (50e-6, 64, 512, 400e-6), (20e-6, 1, 8192, 500e-6)]  # the last two: too many sequences / too long
    t0, terms, n = module_t0(pts)
    assert (t0, terms, n) == (pytest.approx(84.0), pytest.approx(11.0), 3)
    assert module_t0([(50e-6, 64, 512, 400e-6)]) == (0.0, 0.0, 0)
