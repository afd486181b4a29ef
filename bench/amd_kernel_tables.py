"""MI300X against H200/H100 on DeepSeek-V3's tensor-parallel decode GEMMs, per call, from public measured tables.

Report only: it writes nothing and no step-model term reads it.  It answers one question of issue 24 (the held-out
MI300X SGLang DeepSeek-V3.1 tp8 runs decode 2-3x slower than predicted): is a block-FP8 GEMM call slower on MI300X
than on the calibrated NVIDIA GPUs at the shapes a decode step runs?

Data:
- MI300X: AMD's aiter repository (github ROCm/aiter, MIT) ships the per-shape times of its tuned GEMM kernels.
  ``aiter/configs/model_configs/a8w8_blockscale_tuned_gemm_ds_v3.csv`` at commit
  1a4121e559b347d3567a3b4cf6daefe99f541044 (2026-04-30, "dsv3 blockscale gemm config in mi300", PR #2881) added
  its first rows for gfx942 with 304 CUs (the MI300X; MI325X also has 304 CUs, and its rows came later, commit
  84493f0e5b, "gfx942 MI325X ... DSv3.2 TP8"): per (M, N, K) the fastest kernel's ``us``.  Pass that file's text:
  ``git --git-dir <aiter git dir> show 1a4121e5:aiter/configs/model_configs/a8w8_blockscale_tuned_gemm_ds_v3.csv``.
- H200 / H100: the aiconfigurator-core 0.12.0 wheel's SGLang 0.5.14 ``gemm_perf.parquet`` (fp8_block rows; the
  fastest kernel per shape, bench/predict_kernels.py ``read``), read with pyarrow (the ``calibrate`` extra).

Shapes: DeepSeek-V3's (its config.json) linear layers split over ``--tp`` ranks, as SGLang shards them (column-
parallel outputs and row-parallel inputs divided by tp; the fused q_a + kv_a projection replicated).  What the
tables lack is said, not filled: aiter's tables hold no MI300X row of DeepSeek-V3's tensor-parallel routed-expert
MoE (7168 x 256 experts, top-8; cu_num 304 has the 8-way expert-parallel shape only), so the MoE is not compared.

    python bench/amd_kernel_tables.py --aiter-csv /tmp/ds_v3_gemm.csv
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import statistics
import sys
import zipfile
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

CONFIG = ROOT / "tests" / "fixtures" / "predict_heldout_configs" / "deepseek-ai--DeepSeek-V3_config.json"
AITER_FILE = "aiter/configs/model_configs/a8w8_blockscale_tuned_gemm_ds_v3.csv"
AITER_COMMIT = "1a4121e559b347d3567a3b4cf6daefe99f541044"
MI300X_CUS = 304  # aiter's cu_num for gfx942 MI300X (and MI325X)
NVIDIA = ("h200_sxm", "h100_sxm")
AIC_TABLE = "aiconfigurator_core/systems/data/{gpu}/gemm/sglang/0.5.14/gemm_perf.parquet"
ROWS = (1, 2, 4, 8, 16)  # decode batches of the held-out MI300X runs' light loads (1 and 16 clients)


class Shape(NamedTuple):
    name: str
    n: int  # output features on one rank
    k: int  # input features on one rank


class UnevenSplit(ValueError):
    """A --tp that does not divide a width the ranks split."""


def decode_shapes(cfg: dict[str, Any], tp: int) -> list[Shape]:
    """The block-FP8 linear layers of one DeepSeek-V3 decoder layer on one of ``tp`` ranks (attention, dense MLP,
    shared expert); the MLA decode's absorbed BMMs and the router run other kernels and are left out."""
    h, heads = int(cfg["hidden_size"]), int(cfg["num_attention_heads"])
    q_lora, kv_lora, rope = int(cfg["q_lora_rank"]), int(cfg["kv_lora_rank"]), int(cfg["qk_rope_head_dim"])
    qk = int(cfg["qk_nope_head_dim"]) + rope
    v = int(cfg["v_head_dim"])
    dense, shared = int(cfg["intermediate_size"]), int(cfg["moe_intermediate_size"]) * int(
        cfg.get("n_shared_experts") or 0)
    # a rank's shape is a whole share of each split width: a tp that leaves a remainder has no such shape (the
    # floor would time a GEMM no rank runs)
    uneven = [f"{name} {width}" for name, width in (("num_attention_heads", heads), ("intermediate_size", dense),
                                                    ("shared experts' intermediate size", shared)) if width % tp]
    if uneven:
        raise UnevenSplit(f"--tp {tp} does not divide {', '.join(uneven)}")
    heads, dense, shared = heads // tp, dense // tp, shared // tp
    out = [Shape("q_a + kv_a (fused, replicated)", q_lora + kv_lora + rope, h),
           Shape("q_a", q_lora, h), Shape("kv_a", kv_lora + rope, h),
           Shape("q_b", heads * qk, q_lora), Shape("o_proj", h, heads * v),
           Shape("dense gate_up", 2 * dense, h), Shape("dense down", h, dense)]
    if shared:
        out += [Shape("shared gate_up", 2 * shared, h), Shape("shared down", h, shared)]
    return out


