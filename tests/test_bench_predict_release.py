"""bench/predict_accuracy.py: the LOFO rows' errors grouped by engine release (major.minor) and GPU."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from predict_accuracy import by_release, release_group  # noqa: E402


def _row(engine: str, release: str, system: str, signed: float) -> dict[str, Any]:
    return {"engine": engine, "release": release, "system": system, "group": f"{engine}|{release}",
            "tpot_signed": signed, "tpot": abs(signed), "ttft": 0.1, "tput": 0.1, "tput_pred": 1.0,
            "tput_meas": 1.0}


def test_release_groups_are_major_minor_and_keep_tags() -> None:
    assert release_group("trtllm", "1.2.0rc2.post2") == "trtllm 1.2"
    assert release_group("trtllm", "1.2.0rc6.post3") == "trtllm 1.2"
    assert release_group("vllm", "0.11.2") == "vllm 0.11"
    assert release_group("trtllm", "gpt-oss-dev") == "trtllm gpt-oss-dev"
    assert release_group("sglang", "") == "sglang -"


def test_by_release_splits_by_gpu_and_keeps_the_sign() -> None:
    rows = [_row("trtllm", "1.2.0rc2", "b200_sxm", s) for s in (0.5, 0.6, 0.7)]
    rows += [_row("trtllm", "1.2.0rc6.post1", "h100_sxm", -0.2)]
    out = by_release(rows)
    assert sorted(out) == ["trtllm 1.2 b200_sxm", "trtllm 1.2 h100_sxm"]
    b200 = out["trtllm 1.2 b200_sxm"]
    assert b200["rows"] == 3
    assert b200["tpot_signed_median"] == pytest.approx(0.6)
    assert b200["tpot_median"] == pytest.approx(0.6)
    assert out["trtllm 1.2 h100_sxm"]["tpot_signed_median"] == pytest.approx(-0.2)
