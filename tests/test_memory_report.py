"""Acceptance on the public sample of real vLLM start-up figures (bench/memory_report.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OBS = ROOT.parent / "shared" / "testdata" / "vllm-memory-observations-sample.jsonl"


def _bench():
    spec = importlib.util.spec_from_file_location("memory_report", ROOT / "bench" / "memory_report.py")
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.skipif(not OBS.exists(), reason="shared test data not present")
def test_sample_acceptance() -> None:
    rep = _bench().report()
    rows, summary = rep["rows"], rep["summary"]
    assert all(r["pred_tokens"] is not None and r["error"] is None for r in rows), "every row gets a prediction"
    assert summary["err_tokens"]["n"] >= 8 and summary["err_tokens"]["median"] <= 0.10
    assert summary["err_weights"]["n"] >= 8 and summary["err_weights"]["p90"] <= 0.05


def test_bench_prints_table(capsys: pytest.CaptureFixture[str]) -> None:
    if not OBS.exists():
        pytest.skip("shared test data not present")
    assert _bench().main([]) == 0
    out = capsys.readouterr().out
    assert "kv_cache_tokens" in out and "median" in out and "p90" in out
