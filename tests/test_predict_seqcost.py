"""vLLM's per-sequence host cost: measured (data/predict_coefficients.json "engine_seq"), held in the fit, in series
with the step's kernels before async scheduling and beside them with it."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from config_support import LLAMA8B
from launchcard.hardware import find
from launchcard.memory import Settings, arch_from_config, plan_memory, settings_from_argv
from launchcard.predict import (
    Coefficients,
    HardwareFigures,
    ServingFacts,
    Workload,
    _coef,
    _cost,
    coefficients,
    facts_from_memory_plan,
    predict,
    step_terms,
    step_work,
)
from launchcard.predict._engine_rules import vllm_async_rule, vllm_async_scheduling

ROOT = Path(__file__).resolve().parents[1]


def _facts(version: str, **over: Any) -> ServingFacts:
    s = Settings(max_model_len=16384, vllm_version=version, **over)
    arch = arch_from_config(dict(LLAMA8B))
    acc = find("h100")
    return facts_from_memory_plan(arch, s, plan_memory(arch, s, gpu=acc), HardwareFigures.from_accelerator(acc),
                                  engine="vllm")


@pytest.mark.parametrize(("version", "given", "pp", "spec", "on"), [
    ((0, 13), None, 1, None, False),  # off by default before 0.14 (0.13.0 config/scheduler.py L133)
    ((0, 11), True, 1, None, True),  # --async-scheduling
    ((0, 14), None, 1, None, True),  # on by default from 0.14 (0.14.1 config/vllm.py L588)
    ((0, 32), False, 1, None, False),  # --no-async-scheduling
    ((0, 14), None, 2, None, False),  # pipeline parallel turns it off
    ((0, 20), None, 1, "ngram", False),  # a speculative method outside EagleModelTypes
    ((0, 20), None, 1, "deepseek_mtp", True),
    ((0, 20), None, 1, "eagle3", True),
])
def test_async_scheduling_follows_the_flag_then_the_releases_default(
        version: tuple[int, int], given: bool | None, pp: int, spec: str | None, on: bool) -> None:
    assert vllm_async_scheduling(version, given, pp, spec) is on


def test_the_launch_flag_reaches_the_plan_facts() -> None:
    assert settings_from_argv(["vllm", "serve", "m", "--async-scheduling"]).async_scheduling is True
    assert settings_from_argv(["vllm", "serve", "m", "--no-async-scheduling"]).async_scheduling is False
    assert settings_from_argv(["vllm", "serve", "m"]).async_scheduling is None
    assert not _facts("0.11.0").host_overlap and _facts("0.11.0", async_scheduling=True).host_overlap
    assert _facts("0.14.1").host_overlap and not _facts("0.14.1", async_scheduling=False).host_overlap


def _c(seq_us: float, **over: Any) -> Coefficients:
    return replace(coefficients("gpu", "vllm"), seq_us=seq_us,
                   **{"seq_rise": _coef.SeqRise(), "step_us": 0.0, **over})


def test_without_async_scheduling_the_host_cost_adds_to_every_step() -> None:
    w = step_work(_facts("0.11.0"), 1000, 1000 * 400.0, 0, 0.0)
    base = sum(step_terms(w, _c(0.0), True))
    assert sum(step_terms(w, _c(15.0), True)) == pytest.approx(base + 1000 * 15e-6)


def test_with_async_scheduling_it_hides_behind_the_kernels_until_it_is_longer() -> None:
    f = _facts("0.14.1")
    small, big = step_work(f, 64, 64 * 400.0, 0, 0.0), step_work(f, 1000, 1000 * 400.0, 0, 0.0)
    assert sum(step_terms(small, _c(15.0), True)) == pytest.approx(sum(step_terms(small, _c(0.0), True)))
    kernels = sum(step_terms(big, _c(0.0), True))
    host = kernels / 1000 * 1e6 * 3  # us per sequence: three times the step's kernels
    assert sum(step_terms(big, _c(host), True)) == pytest.approx(1000 * host * 1e-6)


def test_the_per_step_host_part_is_in_series_without_async_scheduling_and_beside_the_kernels_with_it() -> None:
    """vLLM before 0.14 runs schedule, execute_model and update_from_output one after another (0.11.0
    v1/engine/core.py L272-292): the host time every step pays adds to the step; async scheduling lays it beside
    the kernels with the per-sequence part, so it costs only where the host's work is longer than the kernels."""
    sync, asyn = step_work(_facts("0.11.0"), 8, 8 * 400.0, 0, 0.0), step_work(_facts("0.14.1"), 8, 8 * 400.0, 0, 0.0)
    base = sum(step_terms(sync, _c(15.0), True))
    assert sum(step_terms(sync, _c(15.0, step_us=700.0), True)) == pytest.approx(base + 700e-6)
    assert sum(step_terms(asyn, _c(15.0, step_us=700.0), True)) == pytest.approx(sum(step_terms(asyn, _c(15.0), True)))
    kernels = sum(step_terms(asyn, _c(0.0), True))
    host = kernels * 1e6 * 2  # a per-step part twice the kernels: the step is the host's work
    assert sum(step_terms(asyn, _c(15.0, step_us=host), True)) == pytest.approx((host + 8 * 15.0) * 1e-6)


