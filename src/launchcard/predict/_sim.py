"""A step-level simulation of the engine's scheduler over one replica.

Continuous batching as vLLM V1 does it: every step first gives each running decode
sequence its token(s), then spends what is left of ``max_num_batched_tokens`` on
prefill chunks, of running requests first, then of waiting ones (first come, first
served) while a sequence slot (``max_num_seqs``) and KV blocks for the prompt are free;
a request whose next token finds no free KV block preempts the newest running request
(recomputed later, as vLLM's default).  SGLang's default runs a prefill batch alone, admits by its own estimate of
the KV the running requests will still need and retracts requests to the end of the queue when a decode batch
finds no KV (:mod:`launchcard.predict._sglang_sched`).
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

Request lengths are exact by default.  With a ``range_ratio`` r each request draws its own
prompt and output length from the range the client draws them from uniformly (``vllm bench
serve --random-range-ratio``: ``[floor(L(1 - r)), ceil(L(1 + r))]``), at the request's point of
a low-discrepancy sequence (:func:`launchcard.predict._arrivals.request_lengths`): clients then finish at
different times
and drift out of step, so new prompts are prefilled beside other clients' decodes, as a real
closed loop does, and the few requests with very short outputs, whose time between tokens is
mostly the prefills they meet, are in the run as they are in the client's draw.

Each step is timed by the run's clock (:mod:`launchcard.predict._clock`): its cost, whether it replays a
CUDA graph, and when the client sees its outputs after the API server's and the client's streaming stages.

A closed loop's next requests reach the scheduler's queue at its next receive: every step,
or with SGLang's ``--scheduler-recv-interval`` R (``ServingFacts.recv_interval``) after a
prefill batch, when idle, and otherwise at every R-th decode pass since the last receive
(``python/sglang/srt/managers/scheduler_recv_skipper.py``: a decode pass weighs 1, a prefill
batch 1000, a receive when the count reaches R, then the count restarts at 0).  SGLang polls
before it learns that a request ended, so the client's next request misses the receives of
the next ``ServingFacts.recv_lag`` passes (:func:`launchcard.predict._sglang_rules.recv_lag`).

SGLang's DP-attention ranks (``ServingFacts.lockstep`` g > 1) are g schedulers of their own stepping together
(:func:`launchcard.predict._sglang_dp.simulate_ranks`).
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

from launchcard.predict._arrivals import arrival, arrival_times, length_range, new_requests, next_receive
from launchcard.predict._clock import Schedules, _Clock, _Schedule, graphed
from launchcard.predict._coef import Coefficients, theta
from launchcard.predict._cost import features, step_terms, step_work
from launchcard.predict._facts import ServingFacts
from launchcard.predict._front import _Front, fold
from launchcard.predict._prefix import cached_prefix
from launchcard.predict._sched import _At, _Cohort, _make_room, _prefill, _Scan, reserved
from launchcard.predict._sglang_dp import simulate_ranks
from launchcard.predict._sglang_sched import sglang_prefill, sglang_retract
from launchcard.predict._types import SimResult


def accepted_per_step(k: int, a: float) -> float:
    """Expected tokens a speculative step yields: 1 + a + a^2 + ... + a^k."""
    if k <= 0:
        return 1.0
    return (1.0 - a ** (k + 1)) / (1.0 - a) if a < 1.0 else float(k + 1)


def simulate(f: ServingFacts, c: Coefficients, *, isl: int, osl: int, concurrency: int | None, rate: float | None,
             requests: int, prefix_hit: float = 0.0, acceptance: float = 0.0, seed: int = 0,
             trace: bool = False, schedules: Schedules | None = None, range_ratio: float = 0.0,
             lengths: tuple[tuple[int, int], ...] = ()) -> SimResult:
    """Run ``requests`` requests of one replica through the scheduler; see the module docstring.

    ``range_ratio``: each request's lengths drawn from around ``isl`` and ``osl`` (``_arrivals.request_lengths``);
    ``lengths``: each request's (prompt, output) as a dataset gives them (``isl``/``osl`` are then their means).

    ``trace`` also sums each request's step features (:func:`launchcard.predict._cost.features`)
    over its TTFT and its decode: a closed loop's schedule does not depend on the step times,
    so the calibration can refit the coefficients on those sums without simulating again.

    ``concurrency`` and ``rate`` together: Poisson arrivals with at most ``concurrency`` requests in flight
    (the module docstring); TTFT and E2E count from when a held request is sent.

    ``schedules`` (a plan search's memo) holds closed-loop schedules by what decides them (the workload and the
    batching limits): a plan whose KV cache can hold every client's whole request never waits for KV room, so
    any such plan with the same limits runs the same schedule, and only its step times are computed again.

    This is the plan search's inner loop (hundreds of calls a second), so a step walks the running cohorts
    once, to advance, retire and fold them, and that walk also sums what the next step needs of them (decoding
    ones, their context, KV held, pending prefills, SGLang's expected need); a step without decode or preemption
    starts its walk at the first cohort it changed, with the sums the last walk had there.  vLLM's mixed steps
    (every step decodes beside a prefill chunk at high concurrency) keep the leading decoding cohorts at one shared
    output counter (:mod:`launchcard.predict._front`) and walk only the cohorts after them.  Every sum adds in the
    order a plain ``sum`` over the list would (the front's are whole numbers, exact in any order), so the figures
    are those of the straightforward version kept in tests/sim_reference.py, to the last bit.
    """
    tps = accepted_per_step(f.spec_tokens, acceptance)
    if f.lockstep > 1 and f.sglang_budget is not None and not f.mixed_batches:
        return simulate_ranks(f, c, f.sglang_budget, isl=isl, osl=osl, concurrency=concurrency, rate=rate,
                              requests=requests, prefix_hit=prefix_hit, tps=tps, seed=seed, trace=trace,
                              range_ratio=range_ratio, lengths=lengths, schedules=schedules)
    cached = cached_prefix(isl, prefix_hit, f.prefix_block)
    need = isl - cached
    budget_max = max(1, f.max_num_batched_tokens)
    seats_max = max(1, f.max_num_seqs)
    cap = max(1, f.kv_capacity_tokens)
    mixed = f.mixed_batches
    # without chunked prefill (TensorRT-LLM's default) a prompt that fits the budget starts only whole; one that
    # never could is still chunked (the engine would refuse it; the simulation does not hang on it)
    whole_up_to = 0 if f.chunked_prefill else budget_max
    by_chunk = f.admit_by_chunk
    # TensorRT-LLM's GUARANTEED_NO_EVICT: KV held to the end, in blocks of this many tokens (0: not reserved)
    to_end = max(1, f.reserve_block) if f.reserve_to_end else 0
    per_seq = 1 + f.spec_tokens
    # SGLang's admission estimate (``_sglang_sched``): the new-token ratio now, and whether a refused admission
    # still stands (none is tried until a request leaves the running batch)
    rule = None if mixed else f.sglang_budget
    ratio = rule.init if rule is not None else 0.0
    full = False
    clock = _Clock(f, c, tps)
    if lengths:
        isl_top, osl_top = max(p for p, _ in lengths), max(o for _, o in lengths)
    else:
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
    span = reserved(isl_top + osl_top, to_end) if to_end else isl_top + osl_top  # the most KV one request holds
    if (schedules is not None and concurrency is not None and rate is None and not trace and not gap
            and cap > concurrency * (span + tps) + 1):
        # a batch limit at or above the clients never binds (a closed loop never holds more requests than clients,
        # waiting and running together: the seats _prefill / sglang_prefill count never fall below the waiting
        # requests), so every such limit runs, and shares, one schedule; and another limit shares it too where it
        # cannot bind either (_Schedule.serves)
        seats = min(seats_max, concurrency)
        key = (isl, osl, concurrency, requests, cached, tps, per_seq, budget_max, mixed, range_ratio, prefix_hit,
               f.prefix_block, f.recv_interval, f.recv_lag, whole_up_to, lengths, rule is None)
        for known in schedules.get(key, ()):
            if known.serves(seats):
                res = clock.replay(known)
                if known.kv_need <= cap:  # as the run that recorded it would have found at this pool
                    res.kv_free_from = known.kv_need
                return res
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
        for n, nd_, ca, ol in new_requests(1, 0, isl, osl, range_ratio, prefix_hit, lengths, f.prefix_block):
            waiting.append(_Cohort(n, 0.0, nd_, ca, ol, 0.0))
        if first_n > 1:
            late = [_Cohort(n, 0.0, nd_, ca, ol, first_n / 2.0)
                    for n, nd_, ca, ol in new_requests(first_n - 1, 1, isl, osl, range_ratio, prefix_hit, lengths,
                                                      f.prefix_block)]
        issued = n_wait = first_n
    nf = len(theta(c))  # the step features (_cost.features), one per fitted term
    finished = 0
    guard = 0
    step_no = -1
    # the running cohorts' scan as the last step's walk left them (None: walk them again); only the step that
    # follows that walk, running unchanged in between, takes it
    pre: _Scan | None = None
    # the last walk's kept cohorts' scan sums before each of them (used, context, fewest left, decoding requests,
    # SGLang's need, decoding and prefilling cohorts, requests), at ``marks_ratio``, and its decoding and
    # prefilling lists: a step with no decode and no preemption changes no cohort before its first prefill, so the
    # next walk starts there with the sums as they were (the same terms in the same order)
    marks: list[tuple[float, float, float, int, float, int, int, int]] = []
    marks_ratio = ratio
    prev_dec: list[_Cohort] = []
    prev_pend: list[_Cohort] = []
    clip = rule.clip if rule is not None else 0
    # the KV capacity every KV check so far needs to fall as with unlimited KV (SimResult.kv_free_from)
    kv = [0.0]
    # vLLM's mixed steps: the leading decoding cohorts advance at one shared counter (``_front``), exact while a
    # step yields whole tokens; a traced run sums features per cohort, so it walks them all
    front = _Front(by_chunk, to_end) if mixed and not trace and float(tps).is_integer() else None
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
                waiting.append(arrival(a, ahead, issued, isl, osl, range_ratio, prefix_hit, need, cached, lengths,
                                        f.prefix_block))
                issued += 1
                ahead += 1
                n_wait += 1
            top_prev, busy_prev = t, ahead
        elif arrivals and arrivals[-1] <= t:
            ahead = _count(running) + n_wait
            while arrivals and arrivals[-1] <= t:
                waiting.append(arrival(arrivals.pop(), ahead, issued, isl, osl, range_ratio, prefix_hit, need,
                                        cached, lengths, f.prefix_block))
                issued += 1
                ahead += 1
                n_wait += 1
        if not running and not waiting:
            if rule is not None:  # an idle SGLang scheduler starts its estimate again
                ratio = rule.init
            if reenter:
                clock.t = reenter[0][0]
                continue
            if not arrivals:
                break
            clock.t = arrivals[-1]
            continue
        pf_sched: list[_Cohort] = []  # cohorts given a prefill chunk (``chunk`` tokens per request) this step
        decode_now = False
        retracted = False  # SGLang: this decode batch found no KV room (its ratio set anew, not decayed)
        if mixed:  # decode tokens first, prefill chunks in what is left of the budget
            if front is not None and front.n and (pre is None or (not to_end and pre.used + pre.n_dec * tps > cap)):
                front.flush(running)  # a preemption edits and rescans the running cohorts
            sc, out = _make_room(pre or _Scan(running, by_chunk, to_end), running, waiting, cap, tps, by_chunk,
                                 to_end, kv)
            pre = None
            decode_now = sc.n_dec > 0
            pf_sched, admitted, out2 = _prefill(sc, running, waiting, budget_max - sc.n_dec * per_seq, seats_max,
                                                cap, whole_up_to, by_chunk, sc.n_dec * tps, out, to_end, kv)
            if out2:  # running prefills preempted for another's chunk (never a decoding request)
                if front is not None:
                    front.flush(running)
                sc = _Scan(running, by_chunk, to_end)
                out += out2
            res.preemptions += out
            n_wait += out
        else:  # a prefill batch on its own when one can be formed, else a decode batch
            sc = pre or _Scan(running, by_chunk, to_end)
            pre = None
            if rule is None:
                pf_sched, admitted, out = _prefill(sc, running, waiting, budget_max, seats_max, cap, whole_up_to,
                                                   by_chunk, to_end=to_end, kv=kv)
            else:
                pf_sched, admitted, full = sglang_prefill(sc, running, waiting, budget_max, seats_max, cap, ratio,
                                                          rule.clip, full)
                out = 0
            if not pf_sched:
                if rule is None:
                    sc, out_d = _make_room(sc, running, waiting, cap, tps, by_chunk, to_end, kv)
                else:
                    sc, out_d, new_ratio = sglang_retract(sc, running, waiting, cap, tps, rule, f.spec_tokens > 0)
                    if new_ratio is not None:
                        retracted, ratio = True, new_ratio
                    if out_d:
                        full = False
                out += out_d
                decode_now = sc.n_dec > 0
            res.preemptions += out
            n_wait += out
        n_wait -= admitted
        if out:  # cohorts preempted or retracted: the next walk walks them all
            marks = []
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
            # (``to_end``: every output token's KV is already held, so KV decides no step)
            k_kv = int((cap - sc.used) // max(1e-9, nd * tps)) if nd and not to_end else k_fin
            if nd and not to_end and sc.used + k_fin * nd * tps > kv[0]:  # KV room for the run to its first end
                kv[0] = sc.used + k_fin * nd * tps
            k = max(1, min(k_fin, k_kv))
            if held:  # the run ends at the first receive a held request is there for
                k = min(k, next_receive(min(held_at) - res.steps, recv_n, recv_count))
            if (arrivals and arrivals[-1] > t) or reenter:  # the next arrival (held ones wait for an end)
                dt0 = sum(step_terms(step_work(f, nd, dec_ctx, 0, 0.0), c, graphed(f, nd * per_seq, 0)))
                nxt = arrivals[-1] if arrivals else reenter[0][0]
                k = max(1, min(k, math.ceil((nxt - t) / max(dt0, 1e-12))))
        if rule is not None and decode_now and not pf_sched:  # the ratio falls every decode batch but a retracting one
            fall = k - 1 if retracted else k
            if fall:
                ratio = max(ratio - fall * rule.decay, rule.floor)
        mid_ctx = dec_ctx + nd * tps * (k - 1) / 2.0
        clock.step(nd, mid_ctx, pf_tok, pf_pairs, pf_read, k, n_pf, n_wait)
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
            w = clock.work(nd, mid_ctx, pf_tok, pf_pairs, pf_read)
            fvec = [x * k for x in features(w, c, clock.step_graphs)]
            for r in (*running, *waiting, *held):
                if r.fv is None:
                    r.fv = [0.0] * nf
                for i in range(nf):
                    r.fv[i] += fvec[i]
        # advance, retire and fold the running cohorts in one walk, which also makes the next step's scan of
        # them (_Scan's sums over the cohorts kept, each added once no later one folds into it: the same terms in
        # the same order as _Scan's own walk; SGLang's expected need at the ratio the next step starts with)
        pf_done: list[_Cohort] = []
        dec_done: list[_Cohort] = []
        step_gen = tps * k
        j = len(marks) if not decode_now and (rule is None or marks_ratio == ratio) else 0
        for r in pf_sched:  # the first cohort this step changes (a new one is at the end)
            if j:
                i = running.index(r)
                if i < j:
                    j = i
        if j:  # the cohorts before ``last`` are as the last walk left them, their sums too
            s_used, s_ctx, s_left, s_ndec, s_need, i_dec, i_pend, n_left = marks[j - 1]
            last: _Cohort | None = running[j - 1]
            n_left += running[j - 1].n
            kept = running[:j]
            del marks[j:]
            s_dec, s_pend = prev_dec[:i_dec], prev_pend[:i_pend]
            walk: tuple[_Cohort | None, ...] = (*running[j:], None)
        else:
            kept, last, n_left = [], None, 0  # n_left: requests still running after the step
            s_dec, s_pend, marks = [], [], []
            s_ndec, s_used, s_ctx, s_left, s_need = 0, 0, 0, math.inf, 0.0
            lp = n0 = 0
            if front is not None and front.n:
                if not decode_now:  # cannot be: front cohorts decode
                    front.flush(running)
                else:  # the front gains its tokens at once; the walk starts at its last cohort, given its own
                    dec_done = front.advance(step_gen, running)
                    lp = front.n
                    if lp:
                        last = running[lp - 1]
                        n0 = last.n
                        held_e, ctx_e = front.terms(last)
                        rest = front.reqs - n0
                        s_used = front.used - n0 * held_e + front.shift(rest)
                        s_ctx = front.ctx - n0 * ctx_e + rest * front.lag
                        s_ndec, s_left, n_left = rest, front.left_min(), front.reqs
                        last.gen += front.lag
            walk = (*running[lp:], None) if lp else (*running, None)
        for q in walk:
            if q is not None:
                r = q
                ch = r.chunk
                if ch >= 0:
                    r.end_chunk(ch, clock.seen, step_no)
                    if r.gen >= r.osl:
                        pf_done.append(r)
                        continue
                elif decode_now and r.done >= r.need:
                    g = r.gen + step_gen  # written out (also in _sglang_dp): once per decoding cohort per step
                    ro = r.osl
                    r.gen = g if g < ro else float(ro)
                    if r.gen >= ro:
                        dec_done.append(r)
                        continue
                n_left += r.n
                # cohorts admitted in one step (same state) are one cohort from here on; written out (also in
                # _sglang_dp's walk): as a _Cohort method it cost ~4% of plan-search CPU (8 x h100 case, stop 39)
                if (last is not None and last.done == r.done and last.gen == r.gen and last.need == r.need
                        and last.cached == r.cached and last.first == r.first and last.redo == r.redo
                        and last.osl == r.osl):
                    fold(last, r)
                    continue
            if last is not None:  # no later cohort folds into ``last``: its terms of the scan (_Scan's body)
                rn, gen, redo = last.n, last.gen, last.redo
                s_used += rn * (reserved(last.cached + last.need + last.osl, to_end) if to_end else
                                last.cached + (last.done if by_chunk else last.need) + gen - redo)
                if last.done >= last.need:
                    s_dec.append(last)
                    s_ndec += rn
                    s_ctx += rn * (last.cached + last.done + gen - redo)
                    left = last.osl - gen
                    if left < s_left:
                        s_left = left
                    if rule is not None:  # _sglang_sched.expected_need's term
                        s_need += rn * min(last.osl - gen, clip) * ratio
                else:
                    s_pend.append(last)
            if q is not None:
                if not decode_now:  # kept only after a step without decode: the next is most likely one too
                    marks.append((s_used, s_ctx, s_left, s_ndec, s_need, len(s_dec), len(s_pend), n_left - q.n))
                kept.append(q)
                last = q
        if front is not None:
            lp = front.n
            if lp:  # the front's last cohort back at the counter, with the requests folded into it
                b = running[lp - 1]
                b.gen -= front.lag
                held_e, ctx_e = front.terms(b)
                d = b.n - n0
                if d:
                    front.used += d * held_e
                    front.ctx += d * ctx_e
                    front.reqs += d
                running[lp:] = kept
            else:
                running = kept
            front.absorb(running)
        else:
            running = kept
        prev_dec, prev_pend, marks_ratio = s_dec, s_pend, ratio
        # (with a front, ``s_dec`` lists only the walked decoding cohorts: only SGLang, never mixed, reads it)
        pre = _Scan.made(s_dec, s_pend, s_ndec, n_left, s_used, s_ctx, s_left,
                         s_need if rule is not None else None, ratio)
        if pf_done or dec_done:
            full = False  # a request left the running batch: admissions are tried again
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
                    for n, nd_, ca, ol in new_requests(m, issued, isl, osl, range_ratio, prefix_hit, lengths,
                                                              f.prefix_block):
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
    # one token of margin over every check (their floor divisions); SGLang's admission estimate is not tracked
    free = math.ceil(kv[0]) + 1 if rule is None else math.inf
    if free <= cap:
        res.kv_free_from = free
    if recording is not None and not res.preemptions:
        schedules.setdefault(key, []).append(  # type: ignore[union-attr]
            _Schedule(tuple(recording), tuple(done_at), finished, res.running_max, free,
                      min(seats_max, concurrency or 0), rule is None))
    return clock.close(finished)


def _count(cohorts: list[_Cohort]) -> int:
    return sum(r.n for r in cohorts)
