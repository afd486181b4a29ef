"""SGLang's DP-attention ranks as schedulers of their own stepping together (predict/_sglang_dp.py)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from launchcard.hardware import find
from launchcard.predict import coefficients, lockstep_group, sglang_plan, sglang_serving_facts, simulate
from launchcard.predict._clock import Schedules
from launchcard.predict._facts import ServingFacts
from launchcard.predict._sched import _Cohort
from launchcard.predict._sglang_dp import _Dispatch, _Rank

HF = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "hf"
GPT_OSS = HF / "openai" / "gpt-oss-120b" / "config.json"
SERVE = ["python", "-m", "sglang.launch_server", "--model", "openai/gpt-oss-120b"]


def _group(dp: int) -> ServingFacts:
    plan = sglang_plan([*SERVE, "--tp", str(dp), "--dp", str(dp), "--enable-dp-attention"],
                       gpu_memory_gib=find("h200").memory_gib)
    group, schedulers = lockstep_group(sglang_serving_facts(GPT_OSS, plan, gpu="h200"))
    assert schedulers == 1 and group.lockstep == dp
    return group


def test_the_dp_controller_hands_requests_out_in_turn() -> None:
    """round_robin (data_parallel_controller.py L471-479): request i of the run to rank i mod g, a cohort of
    alike requests split where it falls on several ranks, the turn carried over to the next cohort."""
    ranks = [_Rank(0.7) for _ in range(4)]
    send = _Dispatch(ranks).send
    send(_Cohort(6, 0.0, 100, 0, 10))  # requests 0-5: ranks 0, 1, 2, 3, 0, 1
    send(_Cohort(1, 0.0, 200, 0, 10))  # request 6: rank 2
    assert [sum(r.n for r in k.waiting) for k in ranks] == [2, 2, 2, 1]
    assert [r.need for r in ranks[2].waiting] == [100, 200]


def test_a_rank_without_a_prefill_decodes_in_the_groups_prefill_step() -> None:
    """Two ranks: request 0 (rank 0, 10 output tokens) decodes while request 1 (rank 1) prefills its 16,000-token
    prompt in four chunks of its rank's 4,096: rank 0 runs its decode batch in each of those steps (its token
    credited), so the run ends after 10 steps, request 0's own (1 prefill + 9 decodes); request 1 ends on step 6.
    With every rank's decode paused by any prefill it would take 14."""
    group = _group(2)
    c = coefficients("gpu", "sglang")
    assert group.max_num_batched_tokens // 2 == 4096
    res = simulate(group, c, isl=64, osl=10, concurrency=2, rate=None, requests=2, lengths=((64, 10), (16000, 2)))
    assert res.requests == 2
    assert res.steps == 10


def test_each_rank_admits_by_its_own_kv_pool() -> None:
    """Each rank's KV pool is its own: two long prompts handed to rank 0 (requests 0 and 2) do not fit its pool
    together, though the group's pooled KV would hold all four requests; the second long one waits for the first
    to end, so at most three requests run at once."""
    group = _group(2)
    c = coefficients("gpu", "sglang")
    f = replace(group, kv_capacity_tokens=2 * 10_000)  # 10,000 tokens a rank
    table = ((6000, 20), (500, 20))
    res = simulate(f, c, isl=3250, osl=20, concurrency=4, rate=None, requests=4, lengths=table)
    assert res.requests == 4
    assert res.running_max == 3
    roomy = simulate(replace(group, kv_capacity_tokens=2 * 20_000), c, isl=3250, osl=20, concurrency=4, rate=None,
                     requests=4, lengths=table)
    assert roomy.running_max == 4



def test_a_dp_attention_closed_loop_replays_its_recorded_schedule() -> None:
    """A closed loop whose every rank's pool holds every client's request is decided by no KV check: its schedule is
    recorded once and another plan with the same batching replays it with its own step costs, with the figures a
    simulation of that plan gives."""
    from dataclasses import asdict

    group = _group(4)
    # a launch cost per kernel group on eager steps, so that the plan without CUDA graphs steps slower whatever the
    # shipped set's eager_layer_us (the refit may put 0 there)
    c = replace(coefficients("gpu", "sglang"), eager_layer_us=50.0)
    other = replace(group, kv_capacity_tokens=group.kv_capacity_tokens // 2, cuda_graphs=False)
    memo: Schedules = {}
    kw = {"isl": 1000, "osl": 200, "concurrency": 32, "rate": None, "requests": 96}
    first = simulate(group, c, schedules=memo, **kw)
    assert sum(len(v) for v in memo.values()) == 1
    replayed = simulate(other, c, schedules=memo, **kw)
    assert sum(len(v) for v in memo.values()) == 1  # replayed, not recorded again
    assert asdict(first) == asdict(simulate(group, c, **kw))
    fresh = asdict(simulate(other, c, **kw))
    got = asdict(replayed)
    assert got["tpot"] == fresh["tpot"] and got["ttft"] == fresh["ttft"] and got["makespan"] == fresh["makespan"]
    assert got["makespan"] != asdict(first)["makespan"]  # its own step costs


def test_a_traced_dp_attention_run_sums_each_requests_step_features() -> None:
    """The calibration's traced run (bench/predict_accuracy.py) of a DP-attention group: the same schedule as the
    untraced run, each request's step features summed over its TTFT and its decode."""
    group = _group(4)
    c = coefficients("gpu", "sglang")
    kw = {"isl": 1000, "osl": 50, "concurrency": 16, "rate": None, "requests": 32, "range_ratio": 0.5}
    plain, traced = simulate(group, c, **kw), simulate(group, c, trace=True, **kw)
    assert traced.tpot == plain.tpot and traced.steps == plain.steps
    assert sum(n for _, n in traced.ttft_fv) == 32 and sum(n for _, n in traced.tpot_fv) == 32
    assert all(v[0] >= 0.0 for v, _ in traced.ttft_fv) and any(any(x > 0 for x in v) for v, _ in traced.tpot_fv)
