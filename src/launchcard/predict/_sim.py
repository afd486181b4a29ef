"""A step-level simulation of the engine's scheduler over one replica.

Continuous batching as vLLM V1 does it: every step first gives each running decode
sequence its token(s), then spends what is left of ``max_num_batched_tokens`` on
prefill chunks, of running requests first, then of waiting ones (first come, first
served) while a sequence slot (``max_num_seqs``) and KV blocks for the prompt are free;
a request whose next token finds no free KV block preempts the newest running request
(recomputed later, as vLLM's default).  SGLang's default runs a prefill batch alone.
Requests are kept in cohorts of identical state, and runs of decode-only steps between
two events are timed in one go (the context grows linearly), so a prediction costs
about one loop turn per event, not per token.  A closed loop's schedule does not depend
on the step times: when the KV cache never constrains it, a plan search records it once
per batching setup and replays it with each plan's step costs (``schedules``).

Arrivals as ``vllm bench serve`` makes them: a closed loop (``concurrency``), Poisson
arrivals (``rate``), or both: Poisson arrivals of which at most ``concurrency`` are in
flight (its ``--max-concurrency`` semaphore: a request finding them all busy waits in the
client and is sent, its TTFT clock starting, when one ends).  A burst (every request sent
at once) is the closed loop with as many clients as requests.

Request lengths are exact by default.  With a ``range_ratio`` r each request's prompt and
output length take one of :data:`LENGTH_CLASSES` values spread evenly over the range the
client draws them from uniformly (``vllm bench serve --random-range-ratio``:
``[floor(L(1 - r)), ceil(L(1 + r))]``), the class rotating with the request's number:
clients then finish at different times and drift out of step, so new prompts are prefilled
beside other clients' decodes, as a real closed loop does, instead of every client starting
its next request together.

A step that carries prefill tokens runs outside the full CUDA graph a decode-only step
replays, and so does one of more tokens than the engine captured graphs for
(:func:`graphed`): it pays the eager per-layer overhead.

The client sees a step's tokens only after two more pipeline stages, each a process of its own: the API
server (output processing and one SSE chunk per request per step; vLLM V1 runs it apart from the engine core)
and the benchmark client (one asyncio process reading every stream).  Each stage spends a measured time per
request with output in the step (``Coefficients.stages``, growing with the outputs of the step as measured:
:func:`launchcard.predict._cost.stage_seconds`) and handles the steps' outputs in order (:func:`stage_end`):
when a step's outputs take a stage longer than the step, its clock falls behind the engine's and every time the
client sees (first token, last token, the run's end) comes from the last stage's clock.  The engine
does not wait for them (vLLM's output queue is unbounded).

A closed loop's next requests reach the scheduler's queue at its next receive: every step,
or with SGLang's ``--scheduler-recv-interval`` R (``ServingFacts.recv_interval``) after a
prefill batch, when idle, and otherwise at every R-th decode pass since the last receive
(``python/sglang/srt/managers/scheduler_recv_skipper.py``: a decode pass weighs 1, a prefill
batch 1000, a receive when the count reaches R, then the count restarts at 0).  SGLang polls
before it learns that a request ended, so the client's next request misses the receives of
the next ``ServingFacts.recv_lag`` passes (:func:`launchcard.predict._sglang_rules.recv_lag`).
"""

from __future__ import annotations

import math
import random
from collections import deque
from dataclasses import dataclass
from typing import Any

from launchcard.predict._cost import Coefficients, StepWork, features, step_terms, step_work, work_fn
from launchcard.predict._facts import ServingFacts
from launchcard.predict._sched import _At, _Cohort, _make_room, _prefill, _Scan
from launchcard.predict._types import TERMS


@dataclass
class SimResult:
    ttft: list[tuple[float, int]]  # (seconds, requests)
    tpot: list[tuple[float, int]]
    e2e: list[tuple[float, int]]
    makespan: float
    requests: int
    output_tokens: float
    prefill: dict[str, float]
    decode: dict[str, float]
    batch_steps: float  # sum over decode steps of decode sequences
    decode_steps: float
    busy: float  # seconds with work
    steps: int
    preemptions: int
    tokens_per_step: float  # output tokens per decode step of one sequence
    samples: list[dict[str, float]]
    ttft_fv: list[tuple[list[float], int]]  # traced runs: step features summed over each TTFT
    tpot_fv: list[tuple[list[float], int]]  # ... over each decode, per output token after the first
    # most requests running at once: a run with any max_num_seqs from this up to the one simulated is the same run
    # (sequence slots never bound the scheduler), which lets a plan search share it
    running_max: int = 0
    # the CUDA graph limits (tokens a step) that would time every step of this run as it was timed, from the first
    # up to (not including) the second: a plan search shares the run with a batch limit whose graph limit is within
    graph_span: tuple[float, float] = (0.0, math.inf)


