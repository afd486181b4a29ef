"""The API server's and the benchmark client's streaming stages (predict._clock.stage_end, the measured
"streaming" section of data/predict_coefficients.json): pipeline stages beside the engine whose clocks fall
behind it when a step's outputs take them longer than the step, which bounds what the client sees at bursts
of hundreds of requests."""

from __future__ import annotations

import json
from dataclasses import replace
from importlib import resources

from hypothesis import given
from hypothesis import strategies as st

from config_support import LLAMA8B
from launchcard.hardware import find
from launchcard.memory import Settings, arch_from_config, plan_memory
from launchcard.predict import HardwareFigures, Workload, coefficients, facts_from_memory_plan, predict, simulate
from launchcard.predict._clock import stage_end
from launchcard.predict._coef import Stages, on_host, stage_seconds, streaming


def _fifo(free: float, arrivals: list[float], s: float) -> list[float]:
    """Batch by batch: each ends ``s`` after both it arrived and the previous one ended."""
    out = []
    for a in arrivals:
        free = max(free, a) + s
        out.append(free)
    return out


@given(st.floats(0, 5), st.floats(0, 5), st.floats(0.001, 1), st.integers(1, 60), st.floats(0, 0.5),
       st.floats(0, 0.5))
def test_stage_end_is_a_first_in_first_out_stage_of_even_or_staged_arrivals(
        free: float, t0: float, dt: float, k: int, s1: float, s2: float) -> None:
    engine = [t0 + dt * (j + 1) for j in range(k)]
    first1, last1 = stage_end(free, engine[0], engine[-1], k, s1)
    ends1 = _fifo(free, engine, s1)
    assert abs(first1 - ends1[0]) < 1e-9 and abs(last1 - ends1[-1]) < 1e-9
    # a second stage fed by the first (its arrivals convexly spaced: a backlog drains, then the engine paces it)
    _, last2 = stage_end(free / 2, first1, last1, k, s2)
    assert abs(last2 - _fifo(free / 2, ends1, s2)[-1]) < 1e-9


def _llama(max_num_seqs: int) -> object:
    arch = arch_from_config(dict(LLAMA8B))
    s = Settings(max_model_len=4096, max_num_seqs=max_num_seqs, max_num_batched_tokens=16384)
    acc = find("h100")
    return facts_from_memory_plan(arch, s, plan_memory(arch, s, gpu=acc), HardwareFigures.from_accelerator(acc),
                                  engine="vllm")


def test_a_burst_of_a_thousand_is_bound_by_the_api_server_not_the_gpu() -> None:
    """1,000 requests decoding together with an API server whose 1,000 outputs take longer than the engine's
    step: the client sees one token per request every 1,000 x api_us, and decode says so."""
    f = _llama(1024)
    c = coefficients("gpu", "vllm")
    assert c.stages.api_us > 0 and c.stages.client_us > 0
    w = Workload(isl=200, osl=200, rate=float("inf"), num_requests=1000)
    bare = predict(f, w, replace(c, stages=Stages()))  # type: ignore[arg-type]
    # an API server 1.5x slower than the engine's decode step at 1,000 requests (the measured one is within a
    # factor of two of an H100's Llama-8B step there; this keeps the test off the step model's other terms)
    c = replace(c, stages=c.stages._replace(api_us=1.5 * bare.tpot_ms_mean))  # us per request = ms per 1,000
    p = predict(f, w, c)  # type: ignore[arg-type]
    per_step = 1000 * max(c.stages.api_us, c.stages.client_us) * 1e-3  # ms
    assert p.tpot_ms_mean >= 0.95 * per_step
    assert p.output_tok_per_s < bare.output_tok_per_s
    assert p.decode.bound == "streaming"
    assert bare.decode.bound != "streaming" and bare.decode.seconds["streaming"] == 0.0
    said = [x.message for x in p.findings if x.code == "streaming"]
    assert len(said) == 1 and "measure_host_stream" in said[0]
    assert said[0].startswith("the API server sets the pace of the tokens the benchmark sees: 1000 requests' outputs")
    assert "more API servers (vLLM's --api-server-count) would split it" in said[0]
    assert not [x for x in bare.findings if x.code == "streaming"]


def test_a_few_clients_see_the_engine_and_the_stages_only_add_their_latency() -> None:
    """Eight clients: the stages keep up with every step, TPOT is the engine's and TTFT gains only the
    stages' time for one step's outputs."""
    f = _llama(256)
    c = coefficients("gpu", "vllm")
    w = Workload(isl=1000, osl=200, concurrency=8, num_requests=32)
    p = predict(f, w, c)  # type: ignore[arg-type]
    bare = predict(f, w, replace(c, stages=Stages()))  # type: ignore[arg-type]
    assert abs(p.tpot_ms_mean - bare.tpot_ms_mean) < 1e-3 * bare.tpot_ms_mean
    assert p.decode.bound == bare.decode.bound != "streaming"
    assert not [x for x in p.findings if x.code == "streaming"]
    assert 0 <= p.ttft_ms_mean - bare.ttft_ms_mean < 8 * (c.stages.api_us + c.stages.client_us) * 1e-3 * 2


