"""TTFT's front-end term: what a GPU prediction's TTFT counts, and the calibration holding the API-server terms."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from config_support import LLAMA8B
from launchcard.hardware import find
from launchcard.memory import Settings, arch_from_config, plan_memory
from launchcard.predict import (
    Coefficients,
    HardwareFigures,
    ServingFacts,
    Workload,
    _coef,
    _predict,
    coefficients,
    facts_from_memory_plan,
    predict,
)

ROOT = Path(__file__).resolve().parents[1]


def _facts(engine: str) -> ServingFacts:
    s = Settings(max_model_len=16384)
    arch = arch_from_config(dict(LLAMA8B))
    acc = find("h100")
    return facts_from_memory_plan(arch, s, plan_memory(arch, s, gpu=acc), HardwareFigures.from_accelerator(acc),
                                  engine=engine)


def _front(engine: str, coef: Coefficients | None = None) -> str:
    p = predict(_facts(engine), Workload(isl=256, osl=64, concurrency=2, num_requests=4), coef)
    got = [f for f in p.findings if f.code == "ttft-front-end"]
    assert len(got) == 1 and got[0].severity == "assumed"
    return got[0].message


@pytest.mark.parametrize("engine", ["vllm", "sglang", "trtllm"])
def test_a_gpu_prediction_says_what_its_ttft_counts_and_leaves_out(engine: str) -> None:
    c = coefficients("gpu", engine)
    assert c.request_ms == 0.0 and c.inflight_us == 0.0  # held in the fit (FRONT_HELD)
    msg = _front(engine)
    # held at 0: said plainly, with why, and no "+ 0 ms" figure
    assert ("first token (queueing, prefill steps with their launch costs), and nothing for the API server's request "
            "path (HTTP, chat template, tokenizing") in msg
    assert f"{c.key} holds its API-server terms (request_ms, inflight_us) at 0, because the runs it was fitted" in msg
    assert "cannot tell that path apart from the engine's light-load cost" in msg
    assert "bench/predict_front.py" in msg and "/v1/completions" in msg
    assert " 0 ms" not in msg and " 0 us" not in msg and "+ 0" not in msg


def test_a_set_with_front_end_terms_names_only_those_it_has() -> None:
    c = coefficients("gpu", "vllm")
    msg = _front("vllm", replace(c, request_ms=12.5))
    assert "launch costs) + 12.5 ms per request (gpu:vllm's API-server terms, fitted). The API server's" in msg
    assert "in flight" not in msg and "holds its" not in msg
    msg = _front("vllm", replace(c, request_ms=12.5, inflight_us=40.0))
    assert "+ 12.5 ms per request + 40 us per request in flight (gpu:vllm's API-server terms" in msg
    msg = _front("vllm", replace(c, inflight_us=40.0))
    assert "launch costs) + 40 us per request in flight (" in msg and " ms per request" not in msg


def test_the_finding_quotes_the_light_load_miss_the_fit_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_predict, "light_load_ttft", lambda key: None)
    assert "not recorded for this set" in _front("sglang")
    monkeypatch.setattr(_predict, "light_load_ttft", lambda key: (8, 120, (-12.4, 3.0, 41.6)))
    assert "at <= 8 clients, measured minus predicted TTFT is -12 / +3 / +42 ms (quartiles of 120 runs)" in (
        _front("sglang"))
    # a quartile within half a millisecond of 0 reads 0, not "-0"
    monkeypatch.setattr(_predict, "light_load_ttft", lambda key: (8, 120, (-0.4, 0.2, 41.6)))
    assert "measured minus predicted TTFT is 0 / 0 / +42 ms" in _front("sglang")


def test_light_load_ttft_reads_what_the_fit_wrote(monkeypatch: pytest.MonkeyPatch) -> None:
    doc = {"sets": {"gpu:sglang": {"light_load_ttft": {"clients": 8, "runs": 57,
                                                        "measured_minus_predicted_ms": [-20.5, 1.0, 30.0]}},
                    "gpu:vllm": {"values": {}},
                    "gpu:trtllm": {"light_load_ttft": {"clients": 8, "measured_minus_predicted_ms": [1.0]}}}}
    monkeypatch.setattr(_coef, "_table", lambda: doc)
    _coef.light_load_ttft.cache_clear()
    try:
        assert _coef.light_load_ttft("gpu:sglang") == (8, 57, (-20.5, 1.0, 30.0))
        assert _coef.light_load_ttft("gpu:vllm") is None  # a set written before the fit recorded it
        assert _coef.light_load_ttft("gpu:trtllm") is None  # not three quartiles: not read as one
        assert _coef.light_load_ttft("gpu:other") is None
    finally:
        _coef.light_load_ttft.cache_clear()


@pytest.fixture(scope="module")
def accuracy() -> Any:
    sys.path.insert(0, str(ROOT / "bench"))
    import predict_accuracy

    return predict_accuracy


def test_the_gpu_fit_holds_the_api_server_terms_at_zero(accuracy: Any) -> None:
    """The calibration runs cannot tell the API server's time from the engine's light-load cost
    (bench/predict_front.py): a fit whose TTFT rows all carry a fixed excess leaves request_ms and
    inflight_us at 0 and puts the excess where the engine spends it (here: the eager per-layer term)."""
    prior = accuracy.prior_sets()
    for c in prior.values():
        assert c.request_ms == 0.0 and c.inflight_us == 0.0
    th = list(range(1, 13))  # theta + request_theta: the held indices are the API-server terms
    got = _coef.from_theta([float(x) for x in th], prior["sglang"])
    assert [th[i] for i in accuracy.FRONT_HELD] == [got.request_ms, got.inflight_us]

    def trace(ttft_ms: float, tpot_ms: float, eager_layers: float) -> Any:
        # features of (mem, compute, attn, comm, collectives, step, seqs, layers, eager layers, eager layers of
        # extend batches) + (1e-3, inflight)
        a_tpot = [tpot_ms * 1e-3 * 0.8, 0.0, 0.0, 0.0, 0.0, 1e-6, 1e-6, 0.0, 0.0, 0.0, 0.0, 0.0]
        a_ttft = [ttft_ms * 1e-3 * 0.3, 0.0, 0.0, 0.0, 0.0, 1e-6, 1e-6, 0.0, eager_layers * 1e-6,
                  eager_layers * 1e-6, 1e-3, 4e-6]
        row = SimpleNamespace(engine="sglang", tpot_ms=tpot_ms, ttft_ms=ttft_ms)
        return accuracy.Trace(row, a_tpot, a_ttft)

    traces = [trace(200.0 + 10 * i, 10.0 + i % 3, 60.0 + 5 * i) for i in range(12)]
    fitted = accuracy.fit_sets(traces, prior)["sglang"]
    assert fitted.request_ms == 0.0 and fitted.inflight_us == 0.0
    # the excess lands on the prefill step's own terms (its launches and the extend batch's cost)
    assert fitted.eager_layer_us + fitted.extend_layer_us > 1000.0


def test_the_gpu_fit_splits_sglangs_eager_term_and_keeps_one_for_the_other_engines(accuracy: Any) -> None:
    """SGLang's extend batches and its eager decode batches are apart in the fit: TTFT rows whose prefill steps
    carry an excess and TPOT rows of eager decode batches that carry none put the excess on extend_layer_us and
    leave eager_layer_us near 0; vLLM's set keeps its one eager term (extend_layer_us held at 0: EXTEND_HELD)."""
    prior = accuracy.prior_sets()
    assert accuracy.EXTEND_HELD == (9,) and _coef.PARAMS.index("extend_layer_us") == 9  # theta's order
    assert prior["sglang"].extend_layer_us == 0.0

    def trace(engine: str, ttft_ms: float, tpot_ms: float, groups: float) -> Any:
        # the kernels' seconds at the engine's fastest allowed reads (the fit bounds 1/bw_eff below by read_bounds)
        k = 1.0 / accuracy.read_bounds(engine)[0]
        # decode: eager batches of `groups` kernel groups whose kernels (mem) are the whole measured step
        a_tpot = [tpot_ms * 1e-3 * k, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, groups * 1e-6, 0.0, 0.0, 0.0]
        # prefill: the kernels are 30% of the measured TTFT; the rest is per kernel group of the extend batch
        a_ttft = [ttft_ms * 1e-3 * 0.3 * k, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, groups * 1e-6, groups * 1e-6, 1e-3,
                  0.0]
        return accuracy.Trace(SimpleNamespace(engine=engine, tpot_ms=tpot_ms, ttft_ms=ttft_ms), a_tpot, a_ttft)

    # 0.7 x TTFT over the groups: 700 us per group at 60 groups and 42 ms, and so on
    traces = [trace(e, 0.7e-3 * g * 1e3 / 0.7, 20.0 + i, g) for e in ("vllm", "sglang")
              for i, g in enumerate(range(40, 160, 10))]
    fitted = accuracy.fit_sets(traces, prior)
    assert fitted["sglang"].eager_layer_us < 20.0
    assert fitted["sglang"].extend_layer_us == pytest.approx(700.0, rel=0.05)
    assert fitted["vllm"].extend_layer_us == 0.0
