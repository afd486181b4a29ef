"""SGLang's admission estimate and retraction, one test per clause of the rule (SGLang 0.5.3-0.5.9
schedule_policy.py PrefillAdder, scheduler.py update_running_batch, schedule_batch.py retract_decode;
launchcard.predict._sglang_rules.SglangBudget, launchcard.predict._sglang_sched):

- a waiting request is taken only while its prompt + whole output is less than the free KV less the running
  requests' outputs left x the new-token ratio;
- the ratio starts at 0.7 x --schedule-conservativeness (x 0.3 with DP attention), SGLANG_* variables replace the
  defaults;
- a decode batch without KV room retracts the requests with the fewest outputs to the END of the queue (the newest
  with speculative decoding), never the last one, and sets the ratio from the requests left;
- a retracted request's time between tokens includes its wait at the end of the queue;
- vLLM's rules are not SGLang's (no estimate, the newest preempted to the front).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from config_support import LLAMA8B
from launchcard.errors import InputError
from launchcard.hardware import find
from launchcard.memory import Settings, arch_from_config, plan_memory
from launchcard.predict import (
    HardwareFigures,
    ServingFacts,
    Workload,
    coefficients,
    facts_from_memory_plan,
    predict,
    sglang_command_facts,
    sglang_plan,
    simulate,
    with_limits,
)
from launchcard.predict._sched import _Cohort, _Scan
from launchcard.predict._sglang_rules import DEFAULT_BUDGET, sglang_budget
from launchcard.predict._sglang_sched import sglang_prefill, sglang_retract

HF = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "hf"
GPT_OSS = HF / "openai" / "gpt-oss-120b" / "config.json"
SERVE = ["python3", "-m", "sglang.launch_server", "--model-path", "openai/gpt-oss-120b", "--tp-size", "8"]


def _facts(engine: str) -> ServingFacts:
    arch = arch_from_config(dict(LLAMA8B))
    s = Settings(max_model_len=16384)
    acc = find("h100")
    return facts_from_memory_plan(arch, s, plan_memory(arch, s, gpu=acc), HardwareFigures.from_accelerator(acc),
                                  engine=engine)


SGL = _facts("sglang")
VLLM = _facts("vllm")


def _burst(f: ServingFacts, n: int, isl: int, osl: int, cap: int, **kw: object) -> object:
    g = with_limits(f, kv_capacity_tokens=cap, max_num_seqs=1024, max_num_batched_tokens=8192)
    return simulate(g, coefficients(g.hardware.kind, g.engine), isl=isl, osl=osl, concurrency=n, rate=None,
                    requests=n, **kw)  # type: ignore[arg-type]


def test_the_ratio_starts_falls_and_floors_as_sglang_sets_it() -> None:
    """init 0.7 x conservativeness (x 0.3 with DP attention), floor init x 0.14, falling over 600 decode batches
    (environ.py L165-168, scheduler.py L481-493, server_args.py L1383); the environment replaces each default."""
    assert (DEFAULT_BUDGET.init, DEFAULT_BUDGET.floor, DEFAULT_BUDGET.clip) == (0.7, pytest.approx(0.098), 4096)
    assert DEFAULT_BUDGET.decay == pytest.approx((0.7 - 0.098) / 600)
    assert sglang_budget() == DEFAULT_BUDGET
    assert sglang_budget(2.0).init == 1.0  # capped at 1
    dpa = sglang_budget(1.0, dp_attention=True)
    assert (dpa.init, dpa.floor) == (pytest.approx(0.21), pytest.approx(0.21 * 0.14))
    env = sglang_budget(env={"SGLANG_INIT_NEW_TOKEN_RATIO": "0.5", "SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS": "100",
                             "SGLANG_RETRACT_DECODE_STEPS": "5", "SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION": "256"})
    assert (env.init, env.decay, env.retract_steps, env.clip) == (0.5, pytest.approx(0.5 * 0.86 / 100), 5, 256)


def test_a_command_carries_its_conservativeness_dp_attention_and_environment() -> None:
    assert sglang_plan(SERVE, gpu_memory_gib=80).budget == DEFAULT_BUDGET
    plan = sglang_plan([*SERVE, "--schedule-conservativeness", "0.5"], gpu_memory_gib=80)
    assert plan.budget.init == pytest.approx(0.35)
    dpa = sglang_plan([*SERVE, "--dp-size", "8", "--enable-dp-attention"], gpu_memory_gib=80)
    assert dpa.budget.init == pytest.approx(0.21)
    assert sglang_plan(["SGLANG_INIT_NEW_TOKEN_RATIO=0.4", *SERVE], gpu_memory_gib=80).budget.init == 0.4
    with pytest.raises(InputError, match="--schedule-conservativeness"):
        sglang_plan([*SERVE, "--schedule-conservativeness", "-1"], gpu_memory_gib=80)
    with pytest.raises(InputError, match="SGLANG_RETRACT_DECODE_STEPS"):
        sglang_plan(["SGLANG_RETRACT_DECODE_STEPS=many", *SERVE], gpu_memory_gib=80)


def test_the_plan_facts_carry_the_estimate_and_a_finding_names_it() -> None:
    f = sglang_command_facts([*SERVE, "--schedule-conservativeness", "0.5"], GPT_OSS, "h200")
    assert f.sglang_budget is not None and f.sglang_budget.init == pytest.approx(0.35)
    assert any(x.code == "sglang-admission" for x in f.findings)
    # after a retraction the ratio is the remaining requests' own estimate, not "reset" (back at init: only idle)
    (note,) = [x.message for x in f.findings if x.code == "sglang-admission"]
    assert "reset after a retraction" not in note and "(outputs so far + 20 each)" in note
    assert SGL.sglang_budget == DEFAULT_BUDGET  # the plan search's and calibration's SGLang facts
    assert VLLM.sglang_budget is None


def test_a_request_is_taken_only_with_room_for_its_whole_output() -> None:
    """4,000 KV tokens, requests of 200 + 200: the first alone (the burst reaches an idle engine one at a time),
    then while 400 < 4,000 - (201 + 0.7 x 199) - 400 x k: 9 more, 10 running (the KV for prompts alone would take
    19)."""
    res = _burst(SGL, 40, 200, 200, 4000)
    assert res.running_max == 10  # type: ignore[attr-defined]
    res_v = _burst(VLLM, 40, 200, 200, 4000)
    assert res_v.running_max > 15  # type: ignore[attr-defined]


def _decoding(n: int, prompt: int, gen: int, osl: int) -> _Cohort:
    c = _Cohort(n, 0.0, prompt, 0, osl)
    c.done, c.gen, c.first = prompt, float(gen), 0.0
    return c


@pytest.mark.parametrize(("ratio", "taken"), [(0.7, 5), (0.0, 9), (1.0, 4)])
def test_the_running_requests_outputs_left_count_by_the_ratio(ratio: float, taken: int) -> None:
    """One request decoding (100 held, 1,000 outputs left), 2,000 KV tokens, waiting requests of 100 + 100: room
    2,000 - 100 - 1,000 x ratio, each taken counts 200 and must be less than what is left."""
    def admit(cap: int, seats: int, full: bool) -> tuple[int, bool]:
        running = [_decoding(1, 99, 1, 1001)]
        queued = [_Cohort(20, 0.0, 100, 0, 100)]
        _, n, stop = sglang_prefill(_Scan(running), running, queued, budget=8192, seats_max=seats, cap=cap,
                                    ratio=ratio, clip=4096, full=full)
        return n, stop

    assert admit(2000, 64, False) == (taken, True)  # the next one was refused: none tried until a request leaves
    assert admit(10**6, 64, True) == (0, True)  # ... such as now
    assert admit(10**6, 3, False) == (2, True)  # out of request slots: stopped too


@pytest.mark.parametrize(("done", "stop"), [(2000, False), (14000, True)])
def test_a_chunked_prefill_reserves_its_outputs_with_its_last_chunk_only(done: int, stop: bool) -> None:
    """A 20,000-token prompt with 4,000 outputs, ``done`` computed, a batch of 8,192 tokens, 22,000 KV tokens (the
    prompt holds 20,000): a chunk that leaves prompt to compute counts no outputs (SGLang's add_chunked_req), so the
    waiting request (100 + 100 < 2,000 left) is no reason to stop admissions; the chunk that ends the prompt counts
    its 4,000 outputs and admissions stop until a request leaves."""
    chunked = _Cohort(1, 0.0, 20000, 0, 4000)
    chunked.done = done
    running, queued = [chunked], [_Cohort(5, 0.0, 100, 0, 100)]
    out, n, full = sglang_prefill(_Scan(running), running, queued, budget=8192, seats_max=64, cap=22000,
                                  ratio=0.7, clip=4096, full=False)
    assert out == [chunked] and chunked.chunk == min(8192, 20000 - done)
    assert (n, full) == (0, stop)


def test_retraction_frees_the_fewest_outputs_first_to_the_end_of_the_queue() -> None:
    old = _decoding(2, 100, 50, 200)  # 150 tokens each
    new = _decoding(3, 300, 10, 200)  # 310 each, fewest outputs
    running, queued = [old, new], [_Cohort(4, 0.0, 64, 0, 200)]
    sc = _Scan(running)
    assert sc.used == 2 * 150 + 3 * 310
    # 1,230 held; one freed (920 + 4 next tokens) is not enough, two are (610 + 3)
    sc, n, ratio = sglang_retract(sc, running, queued, cap=sc.used - 2 * 310 + 3, tps=1.0, rule=DEFAULT_BUDGET,
                                  newest=False)
    assert n == 2 and sc.n_dec == 3
    assert [c.n for c in running] == [2, 1] and queued[0].n == 4  # the queue's head stays first
    back = queued[1:]
    assert [(c.n, c.need, c.redo, c.gen, c.cached, c.done) for c in back] == [(1, 310, 10.0, 10.0, 0, 0)] * 2
    # the ratio of those left: (outputs so far + 20 per request) / (their output lengths + 1)
    assert ratio == pytest.approx((2 * 50 + 10 + 20 * 3) / (3 * 200 + 1))


def test_retraction_keeps_the_last_request_and_takes_the_newest_with_speculative_decoding() -> None:
    one = [_decoding(1, 500, 5, 600)]
    _, n, ratio = sglang_retract(_Scan(one), one, [], cap=10, tps=1.0, rule=DEFAULT_BUDGET, newest=False)
    assert n == 0 and ratio is not None and len(one) == 1  # no room, but never the last one
    a, b = _decoding(1, 100, 5, 200), _decoding(1, 100, 50, 200)
    running: list[_Cohort] = [a, b]
    queued: list[_Cohort] = []
    sglang_retract(_Scan(running), running, queued, cap=_Scan(running).used, tps=1.0, rule=DEFAULT_BUDGET,
                   newest=True)
    assert running == [a] and queued == [b]  # the newest, though it has more outputs


def test_a_retracted_request_waits_behind_the_queue_and_its_token_gap_shows_it() -> None:
    """A burst whose admissions outgrow the KV once the ratio has fallen: the requests SGLang retracts wait for
    everything queued before they decode again, so a few time-between-tokens figures are far above the rest;
    vLLM (newest preempted, back at the front) keeps them close."""
    kw = {"range_ratio": 0.5}
    sgl = _burst(SGL, 200, 128, 1024, 20_000, **kw)
    assert sgl.preemptions > 0  # type: ignore[attr-defined]
    tpots = sorted(x for x, _ in sgl.tpot)  # type: ignore[attr-defined]
    assert tpots[-1] > 3 * tpots[len(tpots) // 2]
    vllm = _burst(VLLM, 200, 128, 1024, 20_000, **kw)
    v = sorted(x for x, _ in vllm.tpot)  # type: ignore[attr-defined]
    # vLLM's preempted requests go back to the front: their worst gap stays far closer to the median than SGLang's
    # (each request's own lengths: 3.8x against 11.8x)
    assert v[-1] / v[len(v) // 2] < 0.5 * tpots[-1] / tpots[len(tpots) // 2]


def test_an_sglang_prediction_says_requests_were_retracted() -> None:
    f = with_limits(SGL, kv_capacity_tokens=20_000, max_num_seqs=1024)
    p = predict(f, Workload(isl=128, osl=1024, concurrency=200, num_requests=200, range_ratio=0.5))
    (w,) = [x for x in p.findings if x.code == "preemption"]
    assert "retracted to the end of the queue" in w.message
    assert p.preemptions > 0 and not math.isnan(p.tpot_ms_mean)
