"""Acceptance on the public sample of real vLLM start-up figures (bench/memory_report.py)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OBS = ROOT.parent / "shared" / "testdata" / "vllm-memory-observations-sample.jsonl"
HELD_OUT = ROOT / "bench" / "data" / "vllm-memory-observations.jsonl"
CONFIGS = ROOT / "bench" / "data" / "configs.json"


def _bench():
    spec = importlib.util.spec_from_file_location("memory_report", ROOT / "bench" / "memory_report.py")
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.skipif(not OBS.exists(), reason="shared test data not present")
def test_sample_acceptance() -> None:
    rep = _bench().report(OBS)
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


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def test_held_out_split_is_by_source() -> None:
    """The held-out rows come from sources the sample does not use, each with its quote and settings."""
    held = _rows(HELD_OUT)
    assert len(held) >= 15
    sample_urls = {r["source_url"] for r in _rows(OBS)} if OBS.exists() else set()
    ids = [r["obs_id"] for r in held]
    assert len(set(ids)) == len(ids)
    for r in held:
        assert r["source_url"].startswith("https://") and r["source_url"] not in sample_urls, r["obs_id"]
        assert r["source_quote"] and r["model_id"] and r["gpu_name"], r["obs_id"]
        assert isinstance(r.get("assumed"), list), r["obs_id"]
    configs = json.loads(CONFIGS.read_text("utf-8"))
    for model, entry in configs.items():
        assert entry.get("source"), model
    readme = (HELD_OUT.parent / "README.md").read_text("utf-8")
    assert "held-out" in readme and "sample" in readme


@pytest.mark.skipif(not OBS.exists(), reason="shared test data not present")
def test_held_out_acceptance() -> None:
    """Scored on rows no constant was tuned on (bench/data/README.md)."""
    rep = _bench().report()
    held = rep["splits"]["held-out"]["overall"]
    assert held["rows"] == held["predicted"], "every held-out row gets a prediction"
    assert all(r["error"] is None for r in rep["rows"] if r["split"] == "held-out")
    assert held["err_tokens"]["median"] <= 0.10 and held["err_tokens"]["p90"] <= 0.30
    assert held["err_kv_gib"]["p90"] <= 0.30
    assert held["err_weights"]["median"] <= 0.02
    assert "sample" in rep["splits"]
