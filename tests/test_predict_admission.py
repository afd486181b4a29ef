"""How the simulated scheduler admits a request by release: vLLM before 0.19 by its first chunk's KV (KV allocated
chunk by chunk, the newest prefills preempted when a chunk finds none, nobody admitted in a step that preempted:
0.18.1 vllm/v1/core/sched/scheduler.py L450-493, L553-554); from 0.19 only when the whole prompt fits
(scheduler_reserve_full_isl, default True: 0.19.1 vllm/config/scheduler.py L139-143)."""

from __future__ import annotations

from config_support import LLAMA8B
from launchcard.hardware import find
from launchcard.memory import Settings, arch_from_config, plan_memory, settings_from_argv
from launchcard.predict import HardwareFigures, ServingFacts, facts_from_memory_plan
from launchcard.predict._sched import _prefill, _Scan
from launchcard.predict._sim import _Cohort

ARCH = arch_from_config(dict(LLAMA8B))


def _facts(version: str, engine: str = "vllm", argv: tuple[str, ...] = ()) -> ServingFacts:
    s = settings_from_argv(["vllm", "serve", "m", *argv], Settings(max_model_len=16384, vllm_version=version))
    acc = find("h100")
    return facts_from_memory_plan(ARCH, s, plan_memory(ARCH, s, gpu=acc), HardwareFigures.from_accelerator(acc),
                                  engine=engine)


def test_the_rule_follows_the_release_and_the_flag() -> None:
    old = _facts("0.11.0")
    assert old.admit_by_chunk and any(x.code == "admission" for x in old.findings)
    assert _facts("0.18.1").admit_by_chunk
    assert not _facts("0.19.1").admit_by_chunk and not _facts("0.32.0").admit_by_chunk
    assert _facts("0.19.1", argv=("--no-scheduler-reserve-full-isl",)).admit_by_chunk
    assert not _facts("0.11.0", engine="sglang").admit_by_chunk
    assert not _facts("0.11.0", engine="trtllm").admit_by_chunk


def test_a_long_prompt_starts_when_its_first_chunk_fits() -> None:
    """5,000-token prompt, 2,048-token budget, KV room for 3,000 tokens: the whole prompt does not fit, its first
    chunk does."""
    for by_chunk, chunks in ((False, []), (True, [2048])):
        running: list[_Cohort] = []
        waiting = [_Cohort(1, 0.0, 5000, 0, 64)]
        out, admitted, preempted = _prefill(_Scan(running, by_chunk), running, waiting, 2048, 256, 3000,
                                            by_chunk=by_chunk)
        assert [c.chunk for c in out] == chunks and admitted == len(chunks) and preempted == 0, by_chunk


def test_a_chunk_without_room_preempts_the_newest_prefill_and_nobody_starts() -> None:
    """Two prefills in progress (2,000 of 5,000 tokens computed each) in a 4,500-token pool: the older one's next
    chunk needs the newer one's blocks, so the newer is preempted (back to the queue's front, its whole prompt
    to compute again), and the waiting request does not start in that step."""
    a, b = _Cohort(1, 0.0, 5000, 0, 64), _Cohort(1, 0.0, 5000, 0, 64)
    a.done = b.done = 2000
    running = [a, b]
    waiting = [_Cohort(1, 0.0, 100, 0, 64)]
    out, admitted, preempted = _prefill(_Scan(running, True), running, waiting, 1000, 256, 4500, by_chunk=True)
    assert preempted == 1 and running == [a] and [c.chunk for c in out] == [1000] and admitted == 0
    assert waiting[0] is b and (b.need, b.done) == (5000, 0) and len(waiting) == 2


def test_a_preempted_prefill_keeps_the_rest_of_its_prompt() -> None:
    from launchcard.predict._sched import _preempt_newest

    r = _Cohort(1, 0.0, 5000, 0, 64)
    r.done = 2000
    running, waiting = [r], []
    _preempt_newest(running, waiting)
    assert waiting[0].need == 5000 and waiting[0].done == 0


def test_trtllm_reserves_each_request_to_its_end() -> None:
    """trtllm-serve's GUARANTEED_NO_EVICT and --max_batch_size 2048 (commands/serve.py get_llm_args)."""
    trt = _facts("0.11.0", engine="trtllm")
    assert trt.reserve_to_end and trt.max_num_seqs == 2048
    assert {"capacity-scheduler", "max-batch-size"} <= {x.code for x in trt.findings}
    assert not _facts("0.19.1").reserve_to_end and not _facts("0.11.0", engine="sglang").reserve_to_end


def test_no_evict_admits_only_what_fits_prompt_and_output() -> None:
    """Pool of 1,000 tokens, 4 waiting 100-token prompts with 300-token outputs: whole prompts admit all four
    (400 tokens), prompt + output (400 each) two; and a decoding request is never preempted."""
    for to_end, n in ((False, 4), (True, 2)):
        running: list[_Cohort] = []
        waiting = [_Cohort(4, 0.0, 100, 0, 300)]
        out, admitted, _ = _prefill(_Scan(running, to_end=to_end), running, waiting, 8192, 256, 1000, to_end=to_end)
        assert admitted == n and sum(c.n for c in out) == n, to_end
    from launchcard.predict._sched import _make_room

    r = _Cohort(2, 0.0, 100, 0, 300)
    r.done, r.gen = 100, 299.0
    sc, n_out = _make_room(_Scan([r], to_end=True), [r], [], 500, 1.0, to_end=True)
    assert n_out == 0 and sc.used == 800


def test_no_evict_reserves_whole_kv_blocks() -> None:
    """TensorRT-LLM's getRemainingBlocksToCompletion sizes a request at ceilDiv(prompt + max_tokens, 32) blocks
    (kvCacheManager.cpp; KvCacheConfig.tokens_per_block 32): 100 + 300 tokens hold 13 blocks, 416 tokens, so a
    1,600-token pool starts three such requests where a token-granular reservation would start four; the running
    ones hold the rounded figure too."""
    from launchcard.predict._sched import reserved

    assert reserved(400, 32) == 416 and reserved(416, 32) == 416 and reserved(417, 32) == 448
    assert reserved(400, 1) == 400
    for block, n in ((1, 4), (32, 3)):
        running: list[_Cohort] = []
        waiting = [_Cohort(4, 0.0, 100, 0, 300)]
        _, admitted, _ = _prefill(_Scan(running, to_end=block), running, waiting, 8192, 256, 1600, to_end=block)
        assert admitted == n, block
        assert _Scan(running, to_end=block).used == n * reserved(400, block)


def test_a_trtllm_burst_waits_longer_for_whole_blocks() -> None:
    """The same plan and burst under GUARANTEED_NO_EVICT with a KV pool that binds: reserving whole 32-token
    blocks starts fewer requests at once, so the queue (TTFT) is longer and the decode batches smaller."""
    from dataclasses import replace

    from launchcard.predict import coefficients, simulate

    f = replace(_facts("0.19.1"), reserve_to_end=True, chunked_prefill=False, kv_capacity_tokens=20_000)
    c = coefficients(f.hardware.kind, "trtllm")
    runs = {b: simulate(replace(f, reserve_block=b), c, isl=100, osl=20, concurrency=400, rate=None,
                        requests=400)
            for b in (1, 32)}
    ttft = {b: sum(t * n for t, n in r.ttft) / sum(n for _, n in r.ttft) for b, r in runs.items()}
    assert ttft[32] > ttft[1]
    assert runs[32].running_max < runs[1].running_max
