"""When SGLang's scheduler receives a closed-loop client's next request, one test per clause of the rule
(SGLang 0.5.9 python/sglang/srt/managers/scheduler.py and scheduler_recv_skipper.py; launchcard.predict._sglang_rules):

- a receive comes at every R-th decode pass counted since the last one (the count restarts there), so a request
  that arrives after a run of passes that crossed a receive waits for the next one (on average about R/2:
  tests/test_predict_sim.py::test_requests_back_from_clients_wait_for_the_next_receive);
- the scheduler polls before it learns that a request ended: the client's next request misses the receives of the
  next 2 passes with the overlap loop, 1 with the normal loop;
- an idle scheduler polls until a request arrives;
- which loop a launch runs (--disable-overlap-schedule, PP, speculative decoding without SGLANG_ENABLE_SPEC_V2);
- DP attention refuses the receive interval.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from config_support import LLAMA8B
from launchcard.errors import InputError
from launchcard.hardware import find
from launchcard.memory import Settings, arch_from_config, plan_memory
from launchcard.predict import (
    HardwareFigures,
    ServingFacts,
    coefficients,
    facts_from_memory_plan,
    sglang_plan,
    sglang_serving_facts,
    simulate,
    with_limits,
)

HF = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "hf"
GPT_OSS = HF / "openai" / "gpt-oss-120b" / "config.json"
SERVE = ["python", "-m", "sglang.launch_server", "--model", "openai/gpt-oss-120b", "--tp", "8"]


def _facts(engine: str, **kw: object) -> ServingFacts:
    arch = arch_from_config(dict(LLAMA8B))
    s = Settings(max_model_len=16384, **kw)  # type: ignore[arg-type]
    acc = find("h100")
    return facts_from_memory_plan(arch, s, plan_memory(arch, s, gpu=acc), HardwareFigures.from_accelerator(acc),
                                  engine=engine)


SGL = _facts("sglang")


def _passes(recv: int, lag: int) -> list[tuple[int, int, int]]:
    """(decode sequences, prefill tokens, passes) of each turn of a small closed loop: 5 clients, four of them
    ending together after 24 decode passes (two prefill passes before), the fifth still decoding; one more request
    to send, by the client of the first that ended."""
    f = with_limits(SGL, recv_interval=recv, recv_lag=lag)
    memo: dict[tuple[object, ...], object] = {}
    # each request's (prompt, output): four outputs of 25, then 35; the sixth request's prompt is 56 tokens
    table = ((40, 25), (56, 25), (72, 25), (88, 25), (40, 35), (56, 35))
    simulate(f, coefficients(f.hardware.kind, f.engine), isl=64, osl=40, concurrency=5, rate=None, requests=6,
             lengths=table, schedules=memo)
    ((schedule,),) = memo.values()  # one key, one schedule recorded under it (a list: _Schedule.serves)
    return [(s[0], s[2], s[5]) for s in schedule.steps]  # type: ignore[attr-defined]


def test_a_receive_comes_every_r_decode_passes_counted_from_the_last() -> None:
    """26 passes after the last receive (a prefill pass, then 24 decode passes): with R 7 the receives came at the
    7th, 14th and 21st decode pass, so the next is 4 passes on; with R 4 the 24th pass was one (at once).  The old
    rule took any run that crossed a receive as ending at one and let the request in at once."""
    assert _passes(7, 0)[2:5] == [(5, 0, 24), (1, 0, 4), (0, 56, 1)]
    assert _passes(4, 0)[2:4] == [(5, 0, 24), (0, 56, 1)]


def test_the_next_request_misses_the_passes_launched_before_the_end_is_known() -> None:
    """The overlap loop launches the next batch before it processes the one that ended the request, and polls
    before that: the client's next request first meets the receive 2 passes on (1 with the normal loop)."""
    assert _passes(1, 0)[2:4] == [(5, 0, 24), (0, 56, 1)]
    assert _passes(1, 1)[2:5] == [(5, 0, 24), (1, 0, 1), (0, 56, 1)]
    assert _passes(1, 2)[2:5] == [(5, 0, 24), (1, 0, 2), (0, 56, 1)]
    # both: at least 2 passes on, at a receive (every 4th decode pass: the 28th)
    assert _passes(4, 2)[2:5] == [(5, 0, 24), (1, 0, 4), (0, 56, 1)]


def test_an_idle_scheduler_receives_at_once() -> None:
    """Nothing running: the loop polls until a request arrives (an idle turn weighs 1 and costs nothing), so one
    client's next request is not delayed by the lag or the interval."""
    c = coefficients(SGL.hardware.kind, SGL.engine)
    kw: dict[str, object] = {"isl": 512, "osl": 64, "concurrency": 1, "rate": None, "requests": 4}
    base = simulate(with_limits(SGL, recv_lag=0), c, **kw)  # type: ignore[arg-type]
    late = simulate(with_limits(SGL, recv_lag=2, recv_interval=30), c, **kw)  # type: ignore[arg-type]
    assert late.ttft == base.ttft


def test_the_lag_follows_the_event_loop_a_launch_runs() -> None:
    """Overlap loop (SGLang's default): 2; normal loop (PP, speculative decoding without SGLANG_ENABLE_SPEC_V2,
    --disable-overlap-schedule): 1; engines without SGLang's receive: 0."""
    assert (SGL.recv_lag, _facts("sglang", pp=2).recv_lag) == (2, 1)
    assert _facts("sglang", speculative_method="eagle3", num_speculative_tokens=3).recv_lag == 1
    assert (_facts("vllm").recv_lag, _facts("trtllm").recv_lag) == (0, 0)
    gib = find("b200").memory_gib

    def lag(argv: list[str]) -> int:
        return sglang_serving_facts(GPT_OSS, sglang_plan(argv, gpu_memory_gib=gib), gpu="b200").recv_lag

    spec = ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
            "--speculative-num-draft-tokens", "4"]
    assert lag(SERVE) == 2
    assert lag([*SERVE, "--disable-overlap-schedule"]) == 1
    assert lag([*SERVE, *spec]) == 1
    assert lag(["SGLANG_ENABLE_SPEC_V2=1", *SERVE, *spec]) == 2


def test_dp_attention_refuses_a_receive_interval() -> None:
    """SchedulerRecvSkipper asserts DP attention off (scheduler_recv_skipper.py L15): such a server never starts."""
    with pytest.raises(InputError, match="DP attention"):
        sglang_plan([*SERVE, "--dp", "8", "--enable-dp-attention", "--scheduler-recv-interval", "30"],
                    gpu_memory_gib=find("h200").memory_gib)
    assert sglang_plan([*SERVE, "--dp", "8", "--enable-dp-attention", "--scheduler-recv-interval", "1"],
                       gpu_memory_gib=find("h200").memory_gib).dp_attention


def test_a_receive_interval_is_said_in_a_finding() -> None:
    """The launch's receive interval and the wait it costs a closed loop's request (finding sglang-receive)."""
    gib = find("b200").memory_gib
    said = [f.message for f in sglang_serving_facts(GPT_OSS, sglang_plan([*SERVE, "--scheduler-recv-interval", "30"],
                                                                         gpu_memory_gib=gib), gpu="b200").findings
            if f.code == "sglang-receive"]
    assert len(said) == 1 and "every R decode passes (R = 30)" in said[0] and "15 + 2 decode passes" in said[0]
    assert not any(f.code == "sglang-receive" for f in sglang_serving_facts(
        GPT_OSS, sglang_plan(SERVE, gpu_memory_gib=gib), gpu="b200").findings)