@pytest.mark.parametrize("seqs", [8, 64, 1000])
@pytest.mark.parametrize("version", ["0.11.0", "0.14.1"])
def test_features_stay_the_step_time_on_both_sides_of_the_overlap(seqs: int, version: str) -> None:
    """The fit's linear view of a step (features . theta) equals the step's time in every regime."""
    w = step_work(_facts(version), seqs, seqs * 400.0, 0, 0.0)
    for us, growth, step in ((5.0, 0.0, 0.0), (15.0, 0.3, 700.0), (200.0, 0.0, 0.0), (200.0, 0.3, 700.0),
                             (15.0, 0.0, 50_000.0)):
        c = _c(us, seq_rise=_coef.SeqRise(64, 1000, growth), step_us=step)
        fv = _cost.features(w, c, True)
        assert sum(a * b for a, b in zip(fv, _coef.theta(c), strict=True)) == pytest.approx(
            sum(step_terms(w, c, True)))


def _doc(points: list[dict[str, Any]]) -> dict[str, Any]:
    return {**_coef._table(), "engine_seq": {"about": "test", "points": points}}


def test_the_measured_points_give_seq_us_and_its_growth(monkeypatch: pytest.MonkeyPatch) -> None:
    ref = _coef._ref_op(0.0)
    pts = [{"batch": 64, "seq_us": {"vllm": 10.0}, "host_op_us": ref},
           {"batch": 1000, "seq_us": {"vllm": 15.0}, "host_op_us": ref * 2}]  # measured on a 2x slower host
    doc = _doc(pts)
    monkeypatch.setattr(_coef, "_table", lambda: doc)
    got = _coef.engine_seq("vllm")
    assert got is not None and got[0] == pytest.approx(10.0) and got[1][:2] == (64, 1000) and got.step_us is None
    assert got[1].growth == pytest.approx(7.5 / 10.0 - 1.0)  # 15 us at twice the op time: 7.5 at the reference
    assert _coef.engine_seq("sglang") is None
    c = coefficients("gpu", "vllm")
    assert c.seq_us == pytest.approx(10.0) and c.seq_rise.growth == pytest.approx(-0.25)
    assert coefficients("gpu", "sglang").seq_rise.hi == 0  # the fitted sets keep theirs
    assert _coef.seq_count(c, 32) == 32 and _coef.seq_count(c, 2000) == pytest.approx(2000 * 0.75)
    assert _coef.seq_count(c, 532) == pytest.approx(532 * (1 - 0.25 * 0.5))


def test_the_per_step_part_is_read_at_the_reference_host_speed(monkeypatch: pytest.MonkeyPatch) -> None:
    ref = _coef._ref_op(0.0)
    doc = _doc([{"batch": 64, "seq_us": {"vllm": 10.0}, "host_op_us": ref}])
    doc["engine_seq"]["step"] = {"step_us": {"vllm": 600.0}, "host_op_us": ref * 2}  # a 2x slower host
    monkeypatch.setattr(_coef, "_table", lambda: doc)
    got = _coef.engine_seq("vllm")
    assert got is not None and got.step_us == pytest.approx(300.0)
    assert coefficients("gpu", "vllm").step_us == pytest.approx(300.0)
    assert coefficients("gpu", "trtllm").step_us == doc["sets"]["gpu:trtllm"]["values"]["step_us"]  # fitted: kept


def test_the_shipped_table_holds_the_measurement_with_its_provenance() -> None:
    sec = _coef._table()["engine_seq"]
    pts = sec["points"]
    assert len(pts) >= 3 and all(p["seq_us"]["vllm"] > 0 and p["host_op_us"] > 0 for p in pts)
    assert all("bench/measure_engine_seq.py" in p["measured_on"] and "vLLM" in p["measured_on"] for p in pts)
    c = coefficients("gpu", "vllm")
    assert c.seq_us > 0 and c.seq_rise.hi == max(p["batch"] for p in pts)
    # the per-step part: the intercept of the two smallest batches' steps, which seq_us leaves out
    two = sorted(pts, key=lambda p: p["batch"])[:2]
    step = sec["step"]["step_us"]["vllm"]
    assert step > 0 and all(p["step_us"] == pytest.approx(step + p["seq_us"]["vllm"] * (p["batch"] - 1), rel=0.01)
                            for p in two)
    assert c.step_us == pytest.approx(step * _coef._ref_op(0.0) / sec["step"]["host_op_us"])