def aiter_rows(text: str, cus: int = MI300X_CUS) -> dict[tuple[int, int, int], float]:
    """(M, N, K) -> microseconds of the tuned kernel, for the rows measured on ``cus`` compute units."""
    out: dict[tuple[int, int, int], float] = {}
    for r in csv.DictReader(io.StringIO(text)):
        if int(r["cu_num"]) != cus:
            continue
        key = (int(r["M"]), int(r["N"]), int(r["K"]))
        us = float(r["us"])
        out[key] = min(us, out.get(key, us))
    return out


def aic_rows(rows: list[dict[str, Any]]) -> dict[tuple[int, int, int], float]:
    """(M, N, K) -> microseconds of the fastest fp8_block kernel in an aiconfigurator GEMM table (ms there)."""
    out: dict[tuple[int, int, int], float] = {}
    for r in rows:
        if r["gemm_dtype"] != "fp8_block":
            continue
        key, us = (int(r["m"]), int(r["n"]), int(r["k"])), float(r["latency"]) * 1e3
        out[key] = min(us, out.get(key, us))
    return out


class Line(NamedTuple):
    shape: Shape
    m: int
    mi300x_us: float | None
    nvidia_us: dict[str, float | None]


def compare(shapes: list[Shape], mi300x: dict[tuple[int, int, int], float],
            nvidia: dict[str, dict[tuple[int, int, int], float]], ms: tuple[int, ...] = ROWS) -> list[Line]:
    return [Line(s, m, mi300x.get((m, s.n, s.k)), {g: t.get((m, s.n, s.k)) for g, t in nvidia.items()})
            for s in shapes for m in ms]


def ratios(lines: list[Line], gpu: str) -> list[float]:
    """MI300X over ``gpu`` wherever both tables time the shape."""
    return [ln.mi300x_us / t for ln in lines if ln.mi300x_us and (t := ln.nvidia_us.get(gpu))]


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--aiter-csv", type=Path, required=True,
                    help=f"the text of {AITER_FILE} at aiter commit {AITER_COMMIT[:10]} (git show ... > file)")
    ap.add_argument("--config", type=Path, default=CONFIG, help="DeepSeek-V3's config.json")
    ap.add_argument("--tp", type=int, default=8)
    args = ap.parse_args(argv)
    for opt, p in (("--aiter-csv", args.aiter_csv), ("--config", args.config)):
        if not p.is_file():
            print(f"{opt} {p}: no such file; pass {'the aiter table' if opt == '--aiter-csv' else 'a config.json'}",
                  file=sys.stderr)
            return 2
    if args.tp < 1:
        print(f"--tp {args.tp}: must be a whole number >= 1", file=sys.stderr)
        return 2
    try:
        shapes = decode_shapes(json.loads(args.config.read_text(encoding="utf-8")), args.tp)
    except UnevenSplit as exc:
        print(f"{exc}: pass a --tp that divides them (8 for DeepSeek-V3's held-out runs)", file=sys.stderr)
        return 2
    except (KeyError, TypeError, ValueError, AttributeError):  # not JSON, a field missing or not a number
        print(f"--config {args.config}: not a DeepSeek-V3 config.json (needs hidden_size, num_attention_heads, "
              "q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim, intermediate_size, "
              "moe_intermediate_size as numbers); pass DeepSeek-V3's own", file=sys.stderr)
        return 2
    try:
        mi300x = aiter_rows(args.aiter_csv.read_text(encoding="utf-8"))
    except (KeyError, ValueError, TypeError, UnicodeDecodeError):
        print(f"--aiter-csv {args.aiter_csv}: not an aiter tuned-GEMM table (columns cu_num, M, N, K, us); pass "
              f"{AITER_FILE}", file=sys.stderr)
        return 2
    if not mi300x:
        print(f"--aiter-csv {args.aiter_csv}: no row with cu_num {MI300X_CUS} (MI300X); pass {AITER_FILE} at "
              f"commit {AITER_COMMIT[:10]} or later", file=sys.stderr)
        return 2
    try:
        import pyarrow  # noqa: F401  (read's table reader: the calibrate extra)
    except ImportError:
        print("bench/amd_kernel_tables.py reads the wheel's parquet tables with pyarrow, which is not installed: "
              "pip install -e .[calibrate]", file=sys.stderr)
        return 2
    from predict_accuracy import wheel
    from predict_kernels import read

    z = zipfile.ZipFile(wheel())
    nvidia = {g: aic_rows(read(z, AIC_TABLE.format(gpu=g))) for g in NVIDIA}
    lines = compare(shapes, mi300x, nvidia)
    print(f"DeepSeek-V3 tp{args.tp} block-FP8 GEMMs, us per call: MI300X (aiter {AITER_COMMIT[:10]}, cu_num "
          f"{MI300X_CUS}) vs SGLang 0.5.14 on {', '.join(NVIDIA)} (aiconfigurator-core 0.12.0)\n")
    print("| GEMM | N x K | M | MI300X | " + " | ".join(NVIDIA) + " |")
    print("|---|---|---|---|" + "---|" * len(NVIDIA))
    for ln in lines:
        print(f"| {ln.shape.name} | {ln.shape.n} x {ln.shape.k} | {ln.m} | {_fmt(ln.mi300x_us)} | "
              + " | ".join(_fmt(ln.nvidia_us[g]) for g in NVIDIA) + " |")
    for g in NVIDIA:
        r = ratios(lines, g)
        if r:
            print(f"\nMI300X / {g}: median {statistics.median(r):.2f} over {len(r)} (shape, M) both time "
                  f"(min {min(r):.2f}, max {max(r):.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
