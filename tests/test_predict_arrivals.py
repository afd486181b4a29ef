"""Arrival patterns of ``vllm bench serve`` in the prediction (predict/_types.py Workload, predict/_predict.py,
predict/_sim.py): a burst (request rate inf: every request sent at once), Poisson arrivals with a max
concurrency (the client holds a request while C are in flight; its TTFT starts when it is sent), and the
validation of each workload field (one line, exit 2 at the CLI)."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest

import sim_reference
from launchcard.errors import InputError
from launchcard.predict import Workload, coefficients, predict, simulate, with_limits
from test_predict_sim import LIMITS, PLANS, _run

# (isl, osl, max concurrency, rate, requests, prefix_hit): Poisson arrivals with a cap on requests in flight
CAPPED = [(512, 128, 4, 20.0, 40, 0.0), (1024, 256, 16, 2.0, 40, 0.25), (2048, 64, 2, 50.0, 30, 0.0),
          (256, 300, 32, 400.0, 96, 0.0)]


@pytest.mark.parametrize(("plan", "limits"), [(p, lim) for p in PLANS for lim in LIMITS])
def test_capped_poisson_arrivals_equal_the_reference(plan: str, limits: tuple[int, int, int | None]) -> None:
    mns, mnbt, cap = limits
    f = with_limits(PLANS[plan], max_num_seqs=mns, max_num_batched_tokens=mnbt,
                    kv_capacity_tokens=cap or PLANS[plan].kv_capacity_tokens)
    acc = 0.7 if f.spec_tokens else 0.0
    for i, work in enumerate(CAPPED):
        assert _run(simulate, f, work, acc, i % 2 == 0) == _run(sim_reference.simulate, f, work, acc, i % 2 == 0), \
            (plan, limits, work)


def _sim(**kw: object) -> object:
    f = PLANS["llama-vllm"]
    return simulate(f, coefficients(f.hardware.kind, f.engine), **kw)  # type: ignore[arg-type]


def test_a_capped_run_never_has_more_in_flight_than_the_cap_and_serves_every_request() -> None:
    for conc in (1, 3, 8):
        res = _sim(isl=512, osl=64, concurrency=conc, rate=200.0, requests=60)
        assert res.requests == 60  # type: ignore[attr-defined]
        assert res.running_max <= conc  # type: ignore[attr-defined]


def test_a_capped_requests_ttft_starts_when_the_client_sends_it() -> None:
    """At a rate far above what the server serves, the cap holds requests in the client: their TTFT is that of
    a closed loop of C clients (the client's wait is not in it), while without the cap every request queues in
    the server and TTFT grows with the queue."""
    f = PLANS["llama-vllm"]
    c = coefficients(f.hardware.kind, f.engine)
    kw = {"isl": 1024, "osl": 128, "requests": 64}
    capped = simulate(f, c, concurrency=4, rate=1e5, **kw)  # type: ignore[arg-type]
    closed = simulate(f, c, concurrency=4, rate=None, **kw)  # type: ignore[arg-type]
    flood = simulate(f, c, concurrency=None, rate=1e5, **kw)  # type: ignore[arg-type]

    def mean(pairs: list[tuple[float, int]]) -> float:
        return sum(v * n for v, n in pairs) / sum(n for _, n in pairs)

    assert mean(capped.ttft) == pytest.approx(mean(closed.ttft), rel=0.15)
    assert mean(capped.tpot) == pytest.approx(mean(closed.tpot), rel=0.15)
    assert capped.makespan == pytest.approx(closed.makespan, rel=0.1)
    assert mean(flood.ttft) > 3 * mean(capped.ttft)


def test_a_slow_capped_rate_is_the_open_loop() -> None:
    """When requests come slower than they are served the cap never holds one: the same run as without it."""
    f = PLANS["llama-vllm"]
    c = coefficients(f.hardware.kind, f.engine)
    kw = {"isl": 256, "osl": 32, "rate": 0.5, "requests": 12}
    a = simulate(f, c, concurrency=64, **kw)  # type: ignore[arg-type]
    b = simulate(f, c, concurrency=None, **kw)  # type: ignore[arg-type]
    assert a.ttft == b.ttft and a.makespan == b.makespan


def test_a_burst_serves_every_request_and_lasts_at_least_its_longest_request() -> None:
    f = PLANS["llama-vllm"]
    alone = predict(f, Workload(isl=2048, osl=256, concurrency=1, num_requests=1))
    for n in (50, 400):
        p = predict(f, Workload(isl=2048, osl=256, rate=math.inf, num_requests=n))
        assert p.request_per_s > 0
        duration = n / p.request_per_s
        assert duration * 1e3 >= p.e2e_ms_mean  # the run ends with its last request
        assert duration * 1e3 >= alone.e2e_ms_mean  # no request is faster than alone on the server
        assert p.ttft_ms_mean > alone.ttft_ms_mean  # queueing behind the others' prefills
        assert {x.code for x in p.findings} >= {"arrivals"}
    small = predict(f, Workload(isl=2048, osl=256, rate=math.inf, num_requests=50))
    big = predict(f, Workload(isl=2048, osl=256, rate=math.inf, num_requests=400))
    assert big.ttft_ms_mean > small.ttft_ms_mean  # a longer queue behind a bigger burst


def test_a_burst_is_the_closed_loop_with_a_client_per_request() -> None:
    f = PLANS["llama-vllm"]
    a = predict(f, Workload(isl=512, osl=64, rate=math.inf, num_requests=100))
    b = predict(f, Workload(isl=512, osl=64, concurrency=100, num_requests=100))
    assert (a.ttft_ms_mean, a.tpot_ms_mean, a.output_tok_per_s) == (b.ttft_ms_mean, b.tpot_ms_mean,
                                                                   b.output_tok_per_s)
    # a max concurrency at rate inf is the closed loop (vllm bench serve --max-concurrency C alone)
    c = predict(f, Workload(isl=512, osl=64, concurrency=8, rate=math.inf, num_requests=40))
    d = predict(f, Workload(isl=512, osl=64, concurrency=8, num_requests=40))
    assert c.ttft_ms_mean == d.ttft_ms_mean and c.output_tok_per_s == d.output_tok_per_s


def test_workload_defaults_follow_the_benchmark_client() -> None:
    assert Workload(isl=8, osl=8, rate=math.inf).validate().requests() == 1000  # --num-prompts default
    assert Workload(isl=8, osl=8, rate=math.inf).burst
    assert not Workload(isl=8, osl=8, rate=math.inf, concurrency=4).burst
    assert Workload(isl=8, osl=8, rate=math.inf, concurrency=4).closed_loop
    assert Workload(isl=8, osl=8, concurrency=4).requests() == 40
    assert not Workload(isl=8, osl=8, rate=2.0, concurrency=4).closed_loop
    assert Workload(isl=1000, osl=100, concurrency=1, range_ratio=0.5).longest() == (1500, 150)


@pytest.mark.parametrize(("kw", "field"), [
    ({"concurrency": None, "rate": None}, "concurrency"),
    ({"rate": float("nan")}, "rate"),
    ({"rate": 0.0}, "rate"),
    ({"rate": -1.0}, "rate"),
    ({"concurrency": 0}, "concurrency"),
    ({"range_ratio": 1.0}, "range_ratio"),
    ({"range_ratio": -0.1}, "range_ratio"),
    ({"num_requests": 0}, "num_requests"),
])
def test_bad_workloads_are_refused_naming_the_field(kw: dict[str, object], field: str) -> None:
    base = {"isl": 128, "osl": 16, "concurrency": 2, "rate": None}
    with pytest.raises(InputError) as exc:
        Workload(**{**base, **kw}).validate()  # type: ignore[arg-type]
    assert exc.value.field == field


def test_the_longest_request_must_fit_the_context() -> None:
    f = replace(PLANS["llama-vllm"], max_model_len=2000)
    predict(f, Workload(isl=1200, osl=200, concurrency=1, num_requests=1))
    with pytest.raises(InputError, match="2100 tokens"):
        predict(f, Workload(isl=1200, osl=200, concurrency=1, num_requests=1, range_ratio=0.5))


def test_cli_burst_and_capped_arrivals_in_json() -> None:
    from helpers import run_cli
    from test_predict import GPT_OSS

    res = run_cli("predict", "--config", str(GPT_OSS), "--gpu", "h100", "--tp", "2", "--isl", "512", "--osl", "64",
                  "--request-rate", "inf", "--num-prompts", "64", "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["workload"] | {"arrivals": out["workload"]["arrivals"]} == {
        "isl": 512, "osl": 64, "concurrency": None, "rate": None, "num_requests": 64, "prefix_hit": 0.0,
        "arrivals": "all at once", "range_ratio": 0.0, "endpoint": "completions", "dataset": None}
    assert any(f["code"] == "arrivals" and "64 requests sent at once" in f["message"] for f in out["findings"])
    res = run_cli("predict", "--config", str(GPT_OSS), "--gpu", "h100", "--tp", "2", "--isl", "512", "--osl", "64",
                  "--rate", "5", "--max-concurrency", "4", "--num-requests", "20", "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["workload"]["arrivals"] == "poisson, capped" and out["workload"]["concurrency"] == 4
    assert out["max_running"] <= 4


def test_a_burst_of_ranged_lengths_lasts_at_least_its_longest_request_alone() -> None:
    """vllm bench serve's random dataset with a range ratio: requests of uneven lengths sent at once. Every
    request ends, the mean output is the given one, and the run is no shorter than its longest request alone
    on the server."""
    f = PLANS["llama-vllm"]
    w = Workload(isl=2048, osl=256, rate=math.inf, num_requests=64, range_ratio=0.5)
    p = predict(f, w)
    longest_alone = predict(f, Workload(isl=w.longest()[0], osl=w.longest()[1], concurrency=1, num_requests=1))
    assert p.output_tok_per_s / p.request_per_s == pytest.approx(256, rel=0.02)
    assert 64 / p.request_per_s * 1e3 >= longest_alone.e2e_ms_mean
    assert any(x.code == "range-ratio" for x in p.findings)
    exact = predict(f, replace(w, range_ratio=0.0))
    assert p.ttft_ms_mean != exact.ttft_ms_mean  # the lengths do change the run


def test_plan_takes_the_same_workload_options() -> None:
    from helpers import run_cli

    res = run_cli("plan", "openai/gpt-oss-120b", "--gpu", "h100", "--gpus", "8", "--slo", "ttft=5000",
                  "--concurrency", "8", "--random-range-ratio", "1.5")
    assert res.returncode == 2 and "--random-range-ratio" in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_poisson_arrivals_follow_the_clients_schedule() -> None:
    """vllm bench serve scales its exponential gaps so the last request is sent at exactly N / rate (the first
    after one gap): a run below capacity serves N / (N / rate + the last request's time), not a random rate."""
    from launchcard.predict._arrivals import arrival_times

    times = arrival_times(200, 4.0, seed=3)
    assert times[-1] == pytest.approx(50.0) and times[0] > 0
    assert times == sorted(times) and len(set(times)) == len(times)
    f = PLANS["llama-vllm"]
    for n in (32, 200):
        p = predict(f, Workload(isl=256, osl=64, rate=2.0, num_requests=n))
        assert p.request_per_s == pytest.approx(n / (n / 2.0 + p.e2e_ms_mean / 1e3), rel=0.03)


def test_requests_sent_together_to_an_idle_engine_state_the_opening_race() -> None:
    """Which of the requests sent at one instant the engine's first step takes is an OS-scheduling race, not the
    plan's: the prediction says which grouping it assumed whenever more than one request starts together, and
    not when one does (a single client, a Poisson stream)."""
    f = PLANS["llama-vllm"]

    def race(w: Workload) -> list[str]:
        return [x.message for x in predict(f, w).findings if x.code == "opening-burst"]

    four = race(Workload(isl=128, osl=32, concurrency=4, num_requests=8))
    assert len(four) == 1 and four[0].startswith("4 clients start together") and "each round" in four[0]
    burst = race(Workload(isl=128, osl=32, rate=math.inf, num_requests=16))
    assert len(burst) == 1 and burst[0].startswith("16 requests reach the engine together")
    assert "each round" not in burst[0]
    assert race(Workload(isl=128, osl=32, concurrency=1, num_requests=4)) == []
    assert race(Workload(isl=128, osl=32, rate=2.0, num_requests=8)) == []


@pytest.mark.parametrize(("engine", "name"), [("sglang", "SGLang"), ("trtllm", "TensorRT-LLM"), ("vllm", None)])
def test_the_opening_burst_rule_names_the_engine_it_was_seen_on(engine: str, name: str | None) -> None:
    """The opening-burst rule comes from vLLM's iteration log; an SGLang or TensorRT-LLM plan is timed with it too
    and said to be, instead of stating vLLM's log as that engine's behaviour."""
    from pathlib import Path

    from helpers import run_cli

    qwen = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"
    res = run_cli("predict", "--config", str(qwen), "--gpu", "h100", "--engine", engine, "--isl", "256", "--osl",
                  "64", "--concurrency", "4", "--json")
    assert res.returncode == 0, res.stderr
    said = next(f["message"] for f in json.loads(res.stdout)["findings"] if f["code"] == "opening-burst")
    assert "vLLM's iteration log" in said
    assert (f"not measured on {name}" in said) if name else "not measured" not in said


@pytest.mark.parametrize(("work", "said"), [
    (Workload(128, 16, rate=0.001), "32 requests (10 s of arrivals at 0.001/s, at least 32;"),
    (Workload(128, 16, rate=7.0), "70 requests (10 s of arrivals at 7/s, at least 32;"),
    (Workload(128, 16, concurrency=4), "40 requests (10 x concurrency 4;"),
    (Workload(128, 16, rate=math.inf), "1000 requests (1000 sent at once, vllm bench serve's --num-prompts default;"),
])
def test_the_run_size_finding_names_the_rule_that_chose_it(work: Workload, said: str) -> None:
    """A slow rate ran 32 requests while the finding listed '10 x concurrency, 1000 sent at once ..., or 10 s of
    arrivals', none of which gives 32 (0.001/s for 10 s is no request): the floor was said nowhere."""
    found = [x.message for x in predict(PLANS[next(iter(PLANS))], work).findings if x.code == "num-requests"]
    assert len(found) == 1 and found[0].startswith(said), found
