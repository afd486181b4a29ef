"""bench/comm_tables.py: the wheel's measured all-reduce rows against the step model's ring."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from comm_tables import BF16, report  # noqa: E402

from launchcard.predict._table import coefficient_table  # noqa: E402


def test_the_report_sets_the_ring_at_the_sets_terms_against_the_measured_rows() -> None:
    """H100 (NVLink 4, 450 GB/s a direction), vLLM TP8, a 16.8 MB message: the ring at gpu:vllm's link share plus
    its per-call latency, over the measured time."""
    v = coefficient_table()["sets"]["gpu:vllm"]["values"]
    nbytes = 2 ** 23 * BF16
    rec = {"h100": {"vllm": {"release": "0.24.0", "all_reduce": {"8": [[1024.0, 5e-6], [float(nbytes), 100e-6]]}}}}
    ring = 2 * 7 / 8 * nbytes / (450e9 * v["link_eff"]) + v["collective_us"] * 1e-6
    (line,) = report(rec)
    assert line.startswith("h100 vllm 0.24.0 TP8: 16.8 MB 100.0 us")
    assert f"ring / measured {ring / 100e-6:.2f}" in line
