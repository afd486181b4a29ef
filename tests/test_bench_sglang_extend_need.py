"""bench/sglang_extend_need.py: the zero crossing it reports and how it groups runs (no wheel needed)."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from sglang_extend_need import load_bin, setting, zero_crossing  # noqa: E402


def test_zero_crossing_interpolates_between_the_values_around_it() -> None:
    assert zero_crossing([0.0, 600.0, 300.0], [-0.4, 0.2, -0.1]) == pytest.approx(400.0)
    assert zero_crossing([0.0, 300.0], [0.0, 0.5]) is None  # never below zero: no crossing from below
    assert zero_crossing([0.0, 300.0], [-0.5, -0.1]) is None  # never reaches zero in range


def test_load_bins() -> None:
    assert [load_bin(c) for c in (1, 8, 9, 64, 65)] == ["c<=8", "c<=8", "c9-64", "c9-64", "c>64"]


def test_setting_names_the_quant_mode_of_the_run() -> None:
    def row(quant: str) -> Any:
        return cast(Any, SimpleNamespace(family="qwen3.5", group=f"m|b300_sxm|sglang|{quant}|1024x1024",
                                         system="b300_sxm", release="0.5.10.post1", facts=SimpleNamespace(tp=4),
                                         concurrency=16))

    assert setting(row("")) == ("qwen3.5", "bf16", "b300_sxm", "0.5.10.post1", "tp4", "c9-64")
    assert setting(row("checkpoint"))[1] == "nvfp4-ckpt"
    assert setting(row("fp8_block"))[1] == "fp8_block"
