"""SGLang's DP-attention ranks as schedulers of their own, stepping together (``_sim.simulate`` with
``ServingFacts.lockstep`` g > 1 under SGLang's own admission rule).

Each DP-attention rank runs its own Scheduler: its own waiting queue, KV pool (``--max-total-tokens``' share: the
pool is per rank), running batch, chunked-prefill budget (``chunked_prefill_size // dp``) and new-token ratio; the
DP controller hands requests to the ranks in turn (``round_robin``, SGLang's default ``load_balance_method``:
0.5.6.post2 server_args.py L365, managers/data_parallel_controller.py L471-479).  Every step each rank picks its
own batch as a lone scheduler does (``get_next_batch_to_run``: a prefill batch when it can form one, else its
decode batch, retracting when that finds no KV), then the ranks exchange their batch sizes and modes
(``prepare_mlp_sync_batch``: 0.5.6.post2 managers/scheduler_dp_attn_mixin.py L105-131; a rank with no batch runs
an idle one, L163-173) and run the step's shared layers together: the step lasts as its slowest rank's
(:class:`launchcard.predict._clock._Clock` times a step of the group's totals as the busiest rank's, a prefill on
any rank takes every rank off CUDA graphs, L68-69 there and model_executor/cuda_graph_runner.py L388), and every
rank that ran its decode batch gives its requests their token(s), prefill on another rank or not.

A scheduler is idle (its new-token ratio back at the start) only when the whole group is: a rank with no batch of
its own still runs the group's step with an idle batch.
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
from launchcard.predict._front import fold
from launchcard.predict._prefix import cached_prefix
from launchcard.predict._sched import _At, _Cohort, _Scan
from launchcard.predict._sglang_rules import SglangBudget
from launchcard.predict._sglang_sched import sglang_prefill, sglang_retract
from launchcard.predict._types import SimResult


class _Rank:
    """One DP-attention rank's scheduler state."""

    __slots__ = ("full", "n_run", "pf", "pre", "ratio", "running", "scan", "waiting")

    def __init__(self, ratio: float) -> None:
        self.waiting: list[_Cohort] = []
        self.running: list[_Cohort] = []
        self.scan: _Scan | None = None  # the running cohorts' scan as the last step's walk left them
        self.pf: list[_Cohort] = []  # the cohorts given a prefill chunk this step
        self.n_run = 0  # requests running this step (its admissions in)
        self.pre: _Scan | None = None  # this step's scan, before its admissions
        self.full = False  # a refused admission still stands (none tried until a request leaves)
        self.ratio = ratio


class _Dispatch:
    """The DP controller's round robin: request i of the run goes to rank i mod g."""

    def __init__(self, ranks: list[_Rank]) -> None:
        self.ranks, self.next = ranks, 0

    def send(self, co: _Cohort) -> None:
        """Hand the cohort's requests to the ranks in turn (split where they fall on several ranks)."""
        g = len(self.ranks)
        base, extra = divmod(co.n, g)
        parts = [(self.ranks[(self.next + j) % g], base + (1 if j < extra else 0)) for j in range(g)]
        parts = [(k, m) for k, m in parts if m]
        self.next = (self.next + co.n) % g
        for k, m in parts[:-1]:
            k.waiting.append(co.split(m))
        parts[-1][0].waiting.append(co)