def test_a_burst_of_a_thousand_before_async_scheduling_is_slower_by_the_host_cost() -> None:
    w = Workload(isl=200, osl=64, rate=float("inf"), num_requests=1000)
    c = coefficients("gpu", "vllm")
    old = predict(_facts("0.11.0"), w, c).tpot_ms_mean
    none = predict(_facts("0.11.0"), w, replace(c, seq_us=0.0)).tpot_ms_mean
    p = predict(_facts("0.14.1"), w, c)
    assert old > none * 1.05 and old > p.tpot_ms_mean
    got = [f for f in p.findings if f.code == "engine-host"]
    assert len(got) == 1 and got[0].severity == "assumed" and "async scheduling" in got[0].message


@pytest.fixture(scope="module")
def accuracy() -> Any:
    sys.path.insert(0, str(ROOT / "bench"))
    import predict_accuracy

    return predict_accuracy


def test_the_gpu_fit_keeps_vllms_measured_seq_us(accuracy: Any) -> None:
    prior = accuracy.prior_sets()
    measured = coefficients("gpu", "vllm").seq_us
    assert prior["vllm"].seq_us == measured and prior["sglang"].seq_rise.hi == 0

    def trace(engine: str, tpot_ms: float, seqs: float) -> Any:
        # every row's TPOT carries far more per-sequence time than the measured term: a free fit would raise it
        a = [tpot_ms * 1e-3 * 0.2, 0.0, 0.0, 0.0, 0.0, 1e-6, seqs * 1e-6, 0.0, 0.0, 0.0, 0.0, 0.0]
        return accuracy.Trace(SimpleNamespace(engine=engine, tpot_ms=tpot_ms, ttft_ms=tpot_ms), a, a)

    traces = [trace(e, 10.0 + i, 50.0 * (1 + i % 4)) for e in ("vllm", "sglang") for i in range(12)]
    fitted = accuracy.fit_sets(traces, prior)
    assert fitted["vllm"].seq_us == measured
    # the per-step part too (STEP_HELD); an engine without one fits it from 0
    assert prior["vllm"].step_us == coefficients("gpu", "vllm").step_us > 0 and prior["sglang"].step_us == 0.0
    assert fitted["vllm"].step_us == prior["vllm"].step_us and fitted["sglang"].step_us != prior["vllm"].step_us
    assert fitted["sglang"].seq_us != pytest.approx(prior["sglang"].seq_us)  # not measured: fitted


def test_the_engine_host_finding_names_the_rule_and_small_figures_in_microseconds() -> None:
    """One request's host work is a few us (not "0.0 ms"), one request is singular, the VM is the measuring one, and
    the reason async scheduling is off is the rule that turned it off (pp > 1 here, not the release)."""
    c = coefficients("gpu", "vllm")
    one = predict(_facts("0.14.1"), Workload(isl=200, osl=16, rate=float("inf"), num_requests=1), c)
    msg = next(f.message for f in one.findings if f.code == "engine-host")
    assert "0.0 ms" not in msg and " ms a step at 1 request (" in msg and "the measuring VM's host speed" in msg
    assert f"us each, beside {c.step_us:.0f} us every step pays:" in msg
    one = predict(_facts("0.14.1"), Workload(isl=200, osl=16, rate=float("inf"), num_requests=1), replace(c, step_us=0))
    msg = next(f.message for f in one.findings if f.code == "engine-host")
    assert "0.0 ms" not in msg and " us a step at 1 request (" in msg and "every step pays" not in msg
    assert "(vLLM 0.14+ default) runs it beside the kernels" in msg
    pp = predict(_facts("0.14.1", pp=2), Workload(isl=200, osl=16, rate=float("inf"), num_requests=64), c)
    msg = next(f.message for f in pp.findings if f.code == "engine-host")
    assert "pipeline parallelism (pp 2)" in msg and "before vLLM 0.14" not in msg and "requests (" in msg
    assert vllm_async_rule((0, 14), None, 1, "ngram") == (
        False, "vLLM 0.14+ turns its default async scheduling off for the speculative method ngram (only EAGLE-type "
               "and MTP drafts keep it)")
    assert vllm_async_rule((0, 11), True, 2, None) == (True, "--async-scheduling")
