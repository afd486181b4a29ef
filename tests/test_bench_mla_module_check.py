"""bench/mla_module_check.py: the table lookup it sums modules with (synthetic points: the wheel's parquet tables
need pyarrow, which CI does not install)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from mla_module_check import _interp, main  # noqa: E402


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
