"""The optimised scheduler simulation gives the same figures, to the last bit, as the straightforward one it
replaced (tests/sim_reference.py), over a grid of plans and workloads that reaches every branch: closed loop and
Poisson arrivals, chunked prefill, partial-chunk admission, KV queueing and preemption, batch limits, prefix
hits, speculative decoding, SGLang's separate prefill batches and traced calibration runs."""

from __future__ import annotations

import itertools
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import pytest

import sim_reference
from config_support import LLAMA8B
from launchcard.hardware import find
from launchcard.memory import Arch, Settings, arch_from_config, load_arch, plan_memory
from launchcard.predict import (
    HardwareFigures,
    ServingFacts,
    coefficients,
    facts_from_memory_plan,
    simulate,
    with_limits,
)

# a real MoE with sliding-window layers
SHARED = Path(__file__).resolve().parents[1].parent / "shared"
GPT_OSS = SHARED / "corpus" / "hf" / "openai" / "gpt-oss-120b" / "config.json"


def _facts(arch: Arch, engine: str, **kw: object) -> ServingFacts:
    s = Settings(max_model_len=16384, **kw)  # type: ignore[arg-type]
    acc = find("h100")
    return facts_from_memory_plan(arch, s, plan_memory(arch, s, gpu=acc), HardwareFigures.from_accelerator(acc),
                                  engine=engine)


PLANS = {
    "llama-vllm": _facts(arch_from_config(dict(LLAMA8B)), "vllm"),
    "llama-sglang": _facts(arch_from_config(dict(LLAMA8B)), "sglang"),
    "moe-tp2-eagle": _facts(load_arch(GPT_OSS), "vllm", tp=2, speculative_method="eagle3", num_speculative_tokens=3),
    # vLLM before 0.19: admission by first chunk, KV allocated chunk by chunk
    "llama-vllm-0.11": _facts(arch_from_config(dict(LLAMA8B)), "vllm", vllm_version="0.11.0"),
    # SGLang retracts the newest request with speculative decoding (its fewest-outputs order otherwise)
    "moe-sglang-eagle": _facts(load_arch(GPT_OSS), "sglang", tp=2, speculative_method="eagle3",
                               num_speculative_tokens=3),
}
# (isl, osl, concurrency, rate, requests, prefix_hit)
WORKLOADS = [(128, 64, 1, None, 3, 0.0), (1024, 256, 16, None, 40, 0.0), (4096, 512, 64, None, 128, 0.5),
             (2000, 1, 8, None, 16, 0.0), (3000, 2, 32, None, 64, 0.0), (512, 128, None, 4.0, 24, 0.0),
             (2048, 300, None, 40.0, 60, 0.25),
             # long outputs from staggered clients: SGLang's decayed estimate admits more than fit, then retracts
             (128, 1024, 64, None, 200, 0.0)]
# (max_num_seqs, max_num_batched_tokens, kv_capacity_tokens or None = the plan's)
LIMITS = [(256, 8192, None), (8, 2048, None), (64, 512, 20_000), (128, 16384, 9_000)]


def _run(sim: object, f: ServingFacts, work: tuple[int, int, int | None, float | None, int, float],
         acceptance: float, trace: bool, front: bool = False) -> dict[str, object]:
    isl, osl, conc, rate, n, hit = work
    c = replace(coefficients(f.hardware.kind, f.engine), front_in_schedule=front)
    res = sim(f, c, isl=isl, osl=osl,  # type: ignore[operator]
              concurrency=conc, rate=rate, requests=n, prefix_hit=hit, acceptance=acceptance, trace=trace)
    out = asdict(res)
    out.pop("running_max", None)  # the optimised simulation's own additions
    out.pop("graph_span", None)
    out.pop("kv_free_from", None)
    return out


def _own(res: dict[str, object]) -> None:
    """Drop what only the optimised simulation records (the plan search's sharing of runs)."""
    res.pop("running_max"), res.pop("graph_span"), res.pop("kv_free_from")


@pytest.mark.parametrize(("plan", "limits"), list(itertools.product(PLANS, LIMITS)))
def test_the_optimised_simulation_equals_the_reference(plan: str, limits: tuple[int, int, int | None]) -> None:
    mns, mnbt, cap = limits
    f = with_limits(PLANS[plan], max_num_seqs=mns, max_num_batched_tokens=mnbt,
                    kv_capacity_tokens=cap or PLANS[plan].kv_capacity_tokens)
    acc = 0.7 if f.spec_tokens else 0.0
    preempted = 0
    for i, work in enumerate(WORKLOADS):
        trace = i % 3 == 0
        got = _run(simulate, f, work, acc, trace)
        want = _run(sim_reference.simulate, f, work, acc, trace)
        assert got == want, (plan, limits, work)
        preempted += int(want["preemptions"])  # type: ignore[call-overload]
    if cap is not None:  # the small KV pools do exercise preemption
        assert preempted > 0


@pytest.mark.parametrize(("plan", "limits"), list(itertools.product(PLANS, LIMITS[:3])))
def test_a_closed_loop_with_its_front_end_in_the_schedule_equals_the_reference(
        plan: str, limits: tuple[int, int, int | None]) -> None:
    mns, mnbt, cap = limits
    f = with_limits(PLANS[plan], max_num_seqs=mns, max_num_batched_tokens=mnbt,
                    kv_capacity_tokens=cap or PLANS[plan].kv_capacity_tokens)
    acc = 0.7 if f.spec_tokens else 0.0
    for i, work in enumerate(w for w in WORKLOADS if w[2] is not None):
        trace = i % 2 == 0
        got = _run(simulate, f, work, acc, trace, front=True)
        assert got == _run(sim_reference.simulate, f, work, acc, trace, front=True), (plan, limits, work)


