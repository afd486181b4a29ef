"""FlashAttention 2 costs a query block as a whole tile: the evidence behind ``ServingFacts.fa2_unpacked``.

vLLM's FLASH_ATTN backend on SM8x runs vllm-flash-attention's FA2 split-KV kernel over the paged KV cache in tiles of
64 query rows x 128 keys (head dim <= 128; launchcard.predict._attn_backend cites the lines), and packs a KV head's
query heads into one tile only when every query of the call is one token long.  So a decode query that shares a step
with a prefill chunk takes a whole 64-row tile per query head over all its keys, and launchcard.predict._cost times
those tiles at the GPU's prefill attention share (``kernels`` -> ``attn_prefill`` e_comp, fitted on long prompts by
bench/predict_kernels.py).  Nothing is fitted here.

This reads the SM8x vLLM context-attention tables of the aiconfigurator-core 0.12.0 wheel (the A100's vLLM 0.14.0
``vllm_flash_attn`` rows, the L40S's vLLM 0.24.0 ``vllm_flash_attn_fa2`` rows: vLLM's own backend over a paged cache,
the kernel a served step runs) and prints, per prompt length, measured latency over the tile model: the causal
prompt's 64 x 128 tiles (m block i covers min(isl, 64 (i + 1)) keys) times one full tile's FLOPs at the record's
share.  A ratio >= 1 at 16 and 32 tokens (a quarter or half of a tile's rows hold a query) says a partly filled
tile costs a whole one or more; the ratio near 1 on long prompts says the share times the tiles.  Rows whose batch x
heads fill the GPU (>= 2,048 CTAs); head dim 128, BF16 KV, full attention.

    python bench/fa2_tiles.py        # needs pyarrow (the calibrate extra) and the wheel in .cache/aic/
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from predict_accuracy import wheel  # noqa: E402

from launchcard.hardware import find  # noqa: E402
from launchcard.predict._attn_backend import FA2_TILE_ROWS  # noqa: E402
from launchcard.predict._table import coefficient_table  # noqa: E402

TILE_KEYS = 128  # kBlockN for head dim 128 (flash_fwd_launch_template.h L169 at 5714f9de): rows of head dim 128 only
MIN_CTAS = 2048
# wheel system -> (catalog id, table, FA2 kernel_source)
TABLES = {"a100_sxm": ("a100_80gb", "vllm/0.14.0", "vllm_flash_attn"),
          "l40s": ("l40s", "vllm/0.24.0", "vllm_flash_attn_fa2")}


def tiles(isl: int) -> int:
    """64 x 128 tiles one query head of a causal prompt of ``isl`` tokens runs."""
    return sum(-(-min(isl, (i + 1) * FA2_TILE_ROWS) // TILE_KEYS) for i in range(-(-isl // FA2_TILE_ROWS)))


def main() -> int:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()
    try:
        import pyarrow.parquet as pq
    except ImportError:
        print("bench/fa2_tiles.py reads the wheel's parquet tables with pyarrow, which is not installed: "
              "pip install -e .[calibrate]", file=sys.stderr)
        return 2
    z = zipfile.ZipFile(wheel())
    gpus = (coefficient_table().get("kernels") or {}).get("gpus") or {}
    for system, (hw_id, table, source) in TABLES.items():
        name = f"aiconfigurator_core/systems/data/{system}/attention/{table}/context_attention_perf.parquet"
        rec = ((gpus.get(hw_id) or {}).get("vllm") or {}).get("attn_prefill", {}).get("bf16")
        peak = find(hw_id).tflops.get("bf16")
        if rec is None or name not in z.namelist() or not peak:
            print(f"{system}: no table, no attn_prefill record or no bf16 figure")
            continue
        flops = peak * 1e12 * float(rec["e_comp"])
        by: dict[int, list[float]] = {}
        for r in pq.read_table(io.BytesIO(z.read(name))).to_pylist():
            if (r["kernel_source"] != source or r["attn_dtype"] != "bfloat16" or r["kv_cache_dtype"] != "bfloat16"
                    or r.get("window_size") or r["head_dim"] != 128 or r["isl"] < 16
                    or r["batch_size"] * r["num_heads"] < MIN_CTAS):
                continue
            tile_flops = 2 * 2 * FA2_TILE_ROWS * TILE_KEYS * r["head_dim"]
            model = r["batch_size"] * r["num_heads"] * tiles(r["isl"]) * tile_flops / flops
            by.setdefault(r["isl"], []).append(r["latency"] * 1e-3 / model)
        print(f"{system} ({name.split('systems/data/')[1]}, {source}; e_comp {rec['e_comp']} of "
              f"{peak:g} TFLOP/s): measured / tile model")
        for isl, v in sorted(by.items()):
            s = sorted(v)
            print(f"  isl {isl:>6}: {len(v):>4} rows  median {statistics.median(v):5.2f}  "
                  f"p10 {s[len(s) // 10]:5.2f}  p90 {s[9 * len(s) // 10]:5.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
