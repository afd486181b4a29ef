"""predict._coef: an AMD GPU's SGLang plan takes the ROCm set (bench/predict_amd.py's, fitted on InferenceX's MI300X
and MI325X runs) on the architecture those runs measured (CDNA3), its unfitted terms read from the NVIDIA-fitted set
it falls back to; every other engine, vendor and architecture (MI355X: CDNA4) keeps the gpu set."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

import pytest

from config_support import LLAMA8B
from launchcard.hardware import find
from launchcard.memory import Settings, arch_from_config, plan_memory
from launchcard.predict import HardwareFigures, Workload, _coef, coefficients, facts_from_memory_plan, predict


def _sets() -> dict[str, Any]:
    return dict(_coef._table()["sets"])


def test_amd_sglang_takes_the_rocm_set_with_the_gpu_sets_other_terms() -> None:
    rocm, gpu = _sets()["rocm:sglang"], coefficients("gpu", "sglang")
    c = coefficients("gpu", "sglang", "AMD")
    assert c.key == "rocm:sglang" and rocm["falls_back_to"] == "gpu:sglang"
    fitted = set(rocm["values"])
    assert fitted == {"layer_us", "attn_eff"}
    for term in fitted:
        assert getattr(c, term) == pytest.approx(rocm["values"][term])
    for term in ("bw_eff", "flops_eff", "collective_us", "eager_layer_us", "extend_layer_us", "seq_us", "step_us"):
        assert getattr(c, term) == getattr(gpu, term), term  # incl. the engine's measured host terms
    assert c.domain is not None and c.domain.vendors == ("AMD",) and c.domain.gpus == ("mi300x", "mi325x")


def test_other_engines_and_vendors_keep_the_gpu_set() -> None:
    assert coefficients("gpu", "vllm", "AMD").key == "gpu:vllm"  # no ROCm vLLM runs fitted
    assert coefficients("gpu", "sglang", "NVIDIA").key == "gpu:sglang"
    assert coefficients("gpu", "sglang").key == "gpu:sglang"
    assert coefficients("cpu", "vllm", "AMD").key == "cpu:vllm"


def test_the_rocm_set_is_taken_on_the_architectures_its_runs_measured_only() -> None:
    assert _coef.platform_arches(_sets()["rocm:sglang"]) == {"cdna3"}  # MI300X, MI325X
    assert find("mi300x").arch == find("mi325x").arch == "cdna3" and find("mi355x").arch == "cdna4"
    assert coefficients("gpu", "sglang", "AMD", "cdna3").key == "rocm:sglang"
    assert coefficients("gpu", "sglang", "AMD", "cdna4").key == "gpu:sglang"  # MI355X: measured 2x faster
    assert coefficients("gpu", "sglang", "AMD").key == "rocm:sglang"  # architecture not known: the vendor's set


def test_the_gate_reads_the_sets_domain(monkeypatch: pytest.MonkeyPatch) -> None:
    doc = copy.deepcopy(_coef._table())
    doc["sets"]["rocm:sglang"]["domain"]["gpus"] = ["mi300x", "mi355x"]  # a set whose runs measured CDNA4 too
    monkeypatch.setattr(_coef, "_table", lambda: doc)
    assert coefficients("gpu", "sglang", "AMD", "cdna4").key == "rocm:sglang"


def test_the_fallback_terms_are_read_when_the_set_is(monkeypatch: pytest.MonkeyPatch) -> None:
    doc = copy.deepcopy(_coef._table())
    doc["sets"]["gpu:sglang"]["values"]["bw_eff"] = 0.5  # a refit of the NVIDIA set
    monkeypatch.setattr(_coef, "_table", lambda: doc)
    c = coefficients("gpu", "sglang", "AMD")
    assert c.bw_eff == 0.5 and c.layer_us == pytest.approx(doc["sets"]["rocm:sglang"]["values"]["layer_us"])


def test_a_mi300x_sglang_prediction_uses_it_and_says_what_it_covers() -> None:
    s = Settings(max_model_len=16384)
    arch = arch_from_config(dict(LLAMA8B))
    acc = find("mi300x")
    f = replace(facts_from_memory_plan(arch, s, plan_memory(arch, s, gpu=acc), HardwareFigures.from_accelerator(acc)),
                engine="sglang")
    w = Workload(isl=1024, osl=256, concurrency=16)
    own, nv = predict(f, w), predict(f, w, coefficients("gpu", "sglang"))
    assert own.tpot_ms_mean > nv.tpot_ms_mean  # the ROCm per-layer overhead and KV-read share
    msg = next(x.message for x in own.findings if x.code == "domain-platform")
    assert msg.startswith("rocm:sglang is fitted on the 30 InferenceX MI300X/MI325X SGLang runs")
    assert "this model has no MLA, so that attention share is assumed" in msg and "e4m3fnuz" in msg
    assert "no public measured AMD serving run" not in msg


def test_a_mi355x_sglang_prediction_keeps_the_gpu_set_and_says_why() -> None:
    s = Settings(max_model_len=16384)
    arch = arch_from_config(dict(LLAMA8B))
    acc = find("mi355x")
    hw = HardwareFigures.from_accelerator(acc)
    assert hw.arch == "cdna4"
    f = replace(facts_from_memory_plan(arch, s, plan_memory(arch, s, gpu=acc), hw), engine="sglang")
    w = Workload(isl=1024, osl=256, concurrency=16)
    p = predict(f, w)
    assert p.tpot_ms_mean == predict(f, w, coefficients("gpu", "sglang")).tpot_ms_mean
    msg = next(x.message for x in p.findings if x.code == "domain-platform")
    assert "gpu:sglang was calibrated on NVIDIA" in msg
    assert "rocm:sglang is not taken: its runs (mi300x, mi325x: cdna3) measured another architecture than this " \
           "GPU's (cdna4)" in msg