def simulate_ranks(f: ServingFacts, c: Coefficients, rule: SglangBudget, *, isl: int, osl: int,
                   concurrency: int | None, rate: float | None, requests: int, prefix_hit: float, tps: float,
                   seed: int, trace: bool, range_ratio: float, lengths: tuple[tuple[int, int], ...],
                   schedules: Schedules | None = None) -> SimResult:
    """``_sim.simulate`` for a DP-attention group of ``f.lockstep`` ranks (the module docstring); ``f`` holds the
    group's limits (``lockstep_group``: every rank's together), each rank gets a g-th of them.  ``schedules``: a
    closed loop whose every rank's pool holds every client's whole request (and its outputs' expected need once
    more) is decided by none of SGLang's KV checks, so its schedule is recorded once and replayed with another
    plan's step costs, as ``simulate`` does."""
    g = f.lockstep
    cap = max(1, f.kv_capacity_tokens // g)
    seats_max = max(1, f.max_num_seqs // g)
    budget = max(1, f.max_num_batched_tokens // g)
    clip = rule.clip
    newest = f.spec_tokens > 0
    per_seq = 1 + f.spec_tokens
    ranks = [_Rank(rule.init) for _ in range(g)]
    dispatch = _Dispatch(ranks).send
    n_wait = 0  # requests in the ranks' queues (and the opening burst's rest, in the server from the start)

    def send(co: _Cohort) -> None:
        nonlocal n_wait
        n_wait += co.n
        dispatch(co)
    clock = _Clock(f, c, tps)
    res = clock.res
    closed = concurrency is not None and rate is None
    capped = concurrency is not None and rate is not None
    limit = concurrency or 0
    gap = c.request_ms * 1e-3 if c.front_in_schedule and closed else 0.0
    key: tuple[Any, ...] = ()
    recording: list[tuple[int, float, int, float, int, int, int, int]] | None = None
    done_at: list[tuple[int, _At, int | None, int, float, int]] = []
    if schedules is not None and concurrency is not None and closed and not trace and not gap:
        if lengths:
            isl_top, osl_top = max(p for p, _ in lengths), max(o for _, o in lengths)
        else:
            isl_top, osl_top = length_range(isl, range_ratio)[1], length_range(osl, range_ratio)[1]
        # a rank holds at most every client; SGLang's check asks room for a prompt and its output beside what the
        # running hold and their outputs' expected need (at most their outputs again)
        if cap > concurrency * (isl_top + 2 * osl_top + tps) + 1:
            seats = min(seats_max, concurrency)
            key = ("dp", g, isl, osl, concurrency, requests, prefix_hit, tps, per_seq, budget, range_ratio,
                   f.prefix_block, f.recv_interval, f.recv_lag, lengths, seats)
            for known in schedules.get(key, ()):
                if known.serves(seats):
                    return clock.replay(known)
            recording = []
    reenter: deque[tuple[float, _Cohort]] = deque()
    arrivals: list[float] = arrival_times(requests, rate, seed)[::-1] if rate is not None else []
    cached = cached_prefix(isl, prefix_hit, f.prefix_block)
    need = isl - cached
    recv_n = f.recv_interval if closed and f.recv_interval > 1 else 1
    lag = f.recv_lag if closed else 0
    hold = closed and (recv_n > 1 or lag > 0)
    held: list[_Cohort] = []
    held_at: list[int] = []
    recv_count = 0
    recv_due = False
    top_prev, busy_prev = 0.0, 0
    issued = 0
    late: list[_Cohort] = []

    def in_order(m: int, j0: int) -> list[tuple[int, int, int, int]]:
        """``new_requests`` one request at a time where their lengths differ: the round robin hands them out in the
        order they are sent (new_requests groups alike lengths)."""
        if range_ratio <= 0.0 and not lengths:
            return new_requests(m, j0, isl, osl, range_ratio, prefix_hit, lengths, f.prefix_block)
        return [x for j in range(j0, j0 + m)
                for x in new_requests(1, j, isl, osl, range_ratio, prefix_hit, lengths, f.prefix_block)]

    if closed:
        assert concurrency is not None
        first_n = min(concurrency, requests)
        for n, nd_, ca, ol in new_requests(1, 0, isl, osl, range_ratio, prefix_hit, lengths, f.prefix_block):
            send(_Cohort(n, 0.0, nd_, ca, ol, 0.0))
        if first_n > 1:  # the rest of the opening burst reaches the engine after its first step (as _sim)
            late = [_Cohort(n, 0.0, nd_, ca, ol, first_n / 2.0)
                    for n, nd_, ca, ol in in_order(first_n - 1, 1)]
        issued = first_n
        n_wait += first_n - 1
    nf = len(theta(c))
    n_run = 0  # requests running (as the last step left them)
    finished = 0
    step_no = -1
    guard = 0

    while finished < requests:
        guard += 1
        if guard > 4_000_000:
            break
        t = clock.t
        while reenter and reenter[0][0] <= t:
            send(reenter.popleft()[1])
        busy_any = any(k.running for k in ranks)
        if held and (recv_due or recv_n == 1 or not busy_any):
            fwd = res.steps
            keep_c: list[_Cohort] = []
            keep_a: list[int] = []
            for co, at in zip(held, held_at, strict=True):
                if at <= fwd or not busy_any:
                    send(co)
                else:
                    keep_c.append(co)
                    keep_a.append(at)
            held, held_at = keep_c, keep_a
        if capped:
            ahead = n_run + n_wait
            while arrivals and arrivals[-1] <= t and ahead < limit:
                a = arrivals.pop()
                if a <= top_prev or busy_prev >= limit:
                    a = t
                else:
                    busy_prev += 1
                send(arrival(a, ahead, issued, isl, osl, range_ratio, prefix_hit, need, cached, lengths,
                              f.prefix_block))
                issued += 1
                ahead += 1
            top_prev, busy_prev = t, ahead
        elif arrivals and arrivals[-1] <= t:
            ahead = n_run + n_wait
            while arrivals and arrivals[-1] <= t:
                send(arrival(arrivals.pop(), ahead, issued, isl, osl, range_ratio, prefix_hit, need, cached,
                              lengths, f.prefix_block))
                issued += 1
                ahead += 1
        if not any(k.running or k.waiting for k in ranks) and not late:
            for k in ranks:  # the whole group idle: every scheduler starts its estimate again
                k.ratio = rule.init
            if reenter:
                clock.t = reenter[0][0]
                continue
            if held:
                continue
            if not arrivals:
                break
            clock.t = arrivals[-1]
            continue
        # each rank's own batch: a prefill batch when it forms one, else its decode batch (retracting first)
        nd = n_pf = pf_tok = pf_read = retracted_n = n_run = 0
        dec_ctx = pf_pairs = 0.0
        dec_ranks: list[tuple[_Rank, _Scan, bool]] = []
        for k in ranks:
            if not k.running and not k.waiting:
                continue
            sc = k.scan or _Scan(k.running)
            k.scan = None
            if k.full and not sc.pend:  # sglang_prefill's answer without a call: nothing to continue, none tried
                pf: list[_Cohort] = []
                admitted = 0
            else:
                pf, admitted, k.full = sglang_prefill(sc, k.running, k.waiting, budget, seats_max, cap, k.ratio,
                                                      clip, k.full)
            n_wait -= admitted
            k.pf = pf
            k.pre = sc
            k.n_run = sc.n_run + admitted
            if pf:
                n_run += sc.n_run + admitted
                for r in pf:
                    rn, ch, before = r.n, r.chunk, r.cached + r.done
                    pf_tok += rn * ch
                    pf_pairs += rn * ch * (before + ch / 2.0)
                    pf_read += rn * before
                    n_pf += rn
                continue
            sc, out, new_ratio = sglang_retract(sc, k.running, k.waiting, cap, tps, rule, newest)
            retracted = new_ratio is not None
            if retracted:
                assert new_ratio is not None
                k.ratio = new_ratio
            if out:
                k.full = False
                retracted_n += out
            n_wait += out
            n_run += sc.n_run
            k.n_run = sc.n_run
            if sc.n_dec:
                dec_ranks.append((k, sc, retracted))
                nd += sc.n_dec
                dec_ctx += sc.dec_ctx
        res.preemptions += retracted_n
        if n_run > res.running_max:
            res.running_max = n_run
        if not pf_tok and not nd:
            if (arrivals and arrivals[-1] > t) or reenter:
                clock.t = max(t, arrivals[-1] if arrivals else reenter[0][0])
                continue
            break  # a request that can never be scheduled (KV smaller than one prompt)
        k_run = 1
        if not pf_tok:  # decode-only steps on every rank until the next event are timed together
            k_run = min(min(math.ceil(sc.left_min / tps), int((cap - sc.used) // max(1e-9, sc.n_dec * tps)))
                        for _, sc, _ in dec_ranks)
            k_run = max(1, k_run)
            if any(k.waiting and not k.full for k in ranks):  # a rank that can still admit does so next step
                k_run = 1
            if held:
                k_run = min(k_run, next_receive(min(held_at) - res.steps, recv_n, recv_count))
            if (arrivals and arrivals[-1] > t) or reenter:
                dt0 = sum(step_terms(step_work(f, nd, dec_ctx, 0, 0.0), c, graphed(f, nd * per_seq, 0)))
                nxt = arrivals[-1] if arrivals else reenter[0][0]
                k_run = max(1, min(k_run, math.ceil((nxt - t) / max(dt0, 1e-12))))
        for k, _, retracted in dec_ranks:  # each decode batch lowers its rank's ratio, but a retracting one
            fall = k_run - 1 if retracted else k_run
            if fall:
                k.ratio = max(k.ratio - fall * rule.decay, rule.floor)
        mid_ctx = dec_ctx + nd * tps * (k_run - 1) / 2.0
        clock.step(nd, mid_ctx, pf_tok, pf_pairs, pf_read, k_run, n_pf, n_wait)
        if recording is not None:
            recording.append((nd, mid_ctx, pf_tok, pf_pairs, pf_read, k_run, n_pf, n_wait))
        t = clock.t
        step_no += 1
        if recv_n > 1:
            if pf_tok:
                recv_count, recv_due = 0, True
            else:
                recv_count = (recv_count + k_run) % recv_n
                recv_due = recv_count == 0
        if late:
            for co in late:
                dispatch(co)  # counted in n_wait from the start
            late = []
        if trace:
            w = clock.work(nd, mid_ctx, pf_tok, pf_pairs, pf_read)
            fvec = [x * k_run for x in features(w, c, clock.step_graphs)]
            for k in ranks:
                for r in (*k.running, *k.waiting):
                    _add(r, fvec, nf)
            for r in held:
                _add(r, fvec, nf)
        # advance each rank's cohorts: prefill chunks, the decode batch of a rank that ran one; retire; fold
        done: list[_Cohort] = []
        step_gen = tps * k_run
        decoding = {id(k) for k, _, _ in dec_ranks}
        n_run = 0  # requests still running after the step
        for k in ranks:
            if not k.running:
                continue
            dec = id(k) in decoding
            if not dec:  # only its prefill cohorts change: they alone are advanced (folds wait for a decode walk)
                gone = 0
                for r in k.pf:  # the walk's prefill branch
                    r.end_chunk(r.chunk, clock.seen, step_no)
                    if r.gen >= r.osl:
                        done.append(r)
                        gone += r.n
                if gone:
                    k.running = [r for r in k.running if r.gen < r.osl]
                    k.full = False  # a request left the running batch: admissions are tried again
                elif k.pre is not None:
                    k.scan = _prefilled(k.pre, k.pf, k.n_run, step_no)
                n_run += k.n_run - gone
                k.pf, k.pre = [], None
                continue
            kept: list[_Cohort] = []
            last: _Cohort | None = None
            left = False
            # the next step's scan of the kept cohorts (_Scan's sums, SGLang's KV held: the prompt whole and the
            # outputs), each cohort's terms once no later one folds into it
            s_dec: list[_Cohort] = []
            s_pend: list[_Cohort] = []
            s_ndec = s_nrun = 0
            s_used = s_ctx = 0.0
            s_left = math.inf
            for q in (*k.running, None):  # None: the end, where the last kept cohort's terms are added
                if q is not None:
                    r = q
                    ch = r.chunk
                    if ch >= 0:
                        r.end_chunk(ch, clock.seen, step_no)
                    elif dec and r.done >= r.need:
                        gen = r.gen + step_gen  # written out as in _sim.py: once per decoding cohort per step
                        r.gen = gen if gen < r.osl else float(r.osl)
                    if r.gen >= r.osl:
                        done.append(r)
                        left = True
                        continue
                    n_run += r.n
                    s_nrun += r.n
                    # the fold test and the scan terms below are written out as in _sim.py's walk (a call per kept
                    # cohort per step: the fold test as a _Cohort method cost ~4% of plan-search CPU)
                    if (last is not None and last.done == r.done and last.gen == r.gen and last.need == r.need
                            and last.cached == r.cached and last.first == r.first and last.redo == r.redo
                            and last.osl == r.osl):
                        fold(last, r)
                        continue
                if last is not None:  # no later cohort folds into ``last``: its terms of the scan
                    rn, gen = last.n, last.gen
                    s_used += rn * (last.cached + last.need + gen - last.redo)
                    if last.done >= last.need:
                        s_dec.append(last)
                        s_ndec += rn
                        s_ctx += rn * (last.cached + last.done + gen - last.redo)
                        if last.osl - gen < s_left:
                            s_left = last.osl - gen
                    else:
                        s_pend.append(last)
                if q is not None:
                    kept.append(q)
                    last = q
            k.running = kept
            k.scan = _Scan.made(s_dec, s_pend, s_ndec, s_nrun, s_used, s_ctx, s_left, None, 0.0)
            if left:
                k.full = False  # a request left the running batch: admissions are tried again
        for r in done:
            ro = r.osl
            clock.retire(r.n, r.arrive, r.first, r.inflight, ro)
            if recording is not None:
                done_at.append((r.n, r.arrive_at, r.first_at, step_no, r.inflight, ro))
            if trace and r.fv is not None:
                f0 = r.fv_first or r.fv
                res.ttft_fv.append(([*f0, 1e-3, r.inflight * 1e-6], r.n))
                if ro > 1:
                    res.tpot_fv.append(([*((a - b) / (ro - 1) for a, b in zip(r.fv, f0, strict=True)), 0.0, 0.0],
                                        r.n))
            finished += r.n
            if closed and issued < requests:
                m = min(r.n, requests - issued)
                ahead = n_run + n_wait
                for n, nd_, ca, ol in in_order(m, issued):
                    if gap:
                        reenter.append((t + gap, _Cohort(n, clock.seen + gap, nd_, ca, ol, ahead)))
                        continue
                    co = _Cohort(n, clock.seen, nd_, ca, ol, ahead)
                    co.arrive_at = step_no
                    if hold:
                        held.append(co)
                        held_at.append(res.steps + lag)
                        continue
                    send(co)
                issued += m
    if recording is not None and schedules is not None and not res.preemptions:
        schedules.setdefault(key, []).append(_Schedule(tuple(recording), tuple(done_at), finished, res.running_max,
                                                       math.inf, min(seats_max, concurrency or 0), False))
    return clock.close(finished)


def _prefilled(sc: _Scan, pf: list[_Cohort], n_run: int, step: int) -> _Scan:
    """The scan of a rank's running cohorts after a step in which only its prefill cohorts ``pf`` changed and none
    ended (``sc``: its scan before the step's admissions; ``pf``: its running prefills' chunks, then the admitted,
    in running order, as ``sglang_prefill`` takes them; ``step``: the step's number, its first tokens' step): _Scan's
    sums without walking the unchanged cohorts, its lists in running order."""
    was = {id(r) for r in sc.pend}
    dec, pend = sc.dec, []
    used, n_dec, ctx, left_min = sc.used, sc.n_dec, sc.dec_ctx, sc.left_min
    grown = False
    for r in (*sc.pend, *(x for x in pf if id(x) not in was)):
        if id(r) in was:  # its KV held grows only by a first token given this step
            if r.first_at == step:
                used += r.n
        else:
            used += r.n * (r.cached + r.need + r.gen - r.redo)
        if r.done < r.need:
            pend.append(r)
            continue
        if not grown:
            dec, grown = list(dec), True
        rn, gen = r.n, r.gen
        dec.append(r)
        n_dec += rn
        ctx += rn * (r.cached + r.done + gen - r.redo)
        if r.osl - gen < left_min:
            left_min = r.osl - gen
    return _Scan.made(dec, pend, n_dec, n_run, used, ctx, left_min, None, 0.0)


def _add(r: _Cohort, fvec: list[float], nf: int) -> None:
    if r.fv is None:
        r.fv = [0.0] * nf
    for i in range(nf):
        r.fv[i] += fvec[i]

