"""A bare ``cpu`` names no product: it was an alias of the Intel Xeon 6 entry, so any CPU was planned (and, with
catalog figures, would have been timed) as a Xeon 6 NUMA node. It is now ambiguous among the catalog's CPU
entries; a CPU that is neither is predicted on its own measured figures (``--hardware-figures``, no ``--gpu``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import run_cli
from launchcard.errors import InputError
from launchcard.hardware import catalog, find, lookup

QWEN = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"
LOAD = ("--isl", "128", "--osl", "64", "--concurrency", "1")


def test_cpu_is_no_one_catalog_entry() -> None:
    cpus = {a.id for a in catalog().accelerators if a.is_cpu}
    assert lookup("cpu") is None and {a.id for a in catalog().candidates("CPU")} == cpus
    with pytest.raises(InputError, match=r"ambiguous GPU name \('cpu'\).*xeon6.*xeon5"):
        find("cpu")
    assert find("xeon 6").id == "xeon6" and find("Intel Xeon 5").id == "xeon5"  # a product's own name still does


def test_memory_of_a_bare_cpu_is_refused_naming_the_entries() -> None:
    """`memory --gpu cpu` planned the host memory of a Xeon 6 NUMA node (256 GiB, the recipes' estimate)."""
    res = run_cli("memory", "--config", str(QWEN), "--gpu", "cpu")
    line = res.stderr.strip()
    assert res.returncode == 2 and not res.stdout and "\n" not in line, res.stderr
    assert line.startswith("launchcard: error: --gpu: ambiguous GPU name ('cpu')") and "xeon6" in line, line
    assert line.endswith("another CPU: --device cpu --gpu-memory-gib X (its NUMA node's memory)"), line
    res = run_cli("memory", "--config", str(QWEN), "--device", "cpu", "--gpu-memory-gib", "64", "--json")
    assert res.returncode in (0, 1) and json.loads(res.stdout)["device"] == "cpu", res.stderr


def test_predict_of_a_bare_cpu_names_the_measured_figures_fix(tmp_path: Path) -> None:
    """`predict --gpu cpu` was the Xeon 6 entry: refused now with the catalog's CPU entries and the measured path."""
    fig = tmp_path / "fig.json"
    fig.write_text('{"bandwidth_gbs": 20, "tflops": {"bf16": 1.0, "fp32": 0.5}, "method": "test", "kind": "cpu"}')
    for extra in ((), ("--hardware-figures", str(fig), "--cpu-kvcache-space-gib", "8")):
        res = run_cli("predict", "--config", str(QWEN), "--gpu", "cpu", *extra, *LOAD)
        line = res.stderr.strip()
        assert res.returncode == 2 and not res.stdout and "\n" not in line, res.stderr
        assert "ambiguous GPU name ('cpu')" in line and "xeon6" in line and "xeon5" in line, line
        assert "--hardware-figures FILE" in line and "bench/measure_cpu.py" in line, line
    # the CPU proof's way (bench/predict_cpu.py, bench/measure_cpu.py): the measured figures, no --gpu
    res = run_cli("predict", "--config", str(QWEN), "--hardware-figures", str(fig), "--cpu-kvcache-space-gib", "8",
                  *LOAD, "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["hardware"] == "measured"
