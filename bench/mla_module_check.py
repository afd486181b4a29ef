"""A DeepSeek-V3/R1 decode step on H200 under TP 8: the step model's parts against aiconfigurator's measured
module tables (calibration data: never the held-out runs).

The held-out DeepSeek H200 vLLM rows are predicted 19-45% too fast.  This sums, per decode batch, what the wheel's
measured tables say one step's modules take on H200 (vLLM 0.24.0 ``mla_generation_module_perf``: the whole MLA
attention module, projections included, 16 heads per rank, FP8 block-scaled GEMMs, BF16 cache; vLLM 0.24.0
``moe_perf``: the FP8 block-scaled Triton grouped GEMM, hidden 7168, inter 2048, 256 experts, top 8, MoE TP 8)
and prints it beside the step model's decode step for the same plan (``vllm serve DeepSeek-R1 -tp 8``,
release 0.11.0), split into its parts.  Collectives, norms, the dense MLP layers and the shared experts are not in
the tables' sum: the gap it shows is a lower bound.

Needs pyarrow (the calibrate extra) and the wheel in .cache/aic/ (bench/predict_accuracy.py downloads it).
    python bench/mla_module_check.py [--ctx 512]
"""

from __future__ import annotations

import argparse
import io
import itertools
import sys
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from predict_accuracy import wheel  # noqa: E402

from launchcard.memory import Settings  # noqa: E402
from launchcard.predict import serving_facts  # noqa: E402
from launchcard.predict._coef import Coefficients, coefficients  # noqa: E402
from launchcard.predict._cost import StepWork, step_terms, step_work  # noqa: E402

DATA = "aiconfigurator_core/systems/data/h200_sxm/"
MLA = DATA + "mla/vllm/0.24.0/mla_generation_module_perf.parquet"
MOE = DATA + "moe/vllm/0.24.0/moe_perf.parquet"
CONFIG = ROOT / "tests/fixtures/predict_heldout_configs/deepseek-ai--DeepSeek-R1_config.json"
LAYERS, MOE_LAYERS = 61, 58  # DeepSeek-V3/R1: 61 decoder layers, the first 3 dense
CTXS = (16, 128, 512, 2048, 8192)  # context tokens per sequence the MLA table measured (its "step")


def _rows(z: zipfile.ZipFile, name: str) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq  # bench-only dependency (the calibrate extra)

    rows: list[dict[str, Any]] = pq.read_table(io.BytesIO(z.read(name))).to_pylist()
    return rows


def _interp(points: dict[int, float], x: float) -> float:
    """Linear between measured sizes (the nearest end outside them)."""
    xs = sorted(points)
    if x <= xs[0]:
        return points[xs[0]]
    for a, b in itertools.pairwise(xs):
        if x <= b:
            return points[a] + (points[b] - points[a]) * (x - a) / (b - a)
    return points[xs[-1]]


def model_gpu_ms(w: StepWork, c: Coefficients) -> float:
    """What the tables' modules compare with, ms: the step model's kernels and launches (memory, compute, and
    step_terms' step_us + layer_us part of the overhead, CUDA graphs on), not its collectives or per-sequence host
    work, which the tables lack."""
    mem, comp, _, _ = step_terms(w, c, True)
    return (mem + comp + (c.step_us + c.layer_us * w.layers) * 1e-6) * 1e3


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ctx", type=int, default=512, help=f"context tokens a sequence, one of {CTXS} (default 512)")
    a = ap.parse_args(argv)
    if a.ctx not in CTXS:
        print(f"--ctx {a.ctx}: not a context the MLA table measured; use one of {', '.join(map(str, CTXS))}",
              file=sys.stderr)
        return 2
    ctx = a.ctx
    z = zipfile.ZipFile(wheel())
    mla = {int(r["batch_size"]): float(r["latency"]) for r in _rows(z, MLA)
           if r["kernel_source"] == "FLASH_ATTN_MLA" and int(r["num_heads"]) == 16
           and r["kv_cache_dtype"] == "bfloat16" and r["gemm_type"] == "fp8_block" and int(r["step"]) == ctx}
    moe: dict[str, dict[int, float]] = {}
    for r in _rows(z, MOE):
        if (r["kernel_source"] == "vllm_fp8moe_triton_tritonexperts" and r["moe_dtype"] == "fp8_block"
                and int(r["hidden_size"]) == 7168 and int(r["inter_size"]) == 2048 and int(r["num_experts"]) == 256
                and int(r["topk"]) == 8 and int(r["moe_tp_size"]) == 8 and int(r["moe_ep_size"]) == 1):
            moe.setdefault(str(r["distribution"]), {})[int(r["num_tokens"])] = float(r["latency"])
    f = serving_facts(CONFIG, Settings(tp=8, vllm_version="0.11.0").validate(), gpu="h200", engine="vllm")
    c = coefficients("gpu", "vllm")
    print(f"decode step, DeepSeek-R1 vLLM 0.11.0 TP 8 on H200, {ctx} context tokens a sequence (ms)")
    print("batch | model: memory compute comm overhead total | tables: MLA module x61, MoE x58 balanced "
          "(power-law 1.01), sum | model GPU without comm, against the sum")
    for b in (1, 4, 16, 64, 256, 512, 1024):
        w = step_work(f, b, float(b * ctx), 0, 0.0)
        mem, comp, comm, ovh = (x * 1e3 for x in step_terms(w, c, True))
        t_mla = LAYERS * _interp(mla, b)
        t_bal, t_pl = (MOE_LAYERS * _interp(moe[d], b) for d in ("balanced", "power_law_1.01"))
        gpu = model_gpu_ms(w, c)
        print(f"{b:5d} | {mem:6.2f} {comp:6.2f} {comm:6.2f} {ovh:6.2f} {mem + comp + comm + ovh:7.2f} | "
              f"{t_mla:6.2f} {t_bal:6.2f} ({t_pl:6.2f}) {t_mla + t_bal:7.2f} | {gpu:6.2f} "
              f"{(gpu / (t_mla + t_bal) - 1) * 100:+4.0f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
