"""The scheduler simulation as it was before the speed-up (launchcard 43e629b, predict/_sim.py), kept
verbatim as the reference tests/test_predict_sim.py compares the optimised ``launchcard.predict._sim.simulate``
with on a grid of plans and workloads.  If you change what the simulation MEANS (not how fast it runs), change
this copy the same way.
"""

from __future__ import annotations

import math

from launchcard.predict._arrivals import arrival_times, new_requests
from launchcard.predict._clock import graphed, stage_end
from launchcard.predict._coef import Coefficients, stage_seconds
from launchcard.predict._cost import features, step_terms, step_work
from launchcard.predict._facts import ServingFacts
from launchcard.predict._sim import accepted_per_step
from launchcard.predict._types import TERMS, SimResult


class _Cohort:
    __slots__ = ("arrive", "cached", "done", "first", "fv", "fv_first", "gen", "inflight", "n", "need", "osl", "redo")

    def __init__(self, n: int, arrive: float, need: int, cached: int, osl: int, inflight: float = 0.0) -> None:
        self.n, self.arrive, self.need, self.cached, self.osl = n, arrive, need, cached, osl
        self.inflight = inflight  # requests already in the server when these arrived
        self.done = 0  # prefill tokens computed
        self.gen = 0.0  # output tokens produced
        self.redo = 0.0  # output tokens already counted in ``need`` (a preempted request recomputes them)
        self.first: float | None = None
        self.fv: list[float] | None = None  # step features summed since arrival (calibration traces only)
        self.fv_first: list[float] | None = None  # ... up to the first token

    def split(self, m: int) -> _Cohort:
        """Take ``m`` requests out into their own cohort (same state)."""
        c = _Cohort(m, self.arrive, self.need, self.cached, self.osl, self.inflight)
        c.done, c.gen, c.first, c.redo = self.done, self.gen, self.first, self.redo
        c.fv = list(self.fv) if self.fv is not None else None
        c.fv_first = list(self.fv_first) if self.fv_first is not None else None
        self.n -= m
        return c

    @property
    def ctx(self) -> float:
        return self.cached + self.done + self.gen - self.redo