def test_the_stages_are_measured_with_their_provenance_and_only_where_measured() -> None:
    doc = json.loads(resources.files("launchcard.data").joinpath("predict_coefficients.json").read_text())
    pts = doc["streaming"]["points"]
    assert len(pts) >= 2 and all("bench/measure_host_stream.py" in p["measured_on"] and p["host_op_us"] > 0
                                 for p in pts)
    lo, hi = pts[0], pts[-1]
    st = streaming("vllm")
    assert (st.api_us, st.client_us, st.lo, st.hi) == (lo["api_us"]["vllm"], lo["client_us"], lo["outputs"],
                                                       hi["outputs"])
    # the largest burst's cost, stated at the first point's host speed
    grown = hi["api_us"]["vllm"] * lo["host_op_us"] / hi["host_op_us"]
    assert abs(st.api_us * (1 + st.api_growth) - grown) < 1e-9
    # SGLang's and TensorRT-LLM's front ends were not measured: only the benchmark client's stage
    assert coefficients("gpu", "sglang").stages.api_us == 0.0
    assert coefficients("gpu", "trtllm").stages.client_us == lo["client_us"]
    assert coefficients("gpu", "vllm").stages == st  # the set carries the engine's measured stages as they are
    # a set stated at a host op time gets them at that speed, and on_host scales them like the other host terms
    cpu = coefficients("cpu", "vllm")
    assert abs(cpu.stages.api_us - lo["api_us"]["vllm"] * cpu.host_op_us / lo["host_op_us"]) < 1e-9
    slow = on_host(cpu, 2 * cpu.host_op_us, 4 * cpu.host_op_us)
    assert slow.stages.client_us == 2 * cpu.stages.client_us and slow.stages.api_us == 4 * cpu.stages.api_us
    assert slow.stages[2:] == cpu.stages[2:]  # the burst sizes and growth are not host time


def test_the_stages_cost_grows_with_the_outputs_of_a_step_as_measured() -> None:
    c = coefficients("gpu", "vllm")
    st = streaming("vllm")
    for outs, x in ((1, 0.0), (st.lo, 0.0), ((st.lo + st.hi) // 2, ((st.lo + st.hi) // 2 - st.lo) / (st.hi - st.lo)),
                    (st.hi, 1.0), (3 * st.hi, 1.0)):
        api, client = stage_seconds(c, outs)
        assert abs(api - outs * st.api_us * (1 + st.api_growth * x) * 1e-6) < 1e-12
        assert abs(client - outs * st.client_us * (1 + st.client_growth * x) * 1e-6) < 1e-12


def test_the_simulation_reports_when_the_client_sees_the_run_end() -> None:
    f = _llama(1024)
    c = coefficients("gpu", "vllm")
    kw = {"isl": 100, "osl": 50, "concurrency": 600, "rate": None, "requests": 600}
    with_stages = simulate(f, c, **kw)  # type: ignore[arg-type]
    bare = simulate(f, replace(c, stages=Stages()), **kw)  # type: ignore[arg-type]
    assert with_stages.busy == bare.busy  # the engine's own work is the same
    assert with_stages.makespan > bare.makespan


def test_one_client_reads_every_replicas_streams() -> None:
    """Data parallelism: each replica has its own API server, the one benchmark client reads them all, so its
    cost per step is the replicas' outputs together."""
    arch = arch_from_config(dict(LLAMA8B))
    acc = find("h100")
    s = Settings(max_model_len=4096, max_num_seqs=1024, max_num_batched_tokens=16384, dp=4)
    f = facts_from_memory_plan(arch, s, plan_memory(arch, s, gpu=acc), HardwareFigures.from_accelerator(acc),
                               engine="vllm")
    w = Workload(isl=200, osl=200, rate=float("inf"), num_requests=4000)
    bare = predict(f, w, replace(coefficients("gpu", "vllm"), stages=Stages()))  # type: ignore[arg-type]
    # a client whose one replica's outputs take 0.6 of the engine's step: four replicas' take 2.4
    c = replace(coefficients("gpu", "vllm"), stages=Stages(client_us=0.6 * bare.tpot_ms_mean))
    p = predict(f, w, c)  # type: ignore[arg-type]
    # 1,000 requests a replica, 4,000 chunks a step through the one client
    assert p.tpot_ms_mean >= 0.95 * 4000 * c.stages.client_us * 1e-3
    assert p.decode.bound == "streaming"
    # the finding counts the outputs the one client reads, and each request's cost at its measured (unscaled) figure
    [said] = [x.message for x in p.findings if x.code == "streaming"]
    assert said.startswith("the benchmark client sets the pace of the tokens the benchmark sees: 4000 requests' "
                           "outputs (1000 from each of 4 replicas) take it")
    assert f"client {c.stages.client_us:.1f} us per request per step" in said
    assert "; no API server stage: gpu:vllm has none measured for vLLM;" in said
    assert "several benchmark clients would split it" in said and "api-server-count" not in said

