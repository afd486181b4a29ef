"""Measured all-reduce times per GPU, engine and TP size, from the aiconfigurator-core 0.12.0 wheel's comm tables.

Data: ``aiconfigurator_core/systems/data/<gpu>/comm/<engine>/<release>/custom_allreduce_perf.parquet`` (NVIDIA's
measurements, Apache-2.0), read with pyarrow from the wheel bench/predict_accuracy.py downloads.  NVIDIA's collector
(ai-dynamo/aiconfigurator collector/network/collect_all_reduce.py) times each engine's own all-reduce entry point
(vLLM and SGLang: ``tensor_model_parallel_all_reduce`` inside ``graph_capture``; TensorRT-LLM: ``AllReduce`` with
``AllReduceStrategy.AUTO``), so each row is the implementation that engine's release picks at that size and TP
(vLLM's custom all-reduce below its max_size, else symmetric memory or NCCL; SGLang with its custom all-reduce on
and symmetric memory / MSCCL++ off, its defaults), five calls replayed in one CUDA graph: the collective's own GPU
time.  ``message_size`` counts bf16 elements (``allreduce_dtype``), ``latency`` is milliseconds per call.

The release read per engine is the one the kernel tables use (predict_kernels.VERSIONS / OWN_VERSIONS).  Graph rows
only (``vllm_graph`` / ``sglang_graph``; TensorRT-LLM's are all graph-replayed).

Report only: the step model keeps its ring (``_cost._all_reduce``) at each set's fitted link share plus the fitted
per-call latency.  Timing each tensor-parallel all-reduce from these tables instead (the record, the interpolation
in log size and a refit were built and measured, branch ``allreduce-tables``) made the leave-one-family-out TPOT
12.6% / 34.8% -> 12.8% / 38.2% (median / p90) and the held-out p90 42.4% -> 43.0%: the fitted per-call latency
carries per-layer time a served step spends beyond the collective (after the refit vLLM's layer_us rose from 37.9
to 47.5 us), which the graph-replayed tables do not hold.

    python bench/comm_tables.py            # ring at each set's link share + latency vs the tables, at 1 and 16.8 MB
"""

from __future__ import annotations

import argparse
import hashlib
import io
import sys
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from predict_accuracy import WHEEL_URL, wheel  # noqa: E402
from predict_kernels import DATA, KERNEL_SYSTEMS, OWN_VERSIONS, VERSIONS  # noqa: E402

ENGINES = ("vllm", "sglang", "trtllm")
TABLE = "custom_allreduce_perf.parquet"
BF16 = 2  # bytes per element of the tables' bfloat16 rows


def read_tables(whl: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """{catalog GPU: {engine: record}}: each record's all_reduce is {TP: [[bytes, seconds], ...]} by size."""
    import pyarrow.parquet as pq

    out: dict[str, dict[str, dict[str, Any]]] = {}
    with zipfile.ZipFile(whl) as z:
        names = set(z.namelist())
        for gpu, cat in KERNEL_SYSTEMS.items():
            for eng in ENGINES:
                rel = OWN_VERSIONS.get(gpu, VERSIONS)[eng]
                name = f"{DATA}{gpu}/comm/{eng}/{rel}/{TABLE}"
                if name not in names:
                    continue
                raw = z.read(name)
                rows = pq.read_table(io.BytesIO(raw)).to_pylist()
                by_tp: dict[str, list[list[float]]] = {}
                for r in rows:
                    if r["op_name"] != "all_reduce" or r["allreduce_dtype"] != "bfloat16":
                        continue
                    if eng != "trtllm" and not str(r.get("backend", "")).endswith("_graph"):
                        continue
                    by_tp.setdefault(str(r["num_gpus"]), []).append(
                        [float(r["message_size"] * BF16), float(r["latency"]) * 1e-3])
                if not by_tp:
                    continue
                out.setdefault(cat, {})[eng] = {
                    "release": rel, "file": name[len("aiconfigurator_core/"):],
                    "sha256": hashlib.sha256(raw).hexdigest(),
                    "all_reduce": {tp: sorted(v) for tp, v in sorted(by_tp.items(), key=lambda kv: int(kv[0]))}}
    return out


def report(tables: dict[str, dict[str, dict[str, Any]]]) -> list[str]:
    """The recorded sets' ring model against each table, at a decode-size and a prefill-size message."""
    from launchcard.hardware import find
    from launchcard.predict._figures import HardwareFigures
    from launchcard.predict._table import coefficient_table

    sets = coefficient_table()["sets"]
    lines = []
    for cat, by_eng in tables.items():
        link = HardwareFigures.from_accelerator(find(cat)).link_bps
        for eng, rec in by_eng.items():
            v = sets[f"gpu:{eng}"]["values"]
            for tp, rows in rec["all_reduce"].items():
                g = int(tp)
                cells = []
                for nbytes, sec in rows:
                    if nbytes in (2 ** 19 * BF16, 2 ** 23 * BF16) and link:
                        ring = 2 * (g - 1) / g * nbytes / (link * v["link_eff"]) + v["collective_us"] * 1e-6
                        cells.append(f"{nbytes / 1e6:.1f} MB {sec * 1e6:.1f} us (ring / measured {ring / sec:.2f})")
                lines.append(f"{cat} {eng} {rec['release']} TP{tp}: " + "; ".join(cells))
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.parse_args()
    whl = wheel()
    print(f"{whl.name} ({WHEEL_URL}), sha256 {hashlib.sha256(whl.read_bytes()).hexdigest()[:16]}")
    print("\n".join(report(read_tables(whl))))


if __name__ == "__main__":
    main()