def simulate(f: ServingFacts, c: Coefficients, *, isl: int, osl: int, concurrency: int | None, rate: float | None,
             requests: int, prefix_hit: float = 0.0, acceptance: float = 0.0, seed: int = 0,
             trace: bool = False, range_ratio: float = 0.0, lengths: tuple[tuple[int, int], ...] = ()) -> SimResult:
    """Run ``requests`` requests of one replica through the scheduler; see the module docstring.

    ``trace`` also sums each request's step features (:func:`launchcard.predict._cost.features`)
    over its TTFT and its decode: a closed loop's schedule does not depend on the step times,
    so the calibration can refit the coefficients on those sums without simulating again.
    """
    tps = accepted_per_step(f.spec_tokens, acceptance)
    budget_max = max(1, f.max_num_batched_tokens)
    seats_max = max(1, f.max_num_seqs)
    cap = max(1, f.kv_capacity_tokens)
    mixed = f.mixed_batches
    rule = None if mixed else f.sglang_budget  # SGLang's admission estimate and retraction
    ratio = rule.init if rule is not None else 0.0
    full = False  # SGLang: a refused admission stands until a request leaves the running batch
    arrivals: list[float] = []
    if rate is not None:
        arrivals = arrival_times(requests, rate, seed)[::-1]  # pop() from the end = the earliest
    waiting: list[_Cohort] = []
    running: list[_Cohort] = []
    issued = 0
    late: list[_Cohort] = []

    def requests_from(m: int, j0: int, arrive: float, inflight: float) -> list[_Cohort]:
        return [_Cohort(n, arrive, nd, ca, ol, inflight)
                for n, nd, ca, ol in new_requests(m, j0, isl, osl, range_ratio, prefix_hit, lengths, f.prefix_block)]

    closed = concurrency is not None and rate is None
    gap = c.request_ms * 1e-3 if c.front_in_schedule and closed else 0.0
    reenter: list[tuple[float, _Cohort]] = []  # closed loop: (engine arrival, cohort) of requests in the front end
    recv_n = f.recv_interval if closed and f.recv_interval > 1 else 1  # SGLang's receive interval
    recv_lag = f.recv_lag if closed else 0  # passes after the ending one before a receive can find the next request
    # back from their clients, not yet received by the scheduler: (first pass it may join, cohort)
    held: list[tuple[int, _Cohort]] = []
    recv_count = 0
    recv_due = False
    top_prev, busy_prev = 0.0, 0  # capped arrivals: the last loop turn and the requests in flight after it
    if concurrency is not None and rate is None:
        first_n = min(concurrency, requests)
        waiting += requests_from(1, 0, 0.0, 0.0)  # an opening burst: the first alone in step 1
        if first_n > 1:
            late = requests_from(first_n - 1, 1, 0.0, first_n / 2.0)
        issued = first_n
    nf = 10
    t = 0.0
    api = seen = 0.0  # when the API server and the client have handled the last step's outputs
    res = SimResult([], [], [], 0.0, 0, 0.0, dict.fromkeys(TERMS, 0.0), dict.fromkeys(TERMS, 0.0), 0.0, 0.0,
                    0.0, 0, 0, tps, [], [], [])
    finished = 0
    guard = 0
    while finished < requests:
        guard += 1
        if guard > 4_000_000:  # cannot happen with positive step times; never loop forever
            break
        while reenter and reenter[0][0] <= t:
            waiting.append(reenter.pop(0)[1])
        if concurrency is not None and rate is not None:  # at most ``concurrency`` in flight; the rest wait
            while arrivals and arrivals[-1] <= t and _count(running) + _count(waiting) < concurrency:
                a = arrivals.pop()
                if a <= top_prev or busy_prev >= concurrency:
                    a = t  # sent when a request ended: this step's end
                else:
                    busy_prev += 1
                waiting += requests_from(1, issued, a, _count(running) + _count(waiting))
                issued += 1
            top_prev, busy_prev = t, _count(running) + _count(waiting)
        while arrivals and arrivals[-1] <= t and not (concurrency is not None and rate is not None):
            waiting += requests_from(1, issued, arrivals.pop(), _count(running) + _count(waiting))
            issued += 1
        if held and (recv_due or recv_n == 1 or not running):
            waiting += [co for at, co in held if at <= res.steps or not running]
            held = [(at, co) for at, co in held if not (at <= res.steps or not running)]
        if not running and not waiting:
            if rule is not None:
                ratio = rule.init
            if reenter:
                t = reenter[0][0]
                continue
            if not arrivals:
                break
            t = arrivals[-1]
            continue
        pf_sched: list[tuple[_Cohort, int]] = []  # (cohort, tokens per request this step)
        dec: list[_Cohort] = []
        retracted = False
        by_chunk, to_end = f.admit_by_chunk, (max(1, f.reserve_block) if f.reserve_to_end else 0)
        if mixed:  # decode tokens first, prefill chunks in what is left of the budget
            out = 0 if to_end else _make_room(running, waiting, cap, tps, by_chunk)
            res.preemptions += out
            dec = [r for r in running if r.done >= r.need]
            n_dec = sum(r.n for r in dec)
            pf_sched, out2 = _prefill(running, waiting, budget_max - n_dec * (1 + f.spec_tokens), seats_max, cap,
                                      0 if f.chunked_prefill else budget_max, by_chunk, n_dec * tps, out, to_end)
            res.preemptions += out2
        elif rule is not None:  # SGLang: a prefill batch under its budget, else a decode batch (retracting first)
            pf_sched, full = _sglang_prefill(running, waiting, budget_max, seats_max, cap, ratio, rule.clip, full)
            if not pf_sched:
                out, new_ratio = _sglang_retract(running, waiting, cap, tps, rule.retract_steps, f.spec_tokens > 0)
                res.preemptions += out
                if new_ratio is not None:
                    retracted, ratio = True, new_ratio
                if out:
                    full = False
                dec = [r for r in running if r.done >= r.need]
        else:  # a prefill batch on its own when one can be formed, else a decode batch
            pf_sched, out = _prefill(running, waiting, budget_max, seats_max, cap,
                                     0 if f.chunked_prefill else budget_max, by_chunk, to_end=to_end)
            res.preemptions += out
            if not pf_sched:
                res.preemptions += 0 if to_end else _make_room(running, waiting, cap, tps, by_chunk)
                dec = [r for r in running if r.done >= r.need]
        n_dec = sum(r.n for r in dec)
        decode_now = bool(dec)
        if not decode_now and not pf_sched:
            if (arrivals and arrivals[-1] > t) or reenter:  # idle until the next arrival
                t = max(t, arrivals[-1] if arrivals else reenter[0][0])
                continue
            break  # a request that can never be scheduled (KV smaller than one prompt)
        if late:  # the rest of the burst is in the server from here on
            waiting += late
            late = []
        used = _used(running, by_chunk, to_end)
        dec_ctx = sum(r.n * r.ctx for r in dec) if decode_now else 0.0
        nd = n_dec if decode_now else 0
        pf_tok = sum(r.n * ch for r, ch in pf_sched)
        pf_pairs = sum(r.n * ch * (r.cached + r.done + ch / 2.0) for r, ch in pf_sched)
        pf_read = sum(r.n * (r.cached + r.done) for r, ch in pf_sched)
        # decode-only steps until the next event are timed together
        k = 1
        if not pf_sched and decode_now:
            k_fin = min(math.ceil((r.osl - r.gen) / tps) for r in dec)
            k_kv = int((cap - used) // max(1e-9, nd * tps)) if nd and not to_end else k_fin
            k = max(1, min(k_fin, k_kv))
            if held:  # the first receive (a multiple of R passes counted) a held request is there for
                ready = min(at for at, _ in held)
                m = 1
                while res.steps + m < ready or (recv_count + m) % recv_n:
                    m += 1
                k = min(k, m)
            if (arrivals and arrivals[-1] > t) or reenter:
                w0 = step_work(f, nd, dec_ctx, 0, 0.0)
                dt0 = sum(step_terms(w0, c, graphed(f, nd * (1 + f.spec_tokens), 0)))
                nxt = arrivals[-1] if arrivals else reenter[0][0]
                k = max(1, min(k, math.ceil((nxt - t) / max(dt0, 1e-12))))
        if rule is not None and decode_now and not pf_sched and (k - 1 if retracted else k):
            ratio = max(ratio - (k - 1 if retracted else k) * rule.decay, rule.floor)
        mid_ctx = dec_ctx + nd * tps * (k - 1) / 2.0
        w = step_work(f, nd, mid_ctx, pf_tok, pf_pairs, pf_read)
        step_graphs = graphed(f, nd * (1 + f.spec_tokens) + pf_tok, pf_tok)
        mem, comp, comm, ovh = step_terms(w, c, step_graphs)
        dt = mem + comp + comm + ovh
        span = dt * k
        t0 = t
        t += span
        n_pf = sum(r.n for r, _ in pf_sched)
        lag = 0.0
        slowest = 0.0  # a stage slower than the engine's step sets the client's pace (its time per step)
        if c.stages.api_us or c.stages.client_us:  # the API server's and the client's stages, step outputs in order
            s_api, s_client = stage_seconds(c, nd + n_pf)
            a0, api = stage_end(api, t0 + dt, t, k, s_api)
            _, c1 = stage_end(seen, a0, api, k, s_client)
            lag = max(0.0, (c1 - t) - max(0.0, seen - t0))  # an idle gap before t0 is no stage latency
            seen = c1
            slowest = max(s_api, s_client) if max(s_api, s_client) > dt else 0.0
        else:
            api = seen = t
        res.steps += k
        if recv_n > 1:
            if pf_tok:
                recv_count, recv_due = 0, True
            else:
                recv_count = (recv_count + k) % recv_n
                recv_due = recv_count == 0
        res.busy += span
        if len(res.samples) < 2 and ((pf_sched and not res.samples) or (not pf_sched and nd and k > 1)):
            res.samples.append({"decode_seqs": nd, "prefill_tokens": pf_tok, "context_tokens": mid_ctx,
                                "ms": dt * 1e3, "memory_ms": mem * 1e3, "compute_ms": comp * 1e3,
                                "communication_ms": comm * 1e3, "overhead_ms": ovh * 1e3})
        n_wait = sum(r.n for r in waiting)
        terms = (0.0, 0.0, 0.0, 0.0, slowest * k) if slowest else (mem * k, comp * k, comm * k, ovh * k, lag)
        for name, v in zip(TERMS, terms, strict=False):
            res.prefill[name] += v * n_pf
            res.decode[name] += v * nd
        res.prefill["queueing"] += span * n_wait
        if trace:
            fvec = [x * k for x in features(w, c, step_graphs)]
            for r in (*running, *waiting, *(co for _, co in held)):
                if r.fv is None:
                    r.fv = [0.0] * nf
                for i in range(nf):
                    r.fv[i] += fvec[i]
        if nd:
            res.batch_steps += nd * k
            res.decode_steps += k
        # advance state
        done_now: list[_Cohort] = []
        for r, ch in pf_sched:
            r.done += ch
            if r.done >= r.need and r.first is None:
                r.first = seen
                r.fv_first = list(r.fv) if r.fv is not None else None
                r.gen += 1.0
            if r.gen >= r.osl:
                done_now.append(r)
        if decode_now:
            for r in dec:
                r.gen = min(float(r.osl), r.gen + tps * k)
                if r.gen >= r.osl:
                    done_now.append(r)
        if done_now:
            full = False
            gone = {id(r) for r in done_now}
            running[:] = [r for r in running if id(r) not in gone]
        for r in done_now:
            first = r.first if r.first is not None else seen
            front = c.request_ms * 1e-3 + c.inflight_us * 1e-6 * r.inflight
            if r.arrive <= 0.0:  # requests sent together at the start wait for those ahead (ingest_us)
                front += c.ingest_us * 1e-6 * r.inflight
            res.ttft.append((first - r.arrive + front, r.n))
            res.e2e.append((seen - r.arrive + front, r.n))
            if r.osl > 1:
                res.tpot.append(((seen - first) / (r.osl - 1), r.n))
                res.decode_s += r.n * (seen - first)
                res.decode_tokens += r.n * (r.osl - 1)
            if trace and r.fv is not None:
                f0 = r.fv_first or r.fv
                res.ttft_fv.append(([*f0, 1e-3, r.inflight * 1e-6], r.n))
                if r.osl > 1:
                    res.tpot_fv.append(([*((a - b) / (r.osl - 1) for a, b in zip(r.fv, f0, strict=True)), 0.0, 0.0],
                                        r.n))
            finished += r.n
            res.output_tokens += r.n * r.osl
            if closed and issued < requests:
                m = min(r.n, requests - issued)
                for co in requests_from(m, issued, seen + gap, _count(running) + _count(waiting)):
                    if gap:
                        reenter.append((t + gap, co))
                    elif recv_n > 1 or recv_lag:
                        held.append((res.steps + recv_lag, co))
                    else:
                        waiting.append(co)
                issued += m
        _merge(running)
    res.makespan = seen
    res.requests = finished
    return res


def _count(cohorts: list[_Cohort]) -> int:
    return sum(r.n for r in cohorts)


def _used(running: list[_Cohort], by_chunk: bool = False, to_end: int = 0) -> float:
    """KV tokens held by the running requests: prompts reserved whole, or (``by_chunk``, vLLM before 0.19) what
    each has computed, or (``to_end``, TensorRT-LLM's GUARANTEED_NO_EVICT) prompt and whole output in whole blocks
    of ``to_end`` tokens."""
    if to_end:
        return sum(r.n * (math.ceil((r.cached + r.need + r.osl) / to_end) * to_end) for r in running)
    if by_chunk:
        return sum(r.n * (r.cached + r.done + r.gen - r.redo) for r in running)
    return sum(r.n * (r.cached + r.need + r.gen - r.redo) for r in running)  # = ctx + prompt still to compute


def _preempt(running: list[_Cohort], waiting: list[_Cohort]) -> _Cohort:
    """The newest running request back to the front of the queue, to recompute what it computed and output and
    the rest of its prompt."""
    victim = running[-1]
    one = victim.split(1) if victim.n > 1 else running.pop()
    one.need, one.redo = math.ceil(one.ctx) + max(0, one.need - one.done), one.gen
    one.cached, one.done = 0, 0
    waiting.insert(0, one)
    return one


def _make_room(running: list[_Cohort], waiting: list[_Cohort], cap: int, tps: float, by_chunk: bool = False) -> int:
    """Preempt the newest requests until every decoding one has KV room for its next token(s)."""
    n = 0
    while running:
        n_dec = sum(r.n for r in running if r.done >= r.need)
        if not n_dec or _used(running, by_chunk) + n_dec * tps <= cap:
            break
        _preempt(running, waiting)
        n += 1
    return n


def _prefill(running: list[_Cohort], waiting: list[_Cohort], budget: int, seats_max: int,
             cap: int, whole_up_to: int, by_chunk: bool = False, reserve: float = 0.0,
             preempted: int = 0, to_end: int = 0) -> tuple[list[tuple[_Cohort, int]], int]:
    """Prefill chunks of one step: running requests' next chunks, then waiting requests (FCFS) while a
    sequence slot, KV room for the whole prompt and token budget remain; ``by_chunk`` (vLLM before 0.19): a
    chunk needs KV room for itself (the newest pending requests preempted until it fits, or it waits when the
    newest is decoding), a waiting request starts when its first chunk fits, none after a preemption."""
    out: list[tuple[_Cohort, int]] = []
    budget = max(0, budget)
    room = cap - _used(running, True) - reserve
    n_out = 0
    for r in list(running):
        if budget <= 0:
            break
        if not any(x is r for x in running):
            continue
        if r.done < r.need:
            chunk = min(r.need - r.done, budget // r.n if r.n > 1 else budget)
            if chunk > 0:
                stop = False
                while by_chunk and chunk * r.n > room:
                    victim = running[-1]
                    if victim.done >= victim.need:
                        stop = True
                        break
                    freed = victim.ctx
                    one = _preempt(running, waiting)
                    room += freed
                    n_out += 1
                    if one is r:
                        stop = True
                        break
                if stop:
                    break
                if by_chunk:
                    room -= chunk * r.n
                out.append((r, chunk))
                budget -= chunk * r.n
    if by_chunk and (preempted or n_out):
        return out, n_out
    seats = seats_max - sum(r.n for r in running)
    used = _used(running, to_end=to_end)
    while waiting and budget > 0 and seats > 0:
        head = waiting[0]
        per = math.ceil((head.need + head.cached + head.osl) / to_end) * to_end if to_end else head.need + head.cached
        fit_kv = int((room if by_chunk else cap - used) // max(1, per))
        m = min(head.n, seats, budget // max(1, head.need), fit_kv)
        if m >= 1:
            co = head.split(m) if m < head.n else waiting.pop(0)
            running.append(co)
            out.append((co, co.need))
            budget -= m * co.need
            seats -= m
            used += m * per
            room -= m * per
            continue
        first_fits = room >= head.cached + budget if by_chunk else fit_kv >= 1
        if first_fits and head.need > whole_up_to:  # one request starts with a partial chunk
            co = head.split(1) if head.n > 1 else waiting.pop(0)
            running.append(co)
            out.append((co, budget))
        break
    return out, n_out


def _sglang_prefill(running: list[_Cohort], waiting: list[_Cohort], budget: int, seats_max: int, cap: int,
                    ratio: float, clip: int, full: bool) -> tuple[list[tuple[_Cohort, int]], bool]:
    """SGLang's prefill batch: running prefills' next chunks, then (unless ``full``) waiting requests while a slot
    is free and prompt + whole output (clipped) is less than the KV left after what the running requests hold and
    are expected to need (decoding: outputs left x ``ratio``; prefilling: outputs left with the chunk that ends the
    prompt, else nothing), one request at a time."""
    out: list[tuple[_Cohort, int]] = []
    budget = max(0, budget)
    for r in list(running):
        if budget <= 0:
            break
        if r.done < r.need:
            chunk = min(r.need - r.done, budget // r.n if r.n > 1 else budget)
            if chunk > 0:
                out.append((r, chunk))
                budget -= chunk * r.n
    if full or not waiting:
        return out, full
    seats = seats_max - sum(r.n for r in running)
    ending = [r for r, chunk in out if r.done + chunk >= r.need]  # chunked prefills whose prompt ends this batch
    expected = 0.0
    for r in running:
        left = min(r.osl - r.gen, clip)
        if r.done >= r.need:
            expected += r.n * left * ratio
        elif any(r is e for e in ending):
            expected += r.n * left
    room = cap - _used(running) - expected
    taken = 0  # what the requests taken count for (prompt + whole output each)
    while waiting:
        if seats <= 0:
            return out, True
        head = waiting[0]
        if not head.cached + head.need + min(head.osl - head.gen, clip) < room - taken:
            return out, True
        if budget <= 0:
            break
        if head.need > budget:  # the prompt does not fit the batch's tokens: one starts with a partial chunk
            co = head.split(1) if head.n > 1 else waiting.pop(0)
            running.append(co)
            out.append((co, budget))
            break
        each = head.cached + head.need + min(head.osl, clip)
        m = 1  # the head's requests taken together while each passes the check after those before it
        while (m < min(head.n, seats, budget // head.need)
               and head.cached + head.need + min(head.osl - head.gen, clip) < room - (taken + m * each)):
            m += 1
        co = head.split(m) if m < head.n else waiting.pop(0)
        running.append(co)
        out.append((co, co.need))
        budget -= m * co.need
        seats -= m
        taken += m * each
    return out, False


def _sglang_retract(running: list[_Cohort], waiting: list[_Cohort], cap: int, tps: float, steps: int,
                    newest: bool) -> tuple[int, float | None]:
    """SGLang's retract_decode when the decoding requests' next tokens find no KV: one request at a time (the fewest
    outputs, then the longest prompt, then the newest; the newest with speculative decoding) to the end of the
    queue, at least one and until the rest fit, never the last; the ratio of those left."""
    dec = [r for r in running if r.done >= r.need]
    if not dec or _used(running) + sum(r.n for r in dec) * tps <= cap:
        return 0, None
    n = 0
    while sum(r.n for r in dec) > 1:
        if newest:
            victim = dec[-1]
        else:
            order = sorted(range(len(dec)), key=lambda i: (dec[i].gen, -(dec[i].cached + dec[i].need - dec[i].redo)),
                           reverse=True)
            victim = dec[order[-1]]
        one = victim.split(1) if victim.n > 1 else victim
        if one is victim:
            running.remove(victim)
        one.need, one.redo = math.ceil(one.ctx) + max(0, one.need - one.done), one.gen
        one.cached, one.done = 0, 0
        waiting.append(one)
        n += 1
        dec = [r for r in running if r.done >= r.need]
        if _used(running) + sum(r.n for r in dec) * tps <= cap:
            break
    n_dec = sum(r.n for r in dec)
    return n, min(1.0, (sum(r.n * r.gen for r in dec) + steps * n_dec) / (sum(r.n * r.osl for r in dec) + 1))


def _merge(running: list[_Cohort]) -> None:
    """Fold cohorts that are in the same state (admitted in one step) back into one."""
    if len(running) < 2:
        return
    out: list[_Cohort] = []
    for r in running:
        last = out[-1] if out else None
        if (last is not None and last.done == r.done and last.gen == r.gen and last.need == r.need
                and last.cached == r.cached and last.first == r.first and last.osl == r.osl and last.redo == r.redo):
            tot = last.n + r.n
            last.arrive = (last.arrive * last.n + r.arrive * r.n) / tot
            last.inflight = (last.inflight * last.n + r.inflight * r.n) / tot
            for a, b in ((last.fv, r.fv), (last.fv_first, r.fv_first)):
                if a is not None and b is not None:
                    for i in range(len(a)):
                        a[i] = (a[i] * last.n + b[i] * r.n) / tot
            last.n = tot
        else:
            out.append(r)
    running[:] = out
