"""Every bench script answers ``--help`` (exit 0, its usage) with launchcard's own environment: a builder's extra
dependency (tiktoken) or arguments read from ``sys.argv`` by hand made it a traceback or a whole benchmark run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


# the scripts (a module other scripts import, with no __main__ block, has no command line to ask)
SCRIPTS = sorted(p.name for p in BENCH.glob("*.py") if '__name__ == "__main__"' in p.read_text(encoding="utf-8"))


@pytest.mark.parametrize("script", SCRIPTS)
def test_a_bench_script_answers_help(script: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(BENCH.parent / "src")}
    res = subprocess.run([sys.executable, str(BENCH / script), "--help"], capture_output=True, text=True,
                         timeout=120, env=env, cwd=BENCH.parent)
    assert res.returncode == 0 and "usage" in res.stdout.lower(), res.stderr[-500:]
    assert "Traceback" not in res.stderr


BAD_INPUT = [
    (["heldout_extract.py", "--gpustack", "/nonexistent", "--aiconfigurator", "/nonexistent", "--sgl-cookbook",
      "/nonexistent", "--dennislee", "/nonexistent"], "--gpustack /nonexistent: not a git snapshot"),
    (["predict_kernels.py", "--gpus", "NOPE"], "--gpus NOPE: not a wheel system"),
    (["fused_moe_blocks.py", "--wheels", "/nonexistent"], "--wheels /nonexistent: no vllm 0.11.0 wheel there"),
    (["predict_heldout.py", "--fixture", "/nonexistent.json"], "--fixture /nonexistent.json: no such file"),
    (["nccl_latency_check.py", "--max-bytes", "0"], "--max-bytes 0: must be a positive number of bytes"),
    (["predict_cpu.py", "--rescore", "--last", "/nonexistent.json"], "--rescore: /nonexistent.json is not a file"),
    (["measure_host_stream.py", "--scheduler", "abc"], "--scheduler abc: not a comma-separated list"),
    (["measure_chat_request.py", "--parse", "--template", "/nonexistent.jinja"], "--template /nonexistent.jinja: no "
                                                                                 "such file"),
    (["calibration_outliers.py", "--over", "-1"], "--over -1.0: must be 0 or more"),
]


@pytest.mark.parametrize(("argv", "said"), BAD_INPUT, ids=lambda v: v[0] if isinstance(v, list) else "")
def test_a_bench_scripts_bad_input_is_one_line_naming_the_option(argv: list[str], said: str) -> None:
    """A wrong snapshot path, GPU name, template or fixture file, or batch list was a traceback (CalledProcessError,
    KeyError, FileNotFoundError, ValueError)."""
    res = subprocess.run([sys.executable, str(BENCH / argv[0]), *argv[1:]], capture_output=True, text=True,
                         timeout=120, env={**os.environ, "PYTHONPATH": str(BENCH.parent / "src")}, cwd=BENCH.parent)
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr[-500:]
    assert said in res.stderr.strip().splitlines()[-1]
