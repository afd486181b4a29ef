"""NCCL's own latency model against measured NCCL calls: is a small all-reduce's latency NCCL's model's?

predict/_nccl.py times what the path without GPU peer access adds to a collective by NCCL 2.26.2's tuning model
(``tuning.cc``: base latency + hops x the path's hop latency), and keeps the coefficient set's per-collective latency
(fitted on served steps with peer access) for the call itself.  This script shows why: it reads the measured NCCL
all-reduce tables the ``aiconfigurator-core`` 0.12.0 wheel ships (``systems/data/<gpu>/comm/nccl/<version>/
nccl_perf.parquet``: NVIDIA's runs, Apache-2.0; read from ``.cache/aic/`` with pyarrow, ``pip install -e
.[calibrate]``) and prints, per GPU and group size, the median time of the calls of at most ``--max-bytes`` against
the latency NCCL's model gives the ring/LL call it picks there (NVLink hops for the SXM/NVL systems, PCI hops for
PCIe cards), and the per-collective latency each shipped GPU set was fitted to.  Calibration data only: no
held-out run is read.

    python bench/nccl_latency_check.py
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from predict_accuracy import wheel  # noqa: E402
from predict_kernels import DATA, read_all  # noqa: E402

from launchcard.predict._nccl import _BASE_LAT, _NVL_LAT, _PCI_LAT  # noqa: E402

# wheel systems whose GPUs talk over PCIe (no NVLink on the board): NCCL's PCI hop latencies apply
PCIE = {"l40s", "l4", "a100_pcie", "h100_pcie", "rtx_pro_6000_server", "b60"}


def model_us(ranks: int, pcie: bool) -> float:
    """tuning.cc (v2.26.2-1) L121, L131/L135, L324: a one-node ring/LL all-reduce's latency, 2(n-1) hops."""
    hop = (_PCI_LAT if pcie else _NVL_LAT)["ring", "ll"]
    return _BASE_LAT["ring", "ll"] + 2 * (ranks - 1) * hop


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max-bytes", type=int, default=16384, help="the calls counted as small (bytes per rank)")
    args = ap.parse_args(argv)
    if args.max_bytes <= 0:
        ap.error(f"--max-bytes {args.max_bytes}: must be a positive number of bytes")
    z = zipfile.ZipFile(wheel())
    tables = sorted(n for n in z.namelist()
                    if re.fullmatch(rf"{DATA}[^/]+/comm/nccl/[^/]+/nccl_perf\.parquet", n))
    print("| system | NCCL | GPUs | path | measured small all-reduce (median us, calls) | NCCL model ring/LL us |")
    print("|---|---|---|---|---|---|")
    for name in tables:
        system, version = name[len(DATA):].split("/")[0], name.split("/")[-2]
        rows = read_all(z, name)
        for n in sorted({int(r["num_gpus"]) for r in rows}):
            # message_size counts elements; "half" is 2 bytes an element
            small = [float(r["latency"]) * 1e3 for r in rows
                     if r["op_name"] == "all_reduce" and int(r["num_gpus"]) == n
                     and r.get("nccl_dtype", "half") == "half" and int(r["message_size"]) * 2 <= args.max_bytes]
            if not small:
                continue
            pcie = system in PCIE
            print(f"| {system} | {version} | {n} | {'PCI' if pcie else 'NVLink'} | "
                  f"{statistics.median(small):.1f} ({len(small)}) | {model_us(n, pcie):.1f} |")
    sets = json.loads((ROOT / "src/launchcard/data/predict_coefficients.json").read_text(encoding="utf-8"))["sets"]
    fitted = ", ".join(f"{k} {v['values']['collective_us']:.1f} us" for k, v in sets.items() if k.startswith("gpu:"))
    print(f"\nper-collective latency fitted on served steps with peer access (collective_us): {fitted}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
