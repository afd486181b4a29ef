"""bench/mla_module_check.py: the table lookup it sums modules with (synthetic points: the wheel's parquet tables
need pyarrow, which CI does not install)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from mla_module_check import CONFIG, _interp, main, model_gpu_ms  # noqa: E402


def test_a_batch_between_measured_sizes_is_linear_between_them() -> None:
    pts = {4: 0.1, 64: 0.25, 1024: 0.4}
    assert _interp(pts, 34) == pytest.approx(0.175)
    assert _interp(pts, 64) == pytest.approx(0.25)


def test_a_batch_outside_the_measured_sizes_takes_the_nearest_end() -> None:
    pts = {4: 0.1, 64: 0.25}
    assert _interp(pts, 1) == 0.1 and _interp(pts, 4096) == 0.25


def test_a_context_the_table_lacks_is_refused_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--ctx", "300"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--ctx 300" in err


def test_the_models_gpu_time_leaves_out_collectives_and_host_work_and_keeps_launches() -> None:
    """The figure set against the tables (which time kernels only): above the memory and compute terms by the
    launches, below the whole step by at least the collectives, at one sequence and at 1024."""
    from launchcard.memory import Settings
    from launchcard.predict import serving_facts
    from launchcard.predict._coef import coefficients
    from launchcard.predict._cost import step_terms, step_work

    f = serving_facts(CONFIG, Settings(tp=8, vllm_version="0.11.0").validate(), gpu="h200", engine="vllm")
    c = coefficients("gpu", "vllm")
    for b in (1, 1024):
        w = step_work(f, b, float(b * 512), 0, 0.0)
        mem, comp, comm, ovh = (x * 1e3 for x in step_terms(w, c, True))
        gpu = model_gpu_ms(w, c)
        assert mem + comp < gpu <= mem + comp + ovh
        assert gpu + comm <= mem + comp + comm + ovh + 1e-9 and comm > 0