def test_a_closed_loop_request_reaches_the_engine_only_after_its_front_end() -> None:
    """The next request of a client is in the API server's front end for request_ms before the engine sees it:
    the engine idles between one client's requests, so the run takes longer by about that much per request, and
    TTFT (which counts the front end either way) stays put."""
    f = PLANS["llama-vllm"]
    c = replace(coefficients(f.hardware.kind, f.engine), request_ms=50.0)
    kw: dict[str, object] = {"isl": 128, "osl": 16, "concurrency": 1, "rate": None, "requests": 4}
    off = simulate(f, c, **kw)  # type: ignore[arg-type]
    on = simulate(f, replace(c, front_in_schedule=True), **kw)  # type: ignore[arg-type]
    assert on.makespan == pytest.approx(off.makespan + 3 * 0.050)
    assert [x for x, _ in on.ttft] == pytest.approx([x for x, _ in off.ttft])
    assert on.output_tokens == off.output_tokens


@pytest.mark.parametrize("plan", list(PLANS))
def test_any_max_num_seqs_from_the_most_running_up_gives_the_same_run(plan: str) -> None:
    """What lets the plan search simulate once for every batch limit at or above the peak it reached (with the
    same CUDA graph limit: vLLM's default follows max_num_seqs, so the plan search shares only then; pinned here)."""
    f = replace(PLANS[plan], graph_rule=None)
    coef = coefficients(f.hardware.kind, f.engine)
    acc = 0.7 if f.spec_tokens else 0.0
    shared = 0
    for isl, osl, conc, rate, n, hit in WORKLOADS:
        for cap in (f.kv_capacity_tokens, 9_000):
            g = with_limits(f, max_num_seqs=512, kv_capacity_tokens=cap)
            top = simulate(g, coef, isl=isl, osl=osl, concurrency=conc, rate=rate, requests=n, prefix_hit=hit,
                           acceptance=acc)
            assert 1 <= top.running_max <= 512
            want = _run(simulate, g, (isl, osl, conc, rate, n, hit), acc, False)
            for seats in {top.running_max, (top.running_max + 512) // 2}:
                got = _run(sim_reference.simulate, with_limits(g, max_num_seqs=seats), (isl, osl, conc, rate, n, hit),
                           acc, False)
                assert got == want, (seats, isl, osl, conc, rate)
            if top.running_max > 1:  # one slot fewer than the peak is another run
                below = _run(simulate, with_limits(g, max_num_seqs=top.running_max - 1),
                             (isl, osl, conc, rate, n, hit), acc, False)
                shared += below != want
    assert shared > 0


@pytest.mark.parametrize("plan", [p for p in PLANS if "sglang" not in p])
def test_any_kv_pool_from_the_runs_kv_free_from_up_gives_the_same_run(plan: str) -> None:
    """What lets the plan search share one run between a vLLM plan's memory plans at each --max-num-seqs (their KV
    pools differ): a run records the KV capacity from which no KV decision (admission, preemption, a decode run's
    length) falls otherwise; every pool from it up runs the same (the reference's run), and a run that KV did
    decide (preemption) records none."""
    f = PLANS[plan]
    coef = coefficients(f.hardware.kind, f.engine)
    acc = 0.7 if f.spec_tokens else 0.0
    free = bound = 0
    for mns, mnbt, _ in LIMITS[:3]:
        for work in WORKLOADS:
            isl, osl, conc, rate, n, hit = work
            for cap in (f.kv_capacity_tokens, 20_000, 9_000):
                g = with_limits(f, max_num_seqs=mns, max_num_batched_tokens=mnbt, kv_capacity_tokens=cap)
                res = simulate(g, coef, isl=isl, osl=osl, concurrency=conc, rate=rate, requests=n, prefix_hit=hit,
                               acceptance=acc)
                if res.kv_free_from == float("inf"):
                    bound += 1
                    continue
                assert not res.preemptions and res.kv_free_from <= cap
                free += 1
                want = _run(simulate, g, work, acc, False)
                for other in {int(res.kv_free_from), (int(res.kv_free_from) + cap) // 2, 10 * cap}:
                    got = _run(sim_reference.simulate, with_limits(g, kv_capacity_tokens=other), work, acc, False)
                    assert got == want, (mns, work, cap, other)
    assert free and bound


def test_a_replayed_closed_loop_schedule_equals_the_reference() -> None:
    """Plans whose KV cache holds every client's whole request share one schedule per batching limits (the
    search's memo); each replay with its own step costs gives the reference's figures to the bit, and a plan
    that can run short of KV room is simulated, not replayed."""
    llama, moe = arch_from_config(dict(LLAMA8B)), load_arch(GPT_OSS)
    plans = [_facts(llama, "vllm"), _facts(llama, "vllm", tp=2), _facts(llama, "vllm", kv_cache_dtype="fp8"),
             _facts(moe, "vllm", tp=4), _facts(moe, "vllm", tp=2, expert_parallel=True),
             _facts(llama, "sglang", tp=4)]
    plans += [with_limits(plans[0], kv_capacity_tokens=30_000)]  # too small for 64 x 4608 tokens: simulated
    schedules: dict[tuple[object, ...], object] = {}
    runs = 0
    for f in plans:
        for mns, mnbt in ((256, 8192), (16, 2048)):
            g = with_limits(f, max_num_seqs=mns, max_num_batched_tokens=mnbt)
            coef = coefficients(g.hardware.kind, g.engine)
            for (isl, osl, conc, n), ratio in itertools.product(
                    ((4096, 512, 64, 128), (1000, 1, 8, 20), (256, 200, 3, 7)), (0.0, 0.2)):
                kw = {"isl": isl, "osl": osl, "concurrency": conc, "rate": None, "requests": n, "range_ratio": ratio}
                got = asdict(simulate(g, coef, schedules=schedules, **kw))  # type: ignore[arg-type]
                want = asdict(sim_reference.simulate(g, coef, **kw))  # type: ignore[arg-type]
                _own(got), _own(want)
                assert got == want, (g.tp, g.engine, mns, isl, conc)
                runs += 1
    assert 0 < sum(map(len, schedules.values())) < runs / 2  # type: ignore[arg-type]  # most runs were replays


def test_batch_limits_at_or_above_the_clients_share_one_schedule() -> None:
    """A closed loop never holds more requests than clients, so every batch limit from the clients up runs one
    schedule: it is recorded once and replayed for the others (their own CUDA graph limits timing it), each
    replay the reference's run to the bit; a limit below the clients records its own."""
    for name in ("llama-vllm", "llama-sglang", "moe-sglang-eagle"):
        schedules: dict[tuple[object, ...], object] = {}
        for mns in (16, 64, 1024, 8):
            g = with_limits(PLANS[name], max_num_seqs=mns, max_num_batched_tokens=4096)
            coef = coefficients(g.hardware.kind, g.engine)
            kw = {"isl": 1024, "osl": 128, "concurrency": 16, "rate": None, "requests": 48, "range_ratio": 0.2}
            got = asdict(simulate(g, coef, schedules=schedules, **kw))  # type: ignore[arg-type]
            want = asdict(sim_reference.simulate(g, coef, **kw))  # type: ignore[arg-type]
            _own(got), _own(want)
            assert got == want, (name, mns)
            assert sum(map(len, schedules.values())) == (1 if mns >= 16 else 2), (name, mns)  # type: ignore[arg-type]


def test_batch_limits_from_a_runs_peak_share_its_schedule() -> None:
    """A vLLM run whose peak of running requests stays under its batch limit (prompts longer than the step's token
    budget: a few prefill at once) runs alike under every limit from that peak up, below the clients too: one
    schedule recorded, replayed for the others, each the reference's run to the bit; a limit under the peak records
    its own, and so does SGLang (whose admission stops anew when its slots are full)."""
    for name in ("llama-vllm", "llama-sglang"):
        schedules: dict[tuple[object, ...], list[object]] = {}
        peak = 0
        for mns in (16, 8, 1024, 5, 4, 3, 2, 1):
            g = with_limits(PLANS[name], max_num_seqs=mns, max_num_batched_tokens=2048)
            coef = coefficients(g.hardware.kind, g.engine)
            kw = {"isl": 1500, "osl": 1, "concurrency": 32, "rate": None, "requests": 96}
            res = simulate(g, coef, schedules=schedules, **kw)  # type: ignore[arg-type, arg-type]
            got = asdict(res)
            want = asdict(sim_reference.simulate(g, coef, **kw))  # type: ignore[arg-type]
            _own(got), _own(want)
            assert got == want, (name, mns)
            peak = peak or res.running_max
            recorded = sum(map(len, schedules.values()))
            if name == "llama-vllm":
                assert 1 < peak < 8 and recorded == (1 if mns >= peak else 2 + (peak - 1 - mns)), (mns, peak)
            else:  # every limit its own (1024: the 32 clients')
                assert recorded == (16, 8, 1024, 5, 4, 3, 2, 1).index(mns) + 1, mns
    from launchcard.predict._clock import _Schedule

    s = _Schedule((), (), 0, running_max=3, seats=8, shared=True)
    assert [k for k in range(1, 12) if s.serves(k)] == list(range(3, 12))
    # its limit bound (the peak at it): only itself
    assert [k for k in range(1, 12) if replace(s, running_max=8).serves(k)] == [8]
    assert [k for k in range(1, 12) if replace(s, running_max=3, shared=False).serves(k)] == [8]


def test_a_replay_costs_each_distinct_step_once_with_the_step_by_step_run() -> None:
    """``_Schedule.costed``: a replay costs each distinct step of the schedule once (the memo of its clock left
    empty) and looks the steps up by index; the run is the one a clock timing the recorded steps one by one (each
    looked up in its memo, costed on a miss) gives, to the last bit, with the same graph span."""
    from launchcard.predict import _clock
    from launchcard.predict._sim import accepted_per_step

    f = PLANS["moe-tp2-eagle"]
    c = coefficients(f.hardware.kind, f.engine)
    schedules: dict[tuple[object, ...], object] = {}
    kw = {"isl": 512, "osl": 64, "concurrency": 8, "rate": None, "requests": 64}
    simulate(f, c, schedules=schedules, acceptance=0.6, **kw)  # type: ignore[arg-type]
    ((sched,),) = schedules.values()  # type: ignore[misc]
    assert isinstance(sched, _clock._Schedule)
    keys, index = sched.costed
    assert len(set(keys)) == len(keys) < len(sched.steps) == len(index)
    assert [keys[i] for i in index] == [(*s[:5], s[6]) for s in sched.steps]
    for g in (f, replace(f, tp=4), replace(f, graph_tokens=64, graph_rule=None)):
        tps = accepted_per_step(g.spec_tokens, 0.6)  # the clock's tokens a step, as simulate computes them
        replayed = _clock._Clock(g, c, tps)
        got = asdict(replayed.replay(sched))
        assert not replayed.costs  # each distinct step costed once, outside the memo
        one_by_one = _clock._Clock(g, c, tps)
        ends = one_by_one.run(sched.steps)
        one_by_one.retire_all((n, (ends[a] if a >= 0 else 0.0) if isinstance(a, int) else _clock._time_at(a, ends),
                               None if first is None else ends[first], inflight, osl, ends[end])
                              for n, a, first, end, inflight, osl in sched.done)
        one_by_one.res.running_max = sched.running_max
        want = asdict(one_by_one.close(sched.finished))
        assert 0 < len(one_by_one.costs) <= len(keys)
        assert got == want, g.tp


def test_a_replayed_arrival_folded_thousands_of_times_is_computed_as_the_run_did() -> None:
    """A cohort absorbing one request at a time nests its recorded arrival that deep: the replay walks the
    chain (no recursion limit) and repeats the run's arithmetic fold by fold."""
    from launchcard.predict._clock import _time_at

    ends = [0.001 * (i + 1) ** 1.5 for i in range(5000)]
    at: object = 0
    want = ends[0]
    n = 1
    for i in range(1, 5000):
        at = (at, n, i, 1)
        want = (want * n + ends[i] * 1) / (n + 1)
        n += 1
    assert _time_at(at, ends) == want  # type: ignore[arg-type]


@pytest.mark.parametrize(("plan", "limits"), list(itertools.product(PLANS, LIMITS)))
def test_ranged_lengths_equal_the_reference(plan: str, limits: tuple[int, int, int | None]) -> None:
    """Lengths drawn from a range (``--random-range-ratio``): the same run as the reference's, closed loop,
    Poisson and capped Poisson, traced or not, with KV queueing and preemption."""
    mns, mnbt, cap = limits
    f = with_limits(PLANS[plan], max_num_seqs=mns, max_num_batched_tokens=mnbt,
                    kv_capacity_tokens=cap or PLANS[plan].kv_capacity_tokens)
    acc = 0.7 if f.spec_tokens else 0.0
    coef = coefficients(f.hardware.kind, f.engine)
    for i, (isl, osl, conc, rate, n, hit) in enumerate([*WORKLOADS, (1024, 128, 8, 30.0, 40, 0.0)]):
        kw = {"isl": isl, "osl": osl, "concurrency": conc, "rate": rate, "requests": n, "prefix_hit": hit,
              "acceptance": acc, "trace": i % 2 == 0 and rate is None, "range_ratio": 0.2}
        got = asdict(simulate(f, coef, **kw))  # type: ignore[arg-type]
        want = asdict(sim_reference.simulate(f, coef, **kw))  # type: ignore[arg-type]
        _own(got), _own(want)
        assert got == want, (plan, limits, isl, osl, conc, rate)


def test_ranged_lengths_cover_both_ranges_evenly_request_by_request() -> None:
    from launchcard.predict._arrivals import length_range, request_lengths

    assert length_range(1024, 0.2) == (819, 1229)  # vllm bench serve: floor(L (1 - r)) .. ceil(L (1 + r))
    for n in (16, 100, 500):  # any prefix of a run: its means are the ranges' means, both ranges reached
        pairs = [request_lengths(1024, 1024, 0.2, j) for j in range(n)]
        assert all(819 <= p <= 1229 and 819 <= o <= 1229 for p, o in pairs)
        for side in (0, 1):
            vals = sorted(pair[side] for pair in pairs)
            assert sum(vals) / n == pytest.approx(1024, abs=410 * max(0.01, 1.5 / n))  # range 819..1229
            # evenly spread: each quarter of the range holds a quarter of the requests (a 4-class split does not)
            quarters = [sum(1 for v in vals if 819 + q * 102.5 <= v < 819 + (q + 1) * 102.5 + (q == 3))
                        for q in range(4)]
            assert all(abs(c - n / 4) <= max(2, 0.05 * n) for c in quarters), quarters
        assert len(set(pairs)) == n  # every request its own pair
    # the shortest outputs of a wide range are in the run (their TPOT is mostly the prefills they meet)
    wide = [request_lengths(500, 500, 0.998, j)[1] for j in range(500)]
    assert min(wide) <= 5 and max(wide) >= 990
    # prompt and output are not tied: short prompts meet long outputs too
    pairs = [request_lengths(500, 500, 0.998, j) for j in range(500)]
    assert any(p < 250 and o > 750 for p, o in pairs) and any(p > 750 and o < 250 for p, o in pairs)
    assert request_lengths(1024, 7, 0.0, 5) == (1024, 7)  # no range: exact
    assert all(o >= 1 for _, o in (request_lengths(64, 1, 0.9, j) for j in range(16)))


def test_ranged_lengths_put_clients_out_of_step() -> None:
    """Exact lengths keep a closed loop's clients in step (each round's prompts arrive together, then decode
    alone); ranged lengths end requests at different times, so prompts are prefilled beside other clients'
    decodes: more steps mix prefill with decode and a prompt waits behind fewer others."""
    f = PLANS["llama-vllm"]
    coef = coefficients(f.hardware.kind, f.engine)
    kw: dict[str, object] = {"isl": 2048, "osl": 256, "concurrency": 32, "rate": None, "requests": 320}
    exact = simulate(f, coef, **kw)  # type: ignore[arg-type]
    drift = simulate(f, coef, range_ratio=0.2, **kw)  # type: ignore[arg-type]
    assert exact.output_tokens / exact.requests == 256
    assert drift.output_tokens / drift.requests == pytest.approx((204 + 308) / 2, abs=1.0)
    exact_ttft = sum(x * n for x, n in exact.ttft) / exact.requests
    drift_ttft = sum(x * n for x, n in drift.ttft) / drift.requests
    assert drift_ttft < 0.95 * exact_ttft
    assert drift.steps > exact.steps  # finishes apart: fewer decode runs timed in one go


def test_a_prefill_step_runs_outside_the_cuda_graph() -> None:
    """Decode-only steps replay the graph; a step with prefill tokens pays the eager per-layer overhead (vLLM:
    beyond its 512-token capture size; SGLang and TensorRT-LLM: any prefill)."""
    from launchcard.predict._clock import graphed

    vllm, sgl = PLANS["llama-vllm"], PLANS["llama-sglang"]
    assert graphed(vllm, 64, 0) and graphed(sgl, 64, 0)
    assert graphed(vllm, 512, 200) and not graphed(vllm, 513, 200)
    assert not graphed(sgl, 64, 16)
    assert not graphed(replace(vllm, cuda_graphs=False), 8, 0)
    coef = coefficients(vllm.hardware.kind, vllm.engine)
    kw: dict[str, object] = {"isl": 4096, "osl": 16, "concurrency": 1, "rate": None, "requests": 2}
    slow = simulate(vllm, replace(coef, eager_layer_us=coef.eager_layer_us + 100.0), **kw)  # type: ignore[arg-type]
    base = simulate(vllm, coef, **kw)  # type: ignore[arg-type]
    extra = (slow.ttft[0][0] - base.ttft[0][0]) * 1e6  # one eager prefill step per request, 100 us a layer more
    assert extra == pytest.approx(100.0 * vllm.layers, rel=1e-6)
    assert [x for x, _ in slow.tpot] == pytest.approx([x for x, _ in base.tpot], rel=1e-3)


@pytest.mark.parametrize(("plan", "limits"), list(itertools.product(PLANS, LIMITS)))
def test_a_receive_interval_equals_the_reference(plan: str, limits: tuple[int, int, int | None]) -> None:
    """SGLang's --scheduler-recv-interval in closed loops (exact and ranged lengths, traced or not, with KV
    queueing and preemption): the same run as the reference's."""
    mns, mnbt, cap = limits
    f = with_limits(PLANS[plan], max_num_seqs=mns, max_num_batched_tokens=mnbt,
                    kv_capacity_tokens=cap or PLANS[plan].kv_capacity_tokens, recv_interval=10)
    acc = 0.7 if f.spec_tokens else 0.0
    coef = coefficients(f.hardware.kind, f.engine)
    for i, (isl, osl, conc, rate, n, hit) in enumerate(w for w in WORKLOADS if w[2] is not None):
        kw = {"isl": isl, "osl": osl, "concurrency": conc, "rate": rate, "requests": n, "prefix_hit": hit,
              "acceptance": acc, "trace": i % 2 == 0, "range_ratio": 0.2 * (i % 2)}
        got = asdict(simulate(f, coef, **kw))  # type: ignore[arg-type]
        want = asdict(sim_reference.simulate(f, coef, **kw))  # type: ignore[arg-type]
        _own(got), _own(want)
        assert got == want, (plan, limits, isl, osl, conc)


def test_requests_back_from_clients_wait_for_the_next_receive() -> None:
    """With a receive every 30 decode passes a closed loop's next prompt waits for the next receive (after a
    prefill batch, or at every 30th decode pass counted from the last receive) before SGLang's scheduler sees it
    (python/sglang/srt/managers/scheduler_recv_skipper.py): at every phase of the cycle, about R/2 passes on
    average (a rule that took any run crossing a receive as ending at one gave about 3); decode is not slowed,
    and the opening burst (received at once: the engine was idle) is not delayed."""
    f = PLANS["llama-sglang"]
    coef = coefficients(f.hardware.kind, f.engine)
    kw: dict[str, object] = {"isl": 1024, "osl": 256, "concurrency": 16, "rate": None, "requests": 160,
                             "range_ratio": 0.2}
    every = simulate(f, coef, **kw)  # type: ignore[arg-type]
    slow = simulate(with_limits(f, recv_interval=30), coef, **kw)  # type: ignore[arg-type]
    step = sum(x * n for x, n in every.tpot) / every.requests
    ttft = [sum(x * n for x, n in r.ttft) / r.requests for r in (every, slow)]
    assert 10 * step < ttft[1] - ttft[0] < 20 * step
    assert sum(x * n for x, n in slow.tpot) / slow.requests == pytest.approx(step, rel=0.15)
    assert min(x for x, _ in slow.ttft) == pytest.approx(min(x for x, _ in every.ttft))
    # a replayed schedule keeps the receive points
    memo: dict[tuple[object, ...], object] = {}
    g = with_limits(f, recv_interval=30)
    first = asdict(simulate(g, coef, schedules=memo, **kw))  # type: ignore[arg-type]
    again = asdict(simulate(g, coef, schedules=memo, **kw))  # type: ignore[arg-type]
    assert memo and first == again == asdict(slow)


def test_tensorrt_llm_plans_take_its_own_token_budget() -> None:
    """Without --max-num-batched-tokens a TensorRT-LLM plan steps 8,192 tokens (its max_num_tokens default),
    not the vLLM default the memory planner gives (16,384 on a 180 GiB B200); a given budget is kept."""
    from launchcard.predict import serving_facts

    vllm = serving_facts(GPT_OSS, Settings(tp=2), gpu="b200", engine="vllm")
    trt = serving_facts(GPT_OSS, Settings(tp=2), gpu="b200", engine="trtllm")
    assert vllm.max_num_batched_tokens == 16384
    assert trt.max_num_batched_tokens == 8192
    assert any(f.code == "max-num-tokens" for f in trt.findings)
    given = serving_facts(GPT_OSS, Settings(tp=2, max_num_batched_tokens=20000), gpu="b200", engine="trtllm")
    assert given.max_num_batched_tokens == 20000


@pytest.mark.parametrize(("plan", "limits"), list(itertools.product(PLANS, LIMITS)))
def test_whole_prompt_prefill_equals_the_reference(plan: str, limits: tuple[int, int, int | None]) -> None:
    """Without chunked prefill (TensorRT-LLM's default) a prompt starts only whole: the same run as the
    reference's on the whole grid (a prompt longer than the budget is still chunked: it could never start)."""
    mns, mnbt, cap = limits
    f = with_limits(PLANS[plan], max_num_seqs=mns, max_num_batched_tokens=mnbt,
                    kv_capacity_tokens=cap or PLANS[plan].kv_capacity_tokens, chunked_prefill=False)
    acc = 0.7 if f.spec_tokens else 0.0
    for i, work in enumerate(WORKLOADS):
        trace = i % 3 == 0
        assert _run(simulate, f, work, acc, trace) == _run(sim_reference.simulate, f, work, acc, trace), work


@pytest.mark.parametrize(("block", "limits"), list(itertools.product((1, 32), LIMITS)))
def test_no_evict_reservation_equals_the_reference(block: int, limits: tuple[int, int, int | None]) -> None:
    """TensorRT-LLM's GUARANTEED_NO_EVICT (each request holds KV for its prompt and whole output from admission,
    in whole blocks of ``block`` tokens), prompts prefilled whole: the same run as the reference's."""
    mns, mnbt, cap = limits
    base = PLANS["llama-vllm"]
    f = replace(with_limits(base, max_num_seqs=mns, max_num_batched_tokens=mnbt,
                            kv_capacity_tokens=cap or base.kv_capacity_tokens, chunked_prefill=False),
                reserve_to_end=True, reserve_block=block)
    for i, work in enumerate(WORKLOADS):
        trace = i % 3 == 0
        assert _run(simulate, f, work, 0.0, trace) == _run(sim_reference.simulate, f, work, 0.0, trace), work


def test_tensorrt_llm_prefills_a_prompt_whole() -> None:
    """Two waiting 5,000-token prompts and an 8,192-token step: with chunked prefill the second starts with a
    3,192-token chunk beside the first; TensorRT-LLM (no chunked prefill, its default) starts only the first and
    prefills the second whole in a later step; a prompt longer than any step is still chunked."""
    from launchcard.predict import serving_facts
    from launchcard.predict._sched import _prefill, _Scan
    from launchcard.predict._sim import _Cohort

    trt = serving_facts(GPT_OSS, Settings(tp=2, max_num_batched_tokens=8192), gpu="h100", engine="trtllm")
    assert not trt.chunked_prefill and serving_facts(GPT_OSS, Settings(tp=2), gpu="h100").chunked_prefill
    for whole_up_to, chunks in ((0, [5000, 3192]), (8192, [5000]), (4000, [5000, 3192])):
        running: list[_Cohort] = []
        waiting = [_Cohort(2, 0.0, 5000, 0, 64)]
        out, admitted, _ = _prefill(_Scan(running), running, waiting, 8192, 256, 10**6, whole_up_to)
        assert [c.chunk for c in out] == chunks and admitted == len(chunks), whole_up_to


# API server and client stages slow enough to bind a step of most plans here (the measured ones bind only at
# hundreds of requests in a step)
SLOW_STAGES = {"api_us": 400.0, "client_us": 150.0}


@pytest.mark.parametrize(("plan", "limits"), list(itertools.product(PLANS, LIMITS[:3])))
def test_streaming_stages_that_bind_equal_the_reference(plan: str, limits: tuple[int, int, int | None]) -> None:
    mns, mnbt, cap = limits
    f = with_limits(PLANS[plan], max_num_seqs=mns, max_num_batched_tokens=mnbt,
                    kv_capacity_tokens=cap or PLANS[plan].kv_capacity_tokens)
    acc = 0.7 if f.spec_tokens else 0.0
    c0 = coefficients(f.hardware.kind, f.engine)
    c = replace(c0, stages=c0.stages._replace(**SLOW_STAGES))
    for i, (isl, osl, conc, rate, n, hit) in enumerate(WORKLOADS):
        kw = {"isl": isl, "osl": osl, "concurrency": conc, "rate": rate, "requests": n, "prefix_hit": hit,
              "acceptance": acc, "trace": i % 3 == 0}
        got = asdict(simulate(f, c, **kw))  # type: ignore[arg-type]
        want = asdict(sim_reference.simulate(f, c, **kw))  # type: ignore[arg-type]
        _own(got), _own(want)
        assert got == want, (plan, limits, isl, conc, rate)


def test_a_replayed_schedule_with_streaming_stages_equals_the_reference() -> None:
    """A replay times the recorded steps through the same stage clocks: the client's view of each step, not
    the engine's, gives every first token, end and closed-loop arrival."""
    f = PLANS["llama-vllm"]
    schedules: dict[tuple[object, ...], object] = {}
    c0 = coefficients(f.hardware.kind, f.engine)
    for stages in ({}, SLOW_STAGES, {"api_us": 2000.0}):
        c = replace(c0, stages=c0.stages._replace(**stages))
        for _ in range(2):  # recorded, then replayed
            kw = {"isl": 1024, "osl": 128, "concurrency": 48, "rate": None, "requests": 100}
            got = asdict(simulate(f, c, schedules=schedules, **kw))  # type: ignore[arg-type]
            want = asdict(sim_reference.simulate(f, c, **kw))  # type: ignore[arg-type]
            _own(got), _own(want)
            assert got == want, stages
    assert len(schedules) == 1


def test_stages_growing_with_the_outputs_of_a_step_equal_the_reference() -> None:
    """Hundreds of outputs a step: the stages' cost per request between and beyond the measured burst sizes."""
    f = with_limits(PLANS["llama-vllm"], max_num_seqs=1024, max_num_batched_tokens=16384)
    c = coefficients(f.hardware.kind, f.engine)
    assert c.stages.hi > c.stages.lo > 0  # the recorded points
    for n, grow in ((600, c.stages.api_growth), (1200, 0.5)):
        cc = replace(c, stages=c.stages._replace(api_growth=grow, client_growth=-0.1))
        kw = {"isl": 200, "osl": 60, "concurrency": n, "rate": None, "requests": n}
        got, want = asdict(simulate(f, cc, **kw)), asdict(sim_reference.simulate(f, cc, **kw))  # type: ignore[arg-type]
        _own(got), _own(want)
        assert got == want, n


def test_any_cuda_graph_limit_within_a_runs_graph_span_gives_the_same_run() -> None:
    """``graph_span``: the CUDA graph limits that replay the same steps of a run as its own limit; a plan search
    shares the run with any batch limit whose graph limit lies within it (Poisson arrivals too, whose schedule
    follows the step times). Both ends give the same run; the limit just beyond it another."""
    other = 0
    for plan, work in itertools.product(PLANS, WORKLOADS):
        f = with_limits(PLANS[plan], max_num_seqs=64, max_num_batched_tokens=2048)
        coef = coefficients(f.hardware.kind, f.engine)
        acc = 0.7 if f.spec_tokens else 0.0
        for own in (16, 96, 512):
            g = replace(f, graph_tokens=own, graph_rule=None)
            res = simulate(g, coef, isl=work[0], osl=work[1], concurrency=work[2], rate=work[3], requests=work[4],
                           prefix_hit=work[5], acceptance=acc)
            lo, hi = res.graph_span
            assert lo <= own < hi
            want = _run(simulate, g, work, acc, False)
            for limit in {int(lo), own, int(min(hi, 100_000)) - 1}:
                assert _run(simulate, replace(g, graph_tokens=limit), work, acc, False) == want, (plan, work, limit)
            if hi < 100_000:
                other += _run(simulate, replace(g, graph_tokens=int(hi)), work, acc, False) != want
    assert other > 0  # (SGLang's shipped set times eager decode as graphed: eager_layer_us 0)



class _NeverHit(dict):  # type: ignore[type-arg]
    """A memo that never answers: every step costed afresh."""

    def get(self, key: object, default: object = None) -> object:
        return default


def test_a_step_met_again_is_costed_once_with_the_same_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """``_Clock.costs``: a step whose inputs the run met before takes its cost from the memo (``token_costs``: one
    whose token counts it met, its terms but attention); the run (every figure, the graph span, the samples, traced
    features, a replayed schedule) is the one costing every step afresh gives, to the last bit."""
    from launchcard.predict import _clock

    kws = [dict(isl=1024, osl=128, concurrency=32, rate=None, requests=96, trace=True),
           dict(isl=2048, osl=64, concurrency=8, rate=4.0, requests=40),
           dict(isl=512, osl=256, concurrency=16, rate=None, requests=48, acceptance=0.6),
           dict(isl=12000, osl=32, concurrency=8, rate=None, requests=24, prefix_hit=0.5)]  # chunks read cache

    def runs() -> list[dict[str, object]]:
        out = []
        for name in ("llama-vllm", "moe-tp2-eagle", "llama-sglang"):
            f = PLANS[name]
            c = coefficients("gpu", f.engine)
            schedules: dict[tuple[object, ...], object] = {}
            for kw in kws:  # the second of each pair replays the first's schedule with other step costs
                out.append(asdict(simulate(f, c, schedules=schedules, **kw)))  # type: ignore[arg-type]
                out.append(asdict(simulate(replace(f, tp=f.tp * 2), c, schedules=schedules,  # type: ignore[arg-type]
                                           **kw)))
        return out

    hits = 0
    real_step = _clock._Clock.step

    def counted(self: _clock._Clock, *a: Any) -> Any:
        nonlocal hits
        before = len(self.costs)
        out = real_step(self, *a)
        hits += len(self.costs) == before and not isinstance(self.costs, _NeverHit)
        return out

    monkeypatch.setattr(_clock._Clock, "step", counted)
    memo = runs()
    assert hits > 100  # the memo answered steps
    real_init = _clock._Clock.__init__

    def fresh(self: _clock._Clock, *a: Any) -> None:
        real_init(self, *a)
        self.costs = _NeverHit()
        self.token_costs = _NeverHit()  # the step's terms but attention, per token count: recomputed too

    monkeypatch.setattr(_clock._Clock, "__init__", fresh)
    assert runs() == memo


@pytest.mark.parametrize("plan", list(PLANS))
def test_many_clients_over_few_seats_equal_the_reference(plan: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Clients far more than sequence slots, lengths drawn from a range, prompts chunked over several steps: the
    running cohorts are many and out of step, prefill-only steps change only the cohorts they prefill (the walk
    resumes after the unchanged ones with their sums), KV preempts or retracts; the figures are the reference's,
    and the steps take their scan from the last walk instead of walking the cohorts again."""
    from launchcard.predict import _clock, _sched

    scans = steps = 0
    real_scan, real_step = _sched._Scan.__init__, _clock._Clock.step

    def scan(self: _sched._Scan, *a: Any) -> None:
        nonlocal scans
        scans += 1
        real_scan(self, *a)

    def step(self: _clock._Clock, *a: Any) -> Any:
        nonlocal steps
        steps += 1
        return real_step(self, *a)

    monkeypatch.setattr(_sched._Scan, "__init__", scan)
    monkeypatch.setattr(_clock._Clock, "step", step)
    coef = coefficients(PLANS[plan].hardware.kind, PLANS[plan].engine)
    acc = 0.7 if PLANS[plan].spec_tokens else 0.0
    for seats, budget, cap in ((16, 2048, None), (32, 4096, 60_000)):
        f = with_limits(PLANS[plan], max_num_seqs=seats, max_num_batched_tokens=budget,
                        kv_capacity_tokens=cap or PLANS[plan].kv_capacity_tokens)
        for conc, ratio in ((256, 0.0), (128, 0.5)):
            kw = {"isl": 3000, "osl": 96, "concurrency": conc, "rate": None, "requests": 3 * conc,
                  "prefix_hit": 0.0, "acceptance": acc, "range_ratio": ratio}
            got = asdict(simulate(f, coef, **kw))  # type: ignore[arg-type]
            want = asdict(sim_reference.simulate(f, coef, **kw))  # type: ignore[arg-type]
            _own(got), _own(want)
            assert got == want, (plan, seats, budget, cap, conc, ratio)
    assert steps and scans < steps / 2, (scans, steps)


@pytest.mark.parametrize("plan", ["llama-vllm", "llama-vllm-0.11", "moe-tp2-eagle"])
def test_decoding_cohorts_advanced_together_equal_the_reference(plan: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """vLLM's mixed steps keep the leading decoding cohorts at one shared counter (``_front``): with outputs of
    several lengths ending inside the front (their neighbours then side by side, folded when of one state), KV
    preempting (the counter given back first) and speculative steps of whole tokens (acceptance 1), the figures
    are the reference's, and the front holds most decoding cohorts instead of the walk."""
    from launchcard.predict import _front, _sim

    seams = preempted = 0
    front_max = 0
    real_same, real_advance = _front.same_state, _front._Front.advance

    def same(a: Any, b: Any) -> bool:
        nonlocal seams
        hit = real_same(a, b)
        seams += hit
        return hit

    def advance(self: _front._Front, step: float, running: list[Any]) -> list[Any]:
        nonlocal front_max
        front_max = max(front_max, self.n)
        return real_advance(self, step, running)

    monkeypatch.setattr(_front, "same_state", same)
    monkeypatch.setattr(_front._Front, "advance", advance)
    coef = coefficients(PLANS[plan].hardware.kind, PLANS[plan].engine)
    acc = 1.0 if PLANS[plan].spec_tokens else 0.0
    # a dataset's lengths: pairs repeat, so cohorts of one state start in one step from different clients' ends
    table = ((600, 40), (600, 9), (900, 40), (600, 40), (300, 17), (600, 9))
    for seats, budget, cap in ((64, 2048, None), (128, 4096, 30_000)):
        f = with_limits(PLANS[plan], max_num_seqs=seats, max_num_batched_tokens=budget,
                        kv_capacity_tokens=cap or PLANS[plan].kv_capacity_tokens)
        for conc, lengths, ratio in ((200, table, 0.0), (160, (), 0.6)):
            kw = {"isl": 600, "osl": 30, "concurrency": conc, "rate": None, "requests": 4 * conc,
                  "prefix_hit": 0.0, "acceptance": acc, "range_ratio": ratio, "lengths": lengths}
            got = asdict(_sim.simulate(f, coef, **kw))  # type: ignore[arg-type]
            want = asdict(sim_reference.simulate(f, coef, **kw))  # type: ignore[arg-type]
            _own(got), _own(want)
            assert got == want, (plan, seats, budget, cap, conc, ratio)
            preempted += got["preemptions"]
    assert seams and preempted and front_max >= 16, (seams, preempted, front_max)
