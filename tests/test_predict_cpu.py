"""Prediction vs. the real vLLM CPU server, measured with ``launchcard bench`` (issue 24, item 4).

One server start: the 1024x6 random-weight Llama that bench/compare_vllm_bench.py builds (~100M
parameters, 394 MB of fp32 weights read per step, eager), served by the vLLM CPU venv.  Three workloads,
each run three times interleaved.  Right before and after every run bench/measure_cpu.py measures, on the
CPU worker's core with the engine's own oneDNN GEMM kernel, the weight-streaming bandwidth over the
model's weight bytes, the GEMM FLOP/s and the host's time for one kernel call; each run is predicted with
the mean of the figures around it.  The ``cpu:vllm`` host terms were fitted on another model (512x4)
and its own workloads (``fitted_on``) and are scaled by the op time measured here.  Each workload's
predicted TPOT and output throughput must be within 15% of what ``launchcard bench`` measured.

A run is judged only when the figures measured before and after it agree within 30%
(``predict_cpu.STEADY``): a run during which the machine changed speed (other jobs starting or stopping
on this shared 2-core box) cannot be predicted from figures taken around it.  A workload needs two such
runs.  Only when no workload has them is the test an expected failure, with every figure; a judged
workload more than 15% off fails it.  Cost: one server start, ~3-4 minutes on a loaded 2-core machine.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from live_support import require_live

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.live


def test_predicted_tpot_and_throughput_within_15_percent_of_launchcard_bench() -> None:
    require_live()
    sys.path.insert(0, str(ROOT / "bench"))
    from predict_cpu import compare

    from live_support import free_port

    out = compare(ROOT / ".cache" / "bench-model-1024x6", free_port())
    assert len(out["rows"]) == 3
    assert all(r["decode_bound"] in ("memory", "compute", "overhead") for r in out["rows"])
    seen = [(r["workload"], f"TPOT {r['tpot_error']:+.1%}", f"throughput {r['tput_error']:+.1%}",
             "run spreads " + "/".join(f"{x['spread']:.2f}" for x in r["runs"])) for r in out["rows"]]
    judged = [r for r in out["rows"] if r["steady"]]
    if not judged:
        pytest.xfail(f"the machine's speed moved during every run (figures before/after a run more than "
                     f"{out['steady_within']}x apart in at least two of each workload's three runs): {seen}; "
                     f"load average {out['load_average']}")
    bad = [r["workload"] for r in judged if abs(r["tpot_error"]) > 0.15 or abs(r["tput_error"]) > 0.15]
    assert not bad, f"off by more than 15%: {bad}; all workloads {seen}; load average {out['load_average']}"