LENGTH_CLASSES = 4
# A step replays a captured CUDA graph when its tokens are within the engine's capture limit
# (``ServingFacts.graph_tokens``: vLLM's max_cudagraph_capture_size, SGLang's --cuda-graph-max-bs) and runs eagerly
# above it (vLLM 0.10.1 vllm/v1/worker/gpu_model_runner.py L1524-1531; SGLang 0.5.5.post3
# model_executor/cuda_graph_runner.py can_run, L422-425). vLLM V1 also runs mixed (prefill) steps within the limit as
# piecewise graphs; SGLang runs extend (prefill) batches eagerly unless its piecewise graphs are switched on
# (server_args.py enable_piecewise_cuda_graph, off by default); TensorRT-LLM replays its graphs for generation-only
# batches (cuda_graph_config), without padding only for a batch of exactly a captured size (``graph_sizes``). Facts
# without a limit (``graph_tokens`` None): decode at any size, vLLM mixed steps up to GRAPH_TOKENS (vLLM's usual
# default ceiling)
GRAPH_TOKENS = 512


def graphed(f: ServingFacts, tokens: int, prefill_tokens: int) -> bool:
    """Whether a step of ``tokens`` tokens, ``prefill_tokens`` of them prefill, replays a CUDA graph."""
    if not f.cuda_graphs:
        return False
    top = f.graph_tokens
    if top is not None and tokens > top:
        return False
    if f.graph_sizes is not None and tokens not in f.graph_sizes:
        return False
    return not prefill_tokens or (f.engine == "vllm" and tokens <= (GRAPH_TOKENS if top is None else top))


def length_range(length: int, ratio: float) -> tuple[int, int]:
    """The lengths a client draws from for ``length`` at ``ratio`` (vllm/benchmarks/datasets.py RandomDataset:
    ``floor(L (1 - r))`` to ``ceil(L (1 + r))``, at least 1)."""
    if ratio <= 0.0:
        return length, length
    return max(1, math.floor(length * (1.0 - ratio))), math.ceil(length * (1.0 + ratio))


def request_lengths(isl: int, osl: int, ratio: float, j: int) -> tuple[int, int]:
    """Prompt and output length of request ``j`` (0, 1, ... in the order they are issued): exact without a
    ``ratio``, else the midpoints of :data:`LENGTH_CLASSES` equal slices of :func:`length_range`, the prompt's
    class ``j mod K`` and the output's ``(j // K) mod K`` (drawn independently, as the client draws them), so
    every K x K requests cover each pair once and the mean lengths are the ranges' means."""
    if ratio <= 0.0:
        return isl, osl
    k = LENGTH_CLASSES

    def at(length: int, i: int) -> int:
        lo, hi = length_range(length, ratio)
        return max(1, round(lo + (hi - lo) * (2 * i + 1) / (2 * k)))

    return at(isl, j % k), at(osl, (j // k) % k)


def new_requests(m: int, j0: int, isl: int, osl: int, ratio: float,
                 prefix_hit: float) -> list[tuple[int, int, int, int]]:
    """``m`` requests numbered from ``j0``, as (count, prompt tokens to compute, cached tokens, output length),
    one entry per length pair in the order each pair first appears."""
    if ratio <= 0.0:
        cached = int(isl * prefix_hit)
        return [(m, isl - cached, cached, osl)]
    groups: dict[tuple[int, int], int] = {}
    for j in range(j0, j0 + m):
        pair = request_lengths(isl, osl, ratio, j)
        groups[pair] = groups.get(pair, 0) + 1
    out = []
    for (i_len, o_len), n in groups.items():
        cached = int(i_len * prefix_hit)
        out.append((n, i_len - cached, cached, o_len))
    return out


def arrival_times(requests: int, rate: float, seed: int = 0) -> list[float]:
    """When each of ``requests`` Poisson arrivals at ``rate`` is sent, as ``vllm bench serve`` schedules them:
    request i after the sum of i + 1 exponential gaps, all scaled so that the last is sent at exactly
    ``requests / rate`` (its get_request: vLLM 0.10.2 vllm/benchmarks/serve.py L185-195, 0.11.2 L205-225, 0.32.0
    L486-496, "to close the gap ... stabilizing the throughput"); the run's clock starts before the first."""
    rng = random.Random(seed)
    out: list[float] = []
    t = 0.0
    for _ in range(requests):
        t += rng.expovariate(rate)
        out.append(t)
    scale = requests / rate / t if t > 0 else 1.0
    return [x * scale for x in out]


def stage_end(free: float, first: float, last: float, k: int, s: float) -> tuple[float, float]:
    """When a first-in first-out stage that takes ``s`` seconds per batch, free from ``free`` on, ends the first
    and the last of ``k`` batches that reach it from ``first`` to ``last`` (evenly or, from an earlier stage,
    convexly spaced): batch j ends at max(free + j s, max over i <= j of arrival_i + (j - i + 1) s), whose
    maximum over a convex arrival sequence lies at its ends."""
    if s <= 0.0:
        return max(free, first), max(free, last)
    a = max(free, first) + s
    return a, max(free + k * s, first + k * s, last + s)


def accepted_per_step(k: int, a: float) -> float:
    """Expected tokens a speculative step yields: 1 + a + a^2 + ... + a^k."""
    if k <= 0:
        return 1.0
    return (1.0 - a ** (k + 1)) / (1.0 - a) if a < 1.0 else float(k + 1)


Schedules = dict[tuple[Any, ...], "_Schedule"]


@dataclass(frozen=True)
class _Schedule:
    """What a closed-loop run did, step by step, without the step times: a closed loop's schedule does not
    depend on them, so a plan with other costs but the same batching replays it instead of simulating."""

    steps: tuple[tuple[int, float, int, float, int, int, int, int], ...]  # step_work inputs, k, n_pf, n_wait
    # (n, arrive, first token, finish step, inflight, output length)
    done: tuple[tuple[int, _At, int | None, int, float, int], ...]
    finished: int
    running_max: int


def simulate(f: ServingFacts, c: Coefficients, *, isl: int, osl: int, concurrency: int | None, rate: float | None,
             requests: int, prefix_hit: float = 0.0, acceptance: float = 0.0, seed: int = 0,
             trace: bool = False, schedules: Schedules | None = None, range_ratio: float = 0.0) -> SimResult:
    """Run ``requests`` requests of one replica through the scheduler; see the module docstring.

    ``range_ratio``: each request's lengths drawn from around ``isl`` and ``osl`` (:func:`request_lengths`).

    ``trace`` also sums each request's step features (:func:`launchcard.predict._cost.features`)
    over its TTFT and its decode: a closed loop's schedule does not depend on the step times,
    so the calibration can refit the coefficients on those sums without simulating again.

    ``concurrency`` and ``rate`` together: Poisson arrivals with at most ``concurrency`` requests in flight
    (the module docstring); TTFT and E2E count from when a held request is sent.

    ``schedules`` (a plan search's memo) holds closed-loop schedules by what decides them (the workload and the
    batching limits): a plan whose KV cache can hold every client's whole request never waits for KV room, so
    any such plan with the same limits runs the same schedule, and only its step times are computed again.

    This is the plan search's inner loop (hundreds of calls a second), so a step walks the running cohorts
    twice: once for what it needs of them (decoding ones, their context, KV held, pending prefills), once to
    advance, retire and fold them; every sum adds in the order a plain ``sum`` over the list would, so the
    figures are those of the straightforward version kept in tests/sim_reference.py, to the last bit.
    """
    tps = accepted_per_step(f.spec_tokens, acceptance)
    cached = int(isl * prefix_hit)
    need = isl - cached
    budget_max = max(1, f.max_num_batched_tokens)
    seats_max = max(1, f.max_num_seqs)
    cap = max(1, f.kv_capacity_tokens)
    mixed = f.mixed_batches
    # without chunked prefill (TensorRT-LLM's default) a prompt that fits the budget starts only whole; one that
    # never could is still chunked (the engine would refuse it; the simulation does not hang on it)
    whole_up_to = 0 if f.chunked_prefill else budget_max
    by_chunk = f.admit_by_chunk
    per_seq = 1 + f.spec_tokens
    clock = _Clock(f, c, tps)
    isl_top, osl_top = length_range(isl, range_ratio)[1], length_range(osl, range_ratio)[1]
    res = clock.res
    key: tuple[Any, ...] = ()
    recording: list[tuple[int, float, int, float, int, int, int, int]] | None = None
    done_at: list[tuple[int, _At, int | None, int, float, int]] = []
    # KV room for every client's whole request (and a step's tokens beyond it): no admission, preemption or
    # decode run is ever decided by the KV cache, so the schedule is the same for any such capacity
    # a closed loop's next request reaches the engine ``gap`` after the last one ended (its front end); the schedule
    # then depends on the step times, so it is simulated, never recorded or replayed
    closed = concurrency is not None and rate is None
    capped = concurrency is not None and rate is not None
    limit = concurrency or 0  # capped: the most requests in flight
    gap = c.request_ms * 1e-3 if c.front_in_schedule and closed else 0.0
    reenter: deque[tuple[float, _Cohort]] = deque()  # (engine arrival, cohort) of requests in the front end
    if (schedules is not None and concurrency is not None and rate is None and not trace and not gap
            and cap > concurrency * (isl_top + osl_top + tps) + 1):
        key = (isl, osl, concurrency, requests, cached, tps, per_seq, budget_max, seats_max, mixed, range_ratio,
               prefix_hit, f.recv_interval, f.recv_lag, whole_up_to)
        known = schedules.get(key)
        if known is not None:
            return clock.replay(known)
        recording = []
    arrivals: list[float] = []
    if rate is not None:
        arrivals = arrival_times(requests, rate, seed)[::-1]  # pop() from the end = the earliest
    waiting: list[_Cohort] = []
    running: list[_Cohort] = []
    n_wait = 0  # requests waiting (sum of their cohorts' n)
    issued = 0
    late: list[_Cohort] = []
    # SGLang's receive (closed loop): requests back from a client wait in ``held`` for the first receive at or after
    # the forward pass ``held_at`` gives (``recv_lag`` passes after the one that ended their client's last request)
    recv_n = f.recv_interval if closed and f.recv_interval > 1 else 1
    lag = f.recv_lag if closed else 0
    hold = closed and (recv_n > 1 or lag > 0)
    held: list[_Cohort] = []
    held_at: list[int] = []
    recv_count = 0  # decode passes counted since the last receive
    recv_due = False  # the last step ended at a receive
    # capped arrivals: the last loop turn's time and the requests in flight from it on (none leaves mid-step, so
    # an arrival after it found room at its own time only if these were fewer than ``concurrency``)
    top_prev, busy_prev = 0.0, 0
    if concurrency is not None and rate is None:
        first_n = min(concurrency, requests)
        # a client's opening burst reaches an idle engine one request at a time: the engine loop, free, starts
        # a step with the first that arrives, the rest join at the next step (vLLM's iteration log on the CPU
        # server: "1 context requests, 128 context tokens", then "3 context requests, 384 context tokens")
        for n, nd_, ca, ol in new_requests(1, 0, isl, osl, range_ratio, prefix_hit):
            waiting.append(_Cohort(n, 0.0, nd_, ca, ol, 0.0))
        if first_n > 1:
            late = [_Cohort(n, 0.0, nd_, ca, ol, first_n / 2.0)
                    for n, nd_, ca, ol in new_requests(first_n - 1, 1, isl, osl, range_ratio, prefix_hit)]
        issued = n_wait = first_n
    nf = 9
    finished = 0
    guard = 0
    step_no = -1
    while finished < requests:
        guard += 1
        if guard > 4_000_000:  # cannot happen with positive step times; never loop forever
            break
        t = clock.t
        while reenter and reenter[0][0] <= t:
            co = reenter.popleft()[1]
            waiting.append(co)
            n_wait += co.n
        if held and (recv_due or recv_n == 1 or not running):
            fwd = res.steps
            for i, co in enumerate(held):
                if held_at[i] <= fwd or not running:  # idle: the scheduler polls until one arrives
                    waiting.append(co)
                    n_wait += co.n
                    held_at[i] = -1
            held = [co for i, co in enumerate(held) if held_at[i] >= 0]
            held_at = [a for a in held_at if a >= 0]
        if capped:
            ahead = _count(running) + n_wait
            while arrivals and arrivals[-1] <= t and ahead < limit:
                a = arrivals.pop()
                if a <= top_prev or busy_prev >= limit:
                    a = t  # held in the client until a request ended (at this step's end)
                else:
                    busy_prev += 1
                waiting.append(_arrival(a, ahead, issued, isl, osl, range_ratio, prefix_hit, need, cached))
                issued += 1
                ahead += 1
                n_wait += 1
            top_prev, busy_prev = t, ahead
        elif arrivals and arrivals[-1] <= t:
            ahead = _count(running) + n_wait
            while arrivals and arrivals[-1] <= t:
                waiting.append(_arrival(arrivals.pop(), ahead, issued, isl, osl, range_ratio, prefix_hit, need,
                                        cached))
                issued += 1
                ahead += 1
                n_wait += 1
        if not running and not waiting:
            if reenter:
                clock.t = reenter[0][0]
                continue
            if not arrivals:
                break
            clock.t = arrivals[-1]
            continue
        pf_sched: list[_Cohort] = []  # cohorts given a prefill chunk (``chunk`` tokens per request) this step
        decode_now = False
        if mixed:  # decode tokens first, prefill chunks in what is left of the budget
            sc, out = _make_room(_Scan(running, by_chunk), running, waiting, cap, tps, by_chunk)
            decode_now = sc.n_dec > 0
            pf_sched, admitted, out2 = _prefill(sc, running, waiting, budget_max - sc.n_dec * per_seq, seats_max,
                                                cap, whole_up_to, by_chunk, sc.n_dec * tps, out)
            if out2:  # running prefills preempted for another's chunk (never a decoding request)
                sc = _Scan(running, by_chunk)
                out += out2
            res.preemptions += out
            n_wait += out
        else:  # a prefill batch on its own when one can be formed, else a decode batch
            sc = _Scan(running, by_chunk)
            pf_sched, admitted, out = _prefill(sc, running, waiting, budget_max, seats_max, cap, whole_up_to,
                                               by_chunk)
            if not pf_sched:
                sc, out_d = _make_room(sc, running, waiting, cap, tps, by_chunk)
                out += out_d
                decode_now = sc.n_dec > 0
            res.preemptions += out
            n_wait += out
        n_wait -= admitted
        if sc.n_run + admitted > res.running_max:
            res.running_max = sc.n_run + admitted
        if not decode_now and not pf_sched:
            if (arrivals and arrivals[-1] > t) or reenter:  # idle until the next arrival (a held one is not next)
                clock.t = max(t, arrivals[-1] if arrivals else reenter[0][0])
                continue
            break  # a request that can never be scheduled (KV smaller than one prompt)
        nd = sc.n_dec if decode_now else 0
        dec_ctx = sc.dec_ctx if decode_now else 0.0
        pf_tok = n_pf = pf_read = 0
        pf_pairs = 0.0
        for r in pf_sched:
            rn, ch, before = r.n, r.chunk, r.cached + r.done
            pf_tok += rn * ch
            pf_pairs += rn * ch * (before + ch / 2.0)
            pf_read += rn * before
            n_pf += rn
        # decode-only steps until the next event are timed together
        k = 1
        if not pf_sched and decode_now:
            k_fin = math.ceil(sc.left_min / tps)  # the cohort nearest its end ends first
            k_kv = int((cap - sc.used) // max(1e-9, nd * tps)) if nd else k_fin
            k = max(1, min(k_fin, k_kv))
            if held:  # the run ends at the first receive a held request is there for
                k = min(k, _next_receive(min(held_at) - res.steps, recv_n, recv_count))
            if (arrivals and arrivals[-1] > t) or reenter:  # the next arrival (held ones wait for an end)
                dt0 = sum(step_terms(step_work(f, nd, dec_ctx, 0, 0.0), c, graphed(f, nd * per_seq, 0)))
                nxt = arrivals[-1] if arrivals else reenter[0][0]
                k = max(1, min(k, math.ceil((nxt - t) / max(dt0, 1e-12))))
        mid_ctx = dec_ctx + nd * tps * (k - 1) / 2.0
        w = clock.step(nd, mid_ctx, pf_tok, pf_pairs, pf_read, k, n_pf, n_wait)
        t = clock.t
        step_no += 1
        if recv_n > 1:
            if pf_tok:  # a prefill batch weighs more than R: a receive at once
                recv_count, recv_due = 0, True
            else:  # every R-th decode pass ends at a receive; one crossed inside the run was before its end
                recv_count = (recv_count + k) % recv_n
                recv_due = recv_count == 0
        if recording is not None:
            recording.append((nd, mid_ctx, pf_tok, pf_pairs, pf_read, k, n_pf, n_wait))
        if late:  # the rest of the opening burst is in the server from here on (n_wait counts it)
            waiting.extend(late)
            late = []
        if trace:
            fvec = [x * k for x in features(w, c, clock.step_graphs)]
            for r in (*running, *waiting, *held):
                if r.fv is None:
                    r.fv = [0.0] * nf
                for i in range(nf):
                    r.fv[i] += fvec[i]
        # advance, retire and fold the running cohorts in one walk
        pf_done: list[_Cohort] = []
        dec_done: list[_Cohort] = []
        step_gen = tps * k
        kept: list[_Cohort] = []
        last: _Cohort | None = None
        n_left = 0  # requests still running after the step
        for r in running:
            ch = r.chunk
            if ch >= 0:
                r.chunk = -1
                r.done += ch
                if r.done >= r.need and r.first is None:
                    r.first, r.first_at = clock.seen, step_no
                    r.fv_first = list(r.fv) if r.fv is not None else None
                    r.gen += 1.0
                if r.gen >= r.osl:
                    pf_done.append(r)
                    continue
            elif decode_now and r.done >= r.need:
                g = r.gen + step_gen
                ro = r.osl
                r.gen = g if g < ro else float(ro)
                if r.gen >= ro:
                    dec_done.append(r)
                    continue
            n_left += r.n
            # cohorts admitted in one step (same state) are one cohort from here on
            if (last is not None and last.done == r.done and last.gen == r.gen and last.need == r.need
                    and last.cached == r.cached and last.first == r.first and last.redo == r.redo
                    and last.osl == r.osl):
                _fold(last, r)
            else:
                kept.append(r)
                last = r
        running = kept
        if pf_done or dec_done:
            for r in (*pf_done, *dec_done):
                ro = r.osl
                clock.retire(r.n, r.arrive, r.first, r.inflight, ro)
                if recording is not None:
                    done_at.append((r.n, r.arrive_at, r.first_at, step_no, r.inflight, ro))
                if trace and r.fv is not None:
                    f0 = r.fv_first or r.fv
                    res.ttft_fv.append(([*f0, 1e-3, r.inflight * 1e-6], r.n))
                    if ro > 1:
                        res.tpot_fv.append(([*((a - b) / (ro - 1) for a, b in zip(r.fv, f0, strict=True)), 0.0,
                                             0.0], r.n))
                finished += r.n
                if closed and issued < requests:
                    m = min(r.n, requests - issued)
                    ahead = n_left + n_wait
                    for n, nd_, ca, ol in new_requests(m, issued, isl, osl, range_ratio, prefix_hit):
                        if gap:  # in the front end until t + gap (TTFT adds the front end's time to the engine's)
                            reenter.append((t + gap, _Cohort(n, clock.seen + gap, nd_, ca, ol, ahead)))
                            continue
                        co = _Cohort(n, clock.seen, nd_, ca, ol, ahead)  # sent when its client saw one end
                        co.arrive_at = step_no
                        if hold:
                            held.append(co)
                            held_at.append(res.steps + lag)
                            continue
                        waiting.append(co)
                        n_wait += n
                    issued += m
    if recording is not None and not res.preemptions:
        schedules[key] = _Schedule(tuple(recording), tuple(done_at), finished, res.running_max)  # type: ignore[index]
    return clock.close(finished)


class _Clock:
    """Times the steps of a run and keeps its sums: what a simulation and a replayed schedule share."""

    def __init__(self, f: ServingFacts, c: Coefficients, tps: float) -> None:
        self.f, self.c, self.graphs = f, c, f.cuda_graphs
        self.per_seq = 1 + f.spec_tokens
        self.step_graphs = self.graphs  # whether the last step timed replayed a CUDA graph
        # graphed()'s limits, read once (a step's test is two comparisons)
        top = f.graph_tokens
        self.g_top = math.inf if top is None else top
        self.g_mixed = (GRAPH_TOKENS if top is None else top) if f.engine == "vllm" else -1
        # SimResult.graph_span: the largest step within the limit and the smallest beyond it whose replay the limit
        # decides (decode-only steps; vLLM's mixed steps too); no limit (None) is not a number of tokens: no span
        self.g_lo: float = 0.0 if top is not None or not self.graphs else math.inf
        self.g_hi = math.inf
        self.g_decode = self.graphs and top is not None
        # captured sizes without padding (TensorRT-LLM's default): no limit alone decides a step, so no span either
        self.g_sizes = f.graph_sizes
        if self.g_sizes is not None:
            self.g_decode, self.g_lo = False, math.inf
        self.g_mixed_too = self.g_decode and f.engine == "vllm"
        self.work = work_fn(f)  # step_work of f
        self.t = 0.0
        self.res = SimResult([], [], [], 0.0, 0, 0.0, dict.fromkeys(TERMS, 0.0), dict.fromkeys(TERMS, 0.0), 0.0,
                             0.0, 0.0, 0, 0, tps, [], [], [])
        # per-phase term sums (memory, compute, communication, overhead, streaming), request-seconds; prefill
        # queueing
        self.p = [0.0, 0.0, 0.0, 0.0, 0.0]
        self.d = [0.0, 0.0, 0.0, 0.0, 0.0]
        # the API server's and the client's clocks: when each has handled the outputs of the last step timed
        # (``seen``: when the client has them)
        st = c.stages
        self.stages = bool(st.api_us or st.client_us)
        # stage_seconds' terms, read once (a step of every run computes it)
        self.st_api, self.st_client, self.st_lo = st.api_us, st.client_us, st.lo
        self.st_span = st.hi - st.lo if st.hi > st.lo else 0
        self.st_g_api, self.st_g_client = st.api_growth, st.client_growth
        self.api = self.seen = 0.0
        self.queue = 0.0
        self.front_s, self.inflight_s = c.request_ms * 1e-3, c.inflight_us * 1e-6

    def step(self, nd: int, mid_ctx: float, pf_tok: int, pf_pairs: float, pf_read: int, k: int, n_pf: int,
             n_wait: int) -> StepWork:
        """Time ``k`` steps alike (``nd`` decode sequences, ``pf_tok`` prefill tokens of ``n_pf`` requests)."""
        res = self.res
        w = self.work(nd, mid_ctx, pf_tok, pf_pairs, pf_read)
        tok = nd * self.per_seq + pf_tok
        g = self.step_graphs = self.graphs and tok <= self.g_top and (not pf_tok or tok <= self.g_mixed) and (
            self.g_sizes is None or tok in self.g_sizes)
        if self.g_decode and (not pf_tok or self.g_mixed_too):
            if tok <= self.g_top:
                if tok > self.g_lo:
                    self.g_lo = tok
            elif tok < self.g_hi:
                self.g_hi = tok
        mem, comp, comm, ovh = step_terms(w, self.c, g)
        dt = mem + comp + comm + ovh
        span = dt * k
        t0 = self.t
        self.t += span
        lag = 0.0  # how much further the client's view falls behind the engine's clock over these steps
        bound = 0.0  # a stage's time per step, where it is longer than the engine's step
        if self.stages:
            # stage_seconds(c, outs), written out: every request with an output in the step
            outs = nd + n_pf
            u_api, u_client = self.st_api, self.st_client
            if self.st_span and outs > self.st_lo:
                x = min(1.0, (outs - self.st_lo) / self.st_span)
                u_api, u_client = u_api * (1.0 + self.st_g_api * x), u_client * (1.0 + self.st_g_client * x)
            s_api, s_client = outs * u_api * 1e-6, outs * u_client * 1e-6
            # stage_end twice, written out (once per step of every run): each max() as comparisons that keep the
            # value max() keeps (the first of equals)
            api, seen, first, t1 = self.api, self.seen, t0 + dt, self.t
            if s_api > 0.0:
                a0 = (first if first > api else api) + s_api
                a1, x = api + k * s_api, first + k * s_api
                if x > a1:
                    a1 = x
                x = t1 + s_api
                if x > a1:
                    a1 = x
            else:
                a0 = first if first > api else api
                a1 = t1 if t1 > api else api
            self.api = a1
            if s_client > 0.0:
                c1, x = seen + k * s_client, a0 + k * s_client
                if x > c1:
                    c1 = x
                x = a1 + s_client
                if x > c1:
                    c1 = x
            else:
                c1 = a1 if a1 > seen else seen
            lag = (c1 - t1) - (seen - t0)
            if not lag > 0.0:
                lag = 0.0
            self.seen = c1
            bound = s_client if s_client > s_api else s_api
            if bound <= dt:
                bound = 0.0
        else:
            self.seen = self.api = self.t
        res.steps += k
        res.busy += span
        if len(res.samples) < 2 and ((pf_tok and not res.samples) or (not pf_tok and nd and k > 1)):
            res.samples.append({"decode_seqs": nd, "prefill_tokens": pf_tok, "context_tokens": mid_ctx,
                                "ms": dt * 1e3, "memory_ms": mem * 1e3, "compute_ms": comp * 1e3,
                                "communication_ms": comm * 1e3, "overhead_ms": ovh * 1e3})
        p, d = self.p, self.d
        if bound:  # the slowest stage sets the pace the client sees: the engine's work is hidden behind it
            sk = bound * k
            p[4] += sk * n_pf
            d[4] += sk * nd
        else:
            mk, ck, ek, ok = mem * k, comp * k, comm * k, ovh * k  # unrolled: once per step of every run
            p[0] += mk * n_pf
            p[1] += ck * n_pf
            p[2] += ek * n_pf
            p[3] += ok * n_pf
            d[0] += mk * nd
            d[1] += ck * nd
            d[2] += ek * nd
            d[3] += ok * nd
            if lag:  # the stages' latency on top of the engine's step
                p[4] += lag * n_pf
                d[4] += lag * nd
        self.queue += span * n_wait
        if nd:
            res.batch_steps += nd * k
            res.decode_steps += k
        return w

    def retire(self, n: int, arrive: float, first: float | None, inflight: float, osl: int) -> None:
        """``n`` requests of ``osl`` output tokens end now (as the client sees it)."""
        res, t = self.res, self.seen
        if first is None:
            first = t
        front = self.front_s + self.inflight_s * inflight
        res.ttft.append((first - arrive + front, n))
        res.e2e.append((t - arrive + front, n))
        if osl > 1:
            res.tpot.append(((t - first) / (osl - 1), n))
        res.output_tokens += n * osl

    def close(self, finished: int) -> SimResult:
        res = self.res
        for i, name in enumerate(TERMS[:5]):
            res.prefill[name], res.decode[name] = self.p[i], self.d[i]
        res.prefill["queueing"] = self.queue
        res.makespan = self.seen
        res.requests = finished
        res.graph_span = (self.g_lo, self.g_hi)
        return res

    def replay(self, s: _Schedule) -> SimResult:
        """The run of a recorded schedule with this clock's step costs."""
        ends = []  # when the client sees each step's outputs
        for nd, mid_ctx, pf_tok, pf_pairs, pf_read, k, n_pf, n_wait in s.steps:
            self.step(nd, mid_ctx, pf_tok, pf_pairs, pf_read, k, n_pf, n_wait)
            ends.append(self.seen)
        seen = self.seen
        for n, arrive, first, end, inflight, osl in s.done:
            self.seen = ends[end]
            self.retire(n, _time_at(arrive, ends), None if first is None else ends[first], inflight, osl)
        self.seen = seen
        self.res.running_max = s.running_max
        return self.close(s.finished)


def _time_at(at: _At, ends: list[float]) -> float:
    """The time a recorded ``arrive`` stands for, computed as the run computed it (fold by fold). Folds nest on
    their left (a cohort absorbing one after another, up to one per request), so that side is walked, not
    recursed."""
    spine: list[tuple[int, _At, int]] = []
    while not isinstance(at, int):
        a, n_a, b, n_b = at
        spine.append((n_a, b, n_b))
        at = a
    v = ends[at] if at >= 0 else 0.0
    for n_a, b, n_b in reversed(spine):
        v = (v * n_a + _time_at(b, ends) * n_b) / (n_a + n_b)
    return v


def _arrival(at: float, ahead: int, j: int, isl: int, osl: int, ratio: float, prefix_hit: float, need: int,
             cached: int) -> _Cohort:
    """Request ``j`` arriving at ``at`` (Poisson), ``ahead`` in the server before it."""
    if ratio <= 0.0:
        return _Cohort(1, at, need, cached, osl, ahead)
    i_len, o_len = request_lengths(isl, osl, ratio, j)
    return _Cohort(1, at, i_len - int(i_len * prefix_hit), int(i_len * prefix_hit), o_len, ahead)


def _next_receive(wait: int, recv_n: int, count: int) -> int:
    """Decode passes from here to the first receive that finds a held request there: at least ``wait`` passes
    (at least one), at a receive (every pass with R 1; else when the count, ``count`` now, reaches a multiple of R)."""
    m = max(1, wait)
    if recv_n == 1:
        return m
    first = recv_n - count
    return first if m <= first else first + -(-(m - first) // recv_n) * recv_n


def _count(cohorts: list[_Cohort]) -> int:
    return sum(r.n for r in cohorts)


def _fold(last: _Cohort, r: _Cohort) -> None:
    """Fold ``r`` into ``last`` (same state)."""
    tot = last.n + r.n
    last.arrive = (last.arrive * last.n + r.arrive * r.n) / tot
    last.arrive_at = (last.arrive_at, last.n, r.arrive_at, r.n)
    last.inflight = (last.inflight * last.n + r.inflight * r.n) / tot
    for a, b in ((last.fv, r.fv), (last.fv_first, r.fv_first)):
        if a is not None and b is not None:
            for i in range(len(a)):
                a[i] = (a[i] * last.n + b[i] * r.n) / tot
    last.n = tot
